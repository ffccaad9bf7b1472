// asiocrawl-demo-server: serves a generated site (see site.hpp) on 127.0.0.1 until SIGINT or SIGTERM.
// Prints exactly one line, "http://127.0.0.1:<port>/", once it listens, so scripts can read the address; with
// --expected, the ground truth (one request target per line) is written before that line.

#include <asiocrawl_demo/http_server.hpp>
#include <asiocrawl_demo/site.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/program_options.hpp>

#include <csignal>
#include <cstdint>
#include <exception>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>

namespace {

namespace asio = boost::asio;
namespace po = boost::program_options;

constexpr std::string_view program = "asiocrawl-demo-server";

int usage_error(std::string_view message) {
    std::cerr << program << ": " << message << "\nTry '" << program << " --help'.\n";
    return 2;
}

bool write_expected(const std::string& path, const asiocrawl::demo::site& s) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    for (const auto& target : s.expected_requests) {
        out << target << '\n';
    }
    out.close();
    return static_cast<bool>(out);
}

} // namespace

int main(int argc, char** argv) {
    std::int64_t port = 0;
    std::int64_t pages = 200;
    std::int64_t seed = 1;
    std::string expected_path;
    std::int64_t links = 12;
    std::int64_t min_bytes = 2'000;
    std::int64_t max_bytes = 8'000;
    std::string mix;

    po::options_description options("Options");
    options.add_options()                                                                          //
        ("help,h", "print this help and exit")                                                     //
        ("port", po::value(&port)->default_value(0), "TCP port on 127.0.0.1 (0: any free port)")   //
        ("pages", po::value(&pages)->default_value(200), "content pages to generate (at least 1)") //
        ("seed", po::value(&seed)->default_value(1), "generator seed, 0 to 4294967295")            //
        ("links", po::value(&links)->default_value(12), "links per content page, 1 to 10000")      //
        ("min-bytes", po::value(&min_bytes)->default_value(2'000), "smallest page size in bytes")  //
        ("max-bytes", po::value(&max_bytes)->default_value(8'000), "largest page size in bytes")   //
        ("mix", po::value(&mix)->value_name("KIND=W,..."),
         "link mix weights, e.g. redirect=5,query=5,base_pages=10 (kinds: broken fragment off_site off_host "
         "non_http redirect query relative absolute styled base_pages)") //
        ("expected", po::value(&expected_path)->value_name("FILE"),
         "write the targets a correct crawl requests to FILE, one per line");

    po::variables_map vm;
    try {
        // An empty positional description: a stray argument is an error instead of being ignored.
        po::store(po::command_line_parser(argc, argv)
                      .options(options)
                      .positional(po::positional_options_description{})
                      .run(),
                  vm);
        po::notify(vm);
    } catch (const po::error& e) {
        return usage_error(e.what());
    }
    if (vm.count("help") != 0) {
        std::cout
            << "Usage: " << program
            << " [--port N] [--pages N] [--seed N] [--links N] [--min-bytes N] [--max-bytes N]\n"
            << "       [--mix KIND=W,...] [--expected FILE]\n\n"
            << "Serves a generated website with known ground truth on 127.0.0.1 until SIGINT or SIGTERM.\n"
            << "Prints http://127.0.0.1:<port>/ on one line once listening.\n\n"
            << options;
        return 0;
    }
    if (port < 0 || port > 65535) {
        return usage_error("--port must be between 0 and 65535");
    }
    if (pages < 1 || pages > 1'000'000) {
        return usage_error("--pages must be between 1 and 1000000");
    }
    if (seed < 0 || seed > 4294967295LL) {
        return usage_error("--seed must be between 0 and 4294967295");
    }
    if (links < 1 || links > 10'000) {
        return usage_error("--links must be between 1 and 10000");
    }
    if (min_bytes < 0 || max_bytes > 100'000'000 || min_bytes > max_bytes) {
        return usage_error("--min-bytes and --max-bytes must satisfy 0 <= min <= max <= 100000000");
    }
    asiocrawl::demo::site_options site_options;
    try {
        site_options.links = asiocrawl::demo::parse_link_mix(mix);
    } catch (const std::invalid_argument& e) {
        return usage_error(e.what());
    }

    try {
        site_options.links_per_page = static_cast<std::uint32_t>(links);
        site_options.min_page_bytes = static_cast<std::uint32_t>(min_bytes);
        site_options.max_page_bytes = static_cast<std::uint32_t>(max_bytes);
        site_options.pages = static_cast<std::uint32_t>(pages);
        site_options.seed = static_cast<std::uint32_t>(seed);
        const asiocrawl::demo::site site = asiocrawl::demo::generate_site(site_options);

        asio::io_context ctx;
        asiocrawl::demo::http_server server(ctx.get_executor(), asiocrawl::demo::serve_site(site),
                                            static_cast<unsigned short>(port));
        asio::signal_set signals(ctx, SIGINT, SIGTERM);
        signals.async_wait([&server](const boost::system::error_code& ec, int) {
            if (!ec) {
                server.stop();
            }
        });

        if (!expected_path.empty() && !write_expected(expected_path, site)) {
            std::cerr << program << ": cannot write " << expected_path << "\n";
            return 1;
        }
        std::cout << server.origin() << "/" << std::endl;

        ctx.run();
        return 0;
    } catch (const std::exception& e) {
        std::cerr << program << ": " << e.what() << "\n";
        return 1;
    }
}
