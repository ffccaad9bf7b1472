// The HTTP/1.1 client. A connection is a plain tcp_stream or an ssl_stream over one; everything above the
// byte level (request bytes, the read loop feeding Beast's parser, pooling) is written once against stream
// reads and writes, so Beast's HTTP templates are instantiated for neither stream. Reading drives the parser
// by hand from the connection's buffer: that is what lets us copy the response bytes exactly (capture), count
// them, stop after a cut (truncate_body_at), and leave the bytes of a next pipelined response in the buffer.
// The body goes through a decoding Body type straight into the content_decoder, so a compressed body is
// inflated as it arrives and never beyond the limit. A fetch waiting for its answer holds no buffer, parser
// or result (see impl::run): what thousands of waiting fetches cost is their sockets and small frames.

#include "fetcher.hpp"

#include "address_policy.hpp"
#include "decoder.hpp"

#include <asiocrawl/error.hpp>
#include <asiocrawl/version.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/buffers_range.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/stream_traits.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <boost/url/parse.hpp>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <chrono>
#include <unordered_map>
#include <variant>
#include <vector>

namespace asiocrawl::detail {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using boost::system::error_code;
using tcp = asio::ip::tcp;
using clock_type = std::chrono::steady_clock;
using tls_stream = beast::ssl_stream<beast::tcp_stream>;

namespace {

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);
/// For plain TCP operations awaited directly: unlike use_awaitable, no coroutine frame of its own per
/// operation (Beast's ssl_stream does not accept it in 1.81).
constexpr auto tuple_deferred = asio::as_tuple(asio::deferred);

/// More interim (1xx) responses than this before the final one is a broken or hostile server.
constexpr int max_interim_responses = 8;
/// Bytes asked of the socket per read.
constexpr std::size_t read_chunk = 16 * 1024;
/// How long a closing TLS connection may take to exchange close_notify before it is simply closed.
constexpr auto tls_shutdown_timeout = std::chrono::seconds(2);

/// A keep-alive connection and the read buffer that belongs to it (bytes past one response stay with it). The
/// buffer holds storage only while bytes are being parsed: a connection waiting for an answer, or idle in the
/// pool, has none.
struct connection {
    explicit connection(const asio::any_io_executor& executor)
        : stream(std::in_place_type<beast::tcp_stream>, executor) {}
    connection(const asio::any_io_executor& executor, ssl::context& tls)
        : stream(std::in_place_type<tls_stream>, executor, tls) {}

    std::variant<beast::tcp_stream, tls_stream> stream;
    beast::flat_buffer buffer;
    clock_type::time_point idle_since{};
    std::string remote_ip;
    /// When the request in progress was sent (wall clock, for archive records).
    std::chrono::system_clock::time_point request_started{};
    /// A plain connection whose socket is in non-blocking mode: read_ready() may read from it directly.
    bool reads_without_waiting = false;

    tls_stream* tls() noexcept { return std::get_if<tls_stream>(&stream); }
    beast::tcp_stream& tcp() noexcept {
        if (auto* t = tls())
            return t->next_layer();
        return std::get<beast::tcp_stream>(stream);
    }

    asio::awaitable<error_code> write_all(asio::const_buffer bytes) {
        if (auto* t = tls()) {
            auto [ec, n] = co_await asio::async_write(*t, bytes, use_tuple);
            co_return ec;
        }
        auto [ec, n] = co_await asio::async_write(tcp(), bytes, tuple_deferred);
        co_return ec;
    }

    /// Bytes that have already arrived on a plain connection, read without waiting; 0 when there are none
    /// yet, and always 0 for TLS (its reads go through the stream). `ec` is eof when the peer has closed.
    std::size_t read_ready(asio::mutable_buffer into, error_code& ec) {
        ec = {};
        if (!reads_without_waiting)
            return 0;
        const std::size_t n = tcp().socket().read_some(into, ec);
        if (ec == asio::error::would_block || ec == asio::error::try_again)
            ec = {};
        return n;
    }
};

/// Ends a connection that is in a clean state. TLS peers get a close_notify (RFC 8446 6.1) from a detached
/// coroutine that owns the connection, so the caller never waits for a slow or silent peer.
void retire(std::unique_ptr<connection> c) {
    if (!c->tls() || !c->tcp().socket().is_open()) {
        c->tcp().close();
        return;
    }
    auto executor = c->tcp().get_executor();
    asio::co_spawn(
        executor,
        [](std::unique_ptr<connection> owned) -> asio::awaitable<void> {
            owned->tcp().expires_after(tls_shutdown_timeout);
            co_await owned->tls()->async_shutdown(use_tuple);
            owned->tcp().close();
        }(std::move(c)),
        asio::detached);
}

/// Where a request goes and what it says: derived once per fetch from the normalized URL.
struct request_target {
    bool https = false;
    std::string host; // as in the URL, brackets stripped for IPv6
    std::string port;
    std::string host_header;
    std::string target;
    std::string origin_key;
};

request_target make_target(boost::urls::url_view url) {
    request_target t;
    t.host = url.encoded_host_address(); // IPv6 without brackets, for the resolver
    t.https = url.scheme_id() == boost::urls::scheme::https;
    t.port = url.has_port() && !url.port().empty() ? std::string(url.port()) : (t.https ? "443" : "80");
    t.host_header = url.encoded_host_and_port();
    t.target = url.encoded_path().empty() ? "/" : std::string(url.encoded_path());
    if (url.has_query()) {
        t.target += '?';
        t.target += url.encoded_query();
    }
    t.origin_key = std::string(url.scheme()) + "://" + t.host + ":" + t.port;
    return t;
}

/// The target of a URL string already checked by pool_key().
request_target target_of(std::string_view url) {
    return make_target(boost::urls::parse_uri(url).value());
}

bool is_https(std::string_view url) {
    return boost::urls::parse_uri(url).value().scheme_id() == boost::urls::scheme::https;
}

/// The pool key (scheme://host:port) of an http or https URL; empty for anything else.
std::string pool_key(std::string_view url) {
    const auto parsed = boost::urls::parse_uri(url);
    if (!parsed || (parsed->scheme_id() != boost::urls::scheme::http &&
                    parsed->scheme_id() != boost::urls::scheme::https))
        return {};
    return make_target(*parsed).origin_key;
}

bool is_ip_literal(const std::string& host) {
    error_code ec;
    asio::ip::make_address(host, ec);
    return !ec;
}

/// Translates Beast's parse errors into the crawler's own vocabulary; network errors and ours pass through.
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

/// A pooled connection that the server closed while it sat idle fails on its first use, before any byte of
/// the answer arrives. That says nothing about the URL, so the request is re-sent on a fresh connection.
bool is_stale_connection_failure(const error_code& ec) {
    return ec == http::error::end_of_stream || ec == asio::error::connection_reset ||
           ec == asio::error::broken_pipe || ec == asio::error::eof ||
           ec == asio::error::connection_aborted || ec == ssl::error::stream_truncated;
}

/// Control characters in a configured header value would let it inject header lines.
std::string without_controls(std::string value) {
    std::erase_if(value, [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
    return value;
}

/// Where decoded body bytes go, and the limit on them.
struct body_sink {
    std::string decoded;
    std::uint64_t limit = 0;
    /// The limit is a cut (truncate_body_at), not an error.
    bool cut_at_limit = false;
    bool was_cut = false;
    std::optional<content_decoder> decoder;
};

/// A Beast Body that decodes Content-Encoding while the parser hands over body bytes. Errors returned from
/// put() make the parser stop with that error.
struct decoding_body {
    using value_type = body_sink;

    class reader {
    public:
        // Beast builds the reader with the parser, before the head arrives: the coding is read in init().
        template <bool is_request, class Fields>
        reader(http::header<is_request, Fields>& head, value_type& sink)
            : head_(head)
            , sink_(sink) {}

        void init(const boost::optional<std::uint64_t>&, error_code& ec) {
            ec = {};
            sink_.decoder.emplace(parse_content_coding(head_[http::field::content_encoding]), sink_.limit);
        }

        template <class ConstBufferSequence>
        std::size_t put(const ConstBufferSequence& buffers, error_code& ec) {
            ec = {};
            std::size_t taken = 0;
            for (const auto buffer : beast::buffers_range_ref(buffers)) {
                const std::string_view bytes{static_cast<const char*>(buffer.data()), buffer.size()};
                const auto status = sink_.decoder->feed(bytes, sink_.decoded);
                taken += buffer.size();
                if (status == content_decoder::status::limit_exceeded) {
                    sink_.was_cut = sink_.cut_at_limit;
                    ec = error::body_too_large; // ends parsing; a cut is then turned back into success
                    return taken;
                }
                if (status == content_decoder::status::corrupt) {
                    ec = error::decoding_failed;
                    return taken;
                }
            }
            return taken;
        }

        void finish(error_code& ec) {
            ec = {};
            if (sink_.decoder && sink_.decoder->finish() != content_decoder::status::ok)
                ec = error::decoding_failed;
        }

    private:
        const http::fields& head_;
        value_type& sink_;
    };
};

using response_parser = http::response_parser<decoding_body>;

} // namespace

bool is_retryable(const error_code& ec) noexcept {
    return ec == error::connect_timeout || ec == error::request_timeout ||
           ec == asio::error::connection_refused || ec == asio::error::connection_reset ||
           ec == asio::error::connection_aborted || ec == asio::error::broken_pipe ||
           ec == asio::error::eof || ec == asio::error::timed_out || ec == asio::error::network_unreachable ||
           ec == asio::error::host_unreachable || ec == asio::error::network_down ||
           ec == asio::error::host_not_found_try_again || ec == http::error::end_of_stream ||
           ec == http::error::partial_message;
}

namespace {

ssl::context make_tls_context(const tls_config& config) {
    ssl::context context{ssl::context::tls_client};
    context.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                        ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
    SSL_CTX_set_min_proto_version(context.native_handle(), TLS1_2_VERSION);
    if (config.insecure) {
        context.set_verify_mode(ssl::verify_none);
        return context;
    }
    context.set_default_verify_paths();
    if (!config.ca_file.empty())
        context.load_verify_file(config.ca_file); // throws: a CA file that cannot be read is a config error
    context.set_verify_mode(ssl::verify_peer);
    return context;
}

} // namespace

struct fetcher::impl {
    impl(asio::any_io_executor ex, fetch_config cfg, std::size_t max_idle)
        : executor(std::move(ex))
        , config(std::move(cfg))
        , max_idle_per_origin(max_idle)
        , tls_context(make_tls_context(config.tls)) {
        if (config.user_agent.empty())
            config.user_agent = default_user_agent(config.contact_url);
        config.user_agent = without_controls(std::move(config.user_agent));
    }

    asio::any_io_executor executor;
    fetch_config config;
    std::size_t max_idle_per_origin;
    ssl::context tls_context;
    std::unordered_map<std::string, std::vector<std::unique_ptr<connection>>> idle;
    /// Resolved endpoints by "host:port", already filtered by the address policy.
    std::unordered_map<std::string, std::vector<tcp::endpoint>> resolved;
    fetcher_stats stats;

    /// A pooled connection that is still fresh enough to try, or nullptr.
    std::unique_ptr<connection> take_idle(const std::string& origin_key) {
        auto it = idle.find(origin_key);
        if (it == idle.end())
            return nullptr;
        auto& stack = it->second;
        while (!stack.empty()) {
            auto c = std::move(stack.back());
            stack.pop_back();
            if (clock_type::now() - c->idle_since < config.idle_timeout && c->tcp().socket().is_open())
                return c;
            retire(std::move(c));
        }
        return nullptr;
    }

    void give_back(const std::string& origin_key, std::unique_ptr<connection> c) {
        auto& stack = idle[origin_key];
        if (stack.size() >= max_idle_per_origin) {
            retire(std::move(c));
            return;
        }
        c->idle_since = clock_type::now();
        c->buffer.shrink_to_fit(); // empty (nothing unasked-for is pooled): the storage goes
        stack.push_back(std::move(c));
    }

    std::vector<tcp::endpoint> allowed(std::vector<tcp::endpoint> endpoints) const {
        if (config.refuse_private_addresses)
            std::erase_if(endpoints, [](const tcp::endpoint& e) { return is_refused_address(e.address()); });
        return endpoints;
    }

    /// The endpoints to try for `url`, after the address policy: from host_overrides, the cache, or DNS
    /// (cached for the crawl: every connection to one host needs the same answer). None left after the
    /// policy is forbidden_address.
    asio::awaitable<error_code> endpoints_for(std::string_view url, clock_type::time_point deadline,
                                              std::vector<tcp::endpoint>& endpoints) {
        const request_target t = target_of(url);
        if (auto forced = config.host_overrides.find(t.host); forced != config.host_overrides.end()) {
            error_code ec;
            const auto address = asio::ip::make_address(forced->second, ec);
            if (ec)
                co_return ec;
            const auto port = static_cast<unsigned short>(std::stoul(t.port));
            endpoints = allowed({tcp::endpoint{address, port}});
            co_return endpoints.empty() ? error_code(error::forbidden_address) : error_code{};
        }
        const std::string cache_key = t.host + ":" + t.port;
        if (auto cached = resolved.find(cache_key); cached != resolved.end()) {
            endpoints = cached->second;
            co_return endpoints.empty() ? error_code(error::forbidden_address) : error_code{};
        }
        tcp::resolver resolver{executor};
        asio::steady_timer watchdog{executor, deadline};
        bool timed_out = false;
        // The resolver has no deadline of its own; the watchdog cancels it.
        watchdog.async_wait([&](error_code ec) {
            if (!ec) {
                timed_out = true;
                resolver.cancel();
            }
        });
        auto [ec, results] = co_await resolver.async_resolve(t.host, t.port, use_tuple);
        watchdog.cancel();
        if (timed_out)
            co_return error::connect_timeout;
        if (ec)
            co_return ec;
        for (const auto& entry : results)
            endpoints.push_back(entry.endpoint());
        endpoints = allowed(std::move(endpoints));
        resolved.emplace(cache_key, endpoints);
        co_return endpoints.empty() ? error_code(error::forbidden_address) : error_code{};
    }

    /// The TLS stream checks what the URL names, whatever address it connected to (host_overrides).
    void prepare_tls(tls_stream& stream, const request_target& t) {
        // SNI carries host names only (RFC 6066 3): an IP literal is not sent.
        if (!is_ip_literal(t.host))
            SSL_set_tlsext_host_name(stream.native_handle(), t.host.c_str());
        if (!config.tls.insecure)
            stream.set_verify_callback(ssl::host_name_verification(t.host));
    }

    /// Why a handshake failed, in our terms, with OpenSSL's words for the log.
    std::pair<error_code, std::string> classify_handshake_error(tls_stream& stream,
                                                                const error_code& ec) const {
        if (ec == beast::error::timeout)
            return {error::connect_timeout, {}};
        // A peer that hangs up mid-handshake (overloaded, restarting) is the network's failure, worth another
        // attempt; one that answers something other than TLS fails in OpenSSL's own category below.
        if (ec == ssl::error::stream_truncated || ec == asio::error::eof)
            return {asio::error::eof, {}};
        if (ec.category() != asio::error::get_ssl_category())
            return {ec, {}};
        const long verify = config.tls.insecure ? X509_V_OK : SSL_get_verify_result(stream.native_handle());
        if (verify != X509_V_OK || ERR_GET_REASON(ec.value()) == SSL_R_CERTIFICATE_VERIFY_FAILED) {
            std::string detail = ec.message();
            if (verify != X509_V_OK)
                detail += std::string(" (") + X509_verify_cert_error_string(verify) + ")";
            return {error::certificate_invalid, detail};
        }
        return {error::tls_handshake_failed, ec.message()};
    }

    /// A result for an attempt that ends before any response.
    static std::unique_ptr<fetch_result> failure(error_code ec, std::string detail = {}) {
        auto r = std::make_unique<fetch_result>();
        r->error = ec;
        r->error_detail = std::move(detail);
        return r;
    }

    /// The TLS handshake of a connected stream, within `deadline`. On failure, false and `out` says why.
    asio::awaitable<bool> handshake(tls_stream& tls, std::string_view url, clock_type::time_point deadline,
                                    std::unique_ptr<fetch_result>& out) {
        prepare_tls(tls, target_of(url));
        tls.next_layer().expires_at(deadline);
        auto [ec] = co_await tls.async_handshake(ssl::stream_base::client, use_tuple);
        if (!ec)
            co_return true;
        auto [mapped, detail] = classify_handshake_error(tls, ec);
        tls.next_layer().close();
        out = failure(mapped, std::move(detail));
        co_return false;
    }

    /// Resolves, connects and (for https) shakes hands, all within connect_timeout. On failure, nullptr and
    /// `out` says why. Every fetch of a burst is here at once: DNS and the handshake have coroutines of their
    /// own, so that this frame stays small.
    asio::awaitable<std::unique_ptr<connection>> connect(std::string_view url,
                                                         std::unique_ptr<fetch_result>& out) {
        const auto deadline = clock_type::now() + config.connect_timeout;
        std::vector<tcp::endpoint> endpoints;
        error_code ec = co_await endpoints_for(url, deadline, endpoints);
        if (ec) {
            out = failure(ec);
            co_return nullptr;
        }
        auto c = is_https(url) ? std::make_unique<connection>(executor, tls_context)
                               : std::make_unique<connection>(executor);
        for (const auto& endpoint : endpoints) {
            c->tcp().expires_at(deadline);
            std::tie(ec) = co_await c->tcp().async_connect(endpoint, tuple_deferred);
            if (!ec) {
                c->remote_ip = endpoint.address().to_string();
                break;
            }
            c->tcp().close();
            if (ec == beast::error::timeout)
                break;
        }
        if (ec) {
            out = failure(ec == beast::error::timeout ? error_code(error::connect_timeout) : ec);
            co_return nullptr;
        }
        ++stats.connections_opened;
        c->tcp().socket().set_option(tcp::no_delay{true});
        if (auto* tls = c->tls()) {
            if (!co_await handshake(*tls, url, deadline, out))
                co_return nullptr;
        } else {
            // Bytes that have already arrived are then read at once, without another wait (read_ready).
            error_code mode_ec;
            c->tcp().socket().non_blocking(true, mode_ec);
            c->reads_without_waiting = !mode_ec;
        }
        co_return c;
    }

    std::string request_bytes(const request_target& t) const {
        std::string r;
        r.reserve(256 + t.target.size() + config.user_agent.size());
        r.append("GET ").append(t.target).append(" HTTP/1.1\r\nHost: ").append(t.host_header);
        r.append("\r\nUser-Agent: ").append(config.user_agent);
        r.append("\r\nAccept: text/html,application/xhtml+xml,*/*;q=0.8\r\nAccept-Encoding: ");
        r.append(config.compression ? "gzip, deflate" : "identity");
        r.append("\r\n\r\n"); // HTTP/1.1 keeps the connection alive unless told otherwise
        return r;
    }

    /// A parser for one response (interim ones included), with the limits of this request.
    std::unique_ptr<response_parser> new_parser(const fetch_options& options) const {
        auto parser = std::make_unique<response_parser>();
        parser->header_limit(config.max_header_bytes);
        auto& sink = parser->get().body();
        if (options.truncate_body_at) {
            // The cut counts decoded bytes; the wire is not limited, or a Content-Length over the cut would
            // fail before the first byte.
            parser->body_limit(boost::none);
            sink.limit = *options.truncate_body_at;
            sink.cut_at_limit = true;
        } else {
            parser->body_limit(config.max_body_bytes); // as received; the decoder limits the decoded size
            sink.limit = config.max_body_bytes;
        }
        return parser;
    }

    /// The result of an attempt, created when there is something to say (the first byte of the answer, a
    /// failure, or the request bytes to capture), not while waiting.
    static fetch_result& result_of(std::unique_ptr<fetch_result>& out, const connection& c) {
        if (!out) {
            out = std::make_unique<fetch_result>();
            out->remote_ip = c.remote_ip;
            out->started = c.request_started;
        }
        return *out;
    }

    /// Writes the request of `url` within the request deadline (which also covers reading the answer). The
    /// bytes go once written, unless captured in `out`.
    asio::awaitable<error_code> send(connection& c, std::string_view url, bool capture,
                                     std::unique_ptr<fetch_result>& out) {
        std::string request = request_bytes(target_of(url));
        c.tcp().expires_after(config.request_timeout);
        c.request_started = std::chrono::system_clock::now();
        const error_code ec = co_await c.write_all(asio::buffer(request));
        if (capture)
            result_of(out, c).raw_request = std::move(request);
        co_return ec;
    }

    static asio::awaitable<std::tuple<error_code, std::size_t>> read_some(tls_stream& stream,
                                                                          asio::mutable_buffer into) {
        co_return co_await stream.async_read_some(into, use_tuple);
    }

    /// Feeds the parser what the buffer holds. Consumed bytes are counted (and copied when capturing);
    /// unconsumed ones stay in the buffer. Returns the bytes consumed.
    static std::size_t feed(response_parser& parser, beast::flat_buffer& buffer, bool capture,
                            fetch_result& result, error_code& ec) {
        const bool head_was_done = parser.is_header_done();
        const std::size_t used = parser.put(buffer.data(), ec);
        if (capture)
            result.raw_response.append(static_cast<const char*>(buffer.data().data()), used);
        result.wire_bytes += used;
        buffer.consume(used);
        if (!head_was_done && parser.is_header_done())
            result.raw_head_bytes = result.wire_bytes; // put() stops right after the head
        return used;
    }

    /// Fills the result from the final response (or from how reading it failed).
    static void conclude(response_parser& parser, error_code read_ec, bool at_eof, fetch_result& result,
                         bool& retry_fresh, bool& reusable) {
        auto& sink = parser.get().body();
        if (!read_ec && parser.get().result_int() / 100 == 1)
            read_ec = error::bad_response; // still interim after max_interim_responses
        if (parser.is_header_done()) {
            const auto& head = parser.get();
            result.status = static_cast<int>(head.result_int());
            if (auto it = head.find(http::field::content_type); it != head.end())
                result.content_type = std::string(it->value());
            if (auto it = head.find(http::field::location); it != head.end())
                result.location = std::string(it->value());
            if (auto it = head.find(http::field::retry_after); it != head.end())
                result.retry_after = std::string(it->value());
        }
        result.body_bytes = sink.decoded.size();
        if (read_ec && sink.was_cut) {
            result.truncated = true;
            read_ec = {};
        }
        if (read_ec) {
            retry_fresh = !parser.got_some() && is_stale_connection_failure(read_ec);
            result.error = classify_read_error(read_ec);
            return;
        }
        result.body = std::move(sink.decoded);
        reusable = !result.truncated && !at_eof && parser.keep_alive();
    }

    /// The reading of one answer: what lives across the waits for bytes. The parsing between the waits is
    /// done by parse() and received(), outside the coroutine, so that their locals are not in its frame.
    struct reading {
        std::unique_ptr<response_parser> parser; // one per response, interim ones included
        error_code ec;
        int interim = 0;
        bool at_eof = false;
        char first = 0; // where a waiting fetch reads its next byte: it holds no buffer
    };

    /// Parses what the buffer holds (or the end of the stream). True when the answer is complete or reading
    /// it failed (r.ec); false when more bytes are needed.
    bool parse(connection& c, reading& r, const fetch_options& options,
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
                const std::size_t used = feed(parser, buffer, options.capture, *out, ec);
                if (ec && ec != http::error::need_more) {
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
                if (!ec && used > 0 && buffer.size() > 0)
                    continue;
            }
            if (r.at_eof) {
                // Close-delimited bodies end here; anything else is cut short (partial_message). A TLS peer
                // that closes without close_notify is treated like a plain close: HTTP framing, not TLS, says
                // whether the message is whole (a close-delimited body is accepted as browsers do).
                if (!parser.got_some())
                    r.ec = http::error::end_of_stream;
                else
                    parser.put_eof(r.ec);
                return true;
            }
            return false; // part of a head or of a chunk header is buffered
        }
        return false;
    }

    /// Where the next read goes: with nothing buffered, one byte into `r` (the wait holds no buffer); with
    /// part of a message buffered, more room after it.
    static asio::mutable_buffer next_read(connection& c, reading& r) {
        if (c.buffer.size() == 0) {
            c.buffer.shrink_to_fit();
            return asio::buffer(&r.first, 1);
        }
        return c.buffer.prepare(read_chunk);
    }

    /// Takes in what a read into `into` brought. True when reading must stop (the error is in r.ec).
    static bool received(connection& c, reading& r, asio::mutable_buffer into, std::size_t n, error_code ec) {
        auto& buffer = c.buffer;
        if (into.data() != &r.first) {
            buffer.commit(n);
        } else if (n > 0) {
            *static_cast<char*>(buffer.prepare(read_chunk).data()) = r.first;
            buffer.commit(1);
            // What else has arrived comes along without another wait. An error other than eof shows again
            // on the next read.
            error_code ready_ec;
            buffer.commit(c.read_ready(buffer.prepare(read_chunk - 1), ready_ec));
            if (ready_ec == asio::error::eof)
                r.at_eof = true;
        }
        if (ec == asio::error::eof || ec == ssl::error::stream_truncated) {
            r.at_eof = true;
            return false;
        }
        r.ec = ec;
        return static_cast<bool>(ec);
    }

    /// One attempt (fetcher::fetch_into): a connection from the pool or a new one, the request, the answer.
    ///
    /// Thousands of these wait at once, so this frame is what a fetch costs while it waits, and it is kept
    /// small: one coroutine for the whole exchange, no fetch_result, parser or read buffer while waiting (the
    /// wait for the answer reads one byte into the frame; those exist only while bytes are being parsed), no
    /// request bytes once sent. Interim answers (100 Continue, 103 Early Hints) precede the real one on the
    /// same connection: they are skipped, or the real response would stay in the buffer and be taken for the
    /// next URL's. The parser is driven by hand from the connection's buffer: that is what lets us copy the
    /// response bytes exactly (capture), count them, stop after a cut (truncate_body_at), and leave the bytes
    /// of a next pipelined response in the buffer.
    asio::awaitable<void> run(std::string_view url, fetch_options options,
                              std::unique_ptr<fetch_result>& out) {
        out.reset();
        const std::string origin_key = pool_key(url);
        if (origin_key.empty()) {
            out = failure(error::unsupported_scheme);
            co_return;
        }
        for (;;) {
            auto conn = take_idle(origin_key);
            const bool reused = conn != nullptr;
            if (reused) {
                ++stats.connections_reused;
            } else {
                conn = co_await connect(url, out);
                if (!conn)
                    co_return;
            }
            out.reset();
            auto& c = *conn;
            bool retry_fresh = false;
            bool reusable = false;
            error_code ec = co_await send(c, url, options.capture, out);
            if (ec) {
                retry_fresh = is_stale_connection_failure(ec);
                result_of(out, c).error = classify_read_error(ec);
            } else {
                reading r;
                while (!parse(c, r, options, out)) {
                    const auto into = next_read(c, r);
                    std::size_t n = 0;
                    if (auto* tls = c.tls())
                        std::tie(ec, n) = co_await read_some(*tls, into);
                    else
                        std::tie(ec, n) = co_await c.tcp().async_read_some(into, tuple_deferred);
                    if (received(c, r, into, n, ec))
                        break;
                }
                if (!r.parser)
                    r.parser = new_parser(options); // failed before the first byte
                conclude(*r.parser, r.ec, r.at_eof, result_of(out, c), retry_fresh, reusable);
            }
            if (!out->error) {
                // We never pipeline: bytes already waiting after a complete response are not an answer to
                // anything we asked (a body longer than its Content-Length), and would be read as the next
                // URL's response.
                if (reusable && c.buffer.size() == 0)
                    give_back(origin_key, std::move(conn));
                else
                    retire(std::move(conn));
                co_return;
            }
            if (!(reused && retry_fresh))
                co_return;
            // The URL did nothing wrong: a pooled connection had gone stale. Send again on a fresh one.
            ++stats.stale_retries;
        }
    }

    asio::awaitable<fetch_result> fetch_whole(std::string url, fetch_options options) {
        std::unique_ptr<fetch_result> out;
        co_await run(url, options, out);
        co_return std::move(*out);
    }
};

fetcher::fetcher(asio::any_io_executor executor, fetch_config config, std::size_t max_idle_per_origin)
    : impl_(std::make_unique<impl>(std::move(executor), std::move(config), max_idle_per_origin)) {}

fetcher::~fetcher() = default;

const fetcher_stats& fetcher::stats() const noexcept {
    return impl_->stats;
}

void fetcher::close_idle() {
    for (auto& [origin, stack] : impl_->idle)
        for (auto& c : stack)
            retire(std::move(c));
    impl_->idle.clear();
}

asio::awaitable<fetch_result> fetcher::fetch(boost::urls::url_view url, fetch_options options) {
    return impl_->fetch_whole(std::string(url.buffer()), options); // owns its URL: `url` may be a temporary
}

asio::awaitable<void> fetcher::fetch_into(std::string_view url, fetch_options options,
                                          std::unique_ptr<fetch_result>& out) {
    return impl_->run(url, options, out);
}

} // namespace asiocrawl::detail
