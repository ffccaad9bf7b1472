// The HTTP/1.1 client. A connection is a TCP socket, with an OpenSSL session over its descriptor for https;
// both are driven the same way: non-blocking reads and writes, and an async_wait on the socket whenever
// they would block, under a deadline kept by the fetcher (one timer for all connections). Nothing Beast or
// Asio buffers sits between OpenSSL and the socket, so a TLS connection costs OpenSSL's state and no more:
// with SSL_MODE_RELEASE_BUFFERS its record buffers exist only while bytes are in them.
//
// Reading drives Beast's parser by hand from the connection's buffer: that is what lets us copy the response
// bytes exactly (capture), count them, stop after a cut (truncate_body_at), and leave the bytes of a next
// pipelined response in the buffer. The body goes through a decoding Body type straight into the
// content_decoder, so a compressed body is inflated as it arrives and never beyond the limit. A fetch waiting
// for its answer holds no buffer, parser or result (see impl::run): what thousands of waiting fetches cost is
// their sockets and small frames.
//
// Names are resolved by dns_resolver (c-ares on this executor). A proxy, when one applies, is connected to
// instead of the URL's host: an https URL then goes through a CONNECT tunnel and TLS is verified end to end
// against the URL's host; an http URL is requested in absolute form.

#include "http/fetcher.hpp"

#include "http/content_type.hpp"
#include "http/cookie_jar.hpp"
#include "http/decoder.hpp"
#include "http/dns_resolver.hpp"
#include "http/fetch_settings.hpp"
#include "http/rate_limiter.hpp"
#include "http/tls_certificate.hpp"
#include "policy/address_policy.hpp"
#include "url/url_host.hpp"
#include "util/ascii.hpp"

#include <asiocrawl/error.hpp>
#include <asiocrawl/version.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_allocator.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/buffers_range.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/intrusive/set.hpp>
#include <boost/url/parse.hpp>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <fstream>
#include <list>
#include <sstream>
#include <unordered_map>
#include <vector>

namespace asiocrawl::detail {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using boost::system::error_code;
using tcp = asio::ip::tcp;
using clock_type = std::chrono::steady_clock;
namespace bi = boost::intrusive;

namespace {

/// Operations awaited directly: unlike use_awaitable, no coroutine frame of their own.
constexpr auto tuple_deferred = asio::as_tuple(asio::deferred);

/// Plain operator new: Asio treats std::allocator as "use my per-thread cache of recycled blocks".
template <class T>
struct exact_allocator {
    using value_type = T;
    exact_allocator() noexcept = default;
    template <class U>
    exact_allocator(const exact_allocator<U>&) noexcept {}
    T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T))); }
    void deallocate(T* p, std::size_t) noexcept { ::operator delete(p); }
    friend bool operator==(const exact_allocator&, const exact_allocator&) noexcept { return true; }
};

/// An operation awaited like `op(tuple_deferred)`, whose state is allocated at its exact size rather than
/// from Asio's per-thread cache of recycled blocks: a recycled block is whatever an earlier operation needed,
/// and the operations that every fetch of a burst holds at once (a connect, the wait for an answer) would
/// then keep that much each. `start(handler)` starts the operation.
template <class Signature, class Start>
auto exactly_allocated(Start start) {
    return asio::async_initiate<const decltype(tuple_deferred)&, Signature>(
        [start](auto handler) mutable {
            start(asio::bind_allocator(exact_allocator<void>(), std::move(handler)));
        },
        tuple_deferred);
}

/// More interim (1xx) responses than this before the final one is a broken or hostile server.
constexpr int max_interim_responses = 8;
/// Bytes read from the connection at a time.
constexpr std::size_t read_chunk = 16 * 1024;
/// Largest answer to CONNECT a proxy may send (its head; a tunnel answer has no body).
constexpr std::size_t max_tunnel_head = 16 * 1024;
/// Longest chunk-size line, extensions included, that we buffer (Go's net/http allows 4,096 bytes too).
/// Extensions mean nothing to us; a line longer than this is a broken or hostile server.
constexpr std::size_t max_chunk_line = 4 * 1024;
/// While every descriptor of the process is in use, a connect waits this long at first before it tries
/// again, doubling up to the most below.
constexpr std::chrono::milliseconds first_descriptor_wait{5};
constexpr std::chrono::milliseconds longest_descriptor_wait{200};

struct ssl_free {
    void operator()(SSL* s) const noexcept { SSL_free(s); }
};

/// OpenSSL's socket BIO writes with write(2), which raises SIGPIPE on a connection the peer reset; a library
/// must not touch the process's signal dispositions, so this BIO sends with MSG_NOSIGNAL. The descriptor
/// belongs to the Asio socket (BIO_NOCLOSE).
int bio_send(BIO* bio, const char* data, int length) {
    BIO_clear_retry_flags(bio);
    const ssize_t n = ::send(static_cast<int>(BIO_get_fd(bio, nullptr)), data,
                             static_cast<std::size_t>(length), MSG_NOSIGNAL);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        BIO_set_retry_write(bio);
    return static_cast<int>(n);
}

int bio_receive(BIO* bio, char* out, int length) {
    BIO_clear_retry_flags(bio);
    const ssize_t n =
        ::recv(static_cast<int>(BIO_get_fd(bio, nullptr)), out, static_cast<std::size_t>(length), 0);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        BIO_set_retry_read(bio);
    return static_cast<int>(n);
}

const BIO_METHOD* nosignal_socket_method() {
    static BIO_METHOD* method = [] {
        BIO_METHOD* m = BIO_meth_new(BIO_TYPE_SOCKET, "asiocrawl socket");
        const BIO_METHOD* socket = BIO_s_socket();
        BIO_meth_set_write(m, bio_send);
        BIO_meth_set_read(m, bio_receive);
        BIO_meth_set_ctrl(m, BIO_meth_get_ctrl(socket));
        BIO_meth_set_create(m, BIO_meth_get_create(socket));
        BIO_meth_set_destroy(m, BIO_meth_get_destroy(socket));
        return m;
    }();
    return method;
}

/// A keep-alive connection and the read buffer that belongs to it (bytes past one response stay with it). The
/// buffer holds storage only while bytes are being parsed: a connection waiting for an answer, or idle in the
/// pool, has none.
struct connection {
    /// `live` counts the connections that exist (each may hold a descriptor).
    connection(const asio::any_io_executor& executor, std::size_t& live)
        : socket(executor)
        , live_count(live) {
        ++live_count;
    }
    ~connection() { --live_count; }
    connection(const connection&) = delete;
    connection& operator=(const connection&) = delete;

    tcp::socket socket;
    std::size_t& live_count;
    /// The TLS session over the socket's descriptor, for https.
    std::unique_ptr<SSL, ssl_free> tls;
    beast::flat_buffer buffer;
    /// When a connection idle in the pool is no longer used: our idle_timeout, or sooner when the server
    /// said how long it keeps idle connections (Keep-Alive: timeout=N).
    clock_type::time_point reuse_until{};
    std::string remote_ip;
    /// When the request in progress was sent (wall clock, for archive records).
    std::chrono::system_clock::time_point request_started{};
    /// When the connect, handshake or request in progress times out.
    clock_type::time_point deadline{};
    /// Links the connection into the fetcher's deadline set while it waits on its socket (unlinks itself when
    /// destroyed).
    bi::set_member_hook<bi::link_mode<bi::auto_unlink>> waiting_link;
    /// The proxy an http request goes through: the request then names the whole URL (absolute form) and
    /// carries the proxy's credentials. Null for direct connections and tunnels.
    const proxy_endpoint* http_proxy = nullptr;
    /// Set when the deadline passed during a wait (the socket is then closed).
    bool timed_out = false;
    /// TLS asked to write before it can read on (a renegotiation or key update).
    bool read_wants_write = false;

    /// Bytes that have arrived, read without waiting; 0 when there are none yet. `ec` is eof when the peer
    /// has closed.
    std::size_t read_now(asio::mutable_buffer into, error_code& ec) {
        ec = {};
        read_wants_write = false;
        if (!tls) {
            const std::size_t n = socket.read_some(into, ec);
            if (ec == asio::error::would_block || ec == asio::error::try_again)
                ec = {};
            return n;
        }
        ERR_clear_error();
        const int n = SSL_read(tls.get(), into.data(), static_cast<int>(into.size()));
        if (n > 0)
            return static_cast<std::size_t>(n);
        ec = tls_error(SSL_get_error(tls.get(), n), read_wants_write, false);
        return 0;
    }

    /// Writes what the socket takes now; 0 when it takes nothing yet. `wants_read`: TLS must read first.
    std::size_t write_now(asio::const_buffer bytes, error_code& ec, bool& wants_read) {
        ec = {};
        wants_read = false;
        if (!tls) {
            const std::size_t n = socket.write_some(bytes, ec);
            if (ec == asio::error::would_block || ec == asio::error::try_again)
                ec = {};
            return n;
        }
        ERR_clear_error();
        const int n = SSL_write(tls.get(), bytes.data(), static_cast<int>(bytes.size()));
        if (n > 0)
            return static_cast<std::size_t>(n);
        bool wants_write = false;
        ec = tls_error(SSL_get_error(tls.get(), n), wants_write, true);
        wants_read = !ec && !wants_write;
        return 0;
    }

    /// Decrypted or received bytes OpenSSL holds that the socket will not signal again.
    bool has_pending() const noexcept { return tls && SSL_has_pending(tls.get()) == 1; }

    /// True when nothing has arrived on an idle connection since its last response: no byte, no close. We
    /// never pipeline, so any byte that arrives while a connection idles answers nothing we asked, and would
    /// be read as the next request's response (response queue poisoning). TLS records that carry no data (a
    /// session ticket, a key update) are taken in and are no reason to give the connection up.
    bool is_quiet() {
        if (!socket.is_open() || buffer.size() != 0 || has_pending())
            return false;
        const int fd = static_cast<int>(socket.native_handle());
        for (int records = 0; records < 8; ++records) {
            char byte = 0;
            const ssize_t n = ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
            if (n < 0)
                return errno == EAGAIN || errno == EWOULDBLOCK;
            if (n == 0 || !tls)
                return false; // closed by the peer, or bytes nobody asked for
            ERR_clear_error();
            const int rc = SSL_read(tls.get(), &byte, 1);
            if (rc > 0)
                return false; // application data
            bool wants_write = false;
            const error_code ec = tls_error(SSL_get_error(tls.get(), rc), wants_write, false);
            if (ec || wants_write)
                return false;
            if (has_pending())
                return false;
        }
        return false;
    }

    /// Before a wait: OpenSSL's record buffers go unless they hold bytes. SSL_MODE_RELEASE_BUFFERS alone
    /// keeps the read buffer after a handshake and after records that carry no data (session tickets), and
    /// that is 16 KiB a waiting connection.
    void release_tls_buffers() noexcept {
        if (tls)
            SSL_free_buffers(tls.get());
    }

    /// An OpenSSL result as an error: none when it only has to wait (`wants_write` says for what).
    error_code tls_error(int ssl_error, bool& wants_write, bool writing) {
        switch (ssl_error) {
        case SSL_ERROR_WANT_READ:
            return {};
        case SSL_ERROR_WANT_WRITE:
            wants_write = true;
            return {};
        case SSL_ERROR_ZERO_RETURN:
            return asio::error::eof; // close_notify, or (SSL_OP_IGNORE_UNEXPECTED_EOF) a plain close
        case SSL_ERROR_SYSCALL:
            if (ERR_peek_error() == 0 && errno == 0)
                return asio::error::eof;
            return error_code(errno != 0 ? errno : EIO, asio::error::get_system_category());
        default:
            // Writing after the peer's close_notify fails in OpenSSL's terms; it is a closed connection.
            if (writing && (SSL_get_shutdown(tls.get()) & SSL_RECEIVED_SHUTDOWN))
                return asio::error::eof;
            return error_code(static_cast<int>(ERR_get_error()), asio::error::get_ssl_category());
        }
    }
};

struct earlier_deadline {
    bool operator()(const connection& a, const connection& b) const noexcept {
        return a.deadline < b.deadline;
    }
};
/// Connections waiting on their socket (connecting, shaking hands, waiting for or reading an answer),
/// soonest deadline first.
using deadline_set =
    bi::multiset<connection,
                 bi::member_hook<connection, decltype(connection::waiting_link), &connection::waiting_link>,
                 bi::compare<earlier_deadline>, bi::constant_time_size<false>>;

/// Ends a connection that is in a clean state. A TLS peer gets a close_notify when the socket takes it at
/// once (RFC 8446 6.1 does not ask us to wait for theirs), so closing never delays anything.
void retire(std::unique_ptr<connection> c) {
    if (c->tls && c->socket.is_open()) {
        ERR_clear_error();
        SSL_shutdown(c->tls.get());
        ERR_clear_error();
    }
    error_code ignored;
    c->socket.close(ignored);
}

/// Where a connection goes, from the URL: the host as on the wire (percent-decoded, IPv6 without brackets).
struct request_target {
    bool https = false;
    std::string host;
    std::string port;
};

/// The connection target of an http(s) URL string.
std::optional<request_target> target_of(std::string_view url) {
    const auto parts = slice_url(url);
    if (!parts || parts->host.empty())
        return std::nullopt;
    request_target t;
    t.https = ascii::iequals(parts->scheme, "https");
    t.host = host_for_wire(parts->host);
    t.port = parts->port && !parts->port->empty() ? std::string(*parts->port) : (t.https ? "443" : "80");
    return t;
}

/// The pool key (scheme://host:port) of an http or https URL; empty for anything else.
std::string pool_key(std::string_view url) {
    const auto parts = slice_url(url);
    if (!parts || !(ascii::iequals(parts->scheme, "http") || ascii::iequals(parts->scheme, "https")))
        return {};
    const std::string_view port = parts->port && !parts->port->empty()
                                      ? *parts->port
                                      : (ascii::iequals(parts->scheme, "https") ? "443" : "80");
    std::string key;
    key.reserve(parts->scheme.size() + 4 + parts->host.size() + port.size());
    key.append(parts->scheme).append("://").append(parts->host).append(":").append(port);
    return key;
}

bool is_loopback_host(const std::string& host) {
    error_code ec;
    const auto address = asio::ip::make_address(host, ec);
    if (ec)
        return host == "localhost" || host.ends_with(".localhost");
    return address.is_loopback() ||
           (address.is_v6() && address.to_v6().is_v4_mapped() &&
            asio::ip::make_address_v4(asio::ip::v4_mapped, address.to_v6()).is_loopback());
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
           ec == asio::error::broken_pipe || ec == asio::error::eof || ec == asio::error::connection_aborted;
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
    /// A transfer coding other than chunked (RFC 9112 7: gzip, deflate), undone before the content coding;
    /// its output passes through `transfer_decoded` one piece at a time.
    std::optional<content_decoder> transfer_decoder;
    std::string transfer_decoded;
    /// Why the head's codings were refused, for the record.
    std::string problem;
};

/// The transfer codings of a response besides a final chunked (which the parser undoes), from every
/// Transfer-Encoding field in order. bad_response when they cannot be undone: chunked anywhere but last or
/// more than once is a broken message (RFC 9112 6.1), and we undo at most one other coding, of those we know
/// (a transfer coding is framing: without it the message cannot even be delimited).
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
    // "identity" is no longer a transfer coding (RFC 7230 dropped it).
    if (coding == content_coding::unsupported || coding == content_coding::identity) {
        problem = "transfer coding \"" + without_controls(std::string(codings.front().substr(0, 64))) +
                  (codings.size() > 1 ? "\" and more" : "\"") + " not supported";
        return error::bad_response;
    }
    return {};
}

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
            content_coding transfer = content_coding::identity;
            ec = transfer_coding_of(head_, transfer, sink_.problem);
            if (ec)
                return;
            if (transfer != content_coding::identity) {
                // What the transfer coding hides is itself encoded (or not): bounded like the body, with room
                // for a content coding that makes incompressible bytes a little larger.
                sink_.transfer_decoder.emplace(transfer, sink_.limit + sink_.limit / 8 + read_chunk);
            }
            sink_.decoder.emplace(parse_content_coding(head_[http::field::content_encoding]), sink_.limit);
        }

        template <class ConstBufferSequence>
        std::size_t put(const ConstBufferSequence& buffers, error_code& ec) {
            ec = {};
            std::size_t taken = 0;
            for (const auto buffer : beast::buffers_range_ref(buffers)) {
                const std::string_view bytes{static_cast<const char*>(buffer.data()), buffer.size()};
                taken += buffer.size();
                if (sink_.transfer_decoder) {
                    sink_.transfer_decoded.clear();
                    const auto status = sink_.transfer_decoder->feed(bytes, sink_.transfer_decoded);
                    // What came out is decoded first: the body's own limit (or cut) applies before this one.
                    if ((ec = decode(sink_.transfer_decoded)))
                        return taken;
                    if (status != content_decoder::status::ok) {
                        ec = status == content_decoder::status::corrupt ? error_code(error::decoding_failed)
                                                                        : error_code(error::body_too_large);
                        return taken;
                    }
                    continue;
                }
                if ((ec = decode(bytes)))
                    return taken;
            }
            if (sink_.transfer_decoder)
                std::string().swap(sink_.transfer_decoded);
            return taken;
        }

        void finish(error_code& ec) {
            ec = {};
            if (sink_.transfer_decoder) {
                if (sink_.transfer_decoder->finish() != content_decoder::status::ok) {
                    ec = error::decoding_failed;
                    return;
                }
            }
            if (sink_.decoder && sink_.decoder->finish() != content_decoder::status::ok)
                ec = error::decoding_failed;
        }

    private:
        error_code decode(std::string_view bytes) {
            const auto status = sink_.decoder->feed(bytes, sink_.decoded);
            if (status == content_decoder::status::limit_exceeded) {
                sink_.was_cut = sink_.cut_at_limit;
                return error::body_too_large; // ends parsing; a cut is then turned back into success
            }
            if (status == content_decoder::status::corrupt)
                return error::decoding_failed;
            return {};
        }

        const http::fields& head_;
        value_type& sink_;
    };
};

using response_parser = http::response_parser<decoding_body>;

/// Refuses a chunk-size line whose extensions are longer than max_chunk_line even when it arrived whole
/// (the fetcher bounds a line still arriving itself: Beast buffers it without limit). The parser keeps a
/// reference to it: one for all parsers.
struct chunk_extension_check {
    void operator()(std::uint64_t, std::string_view extensions, error_code& ec) const {
        if (extensions.size() > max_chunk_line)
            ec = http::error::bad_chunk_extension;
    }
};
chunk_extension_check chunk_extensions_checked;

} // namespace

std::optional<url_slices> slice_url(std::string_view url) noexcept {
    const auto colon = url.find(':');
    if (colon == std::string_view::npos || url.substr(colon + 1, 2) != "//")
        return std::nullopt;
    url_slices parts;
    parts.scheme = url.substr(0, colon);
    auto rest = url.substr(colon + 3);
    const auto authority_end = rest.find_first_of("/?#");
    auto authority = rest.substr(0, authority_end);
    rest = authority_end == std::string_view::npos ? std::string_view{} : rest.substr(authority_end);
    if (const auto at = authority.rfind('@'); at != std::string_view::npos)
        authority.remove_prefix(at + 1);
    parts.host_and_port = authority;
    std::size_t port_colon = std::string_view::npos;
    if (!authority.empty() && authority.front() == '[') {
        const auto close = authority.find(']');
        if (close == std::string_view::npos)
            return std::nullopt;
        parts.host = authority.substr(1, close - 1);
        if (close + 1 < authority.size() && authority[close + 1] == ':')
            port_colon = close + 1;
    } else {
        port_colon = authority.find(':');
        parts.host = authority.substr(0, port_colon);
    }
    if (port_colon != std::string_view::npos)
        parts.port = authority.substr(port_colon + 1);
    rest = rest.substr(0, rest.find('#'));
    const auto question = rest.find('?');
    parts.path = rest.substr(0, question);
    if (question != std::string_view::npos)
        parts.query = rest.substr(question + 1);
    return parts;
}

bool is_retryable(const error_code& ec) noexcept {
    return ec == error::connect_timeout || ec == error::request_timeout ||
           ec == asio::error::connection_refused || ec == asio::error::connection_reset ||
           ec == asio::error::connection_aborted || ec == asio::error::broken_pipe ||
           ec == asio::error::eof || ec == asio::error::timed_out || ec == asio::error::network_unreachable ||
           ec == asio::error::host_unreachable || ec == asio::error::network_down ||
           ec == asio::error::host_not_found_try_again || ec == http::error::end_of_stream ||
           ec == asio::error::no_descriptors || ec == asio::error::no_buffer_space ||
           ec == http::error::partial_message;
}

namespace {

ssl::context make_tls_context(const tls_config& config) {
    ssl::context context{ssl::context::tls_client};
    context.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                        ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
    SSL_CTX* native = context.native_handle();
    SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION);
    // Record buffers only while they hold bytes: an idle or waiting connection keeps none (about 34 KiB
    // otherwise). Partial writes and a moving write buffer suit the non-blocking writes of connection.
    SSL_CTX_set_mode(native, SSL_MODE_RELEASE_BUFFERS | SSL_MODE_ENABLE_PARTIAL_WRITE |
                                 SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    // A peer that closes without close_notify is a plain close: HTTP framing says whether the message is
    // whole, as browsers decide.
    SSL_CTX_set_options(native, SSL_OP_IGNORE_UNEXPECTED_EOF);
    if (config.insecure) {
        context.set_verify_mode(ssl::verify_none);
        return context;
    }
    // The system's trust store is loaded with the first https connection (trusted_roots()): parsing the
    // bundle costs tens of milliseconds, wasted on a crawl that never meets TLS.
    if (!config.ca_file.empty())
        context.load_verify_file(config.ca_file); // throws: a CA file that cannot be read is a config error
    context.set_verify_mode(ssl::verify_peer);
    return context;
}

std::optional<proxy_endpoint> proxy_setting(const std::string& value, std::string_view key) {
    if (value.empty())
        return std::nullopt;
    std::string why;
    auto proxy = parse_proxy(value, &why);
    if (!proxy)
        throw std::invalid_argument(std::string(key) + ": " + why);
    return proxy;
}

} // namespace

struct fetcher::impl {
    impl(asio::any_io_executor ex, fetch_config cfg, std::size_t max_idle)
        : executor(std::move(ex))
        , config(std::move(cfg))
        , max_idle_per_origin(max_idle)
        , tls_context(make_tls_context(config.tls))
        , resolver(executor, config.dns)
        , deadline_timer(executor) {
        if (config.user_agent.empty())
            config.user_agent = default_user_agent(config.contact_url);
        config.user_agent = without_controls(std::move(config.user_agent));
        prepare_request_fields();
        prepare_proxies();
        if (config.limit_rate > 0)
            limiter.emplace(config.limit_rate, std::max<std::uint64_t>(read_chunk, config.limit_rate / 10));
        if (config.cookies.enabled) {
            jar.emplace();
            if (!config.cookies.load_file.empty())
                load_cookies();
        }
    }

    asio::any_io_executor executor;
    fetch_config config;
    std::size_t max_idle_per_origin;
    /// fetch_config::limit_rate, shared by every connection.
    std::optional<rate_limiter> limiter;
    ssl::context tls_context;
    bool system_roots_loaded = false;
    dns_resolver resolver;
    /// Connections that exist, pooled or in use (each holds a descriptor once open). Declared before
    /// the pool, whose connections count themselves out when it is destroyed.
    std::size_t live_connections = 0;
    std::unordered_map<std::string, std::vector<std::unique_ptr<connection>>> idle;
    fetcher_stats stats;

    // Request fields fixed for the crawl, in the order they are sent.
    std::string fixed_fields; // User-Agent, Accept, Accept-Encoding and --header fields, each ending in CRLF
    std::string user_cookie;  // a Cookie given with --header, sent before the jar's cookies
    std::unordered_map<std::string, std::string> authorization_by_origin; // pool key -> "Basic ..."
    std::optional<proxy_endpoint> http_via, https_via;
    std::optional<cookie_jar> jar;

    // Every connection waits on its socket itself (async_connect, async_wait), not through a stream with
    // timers of its own. The deadlines of those waits (connect_timeout, request_timeout) are kept here,
    // soonest first (O(log n) to add or remove), under one timer.
    deadline_set waiting;
    asio::steady_timer deadline_timer;
    clock_type::time_point deadline_timer_at = clock_type::time_point::max();
    std::shared_ptr<char> alive = std::make_shared<char>(); // the timer's handler may outlive us

    void prepare_request_fields() {
        bool own_agent = true, own_accept = true;
        std::string extra;
        for (const auto& text : config.headers) {
            auto parsed = parse_header_option(text);
            if (!parsed.field)
                throw std::invalid_argument("fetch.headers: " + parsed.problem);
            const auto& [name, value] = *parsed.field;
            if (ascii::iequals(name, "user-agent"))
                own_agent = false;
            if (ascii::iequals(name, "accept"))
                own_accept = false;
            if (ascii::iequals(name, "cookie")) {
                user_cookie += (user_cookie.empty() ? "" : "; ") + value;
                continue;
            }
            if (ascii::iequals(name, "accept-encoding"))
                continue; // decoding is ours: fetch.compression decides what we ask for
            extra.append(name).append(": ").append(value).append("\r\n");
        }
        if (own_agent)
            fixed_fields.append("User-Agent: ").append(config.user_agent).append("\r\n");
        if (own_accept)
            fixed_fields.append("Accept: text/html,application/xhtml+xml,*/*;q=0.8\r\n");
        fixed_fields.append("Accept-Encoding: ").append(config.compression ? "gzip, deflate" : "identity");
        fixed_fields.append("\r\n").append(extra);
        for (const auto& [origin, userinfo] : config.credentials) {
            auto key = origin_key(origin);
            if (!key)
                throw std::invalid_argument("fetch.credentials: \"" + origin + "\" is not an http(s) origin");
            authorization_by_origin[*key] = basic_authorization(userinfo);
        }
    }

    void prepare_proxies() {
        auto all = proxy_setting(config.proxy, "fetch.proxy");
        http_via = proxy_setting(config.http_proxy, "fetch.http_proxy");
        https_via = proxy_setting(config.https_proxy, "fetch.https_proxy");
        if (!http_via)
            http_via = all;
        if (!https_via)
            https_via = all;
    }

    /// Read once, before the crawl: never on the event loop while fetches are waiting.
    void load_cookies() {
        std::ifstream file(config.cookies.load_file, std::ios::binary);
        if (!file)
            throw std::invalid_argument("fetch.cookies.load_file: cannot read " + config.cookies.load_file);
        std::ostringstream text;
        text << file.rdbuf();
        jar->load_netscape(text.str(), std::chrono::system_clock::now());
    }

    /// The proxy `t` goes through, or null: none configured, a host_overrides host, one in no_proxy, or a
    /// loopback host (a proxy's own loopback is not ours).
    const proxy_endpoint* route_for(const request_target& t) const {
        const auto& via = t.https ? https_via : http_via;
        if (!via || config.host_overrides.contains(t.host) ||
            bypasses_proxy(config.no_proxy, t.host, t.port) || is_loopback_host(t.host))
            return nullptr;
        return &*via;
    }

    // ---- deadlines ----

    void watch(connection& c) {
        c.timed_out = false;
        waiting.insert(c);
        if (c.deadline < deadline_timer_at)
            arm_deadline_timer(c.deadline);
    }

    /// The wait is over. With none left the timer stops, so that an idle fetcher keeps no work pending.
    void unwatch(connection& c) {
        c.waiting_link.unlink();
        if (waiting.empty() && deadline_timer_at != clock_type::time_point::max()) {
            deadline_timer_at = clock_type::time_point::max();
            deadline_timer.cancel();
        }
    }

    void arm_deadline_timer(clock_type::time_point at) {
        deadline_timer_at = at;
        deadline_timer.expires_at(at); // a wait armed for a later time completes with operation_aborted
        deadline_timer.async_wait([this, alive = std::weak_ptr<char>(alive)](error_code ec) {
            if (!ec && !alive.expired())
                expire_waits();
        });
    }

    /// Ends the waits whose deadline has passed: the socket is closed, and the wait completes with timed_out
    /// set. An OpenSSL session over that descriptor is not used again.
    void expire_waits() {
        deadline_timer_at = clock_type::time_point::max();
        const auto now = clock_type::now();
        while (!waiting.empty() && waiting.begin()->deadline <= now) {
            auto& c = *waiting.begin();
            waiting.erase(waiting.begin());
            c.timed_out = true;
            error_code ignored;
            c.socket.close(ignored);
        }
        if (!waiting.empty())
            arm_deadline_timer(waiting.begin()->deadline);
    }

    /// Waits until `c`'s socket is ready for `what`, by c.deadline (beast::error::timeout after it).
    asio::awaitable<error_code> wait_ready(connection& c, tcp::socket::wait_type what) {
        c.release_tls_buffers();
        watch(c);
        auto [ec] = co_await exactly_allocated<void(error_code)>(
            [&c, what](auto handler) { c.socket.async_wait(what, std::move(handler)); });
        unwatch(c);
        if (c.timed_out)
            ec = beast::error::timeout;
        co_return ec;
    }

    // ---- the pool ----

    /// A pooled connection that is still fresh enough to try and quiet (connection::is_quiet), or nullptr.
    std::unique_ptr<connection> take_idle(const std::string& origin_key) {
        auto it = idle.find(origin_key);
        if (it == idle.end())
            return nullptr;
        auto& stack = it->second;
        while (!stack.empty()) {
            auto c = std::move(stack.back());
            stack.pop_back();
            if (clock_type::now() < c->reuse_until) {
                const bool quiet = c->is_quiet();
                c->release_tls_buffers();
                if (quiet)
                    return c;
                ++stats.idle_connections_dropped;
            }
            retire(std::move(c));
        }
        return nullptr;
    }

    /// Pools a connection after a cleanly framed keep-alive response, for at most our idle_timeout, and
    /// less when the server said it keeps idle connections for less (RFC 9112 9.3 leaves that to Keep-Alive:
    /// a connection the server is about to close would fail the next request). A server's `timeout=N` is
    /// shortened by a second (by half below two), so that the server is not closing it as we send.
    void give_back(const std::string& origin_key, std::unique_ptr<connection> c,
                   std::optional<std::chrono::seconds> server_keeps_idle) {
        auto& stack = idle[origin_key];
        clock_type::duration window = config.idle_timeout;
        if (server_keeps_idle) {
            const clock_type::duration hint = *server_keeps_idle;
            window =
                std::min(window, hint >= std::chrono::seconds{2} ? hint - std::chrono::seconds{1} : hint / 2);
        }
        if (stack.size() >= max_idle_per_origin || window <= clock_type::duration::zero()) {
            retire(std::move(c));
            return;
        }
        c->reuse_until = clock_type::now() + window;
        c->buffer.shrink_to_fit(); // empty (nothing unasked-for is pooled): the storage goes
        c->release_tls_buffers();
        stack.push_back(std::move(c));
    }

    // ---- connecting ----

    std::vector<tcp::endpoint> allowed(std::vector<tcp::endpoint> endpoints) const {
        if (config.refuse_private_addresses)
            std::erase_if(endpoints, [](const tcp::endpoint& e) { return is_refused_address(e.address()); });
        return endpoints;
    }

    static std::vector<tcp::endpoint> with_port(const std::vector<asio::ip::address>& addresses,
                                                const std::string& port) {
        const auto number = static_cast<unsigned short>(std::stoul(port));
        std::vector<tcp::endpoint> endpoints;
        endpoints.reserve(addresses.size());
        for (const auto& a : addresses)
            endpoints.emplace_back(a, number);
        return endpoints;
    }

    /// The endpoints to connect to for `t`, by `deadline`: the proxy's when `via` is set, else the host's
    /// from host_overrides or DNS, after the address policy (none left: forbidden_address). Through a proxy,
    /// the policy still checks the URL's host: it is resolved here too, and the proxy itself is trusted.
    asio::awaitable<error_code> endpoints_for(const request_target& t, const proxy_endpoint* via,
                                              clock_type::time_point deadline,
                                              std::vector<tcp::endpoint>& endpoints) {
        if (auto forced = config.host_overrides.find(t.host); forced != config.host_overrides.end()) {
            error_code ec;
            const auto address = asio::ip::make_address(forced->second, ec);
            if (ec)
                co_return ec;
            endpoints = allowed(with_port({address}, t.port));
            co_return endpoints.empty() ? error_code(error::forbidden_address) : error_code{};
        }
        std::vector<asio::ip::address> addresses;
        if (!via || config.refuse_private_addresses) {
            if (const error_code ec = co_await resolver.resolve(t.host, deadline, addresses))
                co_return ec;
            endpoints = allowed(with_port(addresses, t.port));
            if (endpoints.empty())
                co_return error::forbidden_address;
            if (!via)
                co_return error_code{};
        }
        if (const error_code ec = co_await resolver.resolve(via->host, deadline, addresses))
            co_return ec;
        endpoints = with_port(addresses, via->port);
        co_return error_code{};
    }

    /// The TLS context, with the system's trust store loaded once it is needed. A store that cannot be read
    /// leaves only tls.ca_file to trust: certificates then fail verification, as they should.
    SSL_CTX* trusted_roots() {
        if (!system_roots_loaded && !config.tls.insecure) {
            error_code ignored;
            tls_context.set_default_verify_paths(ignored);
            system_roots_loaded = true;
        }
        return tls_context.native_handle();
    }

    /// A result for an attempt that ends before any response.
    static std::unique_ptr<fetch_result> failure(error_code ec, std::string detail = {}) {
        auto r = std::make_unique<fetch_result>();
        r->error = ec;
        r->error_detail = std::move(detail);
        return r;
    }

    /// Why a handshake failed, in our terms, with words for the log.
    std::pair<error_code, std::string> classify_handshake_error(connection& c, int ssl_error,
                                                                const request_target& t) const {
        SSL* ssl = c.tls.get();
        const unsigned long reason = ERR_peek_error();
        const long verify = config.tls.insecure ? X509_V_OK : SSL_get_verify_result(ssl);
        if (verify != X509_V_OK || ERR_GET_REASON(reason) == SSL_R_CERTIFICATE_VERIFY_FAILED) {
            std::string detail =
                verify != X509_V_OK ? certificate_problem(ssl, verify, t.host) : std::string("verify failed");
            ERR_clear_error();
            return {error::certificate_invalid, detail};
        }
        // A peer that hangs up mid-handshake (overloaded, restarting) is the network's failure, worth another
        // attempt; one that answers something other than TLS fails in OpenSSL's own terms below.
        if (ssl_error == SSL_ERROR_ZERO_RETURN || (ssl_error == SSL_ERROR_SYSCALL && reason == 0)) {
            ERR_clear_error();
            if (errno != 0 && ssl_error == SSL_ERROR_SYSCALL && errno != EPIPE)
                return {error_code(errno, asio::error::get_system_category()), {}};
            return {asio::error::eof, {}};
        }
        char text[256] = "TLS error";
        if (reason != 0)
            ERR_error_string_n(reason, text, sizeof text);
        ERR_clear_error();
        return {error::tls_handshake_failed, text};
    }

    // ---- turns to shake hands (tls.max_handshakes) ----

    /// A connection waiting for a handshake turn: its timer (in its own frame) ends at its deadline, or when
    /// a turn is handed to it.
    struct handshake_waiter {
        asio::steady_timer* timer;
        bool granted = false;
    };
    std::size_t handshakes_in_progress = 0;
    std::list<handshake_waiter*> handshake_queue;

    /// Holds a handshake turn for as long as it lives; hands it to the next waiter, in order of arrival.
    struct handshake_turn {
        impl* owner = nullptr;
        handshake_turn() = default;
        explicit handshake_turn(impl& i)
            : owner(&i) {}
        handshake_turn(handshake_turn&& other) noexcept
            : owner(std::exchange(other.owner, nullptr)) {}
        handshake_turn& operator=(handshake_turn&&) = delete;
        ~handshake_turn() {
            if (!owner)
                return;
            if (owner->handshake_queue.empty()) {
                --owner->handshakes_in_progress;
                return;
            }
            auto* next = owner->handshake_queue.front();
            owner->handshake_queue.pop_front();
            next->granted = true;
            next->timer->cancel();
        }
    };

    /// A turn to shake hands by `deadline`; none (owner null) when the deadline passed or the wait was
    /// cancelled first.
    asio::awaitable<handshake_turn> take_handshake_turn(clock_type::time_point deadline) {
        if (config.tls.max_handshakes == 0) {
            co_return handshake_turn{};
        }
        if (handshakes_in_progress < config.tls.max_handshakes) {
            ++handshakes_in_progress;
            co_return handshake_turn{*this};
        }
        asio::steady_timer timer{executor, deadline};
        handshake_waiter me{&timer};
        handshake_queue.push_back(&me);
        const auto position = std::prev(handshake_queue.end());
        co_await timer.async_wait(tuple_deferred);
        if (me.granted)
            co_return handshake_turn{*this}; // handed over by a finished handshake: the count stays
        handshake_queue.erase(position);
        co_return handshake_turn{};
    }

    /// The TLS handshake on a connected socket, within c.deadline, verifying what the URL names whatever
    /// address (override, proxy tunnel) the socket reached. On failure, false and `out` says why.
    asio::awaitable<bool> handshake(connection& c, request_target t, std::unique_ptr<fetch_result>& out) {
        auto turn = co_await take_handshake_turn(c.deadline);
        if (config.tls.max_handshakes != 0 && !turn.owner) {
            out = failure(clock_type::now() >= c.deadline ? error_code(error::connect_timeout)
                                                          : error_code(asio::error::operation_aborted));
            error_code ignored;
            c.socket.close(ignored);
            co_return false;
        }
        c.tls.reset(SSL_new(trusted_roots()));
        SSL* ssl = c.tls.get();
        BIO* bio = BIO_new(nosignal_socket_method());
        BIO_set_fd(bio, static_cast<int>(c.socket.native_handle()), BIO_NOCLOSE);
        SSL_set_bio(ssl, bio, bio);
        // SNI carries host names only (RFC 6066 3): an IP literal is not sent.
        const bool ip = is_ip_literal(t.host);
        if (!ip)
            SSL_set_tlsext_host_name(ssl, t.host.c_str());
        if (!config.tls.insecure) {
            if (ip)
                X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), t.host.c_str());
            else
                SSL_set1_host(ssl, t.host.c_str());
        }
        SSL_set_connect_state(ssl);
        for (;;) {
            ERR_clear_error();
            const int rc = SSL_do_handshake(ssl);
            if (rc == 1) {
                c.release_tls_buffers(); // the request is written at once, and the wait for its answer holds
                                         // none
                co_return true;
            }
            const int ssl_error = SSL_get_error(ssl, rc);
            if (ssl_error == SSL_ERROR_WANT_READ || ssl_error == SSL_ERROR_WANT_WRITE) {
                const error_code ec = co_await wait_ready(
                    c, ssl_error == SSL_ERROR_WANT_READ ? tcp::socket::wait_read : tcp::socket::wait_write);
                if (!ec)
                    continue;
                out = failure(ec == beast::error::timeout ? error_code(error::connect_timeout) : ec);
            } else {
                auto [mapped, detail] = classify_handshake_error(c, ssl_error, t);
                out = failure(mapped, std::move(detail));
            }
            error_code ignored;
            c.socket.close(ignored);
            co_return false;
        }
    }

    /// Writes all of `bytes` within c.deadline.
    asio::awaitable<error_code> write_all(connection& c, std::string_view bytes) {
        while (!bytes.empty()) {
            error_code ec;
            bool wants_read = false;
            const std::size_t n = c.write_now(asio::buffer(bytes.data(), bytes.size()), ec, wants_read);
            if (ec)
                co_return ec;
            bytes.remove_prefix(n);
            if (n == 0) {
                if (const error_code wait_ec =
                        co_await wait_ready(c, wants_read ? tcp::socket::wait_read : tcp::socket::wait_write))
                    co_return wait_ec;
            }
        }
        co_return error_code{};
    }

    /// Opens a CONNECT tunnel to `t` through the proxy `c` is connected to, within c.deadline. On failure,
    /// false and `out` says why (the proxy's credentials are never part of it).
    asio::awaitable<bool> tunnel(connection& c, request_target t, const proxy_endpoint& via,
                                 std::unique_ptr<fetch_result>& out) {
        const std::string authority =
            t.host.find(':') != std::string::npos ? "[" + t.host + "]:" + t.port : t.host + ":" + t.port;
        std::string request = "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n";
        if (!via.authorization.empty())
            request += "Proxy-Authorization: " + via.authorization + "\r\n";
        request += "User-Agent: " + config.user_agent + "\r\n\r\n";
        error_code ec = co_await write_all(c, request);
        std::string head;
        while (!ec && head.find("\r\n\r\n") == std::string::npos) {
            if (head.size() > max_tunnel_head) {
                out = failure(error::proxy_failed,
                              "the answer of proxy " + via.display + " to CONNECT is too long");
                co_return false;
            }
            ec = co_await wait_ready(c, tcp::socket::wait_read);
            if (ec)
                break;
            char chunk[512];
            // One byte at a time past what a status line needs would be slow; reading more is safe because a
            // TLS server says nothing before our ClientHello.
            const std::size_t n = c.socket.read_some(asio::buffer(chunk), ec);
            if (ec == asio::error::would_block || ec == asio::error::try_again) {
                ec = {};
                continue;
            }
            head.append(chunk, n);
        }
        if (ec) {
            out = failure(ec == beast::error::timeout ? error_code(error::connect_timeout) : ec,
                          "while opening a tunnel through proxy " + via.display);
            co_return false;
        }
        const auto end_of_head = head.find("\r\n\r\n") + 4;
        const std::string status_line = head.substr(0, head.find("\r\n"));
        const bool is_http = status_line.starts_with("HTTP/1.") && status_line.size() >= 12;
        const bool ok = is_http && status_line[9] == '2';
        if (!ok || end_of_head != head.size()) {
            out = failure(error::proxy_failed, "proxy " + via.display + " answered CONNECT " + authority +
                                                   " with \"" + without_controls(status_line.substr(0, 120)) +
                                                   "\"");
            co_return false;
        }
        co_return true;
    }

    static bool out_of_descriptors(const error_code& ec) noexcept {
        return ec.category() == asio::error::get_system_category() &&
               (ec.value() == EMFILE || ec.value() == ENFILE);
    }

    /// Closes one idle pooled connection, to free its descriptor; false when none is pooled.
    bool drop_one_idle() {
        for (auto it = idle.begin(); it != idle.end(); ++it) {
            if (it->second.empty())
                continue;
            retire(std::move(it->second.front()));
            it->second.erase(it->second.begin());
            return true;
        }
        return false;
    }

    /// Opens `c`'s socket. Every descriptor of the process in use (EMFILE, ENFILE) is our own limit, not the
    /// server's failure, and passes: an idle pooled connection is closed to free one, or the attempt waits
    /// for a connection of ours to end. That wait is not the server's: `deadline` moves with it. Only when
    /// no other connection of ours exists, so that none will free a descriptor (they are held elsewhere in
    /// the process), does it give up after connect_timeout, with an error worth another try.
    asio::awaitable<error_code> open_socket(connection& c, const tcp& protocol,
                                            clock_type::time_point& deadline) {
        auto pause = first_descriptor_wait;
        clock_type::duration waited_alone{};
        for (;;) {
            error_code ec;
            c.socket.open(protocol, ec);
            if (!out_of_descriptors(ec))
                co_return ec;
            ++stats.descriptor_waits;
            if (drop_one_idle())
                continue;
            const bool alone = live_connections <= 1; // this one
            if (alone && waited_alone >= config.connect_timeout)
                co_return ec;
            asio::steady_timer timer{executor, pause};
            if (auto [cancelled] = co_await timer.async_wait(tuple_deferred); cancelled)
                co_return cancelled; // the crawl is stopping
            deadline += pause;
            if (alone)
                waited_alone += pause;
            pause = std::min(pause * 2, longest_descriptor_wait);
        }
    }

    /// Resolves, connects and (for https) tunnels and shakes hands, all within connect_timeout. On failure,
    /// nullptr and `out` says why. Every fetch of a burst is here at once: DNS, the tunnel and the handshake
    /// have coroutines of their own, so that this frame stays small.
    asio::awaitable<std::unique_ptr<connection>> connect(std::string_view url,
                                                         std::unique_ptr<fetch_result>& out) {
        auto deadline = clock_type::now() + config.connect_timeout;
        const auto target = target_of(url);
        if (!target) {
            out = failure(error::invalid_url);
            co_return nullptr;
        }
        const proxy_endpoint* via = route_for(*target);
        std::vector<tcp::endpoint> endpoints;
        error_code ec = co_await endpoints_for(*target, via, deadline, endpoints);
        if (ec) {
            out = failure(ec);
            co_return nullptr;
        }
        auto c = std::make_unique<connection>(executor, live_connections);
        for (const auto& endpoint : endpoints) {
            ec = co_await open_socket(*c, endpoint.protocol(), deadline);
            if (ec)
                break;
            // On the socket itself, under the fetcher's deadline timer, so that a burst of connects holds
            // no timer wait each.
            c->deadline = deadline;
            watch(*c);
            std::tie(ec) = co_await exactly_allocated<void(error_code)>(
                [&](auto handler) { c->socket.async_connect(endpoint, std::move(handler)); });
            unwatch(*c);
            if (c->timed_out)
                ec = beast::error::timeout;
            if (!ec) {
                c->remote_ip = endpoint.address().to_string();
                break;
            }
            error_code ignored;
            c->socket.close(ignored);
            if (ec == beast::error::timeout)
                break;
        }
        if (ec) {
            out = failure(ec == beast::error::timeout ? error_code(error::connect_timeout) : ec,
                          via ? "while connecting to proxy " + via->display : std::string{});
            co_return nullptr;
        }
        ++stats.connections_opened;
        c->socket.set_option(tcp::no_delay{true}, ec);
        c->socket.non_blocking(true, ec);
        if (ec) {
            out = failure(ec);
            co_return nullptr;
        }
        if (via && target->https && !co_await tunnel(*c, *target, *via, out))
            co_return nullptr;
        if (target->https && !co_await handshake(*c, *target, out))
            co_return nullptr;
        if (via && !target->https)
            c->http_proxy = via;
        co_return c;
    }

    // ---- the request ----

    /// The request for a URL already checked by pool_key(), on `c`. `proxy_fields` receives where the
    /// Proxy-Authorization field sits in it (offset, length), so that a captured copy leaves it out.
    std::string request_bytes(std::string_view url, const std::string& origin, const connection& c,
                              std::pair<std::size_t, std::size_t>& proxy_fields) const {
        const auto parts = slice_url(url).value();
        const std::string host_and_port = host_for_wire(parts.host_and_port);
        std::string r;
        r.reserve(256 + url.size() + fixed_fields.size());
        r.append("GET ");
        if (c.http_proxy)
            r.append(parts.scheme).append("://").append(host_and_port); // absolute form (RFC 9112 3.2.2)
        r.append(parts.path.empty() ? "/" : parts.path);
        if (parts.query)
            r.append("?").append(*parts.query);
        r.append(" HTTP/1.1\r\nHost: ").append(host_and_port).append("\r\n").append(fixed_fields);
        if (auto it = authorization_by_origin.find(origin); it != authorization_by_origin.end())
            r.append("Authorization: ").append(it->second).append("\r\n");
        std::string cookies = user_cookie;
        if (jar) {
            const std::string host = host_for_wire(parts.host);
            const std::string jar_cookies = jar->cookie_header(
                {parts.scheme, host, parts.path.empty() ? std::string_view("/") : parts.path},
                std::chrono::system_clock::now());
            if (!jar_cookies.empty())
                cookies += (cookies.empty() ? "" : "; ") + jar_cookies;
        }
        if (!cookies.empty())
            r.append("Cookie: ").append(cookies).append("\r\n");
        proxy_fields = {r.size(), 0};
        if (c.http_proxy && !c.http_proxy->authorization.empty()) {
            r.append("Proxy-Authorization: ").append(c.http_proxy->authorization).append("\r\n");
            proxy_fields.second = r.size() - proxy_fields.first;
        }
        r.append("\r\n"); // HTTP/1.1 keeps the connection alive unless told otherwise
        return r;
    }

    /// A parser for one response (interim ones included), with the limits of this request.
    std::unique_ptr<response_parser> new_parser(const fetch_options& options) const {
        auto parser = std::make_unique<response_parser>();
        parser->header_limit(config.max_header_bytes);
        parser->on_chunk_header(chunk_extensions_checked);
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
    /// bytes go once written, unless captured in `out` (without the proxy's credentials).
    asio::awaitable<error_code> send(connection& c, std::string_view url, const std::string& origin,
                                     bool capture, std::unique_ptr<fetch_result>& out) {
        std::pair<std::size_t, std::size_t> proxy_fields;
        std::string request = request_bytes(url, origin, c, proxy_fields);
        c.deadline = clock_type::now() + config.request_timeout;
        c.request_started = std::chrono::system_clock::now();
        const error_code ec = co_await write_all(c, request);
        if (capture) {
            request.erase(proxy_fields.first, proxy_fields.second);
            result_of(out, c).raw_request = std::move(request);
        }
        co_return ec;
    }

    void take_cookies(std::string_view url, const http::fields& head) {
        auto [first, last] = head.equal_range(http::field::set_cookie);
        if (first == last)
            return;
        const auto parts = slice_url(url).value();
        const std::string host = host_for_wire(parts.host);
        const auto now = std::chrono::system_clock::now();
        for (auto it = first; it != last; ++it)
            jar->set_cookie({parts.scheme, host, parts.path.empty() ? std::string_view("/") : parts.path},
                            it->value(), now);
    }

    /// The reading of one answer: what lives across the waits for bytes. The parsing between the waits is
    /// done by parse() and take_in(), outside the coroutine, so that their locals are not in its frame.
    struct reading {
        std::unique_ptr<response_parser> parser; // one per response, interim ones included
        error_code ec;
        int interim = 0;
        bool at_eof = false;
        /// How long to wait before reading on (fetch_config::limit_rate).
        clock_type::duration throttle{};
        /// From the final head: how long the server keeps an idle connection (Keep-Alive: timeout=N).
        std::optional<std::chrono::seconds> server_keeps_idle;
        /// False when the head forbids another request on the connection whatever its framing.
        bool reusable = true;
    };

    /// Parses what the buffer holds (or the end of the stream). True when the answer is complete or reading
    /// it failed (r.ec); false when more bytes are needed.
    bool parse(connection& c, reading& r, std::string_view url, const fetch_options& options,
               std::unique_ptr<fetch_result>& out) {
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
                // A head is taken as soon as it is whole, even when its body is already refused (a
                // Content-Length over the limit): the record says what the server answered.
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
                // Close-delimited bodies end here; anything else is cut short (partial_message). A TLS peer
                // that closes without close_notify is treated like a plain close: HTTP framing, not TLS, says
                // whether the message is whole (a close-delimited body is accepted as browsers do).
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

    /// Feeds the parser what the buffer holds. Consumed bytes are counted (and copied when capturing);
    /// unconsumed ones stay in the buffer. Returns the bytes consumed.
    static std::size_t feed(response_parser& parser, beast::flat_buffer& buffer, bool capture,
                            fetch_result& result, error_code& ec) {
        const bool head_was_done = parser.is_header_done();
        std::size_t used = 0;
        try {
            if (result.wire_bytes == 0) {
                if (auto taken = feed_without_reason(parser, buffer, capture, result, ec))
                    return *taken;
            }
            used = parser.put(buffer.data(), ec);
        } catch (const std::length_error&) {
            // Beast's fields hold a name or value of at most 64 KiB, and say so by throwing (a trailer is
            // not under header_limit; a head is, unless max_header_bytes is larger).
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

    /// "HTTP/1.1 200" with no space after the code: RFC 9112 4 asks for one before the (optional) reason
    /// phrase and Beast's parser insists on it, while browsers and curl read the line without. When the
    /// answer starts with such a line, the parser is handed a copy with the space, and what is counted and
    /// captured are the bytes as received. nullopt when the answer does not start so.
    static std::optional<std::size_t> feed_without_reason(response_parser& parser, beast::flat_buffer& buffer,
                                                          bool capture, fetch_result& result,
                                                          error_code& ec) {
        constexpr std::size_t line_size = std::string_view("HTTP/1.1 200\r\n").size();
        const std::string_view held{static_cast<const char*>(buffer.data().data()), buffer.size()};
        const auto digit = [&](std::size_t i) { return ascii::is_digit(held[i]); };
        if (held.size() < line_size || !held.starts_with("HTTP/") || !digit(5) || held[6] != '.' ||
            !digit(7) || held[8] != ' ' || !digit(9) || !digit(10) || !digit(11) ||
            held.substr(12, 2) != "\r\n")
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

    /// What the parser holds back, once the head is done, when it needs more: a chunk-size line or a trailer
    /// section (it takes body bytes as they come). Beast bounds neither, so we do: a chunk-size line with
    /// its extensions by max_chunk_line, the trailers by max_header_bytes, like the head.
    error_code check_held_back(const response_parser& parser, const beast::flat_buffer& buffer,
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
        if (held.size() - end_of_line - 1 <= config.max_header_bytes)
            return {};
        result.error_detail =
            "trailers over " + std::to_string(config.max_header_bytes) + " bytes (fetch.max_header_bytes)";
        return error::header_too_large;
    }

    /// Takes what we keep of a final response's head, as soon as it is complete: trailers that come after
    /// the body are never merged into it (RFC 9110 6.5.1: a field that matters to us is not to be trusted
    /// there). Cookies it sets go to the jar, redirects and errors included.
    error_code take_head(std::string_view url, const response_parser& parser, reading& r,
                         fetch_result& result) {
        const auto& head = parser.get();
        const unsigned status = head.result_int();
        if (status < 100) {
            result.error_detail = "status code " + std::to_string(status) + " (RFC 9110 15: 100 to 599)";
            return error::bad_response; // "000"
        }
        if (status / 100 == 1 && status != 101)
            return {}; // interim: skipped
        result.status = static_cast<int>(status);
        if (auto it = head.find(http::field::content_type); it != head.end())
            result.content_type = std::string(it->value());
        if (auto it = head.find(http::field::location); it != head.end())
            result.location = std::string(it->value());
        if (auto it = head.find(http::field::retry_after); it != head.end())
            result.retry_after = std::string(it->value());
        read_keep_alive(head, r);
        // An HTTP/1.0 message with Transfer-Encoding has faulty framing (RFC 9112 6.1): read it, then close.
        if (head.version() < 11 && head.find(http::field::transfer_encoding) != head.end())
            r.reusable = false;
        if (jar && status != 101)
            take_cookies(url, head);
        return {};
    }

    /// The server's Keep-Alive hints (RFC 2068 19.7.1.1, still what servers send): how long it keeps an idle
    /// connection (timeout=N), and max=0, no more requests on this one.
    static void read_keep_alive(const http::fields& head, reading& r) {
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

    /// Fills in the rest of the result from the final response, or from how reading it failed. Says whether
    /// the connection may carry another request: only after a response whose end its framing marked (a
    /// Content-Length or a last chunk, not the close of the connection), read whole, that asked for no close.
    void conclude(response_parser& parser, reading& r, fetch_result& result, bool& retry_fresh,
                  bool& reusable) {
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

    /// Takes in what has arrived since a wait (one read_chunk at most: Beast's parser enforces the head limit
    /// on a head that grows, not on one handed over whole), without waiting again. True when reading must
    /// stop (the error is in r.ec).
    bool take_in(connection& c, reading& r, error_code wait_ec) {
        if (wait_ec) {
            r.ec = wait_ec;
            return true;
        }
        error_code ec;
        const std::size_t n = c.read_now(c.buffer.prepare(read_chunk), ec);
        c.buffer.commit(n);
        if (limiter && n > 0)
            r.throttle = limiter->charge(n, clock_type::now());
        if (ec == asio::error::eof) {
            r.at_eof = true;
            return false;
        }
        r.ec = ec;
        return static_cast<bool>(ec); // nothing read (a spurious wake-up): the next wait brings more
    }

    /// A 2xx head whose Content-Type is not among `accept` (fetch_options::accept_types).
    static bool type_rejected(const response_parser& parser, const std::vector<std::string>& accept) {
        const auto& head = parser.get();
        if (head.result_int() < 200 || head.result_int() >= 300)
            return false;
        const auto it = head.find(http::field::content_type);
        return it != head.end() && !media_type_accepted(it->value(), accept);
    }

    /// Waits out the rate limit (fetch_config::limit_rate) in a frame of its own, so that a fetch waiting
    /// for its server carries no timer. The wait is ours, not the server's: the request's deadline moves.
    asio::awaitable<void> throttle(connection& c, reading& r) {
        const auto wait = std::exchange(r.throttle, clock_type::duration::zero());
        c.deadline += wait;
        asio::steady_timer timer{executor, wait};
        co_await timer.async_wait(tuple_deferred);
    }

    /// One attempt (fetcher::fetch_into): a connection from the pool or a new one, the request, the answer.
    ///
    /// Thousands of these wait at once, so this frame is what a fetch costs while it waits, and it is kept
    /// small: one coroutine for the whole exchange, no fetch_result, parser or read buffer while waiting (the
    /// wait is on the socket; those exist only while bytes are being parsed), no request bytes once sent.
    /// Interim answers (100 Continue, 103 Early Hints) precede the real one on the same connection: they are
    /// skipped, or the real response would stay in the buffer and be taken for the next URL's.
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
            std::optional<std::chrono::seconds> server_keeps_idle;
            error_code ec = co_await send(c, url, origin_key, options.capture, out);
            if (ec) {
                retry_fresh = is_stale_connection_failure(ec);
                result_of(out, c).error = classify_read_error(ec);
            } else {
                reading r;
                while (!parse(c, r, url, options, out)) {
                    ec = {};
                    if (!c.has_pending()) {
                        c.release_tls_buffers();
                        watch(c);
                        std::tie(ec) = co_await exactly_allocated<void(error_code)>([&c](auto handler) {
                            c.socket.async_wait(c.read_wants_write ? tcp::socket::wait_write
                                                                   : tcp::socket::wait_read,
                                                std::move(handler));
                        });
                        unwatch(c);
                        if (c.timed_out)
                            ec = beast::error::timeout;
                    }
                    if (take_in(c, r, ec))
                        break;
                    if (r.throttle > clock_type::duration::zero())
                        co_await throttle(c, r);
                }
                if (!r.parser)
                    r.parser = new_parser(options); // failed before the first byte
                conclude(*r.parser, r, result_of(out, c), retry_fresh, reusable);
                server_keeps_idle = r.server_keeps_idle;
            }
            if (!out->error) {
                // We never pipeline: bytes already waiting after a complete response are not an answer to
                // anything we asked (a body longer than its Content-Length), and would be read as the next
                // URL's response.
                if (reusable && c.buffer.size() == 0 && !c.has_pending())
                    give_back(origin_key, std::move(conn), server_keeps_idle);
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

    std::vector<std::string> save_cookies() const {
        if (!jar || config.cookies.save_file.empty())
            return {};
        const std::string temporary = config.cookies.save_file + ".tmp";
        {
            std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
            file << jar->to_netscape(std::chrono::system_clock::now());
            file.flush();
            if (!file)
                return {"fetch.cookies.save_file: cannot write " + temporary};
        }
        if (std::rename(temporary.c_str(), config.cookies.save_file.c_str()) != 0)
            return {"fetch.cookies.save_file: cannot write " + config.cookies.save_file};
        return {};
    }
};

fetcher::fetcher(asio::any_io_executor executor, fetch_config config, std::size_t max_idle_per_origin)
    : impl_(std::make_unique<impl>(std::move(executor), std::move(config), max_idle_per_origin)) {}

fetcher::~fetcher() = default;

const fetcher_stats& fetcher::stats() const noexcept {
    return impl_->stats;
}

const dns_stats& fetcher::dns() const noexcept {
    return impl_->resolver.stats();
}

std::size_t fetcher::cookies() const noexcept {
    return impl_->jar ? impl_->jar->size() : 0;
}

void fetcher::close_idle() {
    for (auto& [origin, stack] : impl_->idle)
        for (auto& c : stack)
            retire(std::move(c));
    impl_->idle.clear();
    impl_->resolver.cancel();
}

std::vector<std::string> fetcher::finish() {
    close_idle();
    return impl_->save_cookies();
}

asio::awaitable<fetch_result> fetcher::fetch(boost::urls::url_view url, fetch_options options) {
    return impl_->fetch_whole(std::string(url.buffer()), options); // owns its URL: `url` may be a temporary
}

asio::awaitable<void> fetcher::fetch_into(std::string_view url, fetch_options options,
                                          std::unique_ptr<fetch_result>& out) {
    return impl_->run(url, options, out);
}

} // namespace asiocrawl::detail
