// How much a shared crawl's lease loop asks Redis for, and how long it waits before asking again. Sans-io:
// the lease loop (lease_loop.cpp) feeds it counts and answers; test/engine/lease_pacing_test.cpp drives it.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>

namespace asiocrawl::detail {

class lease_pacing {
public:
    /// An instance with idle workers asks again soon, then less often: URLs appear when another instance
    /// commits a page's links, which no answer can announce.
    static constexpr std::chrono::milliseconds idle_poll_min{2};
    static constexpr std::chrono::milliseconds idle_poll_max{20};

    /// Enough to keep every worker busy plus a quarter for the round trip: a larger hoard starves the other
    /// instances while the frontier is small (the first levels of a site, the last pages).
    explicit lease_pacing(std::size_t max_tasks) noexcept
        : max_tasks_(max_tasks)
        , wanted_(max_tasks + std::max<std::size_t>(max_tasks / 4, 1)) {}

    struct request {
        std::size_t room; ///< URLs to lease at most
        std::size_t idle; ///< of which URLs of hosts with a delay (workers idle now must start them at once)
    };

    /// `held`: URLs this instance holds and has not finished (leased and waiting, queued, in flight,
    /// awaiting their commit); `awaiting_commit`: of those, the ones whose worker is already free.
    request next(std::size_t held, std::size_t awaiting_commit) const noexcept {
        const std::size_t room = held < wanted_ ? wanted_ - held : 0;
        const std::size_t occupied = held - std::min(held, awaiting_commit);
        const std::size_t idle = occupied < max_tasks_ ? max_tasks_ - occupied : 0;
        return {room, idle};
    }

    enum class then {
        finished,  ///< the crawl-wide unfinished counter is zero: the whole crawl is done
        ask_again, ///< the answer filled the room: there may be more
        wait,      ///< wait `wait` (or a poke) before asking again
    };
    struct step {
        then what;
        std::chrono::milliseconds wait{0};
    };

    /// What follows an answer to `asked`: `leased` URLs came, the crawl-wide counter is `unfinished`, and a
    /// host may next start in `wait_ms` (-1: unknown). Workers idle: ask again soon (or when a host's delay
    /// ends), backing off while nothing comes. All busy: a finish pokes the loop, and a host ready now but
    /// held for an idle worker must not make it spin.
    step after(const request& asked, std::size_t leased, std::int64_t unfinished,
               std::int64_t wait_ms) noexcept {
        if (unfinished <= 0)
            return {then::finished};
        if (leased == asked.room && asked.room > 0)
            return {then::ask_again};
        auto wait = idle_poll_max;
        if (asked.idle > 0) {
            wait = idle_poll_;
            if (wait_ms >= 0)
                wait = std::min(wait, std::chrono::milliseconds(wait_ms));
        }
        idle_poll_ = leased == 0 ? std::min(idle_poll_ * 2, idle_poll_max) : idle_poll_min;
        return {then::wait, std::max(wait, idle_poll_min)};
    }

private:
    std::size_t max_tasks_;
    std::size_t wanted_;
    std::chrono::milliseconds idle_poll_ = idle_poll_min;
};

} // namespace asiocrawl::detail
