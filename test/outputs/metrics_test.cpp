#include <asiocrawl/outputs/metrics.hpp>

#include <asiocrawl/crawler.hpp>
#include <asiocrawl/error.hpp>
#include <asiocrawl/outputs/output_set.hpp>

#include "support/files.hpp"
#include "support/loopback_crawl.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/json/parse.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>

using asiocrawl::test::read_file;

namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using namespace asiocrawl;
using namespace asiocrawl::outputs;
using namespace std::chrono_literals;

// ---- a small parser of the text exposition format, strict enough to catch malformed output ----

struct exposition {
    std::map<std::string, double> samples;    // "name{labels}" -> value
    std::map<std::string, std::string> types; // family -> counter/gauge/histogram
    std::vector<std::string> problems;

    bool has(const std::string& series) const { return samples.count(series) != 0; }
    double at(const std::string& series) const {
        const auto found = samples.find(series);
        return found == samples.end() ? -1 : found->second;
    }
};

std::string family_of(const std::string& name, const std::map<std::string, std::string>& types) {
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
        const std::string s = suffix;
        if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) {
            const std::string base = name.substr(0, name.size() - s.size());
            if (types.count(base) && types.at(base) == "histogram")
                return base;
        }
    }
    return name;
}

exposition parse_exposition(const std::string& text) {
    exposition e;
    std::istringstream in{text};
    std::string line;
    const std::regex type_line{
        R"(# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped))"};
    const std::regex help_line{R"(# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) .*)"};
    const std::regex sample_line{
        R"(([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*"(?:,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*")*\})? ([^ ]+))"};
    if (text.empty() || text.back() != '\n')
        e.problems.push_back("the exposition must end with a newline");
    while (std::getline(in, line)) {
        std::smatch m;
        if (std::regex_match(line, m, type_line)) {
            if (e.types.count(m[1]))
                e.problems.push_back("TYPE twice for " + m[1].str());
            e.types[m[1]] = m[2];
        } else if (std::regex_match(line, m, help_line)) {
        } else if (std::regex_match(line, m, sample_line)) {
            const std::string family = family_of(m[1], e.types);
            if (!e.types.count(family))
                e.problems.push_back("sample before its TYPE: " + line);
            const std::string key = m[1].str() + m[2].str();
            if (e.samples.count(key))
                e.problems.push_back("duplicate series " + key);
            try {
                std::size_t used = 0;
                const std::string v = m[3];
                e.samples[key] = v == "+Inf" ? HUGE_VAL : std::stod(v, &used);
                if (v != "+Inf" && used != v.size())
                    e.problems.push_back("bad value: " + line);
            } catch (const std::exception&) {
                e.problems.push_back("bad value: " + line);
            }
        } else {
            e.problems.push_back("unparsable line: " + line);
        }
    }
    return e;
}

TEST(ExpositionParser, RejectsMalformedText) {
    EXPECT_FALSE(parse_exposition("# TYPE a counter\na 1\n").problems.size());
    EXPECT_TRUE(parse_exposition("a 1\n").problems.size());                        // no TYPE
    EXPECT_TRUE(parse_exposition("# TYPE a counter\na{x=1} 1\n").problems.size()); // unquoted label
    EXPECT_TRUE(parse_exposition("# TYPE a counter\na one\n").problems.size());
    EXPECT_TRUE(parse_exposition("# TYPE a counter\na 1").problems.size()); // no final newline
}

// ---- the registry, sans-io ----

record make(int status, std::chrono::milliseconds elapsed, std::uint64_t size = 0, int tries = 1) {
    record r;
    r.url = "http://h/";
    r.status = status;
    r.elapsed = elapsed;
    r.size = size;
    r.tries = tries;
    return r;
}

record failure(boost::system::error_code ec, std::chrono::milliseconds elapsed, int tries = 1) {
    record r = make(0, elapsed, 0, tries);
    r.error = ec;
    return r;
}

TEST(MetricsRegistry, CountsRecordsByShape) {
    metrics_registry registry;
    registry.observe(make(200, 3ms, 1000));
    registry.observe(make(200, 40ms, 500, 3)); // two retries
    record hop = make(301, 7ms);
    hop.next_url = "http://h/next";
    registry.observe(hop);
    registry.observe(make(404, 200ms, 20));
    registry.observe(make(503, 2s, 0, 4));
    registry.observe(failure(asio::error::connection_refused, 1500ms, 4));
    registry.observe(failure(error::request_timeout, 31s));
    registry.observe(failure(error::robots_denied, 0ms));
    registry.observe(failure(error::robots_denied, 0ms));

    const exposition e = parse_exposition(registry.render(nullptr));
    EXPECT_THAT(e.problems, testing::IsEmpty());
    EXPECT_EQ(e.at("asiocrawl_records_total"), 9);
    EXPECT_EQ(e.at("asiocrawl_pages_total"), 4); // 200, 200, 404 and 503: final answers, not failures
    EXPECT_EQ(e.at("asiocrawl_redirects_total"), 1);
    EXPECT_EQ(e.at("asiocrawl_body_bytes_total"), 1520);
    EXPECT_EQ(e.at("asiocrawl_responses_total{class=\"2xx\"}"), 2);
    EXPECT_EQ(e.at("asiocrawl_responses_total{class=\"3xx\"}"), 1);
    EXPECT_EQ(e.at("asiocrawl_responses_total{class=\"4xx\"}"), 1);
    EXPECT_EQ(e.at("asiocrawl_responses_total{class=\"5xx\"}"), 1);
    EXPECT_EQ(e.at("asiocrawl_failures_total{kind=\"connection_refused\"}"), 1);
    EXPECT_EQ(e.at("asiocrawl_failures_total{kind=\"request_timeout\"}"), 1);
    EXPECT_FALSE(e.has("asiocrawl_failures_total{kind=\"robots_denied\"}"));
    EXPECT_EQ(e.at("asiocrawl_robots_denied_total"), 2);
    EXPECT_EQ(e.at("asiocrawl_retries_total"), 2 + 3 + 3);
    EXPECT_EQ(e.types.at("asiocrawl_records_total"), "counter");
    EXPECT_EQ(e.types.at("asiocrawl_fetch_duration_seconds"), "histogram");
    // Without a snapshot there are no gauges.
    EXPECT_FALSE(e.has("asiocrawl_queued_urls"));

    // Latencies 3ms 7ms 40ms 200ms 1.5s 2s 31s (denials are not fetches); buckets are cumulative.
    EXPECT_EQ(e.at("asiocrawl_fetch_duration_seconds_bucket{le=\"0.005\"}"), 1);
    EXPECT_EQ(e.at("asiocrawl_fetch_duration_seconds_bucket{le=\"0.01\"}"), 2);
    EXPECT_EQ(e.at("asiocrawl_fetch_duration_seconds_bucket{le=\"0.05\"}"), 3);
    EXPECT_EQ(e.at("asiocrawl_fetch_duration_seconds_bucket{le=\"0.25\"}"), 4);
    EXPECT_EQ(e.at("asiocrawl_fetch_duration_seconds_bucket{le=\"2.5\"}"), 6);
    EXPECT_EQ(e.at("asiocrawl_fetch_duration_seconds_bucket{le=\"30\"}"), 6);
    EXPECT_EQ(e.at("asiocrawl_fetch_duration_seconds_bucket{le=\"+Inf\"}"), 7);
    EXPECT_EQ(e.at("asiocrawl_fetch_duration_seconds_count"), 7);
    EXPECT_DOUBLE_EQ(e.at("asiocrawl_fetch_duration_seconds_sum"), 0.003 + 0.007 + 0.04 + 0.2 + 1.5 + 2 + 31);
}

TEST(metrics_registry, a_rejected_type_is_counted_apart_from_failures) {
    metrics_registry registry;
    record rejected = make(200, 3ms);
    rejected.error = error::type_rejected;
    registry.observe(rejected);
    const exposition e = parse_exposition(registry.render(nullptr));
    EXPECT_THAT(e.problems, testing::IsEmpty());
    EXPECT_EQ(e.at("asiocrawl_type_rejected_total"), 1);
    EXPECT_FALSE(e.has("asiocrawl_failures_total{kind=\"type_rejected\"}"));
    EXPECT_EQ(e.at("asiocrawl_pages_total"), 0);
}

TEST(MetricsRegistry, GaugesComeFromTheSnapshot) {
    metrics_registry registry;
    crawl_progress live;
    live.queued = 12;
    live.in_flight = 3;
    live.hosts = 2;
    const exposition e = parse_exposition(registry.render(&live));
    EXPECT_THAT(e.problems, testing::IsEmpty());
    EXPECT_EQ(e.at("asiocrawl_queued_urls"), 12);
    EXPECT_EQ(e.at("asiocrawl_in_flight_fetches"), 3);
    EXPECT_EQ(e.at("asiocrawl_known_hosts"), 2);
    EXPECT_EQ(e.types.at("asiocrawl_queued_urls"), "gauge");
    EXPECT_EQ(e.at("asiocrawl_records_total"), 0);
}

struct listen_case {
    const char* text;
    const char* address; // nullptr: invalid
    unsigned short port;
};

class ListenAddress : public testing::TestWithParam<listen_case> {};

TEST_P(ListenAddress, Parses) {
    const listen_case& c = GetParam();
    if (c.address == nullptr) {
        EXPECT_THROW(parse_listen_address(c.text), std::invalid_argument) << c.text;
        return;
    }
    const auto endpoint = parse_listen_address(c.text);
    EXPECT_EQ(endpoint.address().to_string(), c.address);
    EXPECT_EQ(endpoint.port(), c.port);
}

INSTANTIATE_TEST_SUITE_P(
    Texts, ListenAddress,
    testing::Values(listen_case{"127.0.0.1:9464", "127.0.0.1", 9464}, listen_case{"0.0.0.0:0", "0.0.0.0", 0},
                    listen_case{":9464", "0.0.0.0", 9464}, listen_case{"localhost:80", "127.0.0.1", 80},
                    listen_case{"[::1]:9464", "::1", 9464}, listen_case{"9464", nullptr, 0},
                    listen_case{"127.0.0.1:", nullptr, 0}, listen_case{"127.0.0.1:65536", nullptr, 0},
                    listen_case{"127.0.0.1:9x", nullptr, 0}, listen_case{"example.com:9464", nullptr, 0},
                    listen_case{"[::1]9464", nullptr, 0}));

// ---- the server, scraped with a Beast client ----

struct scraped {
    int status = 0;
    std::string content_type;
    std::string body;
};

asio::awaitable<std::vector<scraped>> scrape(unsigned short port, std::vector<std::string> targets) {
    boost::beast::tcp_stream stream{co_await asio::this_coro::executor};
    stream.expires_after(10s);
    co_await stream.async_connect(asio::ip::tcp::endpoint{asio::ip::make_address("127.0.0.1"), port},
                                  asio::use_awaitable);
    boost::beast::flat_buffer buffer;
    std::vector<scraped> out;
    // Several requests on one keep-alive connection.
    for (const auto& target : targets) {
        http::request<http::empty_body> req{http::verb::get, target, 11};
        req.set(http::field::host, "127.0.0.1");
        co_await http::async_write(stream, req, asio::use_awaitable);
        http::response<http::string_body> res;
        co_await http::async_read(stream, buffer, res, asio::use_awaitable);
        out.push_back(
            {static_cast<int>(res.result_int()), std::string(res[http::field::content_type]), res.body()});
    }
    co_return out;
}

TEST(MetricsServer, ServesMetricsHealthAndNotFoundOnOneConnection) {
    asio::io_context ctx;
    metrics_registry registry;
    registry.observe(make(200, 5ms, 10));
    metrics_server server{ctx.get_executor(), "127.0.0.1:0", [&] { return registry.render(nullptr); }};
    server.start();
    std::vector<scraped> got;
    asio::co_spawn(ctx,
                   scrape(server.local_endpoint().port(), {"/metrics", "/healthz", "/other", "/metrics?x"}),
                   [&](std::exception_ptr e, std::vector<scraped> r) {
                       server.stop();
                       if (e)
                           std::rethrow_exception(e);
                       got = std::move(r);
                   });
    test::run_bounded(ctx);
    ASSERT_EQ(got.size(), 4u);
    EXPECT_EQ(got[0].status, 200);
    EXPECT_EQ(got[0].content_type, "text/plain; version=0.0.4; charset=utf-8");
    EXPECT_EQ(parse_exposition(got[0].body).at("asiocrawl_records_total"), 1);
    EXPECT_EQ(got[1].status, 200);
    EXPECT_EQ(got[1].body, "ok\n");
    EXPECT_EQ(got[2].status, 404);
    EXPECT_EQ(got[3].status, 200);
}

TEST(MetricsServer, StopClosesIdleConnectionsSoTheContextRunsDry) {
    asio::io_context ctx;
    metrics_server server{ctx.get_executor(), "127.0.0.1:0", [] { return std::string("x 1\n"); }};
    server.start();
    boost::beast::tcp_stream idle{ctx};
    idle.async_connect(server.local_endpoint(), [&](boost::system::error_code ec) {
        EXPECT_FALSE(ec);
        // Give the server a moment to accept, then stop: the idle keep-alive connection must not hold the
        // context for the 30 s idle timeout.
        auto timer = std::make_shared<asio::steady_timer>(ctx, 50ms);
        timer->async_wait([&, timer](auto) {
            server.stop();
            idle.close();
        });
    });
    test::run_bounded(ctx, std::chrono::seconds{20});
}

TEST(MetricsServer, PortInUseThrows) {
    asio::io_context ctx;
    metrics_server first{ctx.get_executor(), "127.0.0.1:0", [] { return std::string(); }};
    const std::string taken = "127.0.0.1:" + std::to_string(first.local_endpoint().port());
    EXPECT_THROW(metrics_server(ctx.get_executor(), taken, [] { return std::string(); }),
                 boost::system::system_error);
}

// ---- the whole output_set on a real crawl: scraped while pages are still being served ----

TEST(OutputSetMetrics, ScrapedDuringACrawlAndAfterIt) {
    asio::io_context ctx;
    constexpr int pages = 6;
    demo::http_server site{
        ctx.get_executor(),
        [](const test::http_request& req) -> asio::awaitable<std::optional<test::http_response>> {
            const std::string target{req.target()};
            if (target == "/") {
                std::string body = "<html><body>";
                for (int i = 0; i < pages; ++i)
                    body += "<a href=\"/p" + std::to_string(i) + "\">p</a>";
                body += "<a href=\"/missing\">m</a></body></html>";
                co_return test::make_response(200, body);
            }
            if (target == "/missing")
                co_return test::make_response(404, "gone");
            // Slow pages keep the crawl busy while the test scrapes.
            co_await test::sleep_for(100ms);
            co_return test::make_response(200, "<html>leaf</html>");
        }};

    crawler_config config;
    config.roots = {site.origin() + "/"};
    config.max_tasks = 2;
    crawler crawl{ctx.get_executor(), config};

    output_config outputs;
    outputs.metrics_listen = "127.0.0.1:0";
    output_set out{ctx.get_executor(), outputs};
    std::size_t seen_by_cli_sink = 0;
    out.attach(crawl, [&](const record&) { ++seen_by_cli_sink; });
    out.start();
    const unsigned short port = out.metrics_endpoint()->port();

    std::optional<exposition> during;
    std::optional<exposition> after;
    std::optional<report> result;
    // Scrape as soon as the root page is recorded: the slow pages are queued or in flight then.
    asio::co_spawn(
        ctx,
        [&]() -> asio::awaitable<void> {
            while (crawl.progress().records == 0)
                co_await test::sleep_for(5ms);
            // g++ 12 cannot have a braced list in a co_await expression (TOOLCHAIN.md).
            std::vector<std::string> targets{"/metrics"};
            const auto got = co_await scrape(port, targets);
            during = parse_exposition(got.at(0).body);
        },
        [](std::exception_ptr e) {
            if (e)
                std::rethrow_exception(e);
        });
    crawl.async_run([&](boost::system::error_code ec, report r) {
        if (ec)
            throw boost::system::system_error(ec, r.failure);
        result = std::move(r);
        asio::co_spawn(
            ctx,
            [&]() -> asio::awaitable<void> {
                std::vector<std::string> targets{"/metrics"};
                const auto got = co_await scrape(port, targets);
                after = parse_exposition(got.at(0).body);
            },
            [&](std::exception_ptr e) {
                out.stop();
                site.stop();
                if (e)
                    std::rethrow_exception(e);
            });
    });
    test::run_bounded(ctx);
    ASSERT_TRUE(result && during && after);
    EXPECT_TRUE(out.finish(*result).empty());

    EXPECT_THAT(during->problems, testing::IsEmpty());
    EXPECT_GE(during->at("asiocrawl_records_total"), 1);
    EXPECT_LT(during->at("asiocrawl_records_total"), pages + 2);
    EXPECT_GE(during->at("asiocrawl_queued_urls") + during->at("asiocrawl_in_flight_fetches"), 1);

    EXPECT_THAT(after->problems, testing::IsEmpty());
    EXPECT_EQ(result->done, static_cast<std::size_t>(pages + 2));
    EXPECT_EQ(seen_by_cli_sink, result->done);
    EXPECT_EQ(after->at("asiocrawl_records_total"), pages + 2);
    EXPECT_EQ(after->at("asiocrawl_pages_total"), pages + 2);
    EXPECT_EQ(after->at("asiocrawl_responses_total{class=\"2xx\"}"), pages + 1);
    EXPECT_EQ(after->at("asiocrawl_responses_total{class=\"4xx\"}"), 1);
    EXPECT_EQ(after->at("asiocrawl_fetch_duration_seconds_count"), pages + 2);
    EXPECT_GE(after->at("asiocrawl_fetch_duration_seconds_sum"), 0.1 * pages);
}

} // namespace

namespace {

TEST(OutputSet, OpensEveryOutputAndFinishWritesTheJsonSummary) {
    const auto dir =
        std::filesystem::temp_directory_path() / ("asiocrawl-output-set-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    asio::io_context ctx;
    demo::http_server site{
        ctx.get_executor(),
        [](const test::http_request&) -> asio::awaitable<std::optional<test::http_response>> {
            co_return test::make_response(200, "<html>one page</html>");
        }};
    crawler_config config;
    config.roots = {site.origin() + "/"};
    crawler crawl{ctx.get_executor(), config};

    output_config outputs;
    outputs.warc.path = (dir / "crawl.warc").string();
    outputs.save_dir = (dir / "pages").string();
    outputs.report_json = (dir / "summary.json").string();
    std::string terminal;
    output_set out{ctx.get_executor(), outputs, {}, [&](std::string bytes) { terminal += bytes; }};
    EXPECT_FALSE(out.metrics_endpoint().has_value());
    EXPECT_TRUE(std::filesystem::is_directory(dir / "pages"));
    out.attach(crawl);
    out.start();
    auto result = test::run_crawl(ctx, crawl, [&] {
        out.stop();
        site.stop();
    });
    ASSERT_TRUE(result);
    EXPECT_THAT(out.finish(*result), testing::IsEmpty());

    EXPECT_EQ(out.warc_files(), std::vector<std::string>{outputs.warc.path});
    // The crawler's exchanges: robots.txt, then the page. The handler serves the same bytes for both, so
    // the page is archived as a revisit of robots.txt's payload.
    const std::string warc = read_file(outputs.warc.path);
    auto count = [&](std::string_view needle) {
        std::size_t n = 0;
        for (auto at = warc.find(needle); at != std::string::npos; at = warc.find(needle, at + 1))
            ++n;
        return n;
    };
    EXPECT_EQ(count("WARC-Type: warcinfo\r\n"), 1u);
    EXPECT_EQ(count("WARC-Type: request\r\n"), 2u);
    EXPECT_EQ(count("WARC-Type: response\r\n"), 1u);
    EXPECT_EQ(count("WARC-Type: revisit\r\n"), 1u);
    EXPECT_EQ(count("WARC-Target-URI: " + site.origin() + "/robots.txt\r\n"), 2u);
    EXPECT_EQ(count("WARC-Target-URI: " + site.origin() + "/\r\n"), 2u);
    // The body sink: the page under its host directory.
    const auto saved = dir / "pages" / ("127.0.0.1:" + std::to_string(site.port())) / "index.html";
    EXPECT_EQ(read_file(saved), "<html>one page</html>");
    const auto summary = boost::json::parse(read_file(outputs.report_json)).as_object();
    EXPECT_EQ(summary.at("done").to_number<std::uint64_t>(), result->done);
    EXPECT_EQ(summary.at("counters").as_object().at("html").to_number<std::uint64_t>(), 1u);
    // The progress line's summary, written by stop().
    EXPECT_THAT(terminal, testing::HasSubstr("\rdone: 1 page in "));
    EXPECT_THAT(terminal, testing::EndsWith("\n"));
    std::filesystem::remove_all(dir);
}

} // namespace
