// Budgets and retry statuses of issue 16, decided by the sans-io crawl state on a manual clock: quota,
// max_time, random_wait, retry.statuses; and the pieces the fetcher uses for limit_rate and accept_types.
#include "state/crawl_state.hpp"

#include "http/content_type.hpp"
#include "http/rate_limiter.hpp"
#include "support/state_harness.hpp"

#include "policy/scope.hpp"
#include <asiocrawl/error.hpp>

#include <gtest/gtest.h>

#include <set>

using namespace asiocrawl;
using namespace asiocrawl::detail;
using namespace asiocrawl::test;
using namespace std::chrono_literals;

TEST(retry_statuses, the_default_retries_429_and_503_only) {
    for (const int status : {429, 503, 500, 502, 404}) {
        state_harness h([](crawler_config& c) { c.max_tries = 2; });
        h->start();
        auto t = h.take("http://a.test/");
        h.answer(*t, answer_of(status));
        const bool retried = h.records.empty();
        EXPECT_EQ(retried, status == 429 || status == 503) << status;
    }
}

TEST(retry_statuses, a_configured_list_replaces_the_default) {
    state_harness h([](crawler_config& c) {
        c.max_tries = 2;
        c.retry.statuses = {500, 502};
    });
    h->start();
    auto t = h.take("http://a.test/");
    h.answer(*t, answer_of(502));
    EXPECT_TRUE(h.records.empty()) << "502 is retried";
    EXPECT_FALSE(h->next()) << "after its backoff";
    manual_now += 100ms;
    t = h.take("http://a.test/");
    h.answer(*t, answer_of(502));
    ASSERT_EQ(h.records.size(), 1u);
    EXPECT_EQ(h.records[0].error, error::retry_limit) << "still 502 after max_tries";
    EXPECT_EQ(h.records[0].tries, 2);

    state_harness h503([](crawler_config& c) { c.retry.statuses = {500}; });
    h503->start();
    t = h503.take("http://a.test/");
    h503.answer(*t, answer_of(503));
    ASSERT_EQ(h503.records.size(), 1u) << "503 is an answer when not listed";
    EXPECT_FALSE(h503.records[0].error);
    EXPECT_EQ(h503.records[0].status, 503);
}

TEST(budgets, the_quota_is_spent_once_the_bytes_fetched_reach_it) {
    state_harness h([](crawler_config& c) { c.quota = 100; });
    h->start();
    EXPECT_FALSE(h->out_of_budget());
    auto t = h.take("http://a.test/");
    h.answer(*t, answer_of(200, std::string(60, 'x')), {"http://a.test/b", "http://a.test/c"});
    EXPECT_FALSE(h->out_of_budget()) << "60 of 100 bytes";
    t = h.take("http://a.test/b");
    h.answer(*t, answer_of(200, std::string(40, 'x')));
    EXPECT_TRUE(h->out_of_budget()) << "100 of 100 bytes";
    EXPECT_EQ(h->result().stats["stopped_quota"], 1u);
    h->stop();
    EXPECT_FALSE(h->next()) << "what waits is the todo";
}

TEST(budgets, max_time_wakes_the_loop_at_its_end) {
    state_harness h([](crawler_config& c) {
        c.max_time = 5s;
        c.politeness.max_per_host = 1;
    });
    h->start();
    auto t = h.take("http://a.test/");
    // Nothing else can start while the only host is busy: the deadline is the next wake-up.
    ASSERT_TRUE(h->next_wakeup());
    EXPECT_EQ(*h->next_wakeup(), manual_now + 5s);
    manual_now += 4999ms;
    EXPECT_FALSE(h->out_of_budget());
    manual_now += 1ms;
    EXPECT_TRUE(h->out_of_budget());
    EXPECT_EQ(h->result().stats["stopped_max_time"], 1u);
    h.answer(*t, answer_of(200));
}

TEST(budgets, no_budget_is_never_spent) {
    state_harness h;
    h->start();
    auto t = h.take("http://a.test/");
    h.answer(*t, answer_of(200, std::string(1 << 20, 'x')));
    manual_now += 1000h;
    EXPECT_FALSE(h->out_of_budget());
    EXPECT_FALSE(h->next_wakeup());
}

TEST(random_wait, each_wait_is_drawn_between_half_and_one_and_a_half_times_the_delay) {
    std::vector<std::string> links;
    for (int i = 0; i < 40; ++i)
        links.push_back("http://a.test/" + std::to_string(i));
    for (const bool random : {false, true}) {
        state_harness h([random](crawler_config& c) {
            c.politeness.delay = 1000ms;
            c.politeness.random_wait = random;
        });
        h->start();
        auto t = h.take("http://a.test/");
        h.answer(*t, answer_of(200), links);
        std::set<std::chrono::milliseconds::rep> waits;
        for (int i = 0; i < 40; ++i) {
            const auto started = manual_now;
            auto wake = h->next_wakeup();
            ASSERT_TRUE(wake);
            manual_now = std::max(manual_now, *wake);
            t = h.take();
            ASSERT_TRUE(t);
            h.answer(*t, answer_of(200));
            if (i == 0)
                continue; // the first waits for the root's start
            const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(manual_now - started);
            EXPECT_GE(wait, 500ms);
            EXPECT_LE(wait, 1500ms);
            waits.insert(wait.count());
        }
        if (random)
            EXPECT_GT(waits.size(), 10u) << "the waits vary";
        else
            EXPECT_EQ(waits, (std::set<std::chrono::milliseconds::rep>{1000})) << "a fixed beat";
    }
}

TEST(rate_limiter, holds_readers_to_the_rate_after_the_burst) {
    using clock_type = rate_limiter::clock_type;
    rate_limiter limiter(1000, 500); // 1000 B/s, 500 B at once
    const clock_type::time_point t0{std::chrono::seconds(10)};
    EXPECT_EQ(limiter.charge(500, t0), clock_type::duration::zero()) << "the burst";
    EXPECT_EQ(limiter.charge(250, t0), std::chrono::duration_cast<clock_type::duration>(250ms)) << "in debt";
    // Two readers in debt together wait until both are paid for.
    EXPECT_EQ(limiter.charge(250, t0), std::chrono::duration_cast<clock_type::duration>(500ms));
    EXPECT_EQ(limiter.charge(0, t0 + 500ms), clock_type::duration::zero()) << "paid";
    // Idle time refills up to the burst, not beyond.
    EXPECT_EQ(limiter.charge(500, t0 + 10s), clock_type::duration::zero());
    EXPECT_GT(limiter.charge(1, t0 + 10s), clock_type::duration::zero());
}

TEST(media_type_accepted, html_and_untyped_answers_always_pass) {
    const std::vector<std::string> images{"image/*", "application/PDF"};
    struct row {
        const char* header;
        bool accepted;
    };
    for (const auto& [header, accepted] : std::vector<row>{
             {"image/png", true},
             {"IMAGE/JPEG; q=1", true},
             {"application/pdf", true},
             {"application/pdfx", false},
             {"text/plain; charset=utf-8", false},
             {"text/html; charset=utf-8", true},
             {"application/xhtml+xml", true},
             {"", true},
             {"video/mp4", false},
         })
        EXPECT_EQ(media_type_accepted(header, images), accepted) << header;
    EXPECT_TRUE(media_type_accepted("video/mp4", {})) << "no list: everything";
    EXPECT_TRUE(media_type_accepted("video/mp4", {"*/*"}));
}

TEST(type_rejected, is_a_record_but_not_a_failure) {
    state_harness h;
    h->start();
    auto t = h.take("http://a.test/");
    auto rejected = answer_of(200, "", "video/mp4");
    rejected.error = error::type_rejected;
    h.answer(*t, rejected);
    ASSERT_EQ(h.records.size(), 1u);
    EXPECT_EQ(h.records[0].status, 200);
    EXPECT_EQ(h.records[0].content_type, "video/mp4");
    EXPECT_EQ(h.records[0].error, error::type_rejected);
    EXPECT_EQ(failure_class(h.records[0]), "");
    EXPECT_EQ(h->result().stats["type_rejected"], 1u);
    EXPECT_EQ(h->result().stats.count("fail"), 0u);
    EXPECT_EQ(h->progress().failures, 0u);
}

// ---- seeds (input_file) ----

TEST(seed_splitter, cuts_lines_across_chunks_and_counts_bytes_and_lines) {
    seed_splitter splitter;
    seed_chunk first;
    const std::string part1 = "# seeds\nhttp://a.test/\r\n\n   \n", partial = "http://b.te";
    splitter.feed(part1 + partial, first);
    ASSERT_EQ(first.lines.size(), 1u);
    EXPECT_EQ(first.lines[0].text, "http://a.test/");
    EXPECT_EQ(first.lines[0].line, 2u);
    EXPECT_EQ(first.position.offset, part1.size()) << "past the last complete line, not the partial one";
    EXPECT_EQ(first.position.line, 5u);
    seed_chunk second;
    const std::string part2 = "st/x\n  #indented comment\n\thttp://c.test/ \n";
    splitter.feed(part2, second);
    ASSERT_EQ(second.lines.size(), 2u);
    EXPECT_EQ(second.lines[0].text, "http://b.test/x");
    EXPECT_EQ(second.lines[0].line, 5u);
    EXPECT_EQ(second.lines[1].text, "http://c.test/");
    EXPECT_EQ(second.lines[1].line, 7u);
    seed_chunk last;
    const std::string part3 = "http://d.test/";
    splitter.feed(part3, last);
    EXPECT_TRUE(last.lines.empty());
    splitter.finish(last);
    ASSERT_EQ(last.lines.size(), 1u) << "a last line without a line break counts";
    EXPECT_EQ(last.lines[0].line, 8u);
    EXPECT_TRUE(last.end);
    EXPECT_EQ(last.position.offset, part1.size() + partial.size() + part2.size() + part3.size());
}

TEST(seed_splitter, a_line_too_long_is_reported_and_skipped_without_being_held) {
    seed_splitter splitter({}, 16);
    seed_chunk out;
    splitter.feed("http://a.test/\n" + std::string(40, 'x'), out);
    splitter.feed(std::string(1000, 'y') + "\nhttp://b.test/\n", out);
    ASSERT_EQ(out.lines.size(), 2u);
    EXPECT_EQ(out.lines[1].text, "http://b.test/");
    EXPECT_EQ(out.lines[1].line, 3u);
    ASSERT_EQ(out.problems.size(), 1u);
    EXPECT_EQ(out.problems[0], "line 2: longer than 16 bytes, skipped");
}

TEST(seed_splitter, resumes_at_a_kept_position) {
    const seed_position kept{1234, 56};
    EXPECT_EQ(seed_position::from_text(kept.to_text()).offset, 1234u);
    EXPECT_EQ(seed_position::from_text(kept.to_text()).line, 56u);
    EXPECT_EQ(seed_position::from_text("garbage").offset, 0u);
    EXPECT_FALSE(seed_position::from_text(kept.to_text()).end);
    const seed_position at_end{1234, 56, true};
    EXPECT_EQ(at_end.to_text(), "1234 56 end");
    EXPECT_TRUE(seed_position::from_text(at_end.to_text()).end);
    EXPECT_EQ(seed_position::from_text(at_end.to_text()).line, 56u);
    seed_splitter splitter(kept);
    seed_chunk out;
    splitter.feed("http://a.test/\n", out);
    EXPECT_EQ(out.lines.at(0).line, 56u);
    EXPECT_EQ(out.position.offset, 1249u);
}

namespace {

seed_chunk seeds_of(std::vector<std::string> texts, bool end, seed_position position = {}) {
    seed_chunk chunk;
    std::uint64_t line = position.line;
    for (auto& text : texts)
        chunk.lines.push_back({std::move(text), line++});
    chunk.position = {position.offset + 100, line};
    chunk.end = end;
    return chunk;
}

} // namespace

TEST(seeds, are_admitted_as_roots_and_the_crawl_waits_for_the_end_of_the_file) {
    state_harness h([](crawler_config& c) {
        c.roots.clear();
        c.input_file = "seeds.txt";
    });
    h->start();
    EXPECT_EQ(h.unfinished, 1u) << "the seed file itself: the crawl may not end before it does";
    EXPECT_TRUE(h->wants_seeds(h.unfinished));
    h->on_seeds(seeds_of({"http://a.test/", "not a url", "mailto:x@b.test", "b.test/x"}, false));
    EXPECT_EQ(h.unfinished, 3u) << "two seeds admitted";
    EXPECT_EQ(h->result().stats["skipped_invalid_seed"], 2u);
    auto a = h.take("http://a.test/");
    // A seed's host is in scope as a root's is: a link to b.test is followed, one to c.test is not.
    h.answer(*a, answer_of(200), {"http://b.test/y", "http://c.test/"});
    EXPECT_EQ(h->result().stats["skipped_off_host"], 1u);
    EXPECT_EQ(h.unfinished, 3u);
    h->on_seeds(seeds_of({}, true));
    EXPECT_FALSE(h->wants_seeds(h.unfinished));
    EXPECT_EQ(h.unfinished, 2u) << "the file's unit of work is released at its end";
}

TEST(seeds, are_pulled_only_while_the_frontier_runs_low) {
    state_harness h([](crawler_config& c) {
        c.roots.clear();
        c.input_file = "seeds.txt";
        c.max_tasks = 10;
    });
    h->start();
    std::vector<std::string> many;
    for (int i = 0; i < 1100; ++i)
        many.push_back("http://h" + std::to_string(i) + ".test/");
    h->on_seeds(seeds_of(many, false));
    EXPECT_FALSE(h->wants_seeds(h.unfinished)) << "1100 waiting is enough";
    for (int i = 0; i < 100; ++i) {
        auto t = h.take();
        h.answer(*t, answer_of(200));
    }
    EXPECT_TRUE(h->wants_seeds(h.unfinished)) << "below the low-water mark";
}

TEST(seeds, a_stop_releases_the_seed_file) {
    state_harness h([](crawler_config& c) { c.input_file = "seeds.txt"; });
    h->start();
    EXPECT_EQ(h.unfinished, 2u);
    h->stop();
    EXPECT_FALSE(h->wants_seeds(h.unfinished));
    EXPECT_EQ(h.unfinished, 1u) << "only the root, which a stop leaves as todo";
}

TEST(seeds, a_durable_crawl_commits_the_position_with_the_seeds_and_resumes_there) {
    state_harness h([](crawler_config& c) { c.input_file = "seeds.txt"; }, true, 64);
    h->start();
    h->take_batch();
    h->on_seeds(seeds_of({"http://b.test/"}, false, {0, 1}));
    auto batch = h->take_batch();
    EXPECT_EQ(batch.seed_position, "100 2");
    EXPECT_EQ(batch.fingerprints.size(), 1u) << "in the same commit";

    state_harness resumed([](crawler_config& c) { c.input_file = "seeds.txt"; }, true, 64);
    restored_state restored;
    restored.seed_position = batch.seed_position;
    resumed->restore(restored);
    EXPECT_EQ(resumed->seeds_read().offset, 100u);
    EXPECT_EQ(resumed->seeds_read().line, 2u);
    EXPECT_FALSE(resumed->seeds_read().end)
        << "a crawl whose seed file was not read to its end is unfinished";

    // The last chunk: the position says the file ended, which a re-crawl reads as "this crawl finished".
    h->on_seeds(seeds_of({"http://c.test/"}, true, {100, 2}));
    EXPECT_TRUE(h->take_batch().seed_position.ends_with(" end"));
}

// ---- autothrottle ----

TEST(autothrottle, follows_latency_toward_the_target_concurrency) {
    autothrottle_config config;
    config.enabled = true;
    config.start_delay = 1000ms;
    config.max_delay = 20s;
    config.target_concurrency = 1;
    autothrottle throttle(config, 0ms);
    struct step {
        std::chrono::milliseconds latency;
        bool ok;
        std::chrono::milliseconds delay; // after the step
    };
    const std::vector<step> steps{
        {200ms, true, 600ms},   // mean of 1000 and 200
        {200ms, true, 400ms},   // mean of 600 and 200
        {200ms, false, 400ms},  // an error answer never lowers it
        {10s, true, 10s},       // never below latency / target
        {10s, false, 10s},      // nor raised past that by an error
        {100s, false, 20s},     // an error may raise it, up to max_delay
        {100ms, true, 10050ms}, // mean of 20000 and 100
    };
    EXPECT_EQ(throttle.delay(0), 1000ms);
    for (const auto& s : steps)
        EXPECT_EQ(throttle.observe(0, s.latency, s.ok), s.delay) << s.latency.count() << " ms";
    EXPECT_EQ(throttle.delay(1), 1000ms) << "hosts adapt on their own";
}

TEST(autothrottle, never_goes_below_the_configured_delay_or_crawl_delay) {
    autothrottle_config config;
    config.enabled = true;
    config.start_delay = 100ms;
    config.max_delay = 1s;
    config.target_concurrency = 2;
    autothrottle throttle(config, 300ms);
    EXPECT_EQ(throttle.delay(0), 300ms) << "the configured delay beats start_delay";
    for (int i = 0; i < 10; ++i)
        throttle.observe(0, 10ms, true);
    EXPECT_EQ(throttle.delay(0), 300ms);
    EXPECT_EQ(throttle.set_floor(0, 5s), 5s) << "a Crawl-delay beats max_delay too";
    EXPECT_EQ(throttle.observe(0, 10ms, true), 5s);
    EXPECT_EQ(throttle.observe(0, 4s, true), 5s) << "latency 4 s / 2 = 2 s, under the floor";
}

TEST(autothrottle, spaces_a_hosts_requests_by_its_measured_latency) {
    std::vector<std::string> links;
    for (int i = 0; i < 5; ++i)
        links.push_back("http://a.test/" + std::to_string(i));
    state_harness h([](crawler_config& c) {
        c.politeness.autothrottle.enabled = true;
        c.politeness.autothrottle.start_delay = 2s;
        c.politeness.autothrottle.target_concurrency = 1;
    });
    h->start();
    auto t = h.take("http://a.test/");
    manual_now += 400ms; // the answer took 400 ms
    h.answer(*t, answer_of(200), links);
    // (2000 + 400) / 2 = 1200 ms after the previous start.
    EXPECT_EQ(*h->next_wakeup(), manual_now - 400ms + 1200ms);
    manual_now = *h->next_wakeup();
    t = h.take();
    manual_now += 400ms;
    h.answer(*t, answer_of(200));
    EXPECT_EQ(*h->next_wakeup(), manual_now - 400ms + 800ms) << "(1200 + 400) / 2";

    state_harness off;
    off->start();
    t = off.take("http://a.test/");
    manual_now += 400ms;
    off.answer(*t, answer_of(200), links);
    EXPECT_TRUE(off->next()) << "off by default: no delay";
}

TEST(scope_seeds, a_seed_extends_the_scope_as_a_root_does) {
    const auto check = [](const scope& s, const char* url) {
        return s.check(boost::urls::parse_uri(url).value());
    };
    crawler_config strict;
    scope s({boost::urls::parse_uri("http://a.test/").value()}, strict);
    EXPECT_EQ(check(s, "http://b.test/y"), scope_verdict::off_host);
    s.add_seed(boost::urls::parse_uri("http://www.b.test/x").value());
    EXPECT_EQ(check(s, "http://b.test/y"), scope_verdict::in_scope) << "www. ignored, as for roots";
    EXPECT_EQ(check(s, "http://www.b.test/y"), scope_verdict::in_scope);
    EXPECT_EQ(check(s, "http://b.test:8080/y"), scope_verdict::off_host) << "another port";
    EXPECT_EQ(check(s, "http://c.test/"), scope_verdict::off_host);
    s.add_seed(boost::urls::parse_uri("http://d.test/").value());
    EXPECT_EQ(check(s, "http://www.d.test/z"), scope_verdict::in_scope);

    crawler_config lenient;
    lenient.scope = host_scope::lenient;
    scope l({boost::urls::parse_uri("http://a.test/").value()}, lenient);
    l.add_seed(boost::urls::parse_uri("http://news.example.co.uk/").value());
    EXPECT_EQ(check(l, "http://shop.example.co.uk/"), scope_verdict::in_scope);
    EXPECT_EQ(check(l, "http://other.co.uk/"), scope_verdict::off_host);

    crawler_config below;
    below.no_parent = true;
    scope n({}, below);
    n.add_seed(boost::urls::parse_uri("http://b.test/docs/a.html").value());
    n.add_seed(boost::urls::parse_uri("http://b.test/docs/v2/b.html").value());
    EXPECT_EQ(check(n, "http://b.test/docs/v1/x"), scope_verdict::in_scope);
    EXPECT_EQ(check(n, "http://b.test/other"), scope_verdict::parent_directory);
}
