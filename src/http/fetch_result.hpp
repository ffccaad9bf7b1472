// What one fetch attempt produced: plain data from the transport. The engine hands the crawl state its view
// of it (src/state/fetch_outcome.hpp, made by src/engine/fetch_outcome.cpp).
#pragma once

#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace asiocrawl::detail {

/// What one attempt produced. `error` set means no usable response: `status` is then 0, unless the failure
/// came after the head (body too large, connection lost mid-body), where status and headers are those of the
/// head.
struct fetch_result {
    boost::system::error_code error;
    int status = 0;
    /// Content-Type header as sent (empty when absent).
    std::string content_type;
    /// Location header, when present (possibly empty).
    std::optional<std::string> location;
    /// Retry-After header, when present, unparsed (seconds or an HTTP date).
    std::optional<std::string> retry_after;
    /// The validators of the response (RFC 9110 8.8), as sent; empty when absent. A re-crawl sends them back
    /// in a conditional request.
    std::string etag;
    std::string last_modified;
    /// Every X-Robots-Tag field value, one a line ('\n'-separated), as sent; empty when absent.
    std::string x_robots_tag;
    /// Every Link field value, comma-joined (a list field, RFC 9110 5.3); empty when absent.
    std::string link;
    /// The first Strict-Transport-Security field value (RFC 6797 8.1: only the first counts), when present.
    std::optional<std::string> strict_transport_security;
    /// The body, decoded from its content coding (gzip, deflate, br, zstd) when the server used one.
    std::string body;
    /// Decoded body bytes (equals body.size() on success).
    std::uint64_t body_bytes = 0;
    /// Bytes of the response as received (head and body, before decoding; interim 1xx responses excluded).
    std::uint64_t wire_bytes = 0;
    /// True when fetch_options::truncate_body_at cut the body short (not an error).
    bool truncated = false;
    /// A human-readable detail of `error` when there is one worth logging: why a certificate did not verify
    /// (expired when, which issuer is unknown, which names it holds instead of the host), OpenSSL's reason
    /// for other TLS failures, what a proxy answered. Empty otherwise. Never holds credentials.
    std::string error_detail;

    /// The protocol that carried the answer: "http/1.1" or "h2" (static text); empty when none came.
    std::string_view protocol;
    /// The peer's IP address (empty when no connection was made).
    std::string remote_ip;
    /// When the request was sent (wall clock, for archive records).
    std::chrono::system_clock::time_point started{};

    // Filled only when fetch_options::capture is set (archiving).
    /// Request bytes as sent.
    std::string raw_request;
    /// Response bytes as received (after TLS): head, then the body with transfer and content codings. Only
    /// the final response: interim 1xx responses before it are not included. With truncate_body_at, the
    /// bytes read up to the cut.
    std::string raw_response;
    /// Bytes of raw_response that are the head.
    std::size_t raw_head_bytes = 0;
};

/// A result for an attempt that ends before any response.
inline std::unique_ptr<fetch_result> failed_fetch(boost::system::error_code ec, std::string detail = {}) {
    auto r = std::make_unique<fetch_result>();
    r->error = ec;
    r->error_detail = std::move(detail);
    return r;
}

} // namespace asiocrawl::detail
