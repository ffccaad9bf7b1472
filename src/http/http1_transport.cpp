// One attempt over HTTP/1.1: a connection from the pool or a new one (resolve, connect, tunnel, handshake,
// all within connect_timeout), the request, the answer (within request_timeout), and the connection back to
// the pool when its framing allows. A fetch waiting for its answer holds no buffer, parser or result (see
// fetch_into): what thousands of waiting fetches cost is their sockets and small frames.

#include "http/http1_transport.hpp"

#include "policy/address_policy.hpp"

#include <asiocrawl/error.hpp>

#include <boost/asio/error.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/error.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <tuple>

namespace asiocrawl::detail {

namespace asio = boost::asio;
namespace beast = boost::beast;
using boost::system::error_code;
using tcp = asio::ip::tcp;

namespace {

std::vector<tcp::endpoint> with_port(const std::vector<asio::ip::address>& addresses,
                                     const std::string& port) {
    const auto number = static_cast<unsigned short>(std::stoul(port));
    std::vector<tcp::endpoint> endpoints;
    endpoints.reserve(addresses.size());
    for (const auto& a : addresses)
        endpoints.emplace_back(a, number);
    return endpoints;
}

} // namespace

http1_transport::http1_transport(asio::any_io_executor executor, fetch_config config,
                                 std::size_t max_idle_per_origin)
    : executor_(std::move(executor))
    , config_(std::move(config))
    , limiter_(config_.limit_rate > 0
                   ? std::optional<rate_limiter>(std::in_place, config_.limit_rate,
                                                 std::max<std::uint64_t>(read_chunk, config_.limit_rate / 10))
                   : std::nullopt)
    , jar_(config_.cookies.enabled ? std::optional<cookie_jar>(std::in_place) : std::nullopt)
    , tls_(executor_, config_.tls)
    , resolver_(executor_, config_.dns)
    , writer_(config_, jar_ ? &*jar_ : nullptr)
    , proxies_(config_)
    , reader_(config_, jar_ ? &*jar_ : nullptr, limiter_ ? &*limiter_ : nullptr)
    , pool_(executor_, config_.idle_timeout, max_idle_per_origin, stats_)
    , waits_(executor_) {
    if (jar_ && !config_.cookies.load_file.empty())
        load_cookies();
}

/// Read once, before the crawl: never on the event loop while fetches are waiting.
void http1_transport::load_cookies() {
    std::ifstream file(config_.cookies.load_file, std::ios::binary);
    if (!file)
        throw std::invalid_argument("fetch.cookies.load_file: cannot read " + config_.cookies.load_file);
    std::ostringstream text;
    text << file.rdbuf();
    jar_->load_netscape(text.str(), std::chrono::system_clock::now());
}

std::vector<std::string> http1_transport::save_cookies() const {
    if (!jar_ || config_.cookies.save_file.empty())
        return {};
    const std::string temporary = config_.cookies.save_file + ".tmp";
    {
        std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
        file << jar_->to_netscape(std::chrono::system_clock::now());
        file.flush();
        if (!file)
            return {"fetch.cookies.save_file: cannot write " + temporary};
    }
    if (std::rename(temporary.c_str(), config_.cookies.save_file.c_str()) != 0)
        return {"fetch.cookies.save_file: cannot write " + config_.cookies.save_file};
    return {};
}

void http1_transport::close_idle() {
    pool_.close_all();
    resolver_.cancel();
}

std::vector<std::string> http1_transport::finish() {
    close_idle();
    return save_cookies();
}

/// The endpoints to connect to for `t`, by `deadline`: the proxy's when `via` is set, else the host's from
/// host_overrides or DNS, after the address policy (none left: forbidden_address). Through a proxy, the
/// policy still checks the URL's host: it is resolved here too, and the proxy itself is trusted.
asio::awaitable<error_code> http1_transport::endpoints_for(const request_target& t, const proxy_endpoint* via,
                                                           clock_type::time_point deadline,
                                                           std::vector<tcp::endpoint>& endpoints) {
    const auto allowed = [this](std::vector<tcp::endpoint> found) {
        if (config_.refuse_private_addresses)
            std::erase_if(found, [](const tcp::endpoint& e) { return is_refused_address(e.address()); });
        return found;
    };
    if (auto forced = config_.host_overrides.find(t.host); forced != config_.host_overrides.end()) {
        error_code ec;
        const auto address = asio::ip::make_address(forced->second, ec);
        if (ec)
            co_return ec;
        endpoints = allowed(with_port({address}, t.port));
        co_return endpoints.empty() ? error_code(error::forbidden_address) : error_code{};
    }
    std::vector<asio::ip::address> addresses;
    if (!via || config_.refuse_private_addresses) {
        if (const error_code ec = co_await resolver_.resolve(t.host, deadline, addresses))
            co_return ec;
        endpoints = allowed(with_port(addresses, t.port));
        if (endpoints.empty())
            co_return error::forbidden_address;
        if (!via)
            co_return error_code{};
    }
    if (const error_code ec = co_await resolver_.resolve(via->host, deadline, addresses))
        co_return ec;
    endpoints = with_port(addresses, via->port);
    co_return error_code{};
}

/// Resolves, connects and (for https) tunnels and shakes hands, all within connect_timeout. On failure,
/// nullptr and `out` says why. Every fetch of a burst is here at once: DNS, the tunnel and the handshake have
/// coroutines of their own, so that this frame stays small.
asio::awaitable<std::unique_ptr<connection>>
http1_transport::connect(std::string_view url, std::unique_ptr<fetch_result>& out, std::string_view alpn) {
    auto deadline = clock_type::now() + config_.connect_timeout;
    const auto target = target_of(url);
    if (!target) {
        out = failed_fetch(error::invalid_url);
        co_return nullptr;
    }
    const proxy_endpoint* via = proxies_.route_for(*target);
    std::vector<tcp::endpoint> endpoints;
    error_code ec = co_await endpoints_for(*target, via, deadline, endpoints);
    if (ec) {
        out = failed_fetch(ec);
        co_return nullptr;
    }
    auto c = pool_.make_connection();
    for (const auto& endpoint : endpoints) {
        ec = co_await pool_.open_socket(*c, endpoint.protocol(), deadline, config_.connect_timeout);
        if (ec)
            break;
        // On the socket itself, under the transport's deadline timer, so that a burst of connects holds no
        // timer wait each.
        c->deadline = deadline;
        waits_.watch(*c);
        std::tie(ec) = co_await exactly_allocated<void(error_code)>(
            [&](auto handler) { c->socket.async_connect(endpoint, std::move(handler)); });
        waits_.unwatch(*c);
        if (c->timed_out)
            ec = beast::error::timeout;
        if (!ec) {
            c->remote_ip = endpoint.address().to_string();
            break;
        }
        error_code ignored;
        c->socket.close(ignored);
        if (ec == beast::error::timeout)
            break;
    }
    if (ec) {
        out = failed_fetch(ec == beast::error::timeout ? error_code(error::connect_timeout) : ec,
                           via ? "while connecting to proxy " + via->display : std::string{});
        co_return nullptr;
    }
    ++stats_.connections_opened;
    c->socket.set_option(tcp::no_delay{true}, ec);
    c->socket.non_blocking(true, ec);
    if (ec) {
        out = failed_fetch(ec);
        co_return nullptr;
    }
    if (via && target->https && !co_await open_tunnel(*c, *target, *via, writer_.user_agent(), waits_, out))
        co_return nullptr;
    if (target->https && !co_await tls_.handshake(*c, target->host, waits_, out, alpn))
        co_return nullptr;
    if (via && !target->https)
        c->http_proxy = via;
    co_return c;
}

/// Writes the request of `url` (conditional when `options` carries validators) within the request deadline
/// (which also covers reading the answer). The bytes go once written, unless captured in `out` (without the
/// proxy's credentials).
asio::awaitable<error_code> http1_transport::send(connection& c, std::string_view url,
                                                  const std::string& origin, const fetch_options& options,
                                                  std::unique_ptr<fetch_result>& out) {
    std::pair<std::size_t, std::size_t> proxy_fields;
    std::string request =
        writer_.request(url, origin, c.http_proxy, proxy_fields,
                        {options.if_none_match, options.if_modified_since, options.extra_fields});
    c.deadline = clock_type::now() + config_.request_timeout;
    c.request_started = std::chrono::system_clock::now();
    const error_code ec = co_await waits_.write_all(c, request);
    if (options.capture) {
        request.erase(proxy_fields.first, proxy_fields.second);
        result_of(out, c).raw_request = std::move(request);
    }
    co_return ec;
}

/// Waits out the rate limit (fetch_config::limit_rate) in a frame of its own, so that a fetch waiting for its
/// server carries no timer. The wait is ours, not the server's: the request's deadline moves.
asio::awaitable<void> http1_transport::throttle(connection& c, reading& r) {
    const auto wait = std::exchange(r.throttle, clock_type::duration::zero());
    c.deadline += wait;
    asio::steady_timer timer{executor_, wait};
    co_await timer.async_wait(tuple_deferred);
}

/// Thousands of these wait at once, so this frame is what a fetch costs while it waits, and it is kept small:
/// one coroutine for the whole exchange, no fetch_result, parser or read buffer while waiting (the wait is on
/// the socket; those exist only while bytes are being parsed), no request bytes once sent. Interim answers
/// (100 Continue, 103 Early Hints) precede the real one on the same connection: they are skipped, or the real
/// response would stay in the buffer and be taken for the next URL's.
asio::awaitable<void> http1_transport::fetch_on(std::unique_ptr<connection> fresh, std::string_view url,
                                                fetch_options options, std::unique_ptr<fetch_result>& out) {
    out.reset();
    const std::string origin_key = pool_key(url);
    if (origin_key.empty()) {
        out = failed_fetch(error::unsupported_scheme);
        co_return;
    }
    for (;;) {
        const bool handed = fresh != nullptr;
        auto conn = handed ? std::move(fresh) : pool_.take(origin_key);
        const bool reused = conn != nullptr && !handed;
        if (reused) {
            ++stats_.connections_reused;
        } else if (!handed) {
            conn = co_await connect(url, out);
            if (!conn)
                co_return;
        }
        out.reset();
        auto& c = *conn;
        bool retry_fresh = false;
        bool reusable = false;
        std::optional<std::chrono::seconds> server_keeps_idle;
        error_code ec = co_await send(c, url, origin_key, options, out);
        if (ec) {
            retry_fresh = is_stale_connection_failure(ec);
            result_of(out, c).error = classify_read_error(ec);
        } else {
            reading r;
            while (!reader_.parse(c, r, url, options, out)) {
                ec = {};
                if (!c.has_pending() && !r.read_on) {
                    c.release_tls_buffers();
                    waits_.watch(c);
                    std::tie(ec) = co_await exactly_allocated<void(error_code)>([&c](auto handler) {
                        c.socket.async_wait(c.read_wants_write ? tcp::socket::wait_write
                                                               : tcp::socket::wait_read,
                                            std::move(handler));
                    });
                    waits_.unwatch(c);
                    if (c.timed_out)
                        ec = beast::error::timeout;
                }
                if (reader_.take_in(c, r, ec))
                    break;
                if (r.throttle > clock_type::duration::zero())
                    co_await throttle(c, r);
            }
            reader_.conclude(r, options, result_of(out, c), retry_fresh, reusable);
            server_keeps_idle = r.server_keeps_idle;
        }
        if (!out->error) {
            // We never pipeline: bytes already waiting after a complete response are not an answer to
            // anything we asked (a body longer than its Content-Length), and would be read as the next URL's
            // response.
            if (reusable && c.buffer.size() == 0 && !c.has_pending())
                pool_.give_back(origin_key, std::move(conn), server_keeps_idle);
            else
                retire(std::move(conn));
            co_return;
        }
        if (!(reused && retry_fresh))
            co_return;
        // The URL did nothing wrong: a pooled connection had gone stale. Send again on a fresh one.
        ++stats_.stale_retries;
    }
}

} // namespace asiocrawl::detail
