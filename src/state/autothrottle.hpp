// Adaptive politeness (politeness.autothrottle, Scrapy's AutoThrottle rule): each host's delay follows its
// measured response time toward a target number of requests in flight to it. Sans-io: the crawl state feeds
// it latencies and sets the frontier's delays from what it answers.
#pragma once

#include "state/frontier.hpp"

#include <asiocrawl/config.hpp>

#include <chrono>
#include <vector>

namespace asiocrawl::detail {

class autothrottle {
public:
    using duration = std::chrono::steady_clock::duration;

    /// `floor`: the configured politeness.delay, under every host's delay.
    autothrottle(const autothrottle_config& config, duration floor)
        : config_(config)
        , floor_(floor) {}

    /// A host's delay before any answer of it is measured: start_delay, capped by max_delay, never under the
    /// floor.
    duration initial() const { return bounded(config_.start_delay, floor_); }

    /// A host's own floor from now on (its robots.txt Crawl-delay, already combined with the configured
    /// delay). Returns the host's delay.
    duration set_floor(host_id host, duration floor) {
        auto& h = at(host);
        h.floor = std::max(floor, floor_);
        h.delay = std::max(h.delay, h.floor);
        return h.delay;
    }

    /// One answer of `host` took `latency` (request start to the end of the answer). `ok`: a 2xx or 3xx
    /// answer; anything else never lowers the delay. Returns the host's new delay.
    duration observe(host_id host, duration latency, bool ok) {
        auto& h = at(host);
        const auto target = std::chrono::duration_cast<duration>(latency / config_.target_concurrency);
        auto next = std::max(target, (h.delay + target) / 2);
        next = bounded(next, h.floor);
        if (ok || next > h.delay)
            h.delay = next;
        return h.delay;
    }

    duration delay(host_id host) { return at(host).delay; }

private:
    struct host_state {
        duration delay;
        duration floor;
    };

    duration bounded(duration delay, duration floor) const {
        return std::max(floor, std::min<duration>(delay, config_.max_delay));
    }

    host_state& at(host_id host) {
        while (hosts_.size() <= host)
            hosts_.push_back({initial(), floor_});
        return hosts_[host];
    }

    const autothrottle_config& config_;
    duration floor_;
    std::vector<host_state> hosts_;
};

} // namespace asiocrawl::detail
