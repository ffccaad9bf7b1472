// Prometheus metrics: a sans-io registry fed by records and rendered with a live snapshot, and a small HTTP
// server on the crawler's io_context that serves it on /metrics (text exposition format 0.0.4) and /healthz.
#pragma once

#include <asiocrawl/record.hpp>
#include <asiocrawl/sink.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace asiocrawl::outputs {

/// Counters and a latency histogram built from records. Not thread-safe: feed and render it on the
/// crawler's executor (the metrics server runs there too).
class metrics_registry {
public:
    /// Upper bounds of the fetch-latency histogram, in seconds (+Inf is implied).
    static constexpr std::array<double, 12> latency_buckets{0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                            0.5,   1,    2.5,   5,    10,  30};

    /// Counts one record (use as, or call from, the crawler's record sink).
    void observe(const record& r);

    /// The exposition text. Gauges (queue, in flight, hosts) come from `live`; without one they are left out.
    std::string render(const crawl_progress* live) const;

private:
    std::uint64_t records_ = 0;
    std::uint64_t pages_ = 0;
    std::uint64_t redirects_ = 0;
    std::uint64_t body_bytes_ = 0;
    std::uint64_t robots_denied_ = 0;
    std::uint64_t type_rejected_ = 0;
    std::uint64_t retries_ = 0;
    std::map<std::string, std::uint64_t> responses_by_class_;
    std::map<std::string, std::uint64_t, std::less<>> failures_by_kind_;
    std::array<std::uint64_t, latency_buckets.size()> latency_counts_{};
    std::uint64_t latency_count_ = 0;
    double latency_sum_seconds_ = 0;
};

/// Parses "host:port" or "[v6]:port" into an endpoint. Throws std::invalid_argument naming the problem.
boost::asio::ip::tcp::endpoint parse_listen_address(std::string_view host_port);

/// One request to the listener's other paths (the control API, /api/...), read whole and bounded.
struct listener_request {
    std::string_view method; ///< "GET", "POST"...
    std::string_view target; ///< path and query, as sent
    std::string_view authorization;
    std::string_view body;
    std::string peer;               ///< the caller's address, for the log
    std::string_view if_none_match; ///< an If-None-Match field (the dashboard's static files)
};
/// What to answer to a listener_request.
struct listener_response {
    unsigned status = 200;
    std::string content_type = "application/json";
    std::string body;
    std::string allow;            ///< an Allow field (405)
    std::string www_authenticate; ///< a WWW-Authenticate field (401)
    std::string cache_control = "no-store";
    /// More header fields (ETag, Content-Security-Policy... on the dashboard's files).
    std::vector<std::pair<std::string, std::string>> fields;
};
using listener_handler = std::function<listener_response(const listener_request&)>;

/// GET /metrics -> the text from `render`; GET /healthz -> "ok"; anything else 404. HTTP/1.1 keep-alive.
/// Runs on one executor (the crawler's: rendering reads crawl state without locks). Call members there.
class metrics_server {
public:
    /// Binds `listen` at once (port 0: an ephemeral port). Throws boost::system::system_error when it
    /// cannot bind, std::invalid_argument when the address does not parse.
    metrics_server(boost::asio::any_io_executor executor, std::string_view listen,
                   std::function<std::string()> render);
    /// Stops (see stop()).
    ~metrics_server();
    metrics_server(const metrics_server&) = delete;
    metrics_server& operator=(const metrics_server&) = delete;

    boost::asio::ip::tcp::endpoint local_endpoint() const;

    /// Requests under /api/ go to `handler` (the control API, docs/CONTROL.md): any method, a head of at
    /// most 8 KiB, a body of at most `max_body` bytes (413 past it), all of it within 10 s. Without one they
    /// get 404. So do GET and HEAD of `/` and `/dashboard/...` (the dashboard's static files). Set before
    /// start().
    void set_handler(listener_handler handler, std::size_t max_body = 1u << 20);

    /// Starts accepting.
    void start();
    /// Closes the acceptor and the open connections, so the io_context can run out of work. Idempotent.
    void stop();

private:
    struct state;
    static boost::asio::awaitable<void> accept_loop(std::shared_ptr<state> s);
    static boost::asio::awaitable<void> serve(std::shared_ptr<state> s, boost::asio::ip::tcp::socket socket);
    std::shared_ptr<state> state_;
};

} // namespace asiocrawl::outputs
