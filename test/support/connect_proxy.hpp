// An HTTP proxy on 127.0.0.1 for tests: CONNECT tunnels (for https) and absolute-form requests (for http),
// each to a port on 127.0.0.1 chosen by the host name the client asked for, so that the client never has to
// resolve that name itself. It can require Proxy-Authorization, and records what it was asked.
// Absolute-form requests are forwarded one per connection ("Connection: close"), which is all a test needs.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace asiocrawl::test {

class connect_proxy {
public:
    /// One request as the proxy saw it.
    struct seen {
        std::string method;
        std::string target;              ///< "host:port" for CONNECT, the whole URL otherwise
        std::string proxy_authorization; ///< the field's value, "" when absent
        std::string head;                ///< the request head as received
    };

    /// `routes`: host name -> port on 127.0.0.1. `required_authorization`: the Proxy-Authorization value
    /// ("Basic ...") a request must carry, or "" for none (407 otherwise).
    connect_proxy(boost::asio::any_io_executor executor, std::map<std::string, unsigned short> routes,
                  std::string required_authorization = {})
        : state_(std::make_shared<state>(executor, std::move(routes), std::move(required_authorization))) {
        boost::asio::co_spawn(executor, accept_loop(state_), boost::asio::detached);
    }
    ~connect_proxy() { stop(); }
    connect_proxy(const connect_proxy&) = delete;
    connect_proxy& operator=(const connect_proxy&) = delete;

    unsigned short port() const { return state_->acceptor.local_endpoint().port(); }
    std::string url() const { return "http://127.0.0.1:" + std::to_string(port()); }
    const std::vector<seen>& requests() const { return state_->requests; }

    /// Closes the acceptor and every open connection.
    void stop() {
        boost::system::error_code ignored;
        state_->acceptor.close(ignored);
        for (auto* socket : state_->open)
            socket->close(ignored);
    }

private:
    using tcp = boost::asio::ip::tcp;

    struct state {
        state(boost::asio::any_io_executor ex, std::map<std::string, unsigned short> r, std::string auth)
            : acceptor(ex, {boost::asio::ip::make_address("127.0.0.1"), 0})
            , routes(std::move(r))
            , required_authorization(std::move(auth)) {}
        tcp::acceptor acceptor;
        std::map<std::string, unsigned short> routes;
        std::string required_authorization;
        std::vector<seen> requests;
        std::set<tcp::socket*> open;
    };

    /// Keeps a socket in the set stop() closes, for as long as it lives.
    struct registered {
        registered(state& s, tcp::socket& socket)
            : s(s)
            , socket(socket) {
            s.open.insert(&socket);
        }
        ~registered() { s.open.erase(&socket); }
        state& s;
        tcp::socket& socket;
    };

    static boost::asio::awaitable<void> accept_loop(std::shared_ptr<state> s) {
        constexpr auto tuple = boost::asio::as_tuple(boost::asio::use_awaitable);
        for (;;) {
            auto [ec, socket] = co_await s->acceptor.async_accept(tuple);
            if (ec)
                co_return;
            boost::asio::co_spawn(s->acceptor.get_executor(), serve(s, std::move(socket)),
                                  boost::asio::detached);
        }
    }

    static std::string field(const std::string& head, std::string_view name) {
        std::istringstream lines(head);
        std::string line;
        while (std::getline(lines, line)) {
            if (!line.empty() && line.back() == '\r')
                line.pop_back();
            const auto colon = line.find(':');
            if (colon == std::string::npos || colon != name.size())
                continue;
            bool same = true;
            for (std::size_t i = 0; i < name.size(); ++i)
                same = same && std::tolower(static_cast<unsigned char>(line[i])) ==
                                   std::tolower(static_cast<unsigned char>(name[i]));
            if (same)
                return line.substr(line.find_first_not_of(' ', colon + 1));
        }
        return {};
    }

    static boost::asio::awaitable<void> relay(tcp::socket& from, tcp::socket& to) {
        constexpr auto tuple = boost::asio::as_tuple(boost::asio::use_awaitable);
        char buffer[16 * 1024];
        for (;;) {
            auto [ec, n] = co_await from.async_read_some(boost::asio::buffer(buffer), tuple);
            if (ec)
                co_return;
            auto [write_ec, written] =
                co_await boost::asio::async_write(to, boost::asio::buffer(buffer, n), tuple);
            if (write_ec)
                co_return;
        }
    }

    static boost::asio::awaitable<void> answer(tcp::socket& client, std::string bytes) {
        co_await boost::asio::async_write(client, boost::asio::buffer(bytes),
                                          boost::asio::as_tuple(boost::asio::use_awaitable));
    }

    static boost::asio::awaitable<void> serve(std::shared_ptr<state> s, tcp::socket client) {
        using namespace boost::asio::experimental::awaitable_operators;
        constexpr auto tuple = boost::asio::as_tuple(boost::asio::use_awaitable);
        registered keep_client{*s, client};
        boost::asio::streambuf buffer;
        auto [ec, n] = co_await boost::asio::async_read_until(client, buffer, "\r\n\r\n", tuple);
        if (ec)
            co_return;
        std::string head(boost::asio::buffers_begin(buffer.data()),
                         boost::asio::buffers_begin(buffer.data()) + n);
        seen request;
        std::istringstream line(head.substr(0, head.find("\r\n")));
        line >> request.method >> request.target;
        request.proxy_authorization = field(head, "Proxy-Authorization");
        request.head = head;
        s->requests.push_back(request);
        if (!s->required_authorization.empty() && request.proxy_authorization != s->required_authorization) {
            co_await answer(client, "HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic "
                                    "realm=\"test\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
            co_return;
        }
        // The host asked for: "host:port" of CONNECT, or the authority of an absolute URL.
        std::string authority = request.target;
        std::string path = "/";
        if (request.method != "CONNECT") {
            const auto start = authority.find("://");
            if (start == std::string::npos) {
                co_await answer(client, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
                co_return;
            }
            authority = authority.substr(start + 3);
            const auto slash = authority.find('/');
            if (slash != std::string::npos) {
                path = authority.substr(slash);
                authority = authority.substr(0, slash);
            }
        }
        const std::string host = authority.starts_with('[') ? authority.substr(1, authority.find(']') - 1)
                                                            : authority.substr(0, authority.rfind(':'));
        auto route = s->routes.find(host);
        if (route == s->routes.end()) {
            co_await answer(client,
                            "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
            co_return;
        }
        tcp::socket upstream{client.get_executor()};
        registered keep_upstream{*s, upstream};
        auto [connect_ec] = co_await upstream.async_connect(
            {boost::asio::ip::make_address("127.0.0.1"), route->second}, tuple);
        if (connect_ec) {
            co_await answer(client,
                            "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
            co_return;
        }
        buffer.consume(n);
        if (request.method == "CONNECT") {
            co_await answer(client, "HTTP/1.1 200 Connection established\r\n\r\n");
        } else {
            // Origin form, without our own field, one request per connection.
            std::string forwarded = request.method + " " + path + " HTTP/1.1\r\n";
            std::istringstream lines(head.substr(head.find("\r\n") + 2));
            std::string field_line;
            while (std::getline(lines, field_line)) {
                if (field_line == "\r" || field_line.empty())
                    break;
                const std::string name = field_line.substr(0, field_line.find(':'));
                if (name == "Proxy-Authorization" || name == "Connection")
                    continue;
                forwarded += field_line + "\n";
            }
            forwarded += "Connection: close\r\n\r\n";
            co_await answer(upstream, forwarded);
        }
        if (buffer.size() > 0) {
            std::string rest(boost::asio::buffers_begin(buffer.data()),
                             boost::asio::buffers_end(buffer.data()));
            co_await answer(upstream, rest);
        }
        co_await (relay(client, upstream) || relay(upstream, client));
    }

    std::shared_ptr<state> state_;
};

} // namespace asiocrawl::test
