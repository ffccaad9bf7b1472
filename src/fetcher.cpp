// The HTTP/1.1 client. A connection is a plain tcp_stream or an ssl_stream over one; everything above the
// byte level (request bytes, the read loop feeding Beast's parser, pooling) is written once against two
// small functions, read_some and write_all, so Beast's HTTP templates are instantiated for neither stream.
// Reading drives the parser by hand from the connection's buffer: that is what lets us copy the response
// bytes exactly (capture), count them, stop after a cut (truncate_body_at), and leave the bytes of a next
// pipelined response in the buffer. The body goes through a decoding Body type straight into the
// content_decoder, so a compressed body is inflated as it arrives and never beyond the limit.

#include "fetcher.hpp"

#include "address_policy.hpp"
#include "decoder.hpp"

#include <asiocrawl/error.hpp>
#include <asiocrawl/version.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
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

/// More interim (1xx) responses than this before the final one is a broken or hostile server.
constexpr int max_interim_responses = 8;
/// Bytes asked of the socket per read.
constexpr std::size_t read_chunk = 16 * 1024;
/// How long a closing TLS connection may take to exchange close_notify before it is simply closed.
constexpr auto tls_shutdown_timeout = std::chrono::seconds(2);

/// A keep-alive connection and the read buffer that belongs to it (bytes past one response stay with it).
struct connection {
    explicit connection(const asio::any_io_executor& executor)
        : stream(std::in_place_type<beast::tcp_stream>, executor) {}
    connection(const asio::any_io_executor& executor, ssl::context& tls)
        : stream(std::in_place_type<tls_stream>, executor, tls) {}

    std::variant<beast::tcp_stream, tls_stream> stream;
    beast::flat_buffer buffer;
    clock_type::time_point idle_since{};
    std::string remote_ip;

    tls_stream* tls() noexcept { return std::get_if<tls_stream>(&stream); }
    beast::tcp_stream& tcp() noexcept {
        if (auto* t = tls())
            return t->next_layer();
        return std::get<beast::tcp_stream>(stream);
    }

    asio::awaitable<std::tuple<error_code, std::size_t>> read_some(asio::mutable_buffer into) {
        if (auto* t = tls())
            co_return co_await t->async_read_some(into, use_tuple);
        co_return co_await tcp().async_read_some(into, use_tuple);
    }

    asio::awaitable<error_code> write_all(asio::const_buffer bytes) {
        if (auto* t = tls()) {
            auto [ec, n] = co_await asio::async_write(*t, bytes, use_tuple);
            co_return ec;
        }
        auto [ec, n] = co_await asio::async_write(tcp(), bytes, use_tuple);
        co_return ec;
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
        stack.push_back(std::move(c));
    }

    std::vector<tcp::endpoint> allowed(std::vector<tcp::endpoint> endpoints) const {
        if (config.refuse_private_addresses)
            std::erase_if(endpoints, [](const tcp::endpoint& e) { return is_refused_address(e.address()); });
        return endpoints;
    }

    /// The endpoints to try for `t`, after the address policy: from host_overrides, the cache, or DNS
    /// (cached for the crawl: every connection to one host needs the same answer).
    asio::awaitable<std::pair<error_code, std::vector<tcp::endpoint>>>
    endpoints_for(const request_target& t, clock_type::time_point deadline) {
        using answer = std::pair<error_code, std::vector<tcp::endpoint>>;
        if (auto forced = config.host_overrides.find(t.host); forced != config.host_overrides.end()) {
            error_code ec;
            const auto address = asio::ip::make_address(forced->second, ec);
            if (ec)
                co_return answer{ec, {}};
            const auto port = static_cast<unsigned short>(std::stoul(t.port));
            co_return answer{{}, allowed({tcp::endpoint{address, port}})};
        }
        const std::string cache_key = t.host + ":" + t.port;
        if (auto cached = resolved.find(cache_key); cached != resolved.end())
            co_return answer{{}, cached->second};
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
            co_return answer{error::connect_timeout, {}};
        if (ec)
            co_return answer{ec, {}};
        std::vector<tcp::endpoint> endpoints;
        for (const auto& entry : results)
            endpoints.push_back(entry.endpoint());
        endpoints = allowed(std::move(endpoints));
        resolved.emplace(cache_key, endpoints);
        co_return answer{{}, std::move(endpoints)};
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

    struct connect_outcome {
        error_code error;
        std::string detail;
        std::unique_ptr<connection> conn;
    };

    /// Resolves, connects and (for https) shakes hands, all within connect_timeout.
    asio::awaitable<connect_outcome> connect(const request_target& t) {
        const auto deadline = clock_type::now() + config.connect_timeout;
        auto [resolve_ec, endpoints] = co_await endpoints_for(t, deadline);
        if (resolve_ec)
            co_return connect_outcome{resolve_ec, {}, nullptr};
        if (endpoints.empty())
            co_return connect_outcome{error::forbidden_address, {}, nullptr}; // all refused, nothing tried
        auto c = t.https ? std::make_unique<connection>(executor, tls_context)
                         : std::make_unique<connection>(executor);
        error_code ec;
        for (const auto& endpoint : endpoints) {
            c->tcp().expires_at(deadline);
            std::tie(ec) = co_await c->tcp().async_connect(endpoint, use_tuple);
            if (!ec) {
                c->remote_ip = endpoint.address().to_string();
                break;
            }
            c->tcp().close();
            if (ec == beast::error::timeout)
                break;
        }
        if (ec == beast::error::timeout)
            co_return connect_outcome{error::connect_timeout, {}, nullptr};
        if (ec)
            co_return connect_outcome{ec, {}, nullptr};
        ++stats.connections_opened;
        c->tcp().socket().set_option(tcp::no_delay{true});
        if (auto* tls = c->tls()) {
            prepare_tls(*tls, t);
            c->tcp().expires_at(deadline);
            auto [handshake_ec] = co_await tls->async_handshake(ssl::stream_base::client, use_tuple);
            if (handshake_ec) {
                auto [mapped, detail] = classify_handshake_error(*tls, handshake_ec);
                c->tcp().close();
                co_return connect_outcome{mapped, std::move(detail), nullptr};
            }
        }
        co_return connect_outcome{{}, {}, std::move(c)};
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

    /// One request on one connection. Sets `retry_fresh` when the failure may be a closed pooled connection,
    /// and `reusable` when the connection can serve another request.
    asio::awaitable<fetch_result> exchange(connection& c, const request_target& t,
                                           const fetch_options& options, bool& retry_fresh, bool& reusable) {
        fetch_result result;
        result.remote_ip = c.remote_ip;
        std::string request = request_bytes(t);
        c.tcp().expires_after(config.request_timeout);
        result.started = std::chrono::system_clock::now();
        const error_code write_ec = co_await c.write_all(asio::buffer(request));
        if (options.capture)
            result.raw_request = std::move(request);
        if (write_ec) {
            retry_fresh = is_stale_connection_failure(write_ec);
            result.error = classify_read_error(write_ec);
            co_return result;
        }

        // Interim answers (100 Continue, 103 Early Hints) precede the real one on the same connection: skip
        // them, or the real response would stay in the buffer and be taken for the next URL's.
        std::optional<response_parser> reading;
        error_code read_ec;
        bool at_eof = false;
        for (int interim = 0;; ++interim) {
            reading.emplace();
            auto& parser = *reading;
            parser.header_limit(config.max_header_bytes);
            auto& sink = parser.get().body();
            if (options.truncate_body_at) {
                // The cut counts decoded bytes; the wire is not limited, or a Content-Length over the cut
                // would fail before the first byte.
                parser.body_limit(boost::none);
                sink.limit = *options.truncate_body_at;
                sink.cut_at_limit = true;
            } else {
                parser.body_limit(config.max_body_bytes); // as received; the decoder limits the decoded size
                sink.limit = config.max_body_bytes;
            }
            result.raw_response.clear();
            result.wire_bytes = 0;
            result.raw_head_bytes = 0;
            read_ec = co_await read_message(c, parser, options.capture, result, at_eof);
            const auto status = parser.get().result_int();
            if (read_ec || status < 100 || status >= 200 || status == 101 || interim == max_interim_responses)
                break;
        }
        auto& parser = *reading;
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
            co_return result;
        }
        result.body = std::move(sink.decoded);
        reusable = !result.truncated && !at_eof && parser.keep_alive();
        co_return result;
    }

    /// Feeds the parser from the connection's buffer, reading more when it runs dry, until one message is
    /// complete. Consumed bytes are counted (and copied when capturing); unconsumed ones stay in the buffer.
    static asio::awaitable<error_code> read_message(connection& c, response_parser& parser, bool capture,
                                                    fetch_result& result, bool& at_eof) {
        auto& buffer = c.buffer;
        for (;;) {
            if (buffer.size() > 0) {
                error_code ec;
                const bool head_was_done = parser.is_header_done();
                const std::size_t used = parser.put(buffer.data(), ec);
                if (capture)
                    result.raw_response.append(static_cast<const char*>(buffer.data().data()), used);
                result.wire_bytes += used;
                buffer.consume(used);
                if (!head_was_done && parser.is_header_done())
                    result.raw_head_bytes = result.wire_bytes; // put() stops right after the head
                if (ec && ec != http::error::need_more)
                    co_return ec;
                if (parser.is_done())
                    co_return error_code{};
                if (!ec && used > 0 && buffer.size() > 0)
                    continue;
            }
            if (at_eof) {
                // Close-delimited bodies end here; anything else is cut short (partial_message). A TLS peer
                // that closes without close_notify is treated like a plain close: HTTP framing, not TLS,
                // says whether the message is whole (a close-delimited body is accepted as browsers do).
                if (!parser.got_some())
                    co_return http::error::end_of_stream;
                error_code ec;
                parser.put_eof(ec);
                co_return ec;
            }
            auto [ec, n] = co_await c.read_some(buffer.prepare(read_chunk));
            buffer.commit(n);
            if (ec == asio::error::eof || ec == ssl::error::stream_truncated)
                at_eof = true;
            else if (ec)
                co_return ec;
        }
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
    fetch_result result;
    if (url.scheme_id() != boost::urls::scheme::http && url.scheme_id() != boost::urls::scheme::https) {
        result.error = error::unsupported_scheme;
        co_return result;
    }
    const request_target target = make_target(url);
    for (;;) {
        auto conn = impl_->take_idle(target.origin_key);
        const bool reused = conn != nullptr;
        if (reused) {
            ++impl_->stats.connections_reused;
        } else {
            auto outcome = co_await impl_->connect(target);
            if (outcome.error) {
                result = fetch_result{};
                result.error = outcome.error;
                result.error_detail = std::move(outcome.detail);
                co_return result;
            }
            conn = std::move(outcome.conn);
        }
        bool retry_fresh = false;
        bool reusable = false;
        result = co_await impl_->exchange(*conn, target, options, retry_fresh, reusable);
        if (!result.error) {
            if (reusable)
                impl_->give_back(target.origin_key, std::move(conn));
            else
                retire(std::move(conn));
            co_return result;
        }
        if (!(reused && retry_fresh))
            co_return result;
        // The URL did nothing wrong: a pooled connection had gone stale. Send again on a fresh one.
        ++impl_->stats.stale_retries;
    }
}

} // namespace asiocrawl::detail
