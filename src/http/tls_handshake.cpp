#include "http/tls_handshake.hpp"

#include "http/tls_certificate.hpp"

#include <asiocrawl/error.hpp>

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/beast/core/error.hpp>

#include <openssl/err.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cerrno>
#include <iterator>

namespace asiocrawl::detail {

namespace asio = boost::asio;
namespace ssl = asio::ssl;
using boost::system::error_code;
using tcp = asio::ip::tcp;

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

bool is_ip_literal(const std::string& host) {
    error_code ec;
    asio::ip::make_address(host, ec);
    return !ec;
}

} // namespace

tls_client::tls_client(asio::any_io_executor executor, const tls_config& config)
    : executor_(std::move(executor))
    , config_(config)
    , context_(make_tls_context(config)) {}

tls_client::handshake_turn::~handshake_turn() {
    if (!owner)
        return;
    if (owner->queue_.empty()) {
        --owner->in_progress_;
        return;
    }
    auto* next = owner->queue_.front();
    owner->queue_.pop_front();
    next->granted = true;
    next->timer->cancel();
}

asio::awaitable<tls_client::handshake_turn> tls_client::take_turn(clock_type::time_point deadline) {
    if (config_.max_handshakes == 0) {
        co_return handshake_turn{};
    }
    if (in_progress_ < config_.max_handshakes) {
        ++in_progress_;
        co_return handshake_turn{*this};
    }
    asio::steady_timer timer{executor_, deadline};
    handshake_waiter me{&timer};
    queue_.push_back(&me);
    const auto position = std::prev(queue_.end());
    co_await timer.async_wait(tuple_deferred);
    if (me.granted)
        co_return handshake_turn{*this}; // handed over by a finished handshake: the count stays
    queue_.erase(position);
    co_return handshake_turn{};
}

SSL_CTX* tls_client::trusted_roots() {
    if (!system_roots_loaded_ && !config_.insecure) {
        error_code ignored;
        context_.set_default_verify_paths(ignored);
        system_roots_loaded_ = true;
    }
    return context_.native_handle();
}

std::pair<error_code, std::string> tls_client::classify_failure(connection& c, int ssl_error,
                                                                const std::string& host) const {
    SSL* ssl = c.tls.get();
    const unsigned long reason = ERR_peek_error();
    const long verify = config_.insecure ? X509_V_OK : SSL_get_verify_result(ssl);
    if (verify != X509_V_OK || ERR_GET_REASON(reason) == SSL_R_CERTIFICATE_VERIFY_FAILED) {
        std::string detail =
            verify != X509_V_OK ? certificate_problem(ssl, verify, host) : std::string("verify failed");
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

asio::awaitable<bool> tls_client::handshake(connection& c, std::string host, socket_waits& waits,
                                            std::unique_ptr<fetch_result>& out, std::string_view alpn) {
    auto turn = co_await take_turn(c.deadline);
    if (config_.max_handshakes != 0 && !turn.owner) {
        out = failed_fetch(clock_type::now() >= c.deadline ? error_code(error::connect_timeout)
                                                           : error_code(asio::error::operation_aborted));
        error_code ignored;
        c.socket.close(ignored);
        co_return false;
    }
    c.attach_tls(trusted_roots());
    SSL* ssl = c.tls.get();
    // SNI carries host names only (RFC 6066 3): an IP literal is not sent.
    const bool ip = is_ip_literal(host);
    if (!ip)
        SSL_set_tlsext_host_name(ssl, host.c_str());
    if (!alpn.empty())
        SSL_set_alpn_protos(ssl, reinterpret_cast<const unsigned char*>(alpn.data()),
                            static_cast<unsigned>(alpn.size()));
    if (!config_.insecure) {
        if (ip)
            X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host.c_str());
        else
            SSL_set1_host(ssl, host.c_str());
    }
    for (;;) {
        ERR_clear_error();
        const int rc = SSL_do_handshake(ssl);
        if (rc == 1) {
            const unsigned char* chosen = nullptr;
            unsigned chosen_size = 0;
            SSL_get0_alpn_selected(ssl, &chosen, &chosen_size);
            c.h2 = std::string_view(reinterpret_cast<const char*>(chosen), chosen ? chosen_size : 0) == "h2";
            c.release_tls_buffers(); // the request is written at once, and the wait for its answer holds none
            co_return true;
        }
        const int ssl_error = SSL_get_error(ssl, rc);
        if (ssl_error == SSL_ERROR_WANT_READ || ssl_error == SSL_ERROR_WANT_WRITE) {
            const error_code ec = co_await waits.wait_ready(
                c, ssl_error == SSL_ERROR_WANT_READ ? tcp::socket::wait_read : tcp::socket::wait_write);
            if (!ec)
                continue;
            out = failed_fetch(ec == boost::beast::error::timeout ? error_code(error::connect_timeout) : ec);
        } else {
            auto [mapped, detail] = classify_failure(c, ssl_error, host);
            out = failed_fetch(mapped, std::move(detail));
        }
        error_code ignored;
        c.socket.close(ignored);
        co_return false;
    }
}

} // namespace asiocrawl::detail
