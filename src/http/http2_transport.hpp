// HTTP/2 (RFC 9113) behind the transport seam, with nghttp2's callback API driven from the crawler's own
// io_context: nghttp2 frames and parses bytes in memory (mem_send, mem_recv), and the bytes cross the
// connection's socket (TLS or not) the way HTTP/1.1's do, non-blocking, when the socket is ready. No socket,
// thread or event loop of nghttp2's.
//
// An https origin is connected to once, offering ALPN "h2,http/1.1" (fetch.http2: auto) or "h2" (only). A
// server that chooses h2 gets one connection per origin, carrying every fetch to that origin as a stream
// (the engine's max_per_host bounds the fetches, so politeness counts streams); one that chooses HTTP/1.1 is
// remembered, and its origin fetched by the HTTP/1.1 transport from then on (that first connection is handed
// to it). http URLs are HTTP/1.1, unless fetch.http2 is `only`: then h2c by prior knowledge (RFC 9113 3.3),
// not through an http proxy.
//
// There is no reader coroutine of the connection's own: the fetches waiting on a connection take turns
// reading it. One of them (the session's `reader`) waits on the socket and feeds what arrives to nghttp2,
// which completes any stream; the others wait on their own timers. When the reader's stream completes, it
// hands the turn to another waiting stream. Every wait is thus a fetch's own, and nothing outlives the
// fetches that use a connection (no detached work).
//
// A response is handed, as it arrives, to the same reader as HTTP/1.1's (response_reader), written in
// HTTP/1.1 message form ("HTTP/1.1 <status> \r\n" and the fields): the same limits (max_header_bytes,
// max_body_bytes decoded and received), decoders (gzip, deflate, br, zstd), cookies, accept_types and
// capture. A capture is thus an HTTP/1.1-form exchange, which is what an archive writes for h2
// (docs/OUTPUTS.md).
#pragma once

#include "http/http1_transport.hpp"
#include "http/transport.hpp"

#include <asiocrawl/config.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <cstddef>
#include <list>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace asiocrawl::detail {

class http2_transport final : public transport {
public:
    /// Throws as fetcher's constructor says.
    http2_transport(boost::asio::any_io_executor executor, fetch_config config,
                    std::size_t max_idle_per_origin);
    ~http2_transport() override;

    boost::asio::awaitable<void> fetch_into(std::string_view url, fetch_options options,
                                            std::unique_ptr<fetch_result>& out) override;
    void close_idle() override;
    std::vector<std::string> finish() override;
    const fetcher_stats& stats() const noexcept override { return http1_.stats(); }
    const dns_stats& dns() const noexcept override { return http1_.dns(); }
    std::size_t cookies() const noexcept override { return http1_.cookies(); }

    struct session;
    struct stream;

private:
    struct origin {
        std::shared_ptr<session> current;
        /// The server chose HTTP/1.1 in ALPN: its fetches go to http1_.
        bool http11 = false;
        bool connecting = false;
        /// Fetches waiting for the connection being made (their timers end at their connect deadline).
        std::list<boost::asio::steady_timer*> waiting;
    };

    boost::asio::awaitable<void> fetch_on(std::shared_ptr<session> s, std::string_view url,
                                          const fetch_options& options, std::unique_ptr<fetch_result>& out,
                                          bool& retry);
    boost::asio::awaitable<void> read_turn(session& s, stream& st);

    boost::asio::any_io_executor executor_;
    http1_transport http1_;
    std::unordered_map<std::string, origin> origins_;
};

} // namespace asiocrawl::detail
