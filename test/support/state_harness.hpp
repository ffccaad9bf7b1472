// A crawl_state driven without sockets, for table tests on a manual clock: what it told its loop (the
// unfinished count, the records) and the steps a worker takes.
#pragma once

#include "state/crawl_state.hpp"
#include "support/test_response.hpp"

#include <boost/asio/error.hpp>
#include <boost/url/parse.hpp>

#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace asiocrawl::test {

inline detail::crawl_state::time_point manual_now{std::chrono::hours(1)};
inline detail::crawl_state::time_point manual_clock() {
    return manual_now;
}

/// The calendar, for tests that move it by hand (re-crawl dates, continuous mode's schedule).
inline detail::crawl_state::wall_clock_type::time_point manual_wall_now{std::chrono::seconds(1'800'000'000)};
inline detail::crawl_state::wall_clock_type::time_point manual_wall_clock() {
    return manual_wall_now;
}

struct state_harness {
    crawler_config config;
    std::size_t unfinished = 0;
    std::vector<record> records;
    std::optional<detail::crawl_state> state;

    /// `wall_now`: the calendar the state reads (the system's, or manual_wall_clock).
    explicit state_harness(const std::function<void(crawler_config&)>& adjust = {}, bool durable = false,
                           std::size_t window = 0,
                           detail::crawl_state::wall_clock_type::time_point (*wall_now)() =
                               &detail::crawl_state::wall_clock_type::now) {
        manual_now = detail::crawl_state::time_point{std::chrono::hours(1)};
        manual_wall_now =
            detail::crawl_state::wall_clock_type::time_point{std::chrono::seconds(1'800'000'000)};
        config.roots = {"http://a.test/"};
        config.robots.obey = false;
        config.retry.initial_backoff = std::chrono::milliseconds(100);
        config.retry.jitter = 0;
        if (adjust)
            adjust(config);
        detail::crawl_state::hooks h;
        h.hold = [this] {
            ++unfinished;
            return true;
        };
        h.release = [this] { --unfinished; };
        h.emit = [this](const record& r) { records.push_back(r); };
        state.emplace(config, std::move(h), durable, window, &manual_clock, 42, wall_now);
    }

    detail::crawl_state* operator->() { return &*state; }

    /// The next ticket that may start now, started; nullopt when none may.
    std::optional<detail::crawl_state::ticket> next_started() {
        auto t = state->next();
        if (!t)
            return std::nullopt;
        EXPECT_TRUE(state->begin_attempt(*t));
        state->fetch_started(*t);
        return t;
    }

    /// The next ticket, started; EXPECTs there is one, for `url` (any URL when empty).
    std::optional<detail::crawl_state::ticket> take(const std::string& url = {}) {
        auto t = next_started();
        EXPECT_TRUE(t) << "no ticket, expected " << url;
        if (t && !url.empty()) {
            EXPECT_EQ(t->item.url, url);
        }
        return t;
    }

    /// Both manual clocks moved on.
    static void advance(std::chrono::seconds by) {
        manual_now += by;
        manual_wall_now += by;
    }

    /// The answer to a ticket, as the loop handles it (links admitted for a page), then the task_done.
    /// Returns what the archive would be told the answer repeats (ticket::revisit).
    std::optional<detail::crawl_state::ticket::earlier_capture>
    answer(detail::crawl_state::ticket& t, test_response response,
           const std::vector<std::string>& links = {}) {
        state->fetch_finished(t);
        record r;
        switch (state->on_response(t, response.outcome(), r)) {
        case detail::crawl_state::next_step::done:
            break;
        case detail::crawl_state::next_step::parse_page: {
            detail::resolved_links resolved;
            for (const auto& link : links)
                resolved.urls.emplace_back(boost::urls::parse_uri(link).value().buffer());
            state->on_links(t, r, resolved);
            [[fallthrough]];
        }
        case detail::crawl_state::next_step::record_ready:
            state->finish(t, std::move(r));
            break;
        }
        auto revisit = std::move(t.revisit);
        t = {};
        --unfinished;
        if (state->wants_wrap_up(unfinished)) // as the engine's worker does after its task_done
            state->wrap_up_generation();
        return revisit;
    }
};

inline test_response answer_of(int status, std::string body = "<p>x</p>",
                               std::string content_type = "text/html") {
    test_response r;
    r.status = status;
    r.content_type = std::move(content_type);
    r.body = std::move(body);
    r.body_bytes = r.body.size();
    r.remote_ip = "192.0.2.1";
    return r;
}

} // namespace asiocrawl::test
