// The asiocrawl command: parse options, run one crawl on one io_context thread, print the report.
// Logs and JSON Lines records go through background writers so the io thread never blocks on output.

#include "cli/background_writer.hpp"
#include "cli/options.hpp"

#include <asiocrawl/crawler.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <optional>

#include <sys/resource.h>

namespace {

using namespace asiocrawl;

/// Many connections need many file descriptors; the soft limit is often far below what the system allows.
void raise_open_file_limit() {
    rlimit limit{};
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
        limit.rlim_cur = limit.rlim_max;
        setrlimit(RLIMIT_NOFILE, &limit);
    }
}

std::string_view level_name(log_level level) {
    switch (level) {
    case log_level::debug:
        return "debug";
    case log_level::info:
        return "info";
    case log_level::warning:
        return "warning";
    case log_level::error:
        return "error";
    case log_level::off:
        break;
    }
    return "";
}

int run(const cli::cli_options& options) {
    std::FILE* output_file = nullptr;
    if (!options.output_path.empty()) {
        output_file = std::fopen(options.output_path.c_str(), "w");
        if (!output_file) {
            std::cerr << "asiocrawl: error: cannot open --output file " << options.output_path << ": "
                      << std::strerror(errno) << "\n";
            return 2;
        }
    }
    cli::background_writer log_writer{stderr, false};
    std::optional<cli::background_writer> records_writer;
    if (output_file)
        records_writer.emplace(output_file, true);

    boost::asio::io_context ctx{1};
    std::optional<crawler> crawl;
    try {
        crawl.emplace(ctx.get_executor(), options.crawl);
    } catch (const std::invalid_argument& e) {
        log_writer.close();
        std::cerr << "asiocrawl: error: " << e.what() << "\n";
        return 2;
    }
    crawl->set_logger({cli::log_level_for(options.verbosity), [&](log_level level, std::string_view message) {
                           std::string line = "asiocrawl: ";
                           line += level_name(level);
                           line += ": ";
                           line += message;
                           line += '\n';
                           log_writer.write(std::move(line));
                       }});
    if (records_writer)
        crawl->set_record_sink([&](const record& r) { records_writer->write(to_json_line(r)); });

    // First signal: stop taking URLs, let fetches in flight finish, print the report. Second: stop at once.
    int exit_code = 0;
    boost::asio::signal_set signals{ctx, SIGINT, SIGTERM};
    std::function<void(boost::system::error_code, int)> on_signal = [&](boost::system::error_code ec,
                                                                        int signo) {
        if (ec)
            return;
        if (exit_code != 0) {
            ctx.stop();
            return;
        }
        exit_code = 128 + signo;
        log_writer.write(std::string("asiocrawl: interrupted by ") +
                         (signo == SIGINT ? "SIGINT" : "SIGTERM") +
                         ", finishing fetches in flight (signal again to abort)\n");
        crawl->stop();
        signals.async_wait(on_signal);
    };
    signals.async_wait(on_signal);

    std::optional<report> result;
    std::exception_ptr failure;
    crawl->async_run([&](std::exception_ptr e, report r) {
        failure = e;
        result = std::move(r);
        signals.cancel();
    });
    ctx.run();

    const bool records_ok = !records_writer || records_writer->close();
    log_writer.close();
    if (failure) {
        try {
            std::rethrow_exception(failure);
        } catch (const std::exception& e) {
            std::cerr << "asiocrawl: error: crawl failed: " << e.what() << "\n";
        }
        return 1;
    }
    if (!records_ok)
        std::cerr << "asiocrawl: error: writing " << options.output_path << " failed\n";
    if (result && options.verbosity > -2) {
        write_report(std::cout, *result, options.verbosity > 0);
        std::cout.flush();
    }
    if (!result)
        return exit_code != 0 ? exit_code : 1;
    if (!records_ok && exit_code == 0)
        return 1;
    return exit_code;
}

} // namespace

int main(int argc, char* argv[]) {
    raise_open_file_limit();
    auto outcome = cli::parse_command_line(argc, argv);
    if (auto* print = std::get_if<cli::print_and_exit>(&outcome)) {
        std::cout << print->text;
        return 0;
    }
    if (auto* usage = std::get_if<cli::usage_error>(&outcome)) {
        std::cerr << "asiocrawl: " << usage->message << "\nTry 'asiocrawl --help' for more information.\n";
        return 2;
    }
    return run(std::get<cli::cli_options>(outcome));
}
