// asiocrawl-bench-latency-server: an HTTP/1.1 server on 127.0.0.1 that answers every page after a fixed
// delay, for measuring how well a crawler overlaps waiting (latency benchmark) and what each fetch in flight
// costs (memory benchmark). One thread, one coroutine per connection, nothing kept per request but a timer,
// so 20,000+ connections are cheap; the open-files soft limit is raised to the hard one at start.
//
// The site is a tree numbered breadth-first: "/" (page 0) links to pages 1..root_fanout, every other page to
// the next `fanout` pages, up to `pages` pages in all; "/n/<i>" is page i. GET /__stats answers at once with
// counters as JSON. On SIGINT/SIGTERM the counters are printed on stderr and the server exits.
//
// With --tls-ca-out FILE it speaks HTTPS with a throwaway CA and certificate for 127.0.0.1 made at start (the
// tests' own PKI helper), and writes the CA to FILE for the crawler's --ca-file: the TLS memory benchmark.

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/program_options.hpp>

#include "support/tls_certs.hpp"

#include <openssl/ssl.h>

#include <sys/resource.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace po = boost::program_options;
using asio::ip::tcp;

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

struct tree {
    std::uint64_t pages = 10'000;
    std::uint64_t fanout = 50;
    std::uint64_t root_fanout = 50;
    std::size_t page_bytes = 2'000;

    /// First child of page i (children are consecutive), and how many.
    std::pair<std::uint64_t, std::uint64_t> children(std::uint64_t i) const {
        const std::uint64_t first = i == 0 ? 1 : root_fanout + (i - 1) * fanout + 1;
        const std::uint64_t count = i == 0 ? root_fanout : fanout;
        if (first >= pages)
            return {first, 0};
        return {first, std::min(count, pages - first)};
    }

    std::string page(std::uint64_t i) const {
        std::string body =
            "<!DOCTYPE html>\n<html><head><title>Page " + std::to_string(i) + "</title></head><body>\n<ul>\n";
        const auto [first, count] = children(i);
        for (std::uint64_t c = first; c < first + count; ++c)
            body += "<li><a href=\"/n/" + std::to_string(c) + "\">" + std::to_string(c) + "</a></li>\n";
        body += "</ul>\n<p>";
        constexpr std::string_view tail = "</p></body></html>\n";
        while (body.size() + tail.size() < page_bytes)
            body += "lorem ipsum ";
        return body += tail;
    }

    /// The page a target names: "/" or "/n/<i>" with i < pages.
    std::optional<std::uint64_t> page_of(std::string_view target) const {
        if (target == "/")
            return 0;
        if (target.substr(0, 3) != "/n/")
            return std::nullopt;
        std::uint64_t i = 0;
        const auto digits = target.substr(3);
        const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), i);
        if (ec != std::errc{} || end != digits.data() + digits.size() || i == 0 || i >= pages)
            return std::nullopt;
        return i;
    }
};

struct counters {
    std::uint64_t requests = 0;
    std::uint64_t in_flight = 0;
    std::uint64_t peak_in_flight = 0;
    std::uint64_t connections = 0;
    std::uint64_t open_connections = 0;
    std::uint64_t peak_open_connections = 0;
    std::uint64_t not_found = 0;

    std::string json() const {
        return "{\"requests\":" + std::to_string(requests) + ",\"in_flight\":" + std::to_string(in_flight) +
               ",\"peak_in_flight\":" + std::to_string(peak_in_flight) +
               ",\"connections\":" + std::to_string(connections) +
               ",\"open_connections\":" + std::to_string(open_connections) +
               ",\"peak_open_connections\":" + std::to_string(peak_open_connections) +
               ",\"not_found\":" + std::to_string(not_found) + "}\n";
    }
};

struct server {
    tree site;
    std::chrono::milliseconds delay{50};
    counters count;

    /// Set for HTTPS.
    asio::ssl::context* tls = nullptr;

    asio::awaitable<void> serve_tls(tcp::socket socket) {
        asio::ssl::stream<tcp::socket> stream(std::move(socket), *tls);
        const auto [ec] = co_await stream.async_handshake(asio::ssl::stream_base::server, use_tuple);
        if (!ec)
            co_await serve(stream);
    }

    asio::awaitable<void> serve_plain(tcp::socket socket) { co_await serve(socket); }

    template <class Stream>
    asio::awaitable<void> serve(Stream& socket) {
        ++count.connections;
        count.peak_open_connections = std::max(count.peak_open_connections, ++count.open_connections);
        beast::flat_buffer buffer;
        asio::steady_timer timer(socket.get_executor());
        for (;;) {
            http::request<http::empty_body> req;
            const auto [read_ec, read_bytes] = co_await http::async_read(socket, buffer, req, use_tuple);
            if (read_ec)
                break;
            http::response<http::string_body> res{http::status::ok, req.version()};
            if (req.target() == "/__stats") {
                res.set(http::field::content_type, "application/json");
                res.body() = count.json();
            } else {
                ++count.requests;
                count.peak_in_flight = std::max(count.peak_in_flight, ++count.in_flight);
                timer.expires_after(delay);
                const auto [wait_ec] = co_await timer.async_wait(use_tuple);
                --count.in_flight;
                if (wait_ec)
                    break;
                if (const auto page = site.page_of(req.target())) {
                    res.set(http::field::content_type, "text/html; charset=utf-8");
                    res.body() = site.page(*page);
                } else {
                    ++count.not_found;
                    res.result(http::status::not_found);
                    res.set(http::field::content_type, "text/plain");
                    res.body() = "not found\n";
                }
            }
            res.keep_alive(req.keep_alive());
            res.prepare_payload();
            const auto [write_ec, write_bytes] = co_await http::async_write(socket, res, use_tuple);
            if (write_ec || !res.keep_alive())
                break;
        }
        --count.open_connections;
    }

    asio::awaitable<void> accept(tcp::acceptor& acceptor) {
        for (;;) {
            auto [ec, socket] = co_await acceptor.async_accept(use_tuple);
            if (ec == asio::error::operation_aborted)
                co_return;
            if (ec)
                continue; // EMFILE and friends: keep serving the connections we have
            socket.set_option(tcp::no_delay(true));
            if (tls)
                asio::co_spawn(acceptor.get_executor(), serve_tls(std::move(socket)), asio::detached);
            else
                asio::co_spawn(acceptor.get_executor(), serve_plain(std::move(socket)), asio::detached);
        }
    }
};

/// The soft open-files limit up to the hard one: every connection is a descriptor.
rlim_t raise_open_files_limit() {
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
        limit.rlim_cur = limit.rlim_max;
        ::setrlimit(RLIMIT_NOFILE, &limit);
    }
    ::getrlimit(RLIMIT_NOFILE, &limit);
    return limit.rlim_cur;
}

} // namespace

int main(int argc, char** argv) {
    server s;
    std::int64_t port = 0;
    std::int64_t delay_ms = 50;
    std::string tls_ca_out;
    po::options_description options("Options");
    options.add_options()                                                                             //
        ("help,h", "print this help and exit")                                                        //
        ("port", po::value(&port)->default_value(0), "port on 127.0.0.1 (0: any free port)")          //
        ("delay-ms", po::value(&delay_ms)->default_value(50), "delay before every answer, in ms")     //
        ("pages", po::value(&s.site.pages)->default_value(10'000), "pages in the tree")               //
        ("fanout", po::value(&s.site.fanout)->default_value(50), "links per page")                    //
        ("root-fanout", po::value(&s.site.root_fanout), "links on the root page (default: --fanout)") //
        ("page-bytes", po::value(&s.site.page_bytes)->default_value(2'000), "smallest page size")     //
        ("tls-ca-out", po::value(&tls_ca_out), "serve HTTPS; write the throwaway CA (PEM) to this file");
    try {
        po::variables_map vm;
        po::store(po::parse_command_line(argc, argv, options), vm);
        if (vm.count("help") != 0) {
            std::cout << "Usage: asiocrawl-bench-latency-server [options]\n\n"
                      << "Serves a tree of pages on 127.0.0.1, each answer delayed. Prints "
                         "http://127.0.0.1:<port>/ once listening.\n\n"
                      << options;
            return 0;
        }
        po::notify(vm);
        if (vm.count("root-fanout") == 0)
            s.site.root_fanout = s.site.fanout;
    } catch (const po::error& e) {
        std::cerr << "asiocrawl-bench-latency-server: " << e.what() << "\n";
        return 2;
    }
    if (port < 0 || port > 65535 || delay_ms < 0 || s.site.pages < 1 || s.site.fanout < 1 ||
        s.site.root_fanout < 1) {
        std::cerr << "asiocrawl-bench-latency-server: an option is out of range\n";
        return 2;
    }
    s.delay = std::chrono::milliseconds(delay_ms);
    const auto open_files = raise_open_files_limit();

    std::optional<asio::ssl::context> tls;
    if (!tls_ca_out.empty()) {
        const auto pki = asiocrawl::test::make_test_pki({"127.0.0.1", "localhost"});
        std::ofstream(tls_ca_out) << pki.ca_pem;
        tls.emplace(asiocrawl::test::make_server_context(pki));
        SSL_CTX_set_mode(tls->native_handle(), SSL_MODE_RELEASE_BUFFERS);
        s.tls = &*tls;
    }

    asio::io_context ctx(1);
    tcp::acceptor acceptor(ctx, {asio::ip::make_address_v4("127.0.0.1"), static_cast<unsigned short>(port)});
    acceptor.listen(asio::socket_base::max_listen_connections);
    asio::co_spawn(ctx, s.accept(acceptor), asio::detached);
    asio::signal_set signals(ctx, SIGINT, SIGTERM);
    signals.async_wait([&](const boost::system::error_code&, int) { ctx.stop(); });
    std::cerr << "open files limit " << open_files << "\n";
    std::cout << (tls ? "https" : "http") << "://127.0.0.1:" << acceptor.local_endpoint().port() << "/"
              << std::endl;
    ctx.run();
    std::cerr << s.count.json();
    return 0;
}
