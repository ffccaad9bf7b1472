// An Asio application that embeds asiocrawl. One io_context thread runs, side by side:
//   - the application's own HTTP server (the demo site, on 127.0.0.1), which the crawl fetches from,
//   - the application's own heartbeat timer, which reads the crawl's progress,
//   - the application's own signal handling (the library installs none): SIGINT/SIGTERM stop the crawl,
//   - the crawl itself, co_awaited from the application's coroutine.
// Nothing blocks: if the crawler ever held the thread, the server could not answer it and the crawl would
// stall. Usage: asiocrawl_embed_example [URL]   (without a URL it crawls the site its own server serves)
//
// It uses only the installed package (find_package(asiocrawl); asiocrawl::asiocrawl for the crawler,
// asiocrawl::outputs for the progress line): the website is the application's own small Asio server.

#include <asiocrawl/crawler.hpp>
#include <asiocrawl/outputs/progress.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <chrono>
#include <csignal>
#include <exception>
#include <iostream>
#include <optional>
#include <string>

namespace asio = boost::asio;
using asio::ip::tcp;
using namespace std::chrono_literals;

namespace {

/// The application's own website: pages /p0 ... /p<N-1>, page i linking to pages 2i+1 and 2i+2 (a binary
/// tree, so every page is reachable from /p0), and /p0 also to /missing, which answers 404. A complete crawl
/// makes one request per page, one for /missing and one for /robots.txt (404 too: everything allowed);
/// robots.txt makes no record, so records = pages + 1.
class site_server {
public:
    site_server(asio::any_io_executor executor, int pages)
        : acceptor_{executor, {asio::ip::make_address("127.0.0.1"), 0}}
        , pages_{pages} {
        asio::co_spawn(executor, accept_loop(), asio::detached);
    }

    std::string origin() const {
        return "http://127.0.0.1:" + std::to_string(acceptor_.local_endpoint().port());
    }
    int pages() const { return pages_; }
    std::size_t requests() const { return requests_; }
    std::size_t connections() const { return connections_; }
    void stop() { acceptor_.close(); }

private:
    asio::awaitable<void> accept_loop() {
        for (;;) {
            auto [ec, socket] = co_await acceptor_.async_accept(asio::as_tuple(asio::use_awaitable));
            if (ec)
                co_return; // closed: the application is done
            ++connections_;
            asio::co_spawn(acceptor_.get_executor(), serve(std::move(socket)), asio::detached);
        }
    }

    // HTTP/1.1 with keep-alive, GET only: enough for a crawler, and small enough to read at a glance.
    asio::awaitable<void> serve(tcp::socket socket) {
        std::string buffer;
        for (;;) {
            auto [ec, n] = co_await asio::async_read_until(socket, asio::dynamic_buffer(buffer), "\r\n\r\n",
                                                           asio::as_tuple(asio::use_awaitable));
            if (ec)
                co_return;
            const std::string head = buffer.substr(0, n);
            buffer.erase(0, n);
            ++requests_;
            const auto target_begin = head.find(' ') + 1;
            const std::string target = head.substr(target_begin, head.find(' ', target_begin) - target_begin);
            const std::string response = answer(target);
            auto [write_ec, written] = co_await asio::async_write(socket, asio::buffer(response),
                                                                  asio::as_tuple(asio::use_awaitable));
            if (write_ec)
                co_return;
        }
    }

    std::string answer(const std::string& target) const {
        int page = -1;
        if (target.size() > 2 && target.starts_with("/p") &&
            target.find_first_not_of("0123456789", 2) == std::string::npos && target.size() < 9)
            page = std::stoi(target.substr(2));
        if (page < 0 || page >= pages_)
            return "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 9\r\n\r\nnot found";
        std::string body = "<html><body><h1>page " + std::to_string(page) + "</h1>";
        for (int child : {2 * page + 1, 2 * page + 2})
            if (child < pages_)
                body += "<a href=\"/p" + std::to_string(child) + "\">p" + std::to_string(child) + "</a> ";
        if (page == 0)
            body += "<a href=\"/missing\">a broken link</a>";
        body += "</body></html>";
        return "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: " +
               std::to_string(body.size()) + "\r\n\r\n" + body;
    }

    tcp::acceptor acceptor_;
    int pages_;
    std::size_t requests_ = 0;
    std::size_t connections_ = 0;
};

struct application {
    asio::io_context& ctx;
    std::optional<std::string> url{}; // crawl this instead of our own site
    // The heartbeat outlives any one crawl: it reads the crawler only while `crawling` points at it.
    asio::steady_timer heartbeat_timer{ctx};
    const asiocrawl::crawler* crawling = nullptr;
    std::size_t heartbeats = 0;
    int exit_code = 0;

    asio::awaitable<void> heartbeat() {
        while (crawling) {
            heartbeat_timer.expires_after(100ms);
            co_await heartbeat_timer.async_wait(asio::as_tuple(asio::use_awaitable));
            if (!crawling)
                break;
            const auto p = crawling->progress(); // safe: we are on the crawler's executor
            std::cout << "embed: heartbeat " << ++heartbeats << ": " << asiocrawl::outputs::progress_line(p)
                      << "\n";
        }
    }

    asio::awaitable<void> run() {
        std::optional<site_server> server;
        asiocrawl::crawler_config config;
        if (url) {
            config.roots = {*url};
        } else {
            server.emplace(ctx.get_executor(), 300);
            config.roots = {server->origin() + "/p0"};
            // robots.txt is one more request, without a record of its own.
            std::cout << "embed: serving a " << server->pages() + 1 << "-resource site at " << config.roots[0]
                      << " (a complete crawl makes " << server->pages() + 1 << " records and "
                      << server->pages() + 2 << " requests)\n";
        }
        config.max_tasks = 20;

        asiocrawl::crawler crawl{ctx.get_executor(), config};
        // A failed URL: a network error, or an HTTP error status (the site's /missing answers 404 on
        // purpose).
        std::size_t failed = 0;
        crawl.set_record_sink([&](const asiocrawl::record& r) {
            if (r.error || r.status >= 400)
                ++failed;
        });
        crawl.set_logger({asiocrawl::log_level::warning, [](asiocrawl::log_level, std::string_view message) {
                              std::cerr << "embed: crawler says: " << message << "\n";
                          }});

        asio::signal_set signals{ctx, SIGINT, SIGTERM};
        signals.async_wait([&](boost::system::error_code ec, int) {
            if (!ec) {
                std::cout << "embed: signal received, stopping the crawl\n";
                exit_code = 130;
                crawl.stop();
            }
        });

        crawling = &crawl;
        struct stop_heartbeat { // also when async_run throws: the heartbeat must never see a dead crawler
            application& app;
            ~stop_heartbeat() {
                app.crawling = nullptr;
                app.heartbeat_timer.cancel();
            }
        } heartbeat_guard{*this};
        asio::co_spawn(ctx, heartbeat(), asio::detached);

        std::cout << "embed: crawling " << config.roots[0] << "\n";
        // The completion is void(error_code, report): as_tuple takes both, where use_awaitable alone would
        // throw the code as a boost::system::system_error.
        const auto [ec, report] = co_await crawl.async_run(asio::as_tuple(asio::use_awaitable));
        signals.cancel();
        if (ec) {
            // A crawl failure (a state directory of another crawl, a full disk, Redis unreachable...): the
            // code says which (ec == asiocrawl::error::store_write_failed), report.failure says where.
            std::cerr << "embed: crawl failed: " << ec.message() << ": " << report.failure << "\n";
            exit_code = 1;
        }

        std::cout << "embed: crawl finished: " << report.done << " records, " << failed << " failed, "
                  << report.todo << " left to do\n";
        if (server) {
            std::cout << "embed: my server answered " << server->requests() << " requests on "
                      << server->connections() << " connections while the crawl ran\n";
            server->stop();
        }
    }
};

} // namespace

int main(int argc, char* argv[]) {
    asio::io_context ctx{1};
    application app{ctx};
    if (argc > 1)
        app.url = argv[1];
    std::exception_ptr failure;
    asio::co_spawn(ctx, app.run(), [&](std::exception_ptr e) { failure = e; });
    ctx.run(); // returns once the crawl, the server and the heartbeat are all done
    if (failure) {
        try {
            std::rethrow_exception(failure);
        } catch (const std::exception& e) {
            std::cerr << "embed: error: " << e.what() << "\n";
        }
        return 1;
    }
    std::cout << "embed: heartbeat ticked " << app.heartbeats << " times alongside the crawl\n";
    return app.exit_code;
}
