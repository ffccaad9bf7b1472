// The outcome of a whole crawl and its two renderings: the classic text report and JSON Lines records.
#pragma once

#include <asiocrawl/record.hpp>

#include <boost/json/object.hpp>

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace asiocrawl {

/// Named counters in the style of the reference crawler: "fail", "fail_<kind>", "robots_denied" (URLs
/// robots.txt refused: not failures of the site, so not counted in "fail"), "redirect", "html",
/// "html_bytes", "other", "other_bytes", "error", "error_bytes", "status_<code>", and "skipped_<reason>"
/// for URLs that were found but not queued. std::map keeps them sorted for printing.
using counters = std::map<std::string, std::uint64_t>;

struct report {
    /// Every record, in completion order (empty when crawler_config::keep_records is false).
    std::vector<record> records;
    counters stats;
    /// URLs still queued or in flight when the crawl ended (non-zero only when it was stopped early).
    std::size_t todo = 0;
    /// Records produced.
    std::size_t done = 0;
    /// Worker coroutines used.
    std::size_t max_tasks = 0;
    /// Runs of the process that made this crawl: 1, or more when it resumed from a state directory (the
    /// counters, done and elapsed then cover every run).
    std::size_t runs = 0;
    std::chrono::system_clock::time_point started_at{};
    std::chrono::steady_clock::duration elapsed{};
    /// Empty, unless the crawl failed (crawler::async_run completed with an error code): then the text that
    /// names what failed (the state directory and why, the Redis endpoint, the output), what the code's
    /// message() cannot know. The CLI prints it.
    std::string failure;
};

/// A record's failure class, the vocabulary of the CLI's --fail-on: "robots" when robots.txt denied the URL,
/// "5xx" or "4xx" when the last response had such a status (an error page, or 429/503 through every
/// attempt), "network" for any other failure (no answer or no usable one: connection, DNS, TLS, timeouts,
/// size limits, broken redirects, robots.txt unavailable), and "" for a page or a redirect.
std::string_view failure_class(const record& r) noexcept;

/// A URL that does not work — failure class 4xx, 5xx or network — and where the crawl found it.
struct broken_link {
    std::string url;
    /// The page that links to it, or the URL that redirected to it ("" for a root or a sitemap URL).
    std::string referrer;
    int status = 0;
    /// error_kind() of the record's error; "" for an error page without one (a plain 404).
    std::string error_kind;
};

/// The broken link a record describes, or nullopt for a record that is not one.
std::optional<broken_link> broken_link_of(const record& r);

/// Broken links collected for the JSON summary, with a bound: a crawl of a million dead links must not
/// keep them all.
struct broken_links {
    std::vector<broken_link> links;
    /// Broken links seen beyond the bound.
    std::size_t omitted = 0;
};

/// Adds one record's contribution to the counters (what the crawler does for every record it makes).
void count_record(counters& stats, const record& r);

/// The classic report (ORIGIN.md): one line per record sorted by URL, the "Finished" line with the total
/// rate, the counters, then Todo, Done and Date. `verbose` adds per-record timing and depth.
void write_report(std::ostream& out, const report& r, bool verbose = false);

/// The summary of the classic report as one JSON document: "done", "todo", "max_tasks", "started_at" (UTC,
/// ISO 8601), "elapsed_s", "urls_per_sec", "counters" (every counter), "status" (code -> count), "errors"
/// (kind -> count), "skipped" (reason -> count), and "timings" over the kept records' elapsed times
/// ("count", "min_ms", "mean_ms", "p50_ms", "p90_ms", "p99_ms", "max_ms"; only "count": 0 when no record
/// was kept). With `broken`: "broken_links", a list of {"url", "referrer", "status", "error_kind"?} sorted
/// by referrer then URL, and "broken_links_omitted".
boost::json::object summary_json(const report& r, const broken_links* broken = nullptr);

/// summary_json(r, broken) as JSON text (see to_json_text), with a trailing newline.
void write_report_json(std::ostream& out, const report& r, const broken_links* broken = nullptr);

/// JSON text in which every number is written in plain decimal notation ("37.2", "0.0899"), never with an
/// exponent as Boost.JSON's serializer writes doubles ("3.72E1"); integers stay integers.
std::string to_json_text(const boost::json::value& value);

/// One record as a JSON object (field names are the record's; error is {"error": message, "error_kind":
/// kind}).
boost::json::object to_json(const record& r);

/// One record as a single JSON Lines line, newline included.
std::string to_json_line(const record& r);

} // namespace asiocrawl
