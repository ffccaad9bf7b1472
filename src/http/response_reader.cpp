#include "http/response_reader.hpp"

#include "http/content_type.hpp"
#include "http/fetch_settings.hpp"
#include "http/request_writer.hpp"
#include "url/url_host.hpp"
#include "util/ascii.hpp"

#include <asiocrawl/error.hpp>

#include <boost/asio/error.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/url/parse.hpp>

#include <charconv>
#include <stdexcept>

namespace asiocrawl::detail {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using boost::system::error_code;

namespace {

/// More interim (1xx) responses than this before the final one is a broken or hostile server.
constexpr int max_interim_responses = 8;
/// Longest chunk-size line, extensions included, that we buffer (Go's net/http allows 4,096 bytes too).
/// Extensions mean nothing to us; a line longer than this is a broken or hostile server.
constexpr std::size_t max_chunk_line = 4 * 1024;

/// Refuses a chunk-size line whose extensions are longer than max_chunk_line even when it arrived whole
/// (parse() bounds a line still arriving itself: Beast buffers it without limit). The parser keeps a
/// reference to it: one for all parsers.
struct chunk_extension_check {
    void operator()(std::uint64_t, std::string_view extensions, error_code& ec) const {
        if (extensions.size() > max_chunk_line)
            ec = http::error::bad_chunk_extension;
    }
};
chunk_extension_check chunk_extensions_checked;

/// "HTTP/1.1 200" with no space after the code: RFC 9112 4 asks for one before the (optional) reason phrase
/// and Beast's parser insists on it, while browsers and curl read the line without. When the answer starts
/// with such a line, the parser is handed a copy with the space, and what is counted and captured are the
/// bytes as received. nullopt when the answer does not start so.
std::optional<std::size_t> feed_without_reason(response_parser& parser, beast::flat_buffer& buffer,
                                               bool capture, fetch_result& result, error_code& ec) {
    constexpr std::size_t line_size = std::string_view("HTTP/1.1 200\r\n").size();
    const std::string_view held{static_cast<const char*>(buffer.data().data()), buffer.size()};
    const auto digit = [&](std::size_t i) { return ascii::is_digit(held[i]); };
    if (held.size() < line_size || !held.starts_with("HTTP/") || !digit(5) || held[6] != '.' || !digit(7) ||
        held[8] != ' ' || !digit(9) || !digit(10) || !digit(11) || held.substr(12, 2) != "\r\n")
        return std::nullopt;
    std::string repaired;
    repaired.reserve(held.size() + 1);
    repaired.append(held.substr(0, 12)).append(" ").append(held.substr(12));
    const std::size_t used = parser.put(asio::buffer(repaired), ec);
    if (used < line_size + 1)
        return 0; // the parser took nothing yet (it waits for the whole head)
    const std::size_t taken = used - 1;
    if (capture)
        result.raw_response.append(held.substr(0, taken));
    result.wire_bytes += taken;
    buffer.consume(taken);
    if (parser.is_header_done())
        result.raw_head_bytes = result.wire_bytes;
    return taken;
}

/// Feeds the parser what the buffer holds. Consumed bytes are counted (and copied when capturing); unconsumed
/// ones stay in the buffer. Returns the bytes consumed.
std::size_t feed(response_parser& parser, beast::flat_buffer& buffer, bool capture, fetch_result& result,
                 error_code& ec) {
    const bool head_was_done = parser.is_header_done();
    std::size_t used = 0;
    try {
        if (result.wire_bytes == 0) {
            if (auto taken = feed_without_reason(parser, buffer, capture, result, ec))
                return *taken;
        }
        used = parser.put(buffer.data(), ec);
    } catch (const std::length_error&) {
        // Beast's fields hold a name or value of at most 64 KiB, and say so by throwing (a trailer is not
        // under header_limit; a head is, unless max_header_bytes is larger).
        ec = error::header_too_large;
        result.error_detail = "a header field over 64 KiB";
        return 0;
    }
    if (capture)
        result.raw_response.append(static_cast<const char*>(buffer.data().data()), used);
    result.wire_bytes += used;
    buffer.consume(used);
    if (!head_was_done && parser.is_header_done())
        result.raw_head_bytes = result.wire_bytes; // put() stops right after the head
    return used;
}

/// The server's Keep-Alive hints (RFC 2068 19.7.1.1, still what servers send): how long it keeps an idle
/// connection (timeout=N), and max=0, no more requests on this one.
void read_keep_alive(const http::fields& head, reading& r) {
    const auto it = head.find("Keep-Alive");
    if (it == head.end())
        return;
    // Keep-Alive is a comma-separated list of name=value pairs.
    std::string_view rest = it->value();
    while (!rest.empty()) {
        const auto comma = rest.find(',');
        std::string_view item = rest.substr(0, comma);
        rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
        const auto equals = item.find('=');
        if (equals == std::string_view::npos)
            continue;
        const auto name = ascii::trim(item.substr(0, equals), " \t");
        auto value = ascii::trim(item.substr(equals + 1), " \t");
        if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
            value = value.substr(1, value.size() - 2);
        std::uint32_t number = 0;
        const auto [end, problem] = std::from_chars(value.data(), value.data() + value.size(), number);
        if (problem != std::errc{} || end != value.data() + value.size())
            continue;
        if (ascii::iequals(name, "timeout"))
            r.server_keeps_idle = std::chrono::seconds{number};
        else if (ascii::iequals(name, "max") && number == 0)
            r.reusable = false;
    }
}

/// The value of the last `name` field of `head` ("" when none): ETag and Last-Modified are singleton fields
/// (RFC 9110 8.8.2, 8.8.3), and a head that repeats one is in error; RFC 9110 does not say which to keep, and
/// curl keeps the last one it sees (its --etag-save and its Last-Modified for -R/-z), as we do. A validator
/// that is not the server's current one costs a full answer (200), never a wrong 304: the server decides.
/// Bounded by the head (fetch.max_header_bytes).
std::string last_value(const http::fields& head, http::field name) {
    std::string_view value;
    auto [first, last] = head.equal_range(name);
    for (auto it = first; it != last; ++it)
        value = it->value();
    return std::string(value);
}

/// Every `name` field of `head`, joined by `separator` ("" when none). Bounded by the head
/// (fetch.max_header_bytes).
template <class Name>
std::string joined_values(const http::fields& head, Name name, char separator) {
    std::string joined;
    auto [first, last] = head.equal_range(name);
    for (auto it = first; it != last; ++it) {
        if (!joined.empty())
            joined += separator;
        joined.append(it->value());
    }
    return joined;
}

/// A 2xx head whose Content-Type is not among `accept` (fetch_options::accept_types).
bool type_rejected(const response_parser& parser, const std::vector<std::string>& accept) {
    const auto& head = parser.get();
    if (head.result_int() < 200 || head.result_int() >= 300)
        return false;
    const auto it = head.find(http::field::content_type);
    return it != head.end() && !media_type_accepted(it->value(), accept);
}

} // namespace

// ---- decoding_body ----

error_code transfer_coding_of(const http::fields& head, content_coding& coding, std::string& problem) {
    std::vector<std::string_view> codings;
    auto [first, last] = head.equal_range(http::field::transfer_encoding);
    for (auto it = first; it != last; ++it)
        for (const auto token : http::token_list{it->value()})
            codings.push_back(token);
    coding = content_coding::identity;
    if (!codings.empty() && ascii::iequals(codings.back(), "chunked"))
        codings.pop_back();
    if (codings.empty())
        return {};
    for (const auto c : codings) {
        if (ascii::iequals(c, "chunked")) {
            problem = "Transfer-Encoding with chunked twice or not last";
            return error::bad_response;
        }
    }
    coding = codings.size() == 1 ? parse_content_coding(codings.front()) : content_coding::unsupported;
    // "identity" is no longer a transfer coding (RFC 7230 dropped it); br and zstd are content codings only
    // (the HTTP Transfer Coding Registry has neither).
    if (coding != content_coding::gzip && coding != content_coding::deflate) {
        problem = "transfer coding \"" + without_controls(std::string(codings.front().substr(0, 64))) +
                  (codings.size() > 1 ? "\" and more" : "\"") + " not supported";
        return error::bad_response;
    }
    return {};
}

void decoding_body::reader::init(const boost::optional<std::uint64_t>&, error_code& ec) {
    content_coding transfer = content_coding::identity;
    ec = transfer_coding_of(head_, transfer, sink_.problem);
    if (ec)
        return;
    if (transfer != content_coding::identity) {
        // What the transfer coding hides is itself encoded (or not): bounded like the body, with room for a
        // content coding that makes incompressible bytes a little larger.
        sink_.transfer_decoder.emplace(transfer, sink_.limit + sink_.limit / 8 + read_chunk);
    }
    const auto content_encoding = head_[http::field::content_encoding];
    const auto coding = parse_content_coding(content_encoding);
    sink_.decoder.emplace(coding, sink_.limit);
    if (coding == content_coding::unsupported) // said only if a body comes
        sink_.problem = "Content-Encoding \"" +
                        without_controls(std::string(content_encoding.substr(0, 64))) +
                        "\" is not decoded (gzip, deflate, br or zstd, one of them)";
}

error_code decoding_body::reader::take(std::string_view bytes) {
    if (!sink_.transfer_decoder)
        return decode(bytes);
    sink_.transfer_decoded.clear();
    const auto status = sink_.transfer_decoder->feed(bytes, sink_.transfer_decoded);
    // What came out is decoded first: the body's own limit (or cut) applies before this one.
    if (const error_code ec = decode(sink_.transfer_decoded))
        return ec;
    if (status == content_decoder::status::corrupt && sink_.problem.empty())
        sink_.problem = "transfer coding: " + sink_.transfer_decoder->problem();
    if (status != content_decoder::status::ok)
        return status == content_decoder::status::corrupt ? error_code(error::decoding_failed)
                                                          : error_code(error::body_too_large);
    return {};
}

error_code decoding_body::reader::decode(std::string_view bytes) {
    const auto status = sink_.decoder->feed(bytes, sink_.decoded);
    if (status == content_decoder::status::limit_exceeded) {
        sink_.was_cut = sink_.cut_at_limit;
        return error::body_too_large; // ends parsing; a cut is then turned back into success
    }
    if (status == content_decoder::status::corrupt) {
        if (sink_.problem.empty())
            sink_.problem = sink_.decoder->problem();
        return error::decoding_failed;
    }
    return {};
}

void decoding_body::reader::finish(error_code& ec) {
    ec = {};
    if (sink_.transfer_decoder) {
        if (sink_.transfer_decoder->finish() != content_decoder::status::ok) {
            ec = error::decoding_failed;
            if (sink_.problem.empty())
                sink_.problem = "transfer coding: " + sink_.transfer_decoder->problem();
            return;
        }
    }
    if (sink_.decoder && sink_.decoder->finish() != content_decoder::status::ok) {
        ec = error::decoding_failed;
        if (sink_.problem.empty())
            sink_.problem = sink_.decoder->problem();
    }
}

// ---- free functions ----

fetch_result& result_of(std::unique_ptr<fetch_result>& out, const connection& c) {
    if (!out) {
        out = std::make_unique<fetch_result>();
        out->remote_ip = c.remote_ip;
        out->started = c.request_started;
    }
    return *out;
}

error_code classify_read_error(const error_code& ec) {
    if (ec == beast::error::timeout)
        return error::request_timeout;
    if (ec == http::error::body_limit)
        return error::body_too_large;
    if (ec == http::error::header_limit)
        return error::header_too_large;
    if (ec.category() == http::make_error_code(http::error::bad_version).category() &&
        ec != http::error::end_of_stream && ec != http::error::partial_message)
        return error::bad_response;
    return ec;
}

bool is_stale_connection_failure(const error_code& ec) {
    return ec == http::error::end_of_stream || ec == asio::error::connection_reset ||
           ec == asio::error::broken_pipe || ec == asio::error::eof || ec == asio::error::connection_aborted;
}

// ---- response_reader ----

response_reader::response_reader(const fetch_config& config, cookie_jar* jar, rate_limiter* limiter)
    : config_(config)
    , jar_(jar)
    , limiter_(limiter) {}

std::unique_ptr<response_parser> response_reader::new_parser(const fetch_options& options) const {
    auto parser = std::make_unique<response_parser>();
    parser->header_limit(config_.max_header_bytes);
    parser->on_chunk_header(chunk_extensions_checked);
    auto& sink = parser->get().body();
    if (options.truncate_body_at) {
        // The cut counts decoded bytes; the wire is not limited, or a Content-Length over the cut would fail
        // before the first byte.
        parser->body_limit(boost::none);
        sink.limit = *options.truncate_body_at;
        sink.cut_at_limit = true;
    } else {
        parser->body_limit(config_.max_body_bytes); // as received; the decoder limits the decoded size
        sink.limit = config_.max_body_bytes;
    }
    return parser;
}

bool response_reader::parse(connection& c, reading& r, std::string_view url, const fetch_options& options,
                            std::unique_ptr<fetch_result>& out) const {
    auto& buffer = c.buffer;
    while (buffer.size() > 0 || r.at_eof) {
        if (!r.parser) {
            r.parser = new_parser(options);
            auto& result = result_of(out, c);
            result.raw_response.clear();
            result.wire_bytes = 0;
            result.raw_head_bytes = 0;
        }
        auto& parser = *r.parser;
        if (buffer.size() > 0) {
            error_code ec;
            const bool head_was_done = parser.is_header_done();
            const std::size_t used = feed(parser, buffer, options.capture, *out, ec);
            // A head is taken as soon as it is whole, even when its body is already refused (a Content-Length
            // over the limit): the record says what the server answered.
            if (!head_was_done && parser.is_header_done()) {
                if (const error_code head_ec = take_head(url, parser, r, *out)) {
                    r.ec = head_ec;
                    return true;
                }
                if (!ec && options.accept_types && type_rejected(parser, *options.accept_types)) {
                    r.ec = error::type_rejected; // the body is not read; the connection goes
                    return true;
                }
            }
            if (ec && ec != http::error::need_more) {
                if (ec == http::error::bad_chunk_extension && out->error_detail.empty())
                    out->error_detail =
                        "chunk extensions malformed or over " + std::to_string(max_chunk_line) + " bytes";
                r.ec = ec;
                return true;
            }
            if (parser.is_done()) {
                const auto status = parser.get().result_int();
                if (status < 100 || status >= 200 || status == 101 || r.interim == max_interim_responses)
                    return true;
                ++r.interim;
                r.parser.reset(); // an interim answer: the real one follows
                continue;
            }
            if (ec == http::error::need_more && parser.is_header_done()) {
                if (const error_code held = check_held_back(parser, buffer, *out)) {
                    r.ec = held;
                    return true;
                }
            }
            if (!ec && used > 0 && buffer.size() > 0)
                continue;
        }
        if (r.at_eof) {
            // Close-delimited bodies end here; anything else is cut short (partial_message). A TLS peer that
            // closes without close_notify is treated like a plain close: HTTP framing, not TLS, says whether
            // the message is whole (a close-delimited body is accepted as browsers do).
            if (!parser.got_some())
                r.ec = http::error::end_of_stream;
            else
                parser.put_eof(r.ec);
            return true;
        }
        return false; // part of a head, a chunk-size line or the trailers is buffered
    }
    if (buffer.size() == 0)
        buffer.shrink_to_fit(); // nothing buffered across the next wait
    return false;
}

/// What the parser holds back, once the head is done, when it needs more: a chunk-size line or a trailer
/// section (it takes body bytes as they come). Beast bounds neither, so we do: a chunk-size line with its
/// extensions by max_chunk_line, the trailers by max_header_bytes, like the head.
error_code response_reader::check_held_back(const response_parser& parser, const beast::flat_buffer& buffer,
                                            fetch_result& result) const {
    if (!parser.chunked())
        return {};
    std::string_view held{static_cast<const char*>(buffer.data().data()), buffer.size()};
    if (held.starts_with("\r\n"))
        held.remove_prefix(2); // the end of the previous chunk's data, parsed with the next line
    const auto end_of_line = held.find('\n');
    if (end_of_line == std::string_view::npos) {
        if (held.size() <= max_chunk_line)
            return {};
        result.error_detail = "a chunk-size line over " + std::to_string(max_chunk_line) + " bytes";
        return error::bad_response;
    }
    // A whole line held back is the last chunk's: the parser waits for the end of the trailers.
    if (held.size() - end_of_line - 1 <= config_.max_header_bytes)
        return {};
    result.error_detail =
        "trailers over " + std::to_string(config_.max_header_bytes) + " bytes (fetch.max_header_bytes)";
    return error::header_too_large;
}

/// Takes what we keep of a final response's head, as soon as it is complete: trailers that come after the
/// body are never merged into it (RFC 9110 6.5.1: a field that matters to us is not to be trusted there).
/// Cookies it sets go to the jar, redirects and errors included.
error_code response_reader::take_head(std::string_view url, const response_parser& parser, reading& r,
                                      fetch_result& result) const {
    const auto& head = parser.get();
    const unsigned status = head.result_int();
    if (status < 100) {
        result.error_detail = "status code " + std::to_string(status) + " (RFC 9110 15: 100 to 599)";
        return error::bad_response; // "000"
    }
    if (status / 100 == 1 && status != 101)
        return {}; // interim: skipped
    result.status = static_cast<int>(status);
    result.protocol = "http/1.1"; // the HTTP/2 transport, which reads its answers here too, says h2 after
    if (auto it = head.find(http::field::content_type); it != head.end())
        result.content_type = std::string(it->value());
    if (auto it = head.find(http::field::location); it != head.end())
        result.location = std::string(it->value());
    if (auto it = head.find(http::field::retry_after); it != head.end())
        result.retry_after = std::string(it->value());
    result.etag = last_value(head, http::field::etag);
    result.last_modified = last_value(head, http::field::last_modified);
    result.x_robots_tag = joined_values(head, "X-Robots-Tag", '\n');
    result.link = joined_values(head, http::field::link, ',');
    if (const auto sts = head.find(http::field::strict_transport_security); sts != head.end())
        result.strict_transport_security = std::string(sts->value());
    read_keep_alive(head, r);
    // An HTTP/1.0 message with Transfer-Encoding has faulty framing (RFC 9112 6.1): read it, then close.
    if (head.version() < 11 && head.find(http::field::transfer_encoding) != head.end())
        r.reusable = false;
    if (jar_ && status != 101)
        take_cookies(url, head);
    return {};
}

void response_reader::take_cookies(std::string_view url, const http::fields& head) const {
    auto [first, last] = head.equal_range(http::field::set_cookie);
    if (first == last)
        return;
    const auto parsed = boost::urls::parse_uri(url);
    if (!parsed)
        return; // the transport fetched it: it parsed there
    const std::string host = host_for_wire(parsed->encoded_host_address());
    const cookie_target from{parsed->scheme(), host, cookie_path(*parsed)};
    const auto now = std::chrono::system_clock::now();
    for (auto it = first; it != last; ++it)
        jar_->set_cookie(from, it->value(), now);
}

void response_reader::conclude(reading& r, const fetch_options& options, fetch_result& result,
                               bool& retry_fresh, bool& reusable) const {
    if (!r.parser)
        r.parser = new_parser(options); // failed before the first byte
    auto& parser = *r.parser;
    auto& sink = parser.get().body();
    error_code read_ec = r.ec;
    if (!read_ec && parser.get().result_int() / 100 == 1)
        read_ec = error::bad_response; // still interim after max_interim_responses, or 101 unasked
    result.body_bytes = sink.decoded.size();
    if (read_ec && sink.was_cut) {
        result.truncated = true;
        read_ec = {};
    }
    if (read_ec) {
        retry_fresh = !parser.got_some() && is_stale_connection_failure(read_ec);
        result.error = classify_read_error(read_ec);
        if (result.error_detail.empty())
            result.error_detail = std::move(sink.problem);
        if (read_ec == error::bad_response && result.status < 100)
            result.status = 0;
        return;
    }
    result.body = std::move(sink.decoded);
    reusable = r.reusable && !result.truncated && !r.at_eof && parser.keep_alive();
}

bool response_reader::take_in(connection& c, reading& r, error_code wait_ec) const {
    if (wait_ec) {
        r.ec = wait_ec;
        return true;
    }
    error_code ec;
    const std::size_t n = c.read_now(c.buffer.prepare(read_chunk), ec);
    c.buffer.commit(n);
    r.read_on = n == read_chunk && r.reads_on < max_reads_on;
    r.reads_on = r.read_on ? r.reads_on + 1 : 0;
    if (limiter_ && n > 0)
        r.throttle = limiter_->charge(n, std::chrono::steady_clock::now());
    if (ec == asio::error::eof) {
        r.at_eof = true;
        return false;
    }
    r.ec = ec;
    return static_cast<bool>(ec); // nothing read (a spurious wake-up): the next wait brings more
}

} // namespace asiocrawl::detail
