// Reading an HTTP/1.1 response from a connection's buffer. Beast's parser is driven by hand: that is what
// lets us copy the response bytes exactly (capture), count them, stop after a cut (truncate_body_at), and
// leave the bytes of a next pipelined response in the buffer. The body goes through a decoding Body type
// straight into the content_decoder, so a compressed body is inflated as it arrives and never beyond the
// limit. Every bound is here: the head and the trailers (max_header_bytes), the body (max_body_bytes, decoded
// and as received), chunk-size lines and their extensions, interim responses, transfer codings we can undo.
//
// The reader holds nothing per response: what lives across the waits for bytes is a `reading`, in the
// caller's frame, and the parsing between the waits happens in plain functions, so that their locals are not
// in a coroutine frame.
#pragma once

#include "http/cookie_jar.hpp"
#include "http/decoder.hpp"
#include "http/fetch_result.hpp"
#include "http/rate_limiter.hpp"
#include "http/tls_stream.hpp"
#include "http/transport.hpp"

#include <asiocrawl/config.hpp>

#include <boost/beast/core/buffers_range.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/fields.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace asiocrawl::detail {

/// Where decoded body bytes go, and the limit on them.
struct body_sink {
    std::string decoded;
    std::uint64_t limit = 0;
    /// The limit is a cut (truncate_body_at), not an error.
    bool cut_at_limit = false;
    bool was_cut = false;
    std::optional<content_decoder> decoder;
    /// A transfer coding other than chunked (RFC 9112 7: gzip, deflate), undone before the content coding;
    /// its output passes through `transfer_decoded` one piece at a time.
    std::optional<content_decoder> transfer_decoder;
    std::string transfer_decoded;
    /// Why the head's codings were refused, for the record.
    std::string problem;
};

/// Bytes read from the connection at a time.
constexpr std::size_t read_chunk = 16 * 1024;
/// Reads of a whole read_chunk one after another without a wait between them (reading::read_on).
constexpr int max_reads_on = 4;

/// The transfer codings of a response besides a final chunked (which the parser undoes), from every
/// Transfer-Encoding field in order. bad_response when they cannot be undone: chunked anywhere but last or
/// more than once is a broken message (RFC 9112 6.1), and we undo at most one other coding, of those we know
/// (a transfer coding is framing: without it the message cannot even be delimited).
boost::system::error_code transfer_coding_of(const boost::beast::http::fields& head, content_coding& coding,
                                             std::string& problem);

/// A Beast Body that decodes Content-Encoding while the parser hands over body bytes. Errors returned from
/// put() make the parser stop with that error.
struct decoding_body {
    using value_type = body_sink;

    class reader {
    public:
        // Beast builds the reader with the parser, before the head arrives: the coding is read in init().
        template <bool is_request, class Fields>
        reader(boost::beast::http::header<is_request, Fields>& head, value_type& sink)
            : head_(head)
            , sink_(sink) {}

        void init(const boost::optional<std::uint64_t>&, boost::system::error_code& ec);

        template <class ConstBufferSequence>
        std::size_t put(const ConstBufferSequence& buffers, boost::system::error_code& ec) {
            ec = {};
            std::size_t taken = 0;
            for (const auto buffer : boost::beast::buffers_range_ref(buffers)) {
                taken += buffer.size();
                if ((ec = take({static_cast<const char*>(buffer.data()), buffer.size()})))
                    return taken;
            }
            if (sink_.transfer_decoder)
                std::string().swap(sink_.transfer_decoded);
            return taken;
        }

        void finish(boost::system::error_code& ec);

    private:
        /// One piece of the body as received: undoes the transfer coding, then decode().
        boost::system::error_code take(std::string_view bytes);
        /// Undoes the content coding into the sink, under its limit.
        boost::system::error_code decode(std::string_view bytes);

        const boost::beast::http::fields& head_;
        value_type& sink_;
    };
};

using response_parser = boost::beast::http::response_parser<decoding_body>;

/// The reading of one answer: what lives across the waits for bytes.
struct reading {
    std::unique_ptr<response_parser> parser; // one per response, interim ones included
    boost::system::error_code ec;
    int interim = 0;
    bool at_eof = false;
    /// How long to wait before reading on (fetch_config::limit_rate).
    std::chrono::steady_clock::duration throttle{};
    /// From the final head: how long the server keeps an idle connection (Keep-Alive: timeout=N).
    std::optional<std::chrono::seconds> server_keeps_idle;
    /// False when the head forbids another request on the connection whatever its framing.
    bool reusable = true;
    /// The last read filled its read_chunk: more is probably waiting in the socket, so the next read is
    /// tried before waiting (an Asio wait costs an epoll_ctl of its own, a read that finds nothing one recv).
    /// At most max_reads_on in a row: a server that keeps the socket full does not hold the thread.
    bool read_on = false;
    int reads_on = 0;
};

/// The result of an attempt, created when there is something to say (the first byte of the answer, a
/// failure, or the request bytes to capture), not while waiting.
fetch_result& result_of(std::unique_ptr<fetch_result>& out, const connection& c);

/// Translates Beast's parse errors into the crawler's own vocabulary; network errors and ours pass through.
boost::system::error_code classify_read_error(const boost::system::error_code& ec);

/// A pooled connection that the server closed while it sat idle fails on its first use, before any byte of
/// the answer arrives. That says nothing about the URL, so the request is re-sent on a fresh connection.
bool is_stale_connection_failure(const boost::system::error_code& ec);

class response_reader {
public:
    /// `jar` (cookies set by responses go there) and `limiter` may be null; both must outlive the reader.
    response_reader(const fetch_config& config, cookie_jar* jar, rate_limiter* limiter);

    /// Parses what c.buffer holds (or the end of the stream). True when the answer is complete or reading it
    /// failed (r.ec); false when more bytes are needed. `url` is the URL asked for (cookies are its).
    bool parse(connection& c, reading& r, std::string_view url, const fetch_options& options,
               std::unique_ptr<fetch_result>& out) const;

    /// Takes in what has arrived since a wait (one read_chunk at most: Beast's parser enforces the head
    /// limit on a head that grows, not on one handed over whole), without waiting again. True when reading
    /// must stop (the error is in r.ec).
    bool take_in(connection& c, reading& r, boost::system::error_code wait_ec) const;

    /// Fills in the rest of the result from the final response, or from how reading it failed. Says whether
    /// the connection may carry another request: only after a response whose end its framing marked (a
    /// Content-Length or a last chunk, not the close of the connection), read whole, that asked for no close.
    /// `r.parser` is made when reading failed before the first byte.
    void conclude(reading& r, const fetch_options& options, fetch_result& result, bool& retry_fresh,
                  bool& reusable) const;

private:
    std::unique_ptr<response_parser> new_parser(const fetch_options& options) const;
    boost::system::error_code check_held_back(const response_parser& parser,
                                              const boost::beast::flat_buffer& buffer,
                                              fetch_result& result) const;
    boost::system::error_code take_head(std::string_view url, const response_parser& parser, reading& r,
                                        fetch_result& result) const;
    void take_cookies(std::string_view url, const boost::beast::http::fields& head) const;

    const fetch_config& config_;
    cookie_jar* jar_;
    rate_limiter* limiter_;
};

} // namespace asiocrawl::detail
