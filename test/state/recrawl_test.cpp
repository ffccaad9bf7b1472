// Re-crawls without sockets: the fetch history's byte form, how a fetch compares with the last one, what a
// previous run's records or CDXJ give, and a crawl state that fetches known URLs again and says what changed.
#include "state/crawl_state.hpp"
#include "state/due_index.hpp"
#include "state/fetch_history.hpp"

#include "support/state_harness.hpp"
#include "support/test_response.hpp"
#include "util/digest.hpp"

#include <asiocrawl/report.hpp>

#include <boost/url/parse.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>

using namespace asiocrawl;
using namespace asiocrawl::detail;
using asiocrawl::test::state_harness;
using asiocrawl::test::test_response;
using namespace std::chrono_literals;

namespace recrawl_test {

fetch_history known(int status, std::string etag, std::string digest, int depth = 1) {
    fetch_history h;
    h.status = status;
    h.etag = std::move(etag);
    h.last_modified = "Tue, 01 Sep 2026 10:00:00 GMT";
    h.payload_digest = std::move(digest);
    h.fetched_at_us = 1'700'000'000'000'000;
    h.captured_at_us = 1'600'000'000'000'000;
    h.generation = 1;
    h.depth = depth;
    h.referrer = "http://a.test/";
    return h;
}

TEST(FetchHistory, RoundTripsEveryField) {
    fetch_history h = known(200, "\"abc\"", "sha1:AAAA", 3);
    h.location = "http://a.test/next";
    h.kind = item_kind::requisite;
    h.requisite = requisite_kind::stylesheet;
    h.from_sitemap = true;
    h.generation = 7;
    h.redirects_left = 4;
    const auto back = decode_fetch_history(encode(h));
    ASSERT_TRUE(back);
    EXPECT_EQ(back->status, 200);
    EXPECT_EQ(back->etag, "\"abc\"");
    EXPECT_EQ(back->last_modified, h.last_modified);
    EXPECT_EQ(back->payload_digest, "sha1:AAAA");
    EXPECT_EQ(back->location, "http://a.test/next");
    EXPECT_EQ(back->fetched_at_us, h.fetched_at_us);
    EXPECT_EQ(back->captured_at_us, h.captured_at_us);
    EXPECT_EQ(back->generation, 7u);
    EXPECT_EQ(back->depth, 3);
    EXPECT_EQ(back->redirects_left, 4);
    EXPECT_EQ(back->kind, item_kind::requisite);
    EXPECT_EQ(back->requisite, requisite_kind::stylesheet);
    EXPECT_TRUE(back->from_sitemap);
    EXPECT_EQ(back->referrer, "http://a.test/");
    EXPECT_FALSE(back->outlinks_known);

    h.outlinks_known = true;
    h.outlinks = {outlink_fingerprint("http://a.test/x"), 0, ~std::uint64_t{0}};
    const auto with_links = decode_fetch_history(encode(h));
    ASSERT_TRUE(with_links);
    EXPECT_TRUE(with_links->outlinks_known);
    EXPECT_EQ(with_links->outlinks, h.outlinks);
    EXPECT_EQ(with_links->referrer, "http://a.test/");
    EXPECT_TRUE(with_links->capture_id.empty());

    h.capture_id = new_capture_id();
    ASSERT_EQ(h.capture_id.size(), 16u);
    const auto with_id = decode_fetch_history(encode(h));
    ASSERT_TRUE(with_id);
    EXPECT_EQ(with_id->capture_id, h.capture_id);
    EXPECT_EQ(with_id->outlinks, h.outlinks);
    const auto urn = capture_record_id(h.capture_id);
    EXPECT_EQ(urn.size(), 47u) << urn; // <urn:uuid:8-4-4-4-12>
    EXPECT_EQ(urn.substr(0, 10), "<urn:uuid:");
    EXPECT_EQ(urn[24], '4') << "version 4";
    EXPECT_TRUE(with_id->warc_file.empty());

    h.warc_file = "crawl-00003.warc.gz";
    h.warc_offset = 5'000'000'000; // past 32 bits
    h.warc_length = 1234;
    h.warc_payload_digest = "sha1:CODED";
    const auto placed = decode_fetch_history(encode(h));
    ASSERT_TRUE(placed);
    EXPECT_EQ(placed->warc_file, "crawl-00003.warc.gz");
    EXPECT_EQ(placed->warc_offset, 5'000'000'000u);
    EXPECT_EQ(placed->warc_length, 1234u);
    EXPECT_EQ(placed->warc_payload_digest, "sha1:CODED");
    EXPECT_EQ(placed->capture_id, h.capture_id);
    EXPECT_EQ(placed->outlinks, h.outlinks);
}

TEST(FetchHistory, TakesItsPlaceInTheArchiveOnlyForItsOwnCapture) {
    fetch_history h = known(200, "e", "sha1:DECODED");
    archived_capture a{"", "http://a.test/", "x.warc.gz", 100, 50, "sha1:DECODED"};
    EXPECT_FALSE(h.place(a)) << "an entry without a capture id names no record";
    h.capture_id = new_capture_id();
    a.record_id = capture_record_id(new_capture_id());
    EXPECT_FALSE(h.place(a)) << "another capture's place";
    a.record_id = capture_record_id(h.capture_id);
    ASSERT_TRUE(h.place(a));
    EXPECT_EQ(h.warc_file, "x.warc.gz");
    EXPECT_EQ(h.warc_offset, 100u);
    EXPECT_EQ(h.warc_length, 50u);
    EXPECT_TRUE(h.warc_payload_digest.empty()) << "the same digest is not kept twice";
    EXPECT_EQ(h.archived_payload_digest(), "sha1:DECODED");
    a.payload_digest = "sha1:GZIPPED"; // a content-coded payload: the archive holds the coded bytes
    ASSERT_TRUE(h.place(a));
    EXPECT_EQ(h.archived_payload_digest(), "sha1:GZIPPED");
}

TEST(FetchHistory, RejectsWhatItDidNotWrite) {
    const std::string good = encode(known(200, "e", "sha1:X"));
    EXPECT_FALSE(decode_fetch_history(""));
    EXPECT_FALSE(decode_fetch_history(good.substr(0, good.size() - 1)));
    EXPECT_FALSE(decode_fetch_history(good + "x"));
    std::string other_format = good;
    other_format[0] = 9;
    EXPECT_FALSE(decode_fetch_history(other_format));
}

TEST(FetchHistory, ComparesAsTheRecordSays) {
    const fetch_history page = known(200, "e", "sha1:SAME");
    fetch_history moved = known(301, "", "");
    moved.location = "http://a.test/new";
    const fetch_history missing = known(404, "", "");
    struct row {
        const char* what;
        const fetch_history* before;
        int status;
        std::string digest;
        std::string next_url;
        bool not_modified;
        change_kind expected;
    };
    const row rows[] = {
        {"unknown URL", nullptr, 200, "sha1:SAME", "", false, change_kind::added},
        {"304", &page, 304, "", "", true, change_kind::unchanged},
        {"same digest", &page, 200, "sha1:SAME", "", false, change_kind::unchanged},
        {"other digest", &page, 200, "sha1:OTHER", "", false, change_kind::changed},
        {"now 404", &page, 404, "", "", false, change_kind::gone},
        {"now 410", &page, 410, "", "", false, change_kind::gone},
        {"still 404", &missing, 404, "", "", false, change_kind::unchanged},
        {"404 came back", &missing, 200, "sha1:SAME", "", false, change_kind::changed},
        {"now a redirect", &page, 301, "", "http://a.test/x", false, change_kind::changed},
        {"same redirect", &moved, 301, "", "http://a.test/new", false, change_kind::unchanged},
        {"redirect elsewhere", &moved, 301, "", "http://a.test/other", false, change_kind::changed},
        {"now 500", &page, 500, "", "", false, change_kind::changed},
        {"no answer", &page, 0, "", "", false, change_kind::none},
    };
    for (const auto& row : rows) {
        record r;
        r.status = row.status;
        r.payload_digest = row.digest;
        r.next_url = row.next_url;
        r.not_modified = row.not_modified;
        EXPECT_EQ(compare(row.before, r), row.expected) << row.what;
    }
}

TEST(FetchHistory, A304KeepsWhatItStandsFor) {
    const fetch_history before = known(200, "\"v1\"", "sha1:PAYLOAD");
    record r;
    r.url = "http://a.test/p";
    r.status = 304;
    r.not_modified = true;
    r.change = change_kind::unchanged;
    r.fetched_at = std::chrono::system_clock::time_point(std::chrono::microseconds(1'800'000'000'000'000));
    work_item item;
    item.depth = 2;
    const auto after = history_of(r, item, &before, 2);
    EXPECT_EQ(after.status, 200);                    // what the 304 stands for
    EXPECT_EQ(after.etag, "\"v1\"");                 // not resent: kept
    EXPECT_EQ(after.payload_digest, "sha1:PAYLOAD"); // the payload is the earlier capture's
    EXPECT_EQ(after.captured_at_us, before.captured_at_us);
    EXPECT_EQ(after.fetched_at_us, 1'800'000'000'000'000);
    EXPECT_EQ(after.generation, 2u);
    EXPECT_EQ(after.depth, 2);

    record changed;
    changed.status = 200;
    changed.etag = "\"v2\"";
    changed.payload_digest = "sha1:NEW";
    changed.change = change_kind::changed;
    changed.fetched_at = r.fetched_at;
    const auto fresh = history_of(changed, item, &before, 2);
    EXPECT_EQ(fresh.etag, "\"v2\"");
    EXPECT_EQ(fresh.payload_digest, "sha1:NEW");
    EXPECT_EQ(fresh.captured_at_us, 1'800'000'000'000'000); // this capture holds the new payload
}

TEST(RecrawlSource, ReadsRecordsAndCdxj) {
    const std::string records =
        R"({"url":"http://a.test/","status":200,"etag":"\"r\"","last_modified":"Tue, 01 Sep 2026 10:00:00 GMT",)"
        R"("payload_digest":"sha1:ROOT","fetched_at":"2026-09-01T10:00:00.250000Z","depth":0})"
        "\n"
        R"({"url":"http://a.test/moved","status":301,"next_url":"http://a.test/new","depth":1,"referrer":"http://a.test/"})"
        "\n"
        R"({"url":"http://a.test/down","status":0,"error":"refused","error_kind":"connection_refused"})"
        "\n"
        R"({"url":"http://a.test/r/10","status":302,"next_url":"http://a.test/r/11","error_kind":"redirect_limit"})"
        "\n"
        "not json\n";
    std::size_t skipped = 0;
    auto history = parse_recrawl_source(records, skipped);
    EXPECT_EQ(skipped, 2u); // the failure and the line that is not a record
    ASSERT_EQ(history.size(), 3u);
    EXPECT_EQ(history.at("http://a.test/r/10").redirects_left, 0);   // the chain ended there
    EXPECT_EQ(history.at("http://a.test/moved").redirects_left, -1); // unknown: the config's
    const auto& root = history.at("http://a.test/");
    EXPECT_EQ(root.etag, "\"r\"");
    EXPECT_EQ(root.payload_digest, "sha1:ROOT");
    EXPECT_EQ(root.fetched_at_us, 1'788'256'800'250'000); // 2026-09-01T10:00:00.25Z
    EXPECT_EQ(root.captured_at_us, root.fetched_at_us);
    EXPECT_EQ(history.at("http://a.test/moved").location, "http://a.test/new");
    EXPECT_EQ(history.at("http://a.test/moved").depth, 1);

    const std::string cdxj =
        "test,a)/ 20260901100000 "
        R"({"url":"http://a.test/","mime":"text/html","status":"200","digest":"ROOTDIGEST","length":"512","offset":"0","filename":"x.warc.gz"})"
        "\n"
        "test,a)/ 20260902100000 "
        R"({"url":"http://a.test/","mime":"warc/revisit","status":"200","digest":"ROOTDIGEST"})"
        "\n";
    history = parse_recrawl_source(cdxj, skipped);
    EXPECT_EQ(skipped, 1u); // the revisit refers to the capture before it
    ASSERT_EQ(history.size(), 1u);
    EXPECT_EQ(history.at("http://a.test/").status, 200);
    EXPECT_EQ(history.at("http://a.test/").payload_digest, "sha1:ROOTDIGEST");
    EXPECT_EQ(history.at("http://a.test/").fetched_at_us, 1'788'256'800'000'000);
}

/// A state over a previous generation's history (generation 2 begun), driven as the engine drives it.
struct recrawl_harness : state_harness {
    explicit recrawl_harness(history_map history, bool durable = false,
                             const std::function<void(crawler_config&)>& adjust = {})
        : state_harness(adjust, durable, 64, &asiocrawl::test::manual_wall_clock) {
        state->set_history(std::move(history), 2, true);
        state->start();
    }

    /// Every URL handed out, answered by `answer_for` (with the page's links), until nothing is left.
    void run(const std::function<test_response(const std::string& url, std::vector<std::string>& links)>&
                 answer_for) {
        while (auto t = next_started()) {
            std::vector<std::string> links;
            const std::string url = t->item.url;
            auto response = answer_for(url, links);
            revisits[url] = answer(*t, std::move(response), links);
        }
    }

    const record& at(const std::string& url) const {
        const auto found =
            std::find_if(records.begin(), records.end(), [&](const record& r) { return r.url == url; });
        EXPECT_NE(found, records.end()) << url;
        return *found;
    }

    std::map<std::string, std::optional<crawl_state::ticket::earlier_capture>> revisits;
};

test_response html(std::string body, std::string etag = {}) {
    test_response r;
    r.status = 200;
    r.content_type = "text/html";
    r.body = std::move(body);
    r.body_bytes = r.body.size();
    r.remote_ip = "192.0.2.1";
    r.etag = std::move(etag);
    return r;
}

test_response status_only(int status) {
    test_response r;
    r.status = status;
    r.remote_ip = "192.0.2.1";
    return r;
}

TEST(Recrawl, FetchesEveryKnownUrlAndSaysWhatChanged) {
    const std::string same = "<p>same</p>";
    history_map history;
    history["http://a.test/"] = known(200, "\"root\"", sha1_base32(same), 0);
    history["http://a.test/same"] = known(200, "", sha1_base32(same));
    history["http://a.test/edited"] = known(200, "\"e1\"", sha1_base32("<p>old</p>"));
    history["http://a.test/removed"] = known(200, "\"r1\"", sha1_base32("<p>removed</p>"));
    history["http://a.test/orphan"] = known(200, "\"o1\"", sha1_base32("<p>o</p>"), 2);
    recrawl_harness h(std::move(history));

    std::map<std::string, std::pair<std::string, std::string>> asked; // url -> validators it was asked with
    h.run([&](const std::string& url, std::vector<std::string>& links) {
        if (const auto* before = h.state->previous(url))
            asked[url] = {before->etag, before->last_modified};
        if (url == "http://a.test/")
            return status_only(304);
        if (url == "http://a.test/same")
            return html(same);
        if (url == "http://a.test/edited") {
            links = {"http://a.test/added"};
            return html("<p>new</p>", "\"e2\"");
        }
        if (url == "http://a.test/removed")
            return status_only(404);
        if (url == "http://a.test/orphan")
            return status_only(304);
        return html("<p>added</p>");
    });

    // Every known URL was asked for again, with its validators; the new one without.
    EXPECT_EQ(asked.size(), 5u);
    EXPECT_EQ(asked["http://a.test/edited"].first, "\"e1\"");
    EXPECT_EQ(asked["http://a.test/"].second, "Tue, 01 Sep 2026 10:00:00 GMT");
    EXPECT_FALSE(asked.contains("http://a.test/added"));

    EXPECT_EQ(h.at("http://a.test/").change, change_kind::unchanged);
    EXPECT_TRUE(h.at("http://a.test/").not_modified);
    EXPECT_EQ(h.at("http://a.test/").status, 304);
    EXPECT_EQ(h.at("http://a.test/same").change, change_kind::unchanged);
    EXPECT_FALSE(h.at("http://a.test/same").not_modified);
    EXPECT_EQ(h.at("http://a.test/edited").change, change_kind::changed);
    EXPECT_EQ(h.at("http://a.test/edited").etag, "\"e2\"");
    EXPECT_EQ(h.at("http://a.test/removed").change, change_kind::gone);
    EXPECT_EQ(h.at("http://a.test/added").change, change_kind::added);
    EXPECT_EQ(h.at("http://a.test/added").depth, 2);
    EXPECT_EQ(h.unfinished, 0u);

    // What the archive is told: a 304 and an identical payload refer to the earlier capture.
    ASSERT_TRUE(h.revisits["http://a.test/"]);
    EXPECT_TRUE(h.revisits["http://a.test/"]->not_modified);
    EXPECT_EQ(h.revisits["http://a.test/"]->date.time_since_epoch(),
              std::chrono::microseconds(1'600'000'000'000'000));
    ASSERT_TRUE(h.revisits["http://a.test/same"]);
    EXPECT_FALSE(h.revisits["http://a.test/same"]->not_modified);
    EXPECT_FALSE(h.revisits["http://a.test/edited"]);
    EXPECT_FALSE(h.revisits["http://a.test/added"]);

    const auto& stats = h.state->result().stats;
    EXPECT_EQ(stats.at("change_unchanged"), 3u);
    EXPECT_EQ(stats.at("change_changed"), 1u);
    EXPECT_EQ(stats.at("change_gone"), 1u);
    EXPECT_EQ(stats.at("change_new"), 1u);
    EXPECT_EQ(stats.at("not_modified"), 2u);
}

TEST(Recrawl, A304WithoutAConditionalRequestIsNotTakenForOne) {
    history_map history;
    history["http://a.test/"] = known(200, "", "", 0);
    history.at("http://a.test/").last_modified.clear(); // nothing to send: the request was not conditional
    recrawl_harness h(std::move(history));
    h.run([&](const std::string&, std::vector<std::string>&) { return status_only(304); });
    EXPECT_FALSE(h.at("http://a.test/").not_modified);
    EXPECT_FALSE(h.revisits["http://a.test/"]);
}

TEST(Recrawl, ADurableGenerationWritesTheHistoryItLeaves) {
    history_map history;
    history["http://a.test/"] = known(200, "\"root\"", "sha1:ROOT", 0);
    const auto capture = new_capture_id();
    history.at("http://a.test/").capture_id = capture;
    recrawl_harness h(std::move(history), true);
    h.run([&](const std::string&, std::vector<std::string>&) { return status_only(304); });
    // The revisit names the capture it repeats by the record id the history kept.
    ASSERT_TRUE(h.revisits["http://a.test/"]);
    EXPECT_EQ(h.revisits["http://a.test/"]->record_id, capture_record_id(capture));
    const auto batch = h.state->take_batch();
    ASSERT_EQ(batch.history.size(), 1u);
    EXPECT_EQ(batch.history[0].first, "http://a.test/");
    const auto written = decode_fetch_history(batch.history[0].second);
    ASSERT_TRUE(written);
    EXPECT_EQ(written->generation, 2u);
    EXPECT_EQ(written->status, 200);
    EXPECT_EQ(written->payload_digest, "sha1:ROOT");
    EXPECT_EQ(written->etag, "\"root\"");
    EXPECT_EQ(written->capture_id, capture) << "a 304 stands for the same capture";
    // Fetched in this generation: no longer asked about.
    EXPECT_EQ(h.state->previous("http://a.test/"), nullptr);
}

TEST(Recrawl, TheHistoryKeepsWhereTheArchivePutEachCapture) {
    // Generation 1 archived / gzip-coded: its WARC payload digest is not the decoded body's.
    const std::string same = "<p>same</p>";
    history_map history;
    history["http://a.test/"] = known(200, "", sha1_base32(same), 0);
    history.at("http://a.test/").capture_id = new_capture_id();
    history.at("http://a.test/").warc_file = "gen1.warc.gz";
    history.at("http://a.test/").warc_offset = 700;
    history.at("http://a.test/").warc_payload_digest = "sha1:GZIPPED";
    recrawl_harness h(std::move(history), true);
    h.run([&](const std::string& url, std::vector<std::string>&) {
        return url == "http://a.test/" ? html(same) : html("<p>new</p>");
    });
    // The same payload again: the revisit must repeat the archived record's digest, which the archive then
    // compares with the digest of what it would write.
    ASSERT_TRUE(h.revisits["http://a.test/"]);
    EXPECT_EQ(h.revisits["http://a.test/"]->payload_digest, "sha1:GZIPPED");

    auto batch = h.state->take_batch();
    ASSERT_EQ(batch.history.size(), 1u);
    auto kept = decode_fetch_history(batch.history[0].second);
    ASSERT_TRUE(kept);
    EXPECT_EQ(kept->warc_file, "gen1.warc.gz") << "a revisit keeps the place of the capture it repeats";
    EXPECT_EQ(kept->warc_offset, 700u);

    // A flush says where this generation's captures went; only the batch entry naming the capture takes it.
    const auto named = capture_record_id(kept->capture_id);
    h.state->place_captures(
        batch, {{capture_record_id(new_capture_id()), "http://a.test/", "other.warc", 1, 1, "sha1:X"}});
    EXPECT_EQ(decode_fetch_history(batch.history[0].second)->warc_file, "gen1.warc.gz");
    h.state->place_captures(batch, {{named, "http://a.test/", "gen2.warc.gz", 42, 900, sha1_base32(same)}});
    kept = decode_fetch_history(batch.history[0].second);
    ASSERT_TRUE(kept);
    EXPECT_EQ(kept->warc_file, "gen2.warc.gz");
    EXPECT_EQ(kept->warc_offset, 42u);
    EXPECT_EQ(kept->warc_length, 900u);
    EXPECT_TRUE(kept->warc_payload_digest.empty());
}

/// An entry written by a crawl that recorded what the URL led to.
fetch_history linking(fetch_history h, const std::vector<std::string>& to) {
    h.outlinks_known = true;
    for (const auto& url : to)
        h.outlinks.push_back(outlink_fingerprint(url));
    return h;
}

TEST(Recrawl, AUrlThatNeverAnsweredIsKnownToTheNextGeneration) {
    // Generation 2: / links to down, which fails (no answer): the history learns it as unanswered.
    history_map history;
    history["http://a.test/"] = linking(known(200, "\"root\"", "sha1:R", 0), {});
    recrawl_harness second(std::move(history), true);
    second.run([&](const std::string& url, std::vector<std::string>& links) {
        if (url == "http://a.test/") {
            links = {"http://a.test/down"};
            return html("<p>root, edited</p>", "\"root2\"");
        }
        test_response failed;
        failed.error = boost::asio::error::connection_reset;
        return failed;
    });
    EXPECT_EQ(second.at("http://a.test/down").status, 0);
    history_map next;
    for (const auto& [url, bytes] : second.state->take_batch().history) {
        auto entry = decode_fetch_history(bytes);
        ASSERT_TRUE(entry) << url;
        next[url] = std::move(*entry);
    }
    ASSERT_TRUE(next.contains("http://a.test/down"));
    EXPECT_EQ(next.at("http://a.test/down").status, 0);
    EXPECT_EQ(next.at("http://a.test/down").depth, 1);

    // Generation 3: / answers 304, so its links come from the history, and down is asked again: new now.
    recrawl_harness third(std::move(next), true);
    std::set<std::string> asked;
    third.run([&](const std::string& url, std::vector<std::string>&) {
        asked.insert(url);
        return url == "http://a.test/" ? status_only(304) : html("<p>up again</p>");
    });
    EXPECT_EQ(asked, (std::set<std::string>{"http://a.test/", "http://a.test/down"}));
    EXPECT_EQ(third.at("http://a.test/down").change, change_kind::added);
    EXPECT_EQ(third.at("http://a.test/").change, change_kind::unchanged);
}

TEST(Recrawl, LinksABudgetKeptOutAreReachedByTheNextGenerationThroughA304) {
    // Generation 2 under max_pages 2: / and a are fetched; b and c, linked from /, are kept out.
    history_map history;
    history["http://a.test/"] = linking(known(200, "\"root\"", "sha1:R", 0), {});
    recrawl_harness second(std::move(history), true, [](crawler_config& c) { c.max_pages = 2; });
    second.run([&](const std::string& url, std::vector<std::string>& links) {
        if (url == "http://a.test/") {
            links = {"http://a.test/a", "http://a.test/b", "http://a.test/c"};
            return html("<p>root, edited</p>", "\"root2\"");
        }
        links = {"http://a.test/b"};
        return html("<p>" + url + "</p>");
    });
    EXPECT_EQ(second.records.size(), 2u);
    EXPECT_EQ(second.state->result().stats.at("skipped_max_pages"), 3u);
    history_map next;
    std::size_t entries = 0;
    for (const auto& [url, bytes] : second.state->take_batch().history) {
        auto entry = decode_fetch_history(bytes);
        ASSERT_TRUE(entry) << url;
        next[url] = std::move(*entry);
        ++entries;
    }
    EXPECT_EQ(entries, 4u) << "b is remembered once, though kept out by / and by a";
    ASSERT_TRUE(next.contains("http://a.test/b"));
    EXPECT_EQ(next.at("http://a.test/b").status, 0);
    EXPECT_EQ(next.at("http://a.test/c").depth, 1);
    EXPECT_EQ(next.at("http://a.test/c").referrer, "http://a.test/");

    // Generation 3 without the budget: / answers 304, and its links from the history lead to b and c.
    recrawl_harness third(std::move(next), true);
    std::set<std::string> asked;
    third.run([&](const std::string& url, std::vector<std::string>&) {
        asked.insert(url);
        return url == "http://a.test/" ? status_only(304) : html("<p>" + url + "</p>");
    });
    EXPECT_EQ(asked, (std::set<std::string>{"http://a.test/", "http://a.test/a", "http://a.test/b",
                                            "http://a.test/c"}));
    EXPECT_EQ(third.at("http://a.test/c").change, change_kind::added);
    EXPECT_EQ(third.at("http://a.test/a").change, change_kind::unchanged);
}

TEST(Recrawl, FollowsLinksFromTheHistoryAndReportsWhatNoPageReachesGone) {
    // Generation 1: / -> a, b; b -> vanished; a -> deep. Now / and a answer 304, b changed and links to
    // fresh instead of vanished.
    history_map history;
    history["http://a.test/"] =
        linking(known(200, "\"root\"", "sha1:R", 0), {"http://a.test/a", "http://a.test/b"});
    history["http://a.test/a"] = linking(known(200, "\"a\"", "sha1:A"), {"http://a.test/deep"});
    history["http://a.test/b"] = linking(known(200, "\"b1\"", "sha1:B"), {"http://a.test/vanished"});
    history["http://a.test/deep"] = linking(known(200, "\"d\"", "sha1:D", 2), {});
    history["http://a.test/vanished"] = linking(known(200, "\"v\"", "sha1:V", 2), {});
    history.at("http://a.test/vanished").referrer = "http://a.test/b";
    // Written without its outlinks (they overflowed): fetched in full, so that its links are seen.
    history["http://a.test/deep"].outlinks_known = false;
    recrawl_harness h(std::move(history), true);
    EXPECT_TRUE(h.state->follows_links());

    std::set<std::string> asked;
    std::set<std::string> conditional;
    h.run([&](const std::string& url, std::vector<std::string>& links) {
        asked.insert(url);
        if (h.state->conditional_basis(url) != nullptr)
            conditional.insert(url);
        if (url == "http://a.test/" || url == "http://a.test/a")
            return status_only(304);
        if (url == "http://a.test/b") {
            links = {"http://a.test/fresh"};
            return html("<p>b, edited</p>", "\"b2\"");
        }
        return html("<p>" + url + "</p>");
    });

    // Reached through the 304s' links as the history has them; the vanished page was not asked for.
    EXPECT_EQ(asked, (std::set<std::string>{"http://a.test/", "http://a.test/a", "http://a.test/b",
                                            "http://a.test/deep", "http://a.test/fresh"}));
    EXPECT_EQ(conditional, (std::set<std::string>{"http://a.test/", "http://a.test/a", "http://a.test/b"}));
    EXPECT_EQ(h.at("http://a.test/deep").depth, 2);
    EXPECT_EQ(h.at("http://a.test/deep").referrer, "http://a.test/a");
    EXPECT_EQ(h.at("http://a.test/fresh").change, change_kind::added);
    const auto& gone = h.at("http://a.test/vanished");
    EXPECT_EQ(gone.change, change_kind::gone);
    EXPECT_EQ(gone.status, 0);
    EXPECT_EQ(gone.tries, 0);
    EXPECT_FALSE(gone.failed());
    EXPECT_EQ(gone.referrer, "http://a.test/b");
    EXPECT_EQ(h.records.size(), 6u);
    EXPECT_EQ(h.unfinished, 0u) << "the crawl ends once the unreached URLs are reported";
    const auto& stats = h.state->result().stats;
    EXPECT_EQ(stats.at("change_gone"), 1u);
    EXPECT_EQ(stats.at("gone_unlinked"), 1u);
    EXPECT_EQ(stats.at("not_modified"), 2u);

    // The history it leaves: the 304s keep their outlinks, b has its new ones, the gone URL is forgotten.
    std::map<std::string, std::string> written;
    for (auto& [url, bytes] : h.state->take_batch().history)
        written[url] = bytes;
    ASSERT_TRUE(written.contains("http://a.test/vanished"));
    EXPECT_TRUE(written["http://a.test/vanished"].empty());
    const auto root = decode_fetch_history(written["http://a.test/"]);
    ASSERT_TRUE(root);
    EXPECT_EQ(root->outlinks.size(), 2u);
    const auto b = decode_fetch_history(written["http://a.test/b"]);
    ASSERT_TRUE(b);
    EXPECT_EQ(b->capture_id.size(), 16u) << "a full capture gets an id of its own";
    EXPECT_TRUE(b->outlinks_known);
    EXPECT_EQ(b->outlinks, std::vector<std::uint64_t>{outlink_fingerprint("http://a.test/fresh")});
}

TEST(Recrawl, AStoppedGenerationReportsNothingGone) {
    history_map history;
    history["http://a.test/"] = linking(known(200, "\"root\"", "sha1:R", 0), {});
    history["http://a.test/other"] = linking(known(200, "\"o\"", "sha1:O"), {});
    recrawl_harness h(std::move(history), true);
    auto t = h.next_started();
    ASSERT_TRUE(t);
    h.state->stop();
    h.answer(*t, status_only(304));
    EXPECT_EQ(h.records.size(), 1u);
    EXPECT_FALSE(h.state->result().stats.contains("change_gone"));
}

// ---- continuous mode: revisits on the schedule, on a manual clock ----

/// A continuous crawl whose answers the test chooses, with both clocks moved by hand (advance()).
struct continuous_harness : state_harness {
    explicit continuous_harness(bool durable = false, history_map* resumed = nullptr, bool sitemaps = false)
        : state_harness(
              [sitemaps](crawler_config& c) {
                  c.continuous = true;
                  c.sitemaps = sitemaps;
                  c.revisit.min = std::chrono::hours(1);
                  c.revisit.max = std::chrono::hours(24 * 30);
                  c.revisit.initial = std::chrono::hours(24);
              },
              durable, 64, &asiocrawl::test::manual_wall_clock) {
        if (resumed != nullptr) {
            // What a resume reads from the state dir: the seen set, and every URL's last fetch.
            for (const auto& [url, entry] : *resumed)
                state->seen_set().insert(url_fingerprint(url, 42));
            state->set_history(std::move(*resumed), 1, false);
        }
        state->start();
    }

    /// Answers the one ticket due now; false when none is.
    bool visit(const test_response& response) {
        auto t = next_started();
        if (!t)
            return false;
        answer(*t, response);
        return true;
    }

    /// How long from now until the state wants to be asked again.
    std::chrono::seconds wakeup_in() const {
        const auto wake = state->next_wakeup();
        EXPECT_TRUE(wake);
        return std::chrono::duration_cast<std::chrono::seconds>(*wake - asiocrawl::test::manual_now);
    }
};

TEST(Continuous, RevisitsOnScheduleAndAdaptsTheInterval) {
    continuous_harness h;
    const auto v1 = html("<p>one</p>", "\"v1\"");
    ASSERT_TRUE(h.visit(v1));
    EXPECT_EQ(h.records.back().change, change_kind::added);
    EXPECT_EQ(h.state->revisits_scheduled(), 1u);
    // Nothing before it is due; the crawl does not end meanwhile (the schedule holds a unit of work).
    EXPECT_FALSE(h.visit(v1));
    EXPECT_EQ(h.unfinished, 1u);
    EXPECT_EQ(h.wakeup_in(), std::chrono::hours(24)); // revisit.initial

    h.advance(std::chrono::hours(24));
    // Due: fetched again, conditionally (its validators are known), and found unchanged: the interval grows.
    ASSERT_NE(h.state->previous("http://a.test/"), nullptr);
    EXPECT_EQ(h.state->previous("http://a.test/")->etag, "\"v1\"");
    ASSERT_TRUE(h.visit(status_only(304)));
    EXPECT_EQ(h.records.back().change, change_kind::unchanged);
    EXPECT_TRUE(h.records.back().not_modified);
    EXPECT_EQ(h.wakeup_in(), std::chrono::hours(30)); // 24 h x 1.25

    h.advance(std::chrono::hours(30));
    ASSERT_TRUE(h.visit(html("<p>two</p>", "\"v2\"")));
    EXPECT_EQ(h.records.back().change, change_kind::changed);
    EXPECT_EQ(h.wakeup_in(), std::chrono::hours(24)); // 30 h x 0.8

    h.advance(std::chrono::hours(24));
    ASSERT_TRUE(h.visit(status_only(404)));
    EXPECT_EQ(h.records.back().change, change_kind::gone);
    EXPECT_EQ(h.wakeup_in(), std::chrono::hours(24 * 30)); // revisit.max

    EXPECT_EQ(h.state->result().stats.at("revisits"), 3u);
    // A stop lets the crawl end: the schedule's unit of work goes.
    h.state->stop();
    EXPECT_EQ(h.unfinished, 0u);
}

TEST(Continuous, ADurableScheduleIsResumedWhereItWas) {
    history_map kept;
    {
        continuous_harness h(true);
        ASSERT_TRUE(h.visit(html("<p>one</p>", "\"v1\"")));
        for (auto& [url, bytes] : h.state->take_batch().history)
            kept[url] = *decode_fetch_history(bytes);
        h.state->stop();
    }
    ASSERT_EQ(kept.size(), 1u);
    ASSERT_TRUE(kept.at("http://a.test/").revisit);
    EXPECT_FALSE(kept.at("http://a.test/").revisit_queued);

    // The next run, 10 hours later: nothing is fetched before the revisit is due, 14 hours on.
    continuous_harness resumed(true, &kept);
    resumed.advance(std::chrono::hours(10));
    EXPECT_FALSE(resumed.visit(status_only(304)));
    EXPECT_EQ(resumed.wakeup_in(), std::chrono::hours(14));
    resumed.advance(std::chrono::hours(14));
    ASSERT_TRUE(resumed.visit(status_only(304)));
    EXPECT_EQ(resumed.records.back().change, change_kind::unchanged);
    // Queued and fetched: the batch says so, and the next revisit is 30 hours on.
    const auto batch = resumed.state->take_batch();
    ASSERT_FALSE(batch.history.empty());
    const auto last = decode_fetch_history(batch.history.back().second);
    ASSERT_TRUE(last && last->revisit);
    EXPECT_FALSE(last->revisit_queued);
    EXPECT_EQ(last->revisit->due - last->revisit->fetched, std::chrono::hours(30));
    EXPECT_EQ(last->etag, "\"v1\""); // a 304 keeps the validators it stands for
    resumed.state->stop();
}

TEST(Continuous, ASitemapsChangefreqGivesTheFirstIntervalAndLastmodMakesAPageDue) {
    continuous_harness h(false, nullptr, true);
    // The root first, then the sitemap start() queued for its origin.
    std::vector<std::string> order;
    auto sitemap = html("");
    sitemap.content_type = "application/xml";
    sitemap.body = "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">"
                   "<url><loc>http://a.test/hourly</loc><changefreq>hourly</changefreq></url></urlset>";
    sitemap.body_bytes = sitemap.body.size();
    for (int i = 0; i < 3; ++i) {
        auto t = h.next_started();
        if (!t)
            break;
        order.push_back(t->item.url);
        h.answer(*t, t->item.url.ends_with("sitemap.xml") ? sitemap : html("<p>x</p>", "\"x\""));
    }
    ASSERT_EQ(order.size(), 3u);
    EXPECT_EQ(order[2], "http://a.test/hourly");
    // The root's first interval is revisit.initial (a day); the hourly page's is an hour.
    EXPECT_EQ(h.wakeup_in(), std::chrono::hours(1));
    h.advance(std::chrono::hours(1));
    ASSERT_TRUE(h.visit(status_only(304)));
    EXPECT_EQ(h.records.back().url, "http://a.test/hourly");
    h.state->stop();
}

/// A shared crawl's continuous instance: the schedule goes into the batch for Redis (state_batch::shared_due,
/// what the commit script writes into `due` and `dueitem`), and no entry stays in memory past its record.
TEST(Continuous, ASharedCrawlPutsTheScheduleInTheBatchAndHoldsNoEntry) {
    state_harness h(
        [](crawler_config& c) {
            c.continuous = true;
            c.revisit.min = std::chrono::hours(1);
            c.revisit.max = std::chrono::hours(24 * 30);
            c.revisit.initial = std::chrono::hours(24);
        },
        true, 64, &asiocrawl::test::manual_wall_clock);
    h->set_shared();
    h->start();
    const auto roots = h->take_batch();
    ASSERT_EQ(roots.waiting.size(), 1u);
    EXPECT_TRUE(roots.shared_due.empty());
    const auto ms_at = [](std::chrono::system_clock::time_point t) {
        return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
    };

    // The first visit (leased as id 7): new, due a day on.
    ASSERT_TRUE(h->take_leased(7, *decode_work_item(roots.waiting.front().item)));
    auto first = h.take("http://a.test/");
    h.answer(*first, html("<p>one</p>", "\"v1\""));
    EXPECT_EQ(h.records.back().change, change_kind::added);
    auto batch = h->take_batch();
    ASSERT_EQ(batch.shared_due.size(), 1u);
    const auto& due = batch.shared_due.front();
    EXPECT_EQ(due.url, "http://a.test/");
    EXPECT_EQ(due.host, "a.test");
    EXPECT_EQ(due.due_ms, ms_at(asiocrawl::test::manual_wall_now + std::chrono::hours(24)));
    const auto again = decode_work_item(due.item);
    ASSERT_TRUE(again);
    EXPECT_EQ(again->url, "http://a.test/");
    EXPECT_EQ(again->tries, 0);
    ASSERT_EQ(batch.history.size(), 1u);
    EXPECT_EQ(batch.finished.size(), 1u);
    EXPECT_EQ(h->history_held(), 0u) << "the entry is Redis's: it comes back with the revisit's lease";
    EXPECT_EQ(h->revisits_scheduled(), 0u);

    // The lease script queued it when due (id 9), with its entry: a conditional request, unchanged, and the
    // interval grows.
    h.advance(std::chrono::hours(24));
    h->count_shared_revisits(1);
    ASSERT_TRUE(h->take_leased(9, *again, decode_fetch_history(batch.history.front().second)));
    auto revisit = h.take("http://a.test/");
    ASSERT_NE(h->conditional_basis("http://a.test/"), nullptr);
    EXPECT_EQ(h->conditional_basis("http://a.test/")->etag, "\"v1\"");
    h.answer(*revisit, status_only(304));
    EXPECT_EQ(h.records.back().change, change_kind::unchanged);
    batch = h->take_batch();
    ASSERT_EQ(batch.shared_due.size(), 1u);
    EXPECT_EQ(batch.shared_due.front().due_ms,
              ms_at(asiocrawl::test::manual_wall_now + std::chrono::hours(30)));
    EXPECT_EQ(h->history_held(), 0u);
    EXPECT_EQ(h->result().stats.at("revisits"), 1u);
    h->stop();
    EXPECT_EQ(h.unfinished, 0u);
}

// ---- continuous mode's due-time index (key D in the state directory) ----

TEST(DueIndex, KeysSortByTimeThenUrlAndReadBack) {
    constexpr auto lowest = std::numeric_limits<std::int64_t>::min();
    constexpr auto highest = std::numeric_limits<std::int64_t>::max();
    // In key order: what the store's byte order must keep.
    const std::vector<due_key> ordered{
        {lowest, "http://a.test/"},
        {-1, "http://a.test/"},
        {0, "http://a.test/"},
        {0, "http://a.test/a"},
        {1, "http://a.test/"},
        {1'800'000'000, "http://a.test/"},
        {1'800'000'000, "http://b.test/"},
        {1'800'000'001, "http://a.test/"},
        {highest, "http://a.test/"},
    };
    for (std::size_t i = 0; i < ordered.size(); ++i) {
        const auto bytes = encode_due_key(ordered[i]);
        EXPECT_EQ(bytes.size(), 9 + ordered[i].url.size());
        EXPECT_EQ(decode_due_key(bytes), ordered[i]);
        if (i > 0) {
            EXPECT_LT(ordered[i - 1], ordered[i]);
            EXPECT_LT(encode_due_key(ordered[i - 1]), bytes) << i;
        }
        // The key after one is past it and before any other.
        const auto after = due_key_after(ordered[i]);
        EXPECT_LT(ordered[i], after);
        EXPECT_LT(encode_due_key(ordered[i]), encode_due_key(after));
        if (i + 1 < ordered.size()) {
            EXPECT_LT(after, ordered[i + 1]);
            EXPECT_LT(encode_due_key(after), encode_due_key(ordered[i + 1]));
        }
    }
    EXPECT_EQ(encode_due_key({1, "u"}), std::string("D\x80\0\0\0\0\0\0\x01u", 10));
    // Anything else is refused: too short, another kind of key, no URL.
    for (const std::string& bad :
         {std::string(), std::string("D"), std::string("D\x80\0\0\0\0\0\0", 8),
          std::string("D\x80\0\0\0\0\0\0\x01", 9), std::string("F\x80\0\0\0\0\0\0\x01u", 10)})
        EXPECT_FALSE(decode_due_key(bad)) << bad.size();
}

} // namespace recrawl_test
