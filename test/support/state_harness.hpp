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

struct state_harness {
    crawler_config config;
    std::size_t unfinished = 0;
    std::vector<record> records;
    std::optional<detail::crawl_state> state;

    explicit state_harness(const std::function<void(crawler_config&)>& adjust = {}, bool durable = false,
                           std::size_t window = 0) {
        manual_now = detail::crawl_state::time_point{std::chrono::hours(1)};
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
        state.emplace(config, std::move(h), durable, window, &manual_clock, 42);
    }

    detail::crawl_state* operator->() { return &*state; }

    /// The next ticket, started; EXPECTs it is for `url` (any URL when empty).
    std::optional<detail::crawl_state::ticket> take(const std::string& url = {}) {
        auto t = state->next();
        EXPECT_TRUE(t) << "no ticket, expected " << url;
        if (!t)
            return std::nullopt;
        if (!url.empty()) {
            EXPECT_EQ(t->item.url, url);
        }
        EXPECT_TRUE(state->begin_attempt(*t));
        state->fetch_started(*t);
        return t;
    }

    /// The answer to a ticket, as the loop handles it (links admitted for a page), then the task_done.
    void answer(detail::crawl_state::ticket& t, test_response response,
                const std::vector<std::string>& links = {}) {
        state->fetch_finished(t);
        record r;
        switch (state->on_response(t, response.outcome(), r)) {
        case detail::crawl_state::next_step::done:
            break;
        case detail::crawl_state::next_step::parse_page: {
            detail::resolved_links resolved;
            for (const auto& link : links)
                resolved.urls.push_back(boost::urls::parse_uri(link).value());
            state->on_links(t, r, resolved);
            [[fallthrough]];
        }
        case detail::crawl_state::next_step::record_ready:
            state->finish(t, std::move(r));
            break;
        }
        t = {};
        --unfinished;
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
