// A token bucket for fetch_config::limit_rate: bytes already read are charged, and the reader waits out the
// debt before it reads on. Sans-io: the caller passes the time in.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace asiocrawl::detail {

class rate_limiter {
public:
    using clock_type = std::chrono::steady_clock;

    /// `bytes_per_second` above 0. `burst`: the bytes that may be read at once after an idle spell.
    rate_limiter(std::uint64_t bytes_per_second, std::uint64_t burst)
        : rate_(static_cast<double>(bytes_per_second))
        , burst_(static_cast<double>(std::max<std::uint64_t>(burst, 1)))
        , tokens_(burst_) {}

    /// `n` bytes were read at `now`: how long the reader must wait before it reads again (zero when the
    /// bucket still holds tokens). Bytes that arrived are never refused, so the bucket may go into debt;
    /// every reader then waits until the debt is paid, which holds all of them together to the rate.
    clock_type::duration charge(std::uint64_t n, clock_type::time_point now) {
        refill(now);
        tokens_ -= static_cast<double>(n);
        if (tokens_ >= 0)
            return clock_type::duration::zero();
        return std::chrono::duration_cast<clock_type::duration>(
            std::chrono::duration<double>(-tokens_ / rate_));
    }

private:
    void refill(clock_type::time_point now) {
        if (last_ != clock_type::time_point{} && now > last_)
            tokens_ = std::min(burst_, tokens_ + rate_ * std::chrono::duration<double>(now - last_).count());
        last_ = std::max(last_, now);
    }

    double rate_;
    double burst_;
    double tokens_;
    clock_type::time_point last_{};
};

} // namespace asiocrawl::detail
