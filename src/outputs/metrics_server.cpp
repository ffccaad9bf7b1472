// The metrics endpoint: a thin acceptor and one coroutine per connection; what it serves is rendered by the
// registry, and the control API's answers by its handler (src/control/control_api.cpp), which tests check
// without sockets. Every request is bounded: head 8 KiB, body max_body, 10 s to read it.
#include <asiocrawl/outputs/metrics.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include <chrono>
#include <map>

namespace asiocrawl::outputs {

namespace http = boost::beast::http;
using boost::asio::ip::tcp;

struct metrics_server::state {
    state(boost::asio::any_io_executor ex, tcp::endpoint where, std::function<std::string()> r)
        : acceptor(ex, where)
        , render(std::move(r)) {}

    tcp::acceptor acceptor;
    std::function<std::string()> render;
    listener_handler handler;
    std::size_t max_body = 1u << 20;
    bool started = false;
    bool stopped = false;
    std::uint64_t next_connection = 0;
    // Open connections, so that stop() can close them and let the io_context run out of work.
    std::map<std::uint64_t, boost::beast::tcp_stream*> connections;
};

metrics_server::metrics_server(boost::asio::any_io_executor executor, std::string_view listen,
                               std::function<std::string()> render)
    : state_(std::make_shared<state>(std::move(executor), parse_listen_address(listen), std::move(render))) {}

metrics_server::~metrics_server() {
    stop();
}

tcp::endpoint metrics_server::local_endpoint() const {
    return state_->acceptor.local_endpoint();
}

void metrics_server::set_handler(listener_handler handler, std::size_t max_body) {
    state_->handler = std::move(handler);
    state_->max_body = max_body;
}

void metrics_server::start() {
    if (state_->started || state_->stopped)
        return;
    state_->started = true;
    boost::asio::co_spawn(state_->acceptor.get_executor(), accept_loop(state_), boost::asio::detached);
}

void metrics_server::stop() {
    if (state_->stopped)
        return;
    state_->stopped = true;
    boost::system::error_code ignored;
    state_->acceptor.close(ignored);
    for (auto& [id, stream] : state_->connections)
        stream->socket().close(ignored);
}

boost::asio::awaitable<void> metrics_server::accept_loop(std::shared_ptr<state> s) {
    constexpr auto tuple = boost::asio::as_tuple(boost::asio::use_awaitable);
    while (!s->stopped) {
        auto [ec, socket] = co_await s->acceptor.async_accept(tuple);
        if (ec) {
            if (s->stopped || ec == boost::asio::error::operation_aborted)
                co_return;
            continue; // EMFILE and the like: the endpoint stays up
        }
        boost::asio::co_spawn(s->acceptor.get_executor(), serve(s, std::move(socket)), boost::asio::detached);
    }
}

// g++ 12 sees this coroutine's frame allocated by Asio's aligned_new (aligned_alloc, for a frame this size)
// and released by Asio's matching operator delete, and warns, wrongly, that they do not match.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
boost::asio::awaitable<void> metrics_server::serve(std::shared_ptr<state> s, tcp::socket socket) {
    constexpr auto tuple = boost::asio::as_tuple(boost::asio::use_awaitable);
    boost::beast::tcp_stream stream{std::move(socket)};
    const std::uint64_t id = s->next_connection++;
    s->connections.emplace(id, &stream);
    boost::beast::flat_buffer buffer;
    std::string peer;
    {
        boost::system::error_code ec;
        const auto remote = stream.socket().remote_endpoint(ec);
        if (!ec)
            peer = remote.address().to_string();
    }
    while (!s->stopped) {
        http::request_parser<http::string_body> parser;
        parser.header_limit(8 * 1024);
        parser.body_limit(s->max_body);
        // One deadline for the whole request: a slow sender cannot hold the connection open longer.
        stream.expires_after(std::chrono::seconds{10});
        auto [read_ec, read_bytes] = co_await http::async_read(stream, buffer, parser, tuple);
        if (read_ec) {
            if (read_ec == http::error::body_limit || read_ec == http::error::header_limit) {
                http::response<http::string_body> refused{read_ec == http::error::body_limit
                                                              ? http::status::payload_too_large
                                                              : http::status::request_header_fields_too_large,
                                                          11};
                refused.set(http::field::content_type, "application/json");
                refused.body() = read_ec == http::error::body_limit
                                     ? "{\"error\":\"request body too large\"}\n"
                                     : "{\"error\":\"request head too large\"}\n";
                refused.keep_alive(false);
                refused.prepare_payload();
                stream.expires_after(std::chrono::seconds{10});
                co_await http::async_write(stream, refused, tuple);
            }
            break;
        }
        stream.expires_never();
        http::request<http::string_body> request = parser.release();
        http::response<http::string_body> response{http::status::ok, request.version()};
        const std::string_view target{request.target().data(), request.target().size()};
        const std::string_view path = target.substr(0, target.find('?'));
        // The control API, and the dashboard's files (/, /dashboard/...) when there is a control API to
        // steer.
        if ((path.starts_with("/api/") || path == "/" || path.starts_with("/dashboard/")) && s->handler) {
            const auto method = request.method_string();
            const auto authorization = request[http::field::authorization];
            const auto if_none_match = request[http::field::if_none_match];
            listener_request call{{method.data(), method.size()},
                                  target,
                                  {authorization.data(), authorization.size()},
                                  request.body(),
                                  peer,
                                  {if_none_match.data(), if_none_match.size()}};
            auto answer = s->handler(call);
            response.result(answer.status);
            response.set(http::field::content_type, answer.content_type);
            response.set(http::field::cache_control, answer.cache_control);
            if (!answer.allow.empty())
                response.set(http::field::allow, answer.allow);
            if (!answer.www_authenticate.empty())
                response.set(http::field::www_authenticate, answer.www_authenticate);
            for (const auto& [name, value] : answer.fields)
                response.set(name, value);
            response.body() = std::move(answer.body);
        } else if (request.method() != http::verb::get && request.method() != http::verb::head) {
            response.result(http::status::method_not_allowed);
            response.set(http::field::allow, "GET, HEAD");
            response.set(http::field::content_type, "text/plain; charset=utf-8");
            response.body() = "method not allowed\n";
        } else if (path == "/metrics") {
            response.set(http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
            response.body() = s->render();
        } else if (path == "/healthz") {
            response.set(http::field::content_type, "text/plain; charset=utf-8");
            response.body() = "ok\n";
        } else {
            response.result(http::status::not_found);
            response.set(http::field::content_type, "text/plain; charset=utf-8");
            response.body() = "not found: try /metrics, /healthz or / (with a control API)\n";
        }
        response.keep_alive(request.keep_alive());
        response.prepare_payload();
        if (request.method() == http::verb::head)
            response.body().clear();
        stream.expires_after(std::chrono::seconds{10});
        auto [write_ec, written] = co_await http::async_write(stream, response, tuple);
        if (write_ec || !response.keep_alive())
            break;
    }
    s->connections.erase(id);
    boost::system::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream.socket().close(ignored);
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

} // namespace asiocrawl::outputs
