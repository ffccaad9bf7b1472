#include "fetcher.hpp"

#include <asiocrawl/error.hpp>
#include <asiocrawl/version.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include <chrono>
#include <unordered_map>
#include <vector>

namespace asiocrawl::detail {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using boost::system::error_code;
using tcp = asio::ip::tcp;
using clock_type = std::chrono::steady_clock;

namespace {

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

/// More interim (1xx) responses than this before the final one is a broken or hostile server.
constexpr int max_interim_responses = 8;

/// A keep-alive connection and the read buffer that belongs to it (bytes past one response stay with it).
struct connection {
    explicit connection(const asio::any_io_executor& executor)
        : stream(executor) {}
    beast::tcp_stream stream;
    beast::flat_buffer buffer;
    clock_type::time_point idle_since{};
};

/// Where a request goes and what it says: derived once per fetch from the normalized URL.
struct request_target {
    std::string host; // as in the URL, brackets stripped for IPv6
    std::string port;
    std::string host_header;
    std::string target;
    std::string origin_key;
};

request_target make_target(boost::urls::url_view url) {
    request_target t;
    t.host = url.encoded_host_address(); // IPv6 without brackets, for the resolver
    const bool https = url.scheme_id() == boost::urls::scheme::https;
    t.port = url.has_port() && !url.port().empty() ? std::string(url.port()) : (https ? "443" : "80");
    t.host_header = url.encoded_host_and_port();
    t.target = url.encoded_path().empty() ? "/" : std::string(url.encoded_path());
    if (url.has_query()) {
        t.target += '?';
        t.target += url.encoded_query();
    }
    t.origin_key = std::string(url.scheme()) + "://" + t.host + ":" + t.port;
    return t;
}

/// Translates Beast's parse errors into the crawler's own vocabulary; network errors pass through.
error_code classify_read_error(const error_code& ec) {
    if (ec == beast::error::timeout)
        return error::request_timeout;
    if (ec == http::error::body_limit)
        return error::body_too_large;
    if (ec == http::error::header_limit)
        return error::header_too_large;
    if (ec.category() == http::make_error_code(http::error::bad_version).category() &&
        ec != http::error::end_of_stream && ec != http::error::partial_message)
        return error::bad_response;
    return ec;
}

/// A pooled connection that the server closed while it sat idle fails on its first use, before any byte of
/// the answer arrives. That says nothing about the URL, so the request is re-sent on a fresh connection.
bool is_stale_connection_failure(const error_code& ec) {
    return ec == http::error::end_of_stream || ec == asio::error::connection_reset ||
           ec == asio::error::broken_pipe || ec == asio::error::eof || ec == asio::error::connection_aborted;
}

} // namespace

bool is_retryable(const error_code& ec) noexcept {
    return ec == error::connect_timeout || ec == error::request_timeout ||
           ec == asio::error::connection_refused || ec == asio::error::connection_reset ||
           ec == asio::error::connection_aborted || ec == asio::error::broken_pipe ||
           ec == asio::error::eof || ec == asio::error::timed_out || ec == asio::error::network_unreachable ||
           ec == asio::error::host_unreachable || ec == asio::error::network_down ||
           ec == asio::error::host_not_found_try_again || ec == http::error::end_of_stream ||
           ec == http::error::partial_message;
}

struct fetcher::impl {
    impl(asio::any_io_executor ex, fetch_config cfg, std::size_t max_idle)
        : executor(std::move(ex))
        , config(std::move(cfg))
        , max_idle_per_origin(max_idle) {
        if (config.user_agent.empty())
            config.user_agent = default_user_agent(config.contact_url);
    }

    asio::any_io_executor executor;
    fetch_config config;
    std::size_t max_idle_per_origin;
    std::unordered_map<std::string, std::vector<std::unique_ptr<connection>>> idle;
    std::unordered_map<std::string, tcp::resolver::results_type> resolved;
    fetcher_stats stats;

    /// A pooled connection that is still fresh enough to try, or nullptr.
    std::unique_ptr<connection> take_idle(const std::string& origin_key) {
        auto it = idle.find(origin_key);
        if (it == idle.end())
            return nullptr;
        auto& stack = it->second;
        while (!stack.empty()) {
            auto c = std::move(stack.back());
            stack.pop_back();
            if (clock_type::now() - c->idle_since < config.idle_timeout && c->stream.socket().is_open())
                return c;
        }
        return nullptr;
    }

    void give_back(const std::string& origin_key, std::unique_ptr<connection> c) {
        auto& stack = idle[origin_key];
        if (stack.size() >= max_idle_per_origin)
            return;
        c->idle_since = clock_type::now();
        stack.push_back(std::move(c));
    }

    /// Resolves (cached for the crawl: every connection to one host needs the same answer) and connects,
    /// both within connect_timeout.
    asio::awaitable<std::pair<error_code, std::unique_ptr<connection>>> connect(const request_target& t) {
        const auto deadline = clock_type::now() + config.connect_timeout;
        const std::string cache_key = t.host + ":" + t.port;
        auto cached = resolved.find(cache_key);
        tcp::resolver::results_type endpoints;
        if (cached != resolved.end()) {
            endpoints = cached->second;
        } else if (auto forced = config.host_overrides.find(t.host); forced != config.host_overrides.end()) {
            error_code ec;
            const auto address = asio::ip::make_address(forced->second, ec);
            if (ec)
                co_return std::pair{ec, nullptr};
            const auto port = static_cast<unsigned short>(std::stoul(t.port));
            endpoints = tcp::resolver::results_type::create(tcp::endpoint{address, port}, t.host, t.port);
        } else {
            tcp::resolver resolver{executor};
            asio::steady_timer watchdog{executor, deadline};
            bool timed_out = false;
            // The resolver has no deadline of its own; the watchdog cancels it.
            watchdog.async_wait([&](error_code ec) {
                if (!ec) {
                    timed_out = true;
                    resolver.cancel();
                }
            });
            auto [ec, results] = co_await resolver.async_resolve(t.host, t.port, use_tuple);
            watchdog.cancel();
            if (timed_out)
                co_return std::pair{error_code{error::connect_timeout}, nullptr};
            if (ec)
                co_return std::pair{ec, nullptr};
            endpoints = results;
            resolved.emplace(cache_key, results);
        }
        auto c = std::make_unique<connection>(executor);
        c->stream.expires_at(deadline);
        auto [ec, endpoint] = co_await c->stream.async_connect(endpoints, use_tuple);
        if (ec == beast::error::timeout)
            co_return std::pair{error_code{error::connect_timeout}, nullptr};
        if (ec)
            co_return std::pair{ec, nullptr};
        ++stats.connections_opened;
        c->stream.socket().set_option(tcp::no_delay{true});
        co_return std::pair{error_code{}, std::move(c)};
    }

    /// One request on one connection. `stale_ok` is set when the failure may be a closed pooled connection.
    asio::awaitable<fetch_result> exchange(connection& c, const request_target& t, bool& retry_fresh) {
        fetch_result result;
        http::request<http::empty_body> request{http::verb::get, t.target, 11};
        request.set(http::field::host, t.host_header);
        request.set(http::field::user_agent, config.user_agent);
        request.set(http::field::accept, "text/html,application/xhtml+xml,*/*;q=0.8");
        request.set(http::field::accept_encoding, "identity");
        request.keep_alive(true);

        c.stream.expires_after(config.request_timeout);
        auto [write_ec, written] = co_await http::async_write(c.stream, request, use_tuple);
        (void)written;
        if (write_ec) {
            retry_fresh = is_stale_connection_failure(write_ec);
            result.error = classify_read_error(write_ec);
            co_return result;
        }

        // Interim answers (100 Continue, 103 Early Hints) precede the real one on the same connection: skip
        // them, or the real response would stay in the buffer and be taken for the next URL's.
        std::optional<http::response_parser<http::string_body>> reading;
        error_code read_ec;
        for (int interim = 0;; ++interim) {
            reading.emplace();
            reading->body_limit(config.max_body_bytes);
            reading->header_limit(config.max_header_bytes);
            auto [ec, read] = co_await http::async_read(c.stream, c.buffer, *reading, use_tuple);
            (void)read;
            read_ec = ec;
            const auto status = reading->get().result_int();
            if (ec || status < 100 || status >= 200 || status == 101 || interim == max_interim_responses)
                break;
        }
        auto& parser = *reading;
        if (!read_ec && parser.get().result_int() / 100 == 1)
            read_ec = error::bad_response; // still interim after max_interim_responses
        if (parser.is_header_done()) {
            const auto& head = parser.get();
            result.status = static_cast<int>(head.result_int());
            if (auto it = head.find(http::field::content_type); it != head.end())
                result.content_type = std::string(it->value());
            if (auto it = head.find(http::field::location); it != head.end())
                result.location = std::string(it->value());
            if (auto it = head.find(http::field::retry_after); it != head.end())
                result.retry_after = std::string(it->value());
        }
        if (read_ec) {
            retry_fresh = !parser.got_some() && is_stale_connection_failure(read_ec);
            result.error = classify_read_error(read_ec);
            result.body_bytes = parser.get().body().size();
            co_return result;
        }
        result.body = std::move(parser.get().body());
        result.body_bytes = result.body.size();
        if (!parser.keep_alive())
            c.stream.socket().close();
        co_return result;
    }
};

fetcher::fetcher(asio::any_io_executor executor, fetch_config config, std::size_t max_idle_per_origin)
    : impl_(std::make_unique<impl>(std::move(executor), std::move(config), max_idle_per_origin)) {}

fetcher::~fetcher() = default;

const fetcher_stats& fetcher::stats() const noexcept {
    return impl_->stats;
}

void fetcher::close_idle() {
    impl_->idle.clear();
}

asio::awaitable<fetch_result> fetcher::fetch(boost::urls::url_view url, fetch_options options) {
    (void)options;
    fetch_result result;
    if (url.scheme_id() != boost::urls::scheme::http) {
        // TLS is not wired in yet: sending plain HTTP to an https port would only produce garbage errors.
        result.error = error::unsupported_scheme;
        co_return result;
    }
    const request_target target = make_target(url);
    for (;;) {
        auto conn = impl_->take_idle(target.origin_key);
        const bool reused = conn != nullptr;
        if (reused) {
            ++impl_->stats.connections_reused;
        } else {
            auto [ec, fresh] = co_await impl_->connect(target);
            if (ec) {
                result = fetch_result{};
                result.error = ec;
                co_return result;
            }
            conn = std::move(fresh);
        }
        bool retry_fresh = false;
        result = co_await impl_->exchange(*conn, target, retry_fresh);
        if (!result.error) {
            if (conn->stream.socket().is_open())
                impl_->give_back(target.origin_key, std::move(conn));
            co_return result;
        }
        if (!(reused && retry_fresh))
            co_return result;
        // The URL did nothing wrong: a pooled connection had gone stale. Send again on a fresh one.
        ++impl_->stats.stale_retries;
    }
}

} // namespace asiocrawl::detail
