// The asiocrawl command as a user runs it: a real process against a real server process on 127.0.0.1.

#include "support/files.hpp"
#include "support/loopback.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

#include <asiocrawl_demo/site.hpp>

#include <boost/json/parse.hpp>

#include <gmock/gmock.h>

#include <csignal>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <unistd.h>

namespace asio = boost::asio;
using namespace asiocrawl::test;
using namespace std::chrono_literals;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

const std::string cli = ASIOCRAWL_CLI_PATH;
const std::string demo_server = ASIOCRAWL_DEMO_SERVER_PATH;

/// The demo server as its own process, as the README's quick start runs it.
struct demo_server_process {
    explicit demo_server_process(std::vector<std::string> extra = {}) {
        std::vector<std::string> argv{demo_server, "--port", "0"};
        argv.insert(argv.end(), extra.begin(), extra.end());
        child.emplace(argv);
        for (int i = 0; i < 1000 && root.empty(); ++i) {
            auto out = child->stdout_so_far();
            if (auto nl = out.find('\n'); nl != std::string::npos)
                root = out.substr(0, nl);
            else
                std::this_thread::sleep_for(10ms);
        }
    }
    ~demo_server_process() {
        child->signal(SIGTERM);
        child->wait(10s);
    }
    std::optional<child_process> child;
    std::string root;
};

/// A server in this process, on a thread of its own, counting the requests it gets.
struct threaded_server {
    explicit threaded_server(asiocrawl::demo::request_handler handler)
        : server{ctx.get_executor(), [this, handler = std::move(handler)](const http_request& req) {
                     ++requests;
                     return handler(req);
                 }} {}
    ~threaded_server() {
        asio::post(ctx, [this] { server.stop(); });
        thread.join();
    }
    asio::io_context ctx;
    std::atomic<int> requests{0};
    asiocrawl::demo::http_server server;
    std::thread thread{[this] { ctx.run(); }};
};

/// "/" links to four pages that never answer (until the server stops): a crawl that cannot end by itself.
asio::awaitable<std::optional<http_response>> root_then_hang(const http_request& req) {
    if (req.target() == "/")
        co_return make_response(200, "<a href=/s0>0</a><a href=/s1>1</a><a href=/s2>2</a><a href=/s3>3</a>");
    co_await sleep_for(std::chrono::hours{1});
    co_return make_response(200, "late");
}

/// A file for the duration of a test.
struct temp_file {
    temp_file(const std::string& name, const std::string& text)
        : path("/tmp/asiocrawl-cli-test-" + std::to_string(::getpid()) + "-" + name) {
        std::ofstream{path} << text;
    }
    ~temp_file() { std::remove(path.c_str()); }
    std::string path;
};

void wait_until(const std::function<bool()>& done) {
    for (int i = 0; i < 3000 && !done(); ++i)
        std::this_thread::sleep_for(10ms);
}

std::vector<std::string> read_lines(const std::string& path) {
    std::ifstream in{path};
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);)
        lines.push_back(line);
    return lines;
}

} // namespace

TEST(cli, crawls_the_demo_site_and_prints_the_report) {
    const temp_dir dir{"cli-demo"};
    const std::string expected_path = (dir.path / "expected.txt").string();
    const std::string records_path = (dir.path / "records.jsonl").string();
    demo_server_process server{{"--pages", "120", "--seed", "3", "--expected", expected_path}};
    ASSERT_THAT(server.root, HasSubstr("http://127.0.0.1:"));

    auto result = run_process({cli, "--max-tasks", "10", "-o", records_path, server.root});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_THAT(result.out, HasSubstr("*** Report ***"));
    EXPECT_THAT(result.out, HasSubstr("Finished "));
    EXPECT_THAT(result.out, HasSubstr("(max_tasks=10)"));
    EXPECT_THAT(result.out, HasSubstr("Todo: 0"));

    // Every expected request has exactly one JSON record, and nothing else does.
    const auto expected = read_lines(expected_path);
    ASSERT_FALSE(expected.empty());
    std::set<std::string> recorded;
    for (const auto& line : read_lines(records_path)) {
        auto record = boost::json::parse(line).as_object();
        std::string url(record.at("url").as_string());
        const std::string target = url.substr(server.root.size() - 1);
        EXPECT_TRUE(recorded.insert(target).second) << target << " recorded twice";
    }
    EXPECT_EQ(recorded, std::set<std::string>(expected.begin(), expected.end()));
    EXPECT_THAT(result.out, HasSubstr("Done: " + std::to_string(expected.size())));
}

TEST(cli, a_root_without_scheme_gets_http) {
    demo_server_process server{{"--pages", "5"}};
    const std::string bare = server.root.substr(std::string("http://").size());
    auto result = run_process({cli, "-q", bare});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_THAT(result.out, HasSubstr(server.root + " 200 text/html"));
}

TEST(cli, help_and_version_exit_zero) {
    auto help = run_process({cli, "--help"});
    EXPECT_EQ(help.exit_code, 0);
    for (const char* option : {"--max-tasks",
                               "--max-redirect",
                               "--max-tries",
                               "--exclude",
                               "--include",
                               "--strict",
                               "--lenient",
                               "--max-depth",
                               "--max-pages",
                               "--output",
                               "--verbose",
                               "--quiet",
                               "--config",
                               "--print-config",
                               "--fail-on-errors",
                               "--ignore-robots",
                               "--insecure",
                               "--ca-file",
                               "--sitemaps",
                               "--max-per-host",
                               "--delay",
                               "--parse-threads",
                               "--warc",
                               "--save-dir",
                               "--metrics-listen",
                               "--report-json",
                               "--progress",
                               "--grace-period",
                               "--refuse-private-addresses",
                               "--user-agent",
                               "--contact-url",
                               "--no-parent",
                               "--domains",
                               "--exclude-domains",
                               "--accept",
                               "--reject",
                               "--fail-on",
                               "--overwrite",
                               "--obey-robots",
                               "--report",
                               "--compression",
                               "--warc-revisits"})
        EXPECT_THAT(help.out, HasSubstr(option));
    // Grouped by topic, with defaults.
    for (const char* heading :
         {"Crawl:", "Scope:", "Fetching:", "Politeness and robots.txt:", "Output:", "Run:"})
        EXPECT_THAT(help.out, HasSubstr(heading));
    EXPECT_THAT(help.out, HasSubstr("(default: 100)"));
    EXPECT_THAT(help.out, HasSubstr("ASIOCRAWL_"));
    auto version = run_process({cli, "--version"});
    EXPECT_EQ(version.exit_code, 0);
    EXPECT_THAT(version.out, HasSubstr("asiocrawl "));
}

TEST(cli, wrong_usage_exits_2_with_a_clear_message) {
    struct usage_case {
        std::vector<std::string> args;
        std::string says;
    };
    const usage_case cases[] = {
        {{}, "no ROOT given"},
        {{"--max-tasks", "0", "http://127.0.0.1/"}, "--max-tasks"},
        {{"--max-tasks", "-3", "http://127.0.0.1/"}, "--max-tasks"},
        {{"--max-tries", "0", "http://127.0.0.1/"}, "max_tries"},
        {{"--max-tasks", "many", "http://127.0.0.1/"}, "max-tasks"},
        {{"--no-such-option", "http://127.0.0.1/"}, "no-such-option"},
        {{"--strict", "--lenient", "http://127.0.0.1/"}, "--lenient"},
        {{"--exclude", "(unclosed", "http://127.0.0.1/"}, "exclude"},
        {{"ftp://example.com/"}, "ftp://example.com/"},
        {{"--timeout", "0", "http://127.0.0.1/"}, "--timeout"},
        {{"--max-depth", "-1", "http://127.0.0.1/"}, "--max-depth"},
        {{"not a url"}, "roots[0] must be an http or https URL (invalid URL), got \"not a url\""},
        {{"mailto:a@b.c"},
         "roots[0] must be an http or https URL (unsupported URL scheme), got \"mailto:a@b.c\""},
        {{"--exclude", "(unclosed", "http://127.0.0.1/"},
         "option --exclude: exclude[0] must be a regular expression"},
        {{"--print-config", "--include", "[", "http://127.0.0.1/"}, "option --include: include[0]"},
        {{"--max-tasks", "many", "http://127.0.0.1/"}, "a whole number from 1 to 100000"},
        {{"--fail-on", "sometimes", "http://127.0.0.1/"},
         "run.fail_on[0] must be one of 4xx, 5xx, network, robots"},
    };
    for (const auto& c : cases) {
        std::vector<std::string> argv{cli};
        argv.insert(argv.end(), c.args.begin(), c.args.end());
        SCOPED_TRACE(::testing::PrintToString(c.args));
        auto result = run_process(argv);
        EXPECT_EQ(result.exit_code, 2);
        EXPECT_THAT(result.err, HasSubstr(c.says));
        EXPECT_TRUE(result.out.empty()) << "no report on a usage error";
    }
}

TEST(cli, a_seed_file_that_gives_no_seeds_is_a_usage_error) {
    temp_file empty{"empty-seeds.txt", ""};
    temp_file comments{"comment-seeds.txt", "# nothing here\n\n   \n  # indented\n"};
    const std::pair<std::vector<std::string>, std::string> cases[] = {
        {{"-i", empty.path}, "no seeds: input_file (-i) " + empty.path + " holds no URL"},
        {{"-i", comments.path}, "no seeds"},
        {{"-i", "/tmp"}, "input_file (-i) /tmp is a directory"},
        {{"-i", "/tmp/asiocrawl-no-such-seeds.txt"}, "cannot open: No such file or directory"},
        {{"-i", "/tmp", "http://127.0.0.1:9/"}, "is a directory"},
    };
    for (const auto& [args, says] : cases) {
        SCOPED_TRACE(::testing::PrintToString(args));
        std::vector<std::string> argv{cli};
        argv.insert(argv.end(), args.begin(), args.end());
        auto result = run_process(argv);
        EXPECT_EQ(result.exit_code, 2);
        EXPECT_THAT(result.err, HasSubstr(says));
        EXPECT_THAT(result.err, HasSubstr("Try 'asiocrawl --help'"));
        EXPECT_TRUE(result.out.empty());
    }
}

TEST(cli, off_a_terminal_a_long_crawl_logs_a_heartbeat_unless_quiet) {
    threaded_server server{root_then_hang};
    // stderr is a pipe here: no terminal, and no --progress option.
    child_process crawl{{cli, "--progress-interval", "100ms", "--grace-period", "0", "--ignore-robots",
                         server.server.origin() + "/"}};
    wait_until([&] { return crawl.stderr_so_far().find("progress: pages 1 ") != std::string::npos; });
    crawl.signal(SIGTERM);
    auto result = crawl.wait();
    EXPECT_EQ(result.exit_code, 143);
    EXPECT_THAT(result.err, HasSubstr("progress: pages 1 | queued"));
    EXPECT_THAT(result.err, Not(HasSubstr("\r"))) << "no terminal codes in a log";

    // Quiet, over several intervals (the hanging links time out after 400 ms, untried again): no heartbeat.
    auto silent = run_process({cli, "-q", "--progress-interval", "100ms", "--timeout", "400ms", "--max-tries",
                               "1", "--ignore-robots", server.server.origin() + "/"});
    EXPECT_EQ(silent.exit_code, 0) << silent.err;
    EXPECT_THAT(silent.err, Not(HasSubstr("progress:")));
}

TEST(cli, the_subcommands_have_help_that_exits_0) {
    auto report = run_process({cli, "report", "--help"});
    EXPECT_EQ(report.exit_code, 0);
    EXPECT_THAT(report.out, HasSubstr("--crawl-id"));
    auto index = run_process({cli, "index", "--help"});
    EXPECT_EQ(index.exit_code, 0);
    EXPECT_THAT(index.out, HasSubstr("asiocrawl index"));
    auto help = run_process({cli, "--help"}, {"COLUMNS=70"});
    EXPECT_EQ(help.exit_code, 0);
    EXPECT_THAT(help.out, HasSubstr("asiocrawl report --redis URL --crawl-id ID"));
}

TEST(cli, sigint_and_sigterm_stop_the_crawl_and_still_print_the_report) {
    for (const auto& [signo, status] : {std::pair{SIGINT, 130}, std::pair{SIGTERM, 143}}) {
        SCOPED_TRACE(signo);
        // A slow server: the CLI is interrupted while the first pages are in flight.
        std::string page = "<html>";
        for (int i = 0; i < 50; ++i)
            page += "<a href=/p" + std::to_string(i) + ">x</a>";
        threaded_server server{[&](const http_request& req) -> asio::awaitable<std::optional<http_response>> {
            co_await sleep_for(300ms);
            co_return make_response(200, req.target() == "/" ? page : "<p>leaf</p>");
        }};
        child_process crawl{{cli, "--max-tasks", "2", server.server.origin() + "/"}};
        wait_until([&] { return server.requests.load() >= 3; }); // robots.txt, the root, a first link
        crawl.signal(signo);
        auto result = crawl.wait();

        EXPECT_EQ(result.exit_code, status) << result.err;
        EXPECT_THAT(result.err, HasSubstr("interrupted"));
        EXPECT_THAT(result.out, HasSubstr("Finished "));
        EXPECT_THAT(result.out, ::testing::Not(HasSubstr("Todo: 0\n")));
        EXPECT_LT(server.requests.load(), 51) << "the crawl stopped before fetching everything";
    }
}

TEST(cli, fetches_that_outlive_the_grace_period_are_abandoned_and_outputs_still_flushed) {
    threaded_server server{root_then_hang};
    const temp_dir dir{"cli-grace"};
    const std::string records = (dir.path / "records.jsonl").string();
    child_process crawl{
        {cli, "--grace-period", "300ms", "--ignore-robots", "-o", records, server.server.origin() + "/"}};
    wait_until([&] { return server.requests.load() >= 3; });
    crawl.signal(SIGINT);
    auto result = crawl.wait();

    EXPECT_EQ(result.exit_code, 130) << result.err;
    EXPECT_THAT(result.err, HasSubstr("grace period over, abandoning"));
    EXPECT_THAT(result.out, HasSubstr(server.server.origin() + "/ 200 text/html"));
    EXPECT_THAT(result.out, HasSubstr("aborted_in_flight"));
    EXPECT_THAT(result.out, ::testing::Not(HasSubstr("Todo: 0\n")));
    const auto lines = read_lines(records);
    ASSERT_EQ(lines.size(), 1u) << "the root's record, flushed";
    EXPECT_THAT(lines[0], HasSubstr("\"status\":200"));
}

TEST(cli, a_second_signal_aborts_at_once_and_outputs_are_still_flushed) {
    threaded_server server{root_then_hang};
    const temp_dir dir{"cli-abort"};
    const std::string records = (dir.path / "records.jsonl").string();
    child_process crawl{
        {cli, "--grace-period", "1h", "--ignore-robots", "-o", records, server.server.origin() + "/"}};
    wait_until([&] { return server.requests.load() >= 3; });
    crawl.signal(SIGINT);
    wait_until([&] { return crawl.stderr_so_far().find("interrupted") != std::string::npos; });
    crawl.signal(SIGTERM);
    auto result = crawl.wait();

    EXPECT_EQ(result.exit_code, 130) << "the first signal decides the status; " << result.err;
    EXPECT_THAT(result.err, HasSubstr("second signal, abandoning"));
    EXPECT_THAT(result.out, HasSubstr(server.server.origin() + "/ 200 text/html"));
    EXPECT_EQ(read_lines(records).size(), 1u);
}

TEST(cli, a_crawl_that_fetched_nothing_exits_4) {
    asio::io_context ctx;
    const std::string root = "http://127.0.0.1:" + std::to_string(unused_port(ctx)) + "/";
    const std::vector<std::string> base{cli, "--max-tries", "1", "--ignore-robots", root};

    auto refused = run_process(base);
    EXPECT_EQ(refused.exit_code, 4) << refused.err;
    EXPECT_THAT(refused.err, HasSubstr("nothing was fetched: no URL got an HTTP answer"));
    EXPECT_THAT(refused.out, HasSubstr("Finished ")) << "the report is printed all the same";

    auto strict = base;
    strict.push_back("--fail-on-errors");
    auto failing = run_process(strict);
    EXPECT_EQ(failing.exit_code, 4) << failing.err;
    EXPECT_THAT(failing.err, HasSubstr("1 URL failed (1 network; --fail-on network,5xx,4xx)"));
}

TEST(cli, fail_on_turns_broken_links_into_exit_status_1) {
    threaded_server server{[](const http_request& req) -> asio::awaitable<std::optional<http_response>> {
        if (req.target() == "/")
            co_return make_response(
                200, "<a href=/gone>1</a><a href=/gone2>2</a><a href=/oops>3</a><a href=/ok>4</a>");
        if (req.target() == "/ok")
            co_return make_response(200, "<p>fine</p>");
        if (req.target() == "/oops")
            co_return make_response(500, "broken");
        co_return make_response(404, "not found");
    }};
    const std::vector<std::string> base{cli,           "-q", "--no-report",
                                        "--max-tries", "1",  server.server.origin() + "/"};

    auto tolerant = run_process(base);
    EXPECT_EQ(tolerant.exit_code, 0) << "error pages are records, not a failed run; " << tolerant.err;

    auto with = [&](std::vector<std::string> extra, std::vector<std::string> env = {}) {
        auto argv = base;
        argv.insert(argv.end() - 1, extra.begin(), extra.end());
        return run_process(argv, env);
    };
    auto all = with({"--fail-on-errors"});
    EXPECT_EQ(all.exit_code, 1) << all.err;
    EXPECT_THAT(all.err, HasSubstr("3 URLs failed (2 4xx, 1 5xx; --fail-on network,5xx,4xx)"));
    auto server_errors = with({"--fail-on", "5xx"});
    EXPECT_EQ(server_errors.exit_code, 1) << server_errors.err;
    EXPECT_THAT(server_errors.err, HasSubstr("1 URL failed (1 5xx; --fail-on 5xx)"));
    EXPECT_EQ(with({"--fail-on", "network,robots"}).exit_code, 0);
    EXPECT_EQ(with({}, {"ASIOCRAWL_RUN_FAIL_ON_ERRORS=true"}).exit_code, 1);
    EXPECT_EQ(with({}, {"ASIOCRAWL_RUN_FAIL_ON=4xx"}).exit_code, 1);
}

TEST(cli, config_errors_exit_2_before_any_request) {
    threaded_server server{[](const http_request&) -> asio::awaitable<std::optional<http_response>> {
        co_return make_response(200, "<p>hello</p>");
    }};
    const std::string root = server.server.origin() + "/";
    const temp_file invalid{"invalid.yaml", "max_tasks: 3\nroots: [a,\n"};
    const temp_file unknown{"unknown.yaml", "max_taks: 3\n"};
    const temp_file wrong{"wrong.yaml", "fetch:\n  connect_timeout: fast\n"};
    const temp_file range{"range.yaml", "politeness:\n  max_per_host: 0\n"};
    struct error_case {
        std::vector<std::string> args;
        std::vector<std::string> env;
        std::string says;
    };
    const error_case cases[] = {
        {{"--config", "/nonexistent/asiocrawl.yaml"},
         {},
         "/nonexistent/asiocrawl.yaml: config file not found"},
        {{"--config", "/tmp"}, {}, "/tmp: cannot read config file: Is a directory"},
        {{"--config", invalid.path}, {}, invalid.path + ":3:1: invalid YAML"},
        {{"--config", unknown.path},
         {},
         unknown.path + ":1:1: unknown key \"max_taks\" (did you mean \"max_tasks\"?)"},
        {{"--config", wrong.path},
         {},
         wrong.path +
             ":2:20: fetch.connect_timeout: expected a duration such as 500ms, 10s, 2m or 1h (a plain "
             "number is seconds), got \"fast\""},
        {{"--config", range.path},
         {},
         range.path + ":2:3: politeness.max_per_host must be at least 1, got \"0\""},
        {{},
         {"ASIOCRAWL_FETCH_REQUEST_TIMEOUT=soon"},
         "environment variable ASIOCRAWL_FETCH_REQUEST_TIMEOUT: "},
        {{"--metrics-listen", "9100"},
         {},
         "option --listen: output.metrics_listen must be HOST:PORT"}, // --metrics-listen is --listen
        {{"--delay", "-1s"}, {}, "option --delay: politeness.delay: expected a duration"},
        {{"--wacz", "site.wacz"},
         {},
         "output.wacz packages the WARC files: it needs output.warc.path (--warc)"},
        {{"--cdxj"}, {}, "output.cdxj indexes the WARC files: it needs output.warc.path (--warc)"},
    };
    for (const auto& c : cases) {
        std::vector<std::string> argv{cli};
        argv.insert(argv.end(), c.args.begin(), c.args.end());
        argv.push_back(root);
        SCOPED_TRACE(::testing::PrintToString(argv));
        auto result = run_process(argv, c.env);
        EXPECT_EQ(result.exit_code, 2);
        EXPECT_THAT(result.err, HasSubstr(c.says));
        EXPECT_THAT(result.err, HasSubstr("Try 'asiocrawl --help'"));
        EXPECT_TRUE(result.out.empty()) << result.out;
    }
    EXPECT_EQ(server.requests.load(), 0) << "a config error stops the run before anything is fetched";
}

TEST(cli, print_config_masks_secrets_unless_asked_and_never_shows_the_redis_password_variable) {
    const std::vector<std::string> args{
        cli,        "--print-config",           "--redis",          "redis://:url-secret@127.0.0.1:6379/0",
        "--header", "Cookie: id=cookie-secret", "http://a.example/"};
    const std::vector<std::string> environment{"ASIOCRAWL_REDIS_PASSWORD=variable-secret",
                                               "https_proxy=http://u:proxy-secret@127.0.0.1:3128"};
    auto masked = run_process(args, environment);
    ASSERT_EQ(masked.exit_code, 0) << masked.err;
    for (const char* secret : {"url-secret", "cookie-secret", "variable-secret", "proxy-secret"})
        EXPECT_THAT(masked.out + masked.err, ::testing::Not(HasSubstr(secret)));
    EXPECT_THAT(masked.out, HasSubstr("https_proxy: \"http://u:***@127.0.0.1:3128\""));
    auto with_show = args;
    with_show.insert(with_show.begin() + 2, "--show-secrets");
    auto shown = run_process(with_show, environment);
    ASSERT_EQ(shown.exit_code, 0) << shown.err;
    for (const char* secret : {"url-secret", "cookie-secret", "proxy-secret"})
        EXPECT_THAT(shown.out, HasSubstr(secret));
    EXPECT_THAT(shown.out + shown.err, ::testing::Not(HasSubstr("variable-secret")));
    auto help = run_process({cli, "--help"});
    EXPECT_THAT(help.out, HasSubstr("--show-secrets"));
}

TEST(cli, print_config_round_trips_through_the_process) {
    auto first = run_process({cli, "--print-config", "--max-tasks", "7", "--delay", "1.5s", "--host-override",
                              "a.example=127.0.0.1", "--exclude", "\\?sort=", "http://a.example/"},
                             {"ASIOCRAWL_OUTPUT_WARC_PATH=x-{serial}.warc.gz"});
    ASSERT_EQ(first.exit_code, 0) << first.err;
    EXPECT_THAT(first.out, HasSubstr("max_tasks: 7\n"));
    EXPECT_THAT(first.out, HasSubstr("  delay: 1500ms\n"));
    EXPECT_THAT(first.out, HasSubstr("    path: \"x-{serial}.warc.gz\"\n"));
    const temp_file printed{"printed.yaml", first.out};
    auto second = run_process({cli, "--config", printed.path, "--print-config"});
    ASSERT_EQ(second.exit_code, 0) << second.err;
    EXPECT_EQ(second.out, first.out);
}

TEST(cli, a_config_file_drives_a_crawl) {
    demo_server_process server{{"--pages", "10", "--seed", "5"}};
    const temp_dir dir{"cli-config"};
    const std::string records = (dir.path / "records.jsonl").string();
    const temp_file config{"crawl.yaml", "roots: [\"" + server.root +
                                             "\"]\nmax_tasks: 3\noutput:\n  records: \"" + records + "\"\n"};
    auto result = run_process({cli, "--config", config.path});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_THAT(result.out, HasSubstr("(max_tasks=3)"));
    EXPECT_FALSE(read_lines(records).empty());
}

namespace {

std::size_t read_lines_of(const std::string& text) {
    return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

} // namespace

TEST(cli, outputs_create_their_directories_and_never_replace_a_file) {
    demo_server_process server{{"--pages", "5"}};
    const temp_dir dir{"cli-outputs"};
    const std::string records = (dir.path / "archive" / "2024" / "records.jsonl").string();
    const std::string summary = (dir.path / "archive" / "report.json").string();
    const std::vector<std::string> argv{cli, "-q", "-o", records, "--report-json", summary, server.root};
    auto first = run_process(argv);
    EXPECT_EQ(first.exit_code, 0) << first.err;
    const std::string written = read_file(records);
    EXPECT_FALSE(written.empty());

    auto again = run_process(argv);
    EXPECT_EQ(again.exit_code, 2) << again.err;
    EXPECT_THAT(again.err, HasSubstr("output.records: " + records));
    EXPECT_THAT(again.err, HasSubstr("output.report_json: " + summary));
    EXPECT_THAT(again.err, HasSubstr("--overwrite"));
    EXPECT_TRUE(again.out.empty()) << "refused before any request";
    EXPECT_EQ(read_file(records), written) << "left as it was";

    auto replaced = argv;
    replaced.insert(replaced.begin() + 1, "--overwrite");
    auto overwritten = run_process(replaced);
    EXPECT_EQ(overwritten.exit_code, 0) << overwritten.err;
    EXPECT_EQ(read_lines(records).size(), read_lines_of(written)) << "replaced, not appended to";
}

TEST(cli, cdxj_and_wacz_come_with_the_warc_and_index_prints_the_same_lines) {
    demo_server_process server{{"--pages", "10"}};
    const temp_dir dir{"cli-archive"};
    const std::string warc = (dir.path / "crawl.warc.gz").string();
    const std::string wacz = (dir.path / "site.wacz").string();
    auto crawl =
        run_process({cli, "-q", "--no-report", "--warc", warc, "--cdxj", "--wacz", wacz, server.root});
    EXPECT_EQ(crawl.exit_code, 0) << crawl.err;
    const std::string cdxj = read_file((dir.path / "crawl.cdxj").string());
    EXPECT_THAT(cdxj,
                HasSubstr("{\"url\":\"" + server.root + "\",\"mime\":\"text/html\",\"status\":\"200\""));
    EXPECT_GT(std::filesystem::file_size(wacz), std::filesystem::file_size(warc));
    // `asiocrawl index` reads the same WARC back to the same lines, on stdout.
    auto index = run_process({cli, "index", warc});
    EXPECT_EQ(index.exit_code, 0) << index.err;
    EXPECT_EQ(index.out, cdxj);
    auto not_warc = run_process({cli, "index", wacz});
    EXPECT_EQ(not_warc.exit_code, 1);
    EXPECT_THAT(not_warc.err, HasSubstr("asiocrawl index: " + wacz + ": not a WARC record at offset 0"));
    EXPECT_EQ(run_process({cli, "index"}).exit_code, 2);
}

TEST(cli, an_output_that_cannot_be_written_fails_the_run_whichever_it_is) {
    demo_server_process server{{"--pages", "3"}};
    for (const char* flag : {"-o", "--report-json"}) {
        SCOPED_TRACE(flag);
        auto result = run_process({cli, "-q", "--no-report", flag, "/dev/full", server.root});
        EXPECT_EQ(result.exit_code, 1) << result.err;
        EXPECT_THAT(result.err, HasSubstr("cannot write /dev/full: No space left on device"));
    }
}

TEST(cli, a_save_dir_in_the_way_of_a_file_names_its_option) {
    temp_file file{"not-a-dir", "x"};
    auto result = run_process({cli, "--save-dir", file.path, "http://127.0.0.1:9/"});
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_THAT(result.err, HasSubstr("output.save_dir: cannot create directory " + file.path));
    EXPECT_THAT(result.err, Not(HasSubstr("filesystem error")));
}

TEST(cli, a_busy_metrics_port_is_named_without_library_internals) {
    asio::io_context ctx;
    asio::ip::tcp::acceptor taken{ctx, {asio::ip::make_address("127.0.0.1"), 0}};
    const std::string listen = "127.0.0.1:" + std::to_string(taken.local_endpoint().port());
    auto result = run_process({cli, "--metrics-listen", listen, "http://127.0.0.1:1/"});
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_THAT(result.err,
                HasSubstr("output.metrics_listen: cannot listen on " + listen + ": Address already in use"));
    EXPECT_THAT(result.err, ::testing::Not(HasSubstr("boost")));
    EXPECT_THAT(result.err, ::testing::Not(HasSubstr("function")));
}

TEST(cli, progress_always_off_a_terminal_writes_plain_lines) {
    demo_server_process server{{"--pages", "20"}};
    auto result = run_process({cli, "--progress", "always", "--no-report", server.root});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_THAT(result.err, HasSubstr("done: "));
    EXPECT_EQ(result.err.find('\r'), std::string::npos) << "no carriage return in a log";
    EXPECT_EQ(result.err.find("\x1b["), std::string::npos) << "no terminal codes in a log";
}

TEST(cli, repeated_patterns_and_wget_style_filters_shape_the_crawl) {
    threaded_server server{[](const http_request& req) -> asio::awaitable<std::optional<http_response>> {
        if (req.target() == "/docs/")
            co_return make_response(
                200, "<a href=/docs/a.pdf>a</a><a href=/docs/b.zip>b</a><a href=/docs/c.html>c</a>"
                     "<a href=/private/x.pdf>x</a><a href=/>up</a><a href=/docs/tmp/y.pdf>y</a>");
        co_return make_response(200, "<p>page</p>");
    }};
    const temp_dir dir{"cli-filters"};
    const std::string records = (dir.path / "records.jsonl").string();
    auto result =
        run_process({cli, "-q", "--no-report", "--ignore-robots", "--no-parent", "-A", "pdf", "--exclude",
                     "/private/", "--exclude", "/tmp/", "-o", records, server.server.origin() + "/docs/"});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    std::set<std::string> fetched;
    for (const auto& line : read_lines(records)) {
        const std::string url(boost::json::parse(line).at("url").as_string());
        fetched.insert(url.substr(server.server.origin().size()));
    }
    EXPECT_EQ(fetched, (std::set<std::string>{"/docs/", "/docs/a.pdf", "/docs/c.html"}));
}

// Every shipped example configuration runs against the demo site as it is, with only what a loopback
// test needs changed: private addresses allowed (the demo is on 127.0.0.1), no politeness delay, an
// ephemeral metrics port. Each runs in a fresh directory, where its relative output paths land.
TEST(cli, the_demo_script_writes_relative_outputs_in_the_callers_directory) {
    // scripts/demo.sh builds in the repository but crawls from where it was called (issue 26, item 16).
    temp_dir dir{"demo-script"};
    const std::string source = ASIOCRAWL_SOURCE_DIR;
    const auto result = run_process(
        {"/bin/bash", "-c", "cd \"$0\" && exec \"$1\" --max-pages 5 -o records.jsonl --no-report -q",
         dir.path.string(), source + "/scripts/demo.sh"},
        {"ASIOCRAWL_DEMO_CLI=" + cli, "ASIOCRAWL_DEMO_SERVER=" + demo_server}, std::chrono::seconds{60});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(read_lines((dir.path / "records.jsonl").string()).size(), 5u);
    EXPECT_FALSE(std::filesystem::exists(source + "/records.jsonl"));
}

TEST(cli, every_shipped_config_crawls_the_demo_site) {
    demo_server_process server{{"--pages", "25", "--seed", "9"}};
    ASSERT_THAT(server.root, HasSubstr("http://127.0.0.1:"));
    std::vector<std::filesystem::path> configs;
    for (const auto& entry :
         std::filesystem::directory_iterator{std::string(ASIOCRAWL_SOURCE_DIR) + "/config"})
        if (entry.path().extension() == ".yaml")
            configs.push_back(entry.path());
    std::sort(configs.begin(), configs.end());
    ASSERT_GE(configs.size(), 4u);
    for (const auto& config : configs) {
        SCOPED_TRACE(config.filename().string());
        const temp_dir dir{"cli-shipped-config"};
        const std::string command = "cd '" + dir.path.string() + "' && exec '" + cli + "' --config '" +
                                    config.string() + "' --no-refuse-private-addresses --delay 0 " +
                                    "--metrics-listen 127.0.0.1:0 " + server.root;
        auto result = run_process({"/bin/sh", "-c", command});
        ASSERT_FALSE(result.timed_out);
        // internal-check.yaml fails CI on broken links, and the demo site has some on purpose.
        const bool checks_links = config.filename() == "internal-check.yaml";
        EXPECT_EQ(result.exit_code, checks_links ? 1 : 0) << result.err;
        if (checks_links) {
            EXPECT_THAT(result.err, HasSubstr("URLs failed"));
        }
        EXPECT_THAT(result.err, ::testing::Not(HasSubstr("error: ")));
        const std::string name = config.filename().string();
        if (name == "polite-archive.yaml") {
            EXPECT_FALSE(read_lines((dir.path / "archive" / "records.jsonl").string()).empty());
            EXPECT_TRUE(std::filesystem::exists(dir.path / "archive" / "report.json"));
            EXPECT_TRUE(std::filesystem::exists(dir.path / "archive" / "crawl-00000.warc.gz"));
        } else if (checks_links) {
            EXPECT_FALSE(read_lines((dir.path / "link-check.jsonl").string()).empty());
            const auto summary = boost::json::parse(read_file(dir.path / "link-check.json"));
            EXPECT_FALSE(summary.at("broken_links").as_array().empty());
        } else {
            // asiocrawl.yaml (the defaults) and demo.yaml print the report and write no file.
            EXPECT_THAT(result.out, HasSubstr("Todo: 0"));
        }
    }
}

TEST(cli, seeds_come_from_standard_input_with_bad_lines_named_by_number) {
    threaded_server site{[](const http_request& req) -> asio::awaitable<std::optional<http_response>> {
        co_return make_response(req.target() == "/a" || req.target() == "/b" ? 200 : 404, "<p>seed</p>");
    }};
    const std::string origin = site.server.origin();
    const temp_file seeds{"seeds.txt", "# two seeds\n" + origin + "/a\nnot a url\n\n" + origin + "/b\n"};
    auto result = run_process(
        {"/bin/sh", "-c", "cat '" + seeds.path + "' | '" + cli + "' -i - --ignore-robots --max-depth 0"});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_THAT(result.out, HasSubstr(origin + "/a 200"));
    EXPECT_THAT(result.out, HasSubstr(origin + "/b 200"));
    EXPECT_THAT(result.err, HasSubstr("stdin:3: not an http(s) URL"));
    EXPECT_EQ(site.requests, 2);

    auto missing = run_process({cli, "-i", "/nonexistent/seeds.txt"});
    EXPECT_EQ(missing.exit_code, 2);
    EXPECT_THAT(missing.err, HasSubstr("input_file (-i) /nonexistent/seeds.txt: cannot open"));
}

TEST(cli, quota_stops_the_crawl_with_its_todo) {
    demo_server_process server{{"--pages", "60", "--seed", "4"}};
    auto result = run_process({cli, "--max-tasks", "1", "-Q", "20kB", "-v", server.root});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_THAT(result.err, HasSubstr("quota reached"));
    EXPECT_THAT(result.err, HasSubstr("(quota 19.5 KiB): stopping")) << "human units";
    EXPECT_THAT(result.out, Not(HasSubstr("Todo: 0")));
}
