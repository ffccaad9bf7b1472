// The command as an unattended container job meets hostile sites: the real asiocrawl process against a server
// that misbehaves in every way at once. The crawl must end by itself with exit status 0, a record for every
// hostile URL with its precise error kind, the well-behaved pages fetched, and a bounded peak memory although
// the site offers a gzip bomb, a 50 MiB page and endless bodies. Complements hostile_test.cpp (each case
// alone, through the library).
#include "support/compress.hpp"
#include "support/hostile_server.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/json/parse.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace asio = boost::asio;
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using asiocrawl::test::head_fields;
using asiocrawl::test::hostile_server;
using asiocrawl::test::links_to;
using exchange = hostile_server::exchange;
using task = asio::awaitable<void>;

namespace {

const std::string cli = ASIOCRAWL_CLI_PATH;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool sanitized = true;
#else
constexpr bool sanitized = false;
#endif
// Sanitizer runtimes keep freed memory in quarantine and shadow every byte: peak RSS says nothing there.
constexpr bool rss_is_meaningful = !sanitized;

/// A hostile_server answering on a thread of its own while the crawler runs as a child process. Routes are
/// set before start(); what it saw is read after stop().
struct threaded_hostile_server {
    asio::io_context ctx;
    hostile_server server{ctx.get_executor()};
    std::thread thread;

    void start() {
        thread = std::thread([this] { ctx.run(); });
    }
    void stop() {
        if (!thread.joinable())
            return;
        asio::post(ctx, [this] { server.stop(); });
        thread.join();
    }
    ~threaded_hostile_server() { stop(); }
};

struct record_line {
    int status = 0;
    std::string error_kind;
    std::uint64_t size = 0;
    int tries = 0;
};

/// The JSON Lines records file, by URL.
std::map<std::string, record_line> read_records(const fs::path& file) {
    std::map<std::string, record_line> records;
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line)) {
        const auto object = boost::json::parse(line).as_object();
        record_line r;
        if (const auto* status = object.if_contains("status"))
            r.status = static_cast<int>(status->to_number<std::int64_t>());
        if (const auto* kind = object.if_contains("error_kind"))
            r.error_kind = std::string(kind->as_string());
        if (const auto* size = object.if_contains("size"))
            r.size = size->to_number<std::uint64_t>();
        if (const auto* tries = object.if_contains("tries"))
            r.tries = static_cast<int>(tries->to_number<std::int64_t>());
        records[std::string(object.at("url").as_string())] = r;
    }
    return records;
}

struct hostile_cli : ::testing::Test {
    threaded_hostile_server site;
    asiocrawl::test::temp_dir dir{"hostile-cli"};
    fs::path records_file = dir.path / "records.jsonl";
    static constexpr std::uint64_t body_limit = 1u << 20;

    asiocrawl::test::process_result crawl(std::vector<std::string> extra_arguments) {
        site.start();
        std::vector<std::string> argv{cli,
                                      "-qq",
                                      "--timeout",
                                      "2s",
                                      "--max-tries",
                                      "2",
                                      "--max-tasks",
                                      "8",
                                      "--max-per-host",
                                      "8",
                                      "--max-body-size",
                                      std::to_string(body_limit),
                                      "-o",
                                      records_file.string()};
        argv.insert(argv.end(), extra_arguments.begin(), extra_arguments.end());
        argv.push_back(site.server.url("/"));
        // Far above the slowest case (a 2 s deadline, tried twice): a hang fails the test instead of
        // blocking.
        auto result = asiocrawl::test::run_process(argv, 120s);
        site.stop();
        return result;
    }
    static void expect_bounded_memory(const asiocrawl::test::process_result& result) {
        if (!rss_is_meaningful)
            return;
        EXPECT_GT(result.peak_rss_bytes, 0u);
        EXPECT_LT(result.peak_rss_bytes, 128u << 20)
            << "peak RSS " << (result.peak_rss_bytes >> 20) << " MiB";
    }
    std::size_t requests_for(const std::string& target) const {
        const auto& all = site.server.requests();
        return static_cast<std::size_t>(std::count(all.begin(), all.end(), target));
    }
};

TEST_F(hostile_cli, a_site_that_misbehaves_every_way_at_once) {
    auto& server = site.server;
    const std::map<std::string, std::string> expected_kinds{
        {"/stall", "request_timeout"},  {"/trickle", "request_timeout"}, {"/endless", "body_too_large"},
        {"/big", "body_too_large"},     {"/bomb", "body_too_large"},     {"/garbage", "bad_response"},
        {"/http09", "bad_response"},    {"/bad-chunks", "bad_response"}, {"/many-fields", "header_too_large"},
        {"/reset", "connection_reset"}, {"/short", "partial_response"},
    };
    std::vector<std::string> hrefs{"/ok1", "/ok2", "/deep", "/r1", "/spiral/1"};
    for (const auto& [target, kind] : expected_kinds)
        hrefs.push_back(target);
    server.page("/", links_to(hrefs));
    server.page("/ok1", "<p>fine</p>");
    server.page("/ok2", "<p>also fine</p>");
    server.page("/after-deep", "<p>reached</p>");

    server.route("/stall", [](exchange& ex) -> task { co_await ex.stall(); });
    server.route("/trickle", [](exchange& ex) -> task {
        if (co_await ex.write("HTTP/1.1 200 OK\r\nX-Slow: "))
            co_await ex.repeat("x", 200ms);
    });
    server.route("/endless", [](exchange& ex) -> task {
        if (co_await ex.write(head_fields("Connection: close\r\n")))
            co_await ex.repeat(std::string(64 * 1024, 'a'), 0ms);
    });
    server.route("/big", [](exchange& ex) -> task {
        if (co_await ex.write(head_fields("Content-Length: " + std::to_string(50u << 20) + "\r\n")))
            co_await ex.repeat(std::string(1 << 20, 'a'), 0ms, 50);
    });
    // 256 MiB of zeros are about 256 KiB gzipped: small on the wire, 256 times the limit once decoded.
    server.route(
        "/bomb",
        [bomb = asiocrawl::test::compress(std::string(256u << 20, '\0'), asiocrawl::test::wrapper::gzip)](
            exchange& ex) -> task {
            co_await ex.write(hostile_server::response(200, bomb, "text/html", "Content-Encoding: gzip\r\n"));
        });
    server.route("/garbage", [](exchange& ex) -> task {
        co_await ex.write(std::string("\x00\x01\xfe garbage\r\n\r\n", 15));
    });
    server.route("/http09",
                 [](exchange& ex) -> task { co_await ex.write("<html><body>old</body></html>\n"); });
    server.route("/bad-chunks", [](exchange& ex) -> task {
        co_await ex.write(head_fields("Transfer-Encoding: chunked\r\n") + "1ffffffffffffffff\r\nabc\r\n");
    });
    server.route("/many-fields", [](exchange& ex) -> task {
        std::string fields;
        for (int i = 0; i < 10'000; ++i)
            fields += "X-" + std::to_string(i) + ": v\r\n";
        co_await ex.write(head_fields(fields + "Content-Length: 0\r\n"));
    });
    server.route("/reset", [](exchange& ex) -> task {
        if (!co_await ex.write(head_fields("Content-Length: 50000\r\n") + std::string(1000, 'a')))
            co_return;
        if (co_await ex.pause(50ms))
            ex.reset();
    });
    server.route("/short", [](exchange& ex) -> task {
        co_await ex.write(head_fields("Content-Length: 1000\r\n") + "short");
    });
    // Markup nested 100,000 levels deep, with a link at the bottom.
    std::string deep = "<html><body>";
    for (int i = 0; i < 100'000; ++i)
        deep += "<span>";
    server.page("/deep", deep + "<a href=\"/after-deep\">bottom</a>");
    // A redirect loop through three URLs.
    for (const auto& [from, to] :
         std::map<std::string, std::string>{{"/r1", "/r2"}, {"/r2", "/r3"}, {"/r3", "/r1"}})
        server.route(from, [to](exchange& ex) -> task {
            co_await ex.write(hostile_server::response(301, "", "text/html", "Location: " + to + "\r\n"));
        });
    // An infinite URL space: every page links one level deeper, to a longer URL; the trap limits end it.
    server.fallback([](exchange& ex) -> task {
        const std::string target = ex.target();
        if (!target.starts_with("/spiral/")) {
            co_await hostile_server::not_found(ex);
            co_return;
        }
        // Built before the co_await: g++ 12 rejects a braced list in the same full expression as co_await.
        const std::vector<std::string> deeper{target + "/" + std::to_string(target.size())};
        std::string answer = hostile_server::response(200, links_to(deeper));
        co_await ex.write(std::move(answer));
    });

    const auto result = crawl({"--ignore-robots"});

    ASSERT_FALSE(result.timed_out) << "the crawl did not end by itself";
    EXPECT_EQ(result.exit_code, 0) << result.err;
    const auto records = read_records(records_file);
    for (const auto& [target, kind] : expected_kinds) {
        const auto it = records.find(server.url(target));
        ASSERT_NE(it, records.end()) << target << " has no record";
        EXPECT_EQ(it->second.error_kind, kind) << target;
    }
    for (const auto* fine : {"/ok1", "/ok2", "/deep", "/after-deep"}) {
        const auto it = records.find(server.url(fine));
        ASSERT_NE(it, records.end()) << fine << " has no record";
        EXPECT_EQ(it->second.status, 200) << fine;
        EXPECT_EQ(it->second.error_kind, "") << fine;
    }
    for (const auto& [url, r] : records)
        EXPECT_LE(r.size, body_limit) << url;
    // Each URL of the loop once; the spiral stopped by a trap limit, far from its end (there is none).
    for (const auto* hop : {"/r1", "/r2", "/r3"})
        EXPECT_EQ(requests_for(hop), 1u) << hop;
    std::size_t spiral = 0;
    for (const auto& target : server.requests())
        spiral += target.starts_with("/spiral/") ? 1 : 0;
    EXPECT_GT(spiral, 1u);
    EXPECT_LE(spiral, 40u) << "the default trap limits (32 path segments, 2,048 bytes) end the spiral";
    expect_bounded_memory(result);
}

TEST_F(hostile_cli, a_robots_txt_that_never_answers_costs_its_origin_one_error_each) {
    site.server.route("/robots.txt", [](exchange& ex) -> task { co_await ex.stall(); });
    site.server.page("/", links_to({"/a", "/b"}));
    const auto result = crawl({});
    ASSERT_FALSE(result.timed_out) << "the crawl did not end by itself";
    EXPECT_EQ(result.exit_code, 4) << "nothing was fetched; " << result.err;
    const auto records = read_records(records_file);
    const auto root = records.find(site.server.url("/"));
    ASSERT_NE(root, records.end());
    EXPECT_EQ(root->second.error_kind, "robots_unavailable");
    EXPECT_EQ(requests_for("/"), 0u) << "nothing is fetched from an origin whose robots.txt is unreachable";
}

TEST_F(hostile_cli, an_endless_robots_txt_is_read_up_to_its_cap_and_obeyed) {
    // "Disallow: /private" first, then rules without end: the cap (500 KiB) keeps the head and drops the
    // rest.
    site.server.route("/robots.txt", [](exchange& ex) -> task {
        if (co_await ex.write("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n"
                              "User-agent: *\nDisallow: /private\n"))
            co_await ex.repeat("Disallow: /nothing-here-either\n", 0ms);
    });
    site.server.page("/", links_to({"/private/x", "/public"}));
    site.server.page("/public", "<p>ok</p>");
    const auto result = crawl({});
    ASSERT_FALSE(result.timed_out) << "the crawl did not end by itself";
    EXPECT_EQ(result.exit_code, 0) << result.err;
    const auto records = read_records(records_file);
    EXPECT_EQ(records.at(site.server.url("/public")).status, 200);
    EXPECT_EQ(records.at(site.server.url("/private/x")).error_kind, "robots_denied");
    EXPECT_EQ(requests_for("/private/x"), 0u);
    expect_bounded_memory(result);
}

TEST_F(hostile_cli, hostile_sitemaps_cost_nothing_but_their_own_records) {
    // A gzip bomb as sitemap.xml.gz, an entity-expansion bomb ("billion laughs") as sitemap.xml.
    std::string laughs = "<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [<!ENTITY lol \"lol\">";
    std::string previous = "lol";
    for (int i = 1; i <= 9; ++i) {
        const std::string name = "lol" + std::to_string(i);
        laughs += "<!ENTITY " + name + " \"";
        for (int j = 0; j < 10; ++j)
            laughs += "&" + previous + ";";
        laughs += "\">";
        previous = name;
    }
    laughs += "]>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"><url><loc>&" + previous +
              ";</loc></url><url><loc>/listed</loc></url></urlset>";
    site.server.page("/robots.txt",
                     "User-agent: *\nAllow: /\nSitemap: " + site.server.url("/sitemap.xml") +
                         "\nSitemap: " + site.server.url("/bomb.xml.gz") + "\n",
                     "text/plain");
    site.server.page("/sitemap.xml", laughs, "application/xml");
    site.server.route(
        "/bomb.xml.gz",
        [bomb = asiocrawl::test::compress(std::string(256u << 20, ' '), asiocrawl::test::wrapper::gzip)](
            exchange& ex) -> task {
            co_await ex.write(hostile_server::response(200, bomb, "application/gzip"));
        });
    site.server.page("/", links_to({"/page"}));
    site.server.page("/page", "<p>ok</p>");
    const auto result = crawl({"--sitemaps"});
    ASSERT_FALSE(result.timed_out) << "the crawl did not end by itself";
    EXPECT_EQ(result.exit_code, 0) << result.err;
    const auto records = read_records(records_file);
    EXPECT_EQ(records.at(site.server.url("/page")).status, 200);
    expect_bounded_memory(result);
}

TEST_F(hostile_cli, running_out_of_descriptors_loses_no_page) {
    // 500 workers under a limit of 64 open files: most connects find no descriptor. That is the crawler's own
    // limit, not the site's failure: each waits for one, and every page of the site is still crawled.
    if (!rss_is_meaningful)
        GTEST_SKIP()
            << "under sanitizers: their runtimes need descriptors of their own (UBSan's vptr check opens "
               "a pipe to probe memory, and reports a false error when none is left)";
    constexpr int pages = 2'000;
    site.server.fallback([](exchange& ex) -> task {
        const auto target = ex.target();
        if (!target.starts_with("/p/")) {
            co_await ex.write(hostile_server::response(404, "no"));
            co_return;
        }
        const int n = std::stoi(target.substr(3));
        std::vector<std::string> children;
        for (int child = 10 * n + 1; child <= 10 * n + 10 && child < pages; ++child)
            children.push_back("/p/" + std::to_string(child));
        co_await ex.write(hostile_server::response(200, links_to(children)));
    });
    site.server.page("/", links_to({"/p/0"}));
    site.start();
    const std::vector<std::string> argv{"/bin/sh",
                                        "-c",
                                        "ulimit -n 64 && exec \"$0\" \"$@\"",
                                        cli,
                                        "--no-report",
                                        "--timeout",
                                        "20s",
                                        "--max-tasks",
                                        "500",
                                        "--max-per-host",
                                        "500",
                                        "-o",
                                        records_file.string(),
                                        site.server.url("/")};
    const auto result = asiocrawl::test::run_process(argv, 180s);
    site.stop();
    ASSERT_FALSE(result.timed_out) << "the crawl did not end by itself";
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.err.find("over the limit of 64 open files"), std::string::npos)
        << "a warning at the start says the workers do not fit: " << result.err;
    const auto records = read_records(records_file);
    std::size_t fetched = 0;
    for (int n = 0; n < pages; ++n) {
        const auto it = records.find(site.server.url("/p/" + std::to_string(n)));
        if (it != records.end() && it->second.status == 200 && it->second.error_kind.empty())
            ++fetched;
        else if (it != records.end())
            ADD_FAILURE() << "/p/" << n << ": " << it->second.error_kind;
        if (it != records.end() && it->second.tries != 1)
            ADD_FAILURE() << "/p/" << n << " took " << it->second.tries
                          << " tries: waiting for a descriptor is not the site's failure";
    }
    EXPECT_EQ(fetched, static_cast<std::size_t>(pages));
    EXPECT_EQ(requests_for("/p/1999"), 1u);
}

} // namespace
