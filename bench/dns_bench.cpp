// asiocrawl-bench-dns: DNS at crawl scale. A DNS server written for the tests (test/support/dns_server.hpp)
// answers every one of N host names (h0.bench.test ...) after a fixed delay, all pointing at one HTTP server
// on 127.0.0.1; both run on a thread of their own. A crawl on the main thread starts from the N roots, each
// of whose pages links to three more on its host, with max_tasks workers. Printed: the crawl's wall time, the
// ideal with perfect overlap (N x delay / max_tasks), what serial resolution would take (N x delay), CPU
// time, and the questions the server got per name (once per TTL: one A and one AAAA).

#include "support/dns_server.hpp"

#include <asiocrawl/crawler.hpp>
#include <asiocrawl_demo/http_server.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/program_options.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <iostream>
#include <thread>

namespace asio = boost::asio;
namespace po = boost::program_options;
using namespace asiocrawl;

namespace {

double cpu_seconds() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
           static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

std::string page_of(const std::string& target) {
    if (target != "/")
        return "<html><body>leaf</body></html>";
    return "<html><body><a href=\"/a\">a</a><a href=\"/b\">b</a><a href=\"/c\">c</a></body></html>";
}

} // namespace

int main(int argc, char** argv) {
    std::size_t names = 500, max_tasks = 100;
    long delay_ms = 100, ttl = 300;
    po::options_description options("Options");
    options.add_options()("help,h", "print this help and exit")(
        "names", po::value(&names)->default_value(500), "distinct host names (one root each)")(
        "delay-ms", po::value(&delay_ms)->default_value(100), "the resolver's delay before each answer")(
        "ttl", po::value(&ttl)->default_value(300), "TTL of the answers, in seconds")(
        "max-tasks", po::value(&max_tasks)->default_value(100), "the crawl's workers");
    po::variables_map vm;
    try {
        po::store(po::parse_command_line(argc, argv, options), vm);
        po::notify(vm);
    } catch (const po::error& e) {
        std::cerr << "asiocrawl-bench-dns: " << e.what() << "\n";
        return 2;
    }
    if (vm.count("help")) {
        std::cout << "Usage: asiocrawl-bench-dns [options]\n\n" << options;
        return 0;
    }

    // The servers' thread.
    asio::io_context servers_ctx{1};
    auto work = asio::make_work_guard(servers_ctx);
    test::dns_server dns{servers_ctx.get_executor(),
                         [&](const std::string& name) -> std::optional<test::dns_answer> {
                             if (!name.ends_with(".bench.test"))
                                 return std::nullopt;
                             test::dns_answer answer;
                             answer.ipv4 = {"127.0.0.1"};
                             answer.ttl = static_cast<std::uint32_t>(ttl);
                             answer.delay = std::chrono::milliseconds(delay_ms);
                             return answer;
                         }};
    demo::http_server http{
        servers_ctx.get_executor(),
        [](const demo::http_request& req) -> asio::awaitable<std::optional<demo::http_response>> {
            demo::http_response res{boost::beast::http::status::ok, 11};
            res.set(boost::beast::http::field::content_type, "text/html");
            res.body() = page_of(std::string(req.target()));
            co_return res;
        }};
    std::thread servers([&] { servers_ctx.run(); });

    crawler_config config;
    for (std::size_t i = 0; i < names; ++i)
        config.roots.push_back("http://h" + std::to_string(i) + ".bench.test:" + std::to_string(http.port()) +
                               "/");
    config.max_tasks = max_tasks;
    config.robots.obey = false;
    config.keep_records = false;
    config.fetch.dns.servers = {dns.address()};

    asio::io_context ctx{1};
    crawler crawl{ctx.get_executor(), config};
    std::size_t failed = 0, records = 0;
    crawl.set_record_sink([&](const record& r) {
        ++records;
        failed += r.failed() ? 1 : 0;
    });
    const double cpu_before = cpu_seconds();
    const auto started = std::chrono::steady_clock::now();
    std::optional<report> result;
    crawl.async_run([&](boost::system::error_code ec, report r) {
        if (ec)
            throw boost::system::system_error(ec, r.failure);
        result = std::move(r);
    });
    ctx.run();
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const double cpu = cpu_seconds() - cpu_before;

    // Read the server's counters on its own thread, then stop it.
    std::promise<std::pair<std::size_t, std::size_t>> counted;
    asio::post(servers_ctx, [&] {
        std::size_t most = 0, total = 0;
        for (const auto& [key, count] : dns.counts()) {
            most = std::max(most, count);
            total += count;
        }
        counted.set_value({most, total});
        dns.stop();
        http.stop();
    });
    const auto [most_per_question, total_questions] = counted.get_future().get();
    work.reset();
    servers.join();

    const double ideal = static_cast<double>(names) * static_cast<double>(delay_ms) / 1000.0 /
                         static_cast<double>(std::min(max_tasks, names));
    std::cout << "names " << names << ", answers delayed " << delay_ms << " ms, TTL " << ttl
              << " s, max_tasks " << max_tasks << "\n"
              << "records " << records << " (failed " << failed << ")\n"
              << "wall " << wall << " s (ideal overlap " << ideal << " s; serial resolution alone "
              << static_cast<double>(names) * static_cast<double>(delay_ms) / 1000.0 << " s)\n"
              << "CPU " << cpu << " s (user+sys, crawler and servers)\n"
              << "DNS questions " << total_questions << " (A and AAAA per name), most for one name and type "
              << most_per_question << "\n";
    return failed == 0 && most_per_question <= 1 ? 0 : 1;
}
