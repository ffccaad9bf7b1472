// HTTP/2 servers for tests. nghttpd_server: nghttp2's own server (Debian nghttp2-server) serving a directory
// over TLS with a test PKI, a real process stopped by pid. h2_raw_server: cleartext HTTP/2 (prior knowledge)
// on 127.0.0.1 whose answers are frames written by hand, for what no HTTP/2 library would send: resets,
// GOAWAY, a push the client refused, an HPACK bomb, a stream that never ends. It reads the client's requests
// with nghttp2's HPACK decoder (only to learn each request's :path); everything it sends is built here, byte
// by byte.
#pragma once

#include "support/process.hpp"
#include "support/redis_server.hpp"
#include "support/tls_certs.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <nghttp2/nghttp2.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace asiocrawl::test {

inline bool loopback_accepts(std::uint16_t port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(port);
    const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
    ::close(fd);
    return ok;
}

/// nghttpd serving `htdocs` over TLS (ALPN h2 only) on a free loopback port, with the PKI's server
/// certificate. Throws when nghttpd is not installed or does not start within 10 s.
class nghttpd_server {
public:
    nghttpd_server(const std::filesystem::path& htdocs, const test_pki& pki)
        : port_(free_loopback_port())
        , key_(pki.server_key_pem)
        , cert_(pki.server_cert_pem) {
        const std::string program = ::access("/usr/sbin/nghttpd", X_OK) == 0 ? "/usr/sbin/nghttpd" : "";
        if (program.empty())
            throw std::runtime_error(
                "nghttpd is not installed (scripts/install-deps.sh installs nghttp2-server)");
        process_ = std::make_unique<child_process>(
            std::vector<std::string>{program, "--address=127.0.0.1", "--htdocs=" + htdocs.string(),
                                     std::to_string(port_), key_.path().string(), cert_.path().string()});
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (!loopback_accepts(port_)) {
            if (std::chrono::steady_clock::now() > deadline)
                throw std::runtime_error("nghttpd did not start: " + process_->stderr_so_far());
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
    }
    std::uint16_t port() const noexcept { return port_; }

private:
    std::uint16_t port_;
    temp_pem_file key_;
    temp_pem_file cert_;
    std::unique_ptr<child_process> process_;
};

/// Frames and header blocks, by hand (RFC 9113 4.1, RFC 7541).
namespace h2 {

enum : std::uint8_t {
    data = 0,
    headers = 1,
    rst_stream = 3,
    settings = 4,
    push_promise = 5,
    ping = 6,
    goaway = 7,
    continuation = 9
};
enum : std::uint8_t { end_stream = 1, end_headers = 4, ack = 1 };

inline std::string frame(std::uint8_t type, std::uint8_t flags, std::uint32_t stream,
                         const std::string& payload) {
    std::string f;
    const auto n = payload.size();
    f += static_cast<char>((n >> 16) & 0xff);
    f += static_cast<char>((n >> 8) & 0xff);
    f += static_cast<char>(n & 0xff);
    f += static_cast<char>(type);
    f += static_cast<char>(flags);
    for (int shift = 24; shift >= 0; shift -= 8)
        f += static_cast<char>((stream >> shift) & 0xff);
    return f + payload;
}

inline std::string u32(std::uint32_t v) {
    std::string s;
    for (int shift = 24; shift >= 0; shift -= 8)
        s += static_cast<char>((v >> shift) & 0xff);
    return s;
}

/// An HPACK integer with an `prefix`-bit prefix, the first byte's other bits `first`.
inline std::string integer(std::uint8_t first, int prefix, std::size_t value) {
    const std::size_t max = (1u << prefix) - 1;
    std::string s;
    if (value < max) {
        s += static_cast<char>(first | value);
        return s;
    }
    s += static_cast<char>(first | max);
    value -= max;
    while (value >= 128) {
        s += static_cast<char>((value % 128) + 128);
        value /= 128;
    }
    s += static_cast<char>(value);
    return s;
}

/// A literal field without indexing (new name), no Huffman coding.
inline std::string literal(const std::string& name, const std::string& value) {
    return std::string(1, '\0') + integer(0, 7, name.size()) + name + integer(0, 7, value.size()) + value;
}
/// A literal field with incremental indexing (new name): it enters the dynamic table.
inline std::string indexed_literal(const std::string& name, const std::string& value) {
    return integer(0x40, 6, 0) + integer(0, 7, name.size()) + name + integer(0, 7, value.size()) + value;
}
/// ":status: 200" from the static table.
inline std::string status_200() {
    return std::string(1, static_cast<char>(0x88));
}
inline std::string status(int code) {
    return code == 200 ? status_200() : integer(0x00, 4, 8) + integer(0, 7, 3) + std::to_string(code);
}

/// A whole 200 answer: HEADERS then DATA with END_STREAM.
inline std::string answer(std::uint32_t stream, const std::string& body) {
    return frame(headers, end_headers, stream,
                 status_200() + literal("content-type", "text/plain") +
                     literal("content-length", std::to_string(body.size()))) +
           frame(data, end_stream, stream, body);
}

} // namespace h2

/// A cleartext HTTP/2 server on 127.0.0.1 (prior knowledge). `reply(path, stream, connection)` gives the
/// frames written when a request's HEADERS arrive (connection counts from 0); "" writes nothing.
class h2_raw_server {
public:
    using reply_fn =
        std::function<std::string(const std::string& path, std::uint32_t stream, std::size_t connection)>;

    h2_raw_server(boost::asio::any_io_executor executor, reply_fn reply)
        : state_(std::make_shared<state>(executor, std::move(reply))) {
        boost::asio::co_spawn(executor, accept_loop(state_), boost::asio::detached);
    }
    ~h2_raw_server() { stop(); }
    h2_raw_server(const h2_raw_server&) = delete;
    h2_raw_server& operator=(const h2_raw_server&) = delete;

    unsigned short port() const { return state_->acceptor.local_endpoint().port(); }
    std::string origin() const { return "http://127.0.0.1:" + std::to_string(port()); }
    std::size_t connections() const { return state_->connections; }
    std::size_t requests() const { return state_->requests; }
    /// RST_STREAM frames the client sent.
    std::size_t resets() const { return state_->resets; }
    /// Stops accepting and closes every connection, so that the context runs dry.
    void stop() {
        boost::system::error_code ignored;
        state_->acceptor.close(ignored);
        for (auto& weak : state_->sockets)
            if (auto s = weak.lock())
                s->close(ignored);
    }

private:
    using tcp = boost::asio::ip::tcp;
    struct state {
        state(boost::asio::any_io_executor ex, reply_fn r)
            : acceptor(ex, {boost::asio::ip::make_address("127.0.0.1"), 0})
            , reply(std::move(r)) {}
        tcp::acceptor acceptor;
        reply_fn reply;
        std::size_t connections = 0;
        std::size_t requests = 0;
        std::size_t resets = 0;
        std::vector<std::weak_ptr<tcp::socket>> sockets;
    };

    static boost::asio::awaitable<void> accept_loop(std::shared_ptr<state> s) {
        constexpr auto tuple = boost::asio::as_tuple(boost::asio::use_awaitable);
        for (;;) {
            auto [ec, socket] = co_await s->acceptor.async_accept(tuple);
            if (ec)
                co_return;
            auto shared = std::make_shared<tcp::socket>(std::move(socket));
            s->sockets.push_back(shared);
            boost::asio::co_spawn(s->acceptor.get_executor(), serve(s, shared, s->connections++),
                                  boost::asio::detached);
        }
    }

    static boost::asio::awaitable<void> serve(std::shared_ptr<state> s, std::shared_ptr<tcp::socket> socket,
                                              std::size_t connection) {
        constexpr auto tuple = boost::asio::as_tuple(boost::asio::use_awaitable);
        std::string preface(24, '\0');
        auto [ec, n] = co_await boost::asio::async_read(*socket, boost::asio::buffer(preface), tuple);
        if (ec || preface != "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
            co_return;
        const std::string hello = h2::frame(h2::settings, 0, 0, "");
        std::tie(ec, n) = co_await boost::asio::async_write(*socket, boost::asio::buffer(hello), tuple);
        nghttp2_hd_inflater* inflater = nullptr;
        nghttp2_hd_inflate_new(&inflater);
        std::unique_ptr<nghttp2_hd_inflater, void (*)(nghttp2_hd_inflater*)> owned(inflater,
                                                                                   nghttp2_hd_inflate_del);
        for (;;) {
            std::string head(9, '\0');
            std::tie(ec, n) = co_await boost::asio::async_read(*socket, boost::asio::buffer(head), tuple);
            if (ec)
                co_return;
            const std::size_t length = (std::size_t(std::uint8_t(head[0])) << 16) |
                                       (std::size_t(std::uint8_t(head[1])) << 8) | std::uint8_t(head[2]);
            const auto type = std::uint8_t(head[3]);
            const auto flags = std::uint8_t(head[4]);
            const std::uint32_t stream = ((std::uint32_t(std::uint8_t(head[5])) & 0x7f) << 24) |
                                         (std::uint32_t(std::uint8_t(head[6])) << 16) |
                                         (std::uint32_t(std::uint8_t(head[7])) << 8) | std::uint8_t(head[8]);
            std::string payload(length, '\0');
            if (length > 0) {
                std::tie(ec, n) =
                    co_await boost::asio::async_read(*socket, boost::asio::buffer(payload), tuple);
                if (ec)
                    co_return;
            }
            std::string out;
            if (type == h2::rst_stream)
                ++s->resets;
            if (type == h2::settings && !(flags & h2::ack))
                out = h2::frame(h2::settings, h2::ack, 0, "");
            if (type == h2::headers) {
                std::string_view block = payload;
                if (flags & 0x8) // PADDED
                    block = block.substr(1, block.size() - 1 - std::uint8_t(payload[0]));
                if (flags & 0x20) // PRIORITY
                    block.remove_prefix(5);
                std::string path;
                auto* in = reinterpret_cast<const std::uint8_t*>(block.data());
                std::size_t left = block.size();
                for (;;) {
                    nghttp2_nv nv;
                    int inflate_flags = 0;
                    const auto used = nghttp2_hd_inflate_hd2(inflater, &nv, &inflate_flags, in, left, 1);
                    if (used < 0)
                        co_return;
                    in += used;
                    left -= static_cast<std::size_t>(used);
                    if (inflate_flags & NGHTTP2_HD_INFLATE_EMIT) {
                        if (std::string_view(reinterpret_cast<const char*>(nv.name), nv.namelen) == ":path")
                            path.assign(reinterpret_cast<const char*>(nv.value), nv.valuelen);
                    }
                    if (inflate_flags & NGHTTP2_HD_INFLATE_FINAL) {
                        nghttp2_hd_inflate_end_headers(inflater);
                        break;
                    }
                    if ((inflate_flags & NGHTTP2_HD_INFLATE_EMIT) == 0 && left == 0)
                        break;
                }
                ++s->requests;
                out += s->reply(path, stream, connection);
            }
            if (!out.empty()) {
                std::tie(ec, n) = co_await boost::asio::async_write(*socket, boost::asio::buffer(out), tuple);
                if (ec)
                    co_return;
            }
        }
    }

    std::shared_ptr<state> state_;
};

} // namespace asiocrawl::test
