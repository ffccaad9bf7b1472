// What the crawl state learns of one fetch attempt. The engine makes it from the transport's result
// (src/engine/fetch_outcome.cpp), so the state's decisions depend on no transport: it names the response's
// parts the state reads and views the bytes the transport keeps.
#pragma once

#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace asiocrawl::detail {

/// One attempt's outcome. The views stay valid while the state handles the call it is given to.
struct fetch_outcome {
    /// Set when there is no usable response: `status` is then 0, unless the failure came after the head (body
    /// too large, connection lost mid-body), where the status and the header parts are those of the head.
    boost::system::error_code error;
    /// The transport's verdict on `error`: network trouble that another attempt may not meet.
    bool retryable = false;
    /// A connection was made (a robots.txt failure without one makes the origin's pages unreachable).
    bool connected = false;
    int status = 0;
    /// The Content-Type's media type, lowercased and without parameters; empty when the header is absent.
    std::string media_type;
    /// The Content-Type's charset parameter, lowercased and unquoted; empty when absent.
    std::string charset;
    /// The Location header, when present (possibly empty).
    std::optional<std::string_view> location;
    /// The Retry-After header, when present, unparsed (seconds or an HTTP date).
    std::optional<std::string_view> retry_after;
    /// The ETag and Last-Modified headers, as sent; empty when absent.
    std::string_view etag;
    /// "http/1.1" or "h2" (static text); empty when no answer came.
    std::string_view protocol;
    std::string_view last_modified;
    /// Every X-Robots-Tag header, one a line; empty when absent.
    std::string_view x_robots_tag;
    /// Every Link header, comma-joined; empty when absent.
    std::string_view link;
    /// When the request was sent (the capture's date in an archive).
    std::chrono::system_clock::time_point sent_at{};
    /// The body, decoded from its content codings.
    std::string_view body;
    /// Decoded body bytes received (the body's size on success).
    std::uint64_t body_bytes = 0;
    /// A human-readable detail of `error` worth logging; empty otherwise.
    std::string_view error_detail;
};

} // namespace asiocrawl::detail
