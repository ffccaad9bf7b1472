#include <asiocrawl/report.hpp>

#include <asiocrawl/error.hpp>

#include <boost/asio/error.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/json/parse.hpp>
#include <boost/system/errc.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using asiocrawl::count_record;
using asiocrawl::counters;
using asiocrawl::error;
using asiocrawl::error_kind;
using asiocrawl::record;
using asiocrawl::report;
using asiocrawl::to_json;
using asiocrawl::to_json_line;
using asiocrawl::write_report;
using boost::system::error_code;
using testing::ElementsAre;
using testing::HasSubstr;
using testing::Pair;
using namespace std::chrono_literals;

// ---------------------------------------------------------------------------------------------------------------
// Record shapes used throughout.

record html_page() {
    record r;
    r.url = "http://example.com/";
    r.status = 200;
    r.content_type = "text/html";
    r.charset = "utf-8";
    r.size = 1234;
    r.num_urls = 10;
    r.num_new_urls = 7;
    r.depth = 0;
    r.tries = 1;
    r.started = 1500us;
    r.elapsed = 42'250us;
    return r;
}

record other_page() {
    record r;
    r.url = "http://example.com/logo.png";
    r.status = 200;
    r.content_type = "image/png";
    r.size = 5000;
    r.depth = 1;
    r.tries = 1;
    return r;
}

record redirect_hop() {
    record r;
    r.url = "http://example.com/old";
    r.next_url = "http://example.com/new";
    r.status = 301;
    r.depth = 1;
    r.tries = 1;
    return r;
}

record not_found_page() {
    record r;
    r.url = "http://example.com/missing";
    r.status = 404;
    r.content_type = "text/html";
    r.charset = "utf-8";
    r.size = 300;
    r.depth = 1;
    r.tries = 1;
    return r;
}

record network_failure() {
    record r;
    r.url = "http://down.example.com/";
    r.error = boost::asio::error::connection_refused;
    r.depth = 0;
    r.tries = 4;
    return r;
}

record redirect_limit_failure() {
    record r;
    r.url = "http://example.com/loop";
    r.next_url = "http://example.com/loop2";
    r.status = 302;
    r.error = error::redirect_limit;
    r.depth = 2;
    r.tries = 1;
    return r;
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        lines.push_back(line);
    }
    return lines;
}

// The per-record lines of a report: everything between the heading and the "Finished" line.
std::vector<std::string> record_lines(const report& r, bool verbose = false) {
    std::ostringstream out;
    write_report(out, r, verbose);
    const std::vector<std::string> lines = lines_of(out.str());
    std::vector<std::string> records;
    bool in_records = false;
    for (const std::string& line : lines) {
        if (line == "*** Report ***") {
            in_records = true;
        } else if (line.starts_with("Finished ")) {
            break;
        } else if (in_records) {
            records.push_back(line);
        }
    }
    return records;
}

report report_of(std::vector<record> records) {
    report r;
    r.records = std::move(records);
    r.done = r.records.size();
    for (const record& each : r.records) {
        count_record(r.stats, each);
    }
    return r;
}

// ---------------------------------------------------------------------------------------------------------------
// One line per record shape.

struct line_case {
    const char* name;
    record (*make)();
    const char* line;
    const char* verbose_line;
};

std::ostream& operator<<(std::ostream& out, const line_case& c) {
    return out << c.name;
}

class RecordLine : public testing::TestWithParam<line_case> {};

TEST_P(RecordLine, MatchesTheGoldenLine) {
    const report r = report_of({GetParam().make()});
    EXPECT_THAT(record_lines(r), ElementsAre(GetParam().line));
    EXPECT_THAT(record_lines(r, true), ElementsAre(GetParam().verbose_line));
}

const line_case line_cases[] = {
    {"html", html_page, "http://example.com/ 200 text/html utf-8 1234 7/10",
     "http://example.com/ 200 text/html utf-8 1234 7/10 depth=0 tries=1 42.2ms"},
    {"other_without_charset", other_page, "http://example.com/logo.png 200 image/png - 5000 0/0",
     "http://example.com/logo.png 200 image/png - 5000 0/0 depth=1 tries=1 0.0ms"},
    {"redirect", redirect_hop, "http://example.com/old 301 redirect http://example.com/new",
     "http://example.com/old 301 redirect http://example.com/new depth=1 tries=1 0.0ms"},
    {"error_status", not_found_page, "http://example.com/missing 404 text/html utf-8 300 0/0",
     "http://example.com/missing 404 text/html utf-8 300 0/0 depth=1 tries=1 0.0ms"},
    {"network_failure", network_failure,
     "http://down.example.com/ error connection_refused (Connection refused)",
     "http://down.example.com/ error connection_refused (Connection refused) depth=0 tries=4 0.0ms"},
    {"failure_with_status_and_target", redirect_limit_failure,
     "http://example.com/loop 302 error redirect_limit (redirect limit reached) -> http://example.com/loop2",
     "http://example.com/loop 302 error redirect_limit (redirect limit reached) -> http://example.com/loop2 "
     "depth=2 tries=1 0.0ms"},
};

INSTANTIATE_TEST_SUITE_P(Shapes, RecordLine, testing::ValuesIn(line_cases),
                         [](const testing::TestParamInfo<line_case>& info) { return info.param.name; });

TEST(RecordLine, MissingContentTypeIsADash) {
    record r = other_page();
    r.content_type.clear();
    EXPECT_THAT(record_lines(report_of({r})), ElementsAre("http://example.com/logo.png 200 - - 5000 0/0"));
}

TEST(WriteReport, SortsByUrlKeepingCompletionOrderForTies) {
    record b = html_page();
    b.url = "http://b/";
    record a_first = redirect_hop();
    a_first.url = "http://a/";
    a_first.next_url = "http://a/first";
    record c = other_page();
    c.url = "http://c/";
    record a_second = redirect_hop();
    a_second.url = "http://a/";
    a_second.next_url = "http://a/second";
    record a_slash_deeper = redirect_hop();
    a_slash_deeper.url = "http://a/x";
    a_slash_deeper.next_url = "http://a/y";

    EXPECT_THAT(record_lines(report_of({b, a_first, c, a_slash_deeper, a_second})),
                ElementsAre("http://a/ 301 redirect http://a/first", "http://a/ 301 redirect http://a/second",
                            "http://a/x 301 redirect http://a/y", "http://b/ 200 text/html utf-8 1234 7/10",
                            "http://c/ 200 image/png - 5000 0/0"));
}

TEST(WriteReport, FullReport) {
    setenv("TZ", "UTC", 1);
    tzset();

    report r = report_of({other_page(), html_page(), redirect_hop()});
    r.todo = 2;
    r.max_tasks = 100;
    r.elapsed = 1500ms;
    r.started_at = std::chrono::system_clock::from_time_t(1717423509); // 2024-06-03 14:05:09 UTC
    r.stats["skipped_scope"] = 12'345'678'901ull;

    std::ostringstream out;
    write_report(out, r);
    EXPECT_EQ(out.str(), "*** Report ***\n"
                         "http://example.com/ 200 text/html utf-8 1234 7/10\n"
                         "http://example.com/logo.png 200 image/png - 5000 0/0\n"
                         "http://example.com/old 301 redirect http://example.com/new\n"
                         "Finished 3 urls in 1.500 secs (max_tasks=100) (2.0 urls/sec)\n"
                         "         1 html\n"
                         "      1234 html_bytes\n"
                         "         1 other\n"
                         "      5000 other_bytes\n"
                         "         1 redirect\n"
                         "12345678901 skipped_scope\n"
                         "         2 status_200\n"
                         "         1 status_301\n"
                         "Todo: 2\n"
                         "Done: 3\n"
                         "Date: Mon Jun  3 14:05:09 2024 local time\n");
}

TEST(WriteReport, WithoutRecordsPrintsOnlyTheSummary) {
    report r;
    r.stats["html"] = 5;
    r.done = 5;
    r.max_tasks = 10;
    r.elapsed = 2s;

    std::ostringstream out;
    write_report(out, r);
    const std::vector<std::string> lines = lines_of(out.str());
    ASSERT_EQ(lines.size(), 5u);
    EXPECT_EQ(lines[0], "Finished 5 urls in 2.000 secs (max_tasks=10) (2.5 urls/sec)");
    EXPECT_EQ(lines[1], "         5 html");
    EXPECT_EQ(lines[2], "Todo: 0");
    EXPECT_EQ(lines[3], "Done: 5");
    EXPECT_THAT(lines[4], testing::MatchesRegex("Date: [A-Z][a-z][a-z] [A-Z][a-z][a-z] [ 0-9][0-9] "
                                                "[0-9][0-9]:[0-9][0-9]:[0-9][0-9] [0-9]+ local time"));
}

TEST(WriteReport, ZeroElapsedTimeDoesNotDivideByZero) {
    report r;
    r.done = 3;
    r.max_tasks = 1;
    std::ostringstream out;
    write_report(out, r);
    EXPECT_THAT(out.str(),
                testing::StartsWith("Finished 3 urls in 0.000 secs (max_tasks=1) (0.0 urls/sec)\n"));
}

TEST(WriteReport, RateIsForTheWholeCrawlNotPerTask) {
    report r;
    r.done = 1000;
    r.max_tasks = 100;
    r.elapsed = 4s;
    std::ostringstream out;
    write_report(out, r);
    EXPECT_THAT(out.str(),
                testing::StartsWith("Finished 1000 urls in 4.000 secs (max_tasks=100) (250.0 urls/sec)\n"));
}

// ---------------------------------------------------------------------------------------------------------------
// Counters.

struct count_case {
    const char* name;
    record (*make)();
    counters expected;
};

std::ostream& operator<<(std::ostream& out, const count_case& c) {
    return out << c.name;
}

class CountRecord : public testing::TestWithParam<count_case> {};

TEST_P(CountRecord, AddsItsContribution) {
    counters stats;
    count_record(stats, GetParam().make());
    EXPECT_EQ(stats, GetParam().expected);
}

record xhtml_page() {
    record r = html_page();
    r.content_type = "application/xhtml+xml";
    r.size = 10;
    return r;
}

record no_content_page() {
    record r = other_page();
    r.status = 204;
    r.content_type.clear();
    r.size = 0;
    return r;
}

record server_error_page() {
    record r = other_page();
    r.status = 503;
    r.content_type = "text/plain";
    r.size = 17;
    return r;
}

record timeout_failure() {
    record r = network_failure();
    r.error = error::request_timeout;
    return r;
}

record robots_denial() {
    record r = network_failure();
    r.error = error::robots_denied;
    return r;
}

record not_modified_without_target() {
    record r = redirect_hop();
    r.next_url.clear();
    r.status = 304;
    return r;
}

const count_case count_cases[] = {
    {"html", html_page, {{"html", 1}, {"html_bytes", 1234}, {"status_200", 1}}},
    {"xhtml", xhtml_page, {{"html", 1}, {"html_bytes", 10}, {"status_200", 1}}},
    {"other", other_page, {{"other", 1}, {"other_bytes", 5000}, {"status_200", 1}}},
    {"no_content", no_content_page, {{"other", 1}, {"other_bytes", 0}, {"status_204", 1}}},
    {"redirect", redirect_hop, {{"redirect", 1}, {"status_301", 1}}},
    {"html_error_page", not_found_page, {{"error", 1}, {"error_bytes", 300}, {"status_404", 1}}},
    {"server_error", server_error_page, {{"error", 1}, {"error_bytes", 17}, {"status_503", 1}}},
    {"3xx_without_target",
     not_modified_without_target,
     {{"error", 1}, {"error_bytes", 0}, {"status_304", 1}}},
    {"network_failure", network_failure, {{"fail", 1}, {"fail_connection_refused", 1}}},
    {"timeout_failure", timeout_failure, {{"fail", 1}, {"fail_request_timeout", 1}}},
    {"failure_with_status",
     redirect_limit_failure,
     {{"fail", 1}, {"fail_redirect_limit", 1}, {"status_302", 1}}},
    // robots.txt said no: the site did not fail, so reports keep it apart from "fail".
    {"robots_denied", robots_denial, {{"robots_denied", 1}}},
};

INSTANTIATE_TEST_SUITE_P(Shapes, CountRecord, testing::ValuesIn(count_cases),
                         [](const testing::TestParamInfo<count_case>& info) { return info.param.name; });

TEST(CountRecordTotals, Accumulate) {
    counters stats{{"skipped_scope", 3}};
    for (const record& r : {html_page(), html_page(), redirect_hop(), network_failure(), timeout_failure(),
                            not_found_page(), other_page(), robots_denial(), robots_denial()}) {
        count_record(stats, r);
    }
    EXPECT_THAT(stats, ElementsAre(Pair("error", 1), Pair("error_bytes", 300), Pair("fail", 2),
                                   Pair("fail_connection_refused", 1), Pair("fail_request_timeout", 1),
                                   Pair("html", 2), Pair("html_bytes", 2468), Pair("other", 1),
                                   Pair("other_bytes", 5000), Pair("redirect", 1), Pair("robots_denied", 2),
                                   Pair("skipped_scope", 3), Pair("status_200", 3), Pair("status_301", 1),
                                   Pair("status_404", 1)));
}

TEST(WriteReport, RobotsDenialsAreListedApartFromFailures) {
    asiocrawl::report r;
    r.records = {robots_denial(), network_failure()};
    for (const record& each : r.records)
        count_record(r.stats, each);
    r.done = 2;
    std::ostringstream out;
    asiocrawl::write_report(out, r);
    EXPECT_THAT(out.str(), testing::HasSubstr("         1 fail\n"));
    EXPECT_THAT(out.str(), testing::HasSubstr("         1 robots_denied\n"));
    EXPECT_THAT(out.str(), testing::Not(testing::HasSubstr("fail_robots_denied")));
}

asiocrawl::report summary_fixture() {
    asiocrawl::report r;
    r.max_tasks = 7;
    r.todo = 2;
    r.started_at = std::chrono::system_clock::time_point{std::chrono::seconds{1'700'000'000}};
    r.elapsed = std::chrono::milliseconds{2500};
    for (int ms : {10, 20, 30, 40, 50, 60, 70, 80, 90, 100}) {
        record page = html_page();
        page.elapsed = std::chrono::milliseconds{ms};
        r.records.push_back(page);
    }
    r.records.push_back(network_failure());
    r.records.back().elapsed = std::chrono::milliseconds{1000};
    r.records.push_back(robots_denial());
    r.records.back().elapsed = std::chrono::milliseconds{0};
    r.stats["skipped_scope"] = 4;
    for (const record& each : r.records)
        count_record(r.stats, each);
    r.done = r.records.size();
    return r;
}

TEST(SummaryJson, CarriesCountersGroupsAndTimings) {
    const asiocrawl::report r = summary_fixture();
    std::ostringstream out;
    asiocrawl::write_report_json(out, r);
    ASSERT_FALSE(out.str().empty());
    EXPECT_EQ(out.str().back(), '\n');
    const boost::json::object summary = boost::json::parse(out.str()).as_object();

    EXPECT_EQ(summary.at("done").to_number<std::uint64_t>(), 12u);
    EXPECT_EQ(summary.at("todo").to_number<std::uint64_t>(), 2u);
    EXPECT_EQ(summary.at("max_tasks").to_number<std::uint64_t>(), 7u);
    EXPECT_EQ(summary.at("started_at").as_string(), "2023-11-14T22:13:20Z");
    EXPECT_DOUBLE_EQ(summary.at("elapsed_s").as_double(), 2.5);
    EXPECT_DOUBLE_EQ(summary.at("urls_per_sec").as_double(), 12 / 2.5);

    const auto& all = summary.at("counters").as_object();
    EXPECT_EQ(all.at("html").to_number<std::uint64_t>(), 10u);
    EXPECT_EQ(all.at("fail").to_number<std::uint64_t>(), 1u);
    EXPECT_EQ(all.at("robots_denied").to_number<std::uint64_t>(), 1u);
    EXPECT_EQ(all.size(), r.stats.size());
    EXPECT_EQ(summary.at("status").as_object().at("200").to_number<std::uint64_t>(), 10u);
    EXPECT_EQ(summary.at("status").as_object().size(), 1u);
    const auto& errors = summary.at("errors").as_object();
    EXPECT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors.at("connection_refused").to_number<std::uint64_t>(), 1u);
    EXPECT_EQ(summary.at("skipped").as_object().at("scope").to_number<std::uint64_t>(), 4u);

    const auto& timings = summary.at("timings").as_object();
    EXPECT_EQ(timings.at("count").to_number<std::uint64_t>(), 12u);
    EXPECT_DOUBLE_EQ(timings.at("min_ms").as_double(), 0.0);
    EXPECT_DOUBLE_EQ(timings.at("max_ms").as_double(), 1000.0);
    EXPECT_DOUBLE_EQ(timings.at("mean_ms").as_double(), (550.0 + 1000.0) / 12);
    // Nearest rank over 0,10,...,100,1000: the 6th of 12 values, the 11th, the 12th.
    EXPECT_DOUBLE_EQ(timings.at("p50_ms").as_double(), 50.0);
    EXPECT_DOUBLE_EQ(timings.at("p90_ms").as_double(), 100.0);
    EXPECT_DOUBLE_EQ(timings.at("p99_ms").as_double(), 1000.0);
}

TEST(SummaryJson, WithoutKeptRecordsHasOnlyATimingCount) {
    asiocrawl::report r = summary_fixture();
    r.records.clear();
    const boost::json::object summary = asiocrawl::summary_json(r);
    EXPECT_EQ(summary.at("done").to_number<std::uint64_t>(), 12u);
    EXPECT_EQ(summary.at("timings").as_object().size(), 1u);
    EXPECT_EQ(summary.at("timings").as_object().at("count").to_number<std::uint64_t>(), 0u);
    EXPECT_DOUBLE_EQ(summary.at("urls_per_sec").as_double(), 12 / 2.5);
}

// ---------------------------------------------------------------------------------------------------------------
// JSON Lines.

TEST(ToJson, PageHasEveryFieldInOrderAndNoErrorOrTarget) {
    const boost::json::object json = to_json(html_page());
    std::vector<std::string> keys;
    for (const auto& field : json) {
        keys.emplace_back(field.key());
    }
    EXPECT_THAT(keys, ElementsAre("url", "status", "size", "content_type", "charset", "num_urls",
                                  "num_new_urls", "depth", "tries", "started_ms", "elapsed_ms"));
}

TEST(ToJson, LineRoundTrips) {
    const std::string line = to_json_line(html_page());
    ASSERT_FALSE(line.empty());
    EXPECT_EQ(line.back(), '\n');
    EXPECT_EQ(line.find('\n'), line.size() - 1) << "one record, one line";

    const boost::json::value parsed = boost::json::parse(line);
    const boost::json::object& json = parsed.as_object();
    EXPECT_EQ(json.at("url").as_string(), "http://example.com/");
    EXPECT_EQ(json.at("status").to_number<int>(), 200);
    EXPECT_EQ(json.at("size").to_number<std::uint64_t>(), 1234u);
    EXPECT_EQ(json.at("content_type").as_string(), "text/html");
    EXPECT_EQ(json.at("charset").as_string(), "utf-8");
    EXPECT_EQ(json.at("num_urls").to_number<int>(), 10);
    EXPECT_EQ(json.at("num_new_urls").to_number<int>(), 7);
    EXPECT_EQ(json.at("depth").to_number<int>(), 0);
    EXPECT_EQ(json.at("tries").to_number<int>(), 1);
    EXPECT_DOUBLE_EQ(json.at("started_ms").to_number<double>(), 1.5);
    EXPECT_DOUBLE_EQ(json.at("elapsed_ms").to_number<double>(), 42.25);
    EXPECT_FALSE(json.contains("next_url"));
    EXPECT_FALSE(json.contains("error"));
    EXPECT_FALSE(json.contains("error_kind"));
}

TEST(ToJson, FailureCarriesErrorTargetAndKind) {
    const boost::json::value parsed = boost::json::parse(to_json_line(redirect_limit_failure()));
    const boost::json::object& json = parsed.as_object();
    EXPECT_EQ(json.at("next_url").as_string(), "http://example.com/loop2");
    EXPECT_EQ(json.at("status").to_number<int>(), 302);
    EXPECT_EQ(json.at("error").as_string(), "redirect limit reached");
    EXPECT_EQ(json.at("error_kind").as_string(), "redirect_limit");
    EXPECT_EQ(json.at("depth").to_number<int>(), 2);
}

TEST(ToJson, EscapesAwkwardStrings) {
    record r = html_page();
    r.url = "http://example.com/\"quoted\"\\path\n";
    const boost::json::value parsed = boost::json::parse(to_json_line(r));
    EXPECT_EQ(parsed.at("url").as_string(), r.url);
}

TEST(ToJson, LargeSizesSurvive) {
    record r = other_page();
    r.size = 0xFFFF'FFFF'FFFFull;
    const boost::json::value parsed = boost::json::parse(to_json_line(r));
    EXPECT_EQ(parsed.at("size").to_number<std::uint64_t>(), 0xFFFF'FFFF'FFFFull);
}

TEST(ToJson, NumbersArePlainDecimals) {
    record r = html_page();
    r.started = std::chrono::microseconds{89}; // 0.089 ms: Boost.JSON alone writes 8.9E-2
    r.elapsed = std::chrono::microseconds{1'240'000};
    const std::string line = to_json_line(r);
    EXPECT_THAT(line, HasSubstr("\"started_ms\":0.089,"));
    EXPECT_THAT(line, HasSubstr("\"elapsed_ms\":1240.0}"));
    EXPECT_EQ(line.find('E'), std::string::npos) << line;
    EXPECT_EQ(asiocrawl::to_json_text(boost::json::value(37.2)), "37.2");
    EXPECT_EQ(asiocrawl::to_json_text(boost::json::value(0.08992923)), "0.08992923");
    EXPECT_EQ(asiocrawl::to_json_text(boost::json::value(1e21)), "1000000000000000000000.0");
    EXPECT_EQ(asiocrawl::to_json_text(boost::json::value(-3)), "-3");
    EXPECT_EQ(asiocrawl::to_json_text(boost::json::parse(R"({"a":[1,2.5,"x\"y"],"b":null,"c":true})")),
              R"({"a":[1,2.5,"x\"y"],"b":null,"c":true})");
}

TEST(ToJson, ReferrerIsWrittenWhenKnown) {
    record r = html_page();
    EXPECT_FALSE(boost::json::parse(to_json_line(r)).as_object().contains("referrer")) << "a root has none";
    r.referrer = "http://example.com/index.html";
    EXPECT_EQ(boost::json::parse(to_json_line(r)).at("referrer").as_string(), r.referrer);
}

TEST(FailureClass, SortsRecordsForFailOnAndBrokenLinks) {
    record page = html_page();
    EXPECT_EQ(asiocrawl::failure_class(page), "");
    EXPECT_FALSE(asiocrawl::broken_link_of(page));
    record missing = html_page();
    missing.status = 404;
    missing.referrer = "http://example.com/a";
    EXPECT_EQ(asiocrawl::failure_class(missing), "4xx");
    const auto link = asiocrawl::broken_link_of(missing);
    ASSERT_TRUE(link);
    EXPECT_EQ(link->referrer, "http://example.com/a");
    EXPECT_EQ(link->status, 404);
    EXPECT_EQ(link->error_kind, "");
    record busy = html_page();
    busy.status = 503;
    busy.error = error::retry_limit;
    EXPECT_EQ(asiocrawl::failure_class(busy), "5xx");
    EXPECT_EQ(asiocrawl::broken_link_of(busy)->error_kind, "retry_limit");
    record refused = html_page();
    refused.status = 0;
    refused.error = boost::asio::error::connection_refused;
    EXPECT_EQ(asiocrawl::failure_class(refused), "network");
    EXPECT_EQ(asiocrawl::failure_class(redirect_limit_failure()), "network");
    record denied = html_page();
    denied.status = 0;
    denied.error = error::robots_denied;
    EXPECT_EQ(asiocrawl::failure_class(denied), "robots");
    EXPECT_FALSE(asiocrawl::broken_link_of(denied)) << "robots.txt said no: nothing is broken";
}

TEST(SummaryJson, ListsBrokenLinksByReferrer) {
    asiocrawl::broken_links broken;
    broken.links = {{"http://h/z", "http://h/b", 404, ""},
                    {"http://h/y", "http://h/a", 0, "connection_refused"},
                    {"http://h/x", "http://h/b", 500, ""}};
    broken.omitted = 2;
    const auto summary = asiocrawl::summary_json(summary_fixture(), &broken);
    const auto& links = summary.at("broken_links").as_array();
    ASSERT_EQ(links.size(), 3u);
    EXPECT_EQ(links[0].at("referrer").as_string(), "http://h/a");
    EXPECT_EQ(links[0].at("error_kind").as_string(), "connection_refused");
    EXPECT_EQ(links[1].at("url").as_string(), "http://h/x");
    EXPECT_EQ(links[2].at("url").as_string(), "http://h/z");
    EXPECT_EQ(links[2].at("status").to_number<int>(), 404);
    EXPECT_FALSE(links[2].as_object().contains("error_kind"));
    EXPECT_EQ(summary.at("broken_links_omitted").to_number<int>(), 2);
    EXPECT_FALSE(asiocrawl::summary_json(summary_fixture()).contains("broken_links"));
}

// ---------------------------------------------------------------------------------------------------------------
// The asiocrawl error category and error_kind().

struct enumerator_case {
    error value;
    const char* kind;
};

std::ostream& operator<<(std::ostream& out, const enumerator_case& c) {
    return out << c.kind;
}

class ErrorEnumerator : public testing::TestWithParam<enumerator_case> {};

TEST_P(ErrorEnumerator, HasAMessageAndItsOwnNameAsKind) {
    const error_code ec = GetParam().value;
    EXPECT_TRUE(ec.failed());
    EXPECT_EQ(&ec.category(), &asiocrawl::error_category());
    EXPECT_STREQ(ec.category().name(), "asiocrawl");
    EXPECT_FALSE(ec.message().empty());
    EXPECT_EQ(error_kind(ec), GetParam().kind);
}

const enumerator_case enumerator_cases[] = {
    {error::invalid_url, "invalid_url"},
    {error::unsupported_scheme, "unsupported_scheme"},
    {error::redirect_limit, "redirect_limit"},
    {error::missing_location, "missing_location"},
    {error::invalid_location, "invalid_location"},
    {error::connect_timeout, "connect_timeout"},
    {error::request_timeout, "request_timeout"},
    {error::body_too_large, "body_too_large"},
    {error::header_too_large, "header_too_large"},
    {error::bad_response, "bad_response"},
    {error::decoding_failed, "decoding_failed"},
    {error::retry_limit, "retry_limit"},
    {error::tls_handshake_failed, "tls_handshake_failed"},
    {error::certificate_invalid, "certificate_invalid"},
    {error::forbidden_address, "forbidden_address"},
    {error::proxy_failed, "proxy_failed"},
    {error::robots_denied, "robots_denied"},
    {error::robots_unavailable, "robots_unavailable"},
    {error::internal_error, "internal_error"},
};

INSTANTIATE_TEST_SUITE_P(All, ErrorEnumerator, testing::ValuesIn(enumerator_cases),
                         [](const testing::TestParamInfo<enumerator_case>& info) { return info.param.kind; });

TEST(ErrorCategory, TableCoversEveryEnumerator) {
    EXPECT_EQ(std::size(enumerator_cases), static_cast<std::size_t>(error::internal_error));
}

TEST(ErrorCategory, MessagesAreDistinct) {
    std::vector<std::string> messages;
    for (const enumerator_case& c : enumerator_cases) {
        messages.push_back(error_code(c.value).message());
    }
    std::sort(messages.begin(), messages.end());
    EXPECT_EQ(std::adjacent_find(messages.begin(), messages.end()), messages.end());
}

TEST(ErrorCategory, KnownMessage) {
    EXPECT_EQ(error_code(error::redirect_limit).message(), "redirect limit reached");
}

TEST(ErrorCategory, TimeoutsAreTimedOutConditions) {
    EXPECT_EQ(error_code(error::connect_timeout), boost::system::errc::timed_out);
    EXPECT_EQ(error_code(error::request_timeout), boost::system::errc::timed_out);
    EXPECT_NE(error_code(error::redirect_limit), boost::system::errc::timed_out);
}

TEST(ErrorCategory, DefaultCodeMeansNoError) {
    const error_code none;
    EXPECT_FALSE(none.failed());
    EXPECT_EQ(error_kind(none), "");
}

TEST(ErrorCategory, UnknownValueIsOther) {
    const error_code unknown(999, asiocrawl::error_category());
    EXPECT_EQ(error_kind(unknown), "other");
    EXPECT_FALSE(unknown.message().empty());
}

struct network_case {
    const char* name;
    error_code code;
    const char* kind;
};

std::ostream& operator<<(std::ostream& out, const network_case& c) {
    return out << c.name;
}

class NetworkErrorKind : public testing::TestWithParam<network_case> {};

TEST_P(NetworkErrorKind, MapsToItsKind) {
    EXPECT_EQ(error_kind(GetParam().code), GetParam().kind);
}

namespace asio_error = boost::asio::error;
namespace http = boost::beast::http;

const network_case network_cases[] = {
    {"connection_refused", asio_error::connection_refused, "connection_refused"},
    {"connection_reset", asio_error::connection_reset, "connection_reset"},
    {"connection_aborted", asio_error::connection_aborted, "connection_aborted"},
    {"timed_out", asio_error::timed_out, "timeout"},
    {"host_not_found", asio_error::host_not_found, "host_not_found"},
    {"host_not_found_try_again", asio_error::host_not_found_try_again, "dns_temporary"},
    {"no_data", asio_error::no_data, "host_not_found"},
    {"network_unreachable", asio_error::network_unreachable, "network_unreachable"},
    {"host_unreachable", asio_error::host_unreachable, "host_unreachable"},
    {"eof", asio_error::eof, "eof"},
    {"operation_aborted", asio_error::operation_aborted, "cancelled"},
    {"broken_pipe", asio_error::broken_pipe, "broken_pipe"},
    {"beast_timeout", boost::beast::error::timeout, "timeout"},
    {"http_end_of_stream", http::error::end_of_stream, "eof"},
    {"http_body_limit", http::error::body_limit, "body_too_large"},
    {"http_header_limit", http::error::header_limit, "header_too_large"},
    {"http_partial_message", http::error::partial_message, "partial_response"},
    {"http_bad_version", http::error::bad_version, "bad_response"},
    {"http_bad_status", http::error::bad_status, "bad_response"},
    {"http_bad_chunk", http::error::bad_chunk, "bad_response"},
    {"http_bad_field", http::error::bad_field, "bad_response"},
    {"generic_connection_refused",
     boost::system::errc::make_error_code(boost::system::errc::connection_refused), "connection_refused"},
    {"generic_timed_out", boost::system::errc::make_error_code(boost::system::errc::timed_out), "timeout"},
    {"permission_denied", error_code(EACCES, boost::system::system_category()), "other"},
    {"misc_not_found", asio_error::not_found, "other"},
    {"unrelated_category_same_value",
     error_code(static_cast<int>(asio_error::connection_refused), boost::asio::error::get_misc_category()),
     "other"},
};

INSTANTIATE_TEST_SUITE_P(Codes, NetworkErrorKind, testing::ValuesIn(network_cases),
                         [](const testing::TestParamInfo<network_case>& info) { return info.param.name; });

} // namespace
