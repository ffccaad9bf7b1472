// The outcome of a whole crawl and its two renderings: the classic text report and JSON Lines records.
#pragma once

#include <asiocrawl/record.hpp>

#include <boost/json/object.hpp>

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

namespace asiocrawl {

/// Named counters in the style of the reference crawler: "fail", "fail_<kind>", "redirect", "html",
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
    std::chrono::system_clock::time_point started_at{};
    std::chrono::steady_clock::duration elapsed{};
};

/// Adds one record's contribution to the counters (what the crawler does for every record it makes).
void count_record(counters& stats, const record& r);

/// The classic report (ORIGIN.md): one line per record sorted by URL, the "Finished" line with the total
/// rate, the counters, then Todo, Done and Date. `verbose` adds per-record timing and depth.
void write_report(std::ostream& out, const report& r, bool verbose = false);

/// One record as a JSON object (field names are the record's; error is {"error": message, "error_kind":
/// kind}).
boost::json::object to_json(const record& r);

/// One record as a single JSON Lines line, newline included.
std::string to_json_line(const record& r);

} // namespace asiocrawl
