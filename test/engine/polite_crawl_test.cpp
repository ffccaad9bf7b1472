// The crawler on real loopback servers with its politeness layers on: robots.txt, per-host limits, spacing,
// retries with backoff, sitemaps; plus cancellation and the parse pool.
#include <asiocrawl/crawler.hpp>

#include "support/loopback_crawl.hpp"
#include "support/records.hpp"

#include <asiocrawl/error.hpp>
#include <asiocrawl_demo/site.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http/field.hpp>

#include <gmock/gmock.h>
#include <zlib.h>

#include <algorithm>
#include <optional>
#include <set>

namespace asio = boost::asio;
namespace http = boost::beast::http;
using namespace asiocrawl;
using namespace asiocrawl::test;
using namespace std::chrono_literals;
using ::testing::Contains;
using ::testing::Not;
using ::testing::UnorderedElementsAre;
using steady = std::chrono::steady_clock;

namespace {

std::string gzip(std::string_view plain) {
    z_stream z{};
    deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
    std::string out(deflateBound(&z, plain.size()) + 32, '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(plain.data()));
    z.avail_in = static_cast<uInt>(plain.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    deflate(&z, Z_FINISH);
    out.resize(z.total_out);
    deflateEnd(&z);
    return out;
}

/// A site whose handler records when each request arrived and how many were in flight at once.
struct polite_fixture : ::testing::Test {
    asio::io_context ctx;
    crawler_config config;
    std::vector<std::pair<std::string, steady::time_point>> arrivals;
    std::chrono::milliseconds answer_delay{0};
    loopback_site server{ctx.get_executor(), [this](const http_request& req) -> asio::awaitable<void> {
                             arrivals.emplace_back(std::string(req.target()), steady::now());
                             if (answer_delay > 0ms)
                                 co_await sleep_for(answer_delay);
                         }};

    polite_fixture() {
        config.max_tasks = 8;
        config.retry.initial_backoff = 1ms;
        config.retry.max_backoff = 20ms;
    }

    void add(const std::string& target, http_response response) { server.add(target, std::move(response)); }
    void add_page(const std::string& target, std::vector<std::string> hrefs) {
        add(target, make_response(200, links_page(hrefs)));
    }
    std::string url(const std::string& target) const { return server.url(target); }

    report crawl(std::vector<std::string> roots = {}, std::vector<demo::http_server*> more = {}) {
        config.roots = roots.empty() ? std::vector<std::string>{url("/")} : std::move(roots);
        crawler c{ctx.get_executor(), config};
        auto result = run_crawl(ctx, c, [&] {
            server.stop();
            for (auto* s : more)
                s->stop();
        });
        EXPECT_TRUE(result.has_value());
        return result ? std::move(*result) : report{};
    }

    std::vector<std::string> requested() const { return server.requested(); }
};

} // namespace

// ---- robots.txt ----

TEST_F(polite_fixture, robots_txt_is_fetched_first_and_a_disallowed_subtree_is_never_requested) {
    add("/robots.txt", make_response(200,
                                     "User-agent: *\nDisallow: /private/\n\n"
                                     "User-agent: otherbot\nDisallow: /\n",
                                     "text/plain"));
    add_page("/", {"/public", "/private/a", "/private/b", "/privateer"});
    add_page("/public", {"/private/c"});
    add_page("/privateer", {});
    auto r = crawl();
    ASSERT_FALSE(requested().empty());
    EXPECT_EQ(requested().front(), "/robots.txt") << "before any other request to the origin";
    EXPECT_THAT(requested(), UnorderedElementsAre("/robots.txt", "/", "/public", "/privateer"));
    for (const auto* denied : {"/private/a", "/private/b", "/private/c"}) {
        const auto* rec = find(r, url(denied));
        ASSERT_NE(rec, nullptr) << denied;
        EXPECT_EQ(rec->error, error::robots_denied);
        EXPECT_EQ(rec->status, 0);
    }
    EXPECT_EQ(r.stats["robots_fetched"], 1u);
    const auto targets = requested();
    EXPECT_EQ(std::count(targets.begin(), targets.end(), "/robots.txt"), 1) << "cached for the crawl";
}

TEST_F(polite_fixture, our_own_group_is_chosen_by_product_token) {
    add("/robots.txt", make_response(200,
                                     "User-agent: *\nDisallow: /\n\n"
                                     "User-agent: asiocrawl\nDisallow: /no\n",
                                     "text/plain"));
    add_page("/", {"/yes", "/no"});
    add_page("/yes", {});
    auto r = crawl();
    EXPECT_THAT(requested(), UnorderedElementsAre("/robots.txt", "/", "/yes"));
    EXPECT_EQ(find(r, url("/no"))->error, error::robots_denied);
}

TEST_F(polite_fixture, a_missing_robots_txt_allows_everything) {
    add_page("/", {"/a"});
    add_page("/a", {});
    auto r = crawl();
    EXPECT_THAT(requested(), UnorderedElementsAre("/robots.txt", "/", "/a"));
    EXPECT_EQ(r.stats["robots_denied"], 0u);
}

TEST_F(polite_fixture, a_5xx_robots_txt_keeps_the_whole_origin_off_limits) {
    add("/robots.txt", make_response(503, "down"));
    config.max_tries = 1;
    add_page("/", {"/a"});
    auto r = crawl();
    EXPECT_THAT(requested(), UnorderedElementsAre("/robots.txt")) << "nothing else fetched from that host";
    const auto* root = find(r, url("/"));
    ASSERT_NE(root, nullptr);
    EXPECT_EQ(root->error, error::robots_unavailable);
}

TEST_F(polite_fixture, robots_redirects_are_followed) {
    add("/robots.txt", redirect_to(301, "/real-robots.txt"));
    add("/real-robots.txt", make_response(200, "User-agent: *\nDisallow: /secret\n", "text/plain"));
    add_page("/", {"/secret", "/open"});
    add_page("/open", {});
    auto r = crawl();
    EXPECT_THAT(requested(), UnorderedElementsAre("/robots.txt", "/real-robots.txt", "/", "/open"));
    EXPECT_EQ(find(r, url("/secret"))->error, error::robots_denied);
}

TEST_F(polite_fixture, ignore_robots_fetches_everything_without_asking) {
    add("/robots.txt", make_response(200, "User-agent: *\nDisallow: /\n", "text/plain"));
    add_page("/", {"/a"});
    add_page("/a", {});
    config.robots.obey = false;
    crawl();
    EXPECT_THAT(requested(), UnorderedElementsAre("/", "/a"));
}

TEST_F(polite_fixture, crawl_delay_spaces_request_starts) {
    add("/robots.txt", make_response(200, "User-agent: *\nCrawl-delay: 0.2\n", "text/plain"));
    add_page("/", {"/a", "/b", "/c"});
    for (const auto* p : {"/a", "/b", "/c"})
        add_page(p, {});
    auto r = crawl();
    ASSERT_EQ(arrivals.size(), 5u);
    // From the first page on, the crawler starts each request at least the delay after the previous one. The
    // server sees arrivals, and an arrival can lag its start (a new connection's accept and read on a loaded
    // machine), which shortens the gap after it: so the bound leaves a quarter of the delay for that lag.
    // Without the delay the gaps are about a millisecond; half the delay would fail too. robots.txt itself
    // precedes the delay's discovery.
    for (std::size_t i = 2; i < arrivals.size(); ++i)
        EXPECT_GE(arrivals[i].second - arrivals[i - 1].second, 150ms) << arrivals[i].first;
}

// ---- per-host politeness ----

TEST_F(polite_fixture, at_most_max_per_host_requests_in_flight_to_one_host) {
    config.robots.obey = false;
    config.politeness.max_per_host = 2;
    config.max_tasks = 10;
    std::string html = "<html>";
    for (int i = 0; i < 12; ++i)
        html += "<a href=/p" + std::to_string(i) + ">x</a>";
    add("/", make_response(200, html));
    answer_delay = 20ms;
    crawl();
    EXPECT_EQ(server.requests(), 13u);
    EXPECT_EQ(server.peak_in_flight(), 2u);
}

TEST_F(polite_fixture, a_busy_host_does_not_idle_workers_another_host_could_use) {
    // The slow host's pages hang until the fast host has served all of its pages: if a worker waited for the
    // slow host's slot, the fast pages could not all be fetched and the crawl would never finish.
    config.robots.obey = false;
    config.politeness.max_per_host = 1;
    config.max_tasks = 4;
    config.fetch.host_overrides = {{"slow.test", "127.0.0.1"}, {"fast.test", "127.0.0.1"}};
    std::size_t fast_done = 0;
    asio::steady_timer release{ctx, steady::time_point::max()};
    demo::http_server fast{ctx.get_executor(),
                           [&](const http_request&) -> asio::awaitable<std::optional<http_response>> {
                               if (++fast_done == 7) // the root and its six pages
                                   release.cancel();
                               co_return make_response(200, "<p>fast</p>");
                           }};
    const std::string fast_origin = "http://fast.test:" + std::to_string(fast.port());
    std::string html = "<html>";
    for (int i = 0; i < 6; ++i)
        html += "<a href=/slow" + std::to_string(i) + ">x</a><a href=\"" + fast_origin + "/f" +
                std::to_string(i) + "\">x</a>";
    demo::http_server slow{ctx.get_executor(),
                           [&](const http_request& req) -> asio::awaitable<std::optional<http_response>> {
                               if (req.target() == "/")
                                   co_return make_response(200, html);
                               if (fast_done < 7)
                                   co_await release.async_wait(asio::as_tuple(asio::use_awaitable));
                               co_return make_response(200, "<p>slow</p>");
                           }};
    const std::string slow_origin = "http://slow.test:" + std::to_string(slow.port());
    config.scope = host_scope::strict;
    // Two roots put both hosts in scope; the fast one's root page is fetched too.
    auto r = crawl({slow_origin + "/", fast_origin + "/"}, {&slow, &fast});
    EXPECT_EQ(fast_done, 7u);
    EXPECT_EQ(slow.requests(), 7u);
    EXPECT_EQ(slow.peak_in_flight(), 1u);
    EXPECT_EQ(r.todo, 0u);
}

// ---- retries with backoff ----

TEST_F(polite_fixture, a_503_with_retry_after_is_retried_after_the_wait) {
    config.robots.obey = false;
    config.retry.max_backoff = 5s;
    int calls = 0;
    demo::http_server flaky{ctx.get_executor(),
                            [&](const http_request&) -> asio::awaitable<std::optional<http_response>> {
                                arrivals.emplace_back("/", steady::now());
                                if (++calls == 1) {
                                    auto res = make_response(503, "busy");
                                    res.set(http::field::retry_after, "1");
                                    co_return res;
                                }
                                co_return make_response(200, links_page({}));
                            }};
    auto r = crawl({flaky.origin() + "/"}, {&flaky});
    ASSERT_EQ(r.records.size(), 1u);
    EXPECT_EQ(r.records[0].status, 200);
    EXPECT_FALSE(r.records[0].failed());
    EXPECT_EQ(r.records[0].tries, 2);
    ASSERT_EQ(arrivals.size(), 2u);
    EXPECT_GE(arrivals[1].second - arrivals[0].second, 990ms) << "Retry-After: 1 honoured";
    EXPECT_EQ(r.stats["retries"], 1u);
}

TEST_F(polite_fixture, a_429_through_every_attempt_ends_in_retry_limit) {
    config.robots.obey = false;
    config.max_tries = 3;
    demo::http_server limited{ctx.get_executor(),
                              [&](const http_request&) -> asio::awaitable<std::optional<http_response>> {
                                  co_return make_response(429, "slow down");
                              }};
    auto r = crawl({limited.origin() + "/"}, {&limited});
    ASSERT_EQ(r.records.size(), 1u);
    EXPECT_EQ(r.records[0].status, 429);
    EXPECT_EQ(r.records[0].error, error::retry_limit);
    EXPECT_EQ(r.records[0].tries, 3);
    EXPECT_EQ(limited.requests(), 3u);
}

TEST_F(polite_fixture, other_error_statuses_are_answers_and_not_retried) {
    config.robots.obey = false;
    add("/", make_response(500, "broken"));
    auto r = crawl();
    ASSERT_EQ(r.records.size(), 1u);
    EXPECT_EQ(r.records[0].status, 500);
    EXPECT_EQ(r.records[0].tries, 1);
    EXPECT_EQ(server.requests(), 1u);
}

TEST_F(polite_fixture, a_backoff_wait_holds_no_worker) {
    // One worker. The root's first attempt fails; while it waits out a long backoff the worker must serve
    // the other root, which would otherwise only start after the wait.
    config.robots.obey = false;
    config.max_tasks = 1;
    config.retry.initial_backoff = 400ms;
    config.retry.jitter = 0;
    config.retry.max_backoff = 400ms;
    int calls = 0;
    demo::http_server flaky{ctx.get_executor(),
                            [&](const http_request&) -> asio::awaitable<std::optional<http_response>> {
                                if (++calls == 1)
                                    co_return std::nullopt;
                                arrivals.emplace_back("flaky", steady::now());
                                co_return make_response(200, links_page({}));
                            }};
    add("/", make_response(200, links_page({})));
    auto r = crawl({flaky.origin() + "/", url("/")}, {&flaky});
    ASSERT_EQ(arrivals.size(), 2u);
    EXPECT_EQ(arrivals[0].first, "/") << "the other root went first, during the backoff";
    EXPECT_EQ(arrivals[1].first, "flaky");
    EXPECT_EQ(r.records.size(), 2u);
}

// ---- sitemaps ----

TEST_F(polite_fixture, sitemap_index_leads_to_two_sitemaps_one_gzipped) {
    config.sitemaps = true;
    add("/robots.txt",
        make_response(200, "User-agent: *\nDisallow: /hidden\nSitemap: " + url("/sitemap_index.xml") + "\n",
                      "text/plain"));
    add("/sitemap_index.xml",
        make_response(
            200,
            "<?xml version=\"1.0\"?><sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">"
            "<sitemap><loc>" +
                url("/sitemap1.xml") + "</loc></sitemap><sitemap><loc>" + url("/sitemap2.xml.gz") +
                "</loc></sitemap></sitemapindex>",
            "application/xml"));
    add("/sitemap1.xml",
        make_response(200,
                      "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"><url><loc>" +
                          url("/s1") + "</loc></url><url><loc>" + url("/hidden/x") +
                          "</loc></url><url><loc>http://elsewhere.invalid/x</loc></url></urlset>",
                      "application/xml"));
    add("/sitemap2.xml.gz",
        make_response(200,
                      gzip("<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">"
                           "<url><loc>" +
                           url("/s2") + "</loc></url></urlset>"),
                      "application/x-gzip"));
    add_page("/", {});
    add_page("/s1", {"/s3"});
    add_page("/s2", {});
    add_page("/s3", {});
    auto r = crawl();
    EXPECT_THAT(requested(), Contains("/s1"));
    EXPECT_THAT(requested(), Contains("/s2"));
    EXPECT_THAT(requested(), Contains("/s3")) << "links of sitemap pages are followed";
    EXPECT_THAT(requested(), Not(Contains("/hidden/x"))) << "robots.txt applies to sitemap URLs";
    ASSERT_NE(find(r, url("/s2")), nullptr);
    EXPECT_TRUE(find(r, url("/s2"))->from_sitemap);
    EXPECT_EQ(find(r, url("/hidden/x"))->error, error::robots_denied);
    EXPECT_EQ(find(r, url("/sitemap1.xml"))->num_urls, 2u) << "the off-host URL is out of scope";
}

TEST_F(polite_fixture, without_sitemap_lines_the_roots_sitemap_xml_is_tried) {
    config.sitemaps = true;
    add("/sitemap.xml",
        make_response(200,
                      "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"><url><loc>" +
                          url("/only-in-sitemap") + "</loc></url></urlset>",
                      "application/xml"));
    add_page("/", {});
    add_page("/only-in-sitemap", {});
    crawl();
    EXPECT_THAT(requested(), Contains("/only-in-sitemap"));
}

TEST_F(polite_fixture, sitemaps_are_off_by_default) {
    add("/sitemap.xml",
        make_response(200,
                      "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"><url><loc>" +
                          url("/only-in-sitemap") + "</loc></url></urlset>",
                      "application/xml"));
    add_page("/", {});
    crawl();
    EXPECT_THAT(requested(), UnorderedElementsAre("/robots.txt", "/"));
}

TEST_F(polite_fixture, a_guessed_sitemap_that_is_absent_is_no_broken_link) {
    config.sitemaps = true;
    add_page("/", {});
    auto r = crawl();
    EXPECT_THAT(requested(), Contains("/sitemap.xml")) << "tried";
    EXPECT_EQ(find(r, url("/sitemap.xml")), nullptr) << "no record: no document named it";
    EXPECT_EQ(r.stats["sitemaps_absent"], 1u);
    EXPECT_EQ(r.stats["error"], 0u);
    EXPECT_EQ(r.stats["status_404"], 0u);
    for (const auto& rec : r.records)
        EXPECT_EQ(broken_link_of(rec), std::nullopt) << rec.url;
}

TEST_F(polite_fixture, a_guessed_sitemap_redirected_to_an_absent_one_is_no_broken_link_either) {
    config.sitemaps = true;
    add("/sitemap.xml", redirect_to(301, "/moved-sitemap.xml"));
    add_page("/", {});
    auto r = crawl();
    EXPECT_THAT(requested(), Contains("/moved-sitemap.xml"));
    EXPECT_EQ(find(r, url("/moved-sitemap.xml")), nullptr);
    EXPECT_EQ(r.stats["sitemaps_absent"], 1u);
}

TEST_F(polite_fixture, a_sitemap_robots_txt_names_that_is_absent_stays_a_broken_link) {
    config.sitemaps = true;
    add("/robots.txt",
        make_response(200, "User-agent: *\nSitemap: " + url("/named.xml") + "\n", "text/plain"));
    add_page("/", {});
    auto r = crawl();
    const auto* named = find(r, url("/named.xml"));
    ASSERT_NE(named, nullptr);
    EXPECT_EQ(named->status, 404);
    EXPECT_EQ(named->referrer, url("/robots.txt"));
    ASSERT_TRUE(broken_link_of(*named).has_value());
    EXPECT_EQ(r.stats["sitemaps_absent"], 0u);
    EXPECT_THAT(requested(), Not(Contains("/sitemap.xml"))) << "robots.txt named one: nothing is guessed";
}

TEST_F(polite_fixture, max_pages_counts_pages_and_not_robots_txt_or_sitemaps) {
    config.max_pages = 3;
    config.max_tasks = 1; // one worker: the order in which URLs are admitted is the document order
    config.sitemaps = true;
    add_page("/", {"/a", "/b", "/c", "/d"});
    for (const auto* t : {"/a", "/b", "/c", "/d"})
        add_page(t, {});
    auto r = crawl();
    EXPECT_THAT(requested(), UnorderedElementsAre("/robots.txt", "/sitemap.xml", "/", "/a", "/b"));
    EXPECT_EQ(r.records.size(), 3u) << "max_pages 3: three records";
    EXPECT_EQ(r.stats["skipped_max_pages"], 2u);
}

TEST_F(polite_fixture, a_robots_txt_error_status_is_named_in_the_records_it_denies) {
    add("/robots.txt", make_response(500, "broken"));
    add_page("/", {});
    auto r = crawl();
    const auto* root = find(r, url("/"));
    ASSERT_NE(root, nullptr);
    EXPECT_EQ(root->error, error::robots_unavailable);
    EXPECT_EQ(root->error_detail, url("/robots.txt") + " answered 500 after 1 try");
}

TEST_F(polite_fixture, a_robots_txt_fetch_failure_is_named_in_the_records_it_denies) {
    // robots.txt: the connection closes without an answer, on every attempt.
    config.max_tries = 2;
    demo::http_server hangs_up{ctx.get_executor(),
                               [](const http_request& req) -> asio::awaitable<std::optional<http_response>> {
                                   if (req.target() == "/robots.txt")
                                       co_return std::nullopt;
                                   co_return make_response(200, links_page({}));
                               }};
    auto r = crawl({hangs_up.origin() + "/"}, {&hangs_up});
    const auto* root = find(r, hangs_up.origin() + "/");
    ASSERT_NE(root, nullptr);
    EXPECT_EQ(root->error, error::robots_unavailable);
    EXPECT_THAT(root->error_detail, ::testing::StartsWith(hangs_up.origin() + "/robots.txt: "));
    EXPECT_THAT(root->error_detail, ::testing::EndsWith(" after 2 tries"));
    EXPECT_GT(root->error_detail.size(), (hangs_up.origin() + "/robots.txt:  after 2 tries").size())
        << "the failure is named: " << root->error_detail;
}

// ---- what a page says to crawlers ----

TEST_F(polite_fixture, a_page_that_says_nofollow_keeps_its_links_unfollowed) {
    add_page("/", {"/meta", "/header", "/other-bot", "/canonical", "/file"});
    add("/meta", make_response(200, "<head><meta name=ROBOTS content='noindex, NoFollow'></head>"
                                    "<a href=/m1>1</a><a href=/m2>2</a><a href=/m1>again</a>"));
    auto header = make_response(200, links_page({"/h1"}));
    header.insert("X-Robots-Tag", "asiocrawl: nofollow");
    add("/header", header);
    auto other = make_response(200, links_page({"/o1"}));
    other.insert("X-Robots-Tag", "otherbot: noindex, nofollow");
    add("/other-bot", other);
    auto canonical = make_response(200, "<base href=/dir/><link rel=canonical href='c?x=1#top'>");
    canonical.insert(http::field::link, "</from-header>; rel=\"canonical\"");
    add("/canonical", canonical);
    auto file = make_response(200, "%PDF-", "application/pdf");
    file.insert(http::field::link, "</doc.html>; rel=canonical");
    file.insert("X-Robots-Tag", "noindex");
    add("/file", file);
    add_page("/o1", {});
    auto r = crawl();
    EXPECT_THAT(requested(), Not(Contains("/m1")));
    EXPECT_THAT(requested(), Not(Contains("/h1")));
    EXPECT_THAT(requested(), Contains("/o1")) << "another crawler's X-Robots-Tag";
    const auto* meta = find(r, url("/meta"));
    ASSERT_NE(meta, nullptr);
    EXPECT_TRUE(meta->nofollow);
    EXPECT_TRUE(meta->noindex);
    EXPECT_EQ(meta->num_urls, 0u);
    const auto* by_header = find(r, url("/header"));
    ASSERT_NE(by_header, nullptr);
    EXPECT_TRUE(by_header->nofollow);
    EXPECT_FALSE(by_header->noindex);
    EXPECT_FALSE(find(r, url("/other-bot"))->nofollow);
    EXPECT_FALSE(find(r, url("/other-bot"))->noindex);
    EXPECT_EQ(find(r, url("/canonical"))->canonical, url("/dir/c?x=1")) << "the page's own, resolved";
    EXPECT_EQ(find(r, url("/file"))->canonical, url("/doc.html")) << "from the Link header";
    EXPECT_TRUE(find(r, url("/file"))->noindex);
    EXPECT_EQ(r.stats["skipped_nofollow"], 3u) << "/m1 and /m2, /h1";
    EXPECT_EQ(r.stats["nofollow"], 2u);
    EXPECT_EQ(r.stats["noindex"], 2u);
    const auto json = to_json(*meta);
    EXPECT_TRUE(json.at("nofollow").as_bool());
    EXPECT_TRUE(json.at("noindex").as_bool());
    EXPECT_EQ(std::string(to_json(*find(r, url("/file"))).at("canonical").as_string()), url("/doc.html"));
}

TEST_F(polite_fixture, without_robots_a_nofollow_page_is_recorded_and_its_links_followed) {
    config.robots.obey = false;
    add("/", make_response(200, "<meta name=robots content=nofollow><a href=/a>a</a>"));
    add_page("/a", {});
    auto r = crawl();
    EXPECT_THAT(requested(), UnorderedElementsAre("/", "/a"));
    EXPECT_TRUE(find(r, url("/"))->nofollow);
    EXPECT_EQ(r.stats["skipped_nofollow"], 0u);
}

TEST_F(polite_fixture, rel_nofollow_links_are_left_out_when_asked) {
    config.robots.obey_rel_nofollow = true;
    add("/", make_response(200, "<a href=/a>a</a><a rel='external nofollow' href=/n>n</a>"));
    add_page("/a", {});
    add_page("/n", {});
    auto r = crawl();
    EXPECT_THAT(requested(), UnorderedElementsAre("/robots.txt", "/", "/a"));
    EXPECT_EQ(r.stats["skipped_rel_nofollow"], 1u);
    EXPECT_FALSE(find(r, url("/"))->nofollow) << "the page itself did not say nofollow";
}

// ---- cancellation, parse pool ----

TEST_F(polite_fixture, total_cancellation_drains_and_terminal_cancellation_aborts) {
    config.robots.obey = false;
    config.max_tasks = 2;
    // Only the terminal cancellation can end the hanging fetches: a lost one is a hang (run_bounded), not a
    // request timeout that ends the crawl with the same counts.
    config.fetch.request_timeout = std::chrono::hours{1};
    std::string html = "<html>";
    for (int i = 0; i < 20; ++i)
        html += "<a href=/p" + std::to_string(i) + ">x</a>";
    add("/", make_response(200, html));
    asio::cancellation_signal signal;
    int pages_started = 0;
    demo::http_server hanging{
        ctx.get_executor(), [&](const http_request& req) -> asio::awaitable<std::optional<http_response>> {
            if (req.target() == "/")
                co_return make_response(200, html);
            if (++pages_started == 2) {
                // Both workers are busy: ask for a graceful stop, then for an abort.
                signal.emit(asio::cancellation_type::total);
                asio::post(ctx, [&] { signal.emit(asio::cancellation_type::terminal); });
            }
            co_await hanging.wait_stopped(); // never answers
            co_return std::nullopt;
        }};
    config.roots = {hanging.origin() + "/"};
    crawler c{ctx.get_executor(), config};
    std::optional<report> result;
    c.async_run(asio::bind_cancellation_slot(signal.slot(), [&](boost::system::error_code ec, report r) {
        hanging.stop();
        server.stop();
        if (ec)
            throw boost::system::system_error(ec, r.failure);
        result = std::move(r);
    }));
    run_bounded(ctx);
    ASSERT_TRUE(result);
    EXPECT_EQ(result->done, 1u) << "only the root completed";
    EXPECT_EQ(result->todo, 20u) << "18 never started, 2 aborted in flight";
    EXPECT_EQ(hanging.requests(), 3u);
}

TEST_F(polite_fixture, abort_cancels_fetches_in_flight) {
    config.robots.obey = false;
    config.fetch.request_timeout = std::chrono::hours{1}; // only abort() can end the fetch
    std::optional<crawler> c;
    demo::http_server hanging{ctx.get_executor(),
                              [&](const http_request&) -> asio::awaitable<std::optional<http_response>> {
                                  c->abort();
                                  co_await hanging.wait_stopped();
                                  co_return std::nullopt;
                              }};
    config.roots = {hanging.origin() + "/"};
    c.emplace(ctx.get_executor(), config);
    auto result = run_crawl(ctx, *c, [&] {
        hanging.stop();
        server.stop();
    });
    ASSERT_TRUE(result);
    EXPECT_EQ(result->done, 0u);
    EXPECT_EQ(result->todo, 1u);
}

TEST_F(polite_fixture, the_parse_pool_finds_exactly_the_reachable_set) {
    demo::site_options options;
    options.pages = 300;
    options.seed = 11;
    const demo::site site = demo::generate_site(options);
    demo::http_server site_server{ctx.get_executor(), demo::serve_site(site)};
    config.robots.obey = false;
    config.parse_threads = 2;
    config.politeness.max_per_host = 8;
    crawl({site_server.origin() + "/"}, {&site_server});
    std::multiset<std::string> requested_targets;
    for (const auto& req : site_server.log())
        requested_targets.insert(req.target);
    const std::set<std::string> unique(requested_targets.begin(), requested_targets.end());
    EXPECT_EQ(unique.size(), requested_targets.size()) << "no URL requested twice";
    EXPECT_EQ(unique, site.expected_requests);
}
