#include "cli/options.hpp"

#include <asiocrawl/version.hpp>

#include <boost/program_options.hpp>

#include <cmath>
#include <sstream>

namespace asiocrawl::cli {

namespace po = boost::program_options;

namespace {

constexpr const char* usage_line =
    "Usage: asiocrawl [options] ROOT...\n"
    "Crawl the websites at ROOT (a URL; \"example.com\" means http://example.com/)\n"
    "and print a report of every URL fetched.\n";

/// -v, -vv, -q, --verbose and --quiet may repeat, which Program_options does not count: take them out first.
int take_verbosity(std::vector<std::string>& args) {
    int verbosity = 0;
    std::vector<std::string> rest;
    bool after_double_dash = false;
    for (auto& arg : args) {
        if (!after_double_dash && arg == "--") {
            after_double_dash = true;
        } else if (!after_double_dash && arg == "--verbose") {
            ++verbosity;
            continue;
        } else if (!after_double_dash && arg == "--quiet") {
            --verbosity;
            continue;
        } else if (!after_double_dash && arg.size() >= 2 && arg[0] == '-' &&
                   arg.find_first_not_of(arg[1], 1) == std::string::npos &&
                   (arg[1] == 'v' || arg[1] == 'q')) {
            const int count = static_cast<int>(arg.size() - 1);
            verbosity += arg[1] == 'v' ? count : -count;
            continue;
        }
        rest.push_back(std::move(arg));
    }
    args = std::move(rest);
    return verbosity;
}

std::chrono::milliseconds seconds_option(double seconds, const char* name) {
    if (!(seconds > 0) || !std::isfinite(seconds) || seconds > 86'400)
        throw po::error(std::string("--") + name + " must be a number of seconds between 0 and 86400, got " +
                        std::to_string(seconds));
    return std::chrono::milliseconds{static_cast<long long>(std::llround(seconds * 1000))};
}

} // namespace

log_level log_level_for(int verbosity) noexcept {
    if (verbosity <= -2)
        return log_level::off;
    if (verbosity == -1)
        return log_level::error;
    if (verbosity == 0)
        return log_level::warning;
    if (verbosity == 1)
        return log_level::info;
    return log_level::debug;
}

parse_outcome parse_command_line(int argc, const char* const argv[]) {
    std::vector<std::string> args(argv + (argc > 0 ? 1 : 0), argv + argc);
    cli_options options;
    options.verbosity = take_verbosity(args);
    const crawler_config defaults;

    std::vector<std::string> roots;
    double connect_timeout = 0, request_timeout = 0;
    int max_depth = -1;
    long long max_pages = -1;
    // Signed on purpose: Program_options reads "-5" into an unsigned as a huge number.
    long long max_tasks = static_cast<long long>(defaults.max_tasks);
    long long max_body_bytes = static_cast<long long>(defaults.fetch.max_body_bytes);
    bool strict = false, lenient = false;

    po::options_description crawl{"Crawl"};
    crawl.add_options()("max-tasks", po::value(&max_tasks)->default_value(max_tasks),
                        "worker coroutines: the most requests in flight at once")(
        "max-redirect", po::value(&options.crawl.max_redirect)->default_value(defaults.max_redirect),
        "redirects followed in one chain")(
        "max-tries", po::value(&options.crawl.max_tries)->default_value(defaults.max_tries),
        "attempts per URL when the network fails")(
        "max-depth", po::value(&max_depth), "deepest link level crawled; roots are 0 (default: unlimited)")(
        "max-pages", po::value(&max_pages), "most distinct URLs queued (default: unlimited)");

    po::options_description scope{"Scope"};
    scope.add_options()("strict", po::bool_switch(&strict),
                        "a link's host must equal a root's host, ignoring www. (default)")(
        "lenient", po::bool_switch(&lenient), "a link's host may be any host of a root's registrable domain")(
        "exclude", po::value(&options.crawl.exclude), "skip URLs in which this regular expression is found")(
        "include", po::value(&options.crawl.include),
        "crawl only URLs in which this regular expression is found");

    po::options_description fetch{"Fetching"};
    fetch.add_options()("connect-timeout", po::value(&connect_timeout)->default_value(10, "10"),
                        "seconds for DNS and TCP connect")(
        "timeout", po::value(&request_timeout)->default_value(30, "30"),
        "seconds for one request and its whole response")(
        "max-body-size", po::value(&max_body_bytes)->default_value(max_body_bytes),
        "largest response body accepted, in bytes")(
        "user-agent",
        po::value(&options.crawl.fetch.user_agent)
            ->default_value(default_user_agent(fetch_config{}.contact_url)),
        "User-Agent request header");

    po::options_description output{"Output"};
    output.add_options()("output,o", po::value(&options.output_path),
                         "write every record to this file as JSON Lines")(
        "verbose,v", "more logging on stderr, and a detailed report (repeatable: -vv for debug)")(
        "quiet,q", "less logging on stderr (repeatable: -qq silences logs and the report)")(
        "help,h", "print this help and exit")("version", "print the version and exit");

    po::options_description hidden;
    hidden.add_options()("root", po::value(&roots));
    po::positional_options_description positional;
    positional.add("root", -1);

    po::options_description visible;
    visible.add(crawl).add(scope).add(fetch).add(output);
    po::options_description all;
    all.add(visible).add(hidden);

    try {
        po::variables_map vm;
        po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
        if (vm.count("help")) {
            std::ostringstream text;
            text << usage_line << "\n"
                 << visible << "\nExit status: 0 crawl completed, 2 usage error, "
                 << "130/143 interrupted by SIGINT/SIGTERM (report still printed).\n";
            return print_and_exit{text.str()};
        }
        if (vm.count("version"))
            return print_and_exit{"asiocrawl " + std::string(version()) + "\n"};
        po::notify(vm);

        if (roots.empty())
            return usage_error{"no ROOT given"};
        if (strict && lenient)
            return usage_error{"--strict and --lenient exclude each other"};
        if (max_tasks < 1)
            return usage_error{"--max-tasks must be 1 or more"};
        if (max_body_bytes < 1)
            return usage_error{"--max-body-size must be 1 or more"};
        options.crawl.max_tasks = static_cast<std::size_t>(max_tasks);
        options.crawl.fetch.max_body_bytes = static_cast<std::uint64_t>(max_body_bytes);
        options.crawl.roots = std::move(roots);
        options.crawl.scope = lenient ? host_scope::lenient : host_scope::strict;
        options.crawl.fetch.connect_timeout = seconds_option(connect_timeout, "connect-timeout");
        options.crawl.fetch.request_timeout = seconds_option(request_timeout, "timeout");
        if (vm.count("max-depth")) {
            if (max_depth < 0)
                return usage_error{"--max-depth must be 0 or more"};
            options.crawl.max_depth = max_depth;
        }
        if (vm.count("max-pages")) {
            if (max_pages < 1)
                return usage_error{"--max-pages must be 1 or more"};
            options.crawl.max_pages = static_cast<std::size_t>(max_pages);
        }
    } catch (const po::error& e) {
        return usage_error{e.what()};
    }

    // Records are kept only to print them in the report; -qq prints none, so a long crawl need not hold them.
    options.crawl.keep_records = options.verbosity > -2;
    if (auto problems = validate(options.crawl); !problems.empty())
        return usage_error{problems.front()};
    return options;
}

} // namespace asiocrawl::cli
