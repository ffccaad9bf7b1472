// The loopback test server: one accept loop and one session coroutine per connection, all on the caller's
// executor. Everything the coroutines share lives in `state`, held by shared_ptr from every coroutine frame,
// so destroying the http_server handle while sessions run is safe. stop() closes the acceptor and every live
// session's stream (each session registers a raw pointer to its stream for that), and cancels a timer that
// never expires on its own, which wakes everyone in wait_stopped(): afterwards the executor runs out of work.

#include <asiocrawl_demo/http_server.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/ip/address_v4.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/rfc7230.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <algorithm>
#include <chrono>
#include <exception>
#include <map>
#include <type_traits>
#include <utility>
#include <variant>

namespace asiocrawl::demo {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using asio::awaitable;

namespace {

/// A connection with no complete request for this long is closed; also the limit for writing a response.
constexpr auto idle_timeout = std::chrono::seconds(60);
/// Largest request body accepted (the crawler sends none; this only bounds misuse).
constexpr std::uint64_t max_request_body = 1u << 20;

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

/// The status answering a request that could not be parsed; nullopt when the read failed for a reason that
/// leaves nobody to answer (end of stream, timeout, closed by stop()).
std::optional<http::status> status_for_read_error(const beast::error_code& ec) {
    if (ec == http::error::end_of_stream || ec == http::error::partial_message) {
        return std::nullopt;
    }
    if (ec == http::error::body_limit) {
        return http::status::payload_too_large;
    }
    if (ec == http::error::header_limit) {
        return http::status::request_header_fields_too_large;
    }
    if (ec.category() == http::make_error_code(http::error::bad_target).category()) {
        return http::status::bad_request;
    }
    return std::nullopt;
}

/// True when the handler asked for the connection to be closed with a "Connection: close" field.
bool asks_close(const http_response& res) {
    const auto it = res.find(http::field::connection);
    return it != res.end() && http::token_list{it->value()}.exists("close");
}

} // namespace

struct http_server::state {
    state(asio::any_io_executor ex, request_handler h)
        : executor(std::move(ex))
        , acceptor(executor)
        , stop_timer(executor, asio::steady_timer::time_point::max())
        , handler(std::move(h)) {}

    asio::any_io_executor executor;
    tcp::acceptor acceptor;
    /// Never expires on its own: stop() cancels it to wake every wait_stopped().
    asio::steady_timer stop_timer;
    request_handler handler;
    unsigned short port = 0;
    bool stopped = false;

    std::size_t requests = 0;
    std::size_t in_flight = 0;
    std::size_t peak_in_flight = 0;
    std::size_t connections = 0;
    std::vector<logged_request> log;
    /// Live sessions' streams by connection serial; each session removes itself when its coroutine ends.
    std::map<std::size_t, beast::tcp_stream*> sessions;
    /// Set for an HTTPS server.
    asio::ssl::context* tls = nullptr;

    void stop() {
        if (stopped) {
            return;
        }
        stopped = true;
        beast::error_code ec;
        acceptor.close(ec);
        // close() only cancels: the completions run later, so the map is not modified while we iterate.
        for (auto& [serial, stream] : sessions) {
            stream->close();
        }
        stop_timer.cancel();
    }

    static awaitable<void> wait_stopped(std::shared_ptr<state> self) {
        while (!self->stopped) {
            co_await self->stop_timer.async_wait(use_tuple);
            if (!self->stopped) {
                // Only stop() cancels the timer, so this wait itself was cancelled (e.g. it lost a race).
                throw boost::system::system_error(asio::error::operation_aborted);
            }
        }
    }

    static awaitable<void> accept_loop(std::shared_ptr<state> self) {
        for (;;) {
            auto [ec, socket] = co_await self->acceptor.async_accept(use_tuple);
            if (self->stopped || !self->acceptor.is_open()) {
                co_return; // an accepted socket closes with its destructor
            }
            if (ec) {
                if (ec == asio::error::operation_aborted) {
                    co_return;
                }
                // Transient (out of descriptors, connection aborted before accept): back off briefly.
                asio::steady_timer pause(self->executor, std::chrono::milliseconds(20));
                co_await pause.async_wait(use_tuple);
                continue;
            }
            const std::size_t serial = ++self->connections;
            asio::co_spawn(self->executor, session(self, std::move(socket), serial), asio::detached);
        }
    }

    /// What the handler did: a response, nothing (close), or an exception (its message).
    struct outcome {
        std::optional<http_response> response;
        std::optional<std::string> failure;
    };

    /// Runs the handler and turns its exception into a value: `||` below waits for one *successful*
    /// completion, so a handler that throws must still complete normally.
    static awaitable<outcome> run_handler(std::shared_ptr<state> self, const http_request& req) {
        outcome out;
        try {
            out.response = co_await self->handler(req);
        } catch (const std::exception& e) {
            out.failure = e.what();
        } catch (...) {
            out.failure = "unknown exception";
        }
        co_return out;
    }

    /// Runs the handler, racing it against stop(): nullopt when stopped first (the handler is cancelled). A
    /// handler that throws gets a 500 answer that closes the connection. `req` lives in the caller's frame.
    static awaitable<std::optional<http_response>> respond(std::shared_ptr<state> self,
                                                           const http_request& req) {
        using namespace asio::experimental::awaitable_operators;
        auto raced = co_await (run_handler(self, req) || wait_stopped(self));
        if (raced.index() != 0 || self->stopped) {
            co_return std::nullopt;
        }
        outcome& out = std::get<0>(raced);
        if (!out.failure) {
            co_return std::move(out.response);
        }
        http_response res{http::status::internal_server_error, req.version()};
        res.set(http::field::content_type, "text/plain; charset=utf-8");
        res.set(http::field::connection, "close");
        res.body() = "request handler failed: " + *out.failure + "\n";
        co_return res;
    }

    static awaitable<void> session(std::shared_ptr<state> self, tcp::socket socket, std::size_t serial) {
        if (self->tls) {
            beast::ssl_stream<beast::tcp_stream> stream(std::move(socket), *self->tls);
            co_await serve(self, stream, serial);
        } else {
            beast::tcp_stream stream(std::move(socket));
            co_await serve(self, stream, serial);
        }
    }

    /// Answers requests on one connection until it closes. Stream is a tcp_stream or an ssl_stream over one.
    template <class Stream>
    static awaitable<void> serve(std::shared_ptr<state> self, Stream& stream, std::size_t serial) {
        beast::tcp_stream& tcp = beast::get_lowest_layer(stream);
        if (self->stopped) {
            tcp.close();
            co_return;
        }
        self->sessions.emplace(serial, &tcp);
        struct registration {
            state& s;
            std::size_t serial;
            ~registration() { s.sessions.erase(serial); }
        } const registered{*self, serial};

        constexpr bool is_tls = !std::is_same_v<Stream, beast::tcp_stream>;
        if constexpr (is_tls) {
            tcp.expires_after(idle_timeout);
            auto [handshake_ec] = co_await stream.async_handshake(asio::ssl::stream_base::server, use_tuple);
            if (handshake_ec) {
                tcp.close();
                co_return;
            }
        }

        beast::flat_buffer buffer;
        bool clean = true; // the connection is in a state where a polite close makes sense
        for (;;) {
            http::request_parser<http::string_body> parser;
            parser.body_limit(max_request_body);
            tcp.expires_after(idle_timeout);
            auto [read_ec, read_bytes] = co_await http::async_read(stream, buffer, parser, use_tuple);
            if (read_ec) {
                if (const auto status = status_for_read_error(read_ec)) {
                    http_response res{*status, 11};
                    res.set(http::field::content_type, "text/plain; charset=utf-8");
                    res.body() = std::string(http::obsolete_reason(*status)) + "\n";
                    res.keep_alive(false);
                    res.prepare_payload();
                    tcp.expires_after(idle_timeout);
                    co_await http::async_write(stream, res, use_tuple);
                }
                clean = read_ec == http::error::end_of_stream;
                break;
            }
            http_request req = parser.release();
            ++self->requests;
            self->log.push_back(logged_request{std::string(req.method_string()), std::string(req.target()),
                                               std::string(req[http::field::host]), serial});

            struct in_flight_count {
                state& s;
                explicit in_flight_count(state& st)
                    : s(st) {
                    ++s.in_flight;
                    s.peak_in_flight = std::max(s.peak_in_flight, s.in_flight);
                }
                ~in_flight_count() { --s.in_flight; }
                in_flight_count(const in_flight_count&) = delete;
                in_flight_count& operator=(const in_flight_count&) = delete;
            };
            std::optional<in_flight_count> counted(std::in_place, *self);

            std::optional<http_response> res = co_await respond(self, req);
            if (!res || self->stopped) {
                clean = false;
                break; // close without answering
            }
            if (!res->has_content_length() && !res->chunked()) {
                try {
                    res->prepare_payload();
                } catch (const std::exception&) {
                    // A body where the status allows none (1xx, 204, 304): send it without a length.
                    res->keep_alive(false);
                }
            }
            res->keep_alive(!asks_close(*res) && req.keep_alive());
            const bool keep_alive = res->keep_alive();

            tcp.expires_after(idle_timeout);
            auto [write_ec, written] = co_await http::async_write(stream, *res, use_tuple);
            counted.reset();
            if (write_ec || !keep_alive) {
                clean = !write_ec;
                break;
            }
        }
        if constexpr (is_tls) {
            if (clean && !self->stopped) {
                // close_notify, so the client can tell our close from a truncation; bounded by a short wait.
                tcp.expires_after(std::chrono::seconds(2));
                co_await stream.async_shutdown(use_tuple);
            }
        }
        beast::error_code ec;
        tcp.socket().shutdown(tcp::socket::shutdown_send, ec);
        tcp.close();
    }
};

http_server::http_server(asio::any_io_executor executor, request_handler handler, asio::ssl::context& tls,
                         unsigned short port)
    : http_server(std::move(executor), std::move(handler), port, &tls) {}

http_server::http_server(asio::any_io_executor executor, request_handler handler, unsigned short port)
    : http_server(std::move(executor), std::move(handler), port, nullptr) {}

http_server::http_server(asio::any_io_executor executor, request_handler handler, unsigned short port,
                         asio::ssl::context* tls)
    : state_(std::make_shared<state>(std::move(executor), std::move(handler))) {
    state_->tls = tls;
    const tcp::endpoint endpoint(asio::ip::address_v4::loopback(), port);
    state_->acceptor.open(endpoint.protocol());
    state_->acceptor.set_option(asio::socket_base::reuse_address(true));
    state_->acceptor.bind(endpoint);
    state_->acceptor.listen(asio::socket_base::max_listen_connections);
    state_->port = state_->acceptor.local_endpoint().port();
    asio::co_spawn(state_->executor, state::accept_loop(state_), asio::detached);
}

http_server::~http_server() {
    stop();
}

unsigned short http_server::port() const noexcept {
    return state_->port;
}

std::string http_server::origin() const {
    return (state_->tls ? "https://127.0.0.1:" : "http://127.0.0.1:") + std::to_string(state_->port);
}

void http_server::stop() {
    state_->stop();
}

awaitable<void> http_server::wait_stopped() {
    return state::wait_stopped(state_);
}

std::size_t http_server::requests() const noexcept {
    return state_->requests;
}

std::size_t http_server::in_flight() const noexcept {
    return state_->in_flight;
}

std::size_t http_server::peak_in_flight() const noexcept {
    return state_->peak_in_flight;
}

std::size_t http_server::connections() const noexcept {
    return state_->connections;
}

const std::vector<logged_request>& http_server::log() const noexcept {
    return state_->log;
}

} // namespace asiocrawl::demo
