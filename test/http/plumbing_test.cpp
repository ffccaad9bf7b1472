// The real web's plumbing against real servers on 127.0.0.1: names resolved by a DNS server written for the
// tests (support/dns_server.hpp), proxies (support/connect_proxy.hpp), a site that sets cookies, one that
// requires Basic credentials, extra headers, and what a certificate failure says.
#include "http/fetcher.hpp"

#include "http/fetch_settings.hpp"

#include "support/connect_proxy.hpp"
#include "support/dns_server.hpp"
#include "support/loopback_crawl.hpp"
#include "support/plumbing_sites.hpp"
#include "support/temp_dir.hpp"
#include "support/tls_certs.hpp"

#include "support/files.hpp"
#include "url/url.hpp"
#include <asiocrawl/crawler.hpp>
#include <asiocrawl/error.hpp>
#include <asiocrawl/report.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/url/parse.hpp>

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <optional>
#include <sstream>

namespace asio = boost::asio;
namespace http = boost::beast::http;
using namespace asiocrawl;
using namespace asiocrawl::test;
using detail::fetch_result;
using detail::fetcher;
using std::chrono::milliseconds;

namespace {

struct plumbing_fixture : ::testing::Test {
    asio::io_context ctx;
    std::map<std::string, dns_answer> zone;
    dns_server dns{ctx.get_executor(), [this](const std::string& name) -> std::optional<dns_answer> {
                       auto it = zone.find(name);
                       if (it == zone.end())
                           return std::nullopt;
                       return it->second;
                   }};
    std::vector<request_seen> requests;
    demo::request_handler handler =
        [this](const http_request& req) -> asio::awaitable<std::optional<http_response>> {
        requests.push_back(seen_of(req));
        co_return make_response(200, "hello " + std::string(req.target()), "text/plain");
    };
    demo::http_server server{ctx.get_executor(), [this](const http_request& req) { return handler(req); }};
    fetch_config config;

    plumbing_fixture() { config.dns.servers = {dns.address()}; }

    std::string port() const { return std::to_string(server.port()); }

    /// Fetches each URL in turn with one fetcher, then stops everything so that the context runs dry.
    std::vector<fetch_result> fetch_all(std::vector<std::string> urls,
                                        std::vector<std::function<void()>> stops = {}) {
        fetcher f{ctx.get_executor(), config, 8};
        std::vector<fetch_result> results;
        asio::co_spawn(
            ctx,
            [&]() -> asio::awaitable<void> {
                for (const auto& u : urls)
                    results.push_back(co_await f.fetch(boost::urls::parse_uri(u).value()));
                f.close_idle();
            },
            [&](std::exception_ptr e) {
                server.stop();
                dns.stop();
                for (auto& stop : stops)
                    stop();
                if (e)
                    std::rethrow_exception(e);
            });
        run_bounded(ctx);
        ctx.restart();
        return results;
    }
};

// ---- DNS and hosts ----

TEST_F(plumbing_fixture, names_are_resolved_by_the_configured_server_once) {
    zone["site.test"] = {{"127.0.0.1"}, {}, 300};
    auto results = fetch_all({"http://site.test:" + port() + "/a", "http://site.test:" + port() + "/b"});
    ASSERT_EQ(results.size(), 2u);
    for (const auto& r : results)
        EXPECT_EQ(r.status, 200) << r.error.message();
    EXPECT_EQ(dns.queries("site.test", dns_server::type_a), 1u);
    ASSERT_EQ(requests.size(), 2u);
    EXPECT_EQ(requests[0].host, "site.test:" + port());
}

TEST_F(plumbing_fixture, an_unknown_name_is_host_not_found_and_not_retried_as_temporary) {
    auto results = fetch_all({"http://nowhere.test:" + port() + "/"});
    EXPECT_EQ(results.at(0).error, asio::error::host_not_found) << results[0].error.message();
    EXPECT_FALSE(detail::is_retryable(results[0].error));
}

TEST_F(plumbing_fixture, a_slow_resolver_is_bounded_by_connect_timeout) {
    zone["slow.test"] = {{"127.0.0.1"}, {}, 300, milliseconds(3000)};
    config.connect_timeout = milliseconds(200);
    auto results = fetch_all({"http://slow.test:" + port() + "/"});
    EXPECT_EQ(results.at(0).error, error::connect_timeout) << results[0].error.message();
}

TEST_F(plumbing_fixture, the_address_guard_checks_every_resolved_address) {
    zone["inside.test"] = {{"127.0.0.1"}, {"::1"}, 300};
    config.refuse_private_addresses = true;
    auto results = fetch_all({"http://inside.test:" + port() + "/"});
    EXPECT_EQ(results.at(0).error, error::forbidden_address) << results[0].error.message();
    EXPECT_TRUE(requests.empty());
}

TEST_F(plumbing_fixture, internationalized_and_dotted_quad_names_go_out_in_ascii) {
    zone["xn--fa-hia.test"] = {{"127.0.0.1"}, {}, 300};
    zone["1.2.3.4.nip.test"] = {{"127.0.0.1"}, {}, 300};
    config.cookies.enabled = false;
    auto idn =
        normalize_reference(boost::urls::url_view("http://x/"), "http://FA\xc3\x9f.test:" + port() + "/");
    auto quad =
        normalize_reference(boost::urls::url_view("http://x/"), "http://1.2.3.4.nip.test:" + port() + "/q");
    ASSERT_TRUE(idn && quad);
    auto results = fetch_all({std::string(idn->buffer()), std::string(quad->buffer())});
    EXPECT_EQ(results.at(0).status, 200) << results[0].error.message();
    EXPECT_EQ(results.at(1).status, 200) << results[1].error.message();
    ASSERT_EQ(requests.size(), 2u);
    EXPECT_EQ(requests[0].host, "xn--fa-hia.test:" + port());
    EXPECT_EQ(requests[1].host, "1.2.3.4.nip.test:" + port());
    EXPECT_EQ(dns.queries("1.2.3.4.nip.test", dns_server::type_a), 1u);
}

// ---- proxies ----

TEST_F(plumbing_fixture, http_urls_go_to_the_proxy_in_absolute_form_with_its_credentials) {
    connect_proxy proxy{ctx.get_executor(),
                        {{"site.test", server.port()}},
                        detail::basic_authorization("proxyuser:proxy pass")};
    config.proxy = "http://proxyuser:proxy%20pass@127.0.0.1:" + std::to_string(proxy.port());
    detail::fetch_options capture;
    auto results = fetch_all({"http://site.test:" + port() + "/via"}, {[&] { proxy.stop(); }});
    const auto& r = results.at(0);
    EXPECT_EQ(r.status, 200) << r.error.message() << " " << r.error_detail;
    EXPECT_EQ(r.body, "hello /via");
    ASSERT_EQ(proxy.requests().size(), 1u);
    EXPECT_EQ(proxy.requests()[0].method, "GET");
    EXPECT_EQ(proxy.requests()[0].target, "http://site.test:" + port() + "/via");
    EXPECT_EQ(dns.total_queries(), 0u) << "the proxy resolves the URL's host";
    ASSERT_EQ(requests.size(), 1u);
    EXPECT_EQ(requests[0].host, "site.test:" + port());
    EXPECT_EQ(requests[0].proxy_authorization, "") << "the proxy took its own field";
}

TEST_F(plumbing_fixture, a_captured_request_through_a_proxy_holds_no_proxy_credentials) {
    connect_proxy proxy{ctx.get_executor(), {{"site.test", server.port()}}};
    config.proxy = "http://u:secret@127.0.0.1:" + std::to_string(proxy.port());
    fetcher f{ctx.get_executor(), config, 8};
    fetch_result result;
    detail::fetch_options options;
    options.capture = true;
    asio::co_spawn(
        ctx,
        [&]() -> asio::awaitable<void> {
            result = co_await f.fetch(boost::urls::parse_uri("http://site.test:" + port() + "/c").value(),
                                      options);
            f.close_idle();
        },
        [&](std::exception_ptr) {
            server.stop();
            dns.stop();
            proxy.stop();
        });
    run_bounded(ctx);
    EXPECT_EQ(result.status, 200) << result.error.message();
    EXPECT_NE(proxy.requests().at(0).proxy_authorization, "") << "sent to the proxy";
    EXPECT_EQ(result.raw_request.find("Proxy-Authorization"), std::string::npos) << result.raw_request;
    EXPECT_EQ(result.raw_request.rfind("GET http://site.test:" + port() + "/c HTTP/1.1\r\n", 0), 0u);
}

TEST_F(plumbing_fixture, a_proxy_that_wants_credentials_is_proxy_failed_without_repeating_ours) {
    connect_proxy proxy{
        ctx.get_executor(), {{"site.test", server.port()}}, detail::basic_authorization("right:one")};
    config.proxy = "http://wrong:hunter2@127.0.0.1:" + std::to_string(proxy.port());
    auto pki = make_test_pki({"site.test"});
    temp_pem_file ca{pki.ca_pem};
    config.tls.ca_file = ca.path().string();
    auto results = fetch_all({"https://site.test:" + port() + "/"}, {[&] { proxy.stop(); }});
    const auto& r = results.at(0);
    EXPECT_EQ(r.error, error::proxy_failed) << r.error.message();
    EXPECT_NE(r.error_detail.find("407"), std::string::npos) << r.error_detail;
    EXPECT_EQ(r.error_detail.find("hunter2"), std::string::npos) << r.error_detail;
    EXPECT_EQ(r.error_detail.find("wrong"), std::string::npos) << r.error_detail;
    EXPECT_EQ(error_kind(r.error), "proxy_failed");
}

TEST_F(plumbing_fixture, no_proxy_and_loopback_hosts_are_reached_directly) {
    connect_proxy proxy{ctx.get_executor(), {}};
    zone["direct.test"] = {{"127.0.0.1"}, {}, 300};
    config.proxy = proxy.url();
    config.no_proxy = {".test"};
    auto results = fetch_all({"http://direct.test:" + port() + "/1", "http://127.0.0.1:" + port() + "/2"},
                             {[&] { proxy.stop(); }});
    EXPECT_EQ(results.at(0).status, 200) << results[0].error.message();
    EXPECT_EQ(results.at(1).status, 200) << results[1].error.message();
    EXPECT_TRUE(proxy.requests().empty());
}

struct tls_through_proxy : plumbing_fixture {
    test_pki pki = make_test_pki({"site.test"});
    temp_pem_file ca{pki.ca_pem};
    asio::ssl::context server_tls = make_server_context(pki);
    demo::http_server tls_server{ctx.get_executor(), [this](const http_request& req) { return handler(req); },
                                 server_tls};
    connect_proxy proxy{ctx.get_executor(),
                        {{"site.test", tls_server.port()}, {"other.test", tls_server.port()}}};

    tls_through_proxy() {
        config.tls.ca_file = ca.path().string();
        config.proxy = proxy.url();
    }
    std::string tls_port() const { return std::to_string(tls_server.port()); }
    std::vector<fetch_result> fetch_tls(std::vector<std::string> urls) {
        return fetch_all(std::move(urls), {[&] { proxy.stop(); }, [&] { tls_server.stop(); }});
    }
};

TEST_F(tls_through_proxy, https_goes_through_a_connect_tunnel_verified_against_the_site) {
    auto results =
        fetch_tls({"https://site.test:" + tls_port() + "/secret", "https://site.test:" + tls_port() + "/2"});
    ASSERT_EQ(results.size(), 2u);
    EXPECT_EQ(results[0].status, 200) << results[0].error.message() << " " << results[0].error_detail;
    EXPECT_EQ(results[0].body, "hello /secret");
    EXPECT_EQ(results[1].status, 200) << results[1].error.message();
    ASSERT_EQ(proxy.requests().size(), 1u) << "the tunnel is pooled like any connection";
    EXPECT_EQ(proxy.requests()[0].method, "CONNECT");
    EXPECT_EQ(proxy.requests()[0].target, "site.test:" + tls_port());
    EXPECT_EQ(dns.total_queries(), 0u);
}

TEST_F(tls_through_proxy, a_tunnel_to_a_host_the_certificate_does_not_name_fails_verification) {
    auto results = fetch_tls({"https://other.test:" + tls_port() + "/"});
    const auto& r = results.at(0);
    EXPECT_EQ(r.error, error::certificate_invalid) << r.error.message();
    EXPECT_NE(r.error_detail.find("site.test"), std::string::npos) << r.error_detail;
    EXPECT_NE(r.error_detail.find("other.test"), std::string::npos) << r.error_detail;
    EXPECT_TRUE(requests.empty());
}

// ---- certificate diagnostics ----

struct certificate_fixture : plumbing_fixture {
    std::optional<demo::http_server> tls_server;
    std::optional<asio::ssl::context> server_tls;

    fetch_result fetch_with(const test_pki& pki, const std::string& ca_pem, const std::string& host) {
        temp_pem_file ca{ca_pem};
        config.tls.ca_file = ca.path().string();
        config.host_overrides[host] = "127.0.0.1";
        server_tls.emplace(make_server_context(pki));
        tls_server.emplace(
            ctx.get_executor(), [this](const http_request& req) { return handler(req); }, *server_tls);
        auto results = fetch_all({"https://" + host + ":" + std::to_string(tls_server->port()) + "/"},
                                 {[&] { tls_server->stop(); }});
        return results.at(0);
    }
};

TEST_F(certificate_fixture, an_expired_certificate_says_since_when) {
    auto pki = make_test_pki({"site.test"}, std::chrono::hours(-48), std::chrono::hours(-24));
    const auto r = fetch_with(pki, pki.ca_pem, "site.test");
    EXPECT_EQ(r.error, error::certificate_invalid);
    EXPECT_NE(r.error_detail.find("certificate has expired: expired "), std::string::npos) << r.error_detail;
    EXPECT_NE(r.error_detail.find("UTC"), std::string::npos) << r.error_detail;
}

TEST_F(certificate_fixture, an_unknown_issuer_is_named) {
    auto pki = make_test_pki({"site.test"});
    auto other = make_test_pki({"site.test"});
    const auto r = fetch_with(pki, other.ca_pem, "site.test");
    EXPECT_EQ(r.error, error::certificate_invalid);
    EXPECT_NE(r.error_detail.find("issuer CN=asiocrawl test CA is not trusted"), std::string::npos)
        << r.error_detail;
}

TEST_F(certificate_fixture, a_name_mismatch_lists_the_names_the_certificate_holds) {
    auto pki = make_test_pki({"www.site.test", "192.0.2.1"});
    const auto r = fetch_with(pki, pki.ca_pem, "site.test");
    EXPECT_EQ(r.error, error::certificate_invalid);
    EXPECT_NE(r.error_detail.find("the certificate is for www.site.test, 192.0.2.1, not site.test"),
              std::string::npos)
        << r.error_detail;
}

// ---- headers ----

TEST_F(plumbing_fixture, extra_headers_are_sent_and_may_replace_the_user_agent) {
    config.headers = {"X-Extra: one, two", "User-Agent: CustomBot/2.0 (+https://me.example)"};
    auto results = fetch_all({"http://127.0.0.1:" + port() + "/"});
    EXPECT_EQ(results.at(0).status, 200);
    ASSERT_EQ(requests.size(), 1u);
    EXPECT_EQ(requests[0].extra, "one, two");
    EXPECT_EQ(requests[0].user_agent, "CustomBot/2.0 (+https://me.example)");
}

TEST_F(plumbing_fixture, a_refused_header_is_a_configuration_error) {
    config.headers = {"Host: elsewhere.example"};
    EXPECT_THROW((fetcher{ctx.get_executor(), config, 8}), std::invalid_argument);
    crawler_config crawl;
    crawl.roots = {"http://127.0.0.1:" + port() + "/"};
    crawl.fetch.headers = {"Transfer-Encoding: chunked"};
    EXPECT_THROW((crawler{ctx.get_executor(), crawl}), std::invalid_argument);
}

// ---- crawls: cookies and credentials ----

struct crawl_fixture : plumbing_fixture {
    crawler_config crawl_config;
    std::vector<record> records;
    std::vector<std::string> log_lines;
    std::vector<std::string> raw_requests;

    crawl_fixture() {
        crawl_config.max_tasks = 2;
        crawl_config.robots.obey = false;
        crawl_config.fetch.dns.servers = {dns.address()};
    }

    report crawl(std::vector<std::string> roots, std::vector<std::function<void()>> stops = {}) {
        crawl_config.roots = std::move(roots);
        crawler c{ctx.get_executor(), crawl_config};
        c.set_record_sink([this](const record& r) { records.push_back(r); });
        c.set_logger(
            {log_level::debug, [this](log_level, std::string_view m) { log_lines.emplace_back(m); }});
        c.set_exchange_sink([this](const http_exchange& x) { raw_requests.emplace_back(x.request); });
        auto result = run_crawl(ctx, c, [&] {
            server.stop();
            dns.stop();
            for (auto& stop : stops)
                stop();
        });
        EXPECT_TRUE(result.has_value());
        return result ? std::move(*result) : report{};
    }

    int status_of(const std::string& url) const {
        for (const auto& r : records)
            if (r.url == url)
                return r.status;
        return -1;
    }
};

TEST_F(crawl_fixture, cookies_a_site_sets_come_back_to_it) {
    handler = cookie_site(requests);
    crawl({"http://127.0.0.1:" + port() + "/"});
    EXPECT_EQ(status_of("http://127.0.0.1:" + port() + "/private"), 200);
    ASSERT_EQ(requests.size(), 2u);
    EXPECT_EQ(requests[1].cookie, "session=s3; theme=dark");
}

TEST_F(crawl_fixture, without_cookies_nothing_is_kept) {
    handler = cookie_site(requests);
    crawl_config.fetch.cookies.enabled = false;
    crawl({"http://127.0.0.1:" + port() + "/"});
    EXPECT_EQ(status_of("http://127.0.0.1:" + port() + "/private"), 403);
}

TEST_F(crawl_fixture, cookies_load_before_and_save_after_the_crawl) {
    temp_dir dir{"cookies"};
    const auto load = dir.path / "in.txt";
    const auto save = dir.path / "out.txt";
    {
        std::ofstream out(load);
        out << "# Netscape HTTP Cookie File\n127.0.0.1\tFALSE\t/\tFALSE\t0\tsession\ts3\n";
    }
    handler = cookie_site(requests);
    crawl_config.fetch.cookies.load_file = load.string();
    crawl_config.fetch.cookies.save_file = save.string();
    crawl({"http://127.0.0.1:" + port() + "/private"});
    EXPECT_EQ(status_of("http://127.0.0.1:" + port() + "/private"), 200) << "the loaded cookie was sent";
    const std::string text = read_file(save);
    EXPECT_NE(text.find("127.0.0.1\tFALSE\t/\tFALSE\t0\tsession\ts3"), std::string::npos) << text;
}

TEST_F(crawl_fixture, an_unreadable_cookie_file_is_a_configuration_error) {
    crawl_config.roots = {"http://127.0.0.1:" + port() + "/"};
    crawl_config.fetch.cookies.load_file = "/nonexistent/cookies.txt";
    EXPECT_THROW((crawler{ctx.get_executor(), crawl_config}), std::invalid_argument);
}

TEST_F(crawl_fixture, root_credentials_go_to_their_origin_only_and_never_into_records_or_logs) {
    std::vector<request_seen> elsewhere_requests;
    demo::http_server elsewhere{
        ctx.get_executor(), [&](const http_request& req) -> asio::awaitable<std::optional<http_response>> {
            elsewhere_requests.push_back(seen_of(req));
            co_return make_response(200, "open");
        }};
    const std::string other_origin = "http://localhost:" + std::to_string(elsewhere.port());
    const std::string expected = detail::basic_authorization("alice:pa ss@word");
    handler = login_site(expected, requests, other_origin + "/landing");
    crawl_config.politeness.max_per_host = 10;
    // The other origin is a root too, so that the redirect to it is in scope.
    crawl({"http://alice:pa%20ss%40word@127.0.0.1:" + port() + "/", other_origin + "/start"},
          {[&] { elsewhere.stop(); }});
    EXPECT_EQ(status_of("http://127.0.0.1:" + port() + "/"), 200);
    EXPECT_EQ(status_of("http://127.0.0.1:" + port() + "/inside"), 200);
    EXPECT_EQ(status_of(other_origin + "/landing"), 200) << "the redirect was followed";
    ASSERT_EQ(elsewhere_requests.size(), 2u);
    for (const auto& r : elsewhere_requests)
        EXPECT_EQ(r.authorization, "") << r.target << ": never sent to another origin";
    for (const auto& r : records) {
        EXPECT_EQ(r.url.find("alice"), std::string::npos) << r.url;
        EXPECT_EQ(r.next_url.find("alice"), std::string::npos) << r.next_url;
    }
    for (const auto& line : log_lines) {
        EXPECT_EQ(line.find("pa ss"), std::string::npos) << line;
        EXPECT_EQ(line.find("alice"), std::string::npos) << line;
    }
    bool archived = false;
    for (const auto& raw : raw_requests)
        archived = archived || raw.find("Authorization: " + expected) != std::string::npos;
    EXPECT_TRUE(archived) << "the archived raw request holds the field as sent (documented)";
}

TEST_F(crawl_fixture, configured_credentials_work_like_root_credentials) {
    handler = login_site(detail::basic_authorization("bob:builder"), requests, "/");
    crawl_config.fetch.credentials["http://127.0.0.1:" + port()] = "bob:builder";
    crawl({"http://127.0.0.1:" + port() + "/"});
    EXPECT_EQ(status_of("http://127.0.0.1:" + port() + "/"), 200);
}

TEST_F(crawl_fixture, a_certificate_failure_reaches_the_record_and_the_log) {
    auto pki = make_test_pki({"site.test"}, std::chrono::hours(-48), std::chrono::hours(-24));
    temp_pem_file ca{pki.ca_pem};
    auto server_tls = make_server_context(pki);
    demo::http_server tls_server{ctx.get_executor(), [this](const http_request& req) { return handler(req); },
                                 server_tls};
    crawl_config.fetch.tls.ca_file = ca.path().string();
    crawl_config.fetch.host_overrides["site.test"] = "127.0.0.1";
    crawl({"https://site.test:" + std::to_string(tls_server.port()) + "/"}, {[&] { tls_server.stop(); }});
    ASSERT_EQ(records.size(), 1u);
    EXPECT_EQ(records[0].error, error::certificate_invalid);
    EXPECT_NE(records[0].error_detail.find("expired"), std::string::npos) << records[0].error_detail;
    const std::string json = to_json_line(records[0]);
    EXPECT_NE(json.find("server certificate did not verify: certificate has expired: expired"),
              std::string::npos)
        << json;
    bool logged = false;
    for (const auto& line : log_lines)
        logged = logged || line.find("certificate has expired: expired") != std::string::npos;
    EXPECT_TRUE(logged);
}

TEST_F(crawl_fixture,
       an_https_page_redirecting_to_http_in_scope_is_followed_with_one_warning_per_origin_pair) {
    auto pki = make_test_pki({"secure.test"});
    temp_pem_file ca{pki.ca_pem};
    auto server_tls = make_server_context(pki);
    // https://secure.test/ and /again redirect to the plain server (plain.test, allowed by domains), whose
    // page links back to /again: two downgrades between the same two origins.
    const std::string plain = "http://plain.test:" + port();
    demo::http_server tls_server{
        ctx.get_executor(),
        [&](const http_request& req) -> asio::awaitable<std::optional<http_response>> {
            co_return redirect_to(301, plain + (req.target() == "/" ? "/" : "/more"));
        },
        server_tls};
    const std::string secure = "https://secure.test:" + std::to_string(tls_server.port());
    handler = [&, secure](const http_request& req) -> asio::awaitable<std::optional<http_response>> {
        requests.push_back(seen_of(req));
        co_return make_response(200, link_page({secure + "/again"}));
    };
    crawl_config.fetch.tls.ca_file = ca.path().string();
    crawl_config.fetch.host_overrides = {{"secure.test", "127.0.0.1"}, {"plain.test", "127.0.0.1"}};
    crawl_config.domains = {"plain.test"};
    auto result = crawl({secure + "/"}, {[&] { tls_server.stop(); }});
    std::vector<std::string> targets;
    for (const auto& r : requests)
        targets.push_back(r.target);
    EXPECT_EQ(targets, (std::vector<std::string>{"/", "/more"})) << "both downgrades followed";
    EXPECT_EQ(result.stats["redirect_downgrades"], 2u);
    std::size_t warnings = 0;
    for (const auto& line : log_lines)
        if (line.find("downgrades to cleartext") != std::string::npos) {
            ++warnings;
            EXPECT_NE(line.find("redirect from " + secure + "/ to " + plain + "/ downgrades to cleartext"),
                      std::string::npos)
                << line;
        }
    EXPECT_EQ(warnings, 1u) << "once for the pair of origins";
}

} // namespace
