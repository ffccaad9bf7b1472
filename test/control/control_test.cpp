// The control API (docs/CONTROL.md): its routing and JSON as a table (request in, answer out) against a real
// crawler, then crawls on loopback servers steered through it: a paused host gets no request while another
// goes on, a resume continues it, a seed added mid-crawl is fetched, a host's delay is held, a pause outlives
// the process through --state-dir, and the listener answers a wrong token with 401.
#include <asiocrawl/crawler.hpp>
#include <asiocrawl/outputs/control_api.hpp>
#include <asiocrawl/outputs/metrics.hpp>

#include "support/loopback_crawl.hpp"
#include "support/temp_dir.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/json/parse.hpp>

#include <gmock/gmock.h>

#include <optional>

namespace asio = boost::asio;
namespace json = boost::json;
using namespace asiocrawl;
using namespace asiocrawl::test;
using namespace std::chrono_literals;
using asiocrawl::outputs::control_api;
using asiocrawl::outputs::listener_request;
using asiocrawl::outputs::listener_response;
using ::testing::HasSubstr;
using steady = std::chrono::steady_clock;

namespace {

listener_response call(control_api& api, std::string_view method, std::string_view target,
                       std::string_view body = {}, std::string_view authorization = {}) {
    listener_request r;
    r.method = method;
    r.target = target;
    r.body = body;
    r.authorization = authorization;
    r.peer = "127.0.0.1";
    return api.handle(r);
}

json::object body_of(const listener_response& r) {
    return json::parse(r.body).as_object();
}

/// The host's entry of a crawler::hosts() answer (a copy: the answer is a temporary).
std::optional<host_status> find_host(const std::vector<host_status>& hosts, std::string_view name) {
    for (const auto& h : hosts)
        if (h.host == name)
            return h;
    return std::nullopt;
}

crawler_config two_host_config(unsigned short a_port, unsigned short b_port) {
    auto config = loopback_crawl_config();
    config.max_tasks = 8;
    config.fetch.host_overrides = {{"a.test", "127.0.0.1"}, {"b.test", "127.0.0.1"}};
    config.roots = {"http://a.test:" + std::to_string(a_port) + "/",
                    "http://b.test:" + std::to_string(b_port) + "/"};
    return config;
}

} // namespace

// ---- the routing table, without sockets ----

struct control_table : ::testing::Test {
    asio::io_context ctx;
    crawler_config config = [] {
        auto c = loopback_crawl_config();
        c.roots = {"http://a.test/"};
        return c;
    }();
    crawler crawl{ctx.get_executor(), config};
    std::vector<std::string> logged;
    control_api api{crawl, "s3cret", logger{log_level::info, [this](log_level, std::string_view m) {
                                                logged.emplace_back(m);
                                            }}};
};

TEST_F(control_table, requests_and_their_answers) {
    struct row {
        std::string_view method, target, body, authorization;
        unsigned status;
        std::string_view in_body;
    };
    const std::string_view ok = "Bearer s3cret";
    const row rows[] = {
        {"GET", "/api/status", "", "", 401, "bearer token"},
        {"GET", "/api/status", "", "Bearer wrong", 401, "bearer token"},
        {"GET", "/api/status", "", "Bearer s3cre", 401, "bearer token"},
        {"GET", "/api/status", "", "s3cret", 401, "bearer token"},
        {"GET", "/api/status", "", ok, 200, "\"records\":0"},
        {"GET", "/api/hosts", "", ok, 200, "{\"hosts\":[]}"},
        {"PUT", "/api/hosts/a.test", R"({"delay": "2s", "max_per_host": 1})", ok, 200, "\"delay_ms\":2000"},
        {"PUT", "/api/hosts/a.test", R"({"delay": 0.5})", ok, 200, "\"delay_ms\":500"},
        {"PUT", "/api/hosts/a.test", R"({"delay": "150ms"})", ok, 200, "\"max_per_host\":1"},
        {"PUT", "/api/hosts/a.test", R"({"delay": "2 fortnights"})", ok, 400, "unknown unit"},
        {"PUT", "/api/hosts/a.test", R"({"delay": -1})", ok, 400, "between 0 and 24h"},
        {"PUT", "/api/hosts/a.test", R"({"max_per_host": 0})", ok, 400, "from 1 to 10000"},
        {"PUT", "/api/hosts/a.test", R"({"speed": 3})", ok, 400,
         R"(unknown field \"speed\" (delay, max_per_host))"},
        {"PUT", "/api/hosts/a.test", "{}", ok, 400, "nothing to change"},
        {"PUT", "/api/hosts/a.test", "{not json", ok, 400, "not JSON"},
        {"PUT", "/api/hosts/a%20b", R"({"delay": 1})", ok, 400, "not a host name"},
        {"POST", "/api/hosts/b.test/pause", "", ok, 200, "\"paused\":true"},
        {"GET", "/api/hosts/b.test/pause", "", ok, 405, "takes POST"},
        {"POST", "/api/hosts/b.test/resume", "", ok, 200, "\"was_paused\":true"},
        {"POST", "/api/hosts/b.test/resume", "", ok, 200, "\"was_paused\":false"},
        {"POST", "/api/hosts/B.TEST/pause", "", ok, 200, "\"paused\":true"},
        {"GET", "/api/urls?state=waiting&host=a.test", "", ok, 200, "\"total\":0"},
        {"GET", "/api/urls?state=failed&limit=5", "", ok, 200, "\"limit\":5"},
        {"GET", "/api/urls?state=done", "", ok, 400, "\\\"waiting\\\" or \\\"failed\\\""},
        {"GET", "/api/urls?limit=5000", "", ok, 400, "up to 1000"},
        {"GET", "/api/urls?colour=red", "", ok, 400, "unknown parameter"},
        {"POST", "/api/seeds", R"({"urls": ["http://a.test/x"]})", ok, 200, "\"reason\":\"not_running\""},
        {"POST", "/api/seeds", R"({"urls": "http://a.test/x"})", ok, 400, "expected {\\\"urls\\\""},
        {"POST", "/api/seeds", R"({"urls": []})", ok, 400, "1 to 10000"},
        {"POST", "/api/seeds", R"({"urls": [1]})", ok, 400, "every URL is a string"},
        {"GET", "/api/seeds", "", ok, 405, "takes POST"},
        {"GET", "/api/nothing", "", ok, 404, "no such endpoint"},
        {"GET", "/api", "", ok, 404, "no such endpoint"},
    };
    for (const auto& r : rows) {
        const auto answer = call(api, r.method, r.target, r.body, r.authorization);
        EXPECT_EQ(answer.status, r.status)
            << r.method << " " << r.target << " " << r.body << ": " << answer.body;
        EXPECT_THAT(answer.body, HasSubstr(std::string(r.in_body)))
            << r.method << " " << r.target << " " << r.body;
        EXPECT_EQ(answer.content_type, "application/json");
        if (r.status == 401) {
            EXPECT_EQ(answer.www_authenticate, "Bearer realm=\"asiocrawl\"");
        }
        if (r.status == 405) {
            EXPECT_FALSE(answer.allow.empty());
        }
    }
    // What the calls left: a.test limited, b.test paused (in capitals too: hosts are keyed in lower case).
    const auto hosts = body_of(call(api, "GET", "/api/hosts", {}, ok)).at("hosts").as_array();
    ASSERT_EQ(hosts.size(), 2u);
    EXPECT_EQ(hosts[0].at("host").as_string(), "a.test");
    EXPECT_EQ(hosts[0].at("delay_ms").as_int64(), 150);
    EXPECT_EQ(hosts[0].at("max_per_host").as_int64(), 1);
    EXPECT_EQ(hosts[0].at("paused").as_bool(), false);
    EXPECT_EQ(hosts[1].at("host").as_string(), "b.test");
    EXPECT_EQ(hosts[1].at("paused").as_bool(), true);
    const auto status = body_of(call(api, "GET", "/api/status", {}, ok));
    EXPECT_EQ(status.at("paused_hosts").as_array().size(), 1u);
    // Every change that went through was logged, with its caller; refusals of the token too.
    EXPECT_THAT(logged, ::testing::Contains(HasSubstr("POST /api/hosts/b.test/pause from 127.0.0.1")));
    EXPECT_THAT(logged,
                ::testing::Contains(HasSubstr("PUT /api/hosts/a.test from 127.0.0.1 {\"delay\": \"2s\"")));
    EXPECT_THAT(logged, ::testing::Contains(HasSubstr("refused: wrong token")));
    EXPECT_THAT(logged, ::testing::Not(::testing::Contains(HasSubstr("GET /api/hosts from"))));
}

TEST(control_api_parts, tokens_compare_whole_and_loopback_needs_none) {
    EXPECT_TRUE(outputs::constant_time_equal("abc", "abc"));
    EXPECT_TRUE(outputs::constant_time_equal("", ""));
    EXPECT_FALSE(outputs::constant_time_equal("abc", "abd"));
    EXPECT_FALSE(outputs::constant_time_equal("abc", "ab"));
    EXPECT_FALSE(outputs::constant_time_equal("", "a"));
    EXPECT_FALSE(outputs::needs_token("127.0.0.1:9100"));
    EXPECT_FALSE(outputs::needs_token("127.3.4.5:9100"));
    EXPECT_FALSE(outputs::needs_token("localhost:9100"));
    EXPECT_FALSE(outputs::needs_token("[::1]:9100"));
    EXPECT_TRUE(outputs::needs_token("0.0.0.0:9100"));
    EXPECT_TRUE(outputs::needs_token("[::]:9100"));
    EXPECT_TRUE(outputs::needs_token("10.1.2.3:9100"));
    EXPECT_TRUE(outputs::needs_token("metrics.internal:9100"));
}

// ---- the dashboard's history, errors and latency (crawl_history), and its files ----

namespace {

record a_record(std::string url, int status, boost::system::error_code error,
                std::chrono::milliseconds started, std::chrono::milliseconds elapsed, int tries = 1) {
    record r;
    r.url = std::move(url);
    r.status = status;
    r.error = error;
    r.started = started;
    r.elapsed = elapsed;
    r.tries = tries;
    return r;
}

} // namespace

TEST(control_history, samples_are_a_second_apart_and_the_oldest_go_past_the_bound) {
    outputs::crawl_history h;
    crawl_progress p;
    struct row {
        double t;
        std::size_t records;
        bool taken;
    };
    const row rows[] = {{0.0, 0, true},  {0.4, 1, false}, {0.99, 2, false}, {1.0, 3, true},
                        {1.5, 4, false}, {7.25, 9, true}, {8.0, 9, false},  {8.25, 10, true}};
    for (const auto& r : rows) {
        p.records = r.records;
        EXPECT_EQ(h.sample(r.t, p), r.taken) << r.t;
    }
    ASSERT_EQ(h.samples().size(), 4u);
    EXPECT_EQ(h.samples()[1].records, 3u);
    EXPECT_EQ(h.samples()[2].t, 7.25);
    for (std::size_t i = 0; i < outputs::crawl_history::max_samples + 10; ++i) {
        p.records = 100 + i;
        h.sample(10.0 + static_cast<double>(i), p);
    }
    EXPECT_EQ(h.samples().size(), outputs::crawl_history::max_samples);
    EXPECT_EQ(h.samples().front().records, 110u); // the first 10 and the 4 before went
    EXPECT_EQ(h.samples().back().records, 100u + outputs::crawl_history::max_samples + 9);
}

TEST(control_history, records_count_by_class_failures_by_kind_and_the_latest_errors_are_kept) {
    using ms = std::chrono::milliseconds;
    outputs::crawl_history h;
    const auto refused = make_error_code(boost::asio::error::connection_refused);
    h.observe(a_record("http://a.test/", 200, {}, ms{0}, ms{10}));
    h.observe(a_record("http://a.test/moved", 301, {}, ms{5}, ms{30}));
    h.observe(a_record("http://a.test/gone", 404, {}, ms{6}, ms{20}));
    h.observe(a_record("http://a.test/broken", 503, make_error_code(error::retry_limit), ms{7}, ms{40}, 3));
    h.observe(a_record("http://B.test:8080/", 0, refused, ms{1000}, ms{1500}));
    h.observe(a_record("http://a.test/private", 0, make_error_code(error::robots_denied), ms{9}, ms{0}, 0));
    const auto& classes = h.status_classes();
    EXPECT_EQ(classes[outputs::crawl_history::class_2xx], 1u);
    EXPECT_EQ(classes[outputs::crawl_history::class_3xx], 1u);
    EXPECT_EQ(classes[outputs::crawl_history::class_4xx], 1u);
    EXPECT_EQ(classes[outputs::crawl_history::class_5xx], 1u);
    EXPECT_EQ(classes[outputs::crawl_history::class_none], 2u);
    // A robots denial is no failure (as crawl_progress::failures counts).
    EXPECT_EQ(h.errors_seen(), 2u);
    ASSERT_EQ(h.errors().size(), 2u);
    EXPECT_EQ(h.errors()[0].url, "http://a.test/broken");
    EXPECT_EQ(h.errors()[0].status, 503);
    EXPECT_EQ(h.errors()[1].kind, "connection_refused");
    EXPECT_DOUBLE_EQ(h.errors()[1].at, 2.5);
    EXPECT_EQ(h.failures_by_kind().size(), 2u);
    EXPECT_EQ(h.failures_by_kind().at("retry_limit"), 1u);
    EXPECT_EQ(h.failures_by_kind().at("connection_refused"), 1u);
    // The slowest hosts by mean latency; b.test's port is not part of its name, its capitals are lowered.
    const auto slowest = h.slowest(10);
    ASSERT_EQ(slowest.size(), 2u);
    EXPECT_EQ(slowest[0].host, "b.test");
    EXPECT_EQ(slowest[0].max_us, 1500000u);
    EXPECT_EQ(slowest[1].host, "a.test");
    EXPECT_EQ(slowest[1].requests, 4u); // not the robots denial: no request was made
    EXPECT_EQ(slowest[1].total_us, 100000u);
    EXPECT_EQ(h.slowest(1).size(), 1u);
    // The errors' ring keeps the latest max_errors; every failure is counted.
    for (std::size_t i = 0; i < outputs::crawl_history::max_errors + 5; ++i)
        h.observe(a_record("http://c.test/" + std::to_string(i), 0, refused, ms{2000}, ms{1}));
    EXPECT_EQ(h.errors().size(), outputs::crawl_history::max_errors);
    EXPECT_EQ(h.errors().front().url, "http://c.test/5");
    EXPECT_EQ(h.errors_seen(), outputs::crawl_history::max_errors + 7);
    // A URL past max_text_bytes is cut.
    h.observe(a_record("http://c.test/" + std::string(5000, 'x'), 0, refused, ms{0}, ms{1}));
    EXPECT_EQ(h.errors().back().url.size(), outputs::crawl_history::max_text_bytes);
}

TEST(control_history, hosts_past_the_bound_are_counted_not_kept) {
    outputs::crawl_history h;
    for (std::size_t i = 0; i < outputs::crawl_history::max_latency_hosts + 3; ++i)
        h.observe(
            a_record("http://h" + std::to_string(i) + ".test/", 200, {}, {}, std::chrono::milliseconds{1}));
    EXPECT_EQ(h.untracked_records(), 3u);
    EXPECT_EQ(h.slowest(100000).size(), outputs::crawl_history::max_latency_hosts);
}

TEST_F(control_table, the_history_errors_and_dashboard_files_as_the_page_reads_them) {
    const std::string_view ok = "Bearer s3cret";
    api.observe(a_record("http://a.test/", 200, {}, {}, std::chrono::milliseconds{20}));
    api.observe(
        a_record("http://a.test/x", 0, make_error_code(boost::asio::error::connection_reset), {}, 1ms));
    struct row {
        std::string_view method, target, authorization;
        unsigned status;
        std::string_view in_body;
    };
    const row rows[] = {
        {"GET", "/api/history", "", 401, "bearer token"},
        {"GET", "/api/history", ok, 200,
         R"("fields":["t","records","bytes","failures","2xx","3xx","4xx","5xx","none"])"},
        // One sample, taken at the first record: this crawl does not run, so its time stays 0.
        {"GET", "/api/history?since=-1", ok, 200, R"("samples":[[0E0,0,0,0,1,0,0,0,0]])"},
        {"GET", "/api/history?since=0", ok, 200, R"("samples":[])"},
        {"GET", "/api/history?since=soon", ok, 400, "since: expected a number"},
        {"GET", "/api/history?until=1", ok, 400, "unknown parameter"},
        {"POST", "/api/history", ok, 405, "takes GET"},
        {"GET", "/api/errors", ok, 200,
         R"("total":1,"capacity":100,"errors":[{"url":"http://a.test/x","kind":"connection_reset")"},
        {"GET", "/api/errors?limit=0", ok, 200, R"("errors":[])"},
        {"GET", "/api/errors?limit=101", ok, 400, "up to 100"},
        {"GET", "/api/status", ok, 200, R"("status_classes":{"2xx":1,"3xx":0,"4xx":0,"5xx":0,"none":1})"},
        {"GET", "/api/status", ok, 200, R"("failures_by_kind":{"connection_reset":1})"},
        {"GET", "/api/status", ok, 200,
         R"("slowest_hosts":[{"host":"a.test","requests":2,"mean_ms":1.05E1,"max_ms":2E1}])"},
    };
    for (const auto& r : rows) {
        const auto answer = call(api, r.method, r.target, {}, r.authorization);
        EXPECT_EQ(answer.status, r.status) << r.method << " " << r.target << ": " << answer.body;
        EXPECT_THAT(answer.body, HasSubstr(std::string(r.in_body))) << r.method << " " << r.target;
    }

    // The page and its files need no token (the page asks for it); each has its type and an ETag.
    const auto page = call(api, "GET", "/");
    EXPECT_EQ(page.status, 200u);
    EXPECT_EQ(page.content_type, "text/html; charset=utf-8");
    EXPECT_THAT(page.body, HasSubstr("<script src=\"/dashboard/dashboard.js\" defer></script>"));
    EXPECT_THAT(page.body, ::testing::Not(HasSubstr("<script>"))); // no inline script: the CSP forbids it
    EXPECT_EQ(page.cache_control, "no-cache");
    const auto field = [](const listener_response& r, std::string_view name) {
        for (const auto& [n, v] : r.fields)
            if (n == name)
                return v;
        return std::string();
    };
    EXPECT_THAT(field(page, "Content-Security-Policy"), HasSubstr("script-src 'self'"));
    EXPECT_THAT(field(page, "Content-Security-Policy"), ::testing::Not(HasSubstr("unsafe-inline")));
    const std::string etag = field(page, "ETag");
    EXPECT_THAT(etag, ::testing::MatchesRegex("\"[0-9a-f]{20}\""));
    listener_request again;
    again.method = "GET";
    again.target = "/";
    again.if_none_match = etag;
    const auto revalidated = api.handle(again);
    EXPECT_EQ(revalidated.status, 304u);
    EXPECT_TRUE(revalidated.body.empty());
    const std::string listed = "\"0000\", W/" + etag;
    again.if_none_match = listed;
    EXPECT_EQ(api.handle(again).status, 304u);
    again.if_none_match = "\"0000\"";
    EXPECT_EQ(api.handle(again).status, 200u);
    const auto script = call(api, "GET", "/dashboard/dashboard.js");
    EXPECT_EQ(script.status, 200u);
    EXPECT_EQ(script.content_type, "text/javascript; charset=utf-8");
    EXPECT_THAT(script.body, HasSubstr("sessionStorage"));
    EXPECT_NE(field(script, "ETag"), etag);
    EXPECT_EQ(call(api, "GET", "/dashboard/dashboard.css").content_type, "text/css; charset=utf-8");
    EXPECT_EQ(call(api, "GET", "/dashboard/nothing.js").status, 404u);
    EXPECT_EQ(call(api, "GET", "/dashboard/../secret").status, 404u);
    EXPECT_EQ(call(api, "GET", "/elsewhere").status, 404u);
    const auto posted = call(api, "POST", "/");
    EXPECT_EQ(posted.status, 405u);
    EXPECT_EQ(posted.allow, "GET, HEAD");
    // Small: a few tens of KB all together.
    std::size_t total = 0;
    for (const auto name : {"/", "/dashboard/dashboard.js", "/dashboard/dashboard.css"})
        total += call(api, "GET", name).body.size();
    EXPECT_LT(total, 64u * 1024);
}

// ---- crawls steered through the API ----

TEST(control_crawl, a_paused_host_gets_no_request_while_another_goes_on_and_a_resume_continues_it) {
    asio::io_context ctx;
    std::optional<crawler> crawl;
    std::optional<control_api> api;
    asio::steady_timer b_root_done{ctx, steady::time_point::max()};
    bool b_root_recorded = false;
    std::size_t a_requests = 0;
    std::size_t b_requests_when_a_was_done = 99;
    std::size_t b_waiting_when_a_was_done = 0;
    std::string b_page_when_a_was_done;
    demo::http_server b{ctx.get_executor(),
                        [&](const http_request& req) -> asio::awaitable<std::optional<http_response>> {
                            if (req.target() == "/") {
                                // Paused while its root is in flight: its links come while it is paused.
                                EXPECT_EQ(call(*api, "POST", "/api/hosts/b.test/pause").status, 200u);
                                co_return make_response(200, links_page({"/b1", "/b2", "/b3"}));
                            }
                            co_return make_response(200, "<p>b</p>");
                        }};
    demo::http_server a{
        ctx.get_executor(), [&](const http_request& req) -> asio::awaitable<std::optional<http_response>> {
            if (req.target() == "/" && !b_root_recorded) // a starts once b's links wait
                co_await b_root_done.async_wait(asio::as_tuple(asio::use_awaitable));
            if (++a_requests == 6) {
                b_requests_when_a_was_done = b.requests();
                if (const auto h = find_host(crawl->hosts(), "b.test"))
                    b_waiting_when_a_was_done = h->waiting;
                b_page_when_a_was_done =
                    call(*api, "GET", "/api/urls?state=waiting&host=b.test&offset=1&limit=1").body;
                EXPECT_EQ(call(*api, "POST", "/api/hosts/b.test/resume").status, 200u);
            }
            if (req.target() == "/")
                co_return make_response(200, links_page({"/a1", "/a2", "/a3", "/a4", "/a5"}));
            co_return make_response(200, "<p>a</p>");
        }};
    crawl.emplace(ctx.get_executor(), two_host_config(a.port(), b.port()));
    api.emplace(*crawl, "", logger{});
    crawl->set_record_sink([&](const record& r) {
        if (r.url == "http://b.test:" + std::to_string(b.port()) + "/") {
            b_root_recorded = true;
            b_root_done.cancel();
        }
    });
    const auto result = run_crawl(ctx, *crawl, [&] {
        a.stop();
        b.stop();
    });
    ASSERT_TRUE(result);
    EXPECT_EQ(a_requests, 6u);
    EXPECT_EQ(b_requests_when_a_was_done, 1u); // its root only: its three links waited
    EXPECT_EQ(b_waiting_when_a_was_done, 3u);
    // The API pages the waiting URLs: the second of three.
    const auto page = json::parse(b_page_when_a_was_done).as_object();
    EXPECT_EQ(page.at("total").as_int64(), 3);
    ASSERT_EQ(page.at("urls").as_array().size(), 1u);
    EXPECT_EQ(page.at("urls").as_array()[0].at("url").as_string(),
              "http://b.test:" + std::to_string(b.port()) + "/b2");
    EXPECT_EQ(b.requests(), 4u); // the resume let them go
    EXPECT_EQ(result->todo, 0u);
    const auto h = find_host(crawl->hosts(), "b.test");
    ASSERT_TRUE(h.has_value());
    EXPECT_FALSE(h->paused);
    EXPECT_EQ(h->done, 4u);
}

TEST(control_crawl, a_seed_added_mid_crawl_is_fetched_through_the_scope_rules) {
    asio::io_context ctx;
    std::optional<crawler> crawl;
    std::optional<control_api> api;
    std::string seeds_answer;
    loopback_site site{ctx.get_executor(), [&](const http_request& req) -> asio::awaitable<void> {
                           if (req.target() == "/") {
                               const std::string body = R"({"urls": [")" + site.url("/unlinked") +
                                                        R"(", "http://elsewhere.test/x", ")" + site.url("/") +
                                                        R"(", "not a url"]})";
                               seeds_answer = call(*api, "POST", "/api/seeds", body).body;
                           }
                           co_return;
                       }};
    site.add("/", links_page({"/linked"}));
    site.add("/linked", "<p>linked</p>");
    site.add("/unlinked", "<p>only the API names me</p>");
    auto config = loopback_crawl_config();
    config.roots = {site.url("/")};
    crawl.emplace(ctx.get_executor(), config);
    api.emplace(*crawl, "", logger{});
    const auto result = run_crawl(ctx, *crawl, [&] { site.stop(); });
    ASSERT_TRUE(result);
    EXPECT_THAT(site.requested(), ::testing::UnorderedElementsAre("/", "/linked", "/unlinked"));
    const auto answer = json::parse(seeds_answer).as_object();
    EXPECT_EQ(answer.at("admitted").as_int64(), 1);
    const auto& verdicts = answer.at("seeds").as_array();
    ASSERT_EQ(verdicts.size(), 4u);
    EXPECT_TRUE(verdicts[0].at("admitted").as_bool());
    EXPECT_EQ(verdicts[1].at("reason").as_string(), "off_host");
    EXPECT_EQ(verdicts[2].at("reason").as_string(), "already_seen");
    EXPECT_EQ(verdicts[3].at("reason").as_string(), "invalid_url");
}

TEST(control_crawl, a_hosts_delay_set_through_the_api_is_held) {
    asio::io_context ctx;
    std::vector<steady::time_point> arrivals;
    loopback_site site{ctx.get_executor(), [&](const http_request&) -> asio::awaitable<void> {
                           arrivals.push_back(steady::now());
                           co_return;
                       }};
    site.add("/", links_page({"/a", "/b", "/c"}));
    for (const auto* p : {"/a", "/b", "/c"})
        site.add(p, "<p>x</p>");
    auto config = loopback_crawl_config();
    config.max_tasks = 8;
    config.roots = {site.url("/")};
    crawler crawl{ctx.get_executor(), config};
    control_api api{crawl, "", logger{}};
    const auto answer = call(api, "PUT", "/api/hosts/127.0.0.1", R"({"delay": "100ms", "max_per_host": 4})");
    ASSERT_EQ(answer.status, 200u) << answer.body;
    const auto result = run_crawl(ctx, crawl, [&] { site.stop(); });
    ASSERT_TRUE(result);
    ASSERT_EQ(arrivals.size(), 4u);
    // As polite_crawl_test's crawl_delay case: each start at least the delay after the one before; an arrival
    // may lag its start, so a quarter of the delay is left for that. Without the delay the gaps are about a
    // millisecond.
    for (std::size_t i = 1; i < arrivals.size(); ++i)
        EXPECT_GE(arrivals[i] - arrivals[i - 1], 75ms) << i;
    const auto h = find_host(crawl.hosts(), "127.0.0.1");
    ASSERT_TRUE(h.has_value());
    EXPECT_EQ(h->delay, 100ms);
    EXPECT_EQ(h->max_per_host, 4u);
}

TEST(control_crawl, a_pause_outlives_the_process_through_the_state_directory) {
    temp_dir dir{"control-pause"};
    const std::string state = (dir.path / "state").string();
    std::size_t b_requests_first = 99;
    unsigned short a_port = 0;
    unsigned short b_port = 0;
    {
        // The first run: b.test paused from the start, stopped as a's root is fetched (its links wait on
        // disk).
        asio::io_context ctx;
        std::optional<crawler> crawl;
        demo::http_server b{ctx.get_executor(),
                            [&](const http_request&) -> asio::awaitable<std::optional<http_response>> {
                                co_return make_response(200, "<p>b</p>");
                            }};
        demo::http_server a{ctx.get_executor(),
                            [&](const http_request& req) -> asio::awaitable<std::optional<http_response>> {
                                if (req.target() == "/") {
                                    crawl->stop();
                                    co_return make_response(200, links_page({"/a1", "/a2"}));
                                }
                                co_return make_response(200, "<p>a</p>");
                            }};
        a_port = a.port();
        b_port = b.port();
        auto config = two_host_config(a_port, b_port);
        config.state.dir = state;
        crawl.emplace(ctx.get_executor(), config);
        crawl->pause_host("b.test");
        const auto result = run_crawl(ctx, *crawl, [&] {
            a.stop();
            b.stop();
        });
        ASSERT_TRUE(result);
        b_requests_first = b.requests();
    }
    EXPECT_EQ(b_requests_first, 0u);
    // The second run resumes the crawl on the same ports, and nothing here pauses b.test: the saved pause
    // holds it until the resume that comes once a's two pages are done.
    asio::io_context ctx;
    std::optional<crawler> crawl;
    std::size_t a_requests = 0;
    std::size_t b_requests_when_a_was_done = 99;
    bool b_paused_when_a_was_done = false;
    demo::http_server b{ctx.get_executor(),
                        [&](const http_request&) -> asio::awaitable<std::optional<http_response>> {
                            co_return make_response(200, "<p>b</p>");
                        },
                        b_port};
    demo::http_server a{ctx.get_executor(),
                        [&](const http_request&) -> asio::awaitable<std::optional<http_response>> {
                            if (++a_requests == 2) {
                                b_requests_when_a_was_done = b.requests();
                                const auto h = find_host(crawl->hosts(), "b.test");
                                b_paused_when_a_was_done = h && h->paused;
                                crawl->resume_host("b.test");
                            }
                            co_return make_response(200, "<p>a</p>");
                        },
                        a_port};
    auto config = two_host_config(a_port, b_port);
    config.state.dir = state;
    crawl.emplace(ctx.get_executor(), config);
    const auto result = run_crawl(ctx, *crawl, [&] {
        a.stop();
        b.stop();
    });
    ASSERT_TRUE(result);
    EXPECT_EQ(a_requests, 2u);
    EXPECT_TRUE(b_paused_when_a_was_done);
    EXPECT_EQ(b_requests_when_a_was_done, 0u);
    EXPECT_EQ(b.requests(), 1u);
    EXPECT_EQ(result->todo, 0u);
}

// ---- the listener ----

namespace {

/// One request over a real socket to `port`, read to the end (the request asks to close).
asio::awaitable<std::string> exchange(unsigned short port, std::string request) {
    asio::ip::tcp::socket socket{co_await asio::this_coro::executor};
    co_await socket.async_connect({asio::ip::make_address("127.0.0.1"), port}, asio::use_awaitable);
    co_await asio::async_write(socket, asio::buffer(request), asio::use_awaitable);
    std::string answer;
    // To the end of the stream: the error is the EOF that ends it.
    co_await asio::async_read(socket, asio::dynamic_buffer(answer, 1 << 20),
                              asio::as_tuple(asio::use_awaitable));
    co_return answer;
}

} // namespace

TEST(control_listener, a_wrong_token_is_401_the_right_one_200_and_a_body_past_the_limit_413) {
    asio::io_context ctx;
    auto config = loopback_crawl_config();
    config.roots = {"http://a.test/"};
    crawler crawl{ctx.get_executor(), config};
    outputs::metrics_server server{ctx.get_executor(), "127.0.0.1:0",
                                   [] { return std::string("metrics\n"); }};
    auto api = std::make_shared<control_api>(crawl, "s3cret", logger{});
    server.set_handler([api](const listener_request& r) { return api->handle(r); }, 1024);
    server.start();
    const auto port = server.local_endpoint().port();
    std::vector<std::string> answers;
    asio::co_spawn(
        ctx,
        [&]() -> asio::awaitable<void> {
            const std::string head = "Host: x\r\nConnection: close\r\n";
            answers.push_back(co_await exchange(port, "GET /api/status HTTP/1.1\r\n" + head +
                                                          "Authorization: Bearer wrong\r\n\r\n"));
            answers.push_back(co_await exchange(port, "GET /api/status HTTP/1.1\r\n" + head + "\r\n"));
            answers.push_back(
                co_await exchange(port, "POST /api/hosts/a.test/pause HTTP/1.1\r\n" + head +
                                            "Authorization: Bearer s3cret\r\nContent-Length: 0\r\n\r\n"));
            answers.push_back(
                co_await exchange(port, "PUT /api/hosts/a.test HTTP/1.1\r\n" + head +
                                            "Authorization: Bearer s3cret\r\nContent-Length: 2000\r\n\r\n" +
                                            std::string(2000, ' ')));
            answers.push_back(co_await exchange(port, "GET /metrics HTTP/1.1\r\n" + head + "\r\n"));
            answers.push_back(co_await exchange(port, "GET / HTTP/1.1\r\n" + head + "\r\n"));
            server.stop();
        },
        asio::detached);
    run_bounded(ctx, 30s);
    ASSERT_EQ(answers.size(), 6u);
    EXPECT_THAT(answers[0], ::testing::StartsWith("HTTP/1.1 401"));
    EXPECT_THAT(answers[0], HasSubstr("WWW-Authenticate: Bearer realm=\"asiocrawl\""));
    EXPECT_THAT(answers[1], ::testing::StartsWith("HTTP/1.1 401"));
    EXPECT_THAT(answers[2], ::testing::StartsWith("HTTP/1.1 200"));
    EXPECT_THAT(answers[2], HasSubstr("{\"host\":\"a.test\",\"paused\":true}"));
    EXPECT_THAT(answers[3], ::testing::StartsWith("HTTP/1.1 413"));
    EXPECT_THAT(answers[4], ::testing::StartsWith("HTTP/1.1 200"));
    EXPECT_THAT(answers[4], HasSubstr("metrics"));
    // The dashboard's page, without a token, with its policy and validator on the wire.
    EXPECT_THAT(answers[5], ::testing::StartsWith("HTTP/1.1 200"));
    EXPECT_THAT(answers[5], HasSubstr("Content-Type: text/html; charset=utf-8"));
    EXPECT_THAT(answers[5], HasSubstr("Content-Security-Policy: default-src 'none'"));
    EXPECT_THAT(answers[5], HasSubstr("Cache-Control: no-cache"));
    EXPECT_THAT(answers[5], HasSubstr("ETag: \""));
    EXPECT_THAT(answers[5], HasSubstr("<title>asiocrawl dashboard</title>"));
    const auto h = find_host(crawl.hosts(), "a.test");
    ASSERT_TRUE(h.has_value());
    EXPECT_TRUE(h->paused);
}

TEST(control_crawl, the_dashboards_history_errors_and_latency_come_from_the_crawls_records) {
    asio::io_context ctx;
    std::optional<crawler> crawl;
    std::optional<control_api> api;
    loopback_site site{ctx.get_executor()};
    site.add("/", links_page({"/a", "/gone"}));
    site.add("/a", "<p>a</p>");
    // A port nothing listens on (bound, then closed): its root fails with connection_refused.
    unsigned short closed = 0;
    {
        asio::ip::tcp::acceptor probe{ctx, {asio::ip::make_address("127.0.0.1"), 0}};
        closed = probe.local_endpoint().port();
    }
    auto config = two_host_config(site.port(), closed);
    config.roots = {"http://a.test:" + std::to_string(site.port()) + "/",
                    "http://b.test:" + std::to_string(closed) + "/"};
    config.max_tries = 1;
    crawl.emplace(ctx.get_executor(), config);
    api.emplace(*crawl, "", logger{});
    crawl->set_record_sink([&](const record& r) { api->observe(r); });
    const auto result = run_crawl(ctx, *crawl, [&] { site.stop(); });
    ASSERT_TRUE(result);
    ASSERT_EQ(result->done, 4u);

    const auto status = body_of(call(*api, "GET", "/api/status"));
    const auto& classes = status.at("status_classes").as_object();
    EXPECT_EQ(classes.at("2xx").as_int64(), 2);
    EXPECT_EQ(classes.at("4xx").as_int64(), 1); // an answer, not a failure
    EXPECT_EQ(classes.at("none").as_int64(), 1);
    EXPECT_EQ(status.at("failures_by_kind").as_object().at("connection_refused").as_int64(), 1);
    const auto& slowest = status.at("slowest_hosts").as_array();
    ASSERT_EQ(slowest.size(), 2u);
    EXPECT_EQ(slowest[0].at("requests").as_int64() + slowest[1].at("requests").as_int64(), 4);

    const auto errors = body_of(call(*api, "GET", "/api/errors"));
    EXPECT_EQ(errors.at("total").as_int64(), 1);
    ASSERT_EQ(errors.at("errors").as_array().size(), 1u);
    EXPECT_EQ(errors.at("errors").as_array()[0].at("url").as_string(), config.roots[1]);

    // The first record took the first sample, with the crawl's counters then: one record (a sample taken
    // only by the API call here would count all four).
    const auto history = body_of(call(*api, "GET", "/api/history"));
    const auto& samples = history.at("samples").as_array();
    ASSERT_FALSE(samples.empty());
    EXPECT_EQ(samples.front().as_array()[1].as_int64(), 1);
    EXPECT_LE(samples.back().as_array()[1].as_int64(), 4);
}

// ---- per-host rules (crawler_config::hosts) ----

TEST(control_rules, a_hosts_rule_sets_its_delay_page_budget_robots_and_headers) {
    asio::io_context ctx;
    std::vector<std::pair<std::string, steady::time_point>> arrivals;
    std::vector<std::string> teams;
    loopback_site site{ctx.get_executor(), [&](const http_request& req) -> asio::awaitable<void> {
                           arrivals.emplace_back(std::string(req.target()), steady::now());
                           teams.emplace_back(req["X-Team"]);
                           co_return;
                       }};
    site.add("/", links_page({"/a", "/b", "/c", "/d"}));
    for (const auto* p : {"/a", "/b", "/c", "/d"})
        site.add(p, "<p>x</p>");
    auto config = loopback_crawl_config();
    config.max_tasks = 8;
    config.robots.obey = true; // the rule turns it off for its host: no /robots.txt request
    config.roots = {site.url("/")};
    config.hosts.resize(2);
    config.hosts[0].match = site.url("/nowhere/"); // a URL prefix that matches nothing: the next rule applies
    config.hosts[0].max_pages = 1;
    config.hosts[1].match = "127.0.0.1";
    config.hosts[1].delay = 80ms;
    config.hosts[1].max_per_host = 3;
    config.hosts[1].max_pages = 3;
    config.hosts[1].obey_robots = false;
    config.hosts[1].headers = {"X-Team: crawl"};
    crawler crawl{ctx.get_executor(), config};
    const auto result = run_crawl(ctx, crawl, [&] { site.stop(); });
    ASSERT_TRUE(result);
    // The root and the first two links: the rule's budget of three.
    ASSERT_EQ(arrivals.size(), 3u);
    EXPECT_EQ(arrivals[0].first, "/");
    EXPECT_EQ(result->stats.at("skipped_rule_max_pages"), 2u);
    EXPECT_THAT(teams, ::testing::Each(std::string("crawl")));
    // The rule's delay, with a quarter left for an arrival's lag (as in the API delay test).
    for (std::size_t i = 1; i < arrivals.size(); ++i)
        EXPECT_GE(arrivals[i].second - arrivals[i - 1].second, 60ms) << arrivals[i].first;
    const auto h = find_host(crawl.hosts(), "127.0.0.1");
    ASSERT_TRUE(h.has_value());
    EXPECT_EQ(h->delay, 80ms);
    EXPECT_EQ(h->max_per_host, 3u);
}

TEST(control_rules, rules_are_validated_with_their_index) {
    crawler_config config = loopback_crawl_config();
    config.roots = {"http://a.test/"};
    config.hosts.resize(4);
    config.hosts[0].match = "https://a.test/docs/";
    config.hosts[0].delay = 1s;
    config.hosts[1].match = "not a host";
    config.hosts[1].max_pages = 1;
    config.hosts[2].match = "*.a.test";
    config.hosts[2].max_per_host = 0;
    config.hosts[2].headers = {"User-Agent: other", "no colon"};
    config.hosts[3].match = "b.test";
    std::vector<std::string> messages;
    for (const auto& p : validate(config))
        messages.push_back(p.message);
    EXPECT_THAT(messages, ::testing::ElementsAre(
                              HasSubstr("hosts[0]: delay, max_per_host and obey_robots need a host pattern"),
                              HasSubstr("hosts[1].match: \"not a host\" is not a host name"),
                              HasSubstr("hosts[2].max_per_host must be at least 1"),
                              HasSubstr("hosts[2].headers[0]: User-Agent is set for the whole crawl"),
                              HasSubstr("hosts[2].headers[1]: "), HasSubstr("hosts[3] sets nothing")));
}
