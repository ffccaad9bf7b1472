// Conditional requests (a re-crawl, docs/FETCHING.md): the validators a response carries (ETag,
// Last-Modified) come back in fetch_result, fetch_options sends them as If-None-Match / If-Modified-Since,
// and a 304 answer, which has no body whatever its head says, leaves no stray bytes for the next request.

#include "http/fetcher.hpp"
#include "http/request_writer.hpp"

#include "support/hostile_server.hpp"
#include "support/loopback.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace asio = boost::asio;
using namespace asiocrawl;
using namespace asiocrawl::test;
using namespace std::chrono_literals;
using detail::fetch_result;
using detail::fetcher;

// Named after the file: the http tests build as one unity translation unit.
namespace conditional_test {

using exchange = hostile_server::exchange;
using task = asio::awaitable<void>;

constexpr std::string_view current_etag = "\"5f3a-1b2c\"";
constexpr std::string_view last_modified = "Tue, 03 Nov 2026 10:00:00 GMT";
const std::string page_body = "<html><body>the page, unchanged since November</body></html>";

/// The value of field `name` in a request head ("" when absent), as a server reads it.
std::string field_of(const std::string& head, const std::string& name) {
    const std::string marker = "\r\n" + name + ": ";
    const auto at = head.find(marker);
    if (at == std::string::npos)
        return {};
    const auto start = at + marker.size();
    return head.substr(start, head.find("\r\n", start) - start);
}

/// What nginx does for a static file (ngx_http_not_modified_filter): If-None-Match decides when sent (the
/// current ETag among the tags listed, or "*"), else If-Modified-Since when it equals Last-Modified exactly.
bool not_modified(const std::string& head) {
    const std::string none_match = field_of(head, "If-None-Match");
    if (!none_match.empty())
        return none_match == "*" || none_match.find(current_etag) != std::string::npos;
    return field_of(head, "If-Modified-Since") == last_modified;
}

struct step {
    std::string path;
    std::string if_none_match{};
    std::string if_modified_since{};
    std::chrono::milliseconds before{0};
};

struct conditional : ::testing::Test {
    asio::io_context ctx;
    fetch_config config;
    hostile_server server{ctx.get_executor()};
    std::optional<fetcher> f;

    conditional() {
        config.user_agent = "t";
        // The page a re-crawl asks again: 304 when the validators match, the page with them otherwise. Kept
        // alive, so that a connection left clean is reused.
        server.route("/page", [](exchange& ex) -> task {
            ex.keep_open = true;
            const std::string validators = "ETag: " + std::string(current_etag) +
                                           "\r\nLast-Modified: " + std::string(last_modified) + "\r\n";
            if (not_modified(ex.head()))
                co_await ex.write("HTTP/1.1 304 Not Modified\r\n" + validators + "\r\n");
            else
                co_await ex.write("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: " +
                                  std::to_string(page_body.size()) + "\r\n" + validators + "\r\n" +
                                  page_body);
        });
        server.route("/next", [](exchange& ex) -> task {
            co_await ex.write("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 4\r\n"
                              "Connection: close\r\n\r\nnext");
        });
    }

    /// Fetches each step in turn with one fetcher, capturing the exchange bytes.
    std::vector<fetch_result> fetch(const std::vector<step>& steps) {
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
                    detail::fetch_options options;
                    options.capture = true;
                    options.if_none_match = s.if_none_match;
                    options.if_modified_since = s.if_modified_since;
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

    /// The exact request head asiocrawl sends for `path` with `conditional_fields` (each ending in CRLF).
    std::string request_for(const std::string& path, const std::string& conditional_fields = {}) const {
        return "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(server.port()) +
               "\r\nUser-Agent: t\r\nAccept: text/html,application/xhtml+xml,*/*;q=0.8\r\n"
               "Accept-Encoding: gzip, deflate, br, zstd\r\n" +
               conditional_fields + "\r\n";
    }
};

TEST_F(conditional, validators_come_back_and_a_conditional_request_gets_304_on_the_same_connection) {
    const std::string etag(current_etag), date(last_modified);
    const auto r = fetch({{"/page"},
                          {"/page", etag, date},
                          {"/page", "", date},
                          {"/page", "\"an-older-tag\"", date},
                          {"/page", "", "Mon, 02 Nov 2026 10:00:00 GMT"}});
    ASSERT_EQ(r.size(), 5u);
    ASSERT_EQ(server.heads().size(), 5u);

    // The first answer's validators, as sent.
    EXPECT_EQ(r[0].status, 200);
    EXPECT_EQ(r[0].etag, current_etag);
    EXPECT_EQ(r[0].last_modified, last_modified);
    EXPECT_EQ(server.heads()[0], request_for("/page")) << "a plain GET carries no conditional field";

    // Sent back: exactly these bytes on the wire, and in the captured request (the WARC's request record).
    const std::string both = "If-None-Match: " + etag + "\r\nIf-Modified-Since: " + date + "\r\n";
    EXPECT_EQ(server.heads()[1], request_for("/page", both));
    EXPECT_EQ(r[1].raw_request, server.heads()[1]);
    EXPECT_FALSE(r[1].error) << r[1].error.message();
    EXPECT_EQ(r[1].status, 304);
    EXPECT_TRUE(r[1].body.empty());
    EXPECT_EQ(r[1].etag, current_etag) << "a 304 repeats the validators (RFC 9110 15.4.5)";
    EXPECT_EQ(r[1].raw_response.size(), r[1].raw_head_bytes) << "a 304 has no body";

    EXPECT_EQ(server.heads()[2], request_for("/page", "If-Modified-Since: " + date + "\r\n"));
    EXPECT_EQ(r[2].status, 304);

    // Validators that no longer match: the whole page again.
    EXPECT_EQ(r[3].status, 200);
    EXPECT_EQ(r[3].body, page_body);
    EXPECT_EQ(r[4].status, 200);
    EXPECT_EQ(r[4].body, page_body);

    EXPECT_EQ(server.connections(), 1u) << "a 304 ends where its head ends: the connection is reused";
    EXPECT_EQ(f->stats().connections_reused, 4u);
}

TEST_F(conditional, a_304_with_a_body_anyway_leaves_no_stray_bytes_for_the_next_request) {
    // RFC 9110 15.4.5: a 304 ends with its head, whatever Content-Length says. A server that sends bytes
    // after it anyway (here a whole fake answer) must not have them read as the next URL's answer.
    const std::string fake = "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nFAKE";
    server.route("/at-once", [&](exchange& ex) -> task {
        ex.keep_open = true;
        co_await ex.write("HTTP/1.1 304 Not Modified\r\nContent-Length: " + std::to_string(fake.size()) +
                          "\r\nETag: \"x\"\r\n\r\n" + fake);
    });
    server.route("/later", [&](exchange& ex) -> task {
        ex.keep_open = true;
        if (co_await ex.write("HTTP/1.1 304 Not Modified\r\nContent-Length: 40\r\n\r\n") &&
            co_await ex.pause(50ms))
            co_await ex.write(fake);
    });
    const auto r = fetch({{"/at-once", "\"x\""}, {"/next"}, {"/later", "\"x\""}, {"/next", "", "", 300ms}});
    ASSERT_EQ(r.size(), 4u);
    for (const auto& result : r)
        EXPECT_FALSE(result.error) << result.error.message();
    EXPECT_EQ(r[0].status, 304);
    EXPECT_EQ(r[0].etag, "\"x\"");
    EXPECT_EQ(r[0].raw_response, "HTTP/1.1 304 Not Modified\r\nContent-Length: " +
                                     std::to_string(fake.size()) + "\r\nETag: \"x\"\r\n\r\n")
        << "the capture ends with the head";
    EXPECT_EQ(r[1].status, 200);
    EXPECT_EQ(r[1].body, "next") << "the stray bytes were not taken for the next answer";
    EXPECT_EQ(r[2].status, 304);
    EXPECT_EQ(r[3].body, "next");
    EXPECT_EQ(f->stats().connections_reused, 0u) << "neither connection with stray bytes went back to use";
    EXPECT_EQ(f->stats().idle_connections_dropped, 1u)
        << "the bytes that came later were seen while it idled";
    EXPECT_EQ(server.connections(), 4u);
}

TEST_F(conditional, a_repeated_validator_keeps_the_last_and_an_absent_one_is_empty) {
    server.route("/twice", [](exchange& ex) -> task {
        co_await ex.write("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nETag: \"first\"\r\nETag:  \"last\" \r\n"
                          "Connection: close\r\n\r\nx");
    });
    server.page("/none", "no validators");
    const auto r = fetch({{"/twice"}, {"/none"}});
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(r[0].etag, "\"last\"") << "as curl keeps it, without the surrounding whitespace";
    EXPECT_EQ(r[0].last_modified, "");
    EXPECT_EQ(r[1].etag, "");
    EXPECT_EQ(r[1].last_modified, "");
}

TEST(request_writer, sends_the_validators_after_the_fixed_fields) {
    fetch_config config;
    config.user_agent = "t";
    config.compression = false;
    const detail::request_writer writer(config, nullptr);
    std::pair<std::size_t, std::size_t> proxy_fields;
    EXPECT_EQ(
        writer.request("http://h/p", "http://h:80", nullptr, proxy_fields,
                       {"W/\"weak\"", "Sat, 29 Oct 1994 19:43:31 GMT", {}}),
        "GET /p HTTP/1.1\r\nHost: h\r\nUser-Agent: t\r\nAccept: text/html,application/xhtml+xml,*/*;q=0.8\r\n"
        "Accept-Encoding: identity\r\nIf-None-Match: W/\"weak\"\r\n"
        "If-Modified-Since: Sat, 29 Oct 1994 19:43:31 GMT\r\n\r\n");
}

TEST(request_writer, a_validator_that_could_split_the_head_is_not_sent) {
    fetch_config config;
    config.user_agent = "t";
    const detail::request_writer writer(config, nullptr);
    std::pair<std::size_t, std::size_t> proxy_fields;
    const std::string plain = writer.request("http://h/", "http://h:80", nullptr, proxy_fields);
    using namespace std::string_literals;
    const std::vector<std::string> bad{"\"a\"\r\nX-Injected: 1",
                                       "\"a\"\nX-Injected: 1",
                                       "\"a\"\rX",
                                       "\"a\"\0b"s,
                                       "\"a\x7f\"",
                                       "\"a\x01\"",
                                       std::string(detail::max_validator_bytes + 1, 'e')};
    for (const auto& value : bad) {
        EXPECT_FALSE(detail::sendable_validator(value)) << value;
        EXPECT_EQ(writer.request("http://h/", "http://h:80", nullptr, proxy_fields, {value, value, {}}),
                  plain)
            << "sent as a plain GET: " << value;
    }
    EXPECT_TRUE(detail::sendable_validator(std::string(detail::max_validator_bytes, 'e')));
    EXPECT_TRUE(detail::sendable_validator("\"tab\tand obs-text \xe9\""));
}

TEST(request_writer, a_validator_set_with_fetch_headers_wins) {
    fetch_config config;
    config.user_agent = "t";
    config.headers = {"If-None-Match: \"from-the-user\""};
    const detail::request_writer writer(config, nullptr);
    std::pair<std::size_t, std::size_t> proxy_fields;
    const std::string r = writer.request("http://h/", "http://h:80", nullptr, proxy_fields,
                                         {"\"from-history\"", "Sat, 29 Oct 1994 19:43:31 GMT", {}});
    EXPECT_NE(r.find("If-None-Match: \"from-the-user\"\r\n"), std::string::npos) << r;
    EXPECT_EQ(r.find("from-history"), std::string::npos) << "one If-None-Match field, never two: " << r;
    EXPECT_NE(r.find("If-Modified-Since: Sat, 29 Oct 1994 19:43:31 GMT\r\n"), std::string::npos) << r;
}

} // namespace conditional_test
