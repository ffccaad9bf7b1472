// The asiocrawl command as a user runs it: a real process against a real server process on 127.0.0.1.

#include "support/loopback.hpp"
#include "support/process.hpp"

#include <asiocrawl_demo/site.hpp>

#include <boost/json/parse.hpp>

#include <gmock/gmock.h>

#include <csignal>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

namespace asio = boost::asio;
using namespace asiocrawl::test;
using namespace std::chrono_literals;
using ::testing::HasSubstr;

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

std::vector<std::string> read_lines(const std::string& path) {
    std::ifstream in{path};
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);)
        lines.push_back(line);
    return lines;
}

} // namespace

TEST(cli, crawls_the_demo_site_and_prints_the_report) {
    const std::string expected_path = "/tmp/asiocrawl-cli-test-expected.txt";
    const std::string records_path = "/tmp/asiocrawl-cli-test-records.jsonl";
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
    std::remove(expected_path.c_str());
    std::remove(records_path.c_str());
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
    for (const char* option :
         {"--max-tasks", "--max-redirect", "--max-tries", "--exclude", "--include", "--strict", "--lenient",
          "--max-depth", "--max-pages", "--output", "--verbose", "--quiet"})
        EXPECT_THAT(help.out, HasSubstr(option));
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

TEST(cli, sigint_stops_the_crawl_and_still_prints_the_report) {
    // A slow server in this process: the CLI is interrupted while the first page is in flight.
    asio::io_context ctx;
    std::atomic<int> requests{0};
    std::string page = "<html>";
    for (int i = 0; i < 50; ++i)
        page += "<a href=/p" + std::to_string(i) + ">x</a>";
    asiocrawl::demo::http_server server{
        ctx.get_executor(), [&](const http_request& req) -> asio::awaitable<std::optional<http_response>> {
            ++requests;
            co_await sleep_for(300ms);
            co_return make_response(200, req.target() == "/" ? page : "<p>leaf</p>");
        }};
    std::thread server_thread{[&] { ctx.run(); }};

    child_process crawl{{cli, "--max-tasks", "2", server.origin() + "/"}};
    for (int i = 0; i < 1000 && requests.load() < 3; ++i) // robots.txt, the root, a first link
        std::this_thread::sleep_for(10ms);
    crawl.signal(SIGINT);
    auto result = crawl.wait();
    asio::post(ctx, [&] { server.stop(); });
    server_thread.join();

    EXPECT_EQ(result.exit_code, 130) << result.err;
    EXPECT_THAT(result.err, HasSubstr("interrupted"));
    EXPECT_THAT(result.out, HasSubstr("Finished "));
    EXPECT_THAT(result.out, ::testing::Not(HasSubstr("Todo: 0\n")));
    EXPECT_LT(requests.load(), 51) << "the crawl stopped before fetching everything";
}
