// Uses only the installed package: serves three pages on 127.0.0.1 with plain Asio, crawls them with
// asiocrawl::crawler on the same io_context, writes JSON Lines records and a WARC file with
// asiocrawl::outputs into the directory given as argument, and exits 0 when the crawl found exactly those
// three pages and both files hold them.
#include <asiocrawl/crawler.hpp>
#include <asiocrawl/outputs/output_set.hpp>
#include <asiocrawl/version.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <string>

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

const std::map<std::string, std::string> pages = {
    {"/", R"(<a href="/a">a</a> <a href="b">b</a>)"},
    {"/a", R"(<a href="/">home</a> <a href="/b">b</a>)"},
    {"/b", "no links"},
};

// One request per connection, then close: the smallest server a crawler can use.
asio::awaitable<void> answer(tcp::socket socket) {
    std::string request;
    auto [ec, n] = co_await asio::async_read_until(socket, asio::dynamic_buffer(request), "\r\n\r\n",
                                                   asio::as_tuple(asio::use_awaitable));
    if (ec)
        co_return;
    const auto target_begin = request.find(' ') + 1;
    const auto target = request.substr(target_begin, request.find(' ', target_begin) - target_begin);
    const auto page = pages.find(target);
    const std::string body = page == pages.end() ? "not found" : page->second;
    const std::string response =
        std::string(page == pages.end() ? "HTTP/1.1 404 Not Found" : "HTTP/1.1 200 OK") +
        "\r\nContent-Type: text/html\r\nContent-Length: " + std::to_string(body.size()) +
        "\r\nConnection: close\r\n\r\n" + body;
    co_await asio::async_write(socket, asio::buffer(response), asio::as_tuple(asio::use_awaitable));
}

asio::awaitable<void> serve(tcp::acceptor& acceptor) {
    for (;;) {
        auto [ec, socket] = co_await acceptor.async_accept(asio::as_tuple(asio::use_awaitable));
        if (ec)
            co_return; // closed: the crawl is over
        asio::co_spawn(acceptor.get_executor(), answer(std::move(socket)), asio::detached);
    }
}

std::size_t lines_in(const std::filesystem::path& path) {
    std::ifstream in{path};
    std::size_t lines = 0;
    for (std::string line; std::getline(in, line);)
        ++lines;
    return lines;
}

asio::awaitable<int> crawl(tcp::acceptor& acceptor, std::filesystem::path out_dir) {
    asiocrawl::crawler_config config;
    config.roots = {"http://127.0.0.1:" + std::to_string(acceptor.local_endpoint().port()) + "/"};
    const auto executor = co_await asio::this_coro::executor;
    asiocrawl::crawler crawler{executor, config};
    asiocrawl::outputs::output_config outputs;
    outputs.records = (out_dir / "records.jsonl").string();
    outputs.warc.path = (out_dir / "crawl.warc.gz").string();
    outputs.mode = asiocrawl::outputs::open_mode::overwrite;
    asiocrawl::outputs::output_set out{executor, outputs};
    std::set<std::string> found;
    out.attach(crawler, [&](const asiocrawl::record& r) {
        if (r.status == 200)
            found.insert(r.url.substr(r.url.rfind('/')));
    });
    out.start();
    const auto [ec, report] = co_await crawler.async_run(asio::as_tuple(asio::use_awaitable));
    out.stop();
    acceptor.close();
    if (ec) {
        std::cerr << "consumer: crawl failed: " << ec.message() << ": " << report.failure << "\n";
        co_return 1;
    }
    if (!out.finish(report).empty())
        co_return 1;
    std::cout << "consumer: asiocrawl " << asiocrawl::version() << " crawled " << report.done << " URLs\n";
    const bool written = lines_in(outputs.records) == 3 && std::filesystem::file_size(outputs.warc.path) > 0;
    co_return found == std::set<std::string>{"/", "/a", "/b"} && report.done == 3 && written ? 0 : 1;
}

} // namespace

int main(int argc, char* argv[]) {
    const std::filesystem::path out_dir = argc > 1 ? argv[1] : "consumer-outputs";
    asio::io_context ctx;
    tcp::acceptor acceptor{ctx, {asio::ip::make_address("127.0.0.1"), 0}};
    asio::co_spawn(ctx, serve(acceptor), asio::detached);
    int exit_code = 1;
    asio::co_spawn(ctx, crawl(acceptor, out_dir), [&](std::exception_ptr e, int code) {
        if (e)
            std::cerr << "consumer: the crawl failed\n";
        else
            exit_code = code;
    });
    ctx.run_for(std::chrono::seconds(60)); // a hang becomes a failure
    return exit_code;
}
