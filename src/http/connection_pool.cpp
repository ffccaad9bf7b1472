#include "http/connection_pool.hpp"

#include "http/socket_waits.hpp"
#include "url/url_host.hpp"
#include "util/ascii.hpp"

#include <boost/asio/error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>

#include <algorithm>
#include <cerrno>

namespace asiocrawl::detail {

namespace asio = boost::asio;
using boost::system::error_code;
using tcp = asio::ip::tcp;

namespace {

/// While every descriptor of the process is in use, a connect waits this long at first before it tries
/// again, doubling up to the most below.
constexpr std::chrono::milliseconds first_descriptor_wait{5};
constexpr std::chrono::milliseconds longest_descriptor_wait{200};

bool is_https(boost::urls::url_view url) {
    return ascii::iequals(url.scheme(), "https");
}

std::string_view port_of(boost::urls::url_view url) {
    return url.has_port() && !url.port().empty() ? url.port() : (is_https(url) ? "443" : "80");
}

bool out_of_descriptors(const error_code& ec) noexcept {
    return ec.category() == asio::error::get_system_category() &&
           (ec.value() == EMFILE || ec.value() == ENFILE);
}

} // namespace

std::optional<request_target> target_of(std::string_view url_text) {
    const auto parsed = boost::urls::parse_uri(url_text);
    if (!parsed)
        return std::nullopt;
    const boost::urls::url_view url = *parsed;
    const std::string_view host = url.encoded_host_address();
    if (host.empty())
        return std::nullopt;
    request_target t;
    t.https = is_https(url);
    t.host = host_for_wire(host);
    t.port = std::string(port_of(url));
    return t;
}

std::string pool_key(std::string_view url_text) {
    const auto parsed = boost::urls::parse_uri(url_text);
    if (!parsed)
        return {};
    const boost::urls::url_view url = *parsed;
    if (!url.has_authority() || !(ascii::iequals(url.scheme(), "http") || is_https(url)))
        return {};
    const std::string_view scheme = url.scheme();
    const std::string_view host = url.encoded_host_address();
    const std::string_view port = port_of(url);
    std::string key;
    key.reserve(scheme.size() + 4 + host.size() + port.size());
    key.append(scheme).append("://").append(host).append(":").append(port);
    return key;
}

connection_pool::connection_pool(asio::any_io_executor executor, clock_type::duration idle_timeout,
                                 std::size_t max_idle_per_origin, fetcher_stats& stats)
    : executor_(std::move(executor))
    , idle_timeout_(idle_timeout)
    , max_idle_per_origin_(max_idle_per_origin)
    , stats_(stats) {}

std::unique_ptr<connection> connection_pool::take(const std::string& origin_key) {
    auto it = idle_.find(origin_key);
    if (it == idle_.end())
        return nullptr;
    auto& stack = it->second;
    while (!stack.empty()) {
        auto c = std::move(stack.back());
        stack.pop_back();
        if (clock_type::now() < c->reuse_until) {
            const bool quiet = c->is_quiet();
            c->release_tls_buffers();
            if (quiet)
                return c;
            ++stats_.idle_connections_dropped;
        }
        retire(std::move(c));
    }
    return nullptr;
}

void connection_pool::give_back(const std::string& origin_key, std::unique_ptr<connection> c,
                                std::optional<std::chrono::seconds> server_keeps_idle) {
    auto& stack = idle_[origin_key];
    clock_type::duration window = idle_timeout_;
    if (server_keeps_idle) {
        const clock_type::duration hint = *server_keeps_idle;
        window =
            std::min(window, hint >= std::chrono::seconds{2} ? hint - std::chrono::seconds{1} : hint / 2);
    }
    if (stack.size() >= max_idle_per_origin_ || window <= clock_type::duration::zero()) {
        retire(std::move(c));
        return;
    }
    c->reuse_until = clock_type::now() + window;
    c->buffer.shrink_to_fit(); // empty (nothing unasked-for is pooled): the storage goes
    c->release_tls_buffers();
    stack.push_back(std::move(c));
}

void connection_pool::close_all() {
    for (auto& [origin, stack] : idle_)
        for (auto& c : stack)
            retire(std::move(c));
    idle_.clear();
}

bool connection_pool::drop_one() {
    for (auto it = idle_.begin(); it != idle_.end(); ++it) {
        if (it->second.empty())
            continue;
        retire(std::move(it->second.front()));
        it->second.erase(it->second.begin());
        return true;
    }
    return false;
}

asio::awaitable<error_code> connection_pool::open_socket(connection& c, const tcp& protocol,
                                                         clock_type::time_point& deadline,
                                                         clock_type::duration connect_timeout) {
    auto pause = first_descriptor_wait;
    clock_type::duration waited_alone{};
    for (;;) {
        error_code ec;
        c.socket.open(protocol, ec);
        if (!out_of_descriptors(ec))
            co_return ec;
        ++stats_.descriptor_waits;
        if (drop_one())
            continue;
        const bool alone = live_ <= 1; // this one
        if (alone && waited_alone >= connect_timeout)
            co_return ec;
        asio::steady_timer timer{executor_, pause};
        if (auto [cancelled] = co_await timer.async_wait(tuple_deferred); cancelled)
            co_return cancelled; // the crawl is stopping
        deadline += pause;
        if (alone)
            waited_alone += pause;
        pause = std::min<std::chrono::milliseconds>(pause * 2, longest_descriptor_wait);
    }
}

} // namespace asiocrawl::detail
