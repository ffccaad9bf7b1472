// A fetch attempt's answer as a state test writes it: it owns its strings, and outcome() is what the crawl
// state reads of it (the engine makes the same from the transport's result, src/engine/fetch_outcome.cpp).
#pragma once

#include "http/content_type.hpp"
#include "state/fetch_outcome.hpp"

#include <boost/asio/error.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace asiocrawl::test {

struct test_response {
    boost::system::error_code error;
    int status = 0;
    /// The Content-Type header as sent.
    std::string content_type;
    std::optional<std::string> location;
    std::optional<std::string> retry_after;
    std::string body;
    std::uint64_t body_bytes = 0;
    std::string error_detail;
    /// The peer's address; empty when no connection was made.
    std::string remote_ip;
    std::string etag;
    std::string last_modified;
    std::chrono::system_clock::time_point sent_at{};

    /// The state's view of this answer; a refused connection is the failure the tests retry.
    detail::fetch_outcome outcome() const {
        detail::fetch_outcome out;
        out.error = error;
        out.retryable = error == boost::asio::error::connection_refused;
        out.connected = !remote_ip.empty();
        out.status = status;
        auto media = detail::parse_content_type(content_type);
        out.media_type = std::move(media.type);
        out.charset = std::move(media.charset);
        if (location)
            out.location = *location;
        if (retry_after)
            out.retry_after = *retry_after;
        out.body = body;
        out.body_bytes = body_bytes;
        out.error_detail = error_detail;
        out.etag = etag;
        out.last_modified = last_modified;
        out.sent_at = sent_at;
        return out;
    }
};

} // namespace asiocrawl::test
