// What steering a running crawl reads and changes (crawler::pause_host, hosts(), urls()...; docs/CONTROL.md).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace asiocrawl {

/// One host as the crawl schedules it (crawler::hosts(), the control API's GET /api/hosts).
struct host_status {
    std::string host;
    std::size_t waiting = 0;            ///< URLs waiting for it (in memory and spilled to disk)
    std::size_t in_flight = 0;          ///< requests handed out and not finished
    std::chrono::milliseconds delay{0}; ///< least time between request starts now in force
    std::size_t max_per_host = 0;       ///< requests in flight at most
    std::uint64_t done = 0;             ///< records made for its URLs in this run
    std::uint64_t failures = 0;         ///< ... of which failed (robots denials and type rejections excluded)
    bool paused = false;                ///< crawler::pause_host: nothing of it starts until resume_host
};

/// What crawler::set_host_limits changes for one host; an empty field keeps what is in force.
struct host_limits {
    /// The host's delay (a robots.txt Crawl-delay, up to robots.max_crawl_delay, stays a floor under it).
    std::optional<std::chrono::milliseconds> delay;
    /// At least 1.
    std::optional<std::size_t> max_per_host;
    bool operator==(const host_limits&) const = default;
};

/// What crawler::add_seeds did with one URL.
struct seed_verdict {
    std::string url; ///< as given
    bool admitted = false;
    std::string reason; ///< when not admitted: "invalid_url", "already_seen", "out_of_scope"..., "stopping"
};

/// One URL listed by crawler::urls().
struct url_status {
    std::string url;
    std::string host;
    std::string state;      ///< "waiting" or "failed"
    std::string error_kind; ///< failed: the record's error kind
    int status = 0;         ///< failed: the HTTP status, 0 when none
    std::string detail;     ///< failed: the record's error detail
};

/// What crawler::urls() lists: `state` "waiting" (the URLs held in memory; a durable crawl's spilled ones are
/// counted by hosts() but not listed) or "failed" (the latest failures, at most crawler::kept_failures), for
/// one host or all (empty), from `offset`, at most `limit`.
struct url_query {
    std::string state = "waiting";
    std::string host;
    std::size_t offset = 0;
    std::size_t limit = 100;
};
struct url_page {
    std::size_t total = 0; ///< matching URLs, all pages together
    std::vector<url_status> urls;
};

} // namespace asiocrawl
