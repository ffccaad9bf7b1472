// The control API (docs/CONTROL.md): JSON over HTTP to steer a running crawl through the crawler's own
// methods (pause_host, set_host_limits, add_seeds, stop...). Sans-io: handle() takes a request and gives the
// answer; metrics_server::set_handler puts it on the /metrics listener.
#pragma once

#include <asiocrawl/crawler.hpp>
#include <asiocrawl/outputs/metrics.hpp>
#include <asiocrawl/sink.hpp>

#include <string>
#include <string_view>

namespace asiocrawl::outputs {

/// Routes /api/... requests to a crawler. Call handle() on the crawler's executor (the listener runs there).
///
/// - Authentication: with a token, every request must carry `Authorization: Bearer TOKEN` (else 401, compared
///   in constant time); without one, none is asked (a loopback listener only: see needs_token()).
/// - Every call that changes something is logged through `log` (info), with the caller's address.
/// - Errors are JSON too: {"error": "..."} with 400, 401, 404, 405 or 409.
class control_api {
public:
    control_api(crawler& crawl, std::string token, logger log);

    listener_response handle(const listener_request& request);

private:
    listener_response route(const listener_request& request);

    crawler& crawl_;
    std::string token_;
    logger log_;
};

/// True when a listener on `host_port` ("HOST:PORT", "[v6]:PORT") is reachable from other machines: anything
/// but a loopback address or "localhost". A control API there must have a token.
bool needs_token(std::string_view host_port);

/// Compares in time that depends on the lengths only, not on where the first difference is.
bool constant_time_equal(std::string_view a, std::string_view b) noexcept;

} // namespace asiocrawl::outputs
