// The asiocrawl command: merge the config layers, run one crawl on one io_context thread, print the report.
// Logs and JSON Lines records go through background writers so the io thread never blocks on output.
//
// Shutdown: the first SIGINT/SIGTERM calls crawler::stop() (no new URLs; fetches in flight finish) and arms a
// timer of run.grace_period. When the timer fires or a second signal arrives, the crawl is aborted: the
// io_context is stopped, abandoning the fetches still in flight. Either way the code after ctx.run() flushes
// every output and prints the report — on an abort, one assembled here from the records received so far.

#include "cli/background_writer.hpp"
#include "cli/options.hpp"
#include "url_host.hpp"

#include <asiocrawl/crawler.hpp>
#include <asiocrawl/error.hpp>
#include <asiocrawl/outputs/output_set.hpp>
#include <asiocrawl/outputs/progress.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <optional>

#include <sys/resource.h>
#include <unistd.h>

extern char** environ;

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

/// What main learns from the record sink. The crawler keeps no records of its own (keep_records is off):
/// these are the report's records on a normal end, and the whole report when the crawl is aborted and
/// async_run never completes.
struct received_records {
    bool keep = true;
    std::vector<record> records;
    counters stats;
    std::size_t done = 0;
    std::size_t failures = 0;

    void add(const record& r) {
        ++done;
        count_record(stats, r);
        if (r.failed() && r.error != make_error_code(error::robots_denied))
            ++failures;
        if (keep)
            records.push_back(r);
    }
};

int run(const cli::cli_options& options) {
    const app_config& config = options.config;

    // ---- Files are opened before anything is fetched: one that cannot be written is a usage error. ----
    std::FILE* records_file = nullptr;
    const bool records_to_stdout = config.output.records == "-";
    if (!config.output.records.empty() && !records_to_stdout) {
        records_file = std::fopen(config.output.records.c_str(), "w");
        if (!records_file) {
            std::cerr << "asiocrawl: cannot open output.records file " << config.output.records << ": "
                      << std::strerror(errno) << "\n";
            return 2;
        }
    }
    const std::string& ca_file = config.crawl.fetch.tls.ca_file;
    if (!ca_file.empty() && ::access(ca_file.c_str(), R_OK) != 0) {
        std::cerr << "asiocrawl: cannot read fetch.tls.ca_file " << ca_file << ": " << std::strerror(errno)
                  << "\n";
        return 2;
    }

    cli::background_writer log_writer{stderr, false};
    for (const auto& warning : options.warnings)
        log_writer.write("asiocrawl: " + warning + "\n");
    std::optional<cli::background_writer> records_writer;
    if (records_file)
        records_writer.emplace(records_file, true);
    else if (records_to_stdout)
        records_writer.emplace(stdout, false);

    boost::asio::io_context ctx{1};
    crawler_config crawl_config = config.crawl;
    crawl_config.keep_records = false;
    std::optional<crawler> crawl;
    try {
        crawl.emplace(ctx.get_executor(), std::move(crawl_config));
    } catch (const std::invalid_argument& e) {
        log_writer.close();
        std::cerr << "asiocrawl: " << e.what() << "\n";
        return 2;
    }
    const logger log{config.run.log_level, [&](log_level level, std::string_view message) {
                         std::string line = "asiocrawl: ";
                         line += level_name(level);
                         line += ": ";
                         line += config.run.unicode_hosts_in_logs ? detail::with_unicode_hosts(message)
                                                                  : std::string(message);
                         line += '\n';
                         log_writer.write(std::move(line));
                     }};
    crawl->set_logger(log);
    received_records received;
    received.keep = config.output.report;
    auto record_to_cli = [&](const record& r) {
        received.add(r);
        if (records_writer)
            records_writer->write(to_json_line(r));
    };

    // ==== OUTPUTS: attach here ==========================================================================
    // Every further output (WARC: set_exchange_sink; save_dir: set_body_sink; progress line and metrics:
    // a timer reading crawl->progress(); back-pressure of a writer thread: set_backpressure) is created and
    // attached between this line and async_run, and finished in the "OUTPUTS: finish" block below, which
    // runs on every path that reaches async_run (normal end, interrupted, aborted).
    // ====================================================================================================
    const bool quiet = config.run.log_level >= log_level::error;
    const bool show_progress = outputs::progress_enabled(config.output.progress, ::isatty(2) == 1, quiet);
    std::optional<outputs::output_set> outs;
    try {
        outs.emplace(ctx.get_executor(), config.output, log,
                     show_progress ? std::function<void(std::string)>(
                                         [&](std::string bytes) { log_writer.write(std::move(bytes)); })
                                   : std::function<void(std::string)>{});
    } catch (const std::exception& e) {
        log_writer.close();
        std::cerr << "asiocrawl: cannot open an output: " << e.what() << "\n";
        return 2;
    }
    outs->attach(*crawl, record_to_cli);
    outs->start();

    int exit_code = 0;
    bool aborted = false;
    std::size_t abandoned = 0, todo_at_abort = 0;
    boost::asio::steady_timer grace{ctx};
    auto abort_now = [&](const char* why) {
        if (aborted)
            return;
        aborted = true;
        const crawl_progress now = crawl->progress();
        abandoned = now.in_flight;
        todo_at_abort = now.queued + now.in_flight;
        log_writer.write(std::string("asiocrawl: ") + why + ", abandoning " + std::to_string(abandoned) +
                         " fetches in flight\n");
        ctx.stop();
    };
    boost::asio::signal_set signals{ctx, SIGINT, SIGTERM};
    std::function<void(boost::system::error_code, int)> on_signal = [&](boost::system::error_code ec,
                                                                        int signo) {
        if (ec)
            return;
        if (exit_code != 0) {
            abort_now("second signal");
            return;
        }
        exit_code = 128 + signo;
        log_writer.write(std::string("asiocrawl: interrupted by ") +
                         (signo == SIGINT ? "SIGINT" : "SIGTERM") +
                         ", finishing fetches in flight for up to " +
                         std::to_string(config.run.grace_period.count()) + " ms (signal again to abort)\n");
        crawl->stop();
        grace.expires_after(config.run.grace_period);
        grace.async_wait([&](boost::system::error_code timer_ec) {
            if (!timer_ec)
                abort_now("grace period over");
        });
        signals.async_wait(on_signal);
    };
    signals.async_wait(on_signal);

    const auto started_at = std::chrono::system_clock::now();
    const auto started = std::chrono::steady_clock::now();
    std::optional<report> result;
    std::exception_ptr failure;
    crawl->async_run([&](std::exception_ptr e, report r) {
        failure = e;
        result = std::move(r);
        signals.cancel();
        grace.cancel();
        outs->stop();
    });
    ctx.run();

    // ==== OUTPUTS: finish here (flush and close; also after an abort) ===================================
    const bool records_ok = !records_writer || records_writer->close();
    // ====================================================================================================

    if (failure) {
        log_writer.close();
        try {
            std::rethrow_exception(failure);
        } catch (const std::exception& e) {
            std::cerr << "asiocrawl: error: crawl failed: " << e.what() << "\n";
        }
        return 1;
    }
    if (!result) {
        // Aborted: async_run never completed. The report holds what the record sink saw.
        result.emplace();
        result->stats = received.stats;
        result->done = received.done;
        result->todo = todo_at_abort;
        result->max_tasks = config.crawl.max_tasks;
        result->started_at = started_at;
        result->elapsed = std::chrono::steady_clock::now() - started;
        result->stats["aborted_in_flight"] = abandoned;
    }
    result->records = std::move(received.records);
    for (const auto& problem : outs->finish(*result))
        log_writer.write("asiocrawl: error: " + problem + "\n");

    if (!records_ok)
        log_writer.write("asiocrawl: error: writing " + config.output.records + " failed\n");
    const bool failed_urls = config.run.fail_on_errors && received.failures > 0;
    if (failed_urls)
        log_writer.write("asiocrawl: " + std::to_string(received.failures) +
                         " URLs failed (fail_on_errors)\n");
    log_writer.close();
    if (config.output.report) {
        write_report(std::cout, *result, config.run.log_level <= log_level::info);
        std::cout.flush();
    }
    if (exit_code != 0)
        return exit_code;
    return !records_ok || failed_urls ? 1 : 0;
}

} // namespace

int main(int argc, char* argv[]) {
    raise_open_file_limit();
    std::vector<std::string> environment;
    for (char** variable = environ; *variable; ++variable)
        environment.emplace_back(*variable);
    auto outcome = cli::parse_command_line(argc, argv, environment);
    if (auto* print = std::get_if<cli::print_and_exit>(&outcome)) {
        for (const auto& warning : print->warnings)
            std::cerr << "asiocrawl: " << warning << "\n";
        std::cout << print->text;
        return 0;
    }
    if (auto* usage = std::get_if<cli::usage_error>(&outcome)) {
        std::string_view message = usage->message;
        while (!message.empty()) {
            const auto nl = message.find('\n');
            std::cerr << "asiocrawl: " << message.substr(0, nl) << "\n";
            message = nl == std::string_view::npos ? std::string_view{} : message.substr(nl + 1);
        }
        std::cerr << "Try 'asiocrawl --help' for more information.\n";
        return 2;
    }
    return run(std::get<cli::cli_options>(outcome));
}
