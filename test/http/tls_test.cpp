// HTTPS through the fetcher against the demo server in TLS mode, with a CA and server certificate made at
// test time (support/tls_certs.hpp).
#include "http/fetcher.hpp"

#include "support/files.hpp"
#include "support/loopback.hpp"
#include "support/loopback_crawl.hpp"
#include "support/pki_suite.hpp"
#include "support/temp_dir.hpp"
#include "support/tls_certs.hpp"

#include <asiocrawl/crawler.hpp>
#include <asiocrawl/error.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/url/parse.hpp>

#include <openssl/ssl.h>

#include <memory>
#include <optional>

namespace asio = boost::asio;
namespace http = boost::beast::http;
using namespace asiocrawl;
using namespace asiocrawl::test;
using detail::fetch_result;
using detail::fetcher;

namespace {

/// SNI names the test server saw, one entry per handshake ("" when the client sent none).
std::vector<std::string> server_names_seen;

int record_server_name(SSL* ssl, int*, void*) {
    const char* name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
    server_names_seen.emplace_back(name ? name : "");
    return SSL_TLSEXT_ERR_OK;
}

struct tls_fixture : pki_suite {
    asio::io_context ctx;
    asio::ssl::context server_tls = make_server_context(*pki);
    fetch_config config;

    tls_fixture() {
        server_names_seen.clear();
        SSL_CTX_set_tlsext_servername_callback(server_tls.native_handle(), record_server_name);
    }

    demo::http_server hello_server() {
        return demo::http_server{
            ctx.get_executor(),
            [](const http_request& req) -> asio::awaitable<std::optional<http_response>> {
                co_return make_response(200, "secure " + std::string(req.target()), "text/plain");
            },
            server_tls};
    }

    /// Fetches each URL in turn with one fetcher, then stops `server` so the context runs dry.
    std::vector<fetch_result> fetch_all(demo::http_server& server, std::vector<std::string> urls,
                                        fetcher* shared = nullptr, detail::fetch_options options = {}) {
        std::optional<fetcher> own;
        if (!shared)
            shared = &own.emplace(ctx.get_executor(), config, 8);
        std::vector<fetch_result> results;
        asio::co_spawn(
            ctx,
            [&]() -> asio::awaitable<void> {
                for (const auto& u : urls)
                    results.push_back(co_await shared->fetch(boost::urls::parse_uri(u).value(), options));
                shared->close_idle();
            },
            [&](std::exception_ptr e) {
                server.stop();
                if (e)
                    std::rethrow_exception(e);
            });
        run_bounded(ctx);
        ctx.restart();
        return results;
    }
};

} // namespace

TEST_F(tls_fixture, fetches_over_tls_with_the_ca_file) {
    config.tls.ca_file = ca_file->path().string();
    auto server = hello_server();
    EXPECT_EQ(server.origin().rfind("https://", 0), 0u);
    auto results = fetch_all(server, {server.origin() + "/page"});
    const auto& r = results.at(0);
    EXPECT_FALSE(r.error) << r.error.message() << " " << r.error_detail;
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, "secure /page");
    EXPECT_EQ(r.remote_ip, "127.0.0.1");
    EXPECT_EQ(server_names_seen, std::vector<std::string>{""}) << "no SNI for an IP address (RFC 6066)";
}

TEST_F(tls_fixture, an_unknown_issuer_is_certificate_invalid) {
    auto server = hello_server();
    auto results = fetch_all(server, {server.origin() + "/"});
    const auto& r = results.at(0);
    EXPECT_EQ(r.error, error::certificate_invalid) << r.error.message();
    EXPECT_FALSE(r.error_detail.empty());
    EXPECT_FALSE(detail::is_retryable(r.error));
    EXPECT_EQ(server.requests(), 0u) << "no request is sent to an unverified server";
}

TEST_F(tls_fixture, insecure_skips_verification) {
    config.tls.insecure = true;
    auto server = hello_server();
    auto results = fetch_all(server, {server.origin() + "/"});
    EXPECT_FALSE(results.at(0).error) << results[0].error.message() << " " << results[0].error_detail;
    EXPECT_EQ(results[0].body, "secure /");
}

TEST_F(tls_fixture, the_certificate_must_name_the_url_host_even_through_host_overrides) {
    config.tls.ca_file = ca_file->path().string();
    config.host_overrides["localhost"] = "127.0.0.1";
    config.host_overrides["wrong.example"] = "127.0.0.1";
    auto server = hello_server();
    const auto port = std::to_string(server.port());
    auto results =
        fetch_all(server, {"https://localhost:" + port + "/ok", "https://wrong.example:" + port + "/no"});
    ASSERT_EQ(results.size(), 2u);
    EXPECT_FALSE(results[0].error) << results[0].error.message() << " " << results[0].error_detail;
    EXPECT_EQ(results[0].body, "secure /ok");
    EXPECT_EQ(results[1].error, error::certificate_invalid) << results[1].error.message();
    EXPECT_EQ(server_names_seen, (std::vector<std::string>{"localhost", "wrong.example"}))
        << "SNI carries the URL's host name, not the overriding address";
}

TEST_F(tls_fixture, tls_connections_are_pooled_and_reused) {
    config.tls.ca_file = ca_file->path().string();
    auto server = hello_server();
    fetcher f{ctx.get_executor(), config, 8};
    auto results =
        fetch_all(server, {server.origin() + "/1", server.origin() + "/2", server.origin() + "/3"}, &f);
    ASSERT_EQ(results.size(), 3u);
    for (const auto& r : results)
        EXPECT_EQ(r.status, 200) << r.error.message();
    EXPECT_EQ(server.connections(), 1u);
    EXPECT_EQ(f.stats().connections_reused, 2u);
}

TEST_F(tls_fixture, a_pooled_tls_connection_whose_server_went_away_is_replaced_before_use) {
    config.tls.ca_file = ca_file->path().string();
    auto answer = [](const http_request&) -> asio::awaitable<std::optional<http_response>> {
        co_return make_response(200, "ok", "text/plain");
    };
    fetcher f{ctx.get_executor(), config, 8};
    std::optional<demo::http_server> first{std::in_place, ctx.get_executor(), answer, server_tls};
    const auto port = first->port();
    {
        std::vector<fetch_result> results;
        asio::co_spawn(
            ctx,
            [&]() -> asio::awaitable<void> {
                results.push_back(co_await f.fetch(boost::urls::parse_uri(first->origin() + "/1").value()));
            },
            [&](std::exception_ptr) { first.reset(); }); // leaves the pooled connection to a dead server
        run_bounded(ctx);
        ctx.restart();
        ASSERT_EQ(results.at(0).status, 200);
    }
    demo::http_server second{ctx.get_executor(), answer, server_tls, port};
    auto results = fetch_all(second, {second.origin() + "/2"}, &f);
    EXPECT_FALSE(results.at(0).error) << results[0].error.message();
    EXPECT_EQ(f.stats().idle_connections_dropped, 1u)
        << "its close_notify was read before a request was sent";
    EXPECT_EQ(f.stats().stale_retries, 0u);
}

TEST_F(tls_fixture, https_to_a_plain_http_server_is_a_handshake_failure) {
    config.tls.ca_file = ca_file->path().string();
    demo::http_server plain{ctx.get_executor(),
                            [](const http_request&) -> asio::awaitable<std::optional<http_response>> {
                                co_return make_response(200);
                            }};
    auto results = fetch_all(plain, {"https://127.0.0.1:" + std::to_string(plain.port()) + "/"});
    EXPECT_EQ(results.at(0).error, error::tls_handshake_failed) << results[0].error.message();
    EXPECT_FALSE(detail::is_retryable(results[0].error));
}

TEST_F(tls_fixture, capture_holds_the_bytes_after_tls) {
    config.tls.ca_file = ca_file->path().string();
    auto server = hello_server();
    detail::fetch_options options;
    options.capture = true;
    auto results = fetch_all(server, {server.origin() + "/c"}, nullptr, options);
    const auto& r = results.at(0);
    EXPECT_FALSE(r.error) << r.error.message();
    EXPECT_EQ(r.raw_response.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << r.raw_response;
    EXPECT_EQ(r.raw_response.substr(r.raw_head_bytes), "secure /c");
    EXPECT_EQ(r.raw_request.rfind("GET /c HTTP/1.1\r\n", 0), 0u);
}

TEST_F(tls_fixture, a_missing_ca_file_is_a_construction_error) {
    config.tls.ca_file = "/nonexistent/asiocrawl-ca.pem";
    EXPECT_THROW((fetcher{ctx.get_executor(), config, 8}), boost::system::system_error);
}

TEST_F(tls_fixture, a_tls_server_that_never_answers_times_out) {
    config.tls.ca_file = ca_file->path().string();
    config.request_timeout = std::chrono::milliseconds(300);
    std::optional<demo::http_server> server;
    server.emplace(
        ctx.get_executor(),
        [&](const http_request&) -> asio::awaitable<std::optional<http_response>> {
            co_await server->wait_stopped();
            co_return std::nullopt;
        },
        server_tls);
    auto results = fetch_all(*server, {server->origin() + "/"});
    EXPECT_EQ(results.at(0).error, error::request_timeout) << results[0].error.message();
}

TEST_F(tls_fixture, handshakes_over_the_limit_wait_their_turn) {
    config.tls.ca_file = ca_file->path().string();
    config.tls.max_handshakes = 1;
    auto server = hello_server();
    fetcher f{ctx.get_executor(), config, 8};
    std::vector<fetch_result> results(5);
    std::size_t done = 0;
    for (std::size_t i = 0; i < results.size(); ++i)
        asio::co_spawn(
            ctx,
            [&, i]() -> asio::awaitable<void> {
                results[i] = co_await f.fetch(
                    boost::urls::parse_uri(server.origin() + "/" + std::to_string(i)).value());
            },
            [&](std::exception_ptr) {
                if (++done == results.size()) {
                    f.close_idle();
                    server.stop();
                }
            });
    run_bounded(ctx);
    for (const auto& r : results)
        EXPECT_EQ(r.status, 200) << r.error.message() << " " << r.error_detail;
    EXPECT_EQ(server.connections(), 5u) << "all five connected at once";
}

TEST_F(tls_fixture, a_turn_to_shake_hands_is_bounded_by_connect_timeout) {
    config.tls.ca_file = ca_file->path().string();
    config.tls.max_handshakes = 1;
    config.connect_timeout = std::chrono::milliseconds(300);
    // Accepts and says nothing: the first handshake holds the only turn until its deadline.
    asio::ip::tcp::acceptor silent{ctx, {asio::ip::make_address("127.0.0.1"), 0}};
    const std::string url = "https://127.0.0.1:" + std::to_string(silent.local_endpoint().port()) + "/";
    fetcher f{ctx.get_executor(), config, 8};
    std::vector<fetch_result> results(2);
    std::size_t done = 0;
    for (std::size_t i = 0; i < results.size(); ++i)
        asio::co_spawn(
            ctx,
            [&, i]() -> asio::awaitable<void> {
                results[i] = co_await f.fetch(boost::urls::parse_uri(url).value());
            },
            [&](std::exception_ptr) {
                if (++done == results.size())
                    silent.close();
            });
    run_bounded(ctx);
    for (const auto& r : results)
        EXPECT_EQ(r.error, error::connect_timeout) << r.error.message();
}

// ---- HSTS (RFC 6797) ----

namespace {

/// A crawl through host_overrides of a TLS server for "localhost" whose "/" sends Strict-Transport-Security
/// and links to `/next` over http on the same port. Each crawl gets a server of its own (stopped when the
/// crawl ends, so the context runs dry); known hosts are per host, whatever the port.
struct hsts_crawl : tls_fixture {
    temp_dir dir{"hsts-crawl"};
    std::string hsts_file = (dir.path / "hsts.txt").string();
    std::size_t requests = 0; ///< over every crawl's server

    struct result {
        std::string origin; ///< "localhost:PORT"
        /// url -> (status, next_url, error message or "")
        std::map<std::string, std::tuple<int, std::string, std::string>> records;
    };

    /// Crawls `path` on a fresh server ("https" or "http" as `scheme`), with `change` applied to the config.
    /// `on_port` 0: any; `send_sts` false: "/" sends no Strict-Transport-Security.
    template <class Change>
    result crawl(const std::string& scheme, const std::string& path, Change change,
                 unsigned short on_port = 0, bool send_sts = true) {
        auto port = std::make_shared<std::string>();
        demo::http_server server{
            ctx.get_executor(),
            [port, send_sts](const http_request& req) -> asio::awaitable<std::optional<http_response>> {
                if (req.target() == "/") {
                    auto res = make_response(200, links_page({"http://localhost:" + *port + "/next"}));
                    if (send_sts)
                        res.set(http::field::strict_transport_security, "max-age=1000");
                    co_return res;
                }
                co_return make_response(200, "<p>next</p>");
            },
            server_tls, on_port};
        *port = std::to_string(server.port());
        result out{"localhost:" + *port, {}};
        crawler_config c = loopback_crawl_config();
        c.roots = {scheme + "://" + out.origin + path};
        c.fetch.tls.ca_file = ca_file->path().string();
        c.fetch.host_overrides["localhost"] = "127.0.0.1";
        c.fetch.hsts.file = hsts_file;
        change(c);
        crawler crawl{ctx.get_executor(), c};
        auto report = run_crawl(ctx, crawl, [&] { server.stop(); });
        ctx.restart();
        requests += server.requests();
        if (report)
            for (const auto& r : report->records)
                out.records[r.url] = {r.status, r.next_url, r.error ? r.error.message() : ""};
        return out;
    }
};

} // namespace

TEST_F(hsts_crawl, an_https_answer_with_sts_sends_a_later_http_link_over_https_and_the_file_keeps_it) {
    using row = std::tuple<int, std::string, std::string>;
    auto first = crawl("https", "/", [](crawler_config&) {});
    const auto& origin = first.origin;
    EXPECT_EQ(first.records["https://" + origin + "/"], (row{200, "", ""}));
    EXPECT_EQ(first.records["http://" + origin + "/next"], (row{307, "https://" + origin + "/next", ""}))
        << "a 307 Internal Redirect, no request";
    EXPECT_EQ(first.records["https://" + origin + "/next"], (row{200, "", ""}));
    EXPECT_EQ(requests, 2u) << "nothing went to the TLS port in plain http";
    const std::string file = read_file(hsts_file);
    EXPECT_NE(file.find("\nlocalhost " + origin.substr(origin.find(':') + 1) + " 0 "), std::string::npos)
        << file;
    EXPECT_NE(file.find(" 1000\n"), std::string::npos) << file;

    // Another crawl (another port), an http URL as its root: upgraded from the file before anything is sent.
    auto second = crawl("http", "/next", [](crawler_config&) {});
    EXPECT_EQ(second.records["http://" + second.origin + "/next"],
              (row{307, "https://" + second.origin + "/next", ""}));
    EXPECT_EQ(second.records["https://" + second.origin + "/next"], (row{200, "", ""}));
    EXPECT_EQ(requests, 3u);
}

TEST_F(hsts_crawl, without_hsts_or_with_unverified_certificates_nothing_is_upgraded) {
    // Plain http to the TLS port is a lost connection, not retried here.
    auto off = crawl("https", "/", [](crawler_config& c) {
        c.fetch.hsts.enabled = false;
        c.max_tries = 1;
    });
    EXPECT_EQ(std::get<0>(off.records["http://" + off.origin + "/next"]), 0)
        << "plain http to a TLS port fails";
    EXPECT_EQ(off.records.count("https://" + off.origin + "/next"), 0u);
    EXPECT_FALSE(std::filesystem::exists(hsts_file));

    // An answer over a connection whose certificate was not verified teaches nothing (RFC 6797 8.1).
    auto insecure = crawl("https", "/", [](crawler_config& c) {
        c.fetch.tls.insecure = true;
        c.max_tries = 1;
    });
    EXPECT_EQ(std::get<0>(insecure.records["http://" + insecure.origin + "/next"]), 0);
    EXPECT_EQ(insecure.records.count("https://" + insecure.origin + "/next"), 0u);
    EXPECT_EQ(read_file(hsts_file).find("localhost"), std::string::npos);
}

TEST_F(hsts_crawl, a_crawl_with_a_state_dir_keeps_known_hosts_there_for_its_next_run) {
    const auto state_dir = dir.path / "state";
    auto with_state = [&](crawler_config& c) {
        c.fetch.hsts.file.clear();
        c.state.dir = state_dir.string();
    };
    auto first = crawl("https", "/", with_state);
    EXPECT_EQ(std::get<0>(first.records["http://" + first.origin + "/next"]), 307);
    EXPECT_NE(read_file(state_dir / "hsts.txt").find("\nlocalhost "), std::string::npos);
    const auto port = static_cast<unsigned short>(std::stoi(first.origin.substr(first.origin.find(':') + 1)));

    // A re-crawl of the same crawl, "/" now without the header: the http URL is upgraded from the state dir.
    auto again = crawl(
        "https", "/",
        [&](crawler_config& c) {
            with_state(c);
            c.state.recrawl = true;
            c.max_tries = 1;
        },
        port, false);
    EXPECT_EQ(std::get<0>(again.records["http://" + again.origin + "/next"]), 307);
    EXPECT_EQ(std::get<0>(again.records["https://" + again.origin + "/next"]), 200);
    EXPECT_NE(read_file(state_dir / "hsts.txt").find("\nlocalhost "), std::string::npos);
}

TEST_F(hsts_crawl, a_host_learned_is_in_the_state_dir_while_the_crawl_runs) {
    // A kill loses nothing learned before the last commit: /next (reached after "/" taught the host) answers
    // only once the state directory's file names the host, or after five seconds, while the crawl still runs.
    const auto state_dir = dir.path / "state";
    const auto known_hosts = state_dir / "hsts.txt";
    auto port = std::make_shared<std::string>();
    auto seen_while_running = std::make_shared<bool>(false);
    demo::http_server server{
        ctx.get_executor(),
        [port, seen_while_running,
         known_hosts](const http_request& req) -> asio::awaitable<std::optional<http_response>> {
            if (req.target() == "/") {
                auto res = make_response(200, links_page({"http://localhost:" + *port + "/next"}));
                res.set(http::field::strict_transport_security, "max-age=1000");
                co_return res;
            }
            asio::steady_timer poll(co_await asio::this_coro::executor);
            for (int i = 0; i < 500 && !*seen_while_running; ++i) {
                *seen_while_running = read_file(known_hosts).find("\nlocalhost ") != std::string::npos;
                poll.expires_after(std::chrono::milliseconds(10));
                co_await poll.async_wait(asio::as_tuple(asio::use_awaitable));
            }
            co_return make_response(200, "<p>next</p>");
        },
        server_tls};
    *port = std::to_string(server.port());
    crawler_config c = loopback_crawl_config();
    c.roots = {"https://localhost:" + *port + "/"};
    c.fetch.tls.ca_file = ca_file->path().string();
    c.fetch.host_overrides["localhost"] = "127.0.0.1";
    c.state.dir = state_dir.string();
    crawler crawl{ctx.get_executor(), c};
    auto report = run_crawl(ctx, crawl, [&] { server.stop(); });
    ctx.restart();
    ASSERT_TRUE(report);
    EXPECT_EQ(report->done, 3u);
    EXPECT_TRUE(*seen_while_running) << "the known hosts were written only when the crawl ended";
}
