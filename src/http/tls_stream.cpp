#include "http/tls_stream.hpp"

#include <boost/asio/error.hpp>
#include <boost/asio/ssl/error.hpp>

#include <openssl/bio.h>
#include <openssl/err.h>

#include <sys/socket.h>

#include <cerrno>

namespace asiocrawl::detail {

namespace asio = boost::asio;
using boost::system::error_code;

namespace {

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

} // namespace

void connection::attach_tls(SSL_CTX* context) {
    tls.reset(SSL_new(context));
    BIO* bio = BIO_new(nosignal_socket_method());
    BIO_set_fd(bio, static_cast<int>(socket.native_handle()), BIO_NOCLOSE);
    SSL_set_bio(tls.get(), bio, bio);
    SSL_set_connect_state(tls.get());
}

std::size_t connection::read_now(asio::mutable_buffer into, error_code& ec) {
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

std::size_t connection::write_now(asio::const_buffer bytes, error_code& ec, bool& wants_read) {
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

bool connection::is_quiet() {
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

error_code connection::tls_error(int ssl_error, bool& wants_write, bool writing) {
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

void retire(std::unique_ptr<connection> c) {
    if (c->tls && c->socket.is_open()) {
        ERR_clear_error();
        SSL_shutdown(c->tls.get());
        ERR_clear_error();
    }
    error_code ignored;
    c->socket.close(ignored);
}

} // namespace asiocrawl::detail
