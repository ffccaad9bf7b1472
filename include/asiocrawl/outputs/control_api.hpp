// The control API (docs/CONTROL.md): JSON over HTTP to steer a running crawl through the crawler's own
// methods (pause_host, set_host_limits, add_seeds, stop...). Sans-io: handle() takes a request and gives the
// answer; metrics_server::set_handler puts it on the /metrics listener.
#pragma once

#include <asiocrawl/crawler.hpp>
#include <asiocrawl/outputs/metrics.hpp>
#include <asiocrawl/sink.hpp>

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace asiocrawl::outputs {

/// What the dashboard draws that the crawler does not keep (docs/CONTROL.md, "The dashboard"): a history of
/// samples, the latest errors, status classes, failures by kind and each host's latency. Fed with every
/// record (observe) and sampled at most once a second of crawl time (sample). Every part is bounded: at most
/// max_samples samples, max_errors errors, max_latency_hosts hosts (the records of later hosts are counted
/// in untracked_records), max_error_kinds kinds with "other" (later ones count as "other"), URLs and details
/// cut at max_text_bytes. Sans-io: no clock, no lock (use it on the crawler's executor).
class crawl_history {
public:
    static constexpr std::size_t max_samples = 1800; ///< half an hour at one a second
    static constexpr std::size_t max_errors = 100;
    static constexpr std::size_t max_latency_hosts = 10000;
    static constexpr std::size_t max_error_kinds = 64;
    static constexpr std::size_t max_text_bytes = 1024;

    /// Indexes of status_classes(): an answer's class, or none (no HTTP answer: a network error, robots.txt).
    enum status_class : std::size_t { class_2xx, class_3xx, class_4xx, class_5xx, class_none, class_count };
    static constexpr std::array<std::string_view, class_count> class_names{"2xx", "3xx", "4xx", "5xx",
                                                                           "none"};

    struct history_sample {
        double t = 0; ///< crawl time, seconds (crawl_progress::elapsed)
        std::uint64_t records = 0;
        std::uint64_t bytes = 0;
        std::uint64_t failures = 0;
        std::array<std::uint64_t, class_count> classes{}; ///< records by status class so far
    };
    struct error_entry {
        std::string url;
        std::string kind; ///< error_kind()
        int status = 0;
        std::string detail;
        double at = 0; ///< crawl time when its last attempt ended, seconds
    };
    struct host_latency {
        std::string host;
        std::uint64_t requests = 0; ///< records with at least one attempt
        std::uint64_t total_us = 0; ///< record::elapsed summed: first attempt's start to last one's end
        std::uint64_t max_us = 0;
    };

    /// Counts one record: its status class; a failure (as crawl_progress counts them: not robots denials or
    /// type rejections) by kind and in the recent errors; its host's latency when a request was made.
    void observe(const record& r);
    /// Appends a sample at crawl time `t` from `p` and the classes counted so far, unless the latest sample
    /// is less than `interval` old (then false). The oldest sample goes past max_samples.
    bool sample(double t, const crawl_progress& p, double interval = 1.0);

    const std::deque<history_sample>& samples() const noexcept { return samples_; }
    /// The latest errors, oldest first.
    const std::deque<error_entry>& errors() const noexcept { return errors_; }
    std::uint64_t errors_seen() const noexcept { return errors_seen_; }
    const std::array<std::uint64_t, class_count>& status_classes() const noexcept { return classes_; }
    const std::map<std::string, std::uint64_t, std::less<>>& failures_by_kind() const noexcept {
        return kinds_;
    }
    /// The `n` hosts with the longest mean latency (ties: more requests first, then by name).
    std::vector<host_latency> slowest(std::size_t n) const;
    std::uint64_t untracked_records() const noexcept { return untracked_records_; }
    /// Crawl time of the latest record observed, seconds.
    double latest_record_time() const noexcept { return latest_; }

private:
    std::deque<history_sample> samples_;
    std::deque<error_entry> errors_;
    std::uint64_t errors_seen_ = 0;
    std::array<std::uint64_t, class_count> classes_{};
    std::map<std::string, std::uint64_t, std::less<>> kinds_;
    std::unordered_map<std::string, host_latency> hosts_;
    std::uint64_t untracked_records_ = 0;
    double latest_ = 0;
};

/// Routes /api/... requests to a crawler. Call handle() on the crawler's executor (the listener runs there).
///
/// - Authentication: with a token, every request must carry `Authorization: Bearer TOKEN` (else 401, compared
///   in constant time); without one, none is asked (a loopback listener only: see needs_token()).
/// - Every call that changes something is logged through `log` (info), with the caller's address.
/// - Errors are JSON too: {"error": "..."} with 400, 401, 404, 405 or 409.
class control_api {
public:
    control_api(crawler& crawl, std::string token, logger log);

    /// An /api/ request, or GET/HEAD of the dashboard's files (`/`, `/dashboard/...`: no token asked; the
    /// page asks for one and sends it with its API calls).
    listener_response handle(const listener_request& request);

    /// Every record of the crawl, for the dashboard's history (crawl_history). Call on the crawler's
    /// executor.
    void observe(const record& r);

private:
    listener_response route(const listener_request& request);
    /// Takes a history sample when a second of crawl time has passed since the last.
    void sample();

    crawler& crawl_;
    std::string token_;
    logger log_;
    crawl_history history_;
};

/// The dashboard's static files (dashboard/ in the source tree, compiled in): GET or HEAD of `/` (the page)
/// and `/dashboard/NAME`, with Content-Type, an ETag (304 for a matching If-None-Match), Cache-Control:
/// no-cache and a Content-Security-Policy that allows only the listener's own scripts, styles and API.
/// 404 for another path, 405 for another method.
listener_response dashboard_file(const listener_request& request);

/// True when a listener on `host_port` ("HOST:PORT", "[v6]:PORT") is reachable from other machines: anything
/// but a loopback address or "localhost". A control API there must have a token.
bool needs_token(std::string_view host_port);

/// Compares in time that depends on the lengths only, not on where the first difference is.
bool constant_time_equal(std::string_view a, std::string_view b) noexcept;

} // namespace asiocrawl::outputs
