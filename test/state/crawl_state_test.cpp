// The crawl's decisions driven without sockets: events in (answers, links, time), tickets, records and
// durable changes out. A manual clock stands in for time.
#include "state/crawl_state.hpp"

#include "state/crawl_definition.hpp"
#include "state/record_codec.hpp"
#include "support/test_response.hpp"
#include "util/digest.hpp"

#include <asiocrawl/error.hpp>
#include <asiocrawl/report.hpp>

#include <boost/asio/error.hpp>
#include <boost/url/parse.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

using namespace asiocrawl;
using namespace asiocrawl::detail;
using asiocrawl::test::test_response;
using namespace std::chrono_literals;

namespace {

crawl_state::time_point fake_now{std::chrono::hours(1)};
crawl_state::time_point manual_clock() {
    return fake_now;
}

// The calendar: 2001-09-09T01:46:40Z.
crawl_state::wall_clock_type::time_point fake_wall_now{std::chrono::seconds(1'000'000'000)};
crawl_state::wall_clock_type::time_point manual_wall_clock() {
    return fake_wall_now;
}

/// The state and what it told its loop: unfinished count, records.
struct harness {
    crawler_config config;
    std::size_t unfinished = 0;
    bool closed = false;
    std::vector<record> records;
    std::vector<std::string> warnings;
    std::optional<crawl_state> state;

    explicit harness(std::function<void(crawler_config&)> adjust = {}, bool durable = false,
                     std::size_t window = 0) {
        fake_now = crawl_state::time_point{std::chrono::hours(1)};
        fake_wall_now = crawl_state::wall_clock_type::time_point{std::chrono::seconds(1'000'000'000)};
        config.roots = {"http://a.test/"};
        config.retry.initial_backoff = 100ms;
        config.retry.jitter = 0;
        if (adjust)
            adjust(config);
        crawl_state::hooks h;
        h.hold = [this] {
            if (closed)
                return false;
            ++unfinished;
            return true;
        };
        h.release = [this] { --unfinished; };
        h.emit = [this](const record& r) { records.push_back(r); };
        h.log.write = [this](log_level level, std::string_view message) {
            if (level >= log_level::warning)
                warnings.emplace_back(message);
        };
        state.emplace(config, std::move(h), durable, window, &manual_clock, 42, &manual_wall_clock);
    }

    crawl_state& operator*() { return *state; }
    crawl_state* operator->() { return &*state; }

    /// Takes the next ticket, asserting there is one for `url`.
    crawl_state::ticket take(const std::string& url) {
        auto t = state->next();
        EXPECT_TRUE(t) << "no ticket, expected " << url;
        if (!t)
            return {};
        EXPECT_EQ(t->item.url, url);
        EXPECT_TRUE(state->begin_attempt(*t));
        state->fetch_started(*t);
        return std::move(*t);
    }

    /// The answer to a ticket, start to end, as the loop does it (one task_done at the end).
    void answer(crawl_state::ticket& t, test_response response, std::vector<std::string> links = {}) {
        state->fetch_finished(t);
        record r;
        switch (state->on_response(t, response.outcome(), r)) {
        case crawl_state::next_step::done:
            break;
        case crawl_state::next_step::parse_page: {
            resolved_links resolved;
            for (const auto& link : links)
                resolved.urls.emplace_back(boost::urls::parse_uri(link).value().buffer());
            state->on_links(t, r, resolved);
            [[fallthrough]];
        }
        case crawl_state::next_step::record_ready:
            state->finish(t, std::move(r));
            break;
        }
        t = {};
        --unfinished; // the worker's task_done
    }

    const record* find(const std::string& url) const {
        for (const auto& r : records)
            if (r.url == url)
                return &r;
        return nullptr;
    }
};

test_response page(int status = 200, std::string body = "<p>x</p>") {
    test_response r;
    r.status = status;
    r.content_type = "text/html";
    r.body = std::move(body);
    r.body_bytes = r.body.size();
    r.remote_ip = "192.0.2.1";
    return r;
}

test_response robots(std::string body) {
    test_response r = page(200, std::move(body));
    r.content_type = "text/plain";
    return r;
}

test_response redirect(int status, std::string location) {
    test_response r = page(status, "");
    r.location = std::move(location);
    return r;
}

auto no_robots = [](crawler_config& c) { c.robots.obey = false; };

} // namespace

TEST(crawl_state, robots_txt_comes_first_and_its_verdict_decides) {
    harness h;
    h->start();
    EXPECT_EQ(h.unfinished, 1u) << "the root";
    auto robots_ticket = h.take("http://a.test/robots.txt");
    EXPECT_EQ(h.unfinished, 2u) << "the root waits, robots.txt is counted too";
    EXPECT_FALSE(h->next()) << "the host waits for its robots.txt";
    h.answer(robots_ticket, robots("User-agent: *\nDisallow: /\n"));
    EXPECT_FALSE(h->next()) << "denied: no ticket";
    ASSERT_NE(h.find("http://a.test/"), nullptr);
    EXPECT_EQ(h.find("http://a.test/")->error, error::robots_denied);
    EXPECT_EQ(h.unfinished, 0u) << "the denied root was released";
}

TEST(crawl_state, an_unreachable_root_says_what_happened) {
    harness h([](crawler_config& c) { c.max_tries = 1; });
    h->start();
    auto t = h.take("http://a.test/robots.txt");
    test_response refused;
    refused.error = boost::asio::error::connection_refused;
    h.answer(t, refused);
    EXPECT_FALSE(h->next());
    const auto* root = h.find("http://a.test/");
    ASSERT_NE(root, nullptr);
    EXPECT_EQ(root->error, boost::asio::error::connection_refused)
        << "not robots_unavailable: nothing answered at all";
    EXPECT_EQ(root->error_detail,
              "robots.txt could not be fetched after 1 try: the origin was not reachable");
    EXPECT_EQ(h.unfinished, 0u);
}

TEST(crawl_state, a_robots_txt_that_answers_5xx_keeps_the_origin_off_limits) {
    harness h([](crawler_config& c) { c.max_tries = 1; });
    h->start();
    auto t = h.take("http://a.test/robots.txt");
    h.answer(t, page(500));
    EXPECT_FALSE(h->next());
    EXPECT_EQ(h.find("http://a.test/")->error, error::robots_unavailable);
}

TEST(crawl_state, robots_txt_redirects_are_followed_through_the_frontier) {
    harness h;
    h->start();
    auto t = h.take("http://a.test/robots.txt");
    h.answer(t, redirect(301, "http://b.test/robots.txt"));
    auto hop = h.take("http://b.test/robots.txt");
    EXPECT_EQ(hop.item.kind, item_kind::robots);
    h.answer(hop, robots("User-agent: *\nDisallow: /private\n"));
    auto root = h.take("http://a.test/");
    EXPECT_EQ(root.item.depth, 0);
}

// RFC 9309 2.3.1: robots.txt's fetch, answer by answer (conformance of the fetch side).
TEST(crawl_state, a_robots_txt_redirected_more_than_five_times_allows_everything) {
    harness h;
    h->start();
    auto t = h.take("http://a.test/robots.txt");
    for (int hop = 1; hop <= 5; ++hop) {
        h.answer(t, redirect(302, "http://a.test/r" + std::to_string(hop)));
        t = h.take("http://a.test/r" + std::to_string(hop));
    }
    h.answer(t, redirect(302, "http://a.test/r6"));
    auto root = h.take("http://a.test/");
    EXPECT_EQ(root.item.depth, 0) << "five hops followed, the sixth not: unavailable, so allowed";
}

TEST(crawl_state, a_robots_txt_that_answers_4xx_allows_everything) {
    for (const int status : {401, 403, 404, 410}) {
        SCOPED_TRACE(status);
        harness h;
        h->start();
        auto t = h.take("http://a.test/robots.txt");
        h.answer(t, page(status));
        auto root = h.take("http://a.test/");
        EXPECT_EQ(root.item.depth, 0);
    }
}

TEST(crawl_state, a_cached_robots_txt_is_fetched_again_after_a_day) {
    harness h;
    h->start();
    auto t = h.take("http://a.test/robots.txt");
    h.answer(t, robots("User-agent: *\nDisallow: /private\n"));
    auto root = h.take("http://a.test/");
    h.answer(root, page(), {"http://a.test/x", "http://a.test/y"});
    auto x = h.take("http://a.test/x");
    h.answer(x, page());
    fake_now += std::chrono::hours(24);
    auto again = h.take("http://a.test/robots.txt");
    h.answer(again, robots("User-agent: *\nDisallow: /y\n"));
    EXPECT_FALSE(h->next()) << "the new answer decides";
    EXPECT_EQ(h.find("http://a.test/y")->error, error::robots_denied);
}

TEST(crawl_state, links_are_admitted_once_with_their_referrer_and_depth) {
    harness h(no_robots);
    h->start();
    auto root = h.take("http://a.test/");
    h.answer(root, page(), {"http://a.test/x", "http://a.test/x", "http://b.test/off", "http://a.test/y"});
    const auto* r = h.find("http://a.test/");
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->num_urls, 2u);
    EXPECT_EQ(r->num_new_urls, 2u);
    EXPECT_EQ(h->result().stats["skipped_off_host"], 1u);
    auto x = h.take("http://a.test/x");
    EXPECT_EQ(x.item.referrer, "http://a.test/");
    EXPECT_EQ(x.item.depth, 1);
    h.answer(x, page(), {"http://a.test/", "http://a.test/y"});
    EXPECT_EQ(h.find("http://a.test/x")->num_new_urls, 0u) << "both seen before";
}

TEST(crawl_state, a_payload_digest_is_computed_when_the_records_or_a_fetch_history_want_it) {
    const std::string body = "<p>digest me</p>";
    const auto digest_of_root = [&](std::function<void(crawler_config&)> adjust, bool durable) {
        harness h(std::move(adjust), durable, durable ? 64 : 0);
        h->start();
        auto root = h.take("http://a.test/");
        h.answer(root, page(200, body));
        const auto* r = h.find("http://a.test/");
        return r == nullptr ? std::string("no record") : r->payload_digest;
    };
    const auto digests_off = [](crawler_config& c) {
        c.robots.obey = false;
        c.payload_digests = false;
    };
    EXPECT_EQ(digest_of_root(no_robots, false), sha1_base32(body)) << "by default";
    EXPECT_EQ(digest_of_root(digests_off, false), "") << "nothing reads it: not computed";
    EXPECT_EQ(digest_of_root(digests_off, true), sha1_base32(body)) << "the fetch history keeps it";
}

TEST(crawl_state, a_redirect_target_keeps_the_depth_and_names_its_source) {
    harness h(no_robots);
    h->start();
    auto root = h.take("http://a.test/");
    h.answer(root, redirect(301, "/home"));
    const auto* r = h.find("http://a.test/");
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->next_url, "http://a.test/home");
    auto target = h.take("http://a.test/home");
    EXPECT_EQ(target.item.depth, 0);
    EXPECT_EQ(target.item.redirects_left, h.config.max_redirect - 1);
    EXPECT_EQ(target.item.referrer, "http://a.test/");
}

TEST(crawl_state, a_root_redirecting_out_of_scope_says_so) {
    harness h(no_robots);
    h->start();
    auto root = h.take("http://a.test/");
    h.answer(root, redirect(301, "http://elsewhere.test/"));
    EXPECT_EQ(h.find("http://a.test/")->next_url, "http://elsewhere.test/");
    EXPECT_FALSE(h->next()) << "the target is out of scope";
    ASSERT_EQ(h.warnings.size(), 1u);
    EXPECT_NE(h.warnings[0].find("a root redirects out of scope, to http://elsewhere.test/"),
              std::string::npos)
        << h.warnings[0];
}

TEST(crawl_state, a_user_agent_robots_txt_cannot_name_says_so) {
    // RFC 9309 product tokens are letters, '_' and '-': "MyBot2" can never match a User-agent line.
    for (const auto& [agent, warned] : {std::pair{"MyBot2/1.0", true}, std::pair{"My_Bot-x/2 (+x)", false},
                                        std::pair{"asiocrawl/0.1.0", false}}) {
        harness h([agent](crawler_config& c) { c.fetch.user_agent = agent; });
        h->start();
        ASSERT_EQ(h.warnings.size(), warned ? 1u : 0u) << agent;
        if (warned) {
            EXPECT_NE(h.warnings[0].find("\"MyBot2\" is not one robots.txt can name"), std::string::npos)
                << h.warnings[0];
        }
    }
    harness ignoring([](crawler_config& c) {
        c.fetch.user_agent = "MyBot2/1.0";
        c.robots.obey = false;
    });
    ignoring->start();
    EXPECT_TRUE(ignoring.warnings.empty()) << "robots.txt is not read: the token does not matter";
}

/// Answers every ticket until none is left: `answer_of(url)` says what each URL gets.
void drain(harness& h, const std::function<test_response(const std::string&)>& answer_of) {
    while (auto next = h->next()) {
        auto t = std::move(*next);
        ASSERT_TRUE(h->begin_attempt(t));
        h->fetch_started(t);
        const std::string url = t.item.url;
        h.answer(t, answer_of(url));
    }
}

TEST(crawl_state, an_https_redirect_to_http_in_scope_is_followed_and_warned_once_per_origin_pair) {
    harness h([](crawler_config& c) {
        c.robots.obey = false;
        c.roots = {"https://a.test/"};
        c.domains = {"b.test", "c.test"};
    });
    h->start();
    auto root = h.take("https://a.test/");
    h.answer(root, page(), {"https://a.test/1", "https://a.test/2", "https://a.test/3", "https://a.test/4"});
    const std::map<std::string, std::string> hops = {
        {"https://a.test/1", "http://b.test/1"},  // warned
        {"https://a.test/2", "http://b.test/2"},  // the same two origins: counted only
        {"https://a.test/3", "http://c.test/3"},  // another pair: warned
        {"https://a.test/4", "http://out.test/"}, // out of scope: not followed, no downgrade
    };
    drain(h, [&](const std::string& url) {
        const auto hop = hops.find(url);
        return hop == hops.end() ? page() : redirect(301, hop->second);
    });
    for (const auto* followed : {"http://b.test/1", "http://b.test/2", "http://c.test/3"})
        EXPECT_NE(h.find(followed), nullptr) << followed;
    EXPECT_EQ(h.find("http://out.test/"), nullptr);
    EXPECT_EQ(h->result().stats["redirect_downgrades"], 3u);
    ASSERT_EQ(h.warnings.size(), 2u);
    std::sort(h.warnings.begin(), h.warnings.end());
    EXPECT_EQ(h.warnings[0], "redirect from https://a.test/1 to http://b.test/1 downgrades to cleartext "
                             "(followed: in scope; warned once for these two origins)");
    EXPECT_NE(h.warnings[1].find("redirect from https://a.test/3 to http://c.test/3"), std::string::npos)
        << h.warnings[1];
}

TEST(crawl_state, downgrade_warnings_are_bounded) {
    harness h([](crawler_config& c) {
        c.robots.obey = false;
        c.roots = {"https://a.test/"};
        c.domains = {"b.test"};
    });
    h->start();
    auto root = h.take("https://a.test/");
    std::vector<std::string> links;
    for (int i = 0; i < 150; ++i)
        links.push_back("https://a.test/" + std::to_string(i));
    h.answer(root, page(), links);
    // Each page redirects to a host of its own: 150 pairs of origins.
    drain(h, [](const std::string& url) {
        if (url.starts_with("https://a.test/"))
            return redirect(302, "http://s" + url.substr(15) + ".b.test/");
        return page();
    });
    EXPECT_EQ(h->result().stats["redirect_downgrades"], 150u);
    ASSERT_EQ(h.warnings.size(), 101u);
    EXPECT_EQ(
        std::count_if(h.warnings.begin(), h.warnings.end(),
                      [](const std::string& w) { return w.find("no longer logged") != std::string::npos; }),
        1);
}

TEST(crawl_state, a_page_redirecting_out_of_scope_is_no_news) {
    harness h(no_robots);
    h->start();
    auto root = h.take("http://a.test/");
    h.answer(root, page(), {"http://a.test/away"});
    auto away = h.take("http://a.test/away");
    h.answer(away, redirect(302, "http://elsewhere.test/"));
    EXPECT_TRUE(h.warnings.empty()) << h.warnings[0];
}

TEST(crawl_state, a_retry_waits_its_backoff_without_a_ticket) {
    harness h(no_robots);
    h->start();
    auto t = h.take("http://a.test/");
    h.answer(t, page(503));
    EXPECT_TRUE(h.records.empty());
    EXPECT_EQ(h.unfinished, 1u) << "the retry is counted";
    EXPECT_FALSE(h->next()) << "not before its backoff";
    ASSERT_TRUE(h->next_wakeup());
    EXPECT_EQ(*h->next_wakeup(), fake_now + 100ms);
    fake_now += 100ms;
    auto again = h.take("http://a.test/");
    EXPECT_EQ(again.item.tries, 2);
    h.answer(again, page());
    EXPECT_EQ(h.find("http://a.test/")->tries, 2);
}

TEST(crawl_state, a_retry_after_date_is_read_on_the_calendar_it_is_given) {
    harness h([](crawler_config& c) {
        c.robots.obey = false;
        c.retry.max_backoff = std::chrono::hours(1);
    });
    h->start();
    auto t = h.take("http://a.test/");
    auto busy = page(503);
    busy.retry_after = "Sun, 09 Sep 2001 01:47:10 GMT"; // 30 s after the manual calendar's now
    h.answer(t, busy);
    ASSERT_TRUE(h->next_wakeup());
    EXPECT_EQ(*h->next_wakeup(), fake_now + 30s);
}

TEST(crawl_state, the_report_says_when_the_crawl_started_on_the_calendar_it_is_given) {
    harness h(no_robots);
    h->start();
    EXPECT_EQ(h->result().started_at, fake_wall_now);
}

TEST(crawl_state, a_host_slot_comes_back_when_the_ticket_goes) {
    harness h([](crawler_config& c) {
        c.robots.obey = false;
        c.politeness.max_per_host = 1;
        c.roots = {"http://a.test/1", "http://a.test/2"};
    });
    h->start();
    {
        auto first = h->next();
        ASSERT_TRUE(first);
        EXPECT_FALSE(h->next()) << "one request at a time to the host";
    } // dropped: an abandoned ticket gives its slot back
    EXPECT_TRUE(h->next());
}

TEST(crawl_state, crawl_delay_spaces_the_starts) {
    harness h([](crawler_config& c) { c.roots = {"http://a.test/1", "http://a.test/2"}; });
    h->start();
    auto r = h.take("http://a.test/robots.txt");
    h.answer(r, robots("User-agent: *\nCrawl-delay: 2\n"));
    auto first = h.take("http://a.test/1");
    EXPECT_FALSE(h->next());
    h.answer(first, page());
    EXPECT_FALSE(h->next()) << "2 s between starts";
    fake_now += 2s;
    h.take("http://a.test/2");
}

TEST(crawl_state, a_durable_crawl_writes_what_it_admits_and_finishes) {
    harness h(no_robots, true, 64);
    h->start();
    auto batch = h->take_batch();
    ASSERT_EQ(batch.waiting.size(), 1u);
    EXPECT_EQ(batch.fingerprints.size(), 1u);
    ASSERT_EQ(batch.new_hosts.size(), 1u);
    EXPECT_EQ(batch.new_hosts[0].second, "a.test");
    auto root = h.take("http://a.test/");
    const auto root_seq = root.item.seq;
    h.answer(root, page(), {"http://a.test/x"});
    batch = h->take_batch();
    ASSERT_EQ(batch.finished.size(), 1u);
    EXPECT_EQ(batch.finished[0].second, root_seq);
    ASSERT_EQ(batch.waiting.size(), 1u);
    const auto decoded = decode_work_item(batch.waiting[0].item);
    ASSERT_TRUE(decoded);
    EXPECT_EQ(decoded->url, "http://a.test/x");
    EXPECT_EQ(decoded->referrer, "http://a.test/");
    EXPECT_FALSE(batch.counters.empty());
    EXPECT_TRUE(h->take_batch().empty()) << "nothing new";
}

TEST(crawl_state, a_window_is_at_least_twice_what_a_host_may_have_in_flight) {
    crawler_config c;
    c.politeness.max_per_host = 2;
    c.max_tasks = 100;
    EXPECT_EQ(crawl_state::effective_window(c, 64), 64u);
    EXPECT_EQ(crawl_state::effective_window(c, 1), 4u);
    c.politeness.max_per_host = 100;
    EXPECT_EQ(crawl_state::effective_window(c, 64), 200u) << "100 workers on one host";
    c.max_tasks = 10;
    EXPECT_EQ(crawl_state::effective_window(c, 64), 64u) << "10 workers cannot take more than 10";
}

TEST(crawl_state, past_the_window_waiting_urls_spill_and_come_back_in_order) {
    harness h(
        [](crawler_config& c) {
            c.robots.obey = false;
            c.politeness.max_per_host = 1; // a window of 2 is then what is asked for
        },
        true, 2);
    h->start();
    auto root = h.take("http://a.test/");
    h.answer(root, page(), {"http://a.test/1", "http://a.test/2", "http://a.test/3", "http://a.test/4"});
    auto batch = h->take_batch();
    std::map<std::uint64_t, std::string> on_disk;
    for (const auto& w : batch.waiting)
        on_disk[w.seq] = w.item;
    // What the loop does with the refills the state asks for: reads them from "disk" in order.
    auto serve_refills = [&] {
        std::size_t served = 0;
        for (const auto& refill : h->take_refills()) {
            std::vector<std::pair<std::uint64_t, std::string>> items;
            for (auto it = on_disk.lower_bound(refill.from_seq);
                 it != on_disk.end() && items.size() < refill.count; ++it)
                items.emplace_back(it->first, it->second);
            h->on_refill(refill.host, std::move(items));
            ++served;
        }
        return served;
    };
    EXPECT_EQ(h->in_memory_waiting(), 2u) << "the window";
    h.take("http://a.test/1");
    EXPECT_EQ(serve_refills(), 1u) << "the line is down to half the window";
    h.take("http://a.test/2");
    serve_refills();
    h.take("http://a.test/3");
    serve_refills();
    h.take("http://a.test/4");
    EXPECT_FALSE(h->next());
}

TEST(crawl_state, a_durable_crawl_stopping_keeps_what_it_finds_for_the_next_run) {
    harness h(no_robots, true, 64);
    h->start();
    auto root = h.take("http://a.test/");
    h->take_batch();
    h->stop();
    h.closed = true;
    h.answer(root, page(), {"http://a.test/later"});
    EXPECT_EQ(h->deferred(), 1u);
    const auto batch = h->take_batch();
    ASSERT_EQ(batch.waiting.size(), 1u) << "written for the next run";
    EXPECT_FALSE(h->next());
}

TEST(crawl_state, a_memory_crawl_stopping_drops_what_it_finds) {
    harness h(no_robots);
    h->start();
    auto root = h.take("http://a.test/");
    h->stop();
    h.closed = true;
    h.answer(root, page(), {"http://a.test/later"});
    EXPECT_EQ(h->deferred(), 0u);
    EXPECT_EQ(h.unfinished, 0u);
}

TEST(crawl_state, restored_counters_and_waiting_urls_continue_the_crawl) {
    std::string counters;
    {
        harness first(no_robots, true, 64);
        first->start();
        auto root = first.take("http://a.test/");
        first.answer(root, page(), {"http://a.test/x"});
        counters = first->counters_json();
    }
    harness second(no_robots, true, 64);
    restored_state restored;
    restored.hosts = {"a.test"};
    restored.waiting = {1};
    restored.next_seq = {3};
    restored.counters = counters;
    second->seen_set().insert(url_fingerprint("http://a.test/", 42));
    second->seen_set().insert(url_fingerprint("http://a.test/x", 42));
    second->restore(restored);
    EXPECT_EQ(second.unfinished, 1u);
    second->start();
    EXPECT_EQ(second->result().done, 1u);
    EXPECT_EQ(second->result().runs, 2u);
    auto refills = second->take_refills();
    ASSERT_EQ(refills.size(), 1u);
    work_item x;
    x.url = "http://a.test/x";
    x.depth = 1;
    second->on_refill(0, {{2, encode(x)}});
    auto t = second.take("http://a.test/x");
    EXPECT_EQ(t.item.seq, 2u);
    second.answer(t, page(), {"http://a.test/y"});
    const auto batch = second->take_batch();
    ASSERT_FALSE(batch.waiting.empty());
    EXPECT_EQ(batch.waiting.back().seq, 3u) << "new URLs are numbered past the restored ones";
}

TEST(crawl_state, an_internal_error_on_robots_txt_does_not_strand_the_origin) {
    harness h([](crawler_config& c) { c.max_tries = 1; });
    h->start();
    auto t = h.take("http://a.test/robots.txt");
    h->fetch_finished(t);
    h->internal_error(t, "boom");
    t = {};
    --h.unfinished;
    EXPECT_FALSE(h->next());
    ASSERT_NE(h.find("http://a.test/"), nullptr) << "the root gets its record";
    EXPECT_EQ(h.unfinished, 0u);
}

TEST(crawl_state, an_internal_error_record_keeps_its_depth_and_tries) {
    harness h(no_robots);
    h->start();
    auto root = h.take("http://a.test/");
    h.answer(root, page(), {"http://a.test/deep"});
    auto t = h.take("http://a.test/deep");
    h->fetch_finished(t);
    h->internal_error(t, "boom");
    t = {};
    --h.unfinished;
    const auto* r = h.find("http://a.test/deep");
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->error, error::internal_error);
    EXPECT_EQ(r->depth, 1);
    EXPECT_EQ(r->tries, 1);
    EXPECT_EQ(r->referrer, "http://a.test/");
}

TEST(crawl_state, a_shared_crawl_admits_into_the_batch_and_crawls_what_it_leased) {
    harness h(no_robots, true);
    h->set_shared();
    h->start();
    // The root goes to the shared frontier only: nothing is counted or handed out here.
    EXPECT_EQ(h.unfinished, 0u);
    EXPECT_FALSE(h->next());
    auto roots = h->take_batch();
    ASSERT_EQ(roots.waiting.size(), 1u);
    EXPECT_EQ(roots.waiting[0].seq, 0u) << "seq 0: a new URL, numbered by the shared frontier";
    ASSERT_EQ(roots.fingerprints.size(), 1u);
    ASSERT_EQ(roots.new_hosts.size(), 1u);
    EXPECT_EQ(roots.new_hosts[0].second, "a.test");

    // Leased back (by this instance or another), under the shared frontier's id.
    auto item = decode_work_item(roots.waiting[0].item);
    ASSERT_TRUE(item);
    ASSERT_TRUE(h->take_leased(17, std::move(*item)));
    EXPECT_EQ(h.unfinished, 1u);
    auto t = h.take("http://a.test/");
    h.answer(t, page(200), {"http://a.test/x", "http://a.test/"});
    auto batch = h->take_batch();
    ASSERT_EQ(batch.finished.size(), 1u);
    EXPECT_EQ(batch.finished[0].second, 17u) << "the lease's id is what the commit finishes";
    ASSERT_EQ(batch.waiting.size(), 1u) << "the root is seen already; only /x is new";
    EXPECT_EQ(batch.waiting[0].seq, 0u);
    EXPECT_EQ(batch.fingerprints.size(), 1u);
    EXPECT_EQ(h.unfinished, 0u);
    ASSERT_NE(h.find("http://a.test/"), nullptr);
}

TEST(crawl_state, a_shared_crawl_sends_a_robots_crawl_delay_to_the_whole_crawl) {
    harness h([](crawler_config& c) { c.politeness.delay = 500ms; }, true);
    h->set_shared();
    h->start();
    auto roots = h->take_batch();
    ASSERT_EQ(roots.waiting.size(), 1u);
    auto item = decode_work_item(roots.waiting[0].item);
    ASSERT_TRUE(item);
    ASSERT_TRUE(h->take_leased(1, std::move(*item)));
    auto r = h.take("http://a.test/robots.txt");
    h.answer(r, robots("User-agent: *\nCrawl-delay: 2\n"));
    auto batch = h->take_batch();
    ASSERT_EQ(batch.host_delays.size(), 1u) << "the other instances' leases must space this host too";
    EXPECT_EQ(batch.host_delays[0].first, "a.test");
    EXPECT_EQ(batch.host_delays[0].second, 2000ms);
    EXPECT_FALSE(batch.empty());
}

TEST(work_item_codec, round_trips_and_rejects_garbage) {
    work_item item;
    item.url = "http://a.test/p?q=1";
    item.referrer = "http://a.test/";
    item.redirects_left = 7;
    item.depth = 3;
    item.kind = item_kind::sitemap;
    item.from_sitemap = true;
    item.guessed = true;
    item.tries = 2;
    item.first_started_us = 123456;
    const auto bytes = encode(item);
    const auto back = decode_work_item(bytes);
    ASSERT_TRUE(back);
    EXPECT_EQ(back->url, item.url);
    EXPECT_EQ(back->referrer, item.referrer);
    EXPECT_EQ(back->redirects_left, 7);
    EXPECT_EQ(back->depth, 3);
    EXPECT_EQ(back->kind, item_kind::sitemap);
    EXPECT_TRUE(back->from_sitemap);
    EXPECT_TRUE(back->guessed);
    EXPECT_EQ(back->tries, 2);
    EXPECT_EQ(back->first_started_us, 123456);
    for (std::size_t cut = 0; cut < bytes.size(); ++cut)
        EXPECT_FALSE(decode_work_item(std::string_view(bytes).substr(0, cut))) << "cut at " << cut;
    EXPECT_FALSE(decode_work_item(bytes + "x"));
}

TEST(fingerprint_set, holds_what_was_inserted_at_under_16_bytes_a_url) {
    fingerprint_set set;
    for (std::uint64_t i = 0; i < 200'000; ++i)
        EXPECT_TRUE(set.insert(url_fingerprint("http://a.test/" + std::to_string(i), 1)));
    for (std::uint64_t i = 0; i < 200'000; ++i)
        ASSERT_TRUE(set.contains(url_fingerprint("http://a.test/" + std::to_string(i), 1)));
    EXPECT_FALSE(set.contains(url_fingerprint("http://a.test/x", 1)));
    EXPECT_FALSE(set.insert(url_fingerprint("http://a.test/7", 1)));
    EXPECT_TRUE(set.insert(0)) << "the fingerprint 0 is a value like any other";
    EXPECT_TRUE(set.contains(0));
    EXPECT_LE(set.memory_bytes(), 16 * set.size());
    EXPECT_NE(url_fingerprint("http://a.test/", 1), url_fingerprint("http://a.test/", 2)) << "seeded";
}

TEST(fingerprint_set, takes_fingerprints_in_sorted_order_as_a_resume_reads_them) {
    // Sorted input into an order-keeping table would pile up in its first slots (quadratic: this test
    // would not end).
    fingerprint_set set;
    const std::uint64_t step = ~std::uint64_t{0} / 2'000'000;
    for (std::uint64_t i = 1; i <= 1'000'000; ++i)
        ASSERT_TRUE(set.insert(i * step));
    for (std::uint64_t i = 1; i <= 1'000'000; ++i)
        ASSERT_TRUE(set.contains(i * step));
    EXPECT_FALSE(set.contains(3 * step / 2));
}

// ---- page requisites (config requisites, wget -p) ----

namespace {

resolved_requisite requisite(std::string_view url, requisite_kind kind = requisite_kind::image) {
    return {boost::urls::parse_uri(url).value(), kind};
}

/// What a crawl answers for each URL: a response, the page's links, its requisites. Unlisted URLs get an
/// empty HTML page.
struct served {
    test_response response = page();
    std::vector<std::string> links;
    std::vector<resolved_requisite> requisites;
};

served answering(test_response response) {
    served s;
    s.response = std::move(response);
    return s;
}

test_response with_type(std::string type, std::string body = "") {
    test_response r = page(200, std::move(body));
    r.content_type = std::move(type);
    return r;
}

/// Runs the crawl to its end as the loop does, and returns the URLs fetched (robots.txt included).
std::set<std::string> crawl_all(harness& h, std::map<std::string, served> site) {
    std::set<std::string> fetched;
    h->start();
    while (auto t = h->next()) {
        EXPECT_TRUE(h->begin_attempt(*t));
        h->fetch_started(*t);
        h->fetch_finished(*t);
        EXPECT_TRUE(fetched.insert(t->item.url).second) << t->item.url << " fetched twice";
        served answer = site[t->item.url];
        record r;
        switch (h->on_response(*t, answer.response.outcome(), r)) {
        case crawl_state::next_step::done:
            break;
        case crawl_state::next_step::parse_page: {
            resolved_links resolved;
            for (const auto& link : answer.links)
                resolved.urls.emplace_back(boost::urls::parse_uri(link).value().buffer());
            resolved.requisites = answer.requisites;
            h->on_links(*t, r, resolved);
            [[fallthrough]];
        }
        case crawl_state::next_step::record_ready:
            h->finish(*t, std::move(r));
            break;
        }
        t.reset();
        --h.unfinished;
    }
    EXPECT_EQ(h.unfinished, 0u) << "everything admitted was fetched or released";
    return fetched;
}

struct requisite_case {
    const char* name;
    std::function<void(crawler_config&)> adjust;
    std::vector<std::string> links;
    std::vector<std::string> requisites;
    std::set<std::string> fetched; // the exact set, root included
};

} // namespace

TEST(crawl_state_requisites, are_admitted_by_their_own_scope_rule) {
    const std::string root = "http://a.test/docs/";
    const std::vector<requisite_case> cases{
        {"off by default: none fetched",
         [](crawler_config& c) { c.requisites.enabled = false; },
         {},
         {"http://a.test/i.png"},
         {root}},
        {"the page's host",
         {},
         {},
         {"http://a.test/docs/i.png", "http://a.test/s.js", "http://www.a.test/w.png"},
         {root, "http://a.test/docs/i.png", "http://a.test/s.js", "http://www.a.test/w.png"}},
        {"another host, another port: dropped without span_hosts",
         {},
         {},
         {"http://cdn.test/i.png", "http://a.test:8080/i.png", "https://a.test/tls.png"},
         {root, "https://a.test/tls.png"}},
        {"span_hosts: any host",
         [](crawler_config& c) { c.requisites.span_hosts = true; },
         {},
         {"http://cdn.test/i.png", "http://a.test:8080/i.png"},
         {root, "http://cdn.test/i.png", "http://a.test:8080/i.png"}},
        {"span_hosts: exclude_domains still apply",
         [](crawler_config& c) {
             c.requisites.span_hosts = true;
             c.exclude_domains = {"cdn.test"};
         },
         {},
         {"http://img.cdn.test/i.png", "http://other.test/o.png"},
         {root, "http://other.test/o.png"}},
        {"span_hosts does not widen the links' scope",
         [](crawler_config& c) { c.requisites.span_hosts = true; },
         {"http://cdn.test/page.html"},
         {},
         {root}},
        {"exclude applies",
         [](crawler_config& c) { c.exclude = {"\\.js$"}; },
         {},
         {"http://a.test/s.js", "http://a.test/i.png"},
         {root, "http://a.test/i.png"}},
        {"include does not apply",
         [](crawler_config& c) { c.include = {"/docs/"}; },
         {"http://a.test/docs/in", "http://a.test/out"},
         {"http://a.test/static/i.png"},
         {root, "http://a.test/docs/in", "http://a.test/static/i.png"}},
        {"no_parent does not apply",
         [](crawler_config& c) { c.no_parent = true; },
         {"http://a.test/up"},
         {"http://a.test/static/i.png"},
         {root, "http://a.test/static/i.png"}},
        {"max_depth does not apply",
         [](crawler_config& c) { c.max_depth = 0; },
         {"http://a.test/docs/next"},
         {"http://a.test/i.png"},
         {root, "http://a.test/i.png"}},
        {"domains do not widen the requisites' hosts",
         [](crawler_config& c) { c.domains = {"cdn.test"}; },
         {"http://cdn.test/page"},
         {"http://cdn.test/i.png"},
         {root, "http://cdn.test/page"}},
        {"reject applies",
         [](crawler_config& c) { c.reject = {"gif"}; },
         {},
         {"http://a.test/i.gif", "http://a.test/i.png"},
         {root, "http://a.test/i.png"}},
        {"traps apply",
         [](crawler_config& c) { c.traps.max_url_length = 40; },
         {},
         {"http://a.test/i.png", "http://a.test/a-very-long-name-past-the-limit.png"},
         {root, "http://a.test/i.png"}},
        {"once: repeated, and the same URL as a link",
         {},
         {"http://a.test/docs/x.png"},
         {"http://a.test/docs/x.png", "http://a.test/i.png", "http://a.test/i.png"},
         {root, "http://a.test/docs/x.png", "http://a.test/i.png"}},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.name);
        harness h([&](crawler_config& config) {
            config.roots = {root};
            config.robots.obey = false;
            config.requisites.enabled = true;
            if (c.adjust)
                c.adjust(config);
        });
        served home;
        home.links = c.links;
        for (const auto& url : c.requisites)
            home.requisites.push_back(requisite(url));
        EXPECT_EQ(crawl_all(h, {{root, home}}), c.fetched);
    }
}

TEST(crawl_state_requisites, records_say_what_they_are_for_and_counters_count_them) {
    harness h([](crawler_config& c) {
        c.robots.obey = false;
        c.requisites.enabled = true;
        c.requisites.span_hosts = false;
    });
    served home;
    home.links = {"http://a.test/next"};
    home.requisites = {requisite("http://a.test/app.js", requisite_kind::script),
                       requisite("http://a.test/gone.png"), requisite("http://cdn.test/i.png")};
    served gone;
    gone.response = page(404);
    crawl_all(h, {{"http://a.test/", home}, {"http://a.test/gone.png", gone}});
    const auto* script = h.find("http://a.test/app.js");
    ASSERT_NE(script, nullptr);
    EXPECT_EQ(script->requisite, "script");
    EXPECT_EQ(script->referrer, "http://a.test/");
    EXPECT_EQ(script->depth, 1);
    EXPECT_EQ(h.find("http://a.test/gone.png")->requisite, "image");
    EXPECT_EQ(h.find("http://a.test/next")->requisite, "") << "a link is no requisite";
    EXPECT_EQ(h.find("http://a.test/")->num_urls, 1u) << "links only";
    auto& stats = h->result().stats;
    EXPECT_EQ(stats["requisites_queued"], 2u);
    EXPECT_EQ(stats["requisites_fetched"], 2u) << "the 404 is an answer too";
    EXPECT_EQ(stats["skipped_requisite_off_host"], 1u);
    EXPECT_EQ(stats["skipped_off_host"], 0u);
    EXPECT_NE(to_json_line(*script).find("\"requisite\":\"script\""), std::string::npos);
    EXPECT_EQ(to_json_line(*h.find("http://a.test/next")).find("requisite"), std::string::npos);
}

TEST(crawl_state_requisites, stylesheets_chain_and_nothing_else_is_read) {
    harness h([](crawler_config& c) {
        c.robots.obey = false;
        c.requisites.enabled = true;
    });
    served home;
    home.requisites = {requisite("http://a.test/css/site.css", requisite_kind::stylesheet),
                       requisite("http://a.test/plain.css", requisite_kind::stylesheet),
                       requisite("http://a.test/frame.html", requisite_kind::object)};
    served site_css =
        answering(with_type("text/css", "@import 'more.css';\nbody { background: url(../bg.png) }\n"
                                        "p { background: url(http://cdn.test/off.png) }"));
    served more_css =
        answering(with_type("text/css", "@import url(site.css); i { background: url('deep/i.png') }"));
    // Not text/css: a browser would not apply it, and its references are not read.
    served plain = answering(with_type("text/plain", "x { background: url(never.png) }"));
    served frame;
    frame.links = {"http://a.test/never-linked"};
    frame.requisites = {requisite("http://a.test/never.png")};
    const auto fetched = crawl_all(h, {{"http://a.test/", home},
                                       {"http://a.test/css/site.css", site_css},
                                       {"http://a.test/css/more.css", more_css},
                                       {"http://a.test/plain.css", plain},
                                       {"http://a.test/frame.html", frame}});
    EXPECT_EQ(fetched, (std::set<std::string>{"http://a.test/", "http://a.test/css/site.css",
                                              "http://a.test/plain.css", "http://a.test/frame.html",
                                              "http://a.test/css/more.css", "http://a.test/bg.png",
                                              "http://a.test/css/deep/i.png"}));
    const auto* more = h.find("http://a.test/css/more.css");
    ASSERT_NE(more, nullptr);
    EXPECT_EQ(more->requisite, "stylesheet");
    EXPECT_EQ(more->referrer, "http://a.test/css/site.css");
    EXPECT_EQ(more->depth, 2);
    EXPECT_EQ(more->num_urls, 2u) << "site.css (seen) and deep/i.png";
    EXPECT_EQ(more->num_new_urls, 1u);
    EXPECT_EQ(h.find("http://a.test/bg.png")->requisite, "style");
    EXPECT_EQ(h.find("http://a.test/css/site.css")->num_urls, 2u) << "cdn.test is off the host";
}

TEST(crawl_state_requisites, a_stylesheet_is_held_to_the_link_cap) {
    harness h([](crawler_config& c) {
        c.robots.obey = false;
        c.requisites.enabled = true;
        c.traps.max_links_per_page = 2;
    });
    served home;
    home.requisites = {requisite("http://a.test/s.css", requisite_kind::stylesheet)};
    const auto fetched =
        crawl_all(h, {{"http://a.test/", home},
                      {"http://a.test/s.css",
                       answering(with_type("text/css", "a{background:url(1)} b{background:url(2)}"
                                                       " i{background:url(3)} p{background:url(4)}"))}});
    EXPECT_EQ(fetched, (std::set<std::string>{"http://a.test/", "http://a.test/s.css", "http://a.test/1",
                                              "http://a.test/2"}));
    EXPECT_EQ(h.find("http://a.test/s.css")->links_dropped, 2u);
    EXPECT_EQ(h->result().stats["skipped_links_over_page_cap"], 2u);
}

TEST(crawl_state_requisites, a_redirected_requisite_stays_one_under_the_same_rule) {
    harness h([](crawler_config& c) {
        c.robots.obey = false;
        c.requisites.enabled = true;
        c.max_depth = 0;
    });
    served home;
    home.requisites = {requisite("http://a.test/logo", requisite_kind::icon),
                       requisite("http://a.test/moved", requisite_kind::image)};
    const auto fetched =
        crawl_all(h, {{"http://a.test/", home},
                      {"http://a.test/logo", answering(redirect(302, "/static/logo.ico"))},
                      {"http://a.test/moved", answering(redirect(301, "http://cdn.test/m.png"))}});
    EXPECT_EQ(fetched, (std::set<std::string>{"http://a.test/", "http://a.test/logo", "http://a.test/moved",
                                              "http://a.test/static/logo.ico"}));
    EXPECT_EQ(h.find("http://a.test/static/logo.ico")->requisite, "icon");
    EXPECT_EQ(h->result().stats["skipped_requisite_off_host"], 1u);
}

TEST(crawl_state_requisites, robots_txt_denies_them_like_any_url) {
    harness h([](crawler_config& c) { c.requisites.enabled = true; });
    served home;
    home.requisites = {requisite("http://a.test/private/i.png"), requisite("http://a.test/i.png")};
    const auto fetched =
        crawl_all(h, {{"http://a.test/robots.txt", answering(robots("User-agent: *\nDisallow: /private/\n"))},
                      {"http://a.test/", home}});
    EXPECT_EQ(fetched,
              (std::set<std::string>{"http://a.test/robots.txt", "http://a.test/", "http://a.test/i.png"}));
    const auto* denied = h.find("http://a.test/private/i.png");
    ASSERT_NE(denied, nullptr);
    EXPECT_EQ(denied->error, error::robots_denied);
    EXPECT_EQ(denied->requisite, "image");
}

TEST(crawl_state_requisites, max_pages_counts_them) {
    harness h([](crawler_config& c) {
        c.robots.obey = false;
        c.requisites.enabled = true;
        c.max_pages = 2;
    });
    served home;
    home.requisites = {requisite("http://a.test/1.png"), requisite("http://a.test/2.png")};
    EXPECT_EQ(crawl_all(h, {{"http://a.test/", home}}),
              (std::set<std::string>{"http://a.test/", "http://a.test/1.png"}));
    EXPECT_EQ(h->result().stats["skipped_max_pages"], 1u);
}

TEST(crawl_state_requisites, a_durable_crawl_keeps_their_kind) {
    harness h(
        [](crawler_config& c) {
            c.robots.obey = false;
            c.requisites.enabled = true;
        },
        true, 64);
    h->start();
    auto root = h.take("http://a.test/");
    h->take_batch();
    h->fetch_finished(root);
    record r;
    auto response = page();
    ASSERT_EQ(h->on_response(root, response.outcome(), r), crawl_state::next_step::parse_page);
    resolved_links links;
    links.requisites = {requisite("http://a.test/site.css", requisite_kind::stylesheet)};
    h->on_links(root, r, links);
    h->finish(root, std::move(r));
    const auto batch = h->take_batch();
    ASSERT_EQ(batch.waiting.size(), 1u);
    const auto decoded = decode_work_item(batch.waiting[0].item);
    ASSERT_TRUE(decoded);
    EXPECT_EQ(decoded->kind, item_kind::requisite);
    EXPECT_EQ(decoded->requisite, requisite_kind::stylesheet);
    EXPECT_EQ(decoded->depth, 1);
    // A resumed crawl hands it out as a requisite: a stylesheet whose references are read, not its links.
    harness second(
        [](crawler_config& c) {
            c.robots.obey = false;
            c.requisites.enabled = true;
        },
        true, 64);
    restored_state restored;
    restored.hosts = {"a.test"};
    restored.waiting = {1};
    restored.next_seq = {3};
    second->seen_set().insert(url_fingerprint("http://a.test/", 42));
    second->seen_set().insert(url_fingerprint("http://a.test/site.css", 42));
    second->restore(restored);
    second->start();
    second->take_refills();
    second->on_refill(0, {{2, batch.waiting[0].item}});
    auto css = second.take("http://a.test/site.css");
    EXPECT_EQ(css.item.kind, item_kind::requisite);
    second.answer(css, with_type("text/css", "a { background: url(a.png) }"));
    auto image = second.take("http://a.test/a.png");
    EXPECT_EQ(image.item.requisite, requisite_kind::style);
    EXPECT_EQ(second.find("http://a.test/site.css")->requisite, "stylesheet");
}

TEST(work_item_codec, keeps_every_requisite_kind_and_rejects_a_kind_on_a_page) {
    for (int kind = 0; kind <= static_cast<int>(requisite_kind::style); ++kind) {
        work_item item;
        item.url = "http://a.test/r";
        item.kind = item_kind::requisite;
        item.requisite = static_cast<requisite_kind>(kind);
        const auto back = decode_work_item(encode(item));
        ASSERT_TRUE(back);
        EXPECT_EQ(back->kind, item_kind::requisite);
        EXPECT_EQ(back->requisite, item.requisite);
    }
    work_item item;
    item.url = "http://a.test/r";
    item.kind = item_kind::requisite;
    item.requisite = requisite_kind::style;
    auto bytes = encode(item);
    bytes[0] = static_cast<char>(bytes[0] & ~0x0f); // the same flags on a page
    EXPECT_FALSE(decode_work_item(bytes));
}

TEST(record_codec, keeps_the_requisite_kind_and_reads_older_records) {
    record r;
    r.url = "http://a.test/i.png";
    r.status = 200;
    r.from_sitemap = true;
    for (const char* kind : {"", "image", "style", "embed"}) {
        r.requisite = kind;
        const auto back = decode_record(encode(r));
        ASSERT_TRUE(back);
        EXPECT_EQ(back->requisite, kind);
        EXPECT_TRUE(back->from_sitemap);
    }
}

TEST(record_codec, keeps_the_protocol_and_reads_records_written_before_it) {
    record r;
    r.url = "https://a.test/";
    r.status = 200;
    r.elapsed = std::chrono::microseconds(1234);
    // protocol, then the bytes a record without it (as written before issue 24) ends with
    for (const char* protocol : {"", "http/1.1", "h2"}) {
        r.protocol = protocol;
        const auto back = decode_record(encode(r));
        ASSERT_TRUE(back) << protocol;
        EXPECT_EQ(back->protocol, protocol);
        EXPECT_EQ(back->elapsed, r.elapsed) << protocol;
    }
    r.protocol.clear();
    auto older = encode(r);
    older.pop_back(); // the protocol's varint (0): what an older build wrote
    const auto old_back = decode_record(older);
    ASSERT_TRUE(old_back);
    EXPECT_EQ(old_back->protocol, "");
    EXPECT_EQ(old_back->elapsed, r.elapsed);
    EXPECT_EQ(old_back->url, r.url);
    auto unknown = encode(r);
    unknown.back() = 3; // no such protocol
    EXPECT_FALSE(decode_record(unknown));
    EXPECT_FALSE(decode_record(encode(r) + '\0')) << "bytes after the protocol";
}

TEST(crawl_definition, names_a_change_of_the_requisite_options) {
    crawler_config before;
    before.roots = {"http://a.test/"};
    crawler_config after = before;
    EXPECT_FALSE(describe_definition_change(crawl_definition_json(before), crawl_definition_json(after)));
    after.requisites.enabled = true;
    const auto change =
        describe_definition_change(crawl_definition_json(before), crawl_definition_json(after));
    ASSERT_TRUE(change);
    EXPECT_NE(change->find("requisites.enabled changed: was unset, now true"), std::string::npos) << *change;
    before = after;
    after.requisites.span_hosts = true;
    const auto spanned =
        describe_definition_change(crawl_definition_json(before), crawl_definition_json(after));
    ASSERT_TRUE(spanned);
    EXPECT_NE(spanned->find("requisites.span_hosts changed: was false, now true"), std::string::npos)
        << *spanned;
}
