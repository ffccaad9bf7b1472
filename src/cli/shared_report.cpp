#include "cli/shared_report.hpp"

#include "store/redis_client.hpp"
#include "store/shared_store.hpp"

#include <asiocrawl/report.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>

namespace asiocrawl::cli {

namespace {

constexpr const char* usage =
    "usage: asiocrawl report --redis redis[s]://host:port/db --crawl-id ID\n"
    "       [--redis-ca-file FILE] [--redis-cert FILE] [--redis-key FILE] [--redis-insecure]";

/// "--name value" or "--name=value" at argv[i]; advances i past what it took.
bool take_option(int argc, char* argv[], int& i, std::string_view name, std::string& value) {
    const std::string_view arg = argv[i];
    if (arg == name && i + 1 < argc) {
        value = argv[++i];
        return true;
    }
    if (arg.starts_with(name) && arg.size() > name.size() && arg[name.size()] == '=') {
        value = std::string(arg.substr(name.size() + 1));
        return true;
    }
    return false;
}

} // namespace

int shared_report_command(int argc, char* argv[]) {
    std::string url;
    std::string crawl_id;
    redis::tls_options tls;
    for (int i = 1; i < argc; ++i) {
        if (take_option(argc, argv, i, "--redis", url) ||
            take_option(argc, argv, i, "--crawl-id", crawl_id) ||
            take_option(argc, argv, i, "--redis-ca-file", tls.ca_file) ||
            take_option(argc, argv, i, "--redis-cert", tls.cert_file) ||
            take_option(argc, argv, i, "--redis-key", tls.key_file))
            continue;
        if (std::string_view(argv[i]) == "-h" || std::string_view(argv[i]) == "--help") {
            std::cout
                << usage
                << "\nPrints the report of a shared crawl (docs/DEPLOY.md) from its Redis state, as its "
                   "workers left it.\nThe Redis password comes from ASIOCRAWL_REDIS_PASSWORD.\n";
            return 0;
        }
        if (std::string_view(argv[i]) == "--redis-insecure") {
            tls.insecure = true;
            continue;
        }
        std::cerr << "asiocrawl report: unknown argument " << argv[i] << "\n" << usage << "\n";
        return 2;
    }
    if (url.empty() || crawl_id.empty()) {
        std::cerr << "asiocrawl report: --redis and --crawl-id are both needed\n" << usage << "\n";
        return 2;
    }
    const char* password = std::getenv("ASIOCRAWL_REDIS_PASSWORD");
    auto where = redis::parse_url(url, password ? password : "");
    if (!where.value) {
        std::cerr << "asiocrawl report: --redis: " << where.error << "\n";
        return 2;
    }
    const bool any_tls =
        !tls.ca_file.empty() || !tls.cert_file.empty() || !tls.key_file.empty() || tls.insecure;
    if (any_tls && !where.value->tls) {
        std::cerr
            << "asiocrawl report: --redis-ca-file, --redis-cert, --redis-key and --redis-insecure need a "
               "rediss:// URL\n";
        return 2;
    }
    if (tls.insecure)
        std::cerr << "asiocrawl report: warning: --redis-insecure: the certificate of "
                  << redis::redacted(*where.value) << " is not verified\n";
    boost::asio::io_context ctx{1};
    redis::client_options options;
    options.where = *where.value;
    options.tls = tls;
    options.give_up_after = std::chrono::seconds(10);
    std::optional<redis::client> client;
    try {
        client.emplace(ctx.get_executor(), options);
    } catch (const redis::tls_file_error& e) {
        const std::string flag = e.which == "ca_file"    ? "--redis-ca-file"
                                 : e.which == "key_file" ? "--redis-key"
                                                         : "--redis-cert";
        std::cerr << "asiocrawl report: " << flag << ": " << e.what() << "\n";
        return 2;
    }
    detail::shared_store::settings settings;
    settings.crawl_id = crawl_id;
    detail::shared_store store(*client, settings);
    auto status = boost::asio::co_spawn(ctx, store.read_status(), boost::asio::use_future);
    ctx.run();
    try {
        const auto s = status.get();
        if (s.counters.empty()) {
            std::cerr << "asiocrawl report: no crawl " << crawl_id << " at " << redis::redacted(*where.value)
                      << " (no instance has committed anything under that id)\n";
            return 2;
        }
        std::vector<std::string> skipped;
        const auto combined = detail::combined_report(s.counters, &skipped);
        for (const auto& instance : skipped)
            std::cerr << "asiocrawl report: the counters of instance " << instance
                      << " do not parse: left out\n";
        write_report(std::cout, combined);
        // A continuous crawl is never over: with nothing unfinished, it waits for its next revisit.
        const bool idle = s.unfinished == 0 && s.leased == 0;
        std::cout << "Instances: " << s.counters.size() << "\n"
                  << "Unfinished: " << s.unfinished << " (" << s.leased << " leased now)"
                  << (idle && s.scheduled == 0 ? ": the crawl is over" : "") << "\n";
        if (s.scheduled > 0)
            std::cout << "Scheduled: " << s.scheduled << " URLs wait for their revisit (continuous)\n";
        return 0;
    } catch (const redis::unreachable& e) {
        // The crawl's one rule (docs/DEPLOY.md, "Exit status"): a store that does not answer is a failure
        // (1), one that refuses (a wrong password) a usage error (2).
        std::cerr << "asiocrawl report: " << e.what() << "\n";
        return 1;
    } catch (const std::exception& e) {
        std::cerr << "asiocrawl report: " << e.what() << "\n";
        return 2;
    }
}

} // namespace asiocrawl::cli
