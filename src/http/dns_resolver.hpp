// Name resolution for the fetcher: c-ares driven by the crawler's own executor. c-ares's sockets are watched
// through Asio (no thread per lookup, no blocking call), identical names in flight share one lookup, answers
// are cached for their TTL (clamped to the configured bounds) and "no such name" for the negative TTL, A and
// AAAA are asked together. Every caller waits under its own deadline; a lookup that outlives one caller's
// deadline goes on for the others and for the cache.
#pragma once

#include <asiocrawl/config.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string_view>
#include <vector>

namespace asiocrawl::detail {

/// Counters a benchmark or test can read.
struct dns_stats {
    std::size_t lookups = 0;    ///< names sent to c-ares (each asks A and AAAA)
    std::size_t cache_hits = 0; ///< answers (or cached failures) served from the cache
    std::size_t shared = 0;     ///< callers that joined a lookup already in flight
    std::size_t hosts_file = 0; ///< answers from /etc/hosts (read once, at construction) or localhost
};

class dns_resolver {
public:
    /// Reads /etc/resolv.conf (unless `config.servers` names the servers) and /etc/hosts once, here.
    /// Throws std::invalid_argument when a server is not an "ip", "ip:port" or "[ipv6]:port", and
    /// std::runtime_error when c-ares cannot start.
    dns_resolver(boost::asio::any_io_executor executor, const dns_config& config);
    /// Lookups in flight end (their callers' waits complete with operation_aborted).
    ~dns_resolver();
    dns_resolver(const dns_resolver&) = delete;
    dns_resolver& operator=(const dns_resolver&) = delete;

    /// The addresses of `host` (an ASCII name, or an IP literal without brackets), by `deadline`:
    /// error::connect_timeout when the deadline passes first, asio::error::host_not_found when the name does
    /// not exist or has no address, host_not_found_try_again for a temporary failure (timeout, SERVFAIL,
    /// refused), operation_aborted when the caller's wait is cancelled. Never throws for these.
    boost::asio::awaitable<boost::system::error_code>
    resolve(std::string_view host, std::chrono::steady_clock::time_point deadline,
            std::vector<boost::asio::ip::address>& addresses);

    /// Ends the lookups in flight (their callers get operation_aborted), so that the resolver keeps no
    /// work pending on the executor: at the end of a crawl. Cached answers stay.
    void cancel();

    const dns_stats& stats() const noexcept;

private:
    struct impl;
    std::shared_ptr<impl> impl_;
};

} // namespace asiocrawl::detail
