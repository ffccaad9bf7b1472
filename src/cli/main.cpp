// The asiocrawl command: merge the config layers, run one crawl on one io_context thread, print the report.
// Logs and JSON Lines records go through background writers so the io thread never blocks on output.
//
// Shutdown: the first SIGINT/SIGTERM calls crawler::stop() (no new URLs; fetches in flight finish) and arms a
// timer of run.grace_period. When the timer fires or a second signal arrives, crawler::abort() cancels the
// fetches still in flight. Either way async_run completes with the report, the io_context runs dry, and the
// code after ctx.run() flushes every output and prints the report.
//
// With a state directory that holds a crawl already, the run resumes it: outputs are appended to (the WARC
// series goes on in a new file), and the report covers every run of the crawl.

#include "cli/config_keys.hpp"
#include "cli/exit_status.hpp"
#include "cli/index_command.hpp"
#include "cli/options.hpp"
#include "cli/shared_report.hpp"
#include "cli/stderr_lines.hpp"
#include "outputs/text_writer.hpp"
#include "url/url_host.hpp"

#include <asiocrawl/crawler.hpp>
#include <asiocrawl/error.hpp>
#include <asiocrawl/outputs/files.hpp>
#include <asiocrawl/outputs/output_set.hpp>
#include <asiocrawl/outputs/progress.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <optional>

#include <sys/ioctl.h>
#include <sys/resource.h>
#include <unistd.h>

extern char** environ;

namespace {

using namespace asiocrawl;

using cli::exit_rule_for;
using cli::failed_status;
using cli::nothing_fetched_status;
using cli::refused_status;

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

std::string count_of(std::size_t n, std::string_view one, std::string_view many) {
    return std::to_string(n) + " " + std::string(n == 1 ? one : many);
}

/// What main learns from the record sink: the failures of this run in the classes of run.fail_on.
struct received_records {
    std::vector<std::string> fail_on;
    /// Failures in the classes of run.fail_on, by class.
    std::map<std::string, std::size_t, std::less<>> failing;

    void add(const record& r) {
        if (const auto kind = failure_class(r);
            !kind.empty() && std::find(fail_on.begin(), fail_on.end(), kind) != fail_on.end())
            ++failing[std::string(kind)];
    }

    std::size_t failures() const {
        std::size_t total = 0;
        for (const auto& [kind, n] : failing)
            total += n;
        return total;
    }
};

// Out of line: where g++ 12 inlines Asio's co_spawn into a large caller, it sees the coroutine frame's
// allocation and its aligned delete together and warns, wrongly, that they do not match
// (-Wmismatched-new-delete).
[[gnu::noinline]] void start_crawl(crawler& crawl,
                                   std::function<void(boost::system::error_code, report)> done) {
    crawl.async_run(std::move(done));
}

int run(const cli::cli_options& options) {
    const cli::app_config& config = options.config;

    const std::string& ca_file = config.crawl.fetch.tls.ca_file;
    if (!ca_file.empty() && ::access(ca_file.c_str(), R_OK) != 0) {
        std::cerr << "asiocrawl: cannot read fetch.tls.ca_file " << ca_file << ": " << std::strerror(errno)
                  << "\n";
        return refused_status;
    }

    // A seed file that cannot seed the crawl is a usage error before anything starts (a resumed crawl has
    // its frontier, a shared crawl's worker its Redis: their seed file may be used up).
    if (const std::string& seeds = config.crawl.input_file; !seeds.empty() && seeds != "-") {
        const bool needs_a_seed = config.crawl.roots.empty() && config.crawl.state.redis.empty() &&
                                  (config.crawl.state.dir.empty() || config.crawl.state.reset ||
                                   !crawler::has_saved_state(config.crawl.state.dir));
        if (auto problem = cli::check_seed_file(seeds, needs_a_seed); !problem.empty()) {
            std::cerr << "asiocrawl: " << problem << "\nTry 'asiocrawl --help' for more information.\n";
            return 2;
        }
    }

    outputs::detail::text_writer log_writer{STDERR_FILENO, false, "stderr"};
    const bool stderr_is_tty = ::isatty(STDERR_FILENO) == 1;
    // Log lines and the progress line, kept apart on a terminal.
    cli::stderr_lines lines{[&](std::string bytes) { log_writer.write(std::move(bytes)); }, stderr_is_tty};
    for (const auto& warning : options.warnings)
        lines.log("asiocrawl: " + warning + "\n");

    boost::asio::io_context ctx{1};
    crawler_config crawl_config = config.crawl;
    // The crawler keeps the records only for the classic per-URL report (on disk, with a state directory).
    crawl_config.keep_records = config.output.report;
    // Only the JSON Lines records show a record's payload digest (the crawl computes it anyway when it keeps
    // a fetch history, and a WARC its own).
    crawl_config.payload_digests = !config.output.records.empty();
    // A shared crawl (docs/DEPLOY.md): a Kubernetes Indexed Job names each worker by its index.
    if (crawl_config.state.instance.empty())
        if (const char* index = std::getenv("JOB_COMPLETION_INDEX"))
            crawl_config.state.instance = index;
    const std::string instance = crawl_config.state.instance;
    // What the library reads from no environment: the worker's name when nothing names it (its host and
    // pid), standard input for `-i -` (the Redis password came from parse_command_line).
    if (!crawl_config.state.redis.empty() && crawl_config.state.instance.empty()) {
        char host[256] = {};
        ::gethostname(host, sizeof host - 1);
        crawl_config.state.instance = std::string(host) + "-" + std::to_string(::getpid());
    }
    if (crawl_config.input_file == "-")
        crawl_config.input_fd = STDIN_FILENO;
    const bool reset = crawl_config.state.reset;
    // The crawler locks its state directory first: a directory another crawl holds is refused before
    // anything (a reset, an output) is touched.
    std::optional<crawler> crawl;
    try {
        crawl.emplace(ctx.get_executor(), std::move(crawl_config));
    } catch (const std::invalid_argument& e) {
        log_writer.close();
        std::cerr << "asiocrawl: " << e.what() << "\n";
        return refused_status;
    } catch (const crawl_error& e) {
        // The state directory is locked first: in use by another crawl, or unusable.
        log_writer.close();
        const auto rule = exit_rule_for(e.code());
        std::cerr << "asiocrawl: " << rule.prefix << e.detail() << "\n";
        return rule.status;
    }
    const bool resuming = !reset && crawler::has_saved_state(config.crawl.state.dir);
    const logger log{config.run.log_level, [&](log_level level, std::string_view message) {
                         std::string line = "asiocrawl: ";
                         line += level_name(level);
                         line += ": ";
                         line += config.run.unicode_hosts_in_logs ? detail::with_unicode_hosts(message)
                                                                  : std::string(message);
                         line += '\n';
                         lines.log(std::move(line));
                     }};
    crawl->set_logger(log);
    received_records received;
    received.fail_on = cli::effective_fail_on(config.run);
    // A resumed crawl continues its outputs: records appended, the WARC series in a new file.
    outputs::output_config output = config.output;
    if (resuming && output.mode == outputs::open_mode::create_new)
        output.mode = outputs::open_mode::append;
    // A worker of a shared crawl started again (its pod restarted) continues its own files likewise.
    if (!config.crawl.state.redis.empty() && output.mode == outputs::open_mode::create_new)
        output.mode = outputs::open_mode::append;
    // {instance} in an output path: each worker of a shared crawl writes files of its own.
    const std::string instance_name = instance.empty() ? std::to_string(::getpid()) : instance;
    for (std::string* path :
         {&output.records, &output.report_json, &output.save_dir, &output.warc.path, &output.wacz})
        for (auto at = path->find("{instance}"); at != std::string::npos;
             at = path->find("{instance}", at + instance_name.size()))
            path->replace(at, 10, instance_name);

    // Every output (records, WARC, saved pages, metrics, progress, JSON summary) is opened here, before
    // anything is fetched: one that cannot be written, or that exists already, is a usage error.
    const bool quiet = config.run.log_level >= log_level::error;
    // Off a terminal too, unless quiet: a long crawl in a log (a container, CI) says it is alive, a line
    // every output.progress_interval (docs/OUTPUTS.md).
    const bool show_progress =
        outputs::progress_enabled(config.output.progress, stderr_is_tty, quiet) ||
        (config.output.progress == outputs::progress_mode::automatic && !stderr_is_tty && !quiet);
    std::optional<outputs::output_set> outs;
    try {
        outs.emplace(ctx.get_executor(), output, log,
                     show_progress ? std::function<void(std::string)>(
                                         [&](std::string bytes) { lines.progress(std::move(bytes)); })
                                   : std::function<void(std::string)>{},
                     stderr_is_tty);
    } catch (const crawl_error& e) {
        // error::output_exists or error::output_unavailable, detail() naming the outputs.
        log_writer.close();
        const auto rule = exit_rule_for(e.code());
        std::cerr << "asiocrawl: " << rule.prefix << e.detail() << "\n";
        return rule.status;
    }
    outs->attach(
        *crawl, [&](const record& r) { received.add(r); }, [&] { return log_writer.busy(); });
    log_writer.set_on_drained([c = &*crawl] { c->notify_drained(); });
    for (const auto& note : outs->notes())
        lines.log("asiocrawl: " + note + "\n");
    outs->start();

    int exit_code = 0;
    bool aborted = false;
    boost::asio::steady_timer grace{ctx};
    auto abort_now = [&](const char* why) {
        if (aborted)
            return;
        aborted = true;
        lines.log(std::string("asiocrawl: ") + why + ", abandoning " +
                  count_of(crawl->progress().in_flight, "fetch", "fetches") + " in flight\n");
        // The crawl still completes (at once): the report and every output are finished as usual.
        crawl->abort();
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
        lines.log(std::string("asiocrawl: interrupted by ") + (signo == SIGINT ? "SIGINT" : "SIGTERM") +
                  ", finishing fetches in flight for up to " + cli::format_duration(config.run.grace_period) +
                  " (signal again to abort)\n");
        crawl->stop();
        grace.expires_after(config.run.grace_period);
        grace.async_wait([&](boost::system::error_code timer_ec) {
            if (!timer_ec)
                abort_now("grace period over");
        });
        signals.async_wait(on_signal);
    };
    signals.async_wait(on_signal);

    std::optional<report> result;
    boost::system::error_code failure;
    start_crawl(*crawl, [&](boost::system::error_code ec, report r) {
        failure = ec;
        result = std::move(r);
        signals.cancel();
        grace.cancel();
        outs->stop();
    });
    ctx.run();

    if (!result)
        result.emplace();
    // A crawl that failed before it handed anything to its outputs (its state directory refused it, or
    // was full at the start) leaves no output behind: a run again finds none in its way. A failed crawl's
    // summary counts nothing: its counters are the store's to keep, up to its last commit.
    std::vector<std::string> output_problems;
    if (!failure || !outs->discard())
        output_problems = outs->finish(failure ? report{} : *result);
    // One rule for every output, records and summary alike: a write that failed fails the run.
    for (const auto& problem : output_problems)
        lines.log("asiocrawl: error: " + problem + "\n");

    if (failure) {
        // A state store that refuses this crawl is a usage error; a full disk, under the state directory or
        // an output, or a Redis unreachable, out of memory or lost: the state is whole up to its last
        // commit, the outputs up to their last whole record.
        log_writer.close();
        const auto rule = exit_rule_for(failure);
        std::cerr << "asiocrawl: " << rule.prefix
                  << (result->failure.empty() ? failure.message() : result->failure) << "\n";
        return rule.status;
    }
    // Over the whole crawl (every run of a resumed one): did any URL get an HTTP answer?
    const bool answered = std::any_of(result->stats.begin(), result->stats.end(), [](const auto& counter) {
        return counter.first.starts_with("status_") && counter.second > 0;
    });
    // A worker of a shared crawl may find nothing left for it: the others fetched it all.
    const bool shared_crawl = !config.crawl.state.redis.empty();
    const bool nothing_fetched = !answered && !aborted && exit_code == 0 && !shared_crawl;
    if (nothing_fetched)
        lines.log("asiocrawl: error: nothing was fetched: no URL got an HTTP answer (the records say "
                  "why; exit status 4)\n");
    const std::size_t failures = received.failures();
    if (failures > 0) {
        std::string classes;
        for (const auto& [kind, n] : received.failing)
            classes += (classes.empty() ? "" : ", ") + std::to_string(n) + " " + kind;
        std::string fail_on;
        for (const auto& kind : received.fail_on)
            fail_on += (fail_on.empty() ? "" : ",") + kind;
        lines.log("asiocrawl: " + count_of(failures, "URL", "URLs") + " failed (" + classes + "; --fail-on " +
                  fail_on + ")\n");
    }
    log_writer.close();
    if (config.output.report) {
        write_report(std::cout, *result, config.run.log_level <= log_level::info);
        std::cout.flush();
    }
    if (exit_code != 0)
        return exit_code;
    if (nothing_fetched)
        return nothing_fetched_status;
    if (!output_problems.empty())
        return exit_rule_for(error::output_failed).status;
    return failures > 0 ? failed_status : 0;
}

} // namespace

int main(int argc, char* argv[]) {
    if (argc >= 2 && std::string_view(argv[1]) == "report")
        return cli::shared_report_command(argc - 1, argv + 1);
    if (argc >= 2 && std::string_view(argv[1]) == "index")
        return cli::index_command(argc - 1, argv + 1);
    raise_open_file_limit();
    std::vector<std::string> environment;
    for (char** variable = environ; *variable; ++variable)
        environment.emplace_back(*variable);
    // --help fits the terminal it is printed on (COLUMNS, when set, says the width).
    winsize window{};
    if (::isatty(STDOUT_FILENO) == 1 && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &window) == 0 && window.ws_col > 0)
        environment.push_back("COLUMNS=" + std::to_string(window.ws_col));
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
