// Several asiocrawl processes share one crawl through a real redis-server (docs/DEPLOY.md): the union of
// their records is exactly the site's ground truth and no page is fetched twice; one of them killed with
// SIGKILL costs at most the URLs it had leased; Redis killed and started again loses nothing; the per-host
// in-flight cap holds for the whole crawl, counted by the server; the same crawl over TLS (rediss://); a
// pause and a delay set through one instance's control API hold for every instance.
#include "support/loopback.hpp"
#include "support/process.hpp"
#include "support/redis_server.hpp"
#include "support/temp_dir.hpp"
#include "support/tls_certs.hpp"

#include <asiocrawl_demo/site.hpp>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <thread>

namespace asio = boost::asio;
namespace fs = std::filesystem;
using namespace asiocrawl;
using namespace asiocrawl::test;
using namespace std::chrono_literals;

// Named, so that a unity build of cli_tests keeps this file's helpers apart from its neighbours'.
namespace shared_crawl_test {
namespace {

const std::string cli = ASIOCRAWL_CLI_PATH;
constexpr int max_tasks = 4;
constexpr int max_per_host = 2;

/// The generated site on a thread of its own, each answer late by `delay`, counting every request and the
/// most requests it had in flight at once.
struct site_server {
    explicit site_server(std::chrono::milliseconds d)
        : delay(d) {}
    std::atomic<std::chrono::milliseconds> delay; // the test may change it while the site serves
    demo::site site = demo::generate_site({.pages = 200, .seed = 13});
    demo::request_handler serve = demo::serve_site(site);
    asio::io_context ctx;
    std::mutex mutex;
    std::map<std::string, int> requests; // target -> times requested
    std::size_t total = 0;
    int in_flight = 0;
    int max_in_flight = 0;
    demo::http_server server{ctx.get_executor(), [this](const http_request& req) { return late(req); }};
    std::thread thread{[this] { ctx.run(); }};

    asio::awaitable<std::optional<http_response>> late(http_request req) {
        {
            std::lock_guard lock(mutex);
            ++requests[std::string(req.target())];
            ++total;
            max_in_flight = std::max(max_in_flight, ++in_flight);
        }
        co_await sleep_for(delay.load());
        auto answer = co_await serve(req);
        {
            std::lock_guard lock(mutex);
            --in_flight;
        }
        co_return answer;
    }
    ~site_server() {
        asio::post(ctx, [this] { server.stop(); });
        thread.join();
    }
    std::size_t requested() {
        std::lock_guard lock(mutex);
        return total;
    }
    std::set<std::string> expected_urls() const {
        std::set<std::string> out;
        for (const auto& target : site.expected_requests)
            out.insert(server.origin() + target);
        return out;
    }
    /// Pages (robots.txt aside: each instance asks it once) requested more than once: the extra requests.
    std::size_t fetched_twice() {
        std::lock_guard lock(mutex);
        std::size_t extra = 0;
        for (const auto& [target, n] : requests)
            if (target != "/robots.txt" && n > 1)
                extra += static_cast<std::size_t>(n - 1);
        return extra;
    }
};

struct shared_crawl : ::testing::Test {
    redis_server redis;
    temp_dir dir{"shared-crawl"};

    std::vector<std::string> command(const site_server& site, const std::string& instance) const {
        return command(site.server.origin() + "/", instance);
    }
    std::vector<std::string> command(const std::string& root, const std::string& instance) const {
        return {cli,
                "-qq",
                "--redis",
                redis.url(),
                "--crawl-id",
                "test",
                "--instance",
                instance,
                "--lease",
                "1s",
                "--max-tasks",
                std::to_string(max_tasks),
                "--max-per-host",
                std::to_string(max_per_host),
                "-o",
                (dir.path / "records-{instance}.jsonl").string(),
                root};
    }

    /// The URLs of every records file written, and how many records there were in all.
    std::pair<std::set<std::string>, std::size_t> union_of_records() const {
        std::set<std::string> urls;
        std::size_t lines = 0;
        for (const auto& entry : fs::directory_iterator(dir.path)) {
            if (!entry.path().filename().string().starts_with("records-"))
                continue;
            std::ifstream in(entry.path());
            std::size_t of_this_one = 0;
            for (std::string line; std::getline(in, line);) {
                if (line.empty())
                    continue;
                ++lines;
                ++of_this_one;
                urls.insert(std::string(boost::json::parse(line).as_object().at("url").as_string()));
            }
            std::cout << entry.path().filename().string() << ": " << of_this_one << " records\n";
        }
        return {urls, lines};
    }

    std::size_t restart_redis_mid_crawl(const std::string& appendfsync);

    static void wait_until(const std::function<bool()>& condition, std::chrono::seconds limit = 30s) {
        const auto deadline = std::chrono::steady_clock::now() + limit;
        while (!condition() && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(5ms);
    }
};

} // namespace

namespace {

/// The value of a RESP integer answer (":N\r\n"), or -1.
long long resp_integer(const std::string& answer) {
    return answer.starts_with(":") ? std::stoll(answer.substr(1)) : -1;
}

std::vector<std::string> with_option(std::vector<std::string> args, const std::string& flag,
                                     const std::string& value) {
    const auto at = std::find(args.begin(), args.end(), flag);
    if (at != args.end()) {
        *(at + 1) = value;
    } else {
        args.insert(args.end() - 1, flag);
        args.insert(args.end() - 1, value);
    }
    return args;
}

} // namespace

TEST_F(shared_crawl, three_instances_crawl_exactly_the_ground_truth_once_within_the_host_cap) {
    site_server site{3ms};
    std::vector<std::unique_ptr<child_process>> instances;
    for (int i = 0; i < 3; ++i)
        instances.push_back(
            std::make_unique<child_process>(with_option(command(site, std::to_string(i)), "--report-json",
                                                        (dir.path / "summary-{instance}.json").string())));
    std::vector<std::string> reports;
    for (auto& instance : instances) {
        const auto result = instance->wait(60s);
        EXPECT_EQ(result.exit_code, 0) << result.err;
        reports.push_back(result.out);
    }
    for (int i = 0; i < 3; ++i) {
        std::ifstream in(dir.path / ("summary-" + std::to_string(i) + ".json"));
        const std::string text{std::istreambuf_iterator<char>(in), {}};
        reports.push_back(text);
    }
    const auto [urls, lines] = union_of_records();
    EXPECT_EQ(urls, site.expected_urls());
    EXPECT_EQ(lines, urls.size()) << "a URL got a record from two instances";
    // Every instance's final report, and `asiocrawl report`, count the whole crawl.
    for (const auto& report : reports) {
        if (report.empty())
            continue; // stdout, silenced by -qq
        const auto summary = boost::json::parse(report).as_object();
        EXPECT_EQ(summary.at("done").to_number<std::size_t>(), lines) << report;
    }
    const std::string done = "Done: " + std::to_string(lines) + "\n";
    child_process combined({cli, "report", "--redis", redis.url(), "--crawl-id", "test"});
    const auto printed = combined.wait(30s);
    EXPECT_EQ(printed.exit_code, 0) << printed.err;
    EXPECT_NE(printed.out.find(done), std::string::npos) << printed.out;
    EXPECT_NE(printed.out.find("Instances: 3\n"), std::string::npos) << printed.out;
    EXPECT_NE(printed.out.find("the crawl is over"), std::string::npos) << printed.out;
    std::cout << "most requests in flight at once: " << site.max_in_flight << "\n";
    EXPECT_EQ(site.fetched_twice(), 0u);
    EXPECT_EQ(site.requests["/robots.txt"], 1) << "robots.txt is fetched once per crawl, not per instance";
    EXPECT_LE(site.max_in_flight, max_per_host) << "politeness.max_per_host holds for the whole crawl";
    std::size_t with_records = 0;
    for (int i = 0; i < 3; ++i)
        with_records += fs::exists(dir.path / ("records-" + std::to_string(i) + ".jsonl")) ? 1 : 0;
    EXPECT_EQ(with_records, 3u) << "{instance} names each worker's file";
}

TEST_F(shared_crawl, an_instance_killed_mid_crawl_costs_at_most_its_leased_urls) {
    site_server site{15ms};
    std::vector<std::unique_ptr<child_process>> instances;
    for (int i = 0; i < 3; ++i)
        instances.push_back(std::make_unique<child_process>(command(site, std::to_string(i))));
    const auto total = site.site.expected_requests.size();
    wait_until([&] { return site.requested() >= total / 3; });
    instances[0]->signal(SIGKILL);
    EXPECT_EQ(instances[0]->wait(10s).exit_code, 128 + SIGKILL);
    for (std::size_t i = 1; i < instances.size(); ++i) {
        const auto result = instances[i]->wait(60s);
        EXPECT_EQ(result.exit_code, 0) << result.err;
    }
    const auto [urls, lines] = union_of_records();
    EXPECT_EQ(urls, site.expected_urls());
    // An instance leases at most max_tasks URLs and a quarter more at a time: those are what its death may
    // cost again.
    std::cout << "fetched again after the kill: " << site.fetched_twice() << "\n";
    EXPECT_LE(site.fetched_twice(), static_cast<std::size_t>(max_tasks + std::max(max_tasks / 4, 1)));
    EXPECT_LE(site.max_in_flight, max_per_host);
}

/// Redis killed (SIGKILL) and started again mid-crawl, with the append-only file fsync'd as `appendfsync`
/// says: nothing lost. Returns the URLs fetched twice.
std::size_t shared_crawl::restart_redis_mid_crawl(const std::string& appendfsync) {
    EXPECT_EQ(redis.command({"CONFIG", "SET", "appendfsync", appendfsync}), "+OK\r\n");
    site_server site{10ms};
    std::vector<std::unique_ptr<child_process>> instances;
    for (int i = 0; i < 2; ++i)
        instances.push_back(std::make_unique<child_process>(command(site, std::to_string(i))));
    const auto total = site.site.expected_requests.size();
    wait_until([&] { return site.requested() >= total / 3; });
    redis.kill();
    std::this_thread::sleep_for(300ms);
    redis.start(); // the append-only file brings the crawl back
    for (auto& instance : instances) {
        const auto result = instance->wait(60s);
        EXPECT_EQ(result.exit_code, 0) << result.err;
    }
    const auto [urls, lines] = union_of_records();
    EXPECT_EQ(urls, site.expected_urls());
    std::cout << "fetched again: " << site.fetched_twice() << "\n";
    return site.fetched_twice();
}

TEST_F(shared_crawl, redis_killed_and_started_again_loses_nothing) {
    EXPECT_EQ(restart_redis_mid_crawl("always"), 0u)
        << "leases outlive a short Redis outage and every acknowledged commit is in the file: nothing is "
           "fetched "
           "again";
}

// everysec: Redis usually writes the append-only file before it answers, but while an fsync is slow (a busy
// disk) it answers first and writes up to 2 s later, so a kill may lose acknowledged commits. Their URLs are
// fetched again; none is lost.
TEST_F(shared_crawl, redis_killed_and_started_again_with_appendfsync_everysec_loses_nothing) {
    restart_redis_mid_crawl("everysec");
}

TEST_F(shared_crawl, a_graceful_stop_gives_its_leases_back_at_once) {
    // Answers slow enough that the stop finds fetches in flight, and no grace: they are abandoned, and their
    // URLs (leased for far longer than the test) must go back to the crawl when the instance stops.
    site_server site{400ms};
    child_process first(
        with_option(with_option(command(site, "0"), "--lease", "10m"), "--grace-period", "0s"));
    wait_until([&] { return site.requested() >= 3; });
    first.signal(SIGTERM);
    EXPECT_EQ(first.wait(30s).exit_code, 128 + SIGTERM) << first.stderr_so_far();
    const std::string leases = "asiocrawl:{test}:leases";
    const auto held = resp_integer(redis.command({"ZCARD", leases}));
    const auto still_running = resp_integer(
        redis.command({"EVAL",
                       "local t = redis.call('TIME') local now = t[1] * 1000 + math.floor(t[2] / 1000) "
                       "return redis.call('ZCOUNT', KEYS[1], now + 60000, '+inf')",
                       "1", leases}));
    std::cout << "leases left by the stopped instance: " << held << ", not yet expired: " << still_running
              << "\n";
    EXPECT_GT(held, 0) << "the instance held leases when it stopped (else this test shows nothing)";
    EXPECT_EQ(still_running, 0) << "a stopped instance's leases end when it stops, not 10 minutes later";
    site.delay = 3ms;
    child_process second(with_option(command(site, "1"), "--lease", "10m"));
    const auto result = second.wait(60s);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    const auto [urls, lines] = union_of_records();
    EXPECT_EQ(urls, site.expected_urls());
}

// One rule for every cause, before the crawl starts or during it (docs/DEPLOY.md, "Exit status"): a Redis
// that refuses the crawl (a wrong password) is exit 2, a usage error; one that fails (unreachable, out of
// memory) is exit 1, as a full disk is, and the same command continues the crawl once it is back.
TEST_F(shared_crawl, an_instance_that_loses_redis_mid_crawl_gives_up_after_redis_timeout_with_status_1) {
    site_server site{20ms};
    child_process instance(with_option(command(site, "0"), "--redis-timeout", "1s"));
    wait_until([&] { return site.requested() >= 10; });
    redis.kill(); // and not started again
    const auto result = instance.wait(30s);
    EXPECT_EQ(result.exit_code, 1) << result.err;
    EXPECT_NE(result.err.find("has not answered for"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("state.redis_timeout"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("running this instance again continues the crawl"), std::string::npos)
        << result.err;
    const auto [urls, lines] = union_of_records();
    EXPECT_GT(urls.size(), 0u) << "what was fetched before Redis went away is in the records";
}

TEST_F(shared_crawl, a_redis_out_of_memory_mid_crawl_stops_it_with_status_1) {
    site_server site{20ms};
    child_process instance(command(site, "0"));
    wait_until([&] { return site.requested() >= 10; });
    // noeviction (the default) and a limit below what Redis uses already: every write is refused with OOM.
    EXPECT_EQ(redis.command({"CONFIG", "SET", "maxmemory", "1"}), "+OK\r\n");
    const auto result = instance.wait(30s);
    EXPECT_EQ(result.exit_code, 1) << result.err;
    EXPECT_NE(result.err.find("cannot store the crawl: redis: OOM"), std::string::npos) << result.err;
    EXPECT_LT(site.requested(), site.site.expected_requests.size()) << "it stopped before the end";
}

TEST(shared_crawl_start,
     before_the_crawl_starts_a_redis_that_refuses_is_status_2_and_one_that_fails_status_1) {
    site_server site{0ms};
    temp_dir dir{"shared-crawl-start"};
    const auto run = [&](const std::string& url, std::vector<std::string> environment = {}) {
        return run_process({cli, "-qq", "--redis", url, "--redis-timeout", "300ms", "--crawl-id", "start",
                            "-o", (dir.path / "records.jsonl").string(), "--overwrite",
                            site.server.origin() + "/"},
                           std::move(environment), 30s);
    };
    {
        SCOPED_TRACE("unreachable");
        const std::string nobody = "redis://127.0.0.1:" + std::to_string(free_loopback_port()) + "/0";
        const auto result = run(nobody);
        EXPECT_EQ(result.exit_code, 1) << result.err;
        EXPECT_NE(result.err.find("giving up after state.redis_timeout"), std::string::npos) << result.err;
        // asiocrawl report gives up after 10 s, under the same rule.
        const auto report = run_process({cli, "report", "--redis", nobody, "--crawl-id", "start"}, 30s);
        EXPECT_EQ(report.exit_code, 1) << report.err;
        EXPECT_NE(report.err.find("has not answered for"), std::string::npos) << report.err;
    }
    {
        SCOPED_TRACE("wrong password");
        redis_server redis;
        EXPECT_EQ(redis.command({"CONFIG", "SET", "requirepass", "the-right-one"}), "+OK\r\n");
        const auto result = run(redis.url(), {"ASIOCRAWL_REDIS_PASSWORD=a-wrong-one"});
        EXPECT_EQ(result.exit_code, 2) << result.err;
        EXPECT_NE(result.err.find("refuses the crawl: redis: WRONGPASS"), std::string::npos) << result.err;
        EXPECT_NE(result.err.find("redis://:***@127.0.0.1"), std::string::npos) << result.err;
        EXPECT_EQ(result.err.find("a-wrong-one"), std::string::npos) << "the password is never shown";
        const auto none = run(redis.url());
        EXPECT_EQ(none.exit_code, 2) << none.err;
        EXPECT_NE(none.err.find("NOAUTH"), std::string::npos) << none.err;
        const auto report = run_process({cli, "report", "--redis", redis.url(), "--crawl-id", "start"},
                                        {"ASIOCRAWL_REDIS_PASSWORD=a-wrong-one"}, 30s);
        EXPECT_EQ(report.exit_code, 2) << report.err;
        EXPECT_NE(report.err.find("WRONGPASS"), std::string::npos) << report.err;
    }
    {
        SCOPED_TRACE("out of memory");
        redis_server redis;
        EXPECT_EQ(redis.command({"CONFIG", "SET", "maxmemory", "1"}), "+OK\r\n");
        const auto result = run(redis.url());
        EXPECT_EQ(result.exit_code, 1) << result.err;
        EXPECT_NE(result.err.find("cannot store the crawl: redis: OOM"), std::string::npos) << result.err;
    }
    EXPECT_EQ(site.requested(), 0u) << "nothing is fetched without the store";
}

// rediss://: a Redis that speaks TLS only to clients with a certificate of its CA, and a password from the
// environment. Two instances share the crawl over it; the password is in no log line.
TEST(shared_crawl_tls, two_instances_over_rediss_reach_the_ground_truth) {
    const auto pki = make_test_pki();
    redis_server redis(redis_tls_setup{pki.ca_pem, pki.server_cert_pem, pki.server_key_pem, true});
    const std::string password = "tls-crawl-secret";
    redis.command({"CONFIG", "SET", "requirepass", password});
    temp_dir dir{"shared-crawl-tls"};
    temp_pem_file ca{pki.ca_pem};
    temp_pem_file cert{pki.client_cert_pem};
    temp_pem_file key{pki.client_key_pem};
    site_server site{3ms};
    const std::vector<std::string> tls_flags{"--redis-ca-file",    ca.path().string(), "--redis-cert",
                                             cert.path().string(), "--redis-key",      key.path().string()};
    const auto command = [&](const std::string& instance) {
        std::vector<std::string> argv{
            cli,           "-v",
            "--redis",     redis.tls_url(),
            "--crawl-id",  "tls",
            "--instance",  instance,
            "--max-tasks", std::to_string(max_tasks),
            "-o",          (dir.path / ("records-" + instance + ".jsonl")).string()};
        argv.insert(argv.end(), tls_flags.begin(), tls_flags.end());
        argv.push_back(site.server.origin() + "/");
        return argv;
    };
    const std::vector<std::string> environment{"ASIOCRAWL_REDIS_PASSWORD=" + password};
    child_process first(command("0"), environment);
    child_process second(command("1"), environment);
    std::set<std::string> urls;
    std::size_t lines = 0;
    for (auto* instance : {&first, &second}) {
        const auto result = instance->wait(60s);
        EXPECT_EQ(result.exit_code, 0) << result.err;
        EXPECT_NE(result.err.find("rediss://:***@127.0.0.1"), std::string::npos) << result.err;
        EXPECT_EQ(result.err.find(password), std::string::npos) << "the password is never logged";
    }
    for (const auto& entry : fs::directory_iterator(dir.path)) {
        std::ifstream in(entry.path());
        for (std::string line; std::getline(in, line);) {
            ++lines;
            urls.insert(std::string(boost::json::parse(line).as_object().at("url").as_string()));
        }
    }
    EXPECT_EQ(urls, site.expected_urls());
    EXPECT_EQ(lines, urls.size()) << "a URL got a record from two instances";
    EXPECT_EQ(site.fetched_twice(), 0u);

    // asiocrawl report over TLS, with the same files.
    std::vector<std::string> report{cli, "report", "--redis", redis.tls_url(), "--crawl-id", "tls"};
    report.insert(report.end(), tls_flags.begin(), tls_flags.end());
    const auto printed = run_process(report, environment, 30s);
    EXPECT_EQ(printed.exit_code, 0) << printed.err;
    EXPECT_NE(printed.out.find("Done: " + std::to_string(lines) + "\n"), std::string::npos) << printed.out;
    EXPECT_NE(printed.out.find("the crawl is over"), std::string::npos) << printed.out;
}

TEST(shared_crawl_tls, unusable_tls_settings_are_a_usage_error_naming_the_key) {
    struct row {
        std::vector<std::string> args;
        std::string expected;
    };
    const std::vector<row> rows = {
        {{"--redis", "rediss://127.0.0.1:1", "--redis-ca-file", "/nonexistent/ca.pem"},
         "state.redis_tls.ca_file: cannot use /nonexistent/ca.pem"},
        {{"--redis", "rediss://127.0.0.1:1", "--redis-cert", "/nonexistent/c.pem"},
         "state.redis_tls.cert_file: cannot use /nonexistent/c.pem"},
        {{"--redis", "redis://127.0.0.1:1", "--redis-insecure"},
         "state.redis_tls.* is set but state.redis is not a rediss:// URL"},
        {{"report", "--redis", "rediss://127.0.0.1:1", "--crawl-id", "x", "--redis-key", "/nonexistent/k",
          "--redis-cert", "/nonexistent/c"},
         "--redis-cert: cannot use /nonexistent/c"},
    };
    for (const auto& r : rows) {
        std::vector<std::string> argv{cli};
        argv.insert(argv.end(), r.args.begin(), r.args.end());
        if (r.args.front() != "report")
            argv.push_back("http://127.0.0.1:1/");
        const auto result = run_process(argv, 30s);
        SCOPED_TRACE(r.expected);
        EXPECT_EQ(result.exit_code, 2) << result.err;
        EXPECT_NE(result.err.find(r.expected), std::string::npos) << result.err;
    }
}

TEST(shared_crawl_tls, an_untrusted_redis_certificate_is_given_up_after_redis_timeout_with_its_reason) {
    const auto pki = make_test_pki();
    redis_server redis(redis_tls_setup{pki.ca_pem, pki.server_cert_pem, pki.server_key_pem, false});
    // The test CA is in no system store: without --redis-ca-file the certificate is refused, retried like an
    // unreachable Redis, and given up after state.redis_timeout.
    const auto refused = run_process({cli, "--redis", redis.tls_url(), "--redis-timeout", "300ms",
                                      "--crawl-id", "x", "http://127.0.0.1:1/"},
                                     30s);
    EXPECT_EQ(refused.exit_code, 1) << refused.err; // unreachable: a failure, as a full disk
    EXPECT_NE(refused.err.find("is not trusted"), std::string::npos) << refused.err;
    EXPECT_NE(refused.err.find("state.redis_timeout"), std::string::npos) << refused.err;
    // --redis-insecure connects anyway, and says once that it does not verify.
    const auto insecure = run_process(
        {cli, "report", "--redis", redis.tls_url(), "--crawl-id", "none", "--redis-insecure"}, 30s);
    EXPECT_EQ(insecure.exit_code, 2) << insecure.err; // connected, but there is no such crawl
    EXPECT_NE(insecure.err.find("no crawl none"), std::string::npos) << insecure.err;
    const auto warned = insecure.err.find("is not verified");
    EXPECT_NE(warned, std::string::npos) << insecure.err;
    EXPECT_EQ(insecure.err.find("is not verified", warned + 1), std::string::npos) << insecure.err;
}

namespace {

/// A site whose robots.txt asks for a Crawl-delay, noting when each page request arrived.
struct delayed_site {
    static constexpr int pages = 8;
    asio::io_context ctx;
    std::mutex mutex;
    std::vector<std::pair<std::string, std::chrono::steady_clock::time_point>> arrivals;
    demo::http_server server{ctx.get_executor(), [this](const http_request& req) { return answer(req); }};
    std::thread thread{[this] { ctx.run(); }};

    asio::awaitable<std::optional<http_response>> answer(http_request req) {
        const std::string target(req.target());
        if (target == "/robots.txt")
            co_return make_response(200, "User-agent: *\nCrawl-delay: 0.3\n", "text/plain");
        {
            std::lock_guard lock(mutex);
            arrivals.emplace_back(target, std::chrono::steady_clock::now());
        }
        std::string html = "<html>";
        if (target == "/")
            for (int i = 0; i < pages; ++i)
                html += "<a href=/p" + std::to_string(i) + ">p</a>";
        co_return make_response(200, html);
    }
    ~delayed_site() {
        asio::post(ctx, [this] { server.stop(); });
        thread.join();
    }
};

} // namespace

TEST_F(shared_crawl, robots_crawl_delay_spaces_the_starts_of_every_instance) {
    delayed_site site;
    std::vector<std::unique_ptr<child_process>> instances;
    for (int i = 0; i < 3; ++i)
        instances.push_back(
            std::make_unique<child_process>(command(site.server.origin() + "/", std::to_string(i))));
    for (auto& instance : instances) {
        const auto result = instance->wait(60s);
        EXPECT_EQ(result.exit_code, 0) << result.err;
    }
    const auto [urls, lines] = union_of_records();
    EXPECT_EQ(lines, static_cast<std::size_t>(delayed_site::pages + 1)); // the root and its pages
    std::lock_guard lock(site.mutex);
    ASSERT_EQ(site.arrivals.size(), static_cast<std::size_t>(delayed_site::pages + 1));
    // The delay runs from one start to the next whichever instance makes them. A lower bound, with room for
    // the instances' differing paths from the lease to the request (scheduling on a loaded machine): without
    // a crawl-wide delay, three instances would start pages together.
    for (std::size_t i = 1; i < site.arrivals.size(); ++i) {
        const auto gap = std::chrono::duration_cast<std::chrono::milliseconds>(site.arrivals[i].second -
                                                                               site.arrivals[i - 1].second);
        std::cout << site.arrivals[i].first << " +" << gap.count() << " ms\n";
        EXPECT_GE(gap, 200ms) << site.arrivals[i].first;
    }
}

namespace {

/// Two loopback sites named a.test and b.test (--host-override), each a root linking to `pages` leaf pages
/// (a robots.txt of 404), answering late by `delay`, noting when each request for a page arrived.
struct named_site {
    named_site(std::string n, int p, std::chrono::milliseconds d)
        : name(std::move(n))
        , pages(p)
        , delay(d) {}
    std::string name;
    int pages;
    std::chrono::milliseconds delay;
    std::atomic<bool> root_may_answer{true};
    std::atomic<bool> root_requested{false};
    asio::io_context ctx;
    std::mutex mutex;
    std::vector<std::pair<std::string, std::chrono::steady_clock::time_point>> arrivals; // robots.txt aside
    demo::http_server server{ctx.get_executor(), [this](const http_request& req) { return answer(req); }};
    std::thread thread{[this] { ctx.run(); }};

    asio::awaitable<std::optional<http_response>> answer(http_request req) {
        const std::string target(req.target());
        if (target == "/robots.txt")
            co_return make_response(404, "", "text/plain");
        {
            std::lock_guard lock(mutex);
            arrivals.emplace_back(target, std::chrono::steady_clock::now());
        }
        if (target == "/") {
            root_requested = true;
            while (!root_may_answer) // until the test lets it go (at the latest when it ends)
                co_await sleep_for(5ms);
        }
        co_await sleep_for(delay);
        std::string html = "<html>";
        if (target == "/")
            for (int i = 0; i < pages; ++i)
                html += "<a href=/p" + std::to_string(i) + ">p</a>";
        co_return make_response(200, html);
    }
    std::string root() const { return "http://" + name + ":" + std::to_string(server.port()) + "/"; }
    std::set<std::string> expected_urls() const {
        std::set<std::string> out{root()};
        for (int i = 0; i < pages; ++i)
            out.insert(root() + "p" + std::to_string(i));
        return out;
    }
    std::size_t requested() {
        std::lock_guard lock(mutex);
        return arrivals.size();
    }
    ~named_site() {
        root_may_answer = true; // a test that failed before letting it go
        asio::post(ctx, [this] { server.stop(); });
        thread.join();
    }
};

/// A call to an instance's control API (`--listen 127.0.0.1:PORT`, no token on loopback): the answer's status
/// and body.
std::pair<unsigned, std::string> api_call(unsigned short port, boost::beast::http::verb verb,
                                          const std::string& target, const std::string& body = {}) {
    namespace http = boost::beast::http;
    asio::io_context ctx;
    boost::beast::tcp_stream stream(ctx);
    stream.expires_after(10s);
    stream.connect(asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
    http::request<http::string_body> request{verb, target, 11};
    request.set(http::field::host, "127.0.0.1");
    request.body() = body;
    request.prepare_payload();
    http::write(stream, request);
    boost::beast::flat_buffer buffer;
    http::response<http::string_body> response;
    http::read(stream, buffer, response);
    return {response.result_int(), response.body()};
}

bool listening(unsigned short port) {
    try {
        return api_call(port, boost::beast::http::verb::get, "/api/status").first == 200;
    } catch (const std::exception&) {
        return false; // not yet
    }
}

/// The host's entry in an instance's GET /api/hosts, or an empty object (not listed, or no answer yet).
boost::json::object host_entry(unsigned short port, const std::string& host) {
    try {
        const auto [status, body] = api_call(port, boost::beast::http::verb::get, "/api/hosts");
        if (status != 200)
            return {};
        const auto answer = boost::json::parse(body);
        for (const auto& h : answer.as_object().at("hosts").as_array())
            if (h.as_object().at("host").as_string() == host)
                return h.as_object();
    } catch (const std::exception&) {
        // the listener is not up yet
    }
    return {};
}

} // namespace

// The control API in a shared crawl acts crawl-wide through Redis (docs/CONTROL.md, "Shared crawls"): b.test
// paused through instance 0 while its root is in flight gets no request from either instance while a.test
// is crawled to the end; its delay and max_per_host set through instance 0 show in instance 1's API, and it
// is resumed through instance 1; its pages then arrive spaced by the delay, whichever instance fetches them,
// and the crawl ends with every page of both sites, each once.
TEST_F(shared_crawl, a_pause_and_limits_set_through_one_instance_hold_for_every_instance) {
    using boost::beast::http::verb;
    named_site a{"a.test", 24, 10ms};
    named_site b{"b.test", 6, 0ms};
    b.root_may_answer = false;
    const unsigned short ports[2] = {free_loopback_port(), free_loopback_port()};
    std::vector<std::unique_ptr<child_process>> instances;
    for (int i = 0; i < 2; ++i) {
        // A lease far longer than the test (as the graceful stop's test does): nobody is killed here, and on
        // a loaded machine a 1 s lease may run out under an instance that is slow to renew it, which fetches
        // a URL twice.
        auto argv = with_option(command(a.root(), std::to_string(i)), "--lease", "10m");
        // With robots.txt (a 404, fetched by one instance and taken from Redis by the other): an answer taken
        // from Redis is no request start for the taker's own spacing of the host, which would otherwise hold
        // its first page of b.test up to a delay after its lease, close to the other instance's next one.
        argv.insert(argv.end() - 1,
                    {"--host-override", "a.test=127.0.0.1", "--host-override", "b.test=127.0.0.1", "--listen",
                     "127.0.0.1:" + std::to_string(ports[i])});
        argv.push_back(b.root());
        instances.push_back(std::make_unique<child_process>(argv));
    }
    wait_until([&] { return b.root_requested.load(); });
    ASSERT_TRUE(b.root_requested);
    for (const auto port : ports) // each instance opens its listener as its crawl starts
        wait_until([&] { return listening(port); });
    const auto paused = api_call(ports[0], verb::post, "/api/hosts/b.test/pause");
    EXPECT_EQ(paused.first, 200u) << paused.second;
    // Instance 1 learns of the pause through Redis only.
    wait_until([&] {
        const auto h = host_entry(ports[1], "b.test");
        return h.contains("paused") && h.at("paused").as_bool();
    });
    const auto seen_paused = host_entry(ports[1], "b.test");
    ASSERT_TRUE(seen_paused.contains("paused") && seen_paused.at("paused").as_bool())
        << "instance 1 does not see the pause: " << boost::json::serialize(seen_paused);
    b.root_may_answer = true; // its links come while it is paused
    const auto a_total = a.expected_urls().size();
    wait_until([&] { return a.requested() >= a_total; });
    EXPECT_EQ(a.requested(), a_total) << "a.test went on";
    EXPECT_EQ(b.requested(), 1u) << "b.test's root only: neither instance started its links";

    const auto limited =
        api_call(ports[0], verb::put, "/api/hosts/b.test", R"({"delay": "200ms", "max_per_host": 1})");
    EXPECT_EQ(limited.first, 200u) << limited.second;
    wait_until([&] {
        const auto h = host_entry(ports[1], "b.test");
        return h.contains("delay_ms") && h.at("delay_ms").as_int64() == 200;
    });
    const auto seen = host_entry(ports[1], "b.test");
    ASSERT_TRUE(seen.contains("delay_ms") && seen.contains("max_per_host")) << boost::json::serialize(seen);
    EXPECT_EQ(seen.at("delay_ms").as_int64(), 200) << "instance 1 does not see the delay";
    EXPECT_EQ(seen.at("max_per_host").as_int64(), 1);
    EXPECT_EQ(b.requested(), 1u) << "still paused";
    const auto resumed = api_call(ports[1], verb::post, "/api/hosts/b.test/resume");
    EXPECT_EQ(resumed.first, 200u) << resumed.second;
    EXPECT_NE(resumed.second.find("\"was_paused\":true"), std::string::npos) << resumed.second;

    for (auto& instance : instances) {
        const auto result = instance->wait(60s);
        EXPECT_EQ(result.exit_code, 0) << result.err;
    }
    auto expected = a.expected_urls();
    expected.merge(b.expected_urls());
    const auto [urls, lines] = union_of_records();
    EXPECT_EQ(urls, expected);
    EXPECT_EQ(lines, urls.size()) << "a URL got a record from two instances";
    std::lock_guard lock(b.mutex);
    for (const auto& [target, at] : b.arrivals)
        std::cout
            << "b.test" << target << " at +"
            << std::chrono::duration_cast<std::chrono::milliseconds>(at - b.arrivals.front().second).count()
            << " ms\n";
    ASSERT_EQ(b.arrivals.size(), b.expected_urls().size());
    // From the resume on, b.test's starts are the delay apart whichever instance makes them: a lower bound
    // with room for the instances' differing paths from the lease to the request (without the crawl-wide
    // delay the pages come a millisecond apart, two at a time).
    for (std::size_t i = 2; i < b.arrivals.size(); ++i) {
        const auto gap = std::chrono::duration_cast<std::chrono::milliseconds>(b.arrivals[i].second -
                                                                               b.arrivals[i - 1].second);
        std::cout << b.arrivals[i].first << " +" << gap.count() << " ms\n";
        EXPECT_GE(gap, 120ms) << b.arrivals[i].first;
    }
}

} // namespace shared_crawl_test
