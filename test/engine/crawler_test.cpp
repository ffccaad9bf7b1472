#include <asiocrawl/crawler.hpp>

#include "support/loopback_crawl.hpp"
#include "support/records.hpp"

#include <asiocrawl/error.hpp>
#include <asiocrawl_demo/site.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http/field.hpp>

#include <gmock/gmock.h>

#include <algorithm>
#include <optional>
#include <set>

namespace asio = boost::asio;
namespace http = boost::beast::http;
using namespace asiocrawl;
using namespace asiocrawl::test;
using namespace std::chrono_literals;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;
using ::testing::UnorderedElementsAreArray;

namespace {

struct crawler_fixture : ::testing::Test {
    asio::io_context ctx;
    // The ORIGIN.md behaviours, without this session's politeness layers: robots.txt, per-host limits and
    // backoff have their own tests (polite_crawl_test.cpp) and would only add requests and waits here.
    crawler_config config = loopback_crawl_config();
    loopback_site server{ctx.get_executor()};
    std::vector<record> streamed; // what the record sink saw

    crawler_fixture() {
        config.retry.initial_backoff = std::chrono::milliseconds(1);
        config.retry.max_backoff = std::chrono::milliseconds(5);
    }

    void add(const std::string& target, http_response response) { server.add(target, std::move(response)); }
    void add_page(const std::string& target, std::vector<std::string> hrefs) {
        add(target, make_response(200, links_page(hrefs)));
    }
    std::string url(const std::string& target) const { return server.url(target); }
    std::string port() const { return std::to_string(server.port()); }

    /// Starts `c`; when it completes, `result` gets the report and the servers stop, so the context runs dry.
    void start(crawler& c, std::optional<report>& result, std::vector<demo::http_server*> more_servers = {}) {
        c.async_run([this, &result, more_servers](boost::system::error_code ec, report r) {
            server.stop();
            for (auto* s : more_servers)
                s->stop();
            if (ec)
                throw boost::system::system_error(ec, r.failure);
            result = std::move(r);
        });
    }

    /// Crawls from `roots` on the fixture's context, collecting what the record sink sees in `streamed`.
    report crawl(std::vector<std::string> roots, std::vector<demo::http_server*> more_servers = {}) {
        config.roots = std::move(roots);
        crawler c{ctx.get_executor(), config};
        c.set_record_sink([this](const record& r) { streamed.push_back(r); });
        auto result = run_crawl(ctx, c, [&] {
            server.stop();
            for (auto* s : more_servers)
                s->stop();
        });
        EXPECT_TRUE(result.has_value());
        return result ? std::move(*result) : report{};
    }

    report crawl() { return crawl({url("/")}); }

    std::vector<std::string> requested() const { return server.requested(); }
    std::vector<std::string> hosts_requested() const {
        std::vector<std::string> out;
        for (const auto& r : server.log())
            out.push_back(r.host);
        return out;
    }
};

} // namespace

// ---- The reference crawler's test list (ORIGIN.md) ----

TEST_F(crawler_fixture, link_followed) {
    add_page("/", {"/a"});
    add_page("/a", {});
    auto r = crawl();
    EXPECT_THAT(requested(), UnorderedElementsAre("/", "/a"));
    ASSERT_EQ(r.records.size(), 2u);
    const auto* root = find(r, url("/"));
    ASSERT_NE(root, nullptr);
    EXPECT_EQ(root->num_urls, 1u);
    EXPECT_EQ(root->num_new_urls, 1u);
    EXPECT_EQ(root->depth, 0);
    EXPECT_EQ(find(r, url("/a"))->depth, 1);
    EXPECT_EQ(r.done, 2u);
    EXPECT_EQ(r.todo, 0u);
    EXPECT_EQ(streamed.size(), 2u) << "the sink sees every record";
}

TEST_F(crawler_fixture, links_past_max_links_per_page_are_counted_not_followed) {
    config.traps.max_links_per_page = 3;
    // Five links, the first repeated with and without fragments: the cap counts distinct links (issue 26
    // item 8), so the repeats cost none of the three.
    std::string html = "<a href=/l0>x</a><a href=/l0#a>x</a><a href=/l0>x</a><a href=/l0#b>x</a>";
    for (int i = 1; i < 5; ++i)
        html += "<a href=/l" + std::to_string(i) + ">x</a>";
    add("/", make_response(200, html));
    for (int i = 0; i < 5; ++i)
        add_page("/l" + std::to_string(i), {});
    auto r = crawl();
    EXPECT_THAT(requested(), UnorderedElementsAre("/", "/l0", "/l1", "/l2"));
    EXPECT_EQ(r.stats["skipped_links_over_page_cap"], 2u);
    EXPECT_EQ(find(r, url("/"))->num_urls, 3u);
}

TEST_F(crawler_fixture, link_cycle_terminates) {
    add_page("/", {"/a", "/"});
    add_page("/a", {"/", "/a", "/b"});
    add_page("/b", {"/a", "/"});
    crawl();
    EXPECT_THAT(requested(), UnorderedElementsAre("/", "/a", "/b"));
}

TEST_F(crawler_fixture, prohibited_host_not_fetched) {
    // localhost reaches this same server, so a wrong request would show up in its log.
    add_page("/", {"http://localhost:" + port() + "/forbidden", "http://other.invalid/x", "/ok"});
    add_page("/ok", {});
    auto r = crawl();
    EXPECT_THAT(requested(), UnorderedElementsAre("/", "/ok"));
    EXPECT_EQ(find(r, url("/"))->num_urls, 1u);
    EXPECT_EQ(r.stats["skipped_off_host"], 2u);
}

TEST_F(crawler_fixture, strict_host_checking_treats_www_as_the_same_host) {
    config.fetch.host_overrides = {{"example.test", "127.0.0.1"},
                                   {"www.example.test", "127.0.0.1"},
                                   {"sub.example.test", "127.0.0.1"},
                                   {"other.test", "127.0.0.1"}};
    const std::string p = ":" + port();
    add_page("/", {"http://www.example.test" + p + "/www", "http://sub.example.test" + p + "/sub",
                   "http://other.test" + p + "/other"});
    add_page("/www", {});
    crawl({"http://example.test" + p + "/"});
    EXPECT_THAT(requested(), UnorderedElementsAre("/", "/www"));
    EXPECT_THAT(hosts_requested(), UnorderedElementsAre("example.test" + p, "www.example.test" + p));
}

TEST_F(crawler_fixture, lenient_host_checking_admits_subdomains) {
    config.scope = host_scope::lenient;
    config.fetch.host_overrides = {{"www.example.test", "127.0.0.1"},
                                   {"sub.example.test", "127.0.0.1"},
                                   {"deep.sub.example.test", "127.0.0.1"},
                                   {"other.test", "127.0.0.1"}};
    const std::string p = ":" + port();
    add_page("/", {"http://sub.example.test" + p + "/sub", "http://deep.sub.example.test" + p + "/deep",
                   "http://other.test" + p + "/other"});
    add_page("/sub", {});
    add_page("/deep", {});
    crawl({"http://www.example.test" + p + "/"});
    EXPECT_THAT(requested(), UnorderedElementsAre("/", "/sub", "/deep"));
}

TEST_F(crawler_fixture, exclude_pattern) {
    config.exclude = {R"(/private/|\.pdf$)"};
    add_page("/", {"/private/a", "/doc.pdf", "/public"});
    add_page("/public", {"/private/b"});
    auto r = crawl();
    EXPECT_THAT(requested(), UnorderedElementsAre("/", "/public"));
    EXPECT_EQ(r.stats["skipped_excluded"], 3u);
}

TEST_F(crawler_fixture, include_pattern) {
    config.include = {"/docs/"};
    add_page("/", {"/docs/a", "/blog/b"});
    add_page("/docs/a", {"/docs/c"});
    crawl();
    EXPECT_THAT(requested(), UnorderedElementsAre("/", "/docs/a", "/docs/c"));
}

TEST_F(crawler_fixture, several_roots) {
    add_page("/one", {"/shared"});
    add_page("/two", {"/shared"});
    add_page("/shared", {});
    crawl({url("/one"), url("/two"), url("/one")});
    EXPECT_THAT(requested(), UnorderedElementsAre("/one", "/two", "/shared"));
}

TEST_F(crawler_fixture, deep_root_resolves_relative_links) {
    add_page("/a/b/", {"c", "../d", "./e/../f", "/g"});
    for (const auto* t : {"/a/b/c", "/a/d", "/a/b/f", "/g"})
        add_page(t, {});
    crawl({url("/a/b/")});
    EXPECT_THAT(requested(), UnorderedElementsAre("/a/b/", "/a/b/c", "/a/d", "/a/b/f", "/g"));
}

TEST_F(crawler_fixture, redirect_followed) {
    add("/", redirect_to(302, "/target"));
    add_page("/target", {});
    auto r = crawl();
    EXPECT_THAT(requested(), UnorderedElementsAre("/", "/target"));
    const auto* hop = find(r, url("/"));
    ASSERT_NE(hop, nullptr);
    EXPECT_EQ(hop->status, 302);
    EXPECT_EQ(hop->next_url, url("/target"));
    EXPECT_TRUE(hop->is_redirect());
    EXPECT_FALSE(hop->failed());
    EXPECT_EQ(r.stats["redirect"], 1u);
}

TEST_F(crawler_fixture, every_redirect_status_is_followed) {
    add_page("/", {"/301", "/302", "/303", "/307", "/308", "/300"});
    for (int status : {301, 302, 303, 307, 308})
        add("/" + std::to_string(status), redirect_to(status, "/to" + std::to_string(status)));
    add("/300", redirect_to(300, "/to300")); // 300 Multiple Choices is not a redirect to follow
    for (int status : {301, 302, 303, 307, 308})
        add_page("/to" + std::to_string(status), {});
    crawl();
    EXPECT_THAT(requested(), UnorderedElementsAre("/", "/301", "/302", "/303", "/307", "/308", "/300",
                                                  "/to301", "/to302", "/to303", "/to307", "/to308"));
}

TEST_F(crawler_fixture, redirect_cycle_terminates) {
    add("/", redirect_to(301, "/a"));
    add("/a", redirect_to(301, "/b"));
    add("/b", redirect_to(301, "/"));
    auto r = crawl();
    EXPECT_THAT(requested(), UnorderedElementsAre("/", "/a", "/b"));
    EXPECT_EQ(r.records.size(), 3u);
}

TEST_F(crawler_fixture, redirect_join_fetches_the_target_once) {
    add_page("/", {"/r1", "/r2"});
    add("/r1", redirect_to(301, "/target"));
    add("/r2", redirect_to(302, url("/target")));
    add_page("/target", {});
    crawl();
    EXPECT_THAT(requested(), UnorderedElementsAre("/", "/r1", "/r2", "/target"));
}

TEST_F(crawler_fixture, redirect_chain_ends_at_max_redirect) {
    config.max_redirect = 3;
    for (int i = 0; i < 6; ++i)
        add("/c" + std::to_string(i), redirect_to(307, "/c" + std::to_string(i + 1)));
    auto r = crawl({url("/c0")});
    EXPECT_THAT(requested(), UnorderedElementsAre("/c0", "/c1", "/c2", "/c3"));
    const auto* last = find(r, url("/c3"));
    ASSERT_NE(last, nullptr);
    EXPECT_EQ(last->error, error::redirect_limit);
    EXPECT_EQ(last->next_url, url("/c4"));
    EXPECT_EQ(r.stats["fail_redirect_limit"], 1u);
}

TEST_F(crawler_fixture, redirect_targets_pass_scope_and_exclude) {
    config.exclude = {"excluded"};
    add_page("/", {"/off", "/ex"});
    add("/off", redirect_to(301, "http://localhost:" + port() + "/stolen"));
    add("/ex", redirect_to(301, "/excluded"));
    auto r = crawl();
    EXPECT_THAT(requested(), UnorderedElementsAre("/", "/off", "/ex"));
    EXPECT_EQ(find(r, url("/off"))->next_url, "http://localhost:" + port() + "/stolen");
    EXPECT_EQ(find(r, url("/off"))->num_urls, 0u);
    EXPECT_EQ(find(r, url("/off"))->num_new_urls, 0u);
    EXPECT_EQ(r.stats["skipped_off_host"], 1u);
    EXPECT_EQ(r.stats["skipped_excluded"], 1u);
}

TEST_F(crawler_fixture, redirect_without_location_is_an_error_record) {
    add_page("/", {"/nowhere", "/empty", "/garbage", "/mailto"});
    add("/nowhere", make_response(301, "", ""));
    add("/empty", redirect_to(302, ""));
    add("/garbage", redirect_to(302, "http://[broken"));
    add("/mailto", redirect_to(302, "mailto:someone@example.com"));
    auto r = crawl();
    EXPECT_THAT(requested(), UnorderedElementsAre("/", "/nowhere", "/empty", "/garbage", "/mailto"));
    EXPECT_EQ(find(r, url("/nowhere"))->error, error::missing_location);
    EXPECT_EQ(find(r, url("/empty"))->error, error::missing_location);
    EXPECT_EQ(find(r, url("/garbage"))->error, error::invalid_location);
    EXPECT_EQ(find(r, url("/mailto"))->error, error::invalid_location);
    EXPECT_EQ(find(r, url("/nowhere"))->status, 301);
}

TEST_F(crawler_fixture, max_tasks_caps_concurrent_requests_exactly) {
    config.max_tasks = 5;
    std::vector<std::string> links;
    for (int i = 0; i < 40; ++i)
        links.push_back("/p" + std::to_string(i));
    std::string html = "<html>";
    for (const auto& l : links)
        html += "<a href=" + l + ">x</a>";
    add("/", make_response(200, html));
    // Slow answers make the workers overlap; the test asserts on counts, never on time.
    demo::http_server slow{ctx.get_executor(),
                           [&](const http_request& req) -> asio::awaitable<std::optional<http_response>> {
                               if (req.target() == "/")
                                   co_return make_response(200, html);
                               co_await sleep_for(30ms);
                               co_return make_response(200, "<p>leaf</p>");
                           }};
    auto r = crawl({slow.origin() + "/"}, {&slow});
    EXPECT_EQ(slow.requests(), 41u);
    EXPECT_EQ(slow.peak_in_flight(), 5u);
    EXPECT_EQ(r.max_tasks, 5u);
}

TEST_F(crawler_fixture, max_tries_survives_a_server_that_drops_twice) {
    int calls = 0;
    demo::http_server flaky{ctx.get_executor(),
                            [&](const http_request&) -> asio::awaitable<std::optional<http_response>> {
                                if (++calls <= 2)
                                    co_return std::nullopt;
                                co_return make_response(200, links_page({}));
                            }};
    config.max_tries = 4;
    auto r = crawl({flaky.origin() + "/"}, {&flaky});
    ASSERT_EQ(r.records.size(), 1u);
    EXPECT_FALSE(r.records[0].failed());
    EXPECT_EQ(r.records[0].status, 200);
    EXPECT_EQ(r.records[0].tries, 3);
}

TEST_F(crawler_fixture, max_tries_exhausted_is_a_failure_record) {
    demo::http_server broken{ctx.get_executor(),
                             [&](const http_request&) -> asio::awaitable<std::optional<http_response>> {
                                 co_return std::nullopt;
                             }};
    config.max_tries = 2;
    auto r = crawl({broken.origin() + "/"}, {&broken});
    ASSERT_EQ(r.records.size(), 1u);
    EXPECT_TRUE(r.records[0].failed());
    EXPECT_EQ(r.records[0].status, 0);
    EXPECT_EQ(r.records[0].tries, 2);
    EXPECT_EQ(broken.requests(), 2u);
    EXPECT_EQ(r.stats["fail"], 1u);
}

TEST_F(crawler_fixture, charset_is_recorded_as_declared_and_never_guessed) {
    add_page("/", {"/latin", "/plain", "/meta", "/bom"});
    add("/latin", make_response(200, "<meta charset=utf-8><p>x</p>", "text/html; charset=ISO-8859-2"));
    add("/plain", make_response(200, "<p>x</p>", "text/html"));
    add("/meta", make_response(200, "<head><meta charset=\"Shift_JIS\"></head><p>x</p>", "text/html"));
    add("/bom", make_response(200, "\xEF\xBB\xBF<p>x</p>", "text/html"));
    auto r = crawl();
    EXPECT_EQ(find(r, url("/latin"))->charset, "iso-8859-2") << "Content-Type wins over the markup";
    EXPECT_EQ(find(r, url("/latin"))->charset_source, "content-type");
    EXPECT_EQ(find(r, url("/plain"))->charset, "") << "nothing declared: nothing guessed";
    EXPECT_EQ(find(r, url("/plain"))->charset_source, "");
    EXPECT_EQ(find(r, url("/meta"))->charset, "shift_jis");
    EXPECT_EQ(find(r, url("/meta"))->charset_source, "meta");
    EXPECT_EQ(find(r, url("/bom"))->charset, "utf-8");
    EXPECT_EQ(find(r, url("/bom"))->charset_source, "bom");
}

TEST_F(crawler_fixture, content_type_recorded_and_non_html_not_parsed) {
    add_page("/", {"/data.json", "/notes.txt", "/page.xhtml"});
    add("/data.json", make_response(200, R"({"href": "<a href='/hidden1'>"})", "application/json"));
    add("/notes.txt", make_response(200, "<a href=\"/hidden2\">x</a>", "text/plain"));
    add("/page.xhtml", make_response(200, links_page({"/from-xhtml"}), "application/xhtml+xml"));
    add_page("/from-xhtml", {});
    auto r = crawl();
    EXPECT_THAT(requested(),
                UnorderedElementsAre("/", "/data.json", "/notes.txt", "/page.xhtml", "/from-xhtml"));
    EXPECT_EQ(find(r, url("/data.json"))->content_type, "application/json");
    EXPECT_EQ(find(r, url("/notes.txt"))->content_type, "text/plain");
    EXPECT_EQ(find(r, url("/page.xhtml"))->content_type, "application/xhtml+xml");
    EXPECT_EQ(r.stats["other"], 2u);
    EXPECT_EQ(r.stats["html"], 3u);
}

TEST_F(crawler_fixture, non_http_links_skipped) {
    add_page("/", {"mailto:a@b.c", "javascript:void(0)", "ftp://ftp.example.com/f", "tel:+123",
                   "data:text/html,x", "/ok"});
    add_page("/ok", {});
    auto r = crawl();
    EXPECT_THAT(requested(), UnorderedElementsAre("/", "/ok"));
    EXPECT_EQ(r.stats["skipped_not_http"], 5u);
}

// ---- Beyond the reference ----

TEST_F(crawler_fixture, not_found_pages_are_recorded_and_not_parsed) {
    add_page("/", {"/missing"});
    add("/missing", make_response(404, links_page({"/from-404"})));
    auto r = crawl();
    EXPECT_THAT(requested(), UnorderedElementsAre("/", "/missing"));
    EXPECT_EQ(find(r, url("/missing"))->status, 404);
    EXPECT_FALSE(find(r, url("/missing"))->failed()) << "a 404 is an answer, not a network failure";
    EXPECT_EQ(r.stats["status_404"], 1u);
}

TEST_F(crawler_fixture, a_server_that_never_answers_costs_one_error_record) {
    config.fetch.request_timeout = 300ms;
    config.max_tries = 1;
    demo::http_server hanging{ctx.get_executor(),
                              [&](const http_request&) -> asio::awaitable<std::optional<http_response>> {
                                  co_await hanging.wait_stopped();
                                  co_return std::nullopt;
                              }};
    add_page("/", {"/fine"});
    add_page("/fine", {});
    auto r = crawl({url("/"), hanging.origin() + "/hang"}, {&hanging});
    const auto* hang = find(r, hanging.origin() + "/hang");
    ASSERT_NE(hang, nullptr);
    EXPECT_EQ(hang->error, error::request_timeout);
    EXPECT_EQ(r.stats["fail_request_timeout"], 1u);
    EXPECT_THAT(requested(), UnorderedElementsAre("/", "/fine"));
}

TEST_F(crawler_fixture, base_href_fragments_entities_and_meta_refresh) {
    add("/", make_response(200, R"(<html><head><base href="/docs/"></head><body>
        <a href="intro.html#top">a</a> <a href=' guide.html '>b</a>
        <a href="/search?q=1&amp;page=2#frag">c</a> <a href="#only-fragment">d</a>
        <iframe src="frame.html"></iframe><map><area href="/area"></map>
        <meta http-equiv="Refresh" content="0; URL='/refreshed'">
        <!-- <a href="/commented">x</a> --><script>var s = '<a href="/scripted">';</script>
        </body></html>)"));
    for (const auto* t : {"/docs/intro.html", "/docs/guide.html", "/search?q=1&page=2", "/docs/frame.html",
                          "/area", "/refreshed"})
        add_page(t, {});
    auto r = crawl();
    EXPECT_THAT(requested(),
                UnorderedElementsAre("/", "/docs/intro.html", "/docs/guide.html", "/search?q=1&page=2",
                                     "/docs/frame.html", "/area", "/refreshed", "/docs/"));
}

TEST_F(crawler_fixture, an_exception_while_processing_one_url_cannot_hang_the_crawl) {
    add_page("/", {"/boom", "/fine"});
    add_page("/boom", {});
    add_page("/fine", {});
    config.roots = {url("/")};
    crawler c{ctx.get_executor(), config};
    std::vector<std::string> sunk;
    c.set_record_sink([&](const record& r) {
        sunk.push_back(r.url + (r.failed() ? " " + std::string(error_kind(r.error)) : ""));
        if (r.url == url("/boom") && !r.failed())
            throw std::runtime_error("embedder bug");
    });
    std::optional<report> result;
    start(c, result);
    run_bounded(ctx);
    ASSERT_TRUE(result);
    EXPECT_EQ(result->todo, 0u);
    EXPECT_THAT(sunk, ::testing::Contains(url("/boom") + " internal_error"));
    EXPECT_THAT(sunk, ::testing::Contains(url("/fine")));
}

TEST_F(crawler_fixture, max_depth_limits_link_levels) {
    config.max_depth = 1;
    add_page("/", {"/d1"});
    add_page("/d1", {"/d2"});
    add_page("/d2", {});
    auto r = crawl();
    EXPECT_THAT(requested(), UnorderedElementsAre("/", "/d1"));
    EXPECT_EQ(r.stats["skipped_max_depth"], 1u);
}

TEST_F(crawler_fixture, max_pages_bounds_the_urls_queued) {
    config.max_pages = 3;
    config.max_tasks = 1; // one worker: the order in which URLs are admitted is the document order
    add_page("/", {"/a", "/b", "/c", "/d"});
    for (const auto* t : {"/a", "/b", "/c", "/d"})
        add_page(t, {});
    auto r = crawl();
    EXPECT_THAT(requested(), UnorderedElementsAre("/", "/a", "/b"));
    EXPECT_EQ(r.stats["skipped_max_pages"], 2u);
}

TEST_F(crawler_fixture, stop_ends_the_crawl_with_todo) {
    config.max_tasks = 1;
    std::string html;
    for (int i = 0; i < 20; ++i)
        html += "<a href=/p" + std::to_string(i) + ">x</a>";
    add("/", make_response(200, html));
    config.roots = {url("/")};
    crawler c{ctx.get_executor(), config};
    std::optional<report> result;
    c.set_record_sink([&](const record& r) {
        if (r.url == url("/"))
            c.stop(); // after the root: its 20 links are queued, none started
    });
    start(c, result);
    run_bounded(ctx);
    ASSERT_TRUE(result);
    EXPECT_EQ(result->done, 1u);
    EXPECT_EQ(result->todo, 20u);
    EXPECT_EQ(server.requests(), 1u);
}

TEST_F(crawler_fixture, stop_lets_the_attempt_in_flight_finish_but_starts_no_retry) {
    std::optional<crawler> c;
    demo::http_server dropping{ctx.get_executor(),
                               [&](const http_request&) -> asio::awaitable<std::optional<http_response>> {
                                   c->stop(); // while this first attempt is in flight
                                   co_await sleep_for(50ms);
                                   co_return std::nullopt; // a network failure that would normally be retried
                               }};
    config.max_tries = 4;
    config.roots = {dropping.origin() + "/"};
    c.emplace(ctx.get_executor(), config);
    std::optional<report> result;
    start(*c, result, {&dropping});
    run_bounded(ctx);
    ASSERT_TRUE(result);
    ASSERT_EQ(result->records.size(), 1u);
    EXPECT_TRUE(result->records[0].failed());
    EXPECT_EQ(result->records[0].tries, 1);
    EXPECT_EQ(dropping.requests(), 1u);
}

TEST_F(crawler_fixture, destroying_the_crawler_mid_crawl_is_safe) {
    add_page("/", {"/a", "/b"});
    add_page("/a", {});
    add_page("/b", {});
    config.roots = {url("/")};
    std::optional<report> result;
    {
        crawler c{ctx.get_executor(), config};
        start(c, result);
        ctx.poll(); // the crawl is under way
    }               // destroyed here: it stops, and the operation still completes
    run_bounded(ctx);
    ASSERT_TRUE(result);
    EXPECT_LE(result->done, 3u);
}

TEST_F(crawler_fixture, invalid_config_is_rejected_before_any_request) {
    config.roots = {};
    EXPECT_THROW((crawler{ctx.get_executor(), config}), std::invalid_argument);
    config.roots = {"ftp://example.com/"};
    EXPECT_THROW((crawler{ctx.get_executor(), config}), std::invalid_argument);
    for (const char* not_a_root : {"not a url", "mailto:a@b.c"}) {
        config.roots = {not_a_root};
        try {
            crawler c{ctx.get_executor(), config};
            ADD_FAILURE() << not_a_root << " was accepted as a root";
        } catch (const std::invalid_argument& e) {
            EXPECT_THAT(e.what(), HasSubstr("roots[0] must be an http or https URL"));
        }
    }
    config.roots = {url("/")};
    config.exclude = {"(unclosed"};
    EXPECT_THROW((crawler{ctx.get_executor(), config}), std::invalid_argument);
    EXPECT_EQ(server.requests(), 0u);
}

TEST_F(crawler_fixture, works_with_use_awaitable_inside_an_application_coroutine) {
    add_page("/", {"/a"});
    add_page("/a", {});
    config.roots = {url("/")};
    std::size_t done = 0;
    asio::co_spawn(
        ctx,
        [&]() -> asio::awaitable<void> {
            crawler c{co_await asio::this_coro::executor, config};
            auto r = co_await c.async_run(asio::use_awaitable);
            done = r.done;
            server.stop();
        },
        [](std::exception_ptr e) {
            if (e)
                std::rethrow_exception(e);
        });
    run_bounded(ctx);
    EXPECT_EQ(done, 2u);
}

// ---- A generated site: the set of requests must equal the reachable set exactly ----

TEST_F(crawler_fixture, generated_site_is_crawled_to_exactly_its_reachable_set) {
    demo::site_options options;
    options.pages = 300;
    options.seed = 7;
    const demo::site site = demo::generate_site(options);
    demo::http_server site_server{ctx.get_executor(), demo::serve_site(site)};
    config.max_tasks = 20;
    auto r = crawl({site_server.origin() + "/"}, {&site_server});

    std::multiset<std::string> seen;
    for (const auto& req : site_server.log()) {
        EXPECT_EQ(req.host, "127.0.0.1:" + std::to_string(site_server.port())) << req.target;
        seen.insert(req.target);
    }
    for (const auto& t : seen)
        EXPECT_EQ(seen.count(t), 1u) << t << " requested more than once";
    const std::set<std::string> unique(seen.begin(), seen.end());
    std::vector<std::string> missing, unexpected;
    std::set_difference(site.expected_requests.begin(), site.expected_requests.end(), unique.begin(),
                        unique.end(), std::back_inserter(missing));
    std::set_difference(unique.begin(), unique.end(), site.expected_requests.begin(),
                        site.expected_requests.end(), std::back_inserter(unexpected));
    EXPECT_THAT(missing, ::testing::IsEmpty()) << "reachable but never requested";
    EXPECT_THAT(unexpected, ::testing::IsEmpty()) << "requested but not reachable";
    EXPECT_EQ(r.done, site.expected_requests.size());
    EXPECT_EQ(r.todo, 0u);
}
