#include "http/fetcher.hpp"

#include "http/connection_pool.hpp"
#include "http/request_writer.hpp"

#include "support/compress.hpp"
#include "support/hostile_server.hpp"
#include "support/loopback.hpp"
#include "support/raw_server.hpp"

#include <asiocrawl/error.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/url/parse.hpp>

#include <cstdio>
#include <memory>
#include <optional>
#include <sstream>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace asio = boost::asio;
namespace http = boost::beast::http;
using namespace asiocrawl;
using namespace asiocrawl::test;
using namespace std::chrono_literals;
using detail::fetch_result;
using detail::fetcher;

namespace {

struct fetcher_fixture : ::testing::Test {
    asio::io_context ctx;
    fetch_config config;

    /// Fetches each URL in turn with one fetcher, then stops `server` so the context runs dry.
    std::vector<fetch_result> fetch_all(demo::http_server& server, std::vector<std::string> urls,
                                        fetcher* shared = nullptr, detail::fetch_options options = {}) {
        std::optional<fetcher> own;
        if (!shared)
            shared = &own.emplace(ctx.get_executor(), config, 8);
        std::vector<fetch_result> results;
        asio::co_spawn(
            ctx,
            [&]() -> asio::awaitable<void> {
                for (const auto& u : urls)
                    results.push_back(co_await shared->fetch(boost::urls::parse_uri(u).value(), options));
            },
            [&](std::exception_ptr e) {
                server.stop();
                if (e)
                    std::rethrow_exception(e);
            });
        run_bounded(ctx);
        ctx.restart();
        return results;
    }
};

} // namespace

TEST_F(fetcher_fixture, fetches_a_page_with_its_headers) {
    demo::http_server server{
        ctx.get_executor(), [](const http_request& req) -> asio::awaitable<std::optional<http_response>> {
            EXPECT_EQ(req.target(), "/a/b?x=1");
            EXPECT_FALSE(req[http::field::user_agent].empty());
            co_return make_response(200, "<p>hello</p>", "text/html; charset=iso-8859-1");
        }};
    auto results = fetch_all(server, {server.origin() + "/a/b?x=1"});
    ASSERT_EQ(results.size(), 1u);
    const auto& r = results[0];
    EXPECT_FALSE(r.error) << r.error.message();
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.content_type, "text/html; charset=iso-8859-1");
    EXPECT_EQ(r.body, "<p>hello</p>");
    EXPECT_EQ(r.body_bytes, 12u);
    EXPECT_FALSE(r.location.has_value());
    EXPECT_EQ(r.remote_ip, "127.0.0.1");
    EXPECT_GT(r.wire_bytes, r.body_bytes) << "head and body as received";
    EXPECT_TRUE(r.raw_response.empty() && r.raw_request.empty()) << "no copies unless capture is asked";
    EXPECT_NE(r.started, std::chrono::system_clock::time_point{});
}

TEST_F(fetcher_fixture, sends_the_host_header_with_a_non_default_port) {
    std::string host_seen;
    demo::http_server server{ctx.get_executor(),
                             [&](const http_request& req) -> asio::awaitable<std::optional<http_response>> {
                                 host_seen = std::string(req[http::field::host]);
                                 co_return make_response(200, "ok", "text/plain");
                             }};
    fetch_all(server, {server.origin() + "/"});
    EXPECT_EQ(host_seen, "127.0.0.1:" + std::to_string(server.port()));
}

TEST_F(fetcher_fixture, reuses_keep_alive_connections_per_origin) {
    demo::http_server server{ctx.get_executor(),
                             [](const http_request&) -> asio::awaitable<std::optional<http_response>> {
                                 co_return make_response(200, "ok", "text/plain");
                             }};
    fetcher f{ctx.get_executor(), config, 8};
    auto results =
        fetch_all(server, {server.origin() + "/1", server.origin() + "/2", server.origin() + "/3"}, &f);
    ASSERT_EQ(results.size(), 3u);
    for (const auto& r : results)
        EXPECT_EQ(r.status, 200);
    EXPECT_EQ(server.connections(), 1u);
    EXPECT_EQ(f.stats().connections_opened, 1u);
    EXPECT_EQ(f.stats().connections_reused, 2u);
}

TEST_F(fetcher_fixture, does_not_reuse_a_connection_the_server_closes) {
    demo::http_server server{ctx.get_executor(),
                             [](const http_request&) -> asio::awaitable<std::optional<http_response>> {
                                 auto res = make_response(200, "bye", "text/plain");
                                 res.keep_alive(false);
                                 co_return res;
                             }};
    auto results = fetch_all(server, {server.origin() + "/1", server.origin() + "/2"});
    EXPECT_EQ(results.at(1).status, 200);
    EXPECT_EQ(server.connections(), 2u);
}

TEST_F(fetcher_fixture, a_dropped_connection_is_one_retryable_failure) {
    demo::http_server server{ctx.get_executor(),
                             [&](const http_request&) -> asio::awaitable<std::optional<http_response>> {
                                 co_return std::nullopt; // close without answering
                             }};
    auto results = fetch_all(server, {server.origin() + "/"});
    EXPECT_TRUE(results.at(0).error);
    EXPECT_EQ(results[0].status, 0);
    EXPECT_EQ(server.requests(), 1u) << "retrying is the crawler's policy, not the fetcher's";
    EXPECT_TRUE(detail::is_retryable(results[0].error)) << results[0].error.message();
}

TEST_F(fetcher_fixture, connection_refused_is_a_retryable_failure) {
    demo::http_server server{ctx.get_executor(),
                             [](const http_request&) -> asio::awaitable<std::optional<http_response>> {
                                 co_return make_response(200);
                             }};
    const auto port = unused_port(ctx);
    auto results = fetch_all(server, {"http://127.0.0.1:" + std::to_string(port) + "/"});
    EXPECT_EQ(results.at(0).error, asio::error::connection_refused);
    EXPECT_TRUE(detail::is_retryable(results[0].error));
}

TEST_F(fetcher_fixture, a_server_that_never_answers_times_out) {
    config.request_timeout = 300ms;
    demo::http_server server{ctx.get_executor(),
                             [&](const http_request&) -> asio::awaitable<std::optional<http_response>> {
                                 co_await server.wait_stopped();
                                 co_return std::nullopt;
                             }};
    auto results = fetch_all(server, {server.origin() + "/"});
    EXPECT_EQ(results.at(0).error, error::request_timeout);
}

TEST_F(fetcher_fixture, a_body_over_the_limit_is_an_error_and_not_retried) {
    config.max_body_bytes = 1000;
    demo::http_server server{ctx.get_executor(),
                             [](const http_request&) -> asio::awaitable<std::optional<http_response>> {
                                 co_return make_response(200, std::string(5000, 'x'));
                             }};
    auto results = fetch_all(server, {server.origin() + "/"});
    EXPECT_EQ(results.at(0).error, error::body_too_large);
    EXPECT_FALSE(detail::is_retryable(results[0].error));
    EXPECT_EQ(results[0].status, 200) << "the head arrived before the body went over the limit";
    EXPECT_LE(results[0].body_bytes, 1000u);
}

TEST_F(fetcher_fixture, a_head_over_the_limit_is_an_error) {
    config.max_header_bytes = 2048;
    demo::http_server server{ctx.get_executor(),
                             [](const http_request&) -> asio::awaitable<std::optional<http_response>> {
                                 auto res = make_response(200, "x");
                                 res.set("X-Padding", std::string(4096, 'p'));
                                 co_return res;
                             }};
    auto results = fetch_all(server, {server.origin() + "/"});
    EXPECT_EQ(results.at(0).error, error::header_too_large);
}

TEST_F(fetcher_fixture, a_head_over_the_default_limit_arriving_at_once_is_an_error) {
    // 10,000 fields (about 100 KB) in one write: more than one read of the socket and than 64 KiB.
    demo::http_server server{ctx.get_executor(),
                             [](const http_request&) -> asio::awaitable<std::optional<http_response>> {
                                 auto res = make_response(200, "x");
                                 for (int i = 0; i < 10'000; ++i)
                                     res.set("X-" + std::to_string(i), "v");
                                 co_return res;
                             }};
    auto results = fetch_all(server, {server.origin() + "/"});
    EXPECT_EQ(results.at(0).error, error::header_too_large) << results[0].error.message();
}

TEST_F(fetcher_fixture, redirects_are_returned_not_followed) {
    demo::http_server server{ctx.get_executor(),
                             [](const http_request& req) -> asio::awaitable<std::optional<http_response>> {
                                 if (req.target() == "/old")
                                     co_return redirect_to(301, "/new");
                                 co_return make_response(200, "new");
                             }};
    auto results = fetch_all(server, {server.origin() + "/old"});
    EXPECT_EQ(results.at(0).status, 301);
    EXPECT_EQ(results[0].location, "/new");
    EXPECT_EQ(server.requests(), 1u);
}

TEST_F(fetcher_fixture, a_pooled_connection_whose_server_went_away_is_replaced_for_free) {
    auto answer = [](const http_request&) -> asio::awaitable<std::optional<http_response>> {
        co_return make_response(200, "ok", "text/plain");
    };
    std::optional<demo::http_server> first{std::in_place, ctx.get_executor(), answer};
    const auto port = first->port();
    fetcher f{ctx.get_executor(), config, 8};
    fetch_all(*first, {first->origin() + "/1"}, &f); // leaves one idle connection in the pool
    first.reset();                                   // the server is gone, closing that connection
    demo::http_server second{ctx.get_executor(), answer, port};
    auto results = fetch_all(second, {second.origin() + "/2"}, &f);
    EXPECT_FALSE(results.at(0).error) << results[0].error.message();
    EXPECT_EQ(f.stats().idle_connections_dropped, 1u) << "seen closed before a request was sent on it";
    EXPECT_EQ(f.stats().connections_opened, 2u);
}

TEST_F(fetcher_fixture, host_overrides_replace_dns) {
    std::string host_seen;
    demo::http_server server{ctx.get_executor(),
                             [&](const http_request& req) -> asio::awaitable<std::optional<http_response>> {
                                 host_seen = std::string(req[http::field::host]);
                                 co_return make_response(200, "ok", "text/plain");
                             }};
    config.host_overrides["www.example.test"] = "127.0.0.1";
    auto results = fetch_all(server, {"http://www.example.test:" + std::to_string(server.port()) + "/"});
    EXPECT_EQ(results.at(0).status, 200);
    EXPECT_EQ(host_seen, "www.example.test:" + std::to_string(server.port()));
}

TEST_F(fetcher_fixture, schemes_other_than_http_and_https_are_refused) {
    demo::http_server server{ctx.get_executor(),
                             [](const http_request&) -> asio::awaitable<std::optional<http_response>> {
                                 co_return make_response(200);
                             }};
    auto results = fetch_all(server, {"ftp://127.0.0.1:" + std::to_string(server.port()) + "/"});
    EXPECT_EQ(results.at(0).error, error::unsupported_scheme);
    EXPECT_EQ(server.connections(), 0u) << "nothing was sent";
}

TEST_F(fetcher_fixture, a_peer_that_never_completes_the_handshake_is_a_connect_timeout) {
    // A listener that never accepts, with its accept queue filled: the kernel drops further SYNs, so a
    // connect neither succeeds nor is refused.
    asio::ip::tcp::acceptor listener{ctx, {asio::ip::make_address("127.0.0.1"), 0}};
    listener.listen(0);
    const auto endpoint = listener.local_endpoint();
    // Raw non-blocking connects: Asio's synchronous connect would wait out the kernel's SYN retries.
    std::vector<int> fillers;
    for (int i = 0; i < 4; ++i) {
        const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        ASSERT_GE(fd, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_port = htons(endpoint.port());
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        (void)::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address);
        fillers.push_back(fd);
    }
    struct close_all {
        std::vector<int>& fds;
        ~close_all() {
            for (int fd : fds)
                ::close(fd);
        }
    } closer{fillers};
    config.connect_timeout = 300ms;
    demo::http_server unused{ctx.get_executor(),
                             [](const http_request&) -> asio::awaitable<std::optional<http_response>> {
                                 co_return make_response(200);
                             }};
    auto results = fetch_all(unused, {"http://127.0.0.1:" + std::to_string(endpoint.port()) + "/"});
    EXPECT_EQ(results.at(0).error, error::connect_timeout) << results[0].error.message();
}

namespace {

// Fetches `paths` in turn with one fresh fetcher and runs the context until the fetches are over.
std::vector<fetch_result> fetch_raw(asio::io_context& ctx, const fetch_config& config, raw_server& server,
                                    std::vector<std::string> paths, detail::fetch_options options = {}) {
    fetcher f{ctx.get_executor(), config, 8};
    std::vector<fetch_result> results;
    asio::co_spawn(
        ctx,
        [&]() -> asio::awaitable<void> {
            for (const auto& path : paths)
                results.push_back(
                    co_await f.fetch(boost::urls::parse_uri(server.origin() + path).value(), options));
        },
        [&](std::exception_ptr e) {
            server.stop();
            if (e)
                std::rethrow_exception(e);
        });
    run_bounded(ctx);
    return results;
}

// Fetches "/" once with a fresh fetcher and runs the context until the fetch is over.
fetch_result fetch_once(asio::io_context& ctx, const fetch_config& config, raw_server& server) {
    fetcher f{ctx.get_executor(), config, 8};
    fetch_result result;
    asio::co_spawn(
        ctx,
        [&]() -> asio::awaitable<void> {
            result = co_await f.fetch(boost::urls::parse_uri(server.origin() + "/").value());
        },
        [&](std::exception_ptr e) {
            server.stop();
            if (e)
                std::rethrow_exception(e);
        });
    run_bounded(ctx);
    return result;
}

} // namespace

TEST(fetcher_raw, a_head_over_the_default_limit_then_a_close_is_an_error) {
    asio::io_context ctx;
    fetch_config config;
    raw_server server{ctx.get_executor(), [](std::size_t) {
                          std::string fields;
                          for (int i = 0; i < 10'000; ++i)
                              fields += "X-" + std::to_string(i) + ": v\r\n";
                          return "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n" + fields +
                                 "Content-Length: 0\r\n\r\n";
                      }};
    auto results = fetch_raw(ctx, config, server, {"/"});
    EXPECT_EQ(results.at(0).error, error::header_too_large)
        << results[0].error.message() << results[0].status;
}

TEST_F(fetcher_fixture, interim_responses_are_skipped) {
    raw_server server{
        ctx.get_executor(), [](std::size_t) {
            return std::string(
                "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n"
                "HTTP/1.1 100 Continue\r\n\r\n"
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nfinal");
        }};
    auto result = fetch_once(ctx, config, server);
    EXPECT_FALSE(result.error) << result.error.message();
    EXPECT_EQ(result.status, 200);
    EXPECT_EQ(result.body, "final");
}

TEST_F(fetcher_fixture, endless_interim_responses_are_a_bad_response) {
    raw_server server{ctx.get_executor(), [](std::size_t) {
                          std::string bytes;
                          for (int i = 0; i < 20; ++i)
                              bytes += "HTTP/1.1 103 Early Hints\r\n\r\n";
                          return bytes;
                      }};
    auto result = fetch_once(ctx, config, server);
    EXPECT_EQ(result.error, error::bad_response);
}

TEST_F(fetcher_fixture, garbage_instead_of_http_is_a_bad_response_and_not_retried) {
    raw_server server{ctx.get_executor(),
                      [](std::size_t) { return std::string("\x01\x02 this is not HTTP at all\r\n\r\n"); }};
    auto result = fetch_once(ctx, config, server);
    EXPECT_EQ(result.error, error::bad_response);
    EXPECT_FALSE(detail::is_retryable(result.error));
    EXPECT_EQ(server.requests(), 1u);
}

TEST_F(fetcher_fixture, a_body_cut_short_is_a_retryable_failure) {
    raw_server server{ctx.get_executor(), [](std::size_t) {
                          return std::string("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly part of it");
                      }};
    auto result = fetch_once(ctx, config, server);
    EXPECT_TRUE(detail::is_retryable(result.error)) << result.error.message();
    EXPECT_EQ(result.status, 200) << "the head arrived";
    EXPECT_EQ(server.requests(), 1u);
}

TEST_F(fetcher_fixture, a_body_until_close_is_read_whole) {
    raw_server server{ctx.get_executor(), [](std::size_t) {
                          return std::string(
                              "HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n<p>no length</p>");
                      }};
    auto result = fetch_once(ctx, config, server);
    EXPECT_FALSE(result.error) << result.error.message();
    EXPECT_EQ(result.body, "<p>no length</p>");
}

// --- compression -------------------------------------------------------------------------------------------

namespace {

const std::string page_text = [] {
    std::string s = "<html><body>";
    for (int i = 0; i < 2000; ++i)
        s += "<p>paragraph " + std::to_string(i) + "</p>";
    return s + "</body></html>";
}();

/// A server answering every request with `body` and the given Content-Encoding; records Accept-Encoding.
demo::http_server encoded_server(asio::io_context& ctx, std::string body, std::string coding,
                                 std::string* accept_encoding_seen = nullptr) {
    return demo::http_server{ctx.get_executor(),
                             [body = std::move(body), coding = std::move(coding), accept_encoding_seen](
                                 const http_request& req) -> asio::awaitable<std::optional<http_response>> {
                                 if (accept_encoding_seen)
                                     *accept_encoding_seen = std::string(req[http::field::accept_encoding]);
                                 auto res = make_response(200, body);
                                 if (!coding.empty())
                                     res.set(http::field::content_encoding, coding);
                                 co_return res;
                             }};
}

} // namespace

TEST_F(fetcher_fixture, asks_for_compression_only_when_configured) {
    std::string seen;
    {
        auto server = encoded_server(ctx, "x", "", &seen);
        fetch_all(server, {server.origin() + "/"});
        EXPECT_EQ(seen, "gzip, deflate, br, zstd");
    }
    config.compression = false;
    auto server = encoded_server(ctx, "x", "", &seen);
    fetch_all(server, {server.origin() + "/"});
    EXPECT_EQ(seen, "identity");
}

TEST_F(fetcher_fixture, decodes_gzip_and_both_deflate_flavors) {
    const std::vector<std::pair<std::string, std::string>> table{
        {"gzip", compress(page_text, wrapper::gzip)},    {"x-gzip", compress(page_text, wrapper::gzip)},
        {"deflate", compress(page_text, wrapper::zlib)}, // RFC 9110's deflate: zlib-wrapped
        {"deflate", compress(page_text, wrapper::raw)},  // what many servers send instead
        {"br", asiocrawl::test::brotli(page_text)},      {"zstd", asiocrawl::test::zstd(page_text)},
    };
    for (const auto& [coding, body] : table) {
        auto server = encoded_server(ctx, body, coding);
        auto results = fetch_all(server, {server.origin() + "/"});
        const auto& r = results.at(0);
        EXPECT_FALSE(r.error) << coding << ": " << r.error.message();
        EXPECT_EQ(r.body, page_text) << coding;
        EXPECT_EQ(r.body_bytes, page_text.size());
        EXPECT_LT(r.wire_bytes, page_text.size()) << "counted as received, compressed";
    }
}

TEST_F(fetcher_fixture, a_gzip_bomb_is_body_too_large_within_the_limit) {
    config.max_body_bytes = 4u << 20;
    const std::string bomb = gzip_bomb(1024); // 1 GiB of zeros in about 1 MiB
    ASSERT_LT(bomb.size(), config.max_body_bytes) << "so the decoded limit is the one that trips";
    auto server = encoded_server(ctx, bomb, "gzip");
    auto results = fetch_all(server, {server.origin() + "/"});
    const auto& r = results.at(0);
    EXPECT_EQ(r.error, error::body_too_large);
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body_bytes, config.max_body_bytes) << "decoding stopped at the limit";
    EXPECT_TRUE(r.body.empty());
    EXPECT_FALSE(detail::is_retryable(r.error));
}

TEST_F(fetcher_fixture, brotli_and_zstd_bombs_are_body_too_large_within_the_limit) {
    config.max_body_bytes = 1u << 20;
    for (const auto& [coding, bomb] :
         {std::pair<std::string, std::string>{"br", asiocrawl::test::brotli_bomb(64)},
          std::pair<std::string, std::string>{"zstd", asiocrawl::test::zstd_bomb(1024)}}) {
        ASSERT_LT(bomb.size(), 64u << 10) << coding;
        auto server = encoded_server(ctx, bomb, coding);
        auto results = fetch_all(server, {server.origin() + "/"});
        const auto& r = results.at(0);
        EXPECT_EQ(r.error, error::body_too_large) << coding;
        EXPECT_EQ(r.body_bytes, config.max_body_bytes) << coding << ": decoding stopped at the limit";
        EXPECT_TRUE(r.body.empty());
    }
}

TEST_F(fetcher_fixture, a_zstd_frame_with_a_window_over_8_mib_is_decoding_failed_and_says_why) {
    auto server = encoded_server(ctx, asiocrawl::test::zstd_raw_frame(31, "<p>hi</p>"), "zstd");
    auto results = fetch_all(server, {server.origin() + "/"});
    EXPECT_EQ(results.at(0).error, error::decoding_failed);
    EXPECT_EQ(results[0].error_detail, "zstd frame window 2 GiB is over the 8 MiB bound");
}

TEST_F(fetcher_fixture, corrupt_or_unknown_content_codings_are_decoding_failed) {
    std::string damaged = compress(page_text, wrapper::gzip);
    for (std::size_t i = 30; i < 80; ++i)
        damaged[i] = static_cast<char>(damaged[i] ^ 0x33);
    const std::string whole = compress(page_text, wrapper::gzip);
    const std::vector<std::pair<std::string, std::string>> table{
        {"gzip", damaged},
        {"gzip", whole.substr(0, whole.size() / 2)}, // complete HTTP message, incomplete gzip stream
        {"gzip", page_text},                         // claims gzip, is not
        {"compress", "\x1f\x9d\x90hello"},           // never advertised: not handed over as if it were HTML
        {"gzip, br", asiocrawl::test::brotli(compress(page_text, wrapper::gzip))}, // stacked: not decoded
        {"br", asiocrawl::test::brotli(page_text).substr(0, 100)},                 // cut short
        {"zstd", asiocrawl::test::zstd(page_text).substr(0, 100)},
        {"zstd", page_text},
    };
    for (const auto& [coding, body] : table) {
        auto server = encoded_server(ctx, body, coding);
        auto results = fetch_all(server, {server.origin() + "/"});
        EXPECT_EQ(results.at(0).error, error::decoding_failed) << coding;
        EXPECT_EQ(results[0].status, 200);
        EXPECT_FALSE(detail::is_retryable(results[0].error));
        EXPECT_FALSE(results[0].error_detail.empty()) << coding << ": the record says what was wrong";
    }
}

// --- truncate_body_at --------------------------------------------------------------------------------------

TEST_F(fetcher_fixture, truncate_body_at_cuts_without_error_and_closes_the_connection) {
    config.max_body_bytes = 1000; // the cut overrides the limit: a longer Content-Length is no error
    for (const std::string coding : {"", "gzip"}) {
        auto server =
            encoded_server(ctx, coding.empty() ? page_text : compress(page_text, wrapper::gzip), coding);
        fetcher f{ctx.get_executor(), config, 8};
        detail::fetch_options options;
        options.truncate_body_at = 5000;
        auto results = fetch_all(server, {server.origin() + "/a", server.origin() + "/b"}, &f, options);
        for (const auto& r : results) {
            EXPECT_FALSE(r.error) << coding << ": " << r.error.message();
            EXPECT_EQ(r.body, page_text.substr(0, 5000)) << coding;
            EXPECT_TRUE(r.truncated);
        }
        EXPECT_EQ(server.connections(), 2u) << "a cut connection still has bytes in flight: never reused";
        EXPECT_EQ(f.stats().connections_reused, 0u);
    }
}

TEST_F(fetcher_fixture, truncate_body_at_leaves_a_shorter_body_alone) {
    auto server = encoded_server(ctx, "User-agent: *\nDisallow:\n", "");
    fetcher f{ctx.get_executor(), config, 8};
    detail::fetch_options options;
    options.truncate_body_at = 500u << 10;
    auto results = fetch_all(server, {server.origin() + "/robots.txt", server.origin() + "/"}, &f, options);
    EXPECT_EQ(results.at(0).body, "User-agent: *\nDisallow:\n");
    EXPECT_FALSE(results[0].truncated);
    EXPECT_EQ(server.connections(), 1u) << "a whole response leaves the connection reusable";
}

// --- capture -----------------------------------------------------------------------------------------------

TEST_F(fetcher_fixture, capture_keeps_the_exact_bytes_and_never_takes_leftover_bytes_as_the_next_answer) {
    const std::string gzipped = compress("hello, chunked and compressed world", wrapper::gzip);
    const std::string first_head = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Encoding: gzip\r\n"
                                   "Transfer-Encoding: chunked\r\n\r\n";
    auto hex = [](std::size_t n) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%zx", n);
        return std::string(buf);
    };
    const std::size_t half = gzipped.size() / 2;
    const std::string first = first_head + hex(half) + "\r\n" + gzipped.substr(0, half) + "\r\n" +
                              hex(gzipped.size() - half) + ";ext=1\r\n" + gzipped.substr(half) +
                              "\r\n0\r\n\r\n";
    const std::string second = "HTTP/1.1 404 Not Found\r\nContent-Length: 4\r\n\r\nnope";
    // Every connection answers the first message plus bytes nobody asked for.
    raw_server server{ctx.get_executor(), [&](std::size_t) { return first + second; }};
    const auto port = std::to_string(server.port());
    detail::fetch_options options;
    options.capture = true;
    auto results = fetch_raw(ctx, config, server, {"/1", "/2"}, options);
    ASSERT_EQ(results.size(), 2u);

    const auto& r1 = results[0];
    EXPECT_FALSE(r1.error) << r1.error.message();
    EXPECT_EQ(r1.body, "hello, chunked and compressed world");
    EXPECT_EQ(r1.raw_response, first) << "exactly the first message, transfer and content codings included";
    EXPECT_EQ(r1.raw_head_bytes, first_head.size());
    EXPECT_EQ(r1.wire_bytes, first.size());
    EXPECT_EQ(r1.raw_request.rfind("GET /1 HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\n", 0), 0u)
        << r1.raw_request;
    EXPECT_EQ(r1.raw_request.substr(r1.raw_request.size() - 4), "\r\n\r\n");
    EXPECT_EQ(r1.remote_ip, "127.0.0.1");

    const auto& r2 = results[1];
    EXPECT_EQ(r2.status, 200) << "asiocrawl never pipelines: unasked-for bytes are not the next answer";
    EXPECT_EQ(r2.raw_response, first);
    EXPECT_EQ(server.requests(), 2u) << "the connection with leftover bytes was not reused";
}

TEST_F(fetcher_fixture, capture_of_a_close_delimited_body_ends_at_the_close) {
    const std::string reply = "HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n<p>until close</p>";
    raw_server server{ctx.get_executor(), [&](std::size_t) { return reply; }};
    detail::fetch_options options;
    options.capture = true;
    auto results = fetch_raw(ctx, config, server, {"/"}, options);
    EXPECT_FALSE(results.at(0).error) << results[0].error.message();
    EXPECT_EQ(results[0].raw_response, reply);
    EXPECT_EQ(results[0].body, "<p>until close</p>");
}

// --- what a request takes from its URL (Boost.URL) --------------------------------------------------------

TEST(pool_key, is_scheme_host_and_port_as_the_url_writes_them) {
    EXPECT_EQ(detail::pool_key("http://example.com"), "http://example.com:80");
    EXPECT_EQ(detail::pool_key("https://example.com/a/b?x=1&y=%2F#frag"), "https://example.com:443");
    EXPECT_EQ(detail::pool_key("http://user:pw@host:81/p"), "http://host:81");
    EXPECT_EQ(detail::pool_key("http://host:/p"), "http://host:80");
    EXPECT_EQ(detail::pool_key("http://[::1]/x"), "http://::1:80");
    EXPECT_EQ(detail::pool_key("https://[2001:db8::7]:8080/?"), "https://2001:db8::7:8080");
    EXPECT_EQ(detail::pool_key("http://%31.2.3.4.nip.io/"), "http://%31.2.3.4.nip.io:80");
    EXPECT_EQ(detail::pool_key("ftp://example.com/"), "");
    EXPECT_EQ(detail::pool_key("mailto:a@b"), "");
    EXPECT_EQ(detail::pool_key("http://[::1/x"), "");
}

TEST(target_of, is_the_host_as_on_the_wire_and_the_port) {
    const auto https = detail::target_of("https://user@example.com/a?b#c");
    ASSERT_TRUE(https);
    EXPECT_TRUE(https->https);
    EXPECT_EQ(https->host, "example.com");
    EXPECT_EQ(https->port, "443");
    const auto v6 = detail::target_of("http://[2001:db8::7]:8080/");
    ASSERT_TRUE(v6);
    EXPECT_FALSE(v6->https);
    EXPECT_EQ(v6->host, "2001:db8::7");
    EXPECT_EQ(v6->port, "8080");
    const auto quad_like = detail::target_of("http://%31.2.3.4.nip.io/");
    ASSERT_TRUE(quad_like);
    EXPECT_EQ(quad_like->host, "1.2.3.4.nip.io") << "decoded for DNS, SNI and Host";
    EXPECT_FALSE(detail::target_of("mailto:a@b"));
    EXPECT_FALSE(detail::target_of("http://[::1/x"));
}

TEST(request_writer, sends_the_target_without_the_fragment_and_the_absolute_form_to_a_proxy) {
    fetch_config config;
    config.user_agent = "t";
    const detail::request_writer writer(config, nullptr);
    std::pair<std::size_t, std::size_t> proxy_fields;
    const auto direct = writer.request("http://user:pw@h:81?q=1#f", "http://h:81", nullptr, proxy_fields);
    EXPECT_TRUE(direct.starts_with("GET /?q=1 HTTP/1.1\r\nHost: h:81\r\nUser-Agent: t\r\n")) << direct;
    EXPECT_EQ(proxy_fields.second, 0u);
    const auto proxy = detail::parse_proxy("http://me:secret@proxy:3128");
    ASSERT_TRUE(proxy);
    const auto via =
        writer.request("http://[::1]:8080/a%20b/c?x#y", "http://::1:8080", &*proxy, proxy_fields);
    EXPECT_TRUE(via.starts_with("GET http://[::1]:8080/a%20b/c?x HTTP/1.1\r\nHost: [::1]:8080\r\n")) << via;
    EXPECT_EQ(via.substr(proxy_fields.first, proxy_fields.second),
              "Proxy-Authorization: " + proxy->authorization + "\r\n");
}

// --- answers in pieces (the wait for an answer holds no buffer; a partial message keeps its bytes)
// ----------

namespace {

/// Answers every request on a connection, keep-alive, with `pieces` written one at a time, a short pause
/// between them, so that the client sees the message arrive in parts.
asio::awaitable<void> serve_in_pieces(asio::ip::tcp::acceptor& acceptor, std::vector<std::string> pieces,
                                      std::size_t& requests) {
    constexpr auto tuple = asio::as_tuple(asio::use_awaitable);
    auto [accept_ec, socket] = co_await acceptor.async_accept(tuple);
    if (accept_ec)
        co_return;
    asio::steady_timer pause{socket.get_executor()};
    for (;;) {
        asio::streambuf head;
        auto [read_ec, n] = co_await asio::async_read_until(socket, head, "\r\n\r\n", tuple);
        if (read_ec)
            co_return;
        ++requests;
        for (const auto& piece : pieces) {
            pause.expires_after(std::chrono::milliseconds(2));
            co_await pause.async_wait(tuple);
            co_await asio::async_write(socket, asio::buffer(piece), tuple);
        }
    }
}

} // namespace

TEST_F(fetcher_fixture, an_answer_arriving_in_pieces_is_read_whole_and_the_connection_kept) {
    const std::string chunked =
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n"
        "5\r\n<p>he\r\n7\r\nllo</p>\r\n0\r\n\r\n";
    // One byte first, a head cut mid-line and mid-CRLF, a chunk size line cut, a body in several parts.
    const std::vector<std::string> pieces{
        chunked.substr(0, 1),  chunked.substr(1, 20), chunked.substr(21, 39), chunked.substr(60, 20),
        chunked.substr(80, 1), chunked.substr(81, 4), chunked.substr(85)};
    asio::ip::tcp::acceptor acceptor{ctx, {asio::ip::make_address("127.0.0.1"), 0}};
    std::size_t requests = 0;
    asio::co_spawn(ctx, serve_in_pieces(acceptor, pieces, requests), asio::detached);
    const std::string url = "http://127.0.0.1:" + std::to_string(acceptor.local_endpoint().port()) + "/";

    fetcher f{ctx.get_executor(), config, 8};
    detail::fetch_options options;
    options.capture = true;
    std::vector<fetch_result> results;
    asio::co_spawn(
        ctx,
        [&]() -> asio::awaitable<void> {
            for (int i = 0; i < 2; ++i) {
                std::unique_ptr<fetch_result> out;
                co_await f.fetch_into(url, options, out);
                results.push_back(std::move(*out));
            }
        },
        [&](std::exception_ptr e) {
            acceptor.close();
            f.close_idle();
            if (e)
                std::rethrow_exception(e);
        });
    run_bounded(ctx);
    ASSERT_EQ(results.size(), 2u);
    for (const auto& r : results) {
        EXPECT_FALSE(r.error) << r.error.message();
        EXPECT_EQ(r.status, 200);
        EXPECT_EQ(r.body, "<p>hello</p>");
        EXPECT_EQ(r.raw_response, chunked);
        EXPECT_EQ(r.wire_bytes, chunked.size());
        EXPECT_EQ(r.raw_head_bytes, chunked.find("\r\n\r\n") + 4);
    }
    EXPECT_EQ(requests, 2u);
    EXPECT_EQ(f.stats().connections_opened, 1u) << "the connection went back to the pool after each answer";
    EXPECT_EQ(f.stats().connections_reused, 1u);
}

TEST_F(fetcher_fixture, fetch_into_refuses_what_is_not_http) {
    fetcher f{ctx.get_executor(), config, 8};
    std::unique_ptr<fetch_result> out;
    asio::co_spawn(
        ctx, [&]() -> asio::awaitable<void> { co_await f.fetch_into("ftp://example.com/", {}, out); },
        [](std::exception_ptr e) {
            if (e)
                std::rethrow_exception(e);
        });
    run_bounded(ctx);
    ASSERT_TRUE(out);
    EXPECT_EQ(out->error, error::unsupported_scheme);
}

// --- address guard -----------------------------------------------------------------------------------------

TEST_F(fetcher_fixture, the_address_guard_refuses_loopback_without_connecting) {
    config.refuse_private_addresses = true;
    auto server = encoded_server(ctx, "secret", "");
    config.host_overrides["intranet.example"] = "127.0.0.1";
    config.host_overrides["mapped.example"] = "::ffff:127.0.0.1";
    const auto port = std::to_string(server.port());
    auto results =
        fetch_all(server, {"http://127.0.0.1:" + port + "/", "http://intranet.example:" + port + "/",
                           "http://mapped.example:" + port + "/", "http://localhost:" + port + "/",
                           "http://[::1]:" + port + "/"});
    ASSERT_EQ(results.size(), 5u);
    for (const auto& r : results) {
        EXPECT_EQ(r.error, error::forbidden_address) << r.error.message();
        EXPECT_FALSE(detail::is_retryable(r.error));
    }
    EXPECT_EQ(server.connections(), 0u) << "refused before any connection attempt";
}

TEST_F(fetcher_fixture, without_the_guard_loopback_is_fine) {
    auto server = encoded_server(ctx, "open", "");
    auto results = fetch_all(server, {server.origin() + "/"});
    EXPECT_EQ(results.at(0).body, "open");
}

// --- framing and connection reuse (hostile servers writing exact bytes) ----------------------------------

namespace {

using asiocrawl::test::hostile_server;
using exchange = hostile_server::exchange;
using task = asio::awaitable<void>;

/// A step of a scripted fetch sequence: fetch `path`, after waiting `before`.
struct step {
    std::string path;
    std::chrono::milliseconds before{0};
};

struct framing : ::testing::Test {
    asio::io_context ctx;
    fetch_config config;
    hostile_server server{ctx.get_executor()};
    std::optional<fetcher> f;

    std::vector<fetch_result> fetch(std::vector<step> steps, detail::fetch_options options = {}) {
        f.emplace(ctx.get_executor(), config, 8);
        std::vector<fetch_result> results;
        asio::co_spawn(
            ctx,
            [&]() -> asio::awaitable<void> {
                for (const auto& s : steps) {
                    if (s.before.count() > 0) {
                        asio::steady_timer timer{ctx, s.before};
                        co_await timer.async_wait(asio::use_awaitable);
                    }
                    std::unique_ptr<fetch_result> out;
                    co_await f->fetch_into(server.url(s.path), options, out);
                    results.push_back(std::move(*out));
                }
            },
            [&](std::exception_ptr e) {
                f->close_idle();
                server.stop();
                if (e)
                    std::rethrow_exception(e);
            });
        run_bounded(ctx);
        return results;
    }

    /// A keep-alive answer with `body` and `fields` (each ending in CRLF).
    static std::string kept(const std::string& body, const std::string& fields = {}) {
        return "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: " +
               std::to_string(body.size()) + "\r\n" + fields + "\r\n" + body;
    }
    /// Serves `body` kept alive at `path`.
    void keep_alive_page(const std::string& path, std::string body, std::string fields = {}) {
        server.route(path, [bytes = kept(body, fields)](exchange& ex) -> task {
            ex.keep_open = true;
            co_await ex.write(bytes);
        });
    }
};

} // namespace

TEST_F(framing, bytes_arriving_while_a_connection_idles_are_never_read_as_the_next_answer) {
    // The answer to /a is complete; 50 ms later the server writes a whole second response nobody asked for.
    // Read as the answer to /b it would put a fake page in /b's record and archive (response queue
    // poisoning): the idle connection is given up instead and /b is asked on a fresh one.
    server.route("/a", [](exchange& ex) -> task {
        ex.keep_open = true;
        if (co_await ex.write(kept("real a")) && co_await ex.pause(50ms))
            co_await ex.write(kept("<a href=/evil>FAKE</a>"));
    });
    keep_alive_page("/b", "real b");
    const auto r = fetch({{"/a"}, {"/b", 300ms}});
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(r[0].body, "real a");
    EXPECT_FALSE(r[1].error) << r[1].error.message();
    EXPECT_EQ(r[1].body, "real b");
    EXPECT_EQ(f->stats().idle_connections_dropped, 1u);
    EXPECT_EQ(f->stats().connections_opened, 2u);
    EXPECT_EQ(f->stats().connections_reused, 0u);
}

TEST_F(framing, a_connection_the_server_closed_while_idle_is_given_up_before_use) {
    server.route("/a", [](exchange& ex) -> task { co_await ex.write(kept("a")); }); // closes, no notice
    keep_alive_page("/b", "b");
    const auto r = fetch({{"/a"}, {"/b", 100ms}});
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(r[1].body, "b");
    EXPECT_EQ(f->stats().idle_connections_dropped, 1u);
    EXPECT_EQ(f->stats().stale_retries, 0u) << "found closed before a request was sent on it";
}

TEST_F(framing, the_servers_keep_alive_timeout_shortens_how_long_a_connection_is_reused) {
    // timeout=1: reused for at most half a second (a second less than N, half of N below two).
    keep_alive_page("/short", "s", "Keep-Alive: timeout=1\r\n");
    keep_alive_page("/long", "l", "Keep-Alive: timeout=30, max=100\r\n");
    const auto r = fetch({{"/short"}, {"/long", 700ms}, {"/long", 700ms}});
    ASSERT_EQ(r.size(), 3u);
    for (const auto& result : r)
        EXPECT_FALSE(result.error) << result.error.message();
    EXPECT_EQ(f->stats().connections_opened, 2u) << "the first connection expired, the second did not";
    EXPECT_EQ(f->stats().connections_reused, 1u);
}

TEST_F(framing, keep_alive_max_0_and_connection_close_end_the_connection) {
    keep_alive_page("/max0", "m", "Keep-Alive: timeout=30, max=0\r\n");
    keep_alive_page("/close", "c", "Connection: close\r\n");
    keep_alive_page("/b", "b");
    const auto r = fetch({{"/max0"}, {"/close"}, {"/b"}});
    ASSERT_EQ(r.size(), 3u);
    EXPECT_EQ(r[2].body, "b");
    EXPECT_EQ(f->stats().connections_opened, 3u);
    EXPECT_EQ(server.connections(), 3u);
}

TEST_F(framing, a_chunk_extension_without_end_is_a_bad_response_not_memory) {
    server.route("/", [](exchange& ex) -> task {
        if (co_await ex.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10;ext="))
            co_await ex.repeat(std::string(16 * 1024, 'x'), 0ms, 64 * 16); // 16 MiB, then it would go on
    });
    const auto r = fetch({{"/"}});
    EXPECT_EQ(r.at(0).error, error::bad_response) << r[0].error.message();
    EXPECT_LT(r[0].wire_bytes, 1024u) << "only the head was taken; the line was never accepted";
}

TEST_F(framing, endless_chunk_size_digits_are_a_bad_response) {
    server.route("/", [](exchange& ex) -> task {
        if (co_await ex.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"))
            co_await ex.repeat(std::string(16 * 1024, '0'), 0ms, 64 * 16);
    });
    EXPECT_EQ(fetch({{"/"}}).at(0).error, error::bad_response);
}

TEST_F(framing, an_endless_trailer_section_is_header_too_large) {
    config.max_header_bytes = 8 * 1024;
    server.route("/", [](exchange& ex) -> task {
        if (co_await ex.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n"))
            co_await ex.repeat("X-Trailer: yes\r\n", 0ms, 1'000'000);
    });
    const auto r = fetch({{"/"}});
    EXPECT_EQ(r.at(0).error, error::header_too_large) << r[0].error.message();
    EXPECT_EQ(r[0].status, 200);
}

TEST_F(framing, a_field_over_64_kib_is_header_too_large_in_the_head_and_in_trailers) {
    config.max_header_bytes = 1u << 20; // above what Beast can store in one field
    const std::string big(70 * 1024, 'v');
    server.route("/head", [big](exchange& ex) -> task {
        co_await ex.write("HTTP/1.1 200 OK\r\nX-Big: " + big + "\r\nContent-Length: 2\r\n\r\nok");
    });
    server.route("/trailer", [big](exchange& ex) -> task {
        co_await ex.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\nX-Big: " +
                          big + "\r\n\r\n");
    });
    const auto r = fetch({{"/head"}, {"/trailer"}});
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(r[0].error, error::header_too_large) << r[0].error.message();
    EXPECT_EQ(r[1].error, error::header_too_large) << r[1].error.message();
}

TEST_F(framing, trailers_are_never_merged_into_the_head) {
    config.cookies.enabled = true;
    const std::string answer =
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n"
        "2\r\nok\r\n0\r\nContent-Type: application/x-evil\r\nSet-Cookie: planted=1\r\n"
        "Location: http://evil.invalid/\r\n\r\n";
    server.route("/", [answer](exchange& ex) -> task {
        ex.keep_open = true;
        co_await ex.write(answer);
    });
    const auto r = fetch({{"/"}, {"/"}});
    ASSERT_EQ(r.size(), 2u);
    EXPECT_FALSE(r[0].error) << r[0].error.message();
    EXPECT_EQ(r[0].body, "ok");
    EXPECT_EQ(r[0].content_type, "text/html");
    EXPECT_FALSE(r[0].location.has_value());
    EXPECT_EQ(f->cookies(), 0u);
    EXPECT_EQ(f->stats().connections_reused, 1u) << "a message with trailers is cleanly framed";
}

TEST_F(framing, a_gzip_transfer_coding_is_decoded) {
    const std::string page = "<p>decoded from a transfer coding</p>";
    const std::string gzipped = asiocrawl::test::compress(page, asiocrawl::test::wrapper::gzip);
    std::ostringstream size;
    size << std::hex << gzipped.size();
    server.route("/alone", [gzipped](exchange& ex) -> task {
        co_await ex.write("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: gzip\r\n\r\n" +
                          gzipped);
    });
    server.route("/chunked", [gzipped, hex = size.str()](exchange& ex) -> task {
        ex.keep_open = true;
        co_await ex.write(
            "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: gzip, chunked\r\n\r\n" + hex +
            "\r\n" + gzipped + "\r\n0\r\n\r\n");
    });
    const auto r = fetch({{"/alone"}, {"/chunked"}});
    ASSERT_EQ(r.size(), 2u);
    for (const auto& result : r) {
        EXPECT_FALSE(result.error) << result.error.message();
        EXPECT_EQ(result.body, page);
    }
}

TEST_F(framing, transfer_codings_that_cannot_be_undone_are_refused) {
    server.route("/compress", [](exchange& ex) -> task {
        co_await ex.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: compress\r\n\r\nxyz");
    });
    server.route("/twice", [](exchange& ex) -> task {
        co_await ex.write(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n");
    });
    server.route("/not-last", [](exchange& ex) -> task {
        co_await ex.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n2\r\nok\r\n0\r\n\r\n");
    });
    const auto r = fetch({{"/compress"}, {"/twice"}, {"/not-last"}});
    ASSERT_EQ(r.size(), 3u);
    for (const auto& result : r)
        EXPECT_EQ(result.error, error::bad_response) << result.error.message();
}

TEST_F(framing, status_000_is_a_bad_response) {
    server.route("/", [](exchange& ex) -> task {
        co_await ex.write("HTTP/1.1 000 Zero\r\nContent-Length: 2\r\n\r\nok");
    });
    const auto r = fetch({{"/"}});
    EXPECT_EQ(r.at(0).error, error::bad_response) << r[0].error.message();
    EXPECT_EQ(r[0].status, 0);
}

TEST_F(framing, a_status_line_without_a_reason_phrase_is_read_as_browsers_do) {
    const std::string answer = "HTTP/1.1 200\r\nContent-Type: text/html\r\nContent-Length: 2\r\n\r\nok";
    server.route("/", [answer](exchange& ex) -> task {
        ex.keep_open = true;
        co_await ex.write(answer);
    });
    detail::fetch_options options;
    options.capture = true;
    const auto results = fetch({{"/"}}, options);
    ASSERT_EQ(results.size(), 1u);
    const auto* out = &results[0];
    EXPECT_FALSE(out->error) << out->error.message();
    EXPECT_EQ(out->status, 200);
    EXPECT_EQ(out->body, "ok");
    EXPECT_EQ(out->raw_response, answer) << "the bytes as received";
    EXPECT_EQ(out->wire_bytes, answer.size());
    EXPECT_EQ(out->raw_head_bytes, answer.size() - 2);
}

TEST_F(framing, a_pooled_connection_closed_as_the_request_arrives_is_retried_on_a_fresh_one_for_free) {
    // The server takes the second request on the kept connection and closes it without a byte (it was
    // closing idle connections as the request came): the URL did nothing wrong, so it is sent again on a
    // fresh connection without counting a try (RFC 9112 9.3.1: GET is idempotent).
    std::size_t asked = 0;
    server.route("/", [&asked](exchange& ex) -> task {
        if (++asked == 2)
            co_return; // closes the connection, no answer
        ex.keep_open = true;
        co_await ex.write(kept("fine"));
    });
    const auto r = fetch({{"/"}, {"/"}});
    ASSERT_EQ(r.size(), 2u);
    EXPECT_FALSE(r[1].error) << r[1].error.message();
    EXPECT_EQ(r[1].body, "fine");
    EXPECT_EQ(f->stats().stale_retries, 1u);
    EXPECT_EQ(f->stats().connections_opened, 2u);
    EXPECT_EQ(asked, 3u);
}

TEST_F(framing, a_chunk_extension_over_the_line_limit_is_refused_even_when_it_arrives_whole) {
    const std::string head =
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n";
    server.route("/long", [head](exchange& ex) -> task {
        co_await ex.write(head + "2;x=" + std::string(5000, 'e') + "\r\nok\r\n0\r\n\r\n");
    });
    server.route("/short", [head](exchange& ex) -> task {
        co_await ex.write(head + "2;name=value;q=\"quoted\"\r\nok\r\n0\r\n\r\n");
    });
    const auto r = fetch({{"/long"}, {"/short"}});
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(r[0].error, error::bad_response) << r[0].error.message();
    EXPECT_FALSE(r[1].error) << r[1].error.message();
    EXPECT_EQ(r[1].body, "ok");
}
