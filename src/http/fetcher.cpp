#include "http/fetcher.hpp"

#include "http/hsts_transport.hpp"
#include "http/http1_transport.hpp"
#include "http/http2_transport.hpp"

#include <asiocrawl/error.hpp>

#include <boost/asio/error.hpp>
#include <boost/beast/http/error.hpp>

#include <stdexcept>
#include <utility>

namespace asiocrawl::detail {
namespace {

/// Owns its URL: the caller's url_view may be a temporary.
boost::asio::awaitable<fetch_result> fetch_whole(transport& t, std::string url, fetch_options options) {
    std::unique_ptr<fetch_result> out;
    co_await t.fetch_into(url, options, out);
    co_return std::move(*out);
}

} // namespace

fetcher::fetcher(boost::asio::any_io_executor executor, fetch_config config, std::size_t max_idle_per_origin,
                 hsts_files hsts) {
    const bool hsts_on = config.hsts.enabled;
    const bool trust_headers = !config.tls.insecure;
    if (hsts_on && !config.hsts.file.empty()) {
        hsts.load.push_back(config.hsts.file);
        hsts.save.push_back(config.hsts.file);
    }
    if (config.http2 == http2_mode::off)
        transport_ =
            std::make_unique<http1_transport>(std::move(executor), std::move(config), max_idle_per_origin);
    else
        transport_ =
            std::make_unique<http2_transport>(std::move(executor), std::move(config), max_idle_per_origin);
    if (hsts_on)
        transport_ = std::make_unique<hsts_transport>(std::move(transport_), std::move(hsts), trust_headers);
}

fetcher::fetcher(std::unique_ptr<transport> transport)
    : transport_(std::move(transport)) {
    if (!transport_)
        throw std::invalid_argument("fetcher: no transport");
}

fetcher::~fetcher() = default;

bool is_retryable(const boost::system::error_code& ec) noexcept {
    namespace asio = boost::asio;
    namespace http = boost::beast::http;
    return ec == error::connect_timeout || ec == error::request_timeout ||
           ec == asio::error::connection_refused || ec == asio::error::connection_reset ||
           ec == asio::error::connection_aborted || ec == asio::error::broken_pipe ||
           ec == asio::error::eof || ec == asio::error::timed_out || ec == asio::error::network_unreachable ||
           ec == asio::error::host_unreachable || ec == asio::error::network_down ||
           ec == asio::error::host_not_found_try_again || ec == http::error::end_of_stream ||
           ec == asio::error::no_descriptors || ec == asio::error::no_buffer_space ||
           ec == http::error::partial_message;
}

boost::asio::awaitable<fetch_result> fetcher::fetch(boost::urls::url_view url, fetch_options options) {
    return fetch_whole(*transport_, std::string(url.buffer()), options);
}

} // namespace asiocrawl::detail
