// Crawls with a state directory, in process, against a generated site with ground truth: a durable crawl
// requests exactly what a memory-only one does; stopped (gracefully or not) and started again, it goes on
// where it was; a directory that belongs to another crawl, or to nothing, is refused. The kill -9 test with
// the real CLI is resume_kill_test.cpp.
#include <asiocrawl/crawler.hpp>

#include "support/loopback.hpp"
#include "support/state_harness.hpp"
#include "support/temp_dir.hpp"

#include "state/fetch_history.hpp"
#include "store/state_store.hpp"

#include <asiocrawl/error.hpp>
#include <asiocrawl_demo/site.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include <unistd.h>

namespace asio = boost::asio;
namespace fs = std::filesystem;
using namespace asiocrawl;
using namespace asiocrawl::test;

namespace {

struct durable_crawl : ::testing::Test {
    demo::site site = demo::generate_site({.pages = 120, .seed = 7});
    temp_dir dir{"durable-crawl"};
    fs::path state_dir = dir.path / "state";
    std::map<std::string, int> requests;          // target -> times requested, over every run
    unsigned short port = 0;                      // every run serves the site on the same port: the same root
    std::function<void(std::string_view)> on_log; // the crawler's messages from info up, when set

    crawler_config config_for(std::uint16_t port) const {
        crawler_config config;
        config.roots = {"http://127.0.0.1:" + std::to_string(port) + "/"};
        config.max_tasks = 4;
        config.politeness.max_per_host = 4;
        config.state.dir = state_dir.string();
        return config;
    }

    struct run_result {
        std::optional<report> result;
        /// async_run's code, and report::failure: what failed.
        boost::system::error_code failure;
        std::string detail;
        std::vector<record> streamed;
    };

    /// One run of the crawl against a fresh server on the site. `after_records`: stop (or abort) the crawl
    /// once that many records were made. `adjust` changes the config.
    run_result run(std::optional<std::size_t> after_records = std::nullopt, bool abort = false,
                   const std::function<void(crawler_config&)>& adjust = {}) {
        asio::io_context ctx;
        demo::http_server server{ctx.get_executor(), demo::serve_site(site), port};
        port = server.port();
        auto config = config_for(port);
        if (adjust)
            adjust(config);
        crawler c{ctx.get_executor(), config};
        if (on_log)
            c.set_logger({log_level::info, [this](log_level, std::string_view m) { on_log(m); }});
        else if (std::getenv("DURABLE_DEBUG"))
            c.set_logger({log_level::debug, [](log_level, std::string_view m) {
                              std::fprintf(stderr, "%.*s\n", (int)m.size(), m.data());
                          }});
        run_result out;
        c.set_record_sink([&](const record& r) {
            out.streamed.push_back(r);
            if (after_records && out.streamed.size() == *after_records)
                abort ? c.abort() : c.stop();
        });
        c.async_run([&](boost::system::error_code ec, report r) {
            out.failure = ec;
            out.detail = r.failure;
            if (!ec)
                out.result = std::move(r);
            server.stop();
        });
        run_bounded(ctx);
        for (const auto& r : server.log())
            if (r.target != "/robots.txt")
                ++requests[r.target];
        return out;
    }

    std::set<std::string> requested() const {
        std::set<std::string> out;
        for (const auto& [target, times] : requests)
            out.insert(target);
        return out;
    }
    /// Targets expected but never requested, and requested but not expected.
    std::string difference() const {
        std::string out;
        const auto got = requested();
        for (const auto& t : site.expected_requests)
            if (!got.contains(t))
                out += " missing " + t;
        for (const auto& t : got)
            if (!site.expected_requests.contains(t))
                out += " unexpected " + t;
        return out;
    }
    std::size_t fetched_twice() const {
        std::size_t n = 0;
        for (const auto& [target, times] : requests)
            n += times > 1 ? static_cast<std::size_t>(times - 1) : 0;
        return n;
    }
};

} // namespace

TEST_F(durable_crawl, requests_exactly_what_a_memory_crawl_does) {
    const auto first = run();
    ASSERT_FALSE(first.failure) << first.detail;
    EXPECT_EQ(requested(), site.expected_requests) << difference();
    EXPECT_EQ(fetched_twice(), 0u);
    EXPECT_EQ(first.result->todo, 0u);
    EXPECT_EQ(first.result->runs, 1u);
    EXPECT_EQ(first.result->done, site.expected_requests.size());
    EXPECT_TRUE(fs::exists(state_dir / "ASIOCRAWL_STATE"));
}

TEST_F(durable_crawl, stopped_and_started_again_it_fetches_nothing_twice) {
    const auto first = run(40);
    ASSERT_FALSE(first.failure) << first.detail;
    EXPECT_GT(first.result->todo, 0u) << "the first run was stopped before the end";
    const auto second = run();
    ASSERT_FALSE(second.failure) << second.detail;
    EXPECT_EQ(requested(), site.expected_requests) << difference();
    EXPECT_EQ(fetched_twice(), 0u) << "a graceful stop finishes and commits what is in flight";
    EXPECT_EQ(second.result->todo, 0u);
    EXPECT_EQ(second.result->runs, 2u);
    EXPECT_EQ(second.result->done, site.expected_requests.size()) << "the report counts the whole crawl";
    EXPECT_EQ(second.result->records.size(), site.expected_requests.size())
        << "the classic report lists the records of both runs";
    EXPECT_EQ(first.streamed.size() + second.streamed.size(), site.expected_requests.size());
}

TEST_F(durable_crawl, aborted_and_started_again_only_what_was_in_flight_is_fetched_twice) {
    const auto first = run(30, true);
    ASSERT_FALSE(first.failure) << first.detail;
    const auto second = run();
    ASSERT_FALSE(second.failure) << second.detail;
    EXPECT_EQ(requested(), site.expected_requests) << difference();
    EXPECT_LE(fetched_twice(), 4u) << "at most max_tasks fetches were in flight at the abort";
    EXPECT_EQ(second.result->todo, 0u);
}

TEST_F(durable_crawl, a_finished_crawl_started_again_has_nothing_to_do) {
    ASSERT_FALSE(run().failure);
    requests.clear();
    const auto again = run();
    ASSERT_FALSE(again.failure) << again.detail;
    EXPECT_TRUE(requests.empty()) << "nothing is fetched again";
    EXPECT_TRUE(again.streamed.empty());
    EXPECT_EQ(again.result->done, site.expected_requests.size());
    EXPECT_EQ(again.result->runs, 2u);
}

TEST_F(durable_crawl, waiting_urls_beyond_the_window_come_back_from_disk_in_order) {
    const auto first = run(std::nullopt, false, [](crawler_config& c) {
        c.state.window = 2;
        c.max_tasks = 2;
    });
    ASSERT_FALSE(first.failure) << first.detail;
    EXPECT_EQ(requested(), site.expected_requests) << difference();
    EXPECT_EQ(fetched_twice(), 0u);
}

TEST_F(durable_crawl, a_changed_definition_is_refused_and_named) {
    ASSERT_FALSE(run(10).failure);
    const auto changed = run(std::nullopt, false, [](crawler_config& c) { c.exclude = {"\\.pdf$"}; });
    ASSERT_TRUE(changed.failure);
    EXPECT_EQ(changed.failure, error::state_mismatch);
    const auto message = changed.detail;
    EXPECT_NE(message.find("exclude changed"), std::string::npos) << message;
    EXPECT_NE(message.find("--state-reset"), std::string::npos) << message;
    EXPECT_TRUE(changed.streamed.empty()) << "nothing was fetched";
}

TEST_F(durable_crawl, a_budget_may_change_between_runs) {
    ASSERT_FALSE(run(10).failure);
    const auto second = run(std::nullopt, false, [](crawler_config& c) {
        c.max_tasks = 2;
        c.max_pages = 100'000;
    });
    ASSERT_FALSE(second.failure) << second.detail;
    EXPECT_EQ(requested(), site.expected_requests) << difference();
}

TEST_F(durable_crawl, state_reset_starts_over) {
    ASSERT_FALSE(run().failure);
    const auto changed = run(std::nullopt, false, [](crawler_config& c) {
        c.exclude = {"never-matches"};
        c.state.reset = true;
    });
    ASSERT_FALSE(changed.failure) << changed.detail;
    EXPECT_EQ(changed.result->runs, 1u);
    EXPECT_EQ(changed.result->done, site.expected_requests.size());
    EXPECT_EQ(fetched_twice(), site.expected_requests.size()) << "everything fetched again, once";
}

TEST_F(durable_crawl, a_directory_that_holds_something_else_is_refused_untouched) {
    fs::create_directories(state_dir);
    std::ofstream(state_dir / "thesis.tex") << "precious";
    for (const bool reset : {false, true}) {
        const auto refused = run(std::nullopt, false, [reset](crawler_config& c) { c.state.reset = reset; });
        ASSERT_TRUE(refused.failure);
        EXPECT_EQ(refused.failure, error::state_unusable);
        EXPECT_NE(refused.detail.find("holds no crawl state"), std::string::npos) << refused.detail;
        EXPECT_TRUE(fs::exists(state_dir / "thesis.tex"));
    }
    EXPECT_TRUE(requests.empty());
}

TEST_F(durable_crawl, a_damaged_database_is_a_clear_error) {
    ASSERT_FALSE(run(10).failure);
    for (const auto& entry : fs::directory_iterator(state_dir / "db"))
        if (entry.path().filename().string().starts_with("CURRENT"))
            std::ofstream(entry.path(), std::ios::trunc) << "garbage\n";
    const auto damaged = run();
    ASSERT_TRUE(damaged.failure);
    EXPECT_EQ(damaged.failure, error::store_damaged);
    EXPECT_NE(damaged.detail.find("damaged"), std::string::npos) << damaged.detail;
}

TEST_F(durable_crawl, a_held_directory_is_refused_to_a_second_crawler_until_the_first_has_run) {
    asio::io_context ctx;
    demo::http_server server{ctx.get_executor(), demo::serve_site(site)};
    auto config = config_for(server.port());
    std::optional<crawler> first;
    first.emplace(ctx.get_executor(), config);
    for (const bool reset : {false, true}) {
        auto second = config;
        second.state.reset = reset;
        try {
            crawler refused{ctx.get_executor(), second};
            ADD_FAILURE() << "a second crawler took a held directory";
        } catch (const crawl_error& e) {
            EXPECT_EQ(e.code(), error::state_locked);
            const std::string message = e.detail();
            EXPECT_NE(message.find("is in use by another crawl (pid " + std::to_string(::getpid()) + ")"),
                      std::string::npos)
                << message;
            EXPECT_EQ(message.find("--state-reset"), std::string::npos) << message;
        }
    }
    // Held from construction, and released when the crawl is over, though the crawler object lives on.
    boost::system::error_code failure;
    std::string detail;
    first->async_run([&](boost::system::error_code ec, report r) {
        failure = ec;
        detail = r.failure;
        server.stop();
    });
    run_bounded(ctx);
    ASSERT_FALSE(failure) << detail;
    EXPECT_NO_THROW((crawler{ctx.get_executor(), config}));
}

// ---- a re-crawl whose fetch history stays on disk (docs/RECRAWL.md, "Memory during a re-crawl") ----

TEST_F(durable_crawl, a_recrawl_holds_the_history_of_the_urls_being_fetched_only) {
    const auto first = run();
    ASSERT_FALSE(first.failure) << first.detail;
    std::vector<std::string> lines;
    on_log = [&](std::string_view m) { lines.emplace_back(m); };
    const auto second = run(std::nullopt, false, [](crawler_config& c) { c.state.recrawl = true; });
    ASSERT_FALSE(second.failure) << second.detail;
    // The same site again: every URL fetched again, nothing changed, nothing gone.
    EXPECT_EQ(second.streamed.size(), first.streamed.size());
    std::size_t unchanged = 0;
    for (const auto& r : second.streamed) {
        EXPECT_TRUE(r.change == change_kind::unchanged || r.change == change_kind::none) << r.url;
        unchanged += r.change == change_kind::unchanged ? 1 : 0;
    }
    EXPECT_GE(unchanged, 100u);
    // The history of all of them stayed on disk: in memory, at most the entries of the URLs in flight (4 at
    // once for the site's one host), never the 120 pages' history.
    std::optional<std::size_t> held;
    for (const auto& line : lines)
        if (const auto at = line.find("at most ");
            at != std::string::npos && line.find("history entries were held") != std::string::npos)
            held = std::stoul(line.substr(at + 8));
    ASSERT_TRUE(held) << "no line says how many history entries were held";
    EXPECT_GE(*held, 1u);
    EXPECT_LE(*held, 4u);
}

namespace {

using asiocrawl::detail::fetch_history;

/// A generation-1 entry of a page that answered 200 with validators and linked to `links`.
fetch_history known_page(int depth, const std::vector<std::string>& links,
                         std::string referrer = "http://a.test/") {
    fetch_history h;
    h.status = 200;
    h.etag = "\"v1\"";
    h.last_modified = "Tue, 01 Sep 2026 10:00:00 GMT";
    h.payload_digest = "sha1:OLD";
    h.fetched_at_us = 1'700'000'000'000'000;
    h.captured_at_us = 1'700'000'000'000'000;
    h.generation = 1;
    h.depth = depth;
    h.referrer = std::move(referrer);
    for (const auto& link : links)
        h.outlinks.push_back(asiocrawl::detail::outlink_fingerprint(link));
    h.outlinks_known = true;
    return h;
}

} // namespace

TEST(history_on_disk, a_recrawl_follows_links_from_the_store_and_reports_the_unreached_gone) {
    // The crawl state driven as the engine drives it over a real state directory: each ticket's entry read
    // from the store before it is fetched, with the entries of the links a 304 would stand for (the frontier
    // pump's load_history), and the wrap-up over the store's entries not fetched in this generation.
    using namespace asiocrawl::detail;
    temp_dir dir{"history-on-disk"};
    state_lock lock(dir.path);
    auto store = state_store::open(dir.path);
    // Generation 1: / -> a, b, p0..p19; a -> deep; b -> vanished. Now / and a and the p's answer 304, b
    // changed and links to fresh instead of vanished.
    std::vector<std::string> root_links{"http://a.test/a", "http://a.test/b"};
    for (int i = 0; i < 20; ++i)
        root_links.push_back("http://a.test/p" + std::to_string(i));
    std::map<std::string, fetch_history> first;
    first["http://a.test/"] = known_page(0, root_links, "");
    first["http://a.test/a"] = known_page(1, {"http://a.test/deep"});
    first["http://a.test/b"] = known_page(1, {"http://a.test/vanished"});
    for (int i = 0; i < 20; ++i)
        first["http://a.test/p" + std::to_string(i)] = known_page(1, {"http://a.test/"});
    first["http://a.test/deep"] = known_page(2, {}, "http://a.test/a");
    first["http://a.test/deep"].outlinks_known = false; // fetched in full: its links are read
    first["http://a.test/vanished"] = known_page(2, {}, "http://a.test/b");
    state_batch written;
    for (const auto& [url, h] : first)
        written.history.emplace_back(url, encode(h));
    store->write(written, false);

    state_harness h({}, true, 64, &asiocrawl::test::manual_wall_clock);
    auto loaded = store->load_history(2, false, 42, h->seen_set());
    EXPECT_EQ(loaded.known, first.size());
    ASSERT_TRUE(loaded.not_admitted) << "a history with outlinks stays in the store";
    EXPECT_TRUE(loaded.whole.empty());
    h->set_history_in_store(std::move(*loaded.not_admitted), 2);
    h->start();

    std::set<std::string> asked;
    std::set<std::string> conditional;
    std::size_t held = 0;
    for (;;) {
        auto t = h->next();
        if (!t)
            break;
        const std::string url = t->item.url;
        auto wanted = h->on_history(*t, std::move(store->read_history({url})[0]));
        std::vector<std::pair<std::string, fetch_history>> links;
        for (auto& found : store->read_indexed_history(wanted))
            if (found)
                links.push_back(std::move(*found));
        h->on_known_outlinks(*t, std::move(links));
        ASSERT_TRUE(h->begin_attempt(*t));
        h->fetch_started(*t);
        held = std::max(held, h->history_held());
        asked.insert(url);
        if (h->conditional_basis(url) != nullptr)
            conditional.insert(url);
        std::vector<std::string> found_links;
        asiocrawl::test::test_response response = asiocrawl::test::answer_of(304, "");
        if (url == "http://a.test/b") {
            found_links = {"http://a.test/fresh"};
            response = asiocrawl::test::answer_of(200, "<p>b, edited</p>");
        } else if (url == "http://a.test/deep" || url == "http://a.test/fresh") {
            response = asiocrawl::test::answer_of(200, "<p>" + url + "</p>");
        }
        h.answer(*t, response, found_links);
        store->write(h->take_batch(), false); // the committer's commit
        if (h->wants_wrap_up(h.unfinished))   // the frontier pump's wrap_up_from_store
            h->wrap_up_generation(store->history_before(2).entries);
    }
    store->write(h->take_batch(), false);

    std::set<std::string> expected{"http://a.test/", "http://a.test/a", "http://a.test/b",
                                   "http://a.test/deep", "http://a.test/fresh"};
    for (int i = 0; i < 20; ++i)
        expected.insert("http://a.test/p" + std::to_string(i));
    EXPECT_EQ(asked, expected) << "reached through the 304s' links from the store; vanished not asked for";
    expected.erase("http://a.test/deep");
    expected.erase("http://a.test/fresh");
    EXPECT_EQ(conditional, expected);
    EXPECT_EQ(h.unfinished, 0u) << "the crawl ends once the unreached URLs are reported";
    ASSERT_EQ(h.records.size(), 26u);
    const auto& gone = h.records.back();
    EXPECT_EQ(gone.url, "http://a.test/vanished");
    EXPECT_EQ(gone.change, change_kind::gone);
    EXPECT_EQ(gone.status, 0);
    EXPECT_EQ(gone.referrer, "http://a.test/b");
    for (const auto& r : h.records)
        if (r.url == "http://a.test/deep") {
            EXPECT_EQ(r.depth, 2);
            EXPECT_EQ(r.referrer, "http://a.test/a");
        }
    const auto& stats = h->result().stats;
    EXPECT_EQ(stats.at("not_modified"), 22u);
    EXPECT_EQ(stats.at("gone_unlinked"), 1u);
    EXPECT_EQ(stats.at("change_new"), 1u);
    // One ticket at a time here: one entry held at once, never the generation's 25.
    EXPECT_EQ(held, 1u);
    EXPECT_EQ(h->history_held_peak(), 1u);
    EXPECT_EQ(h->history_held(), 0u);
    // What the store keeps for generation 3: the gone URL forgotten, the 304s' outlinks kept.
    const auto after =
        store->read_history({"http://a.test/vanished", "http://a.test/", "http://a.test/fresh"});
    EXPECT_FALSE(after[0]);
    ASSERT_TRUE(after[1]);
    EXPECT_EQ(after[1]->generation, 2u);
    EXPECT_EQ(after[1]->outlinks.size(), root_links.size());
    ASSERT_TRUE(after[2]);
    EXPECT_TRUE(store->history_before(2).entries.empty()) << "every known URL was fetched again or forgotten";
}

TEST(history_on_disk, an_unanswered_entry_never_replaces_a_known_answer) {
    // A re-crawl with the history on disk cannot tell whether a URL robots.txt denied (or a budget kept
    // out) is known: the store writes its status-0 entry only where the URL has none.
    using namespace asiocrawl::detail;
    temp_dir dir{"history-if-absent"};
    state_lock lock(dir.path);
    auto store = state_store::open(dir.path);
    state_batch first;
    first.history.emplace_back("http://a.test/known", encode(known_page(1, {})));
    store->write(first, false);
    fetch_history unanswered;
    unanswered.generation = 2;
    state_batch second;
    second.history_if_absent.emplace_back("http://a.test/known", encode(unanswered));
    second.history_if_absent.emplace_back("http://a.test/new", encode(unanswered));
    store->write(second, false);
    const auto read = store->read_history({"http://a.test/known", "http://a.test/new"});
    ASSERT_TRUE(read[0]);
    EXPECT_EQ(read[0]->status, 200);
    EXPECT_EQ(read[0]->etag, "\"v1\"");
    ASSERT_TRUE(read[1]);
    EXPECT_EQ(read[1]->status, 0);
}

TEST(history_on_disk, the_wrap_up_reads_the_earlier_generations_entries_a_chunk_at_a_time) {
    // Every chunk size gives the same entries as one read: an earlier generation's, robots.txt's left out,
    // in URL order, and each once (a chunk resumes after the previous one's last URL, kept or not).
    using namespace asiocrawl::detail;
    temp_dir dir{"history-chunks"};
    state_lock lock(dir.path);
    auto store = state_store::open(dir.path);
    state_batch batch;
    std::vector<std::string> earlier;
    for (int i = 0; i < 7; ++i) {
        const std::string url = "http://a.test/p" + std::to_string(i);
        auto h = known_page(1, {});
        if (i % 3 == 2)
            h.generation = 2; // fetched again in this generation
        else
            earlier.push_back(url);
        batch.history.emplace_back(url, encode(h));
    }
    auto robots = known_page(0, {});
    robots.kind = item_kind::robots;
    batch.history.emplace_back("http://a.test/robots.txt", encode(robots));
    store->write(batch, false);
    for (const std::size_t limit : {1u, 2u, 3u, 8u, 100u}) {
        std::vector<std::string> read;
        std::string after;
        std::size_t chunks = 0;
        for (;;) {
            auto chunk = store->history_before(2, after, limit);
            ++chunks;
            for (const auto& [url, h] : chunk.entries) {
                EXPECT_LT(h.generation, 2u);
                EXPECT_TRUE(h.outlinks.empty());
                read.push_back(url);
            }
            if (!chunk.next_after)
                break;
            after = *chunk.next_after;
            ASSERT_LE(chunks, 10u) << "limit " << limit << ": the chunks go forward";
        }
        EXPECT_EQ(read, earlier) << "limit " << limit;
    }
}

// ---- continuous mode's schedule on disk (docs/RECRAWL.md, "Continuous mode") ----

namespace {

/// Drives a continuous crawl over `pages` known URLs through a window of `window`. The crawl state driven as
/// the engine drives it over a real state directory: the committer's batch, frontier refills and due-time
/// reads, and the frontier pump's read of each ticket's entry. A state written before the due-time index
/// gets one when it opens; the crawl is killed midway with revisits queued and resumed by a new state over
/// the same directory, which goes through a second pass.
void drive_schedule_on_disk(int pages, std::size_t window) {
    using namespace asiocrawl::detail;
    temp_dir dir{"schedule-on-disk"};
    state_lock lock(dir.path);
    auto store = state_store::open(dir.path);
    const std::chrono::sys_seconds start{std::chrono::seconds(1'800'000'000)}; // the harness's calendar
    std::vector<std::pair<int, std::string>> by_due;
    state_batch written;
    written.fingerprints.push_back(url_fingerprint("http://a.test/", 42)); // the root: seen, not due
    for (int i = 0; i < pages; ++i) {
        const std::string url = "http://a.test/p" + std::to_string(i);
        const int slot = (i * 7) % pages; // URL order is not due order
        auto entry = known_page(1, {});
        entry.revisit = revisit_entry{std::chrono::hours(1), start - std::chrono::hours(1),
                                      start + std::chrono::seconds(10 * slot), 0};
        written.history.emplace_back(url, encode(entry));
        by_due.emplace_back(slot, url);
    }
    // Queued for its revisit by a crawl before the index (the entry's flag; the URL waits in the frontier):
    // not in the index, so not scheduled twice.
    auto queued = known_page(1, {});
    queued.revisit = revisit_entry{std::chrono::hours(1), start - std::chrono::hours(1), start, 0};
    queued.revisit_queued = true;
    written.history.emplace_back("http://a.test/queued", encode(queued));
    store->write(written, false);
    std::sort(by_due.begin(), by_due.end());
    std::vector<std::string> due_order;
    for (const auto& [slot, url] : by_due)
        due_order.push_back(url);

    std::vector<std::string> revisited;
    std::vector<std::pair<std::chrono::system_clock::time_point, std::string>> visits;
    std::size_t held_peak = 0;
    std::size_t window_peak = 0;
    // One run until `until` URLs were revisited in all; `killed`: then a few more are queued (committed) and
    // the run ends without fetching them. `lagged`: each commit (its batch written, then the due-time index
    // read) is made one step later than it was taken, so that the state schedules URLs meanwhile, as it does
    // while the engine's committer waits on the storage thread.
    auto run = [&](std::size_t until, bool killed, bool lagged,
                   std::optional<std::chrono::system_clock::time_point> wall) {
        state_harness h(
            [](crawler_config& c) {
                c.continuous = true;
                c.revisit.min = std::chrono::hours(1);
                c.revisit.max = std::chrono::hours(24 * 30);
            },
            true, 8, &asiocrawl::test::manual_wall_clock);
        if (wall)
            asiocrawl::test::manual_wall_now = *wall;
        h->restore(store->load(h->seen_set()));
        ASSERT_TRUE(store->load_history(1, true, 42, h->seen_set()).due_indexed);
        h->set_schedule_in_store(1, window);
        h->start();
        // The committer's step: the batch and the reads taken together, then written and read.
        struct commit_step {
            state_batch batch;
            std::vector<crawl_state::refill_request> refills;
            std::optional<crawl_state::due_read> read;
        };
        std::optional<commit_step> taken;
        auto complete = [&](commit_step& step) {
            store->write(step.batch, false);
            for (const auto& r : step.refills)
                h->on_refill(r.host, store->read_waiting(r.host, r.from_seq, r.count));
            if (step.read)
                h->on_due_read(store->read_due(step.read->from, step.read->count));
            window_peak = std::max(window_peak, h->due_window_held());
        };
        auto commit = [&] {
            for (;;) {
                if (taken) {
                    auto step = std::move(*taken);
                    taken.reset();
                    complete(step);
                }
                commit_step step{h->take_batch(), h->take_refills(), h->take_due_read()};
                if (step.batch.empty() && step.refills.empty() && !step.read)
                    return;
                if (lagged) {
                    taken = std::move(step); // made at the next commit, after the state moved on
                    return;
                }
                complete(step);
            }
        };
        commit();
        for (int idle = 0; revisited.size() < until && idle < 1000;) {
            auto t = h->next();
            commit(); // what next() released
            if (!t) {
                h.advance(std::chrono::seconds(60));
                ++idle;
                continue;
            }
            h->on_history(*t, std::move(store->read_history({t->item.url})[0]));
            ASSERT_TRUE(h->begin_attempt(*t));
            h->fetch_started(*t);
            held_peak = std::max(held_peak, h->history_held());
            ASSERT_NE(h->conditional_basis(t->item.url), nullptr) << t->item.url << ": fetched conditionally";
            revisited.push_back(t->item.url);
            visits.emplace_back(asiocrawl::test::manual_wall_now, t->item.url);
            h.answer(*t, asiocrawl::test::answer_of(304, ""));
            EXPECT_EQ(h.records.back().change, change_kind::unchanged);
            commit();
        }
        if (taken) {
            complete(*taken);
            taken.reset();
        }
        EXPECT_LE(h->history_held_peak(), 1u);
        EXPECT_LE(h->due_window_peak(), window);
        if (killed) {
            h.advance(std::chrono::seconds(60));
            auto queued = h->next(); // released, and the next few with it: in the frontier on disk
            ASSERT_TRUE(queued);
            commit();
        }
    };
    const auto killed_at = static_cast<std::size_t>(pages) * 9 / 20;
    run(killed_at, true, false, std::nullopt);
    ASSERT_EQ(revisited.size(), killed_at);
    EXPECT_FALSE(store->nothing_waiting()) << "the kill left revisits queued in the frontier on disk";
    // Resumed, through the first pass and a second one (each page due again 1 h x 1.25 after its visit).
    run(2 * pages, false, true, asiocrawl::test::manual_wall_now);

    ASSERT_EQ(revisited.size(), 2u * pages);
    EXPECT_EQ(std::vector<std::string>(revisited.begin(), revisited.begin() + pages), due_order)
        << "each URL revisited once, in due order, across the kill";
    std::vector<std::pair<std::chrono::system_clock::time_point, std::string>> second_due(
        visits.begin(), visits.begin() + pages);
    std::sort(second_due.begin(), second_due.end());
    std::vector<std::string> second_order;
    for (const auto& [at, url] : second_due)
        second_order.push_back(url);
    EXPECT_EQ(std::vector<std::string>(revisited.begin() + pages, revisited.end()), second_order)
        << "scheduled while reads of the index were under way: once each, in due order";
    EXPECT_LE(held_peak, 1u) << "one ticket at a time: its entry only";
    EXPECT_LE(window_peak, window);
    EXPECT_GE(window_peak, window / 2);
    // Every URL waits again, once, an interval after its last visit (1.25 h, then 1.5625 h for the 304s).
    const auto index = store->read_due(due_key{std::numeric_limits<std::int64_t>::min(), {}}, 1000);
    ASSERT_EQ(index.size(), static_cast<std::size_t>(pages));
    for (const auto& [key, entry] : index) {
        ASSERT_TRUE(entry && entry->revisit) << key.url;
        EXPECT_EQ(entry->revisit->due.time_since_epoch().count(), key.due);
        EXPECT_EQ(entry->revisit->interval, std::chrono::seconds(5625));
    }
}

} // namespace

TEST(schedule_on_disk, a_continuous_crawl_holds_a_window_of_its_schedule_and_revisits_in_due_order) {
    drive_schedule_on_disk(200, 16); // the window holds a twelfth of the schedule
}

TEST(schedule_on_disk, urls_scheduled_while_the_index_is_read_to_its_end_join_the_window) {
    drive_schedule_on_disk(24, 16); // reads reach the end of the index with schedules not written yet
}

TEST(schedule_on_disk, a_sitemaps_lastmod_after_the_last_visit_makes_a_known_url_due_now) {
    // The entries are on disk: the <lastmod> waits for the committer's read of the URL's entry, and a page
    // changed after its last visit is due at once (not before revisit.min after that visit); one whose
    // <lastmod> is older keeps its day.
    using namespace asiocrawl::detail;
    temp_dir dir{"lastmod-on-disk"};
    state_lock lock(dir.path);
    auto store = state_store::open(dir.path);
    const std::chrono::sys_seconds start{std::chrono::seconds(1'800'000'000)}; // the harness's calendar
    const std::string sitemap = "http://a.test/sitemap.xml";
    state_batch written;
    written.fingerprints.push_back(url_fingerprint("http://a.test/", 42)); // the root: seen, not due
    for (const auto* url : {"http://a.test/changed", "http://a.test/same", "http://a.test/later"}) {
        auto entry = known_page(1, {});
        entry.revisit = revisit_entry{std::chrono::hours(24), start - std::chrono::hours(2),
                                      start + std::chrono::hours(22), 0};
        written.history.emplace_back(url, encode(entry));
        written.fingerprints.push_back(url_fingerprint(url, 42));
    }
    auto listing = known_page(0, {});
    listing.kind = item_kind::sitemap;
    listing.revisit = revisit_entry{std::chrono::hours(1), start - std::chrono::hours(1), start, 0};
    written.history.emplace_back(sitemap, encode(listing));
    written.fingerprints.push_back(url_fingerprint(sitemap, 42));
    store->write(written, false);

    state_harness h(
        [](crawler_config& c) {
            c.continuous = true;
            c.revisit.min = std::chrono::hours(1);
        },
        true, 8, &asiocrawl::test::manual_wall_clock);
    h->restore(store->load(h->seen_set()));
    ASSERT_TRUE(store->load_history(1, true, 42, h->seen_set()).due_indexed);
    h->set_schedule_in_store(1, 16);
    h->start();
    auto commit = [&] { // the committer's steps, each batch written before the reads taken with it
        for (;;) {
            auto batch = h->take_batch();
            auto due = h->take_due_read();
            auto hinted = h->take_hint_read();
            if (batch.empty() && !due && hinted.empty())
                return;
            store->write(batch, false);
            if (due)
                h->on_due_read(store->read_due(due->from, due->count));
            if (!hinted.empty())
                h->on_hint_read(store->read_history(hinted));
        }
    };
    auto fetch_next = [&]() -> std::string {
        auto t = h->next();
        commit();
        if (!t)
            return {};
        h->on_history(*t, std::move(store->read_history({t->item.url})[0]));
        EXPECT_TRUE(h->begin_attempt(*t));
        h->fetch_started(*t);
        const std::string url = t->item.url;
        if (url == sitemap)
            h.answer(*t,
                     asiocrawl::test::answer_of(
                         200,
                         "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">"
                         "<url><loc>http://a.test/changed</loc><lastmod>2027-01-15T06:50:00Z</lastmod></url>"
                         "<url><loc>http://a.test/same</loc><lastmod>2027-01-14T00:00:00Z</lastmod></url>"
                         "</urlset>",
                         "application/xml"));
        else
            h.answer(*t, asiocrawl::test::answer_of(304, ""));
        commit();
        return url;
    };
    commit();
    EXPECT_EQ(fetch_next(), sitemap) << "due first";
    // 1'800'000'000 s is 2027-01-15T08:00:00Z: /changed changed after its visit two hours ago.
    EXPECT_EQ(h.records.back().url, sitemap);
    EXPECT_EQ(h->result().stats.at("revisits_hinted"), 1u);
    EXPECT_EQ(fetch_next(), "http://a.test/changed") << "due now, the others a day after their visit";
    EXPECT_EQ(fetch_next(), "") << "nothing else is due";
    const auto index = store->read_due(due_key{std::numeric_limits<std::int64_t>::min(), {}}, 10);
    std::set<std::string> indexed;
    for (const auto& [key, entry] : index)
        indexed.insert(key.url);
    EXPECT_EQ(indexed, (std::set<std::string>{"http://a.test/changed", "http://a.test/same",
                                              "http://a.test/later", sitemap}))
        << "one key each: the hint moved /changed's, its visit moved it again";
    EXPECT_EQ(index.size(), 4u);
}
