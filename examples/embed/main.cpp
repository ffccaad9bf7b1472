// An Asio application that embeds asiocrawl. One io_context thread runs, side by side:
//   - the application's own HTTP server (the demo site, on 127.0.0.1), which the crawl fetches from,
//   - the application's own heartbeat timer, which reads the crawl's progress,
//   - the application's own signal handling (the library installs none): SIGINT/SIGTERM stop the crawl,
//   - the crawl itself, co_awaited from the application's coroutine.
// Nothing blocks: if the crawler ever held the thread, the server could not answer it and the crawl would
// stall. Usage: asiocrawl_embed_example [URL]   (without a URL it crawls the site its own server serves)

#include <asiocrawl/crawler.hpp>
#include <asiocrawl_demo/site.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <csignal>
#include <exception>
#include <iostream>
#include <optional>
#include <string>

namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

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
            std::cout << "embed: heartbeat " << ++heartbeats << ": " << p.records << " records, "
                      << p.in_flight << " in flight, " << p.queued << " queued\n";
        }
    }

    asio::awaitable<void> run() {
        const auto site = asiocrawl::demo::generate_site({.pages = 300});
        std::optional<asiocrawl::demo::http_server> server;
        asiocrawl::crawler_config config;
        if (url) {
            config.roots = {*url};
        } else {
            server.emplace(ctx.get_executor(), asiocrawl::demo::serve_site(site));
            config.roots = {server->origin() + "/"};
            std::cout << "embed: serving a " << site.resources.size() << "-resource site at "
                      << config.roots[0] << " (a complete crawl makes " << site.expected_requests.size()
                      << " requests)\n";
        }
        config.max_tasks = 20;

        asiocrawl::crawler crawl{ctx.get_executor(), config};
        std::size_t errors = 0;
        crawl.set_record_sink([&](const asiocrawl::record& r) {
            if (r.error)
                ++errors;
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
        const asiocrawl::report report = co_await crawl.async_run(asio::use_awaitable);
        signals.cancel();

        std::cout << "embed: crawl finished: " << report.done << " records, " << errors << " with errors, "
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
