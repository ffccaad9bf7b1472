// HTTP/2 through the fetcher and a crawl: nghttpd serving a static tree over TLS (the exact page set over h2,
// one connection per origin), ALPN falling back to HTTP/1.1 against the demo server (no h2), and a
// frame-level hostile server in cleartext h2 (prior knowledge): RST_STREAM, GOAWAY, a refused push, an HPACK
// bomb, a stream that never ends. Each hostile case costs its URL a record; the other URLs are fetched.
#include "http/fetcher.hpp"

#include "support/h2_servers.hpp"
#include "support/loopback.hpp"
#include "support/loopback_crawl.hpp"
#include "support/nginx_server.hpp"
#include "support/pki_suite.hpp"
#include "support/temp_dir.hpp"
#include "support/tls_certs.hpp"

#include <asiocrawl/crawler.hpp>
#include <asiocrawl/error.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/url/parse.hpp>

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <thread>

namespace asio = boost::asio;
using namespace asiocrawl;
using namespace asiocrawl::test;
using detail::fetch_result;
using detail::fetcher;

namespace {

struct http2_fixture : pki_suite {
    asio::io_context ctx;
    fetch_config config;

    http2_fixture() {
        config.tls.ca_file = ca_file->path().string();
        config.host_overrides["localhost"] = "127.0.0.1";
    }

    /// Fetches every URL at once with `f` (as a crawl's workers do), then closes idle connections and runs
    /// `done` (which stops the servers on the context).
    std::vector<fetch_result> fetch_together(
        fetcher& f, const std::vector<std::string>& urls, const std::function<void()>& done = [] {}) {
        std::vector<fetch_result> results(urls.size());
        std::size_t left = urls.size();
        for (std::size_t i = 0; i < urls.size(); ++i) {
            asio::co_spawn(
                ctx,
                [&, i]() -> asio::awaitable<void> {
                    results[i] = co_await f.fetch(boost::urls::parse_uri(urls[i]).value());
                },
                [&](std::exception_ptr e) {
                    if (e)
                        std::rethrow_exception(e);
                    if (--left == 0) {
                        f.close_idle();
                        done();
                    }
                });
        }
        run_bounded(ctx, std::chrono::seconds(20));
        ctx.restart();
        return results;
    }
};

void write_text(const std::filesystem::path& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

} // namespace

TEST_F(http2_fixture, nghttpd_serves_many_streams_on_one_connection) {
    temp_dir htdocs{"h2-htdocs"};
    for (int i = 0; i < 6; ++i)
        write_text(htdocs.path / ("p" + std::to_string(i) + ".txt"), "page " + std::to_string(i));
    nghttpd_server server{htdocs.path, *pki};
    fetcher f{ctx.get_executor(), config, 8};
    std::vector<std::string> urls;
    for (int i = 0; i < 6; ++i)
        urls.push_back("https://localhost:" + std::to_string(server.port()) + "/p" + std::to_string(i) +
                       ".txt");
    const auto results = fetch_together(f, urls);
    for (int i = 0; i < 6; ++i) {
        EXPECT_FALSE(results[i].error) << results[i].error.message() << " " << results[i].error_detail;
        EXPECT_EQ(results[i].status, 200);
        EXPECT_EQ(results[i].body, "page " + std::to_string(i));
        EXPECT_EQ(results[i].protocol, "h2");
    }
    EXPECT_EQ(f.stats().connections_opened, 1u) << "one connection per origin";
    EXPECT_EQ(f.stats().h2_connections, 1u);
    EXPECT_EQ(f.stats().h2_streams, 6u);
}

TEST_F(http2_fixture, nginx_with_http2_over_tls_answers_every_stream_of_one_connection) {
    temp_dir htdocs{"h2-nginx"};
    for (int i = 0; i < 4; ++i)
        write_text(htdocs.path / ("n" + std::to_string(i) + ".txt"), "nginx " + std::to_string(i));
    const temp_pem_file key{pki->server_key_pem};
    const temp_pem_file cert{pki->server_cert_pem};
    nginx_server server{htdocs.path, nginx_tls{cert.path().string(), key.path().string()}};
    const std::string origin = "https://localhost:" + server.origin().substr(server.origin().rfind(':') + 1);
    fetcher f{ctx.get_executor(), config, 8};
    std::vector<std::string> urls;
    for (int i = 0; i < 4; ++i)
        urls.push_back(origin + "/n" + std::to_string(i) + ".txt");
    const auto results = fetch_together(f, urls);
    for (int i = 0; i < 4; ++i) {
        EXPECT_FALSE(results[i].error) << results[i].error.message() << " " << results[i].error_detail;
        EXPECT_EQ(results[i].body, "nginx " + std::to_string(i));
        EXPECT_EQ(results[i].protocol, "h2");
    }
    EXPECT_EQ(f.stats().connections_opened, 1u);
    // nginx logs a request after its answer is sent: the last line may come a moment after our fetch ends.
    auto logged = server.requests();
    for (int i = 0; i < 500 && logged.size() < 4; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        logged = server.requests();
    }
    ASSERT_EQ(logged.size(), 4u);
    for (const auto& r : logged)
        EXPECT_EQ(r.protocol, "HTTP/2.0") << r.uri;
}

TEST_F(http2_fixture, a_crawl_over_h2_finds_the_exact_page_set_and_records_the_protocol) {
    temp_dir htdocs{"h2-site"};
    write_text(htdocs.path / "index.html", "<a href=/a.html>a</a> <a href=/b.html>b</a>");
    write_text(htdocs.path / "a.html", "<a href=/c.html>c</a> <a href=/missing.html>m</a>");
    write_text(htdocs.path / "b.html", "<a href=/a.html>a</a>");
    write_text(htdocs.path / "c.html", "<p>end</p>");
    nghttpd_server server{htdocs.path, *pki};
    const std::string origin = "https://localhost:" + std::to_string(server.port());
    crawler_config c = loopback_crawl_config();
    c.roots = {origin + "/index.html"};
    c.fetch = config;
    crawler crawl{ctx.get_executor(), c};
    const auto report = run_crawl(ctx, crawl, [] {});
    ASSERT_TRUE(report);
    std::map<std::string, std::pair<int, std::string>> seen;
    for (const auto& r : report->records)
        seen[r.url] = {r.status, r.protocol};
    const std::map<std::string, std::pair<int, std::string>> expected{
        {origin + "/index.html", {200, "h2"}},
        {origin + "/a.html", {200, "h2"}},
        {origin + "/b.html", {200, "h2"}},
        {origin + "/c.html", {200, "h2"}},
        {origin + "/missing.html", {404, "h2"}}};
    EXPECT_EQ(seen, expected);
}

TEST_F(http2_fixture, a_server_without_h2_is_fetched_over_http11_and_only_refuses_it) {
    asio::ssl::context server_tls = make_server_context(*pki);
    const auto h1_server = [&] {
        return demo::http_server{
            ctx.get_executor(),
            [](const http_request& req) -> asio::awaitable<std::optional<http_response>> {
                co_return make_response(200, "h1 " + std::string(req.target()), "text/plain");
            },
            server_tls};
    };
    {
        auto server = h1_server();
        const std::string origin = "https://localhost:" + std::to_string(server.port());
        fetcher f{ctx.get_executor(), config, 8};
        const auto results = fetch_together(f, {origin + "/1", origin + "/2"}, [&] { server.stop(); });
        for (const auto& r : results) {
            EXPECT_FALSE(r.error) << r.error.message() << " " << r.error_detail;
            EXPECT_EQ(r.protocol, "http/1.1");
        }
        EXPECT_EQ(results[0].body, "h1 /1");
        EXPECT_EQ(f.stats().h2_connections, 0u);
    }
    config.http2 = http2_mode::only;
    auto server = h1_server();
    const std::string origin = "https://localhost:" + std::to_string(server.port());
    fetcher f{ctx.get_executor(), config, 8};
    const auto results = fetch_together(f, {origin + "/3"}, [&] { server.stop(); });
    EXPECT_EQ(results[0].error, error::tls_handshake_failed) << results[0].error.message();
    EXPECT_EQ(results[0].status, 0);
}

namespace {

/// Every hostile case beside good pages on one cleartext h2 server; `hostile(path, stream, connection)` gives
/// the frames for the hostile paths ("" for a good path, answered with its path as the body).
struct hostile_h2 : http2_fixture {
    template <class Hostile>
    std::vector<fetch_result> crawl_paths(const std::vector<std::string>& paths, Hostile hostile,
                                          std::size_t* connections = nullptr) {
        config.http2 = http2_mode::only;
        h2_raw_server server{ctx.get_executor(), [hostile](const std::string& path, std::uint32_t stream,
                                                           std::size_t connection) {
                                 std::string frames = hostile(path, stream, connection);
                                 if (frames == "none")
                                     return std::string();
                                 return frames.empty() ? h2::answer(stream, "good " + path) : frames;
                             }};
        auto f = std::make_unique<fetcher>(ctx.get_executor(), config, 8);
        std::vector<std::string> urls;
        for (const auto& p : paths)
            urls.push_back(server.origin() + p);
        auto results = fetch_together(*f, urls, [&] { server.stop(); });
        if (connections)
            *connections = server.connections();
        requests = server.requests();
        client_resets = server.resets();
        stats = f->stats();
        return results;
    }
    detail::fetcher_stats stats;
    /// The requests the server read (every stream sent again counts).
    std::size_t requests = 0;
    /// The RST_STREAM frames the server received.
    std::size_t client_resets = 0;
};

void expect_good(const fetch_result& r, const std::string& path) {
    EXPECT_FALSE(r.error) << path << ": " << r.error.message() << " " << r.error_detail;
    EXPECT_EQ(r.status, 200) << path;
    EXPECT_EQ(r.body, "good " + path);
    EXPECT_EQ(r.protocol, "h2");
}

} // namespace

TEST_F(hostile_h2, rst_stream_is_an_error_for_its_url_only) {
    const auto results =
        crawl_paths({"/1", "/bad-reset", "/2"}, [](const std::string& path, std::uint32_t s, std::size_t) {
            return path == "/bad-reset" ? h2::frame(h2::rst_stream, 0, s, h2::u32(2)) : std::string();
        });
    expect_good(results[0], "/1");
    expect_good(results[2], "/2");
    EXPECT_EQ(results[1].error, error::bad_response);
    EXPECT_NE(results[1].error_detail.find("RST_STREAM"), std::string::npos) << results[1].error_detail;
    EXPECT_EQ(stats.h2_connections, 1u) << "a reset stream does not cost the connection";
}

TEST_F(hostile_h2, goaway_sends_the_streams_it_did_not_process_again_on_a_new_connection) {
    auto last_processed = std::make_shared<std::uint32_t>(0);
    std::size_t connections = 0;
    const auto results = crawl_paths(
        {"/1", "/2", "/3", "/4", "/5"},
        [last_processed](const std::string& path, std::uint32_t s, std::size_t connection) -> std::string {
            if (connection != 0)
                return {};
            if (*last_processed != 0)
                return "none"; // after GOAWAY: no answer on this connection
            if (path == "/3") {
                *last_processed = s - 2;
                return h2::frame(h2::goaway, 0, 0, h2::u32(s - 2) + h2::u32(0));
            }
            return {};
        },
        &connections);
    for (std::size_t i = 0; i < results.size(); ++i)
        expect_good(results[i], "/" + std::to_string(i + 1));
    EXPECT_EQ(connections, 2u);
    EXPECT_GE(stats.h2_retries, 1u);
}

TEST_F(hostile_h2, a_push_the_client_refused_costs_its_url_a_record_and_the_rest_are_fetched) {
    const auto results =
        crawl_paths({"/1", "/bad-push", "/2"}, [](const std::string& path, std::uint32_t s, std::size_t) {
            if (path != "/bad-push")
                return std::string();
            // PUSH_PROMISE although SETTINGS_ENABLE_PUSH is 0: a connection error (RFC 9113 8.4).
            return h2::frame(h2::push_promise, h2::end_headers, s,
                             h2::u32(2) + h2::integer(0x80, 7, 2) + h2::integer(0x80, 7, 4) +
                                 h2::literal(":authority", "127.0.0.1") + h2::integer(0x80, 7, 6));
        });
    expect_good(results[0], "/1");
    expect_good(results[2], "/2");
    EXPECT_EQ(results[1].error, error::bad_response) << results[1].error.message();
    EXPECT_NE(results[1].error_detail.find("HTTP/2 connection error"), std::string::npos)
        << results[1].error_detail;
    EXPECT_EQ(results[1].status, 0);
    // Twice for the pushed URL (then its record), and the other URLs unanswered on the ended connection.
    EXPECT_GE(stats.h2_retries, 2u);
}

TEST_F(hostile_h2, an_hpack_bomb_is_bounded_by_max_header_bytes) {
    config.max_header_bytes = 16 * 1024;
    const auto results =
        crawl_paths({"/1", "/bad-bomb", "/2"}, [](const std::string& path, std::uint32_t s, std::size_t) {
            if (path != "/bad-bomb")
                return std::string();
            // One 3,000-byte field in the dynamic table, then 2,000 one-byte references to it: 6 MB of fields
            // from 5 KB of block.
            std::string block = h2::status_200() + h2::indexed_literal("x-bomb", std::string(3000, 'b'));
            block += std::string(2000, static_cast<char>(0xbe)); // index 62: the newest dynamic entry
            return h2::frame(h2::headers, h2::end_headers | h2::end_stream, s, block);
        });
    expect_good(results[0], "/1");
    expect_good(results[2], "/2");
    EXPECT_EQ(results[1].error, error::header_too_large) << results[1].error.message();
    // Refused while HPACK decodes the list, not after a 6 MB head was built and handed to the parser.
    EXPECT_NE(results[1].error_detail.find("HTTP/2 header list over 16384 bytes"), std::string::npos)
        << results[1].error_detail;
    EXPECT_EQ(stats.h2_connections, 1u) << "the stream is reset; the connection goes on";
}

TEST_F(hostile_h2, a_stream_that_never_ends_is_a_timeout_record) {
    config.request_timeout = std::chrono::milliseconds(300);
    const auto results =
        crawl_paths({"/1", "/bad-stall", "/2"}, [](const std::string& path, std::uint32_t s, std::size_t) {
            if (path != "/bad-stall")
                return std::string();
            // A head whose body never comes (as from a window that never opens).
            return h2::frame(h2::headers, h2::end_headers, s,
                             h2::status_200() + h2::literal("content-length", "100"));
        });
    expect_good(results[0], "/1");
    expect_good(results[2], "/2");
    EXPECT_EQ(results[1].error, error::request_timeout) << results[1].error.message();
}

TEST_F(hostile_h2, a_continuation_flood_costs_its_url_a_record) {
    // A head that never ends: HEADERS without END_HEADERS, then CONTINUATION frames, each with one small
    // field (the CONTINUATION floods of CVE-2024-27316 and its kin), and one with empty frames only.
    config.max_header_bytes = 16 * 1024;
    const auto results = crawl_paths(
        {"/1", "/bad-fields", "/bad-empty", "/2"}, [](const std::string& path, std::uint32_t s, std::size_t) {
            if (path != "/bad-fields" && path != "/bad-empty")
                return std::string();
            std::string frames = h2::frame(h2::headers, 0, s, h2::status_200());
            for (int i = 0; i < 20'000; ++i)
                frames +=
                    h2::frame(h2::continuation, 0, s, path == "/bad-fields" ? h2::literal("x", "y") : "");
            return frames;
        });
    expect_good(results[0], "/1");
    expect_good(results[3], "/2");
    // nghttp2 (Debian's, with the fix for CVE-2024-28182) ends the connection after a few CONTINUATION
    // frames, before the field count or max_header_bytes is reached: the hostile URLs get their record, the
    // good ones are answered (again, on a new connection, when the error came first).
    for (const std::size_t i : {1u, 2u}) {
        EXPECT_EQ(results[i].error, error::bad_response) << results[i].error.message();
        EXPECT_NE(results[i].error_detail.find("CONTINUATION"), std::string::npos) << results[i].error_detail;
    }
}

TEST_F(hostile_h2, a_settings_flood_costs_its_url_a_record) {
    const auto results =
        crawl_paths({"/1", "/bad-settings", "/2"}, [](const std::string& path, std::uint32_t, std::size_t) {
            if (path != "/bad-settings")
                return std::string();
            // 40 entries in one SETTINGS frame: over the 32 we accept, a connection error.
            std::string entries;
            for (int i = 0; i < 40; ++i)
                entries += std::string("\0\x03", 2) + h2::u32(100); // MAX_CONCURRENT_STREAMS
            return h2::frame(h2::settings, 0, 0, entries);
        });
    expect_good(results[0], "/1");
    expect_good(results[2], "/2");
    EXPECT_EQ(results[1].error, error::bad_response) << results[1].error.message();
    EXPECT_NE(results[1].error_detail.find("HTTP/2 connection error"), std::string::npos)
        << results[1].error_detail;
}

TEST_F(hostile_h2, a_ping_flood_is_answered_a_read_at_a_time_and_the_page_is_fetched) {
    const auto results =
        crawl_paths({"/1", "/ping-flood", "/2"}, [](const std::string& path, std::uint32_t s, std::size_t) {
            if (path != "/ping-flood")
                return std::string();
            // 3,000 PINGs before the answer: each is acknowledged as the frames are read, a read chunk at a
            // time, so the acknowledgements waiting to be sent stay under nghttp2's bound (1,000).
            std::string frames;
            for (int i = 0; i < 3000; ++i)
                frames += h2::frame(h2::ping, 0, 0, std::string(8, static_cast<char>(i)));
            return frames + h2::answer(s, "good " + path);
        });
    expect_good(results[0], "/1");
    expect_good(results[1], "/ping-flood");
    EXPECT_EQ(results[1].error_detail, "");
    expect_good(results[2], "/2");
}

TEST_F(hostile_h2, answers_that_end_with_their_stream_are_not_reset_and_one_over_the_limit_is) {
    // A Content-Length body is complete before its DATA frame's END_STREAM is seen: the stream must not be
    // reset for that (a RST_STREAM a page costs a write and looks like a rapid reset to the server). A body
    // over max_body_bytes ends the stream from our side: that one is reset. A last request after the batch,
    // on the same connection, comes after any RST_STREAM of the batch, so the server has counted them.
    config.http2 = http2_mode::only;
    config.max_body_bytes = 1000;
    h2_raw_server server{ctx.get_executor(), [](const std::string& path, std::uint32_t s, std::size_t) {
                             if (path != "/big")
                                 return h2::answer(s, "good " + path);
                             return h2::frame(h2::headers, h2::end_headers, s, h2::status_200()) +
                                    h2::frame(h2::data, 0, s, std::string(5000, 'x')); // no END_STREAM
                         }};
    fetcher f(ctx.get_executor(), config, 8);
    const std::vector<std::string> paths{"/1", "/2", "/3", "/big", "/4"};
    std::vector<fetch_result> results(paths.size() + 1);
    std::size_t left = paths.size();
    const auto fetch_one = [&](std::size_t i, std::string path, std::function<void()> then) {
        asio::co_spawn(
            ctx,
            [&, i, path]() -> asio::awaitable<void> {
                results[i] = co_await f.fetch(boost::urls::parse_uri(server.origin() + path).value());
            },
            [then](std::exception_ptr e) {
                if (e)
                    std::rethrow_exception(e);
                then();
            });
    };
    for (std::size_t i = 0; i < paths.size(); ++i)
        fetch_one(i, paths[i], [&] {
            if (--left == 0)
                fetch_one(paths.size(), "/last", [&] {
                    f.close_idle();
                    server.stop();
                });
        });
    run_bounded(ctx, std::chrono::seconds(20));
    for (const std::size_t i : {0u, 1u, 2u, 4u})
        expect_good(results[i], paths[i]);
    expect_good(results.back(), "/last");
    EXPECT_TRUE(results[3].truncated || results[3].error) << results[3].error.message();
    EXPECT_EQ(f.stats().h2_connections, 1u);
    EXPECT_EQ(server.resets(), 1u) << "only the stream we ended early";
}

// ---- rapid resets (RFC 9113 8.7: only a stream refused with REFUSED_STREAM, or one above a GOAWAY's last
// stream, was not processed and may be sent again; any other reset is the URL's record) ----

namespace {

enum : std::uint32_t { no_error = 0, internal_error = 2, refused_stream = 7, cancel = 8 };

std::string reset(std::uint32_t stream, std::uint32_t code) {
    return h2::frame(h2::rst_stream, 0, stream, h2::u32(code));
}
/// A head that promises a body, without END_STREAM.
std::string head_only(std::uint32_t stream) {
    return h2::frame(h2::headers, h2::end_headers, stream,
                     h2::status_200() + h2::literal("content-length", "100"));
}

} // namespace

TEST_F(hostile_h2, streams_reset_after_their_head_or_before_any_frame_cost_their_urls_a_record_each) {
    // Every hostile stream is reset at once: after its HEADERS (with any code, REFUSED_STREAM included: a
    // stream answered was processed) or before any frame (not REFUSED_STREAM). None is sent again.
    std::vector<std::string> paths{"/1"};
    for (int i = 0; i < 8; ++i)
        for (const char* kind : {"/bad-head-internal-", "/bad-head-refused-", "/bad-cancel-", "/bad-none-"})
            paths.push_back(kind + std::to_string(i));
    paths.push_back("/2");
    const auto results = crawl_paths(paths, [](const std::string& path, std::uint32_t s, std::size_t) {
        if (path.starts_with("/bad-head-internal-"))
            return head_only(s) + reset(s, internal_error);
        if (path.starts_with("/bad-head-refused-"))
            return head_only(s) + reset(s, refused_stream);
        if (path.starts_with("/bad-cancel-"))
            return reset(s, cancel);
        if (path.starts_with("/bad-none-"))
            return reset(s, no_error); // an end without an answer
        return std::string();
    });
    expect_good(results.front(), "/1");
    expect_good(results.back(), "/2");
    for (std::size_t i = 1; i + 1 < results.size(); ++i) {
        EXPECT_TRUE(results[i].error) << paths[i];
        if (!paths[i].starts_with("/bad-none-")) {
            EXPECT_EQ(results[i].error, error::bad_response)
                << paths[i] << ": " << results[i].error.message();
            EXPECT_NE(results[i].error_detail.find("RST_STREAM"), std::string::npos)
                << paths[i] << ": " << results[i].error_detail;
        }
    }
    EXPECT_EQ(requests, paths.size()) << "no reset stream is sent again";
    EXPECT_EQ(stats.h2_retries, 0u);
    EXPECT_EQ(stats.h2_connections, 1u) << "resets cost streams, not the connection";
}

TEST_F(hostile_h2, a_stream_refused_every_time_is_sent_again_at_most_twice) {
    std::vector<std::string> paths{"/1"};
    for (int i = 0; i < 10; ++i)
        paths.push_back("/refused-" + std::to_string(i));
    paths.push_back("/2");
    const auto results = crawl_paths(paths, [](const std::string& path, std::uint32_t s, std::size_t) {
        return path.starts_with("/refused-") ? reset(s, refused_stream) : std::string();
    });
    expect_good(results.front(), "/1");
    expect_good(results.back(), "/2");
    for (std::size_t i = 1; i + 1 < results.size(); ++i) {
        EXPECT_TRUE(results[i].error) << paths[i];
        EXPECT_NE(results[i].error_detail.find("REFUSED_STREAM"), std::string::npos)
            << paths[i] << ": " << results[i].error_detail;
    }
    // Each refused URL three times (once and two retries), then its record: no endless re-send loop.
    EXPECT_EQ(requests, 2 + 10 * 3u);
    EXPECT_EQ(stats.h2_retries, 10 * 2u);
}

TEST_F(hostile_h2, a_burst_that_answers_some_streams_and_resets_the_rest) {
    // The server holds every request of the first connection, then writes one burst: answers for the good
    // paths and resets for the others, interleaved. A refused stream was not processed: it is sent again and
    // answered; a cancelled one is a record.
    std::vector<std::string> paths;
    for (int i = 0; i < 6; ++i)
        for (const char* kind : {"/good-", "/refused-", "/bad-"})
            paths.push_back(kind + std::to_string(i));
    struct held {
        std::vector<std::pair<std::string, std::uint32_t>> streams;
        bool burst = false;
    };
    auto state = std::make_shared<held>();
    const std::size_t all = paths.size();
    const auto results = crawl_paths(
        paths, [state, all](const std::string& path, std::uint32_t s, std::size_t) -> std::string {
            if (state->burst) // a stream sent again: answered, unless it is a bad one
                return path.starts_with("/bad-") ? reset(s, cancel) : std::string();
            state->streams.emplace_back(path, s);
            if (state->streams.size() < all)
                return "none";
            state->burst = true;
            std::string frames;
            for (const auto& [p, id] : state->streams) {
                if (p.starts_with("/good-"))
                    frames += h2::answer(id, "good " + p);
                else
                    frames += reset(id, p.starts_with("/refused-") ? refused_stream : cancel);
            }
            return frames;
        });
    for (std::size_t i = 0; i < paths.size(); ++i) {
        if (paths[i].starts_with("/bad-")) {
            EXPECT_EQ(results[i].error, error::bad_response)
                << paths[i] << ": " << results[i].error.message();
            EXPECT_NE(results[i].error_detail.find("RST_STREAM"), std::string::npos)
                << results[i].error_detail;
        } else {
            expect_good(results[i], paths[i]);
        }
    }
    EXPECT_EQ(requests, all + 6) << "the refused streams once more, the others not";
    EXPECT_EQ(stats.h2_retries, 6u);
    EXPECT_EQ(stats.h2_connections, 1u);
}

TEST_F(hostile_h2, a_reset_storm_with_goaway_sends_again_only_the_unprocessed_streams) {
    // The first connection holds every request, then writes a storm: a reset (CANCEL, INTERNAL_ERROR) for
    // each bad stream, each twice, and GOAWAY with last stream 0 (nothing processed). The good streams go
    // again on a new connection, where they are answered; the reset ones are records, never sent again.
    std::vector<std::string> paths;
    for (int i = 0; i < 8; ++i)
        for (const char* kind : {"/good-", "/bad-"})
            paths.push_back(kind + std::to_string(i));
    auto held = std::make_shared<std::vector<std::pair<std::string, std::uint32_t>>>();
    const std::size_t all = paths.size();
    std::size_t connections = 0;
    const auto results = crawl_paths(
        paths,
        [held, all](const std::string& path, std::uint32_t s, std::size_t connection) -> std::string {
            if (connection > 0)
                return path.starts_with("/bad-") ? reset(s, cancel) : std::string();
            held->emplace_back(path, s);
            if (held->size() < all)
                return "none";
            std::string storm;
            for (int round = 0; round < 2; ++round)
                for (const auto& [p, id] : *held)
                    if (p.starts_with("/bad-"))
                        storm += reset(id, round == 0 ? cancel : internal_error);
            return storm + h2::frame(h2::goaway, 0, 0, h2::u32(0) + h2::u32(no_error));
        },
        &connections);
    for (std::size_t i = 0; i < paths.size(); ++i) {
        if (paths[i].starts_with("/bad-")) {
            EXPECT_EQ(results[i].error, error::bad_response)
                << paths[i] << ": " << results[i].error.message();
        } else {
            expect_good(results[i], paths[i]);
        }
    }
    EXPECT_EQ(connections, 2u);
    EXPECT_EQ(requests, all + 8) << "the good streams once more, on the new connection";
    EXPECT_EQ(stats.h2_retries, 8u);
}

// ---- fetch.limit_rate ----

TEST_F(hostile_h2, limit_rate_holds_h2_reads_to_the_rate) {
    // 8 streams of 60,000 bytes on one connection (within our windows: 64 KiB a stream, 1 MiB in all), in
    // DATA frames of 15,000, at 1,000,000 B/s: after the first burst (a tenth of the rate), the rest takes at
    // least ~0.38 s. Only a lower bound is asserted (a loaded machine may be slower, never faster); without
    // the limit the same fetch takes a few milliseconds.
    constexpr std::size_t body = 60'000;
    config.limit_rate = 1'000'000;
    std::vector<std::string> paths;
    for (int i = 0; i < 8; ++i)
        paths.push_back("/big-" + std::to_string(i));
    const auto began = std::chrono::steady_clock::now();
    const auto results = crawl_paths(paths, [](const std::string& path, std::uint32_t s, std::size_t) {
        const std::string text = "good " + path + std::string(body - 5 - path.size(), 'x');
        std::string frames = h2::frame(h2::headers, h2::end_headers, s,
                                       h2::status_200() + h2::literal("content-type", "text/plain") +
                                           h2::literal("content-length", std::to_string(body)));
        for (std::size_t at = 0; at < body; at += 15'000)
            frames +=
                h2::frame(h2::data, at + 15'000 >= body ? h2::end_stream : 0, s, text.substr(at, 15'000));
        return frames;
    });
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - began;
    for (std::size_t i = 0; i < results.size(); ++i) {
        EXPECT_FALSE(results[i].error) << paths[i] << ": " << results[i].error.message();
        EXPECT_EQ(results[i].body.size(), body) << paths[i];
        EXPECT_EQ(results[i].protocol, "h2");
    }
    EXPECT_GE(took.count(), 0.3);
    std::printf("limit_rate 1000000 B/s over h2: %zu bytes in %.2f s\n", paths.size() * body, took.count());
}
