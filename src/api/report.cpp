#include <asiocrawl/report.hpp>

#include "html/links.hpp"
#include "util/time_text.hpp"
#include <asiocrawl/error.hpp>

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <ostream>
#include <string_view>
#include <tuple>

namespace asiocrawl {

namespace {

bool is_success_status(int status) noexcept {
    return status >= 200 && status < 300;
}

std::string format_fixed(double value, int decimals) {
    char buffer[64];
    const int length = std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
    return length > 0 ? std::string(buffer, std::min<std::size_t>(static_cast<std::size_t>(length),
                                                                  sizeof buffer - 1))
                      : std::string();
}

double to_milliseconds(std::chrono::microseconds duration) noexcept {
    return static_cast<double>(duration.count()) / 1000.0;
}

std::string_view or_dash(const std::string& text) noexcept {
    return text.empty() ? std::string_view("-") : std::string_view(text);
}

/// The error's message, then its detail when the record has one.
std::string error_text(const record& r) {
    std::string text = r.error.message();
    if (!r.error_detail.empty())
        text.append(": ").append(r.error_detail);
    return text;
}

void write_record_line(std::ostream& out, const record& r, bool verbose) {
    out << r.url;
    if (r.failed()) {
        if (r.status != 0) {
            out << ' ' << r.status;
        }
        out << " error " << error_kind(r.error) << " (" << error_text(r) << ')';
        if (!r.next_url.empty()) {
            out << " -> " << r.next_url;
        }
    } else if (r.is_redirect()) {
        out << ' ' << r.status << " redirect " << r.next_url;
    } else {
        out << ' ' << r.status << ' ' << or_dash(r.content_type) << ' ' << or_dash(r.charset) << ' ' << r.size
            << ' ' << r.num_new_urls << '/' << r.num_urls;
    }
    if (verbose) {
        out << " depth=" << r.depth << " tries=" << r.tries << ' '
            << format_fixed(to_milliseconds(r.elapsed), 1) << "ms";
    }
    out << '\n';
}

// ctime()'s layout ("Wed Jun  3 14:05:09 2024") without its trailing newline. localtime_r and strftime in the
// "C" locale because the report is parsed by scripts; std::put_time would follow the global locale.
std::string format_local_time(std::chrono::system_clock::time_point when) {
    const std::time_t seconds = std::chrono::system_clock::to_time_t(when);
    std::tm local{};
    if (localtime_r(&seconds, &local) == nullptr) {
        return "?";
    }
    char buffer[64];
    const std::size_t length = std::strftime(buffer, sizeof buffer, "%a %b %e %H:%M:%S %Y", &local);
    return std::string(buffer, length);
}

void write_summary(std::ostream& out, const report& r) {
    const double seconds = std::chrono::duration<double>(r.elapsed).count();
    // The rate is for the whole crawl; the reference divided by max_tasks as well, printing a per-task
    // figure.
    const double rate = seconds > 0 ? static_cast<double>(r.done) / seconds : 0.0;
    out << "Finished " << r.done << " urls in " << format_fixed(seconds, 3)
        << " secs (max_tasks=" << r.max_tasks << ") (" << format_fixed(rate, 1) << " urls/sec)\n";

    for (const auto& [name, value] : r.stats) {
        char count[32];
        std::snprintf(count, sizeof count, "%10llu", static_cast<unsigned long long>(value));
        out << count << ' ' << name << '\n';
    }
    out << "Todo: " << r.todo << '\n';
    out << "Done: " << r.done << '\n';
    out << "Date: " << format_local_time(r.started_at) << " local time\n";
}

} // namespace

std::string_view failure_class(const record& r) noexcept {
    if (r.error == error::robots_denied)
        return "robots";
    if (r.error == error::type_rejected)
        return ""; // our choice (accept_types), not the site's failure
    if (r.status >= 500 && r.status < 600)
        return "5xx";
    if (r.status >= 400 && r.status < 500)
        return "4xx";
    if (r.failed())
        return "network";
    return "";
}

std::optional<broken_link> broken_link_of(const record& r) {
    const std::string_view kind = failure_class(r);
    if (kind.empty() || kind == "robots")
        return std::nullopt;
    broken_link link;
    link.url = r.url;
    link.referrer = r.referrer;
    link.status = r.status;
    if (r.failed())
        link.error_kind = error_kind(r.error);
    return link;
}

void count_record(counters& stats, const record& r) {
    if (r.change != change_kind::none)
        ++stats["change_" + std::string(change_name(r.change))];
    if (r.not_modified)
        ++stats["not_modified"];
    if (r.error == error::robots_denied) {
        ++stats["robots_denied"];
    } else if (r.error == error::type_rejected) {
        ++stats["type_rejected"];
    } else if (r.failed()) {
        ++stats["fail"];
        ++stats["fail_" + std::string(error_kind(r.error))];
    } else if (r.is_redirect()) {
        ++stats["redirect"];
    } else if (r.status == 0 && r.change == change_kind::gone) {
        ++stats["gone_unlinked"]; // a re-crawl no longer reached it: not requested
    } else if (!is_success_status(r.status)) {
        // An error page is an answer about a missing or broken URL, whatever its media type.
        ++stats["error"];
        stats["error_bytes"] += r.size;
    } else if (is_html_media_type(r.content_type)) {
        ++stats["html"];
        stats["html_bytes"] += r.size;
    } else {
        ++stats["other"];
        stats["other_bytes"] += r.size;
    }
    if (r.status != 0) {
        ++stats["status_" + std::to_string(r.status)];
    }
    if (r.noindex) {
        ++stats["noindex"];
    }
    if (r.nofollow) {
        ++stats["nofollow"];
    }
    if (!r.requisite.empty() && r.status != 0 && !r.is_redirect()) {
        ++stats["requisites_fetched"];
    }
}

void write_report(std::ostream& out, const report& r, bool verbose) {
    if (!r.records.empty()) {
        std::vector<const record*> sorted;
        sorted.reserve(r.records.size());
        for (const record& each : r.records) {
            sorted.push_back(&each);
        }
        // Stable: several records for one URL (retried redirect hops, say) stay in completion order.
        std::stable_sort(sorted.begin(), sorted.end(),
                         [](const record* a, const record* b) { return a->url < b->url; });

        out << "*** Report ***\n";
        for (const record* each : sorted) {
            write_record_line(out, *each, verbose);
        }
    }
    write_summary(out, r);
}

namespace {

std::string format_utc_iso8601(std::chrono::system_clock::time_point when) {
    const std::time_t seconds = std::chrono::system_clock::to_time_t(when);
    std::tm utc{};
    if (gmtime_r(&seconds, &utc) == nullptr)
        return "";
    char buffer[64];
    const std::size_t length = std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return std::string(buffer, length);
}

// Nearest-rank percentile of sorted values.
double percentile(const std::vector<double>& sorted, double fraction) {
    const auto rank = static_cast<std::size_t>(std::ceil(fraction * static_cast<double>(sorted.size())));
    return sorted[std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1)];
}

bool starts_with(std::string_view text, std::string_view prefix) {
    return text.substr(0, prefix.size()) == prefix;
}

} // namespace

boost::json::object summary_json(const report& r, const broken_links* broken) {
    boost::json::object summary;
    summary["done"] = static_cast<std::uint64_t>(r.done);
    summary["todo"] = static_cast<std::uint64_t>(r.todo);
    summary["max_tasks"] = static_cast<std::uint64_t>(r.max_tasks);
    summary["started_at"] = format_utc_iso8601(r.started_at);
    const double seconds = std::chrono::duration<double>(r.elapsed).count();
    summary["elapsed_s"] = seconds;
    summary["urls_per_sec"] = seconds > 0 ? static_cast<double>(r.done) / seconds : 0.0;

    boost::json::object all;
    boost::json::object by_status;
    boost::json::object by_error;
    boost::json::object by_skip;
    for (const auto& [name, value] : r.stats) {
        all[name] = value;
        const std::string_view key = name;
        if (starts_with(key, "status_"))
            by_status[key.substr(7)] = value;
        else if (starts_with(key, "fail_"))
            by_error[key.substr(5)] = value;
        else if (starts_with(key, "skipped_"))
            by_skip[key.substr(8)] = value;
    }
    summary["counters"] = std::move(all);
    summary["status"] = std::move(by_status);
    summary["errors"] = std::move(by_error);
    summary["skipped"] = std::move(by_skip);

    std::vector<double> elapsed_ms;
    elapsed_ms.reserve(r.records.size());
    for (const record& each : r.records)
        elapsed_ms.push_back(to_milliseconds(each.elapsed));
    boost::json::object timings;
    timings["count"] = static_cast<std::uint64_t>(elapsed_ms.size());
    if (!elapsed_ms.empty()) {
        std::sort(elapsed_ms.begin(), elapsed_ms.end());
        double total = 0;
        for (double each : elapsed_ms)
            total += each;
        timings["min_ms"] = elapsed_ms.front();
        timings["mean_ms"] = total / static_cast<double>(elapsed_ms.size());
        timings["p50_ms"] = percentile(elapsed_ms, 0.50);
        timings["p90_ms"] = percentile(elapsed_ms, 0.90);
        timings["p99_ms"] = percentile(elapsed_ms, 0.99);
        timings["max_ms"] = elapsed_ms.back();
    }
    summary["timings"] = std::move(timings);
    if (broken) {
        std::vector<const broken_link*> sorted;
        for (const auto& link : broken->links)
            sorted.push_back(&link);
        // Grouped by the page to fix.
        std::stable_sort(sorted.begin(), sorted.end(), [](const broken_link* a, const broken_link* b) {
            return std::tie(a->referrer, a->url) < std::tie(b->referrer, b->url);
        });
        boost::json::array links;
        for (const broken_link* link : sorted) {
            boost::json::object entry;
            entry["url"] = link->url;
            entry["referrer"] = link->referrer;
            entry["status"] = link->status;
            if (!link->error_kind.empty())
                entry["error_kind"] = link->error_kind;
            links.push_back(std::move(entry));
        }
        summary["broken_links"] = std::move(links);
        summary["broken_links_omitted"] = static_cast<std::uint64_t>(broken->omitted);
    }
    return summary;
}

void write_report_json(std::ostream& out, const report& r, const broken_links* broken) {
    out << to_json_text(summary_json(r, broken)) << '\n';
}

namespace {

void append_json(std::string& out, const boost::json::value& value) {
    switch (value.kind()) {
    case boost::json::kind::object: {
        out += '{';
        bool first = true;
        for (const auto& [key, member] : value.get_object()) {
            if (!first)
                out += ',';
            first = false;
            out += boost::json::serialize(boost::json::value(key));
            out += ':';
            append_json(out, member);
        }
        out += '}';
        break;
    }
    case boost::json::kind::array: {
        out += '[';
        bool first = true;
        for (const auto& item : value.get_array()) {
            if (!first)
                out += ',';
            first = false;
            append_json(out, item);
        }
        out += ']';
        break;
    }
    case boost::json::kind::double_: {
        const double number = value.get_double();
        if (!std::isfinite(number)) {
            out += "null"; // JSON has no infinity; Boost.JSON writes 1e99999 for it
            break;
        }
        // The shortest decimal that reads back as the same double, without an exponent.
        char buffer[400];
        const auto [end, ec] =
            std::to_chars(buffer, buffer + sizeof buffer, number, std::chars_format::fixed);
        const std::string_view digits(buffer, ec == std::errc{} ? static_cast<std::size_t>(end - buffer) : 0);
        out += digits;
        // A whole double keeps its ".0": a reader must not see an integer where the field is a measure.
        if (digits.find('.') == std::string_view::npos)
            out += ".0";
        break;
    }
    default:
        out += boost::json::serialize(value);
        break;
    }
}

} // namespace

std::string to_json_text(const boost::json::value& value) {
    std::string out;
    append_json(out, value);
    return out;
}

boost::json::object to_json(const record& r) {
    boost::json::object object;
    object["url"] = r.url;
    if (!r.next_url.empty()) {
        object["next_url"] = r.next_url;
    }
    if (!r.referrer.empty()) {
        object["referrer"] = r.referrer;
    }
    object["status"] = r.status;
    if (r.failed()) {
        object["error"] = error_text(r);
        object["error_kind"] = error_kind(r.error);
    }
    object["size"] = r.size;
    object["content_type"] = r.content_type;
    object["charset"] = r.charset;
    object["num_urls"] = static_cast<std::uint64_t>(r.num_urls);
    object["num_new_urls"] = static_cast<std::uint64_t>(r.num_new_urls);
    if (r.links_dropped != 0)
        object["links_dropped"] = static_cast<std::uint64_t>(r.links_dropped);
    if (r.nofollow)
        object["nofollow"] = true;
    if (r.noindex)
        object["noindex"] = true;
    if (!r.canonical.empty())
        object["canonical"] = r.canonical;
    if (!r.requisite.empty())
        object["requisite"] = r.requisite;
    if (r.change != change_kind::none)
        object["change"] = change_name(r.change);
    if (r.not_modified)
        object["not_modified"] = true;
    if (!r.protocol.empty())
        object["protocol"] = r.protocol;
    if (!r.etag.empty())
        object["etag"] = r.etag;
    if (!r.last_modified.empty())
        object["last_modified"] = r.last_modified;
    if (!r.payload_digest.empty())
        object["payload_digest"] = r.payload_digest;
    if (r.fetched_at.time_since_epoch().count() != 0)
        object["fetched_at"] = detail::rfc3339_micros(r.fetched_at);
    object["depth"] = r.depth;
    object["tries"] = r.tries;
    object["started_ms"] = to_milliseconds(r.started);
    object["elapsed_ms"] = to_milliseconds(r.elapsed);
    return object;
}

std::string to_json_line(const record& r) {
    std::string line = to_json_text(to_json(r));
    line += '\n';
    return line;
}

} // namespace asiocrawl
