// What the engine fetches through: a handle that owns one transport (src/http/transport.hpp). Made from the
// crawl's fetch_config, it is the HTTP/1.1 transport (pooled keep-alive connections, timeouts, size limits,
// gzip and deflate decoding, an optional guard against private addresses); a test or a second protocol can
// hand it any other transport. It never follows redirects: a 3xx is an answer like any other, handed back to
// the crawler. docs/FETCHING.md describes the behavior in full.
#pragma once

#include "http/dns_resolver.hpp"
#include "http/fetch_result.hpp"
#include "http/hsts_transport.hpp"
#include "http/transport.hpp"

#include <asiocrawl/config.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/url/url_view.hpp>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace asiocrawl::detail {

class fetcher {
public:
    /// The HTTP/1.1 transport. `max_idle_per_origin` bounds the pool: more idle connections to one origin
    /// than workers can use are closed instead of kept.
    /// Throws boost::system::system_error when tls.ca_file cannot be loaded, std::invalid_argument when a
    /// proxy, header or credential setting is invalid or cookies.load_file or an HSTS file cannot be read
    /// (before the crawl: the files are read here), std::runtime_error when the DNS resolver cannot start.
    /// With fetch.hsts.enabled, HSTS sits in front of it (src/http/hsts_transport.hpp): known hosts are read
    /// from fetch.hsts.file and `hsts`'s load files, and written to fetch.hsts.file and `hsts`'s save files
    /// at finish() (a crawl's state dir is one of those).
    fetcher(boost::asio::any_io_executor executor, fetch_config config, std::size_t max_idle_per_origin,
            hsts_files hsts = {});
    /// Any other transport (not null).
    explicit fetcher(std::unique_ptr<transport> transport);
    ~fetcher();
    fetcher(const fetcher&) = delete;
    fetcher& operator=(const fetcher&) = delete;

    /// One attempt to GET `url` (an http or https URL in normalized form). Retrying is the caller's policy;
    /// the only re-send done here is on a fresh connection when a pooled one turns out to have been closed by
    /// the server while idle (that costs the URL nothing). Never throws for network or protocol failures:
    /// they come back in fetch_result::error.
    boost::asio::awaitable<fetch_result> fetch(boost::urls::url_view url, fetch_options options = {});

    /// The same attempt, for a caller that keeps thousands of fetches waiting at once (the crawler): while
    /// it waits for the server, a fetch holds no fetch_result, parser or read buffer, and `out` is allocated
    /// only when the response starts arriving or the attempt fails (transport::fetch_into). `url` is an http
    /// or https URL in normalized form and must stay valid until the operation completes.
    boost::asio::awaitable<void> fetch_into(std::string_view url, fetch_options options,
                                            std::unique_ptr<fetch_result>& out) {
        return transport_->fetch_into(url, options, out); // no frame of its own
    }

    /// Closes every idle pooled connection (TLS ones get a close_notify when the socket takes it at once) and
    /// ends the DNS lookups still in flight, so that the fetcher keeps no work pending on the executor.
    /// Fetches in flight are not affected.
    void close_idle() { transport_->close_idle(); }

    /// The end of a crawl: close_idle(), then the cookie jar is written to fetch.cookies.save_file when one
    /// is set. Returns what went wrong (for the log); empty when all went well.
    std::vector<std::string> finish() { return transport_->finish(); }

    const fetcher_stats& stats() const noexcept { return transport_->stats(); }
    /// The resolver's counters.
    const dns_stats& dns() const noexcept { return transport_->dns(); }
    /// Cookies in the jar (0 with cookies off).
    std::size_t cookies() const noexcept { return transport_->cookies(); }

    /// HSTS's known hosts, when HSTS is on (else null).
    const hsts_transport* hsts() const noexcept {
        return dynamic_cast<const hsts_transport*>(transport_.get());
    }

private:
    std::unique_ptr<transport> transport_;
};

} // namespace asiocrawl::detail
