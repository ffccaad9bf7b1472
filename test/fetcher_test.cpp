#include "fetcher.hpp"

#include "support/loopback.hpp"
#include "support/raw_server.hpp"

#include <asiocrawl/error.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/url/parse.hpp>

#include <optional>

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
                                        fetcher* shared = nullptr) {
        std::optional<fetcher> own;
        if (!shared)
            shared = &own.emplace(ctx.get_executor(), config, 8);
        std::vector<fetch_result> results;
        asio::co_spawn(
            ctx,
            [&]() -> asio::awaitable<void> {
                for (const auto& u : urls)
                    results.push_back(co_await shared->fetch(boost::urls::parse_uri(u).value()));
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

TEST_F(fetcher_fixture, a_stale_pooled_connection_is_retried_on_a_fresh_one_for_free) {
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
    EXPECT_EQ(f.stats().stale_retries, 1u);
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

TEST_F(fetcher_fixture, https_is_refused_until_tls_lands) {
    demo::http_server server{ctx.get_executor(),
                             [](const http_request&) -> asio::awaitable<std::optional<http_response>> {
                                 co_return make_response(200);
                             }};
    auto results = fetch_all(server, {"https://127.0.0.1:" + std::to_string(server.port()) + "/"});
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

// Fetches `url` once with a fresh fetcher and runs the context until the fetch is over.
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
