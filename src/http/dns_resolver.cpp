// c-ares on the crawler's executor. c-ares tells us which of its sockets to watch (the socket state
// callback); each is adopted as a posix::stream_descriptor and waited on with async_wait, and what is ready
// is handed to ares_process_fd. One timer serves c-ares's own retransmission timeouts. Nothing here blocks:
// the only file reads (/etc/resolv.conf in ares_init_options, /etc/hosts) happen once, in the constructor.
//
// A caller waits for a lookup on a timer of its own set to its deadline; the lookup's completion cancels the
// timers of its waiters. Whichever comes first, the caller then looks at the lookup's state: there is no
// callback holding a reference to a frame that may be gone.
#include "http/dns_resolver.hpp"

#include "util/ascii.hpp"

#include <asiocrawl/error.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <ares.h>

#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <list>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unordered_map>

namespace asiocrawl::detail {

namespace asio = boost::asio;
using boost::system::error_code;
using clock_type = std::chrono::steady_clock;

namespace {

/// "ip", "ip:port", "[ipv6]" or "[ipv6]:port" into c-ares's server list syntax; nullopt when malformed.
std::optional<std::string> server_for_cares(std::string_view server) {
    std::string_view host = server;
    std::string_view port;
    if (server.starts_with('[')) {
        const auto close = server.find(']');
        if (close == std::string_view::npos)
            return std::nullopt;
        host = server.substr(1, close - 1);
        const auto rest = server.substr(close + 1);
        if (!rest.empty() && !rest.starts_with(':'))
            return std::nullopt;
        port = rest.empty() ? rest : rest.substr(1);
    } else if (const auto colon = server.find(':'); colon != std::string_view::npos) {
        if (server.find(':', colon + 1) != std::string_view::npos) {
            host = server; // a bare IPv6 address
        } else {
            host = server.substr(0, colon);
            port = server.substr(colon + 1);
        }
    }
    error_code ec;
    const auto address = asio::ip::make_address(std::string(host), ec);
    if (ec)
        return std::nullopt;
    if (server.find(':') != std::string_view::npos && port.empty() && !address.is_v6())
        return std::nullopt; // "1.2.3.4:" has a colon and no port
    if (!port.empty()) {
        if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string_view::npos ||
            std::stoul(std::string(port)) == 0 || std::stoul(std::string(port)) > 65535)
            return std::nullopt;
    }
    if (port.empty())
        return address.to_string(); // c-ares 1.18 takes "::1" but not "[::1]" without a port
    if (address.is_v6())
        return "[" + address.to_string() + "]:" + std::string(port);
    return address.to_string() + ":" + std::string(port);
}

/// /etc/hosts, read once: name -> addresses, in file order.
std::unordered_map<std::string, std::vector<asio::ip::address>> read_hosts_file(const char* path) {
    std::unordered_map<std::string, std::vector<asio::ip::address>> hosts;
    std::ifstream file(path);
    std::string line;
    while (std::getline(file, line)) {
        line = line.substr(0, line.find('#'));
        std::istringstream fields(line);
        std::string address_text, name;
        if (!(fields >> address_text))
            continue;
        error_code ec;
        const auto address = asio::ip::make_address(address_text, ec);
        if (ec)
            continue;
        while (fields >> name) {
            auto& list = hosts[ascii::to_lower(name)];
            if (std::find(list.begin(), list.end(), address) == list.end())
                list.push_back(address);
        }
    }
    return hosts;
}

void initialize_cares_once() {
    static std::once_flag once;
    std::call_once(once, [] { ares_library_init(ARES_LIB_INIT_ALL); });
}

} // namespace

struct dns_resolver::impl : std::enable_shared_from_this<impl> {
    /// One caller waiting for a lookup: its deadline timer lives in its own coroutine frame.
    struct waiter {
        asio::steady_timer* timer;
    };

    /// A name being looked up, shared by everyone who asked for it meanwhile.
    struct lookup {
        std::string name;
        bool done = false;
        error_code ec;
        std::vector<asio::ip::address> addresses;
        std::list<waiter*> waiters;
    };

    struct cache_entry {
        std::vector<asio::ip::address> addresses; // empty: the name has none (negative entry)
        clock_type::time_point expires;
    };

    /// A socket c-ares asked us to watch. Shared with the wait handlers, which may run after c-ares closed
    /// it.
    struct watched_socket {
        explicit watched_socket(const asio::any_io_executor& executor, ares_socket_t fd)
            : descriptor(executor, fd)
            , fd(fd) {}
        asio::posix::stream_descriptor descriptor;
        ares_socket_t fd;
        bool want_read = false;
        bool want_write = false;
        bool reading = false;
        bool writing = false;
        bool released = false;
    };

    /// What c-ares calls back with: the resolver may be gone by then (ares_destroy calls back too).
    struct callback_arg {
        std::weak_ptr<impl> resolver;
        std::shared_ptr<lookup> pending;
    };

    impl(asio::any_io_executor ex, dns_config cfg)
        : executor(std::move(ex))
        , config(std::move(cfg))
        , retransmit_timer(executor) {}

    ~impl() {
        if (channel)
            ares_destroy(channel); // calls back every lookup in flight with ARES_EDESTRUCTION
    }

    void start() {
        initialize_cares_once();
        ares_options options{};
        int mask =
            ARES_OPT_SOCK_STATE_CB | ARES_OPT_LOOKUPS | ARES_OPT_NDOTS | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES;
        // 2 s, then 4 s more per server: a lookup that takes longer has outlived every fetch waiting for it
        // (connect_timeout), and a retry of the URL asks again.
        options.timeout = 2000;
        options.tries = 2;
        options.sock_state_cb = &impl::on_socket_state;
        options.sock_state_cb_data = this;
        // DNS only: /etc/hosts was read here once, not at every lookup on the event loop.
        options.lookups = const_cast<char*>("b");
        // URLs hold fully qualified names: a resolv.conf "ndots:5" (Kubernetes) would send every one of them
        // through the search list first.
        options.ndots = 1;
        if (const int rc = ares_init_options(&channel, &options, mask); rc != ARES_SUCCESS)
            throw std::runtime_error(std::string("DNS resolver (c-ares): ") + ares_strerror(rc));
        if (!config.servers.empty()) {
            std::string csv;
            for (const auto& server : config.servers) {
                auto converted = server_for_cares(server);
                if (!converted)
                    throw std::invalid_argument("fetch.dns.servers: \"" + server +
                                                "\" is not an IP address with an optional port");
                csv += (csv.empty() ? "" : ",") + *converted;
            }
            if (const int rc = ares_set_servers_ports_csv(channel, csv.c_str()); rc != ARES_SUCCESS)
                throw std::invalid_argument("fetch.dns.servers: " + std::string(ares_strerror(rc)));
        }
        hosts = read_hosts_file("/etc/hosts");
    }

    asio::any_io_executor executor;
    dns_config config;
    ares_channel channel = nullptr;
    asio::steady_timer retransmit_timer;
    std::unordered_map<ares_socket_t, std::shared_ptr<watched_socket>> sockets;
    std::unordered_map<std::string, std::shared_ptr<lookup>> pending;
    std::unordered_map<std::string, cache_entry> cache;
    std::unordered_map<std::string, std::vector<asio::ip::address>> hosts;
    std::size_t inserts_since_sweep = 0;
    dns_stats stats;

    /// Ends every lookup in flight, so that nothing of ours keeps the executor busy.
    void cancel() {
        ares_cancel(channel); // calls back with ARES_ECANCELLED; c-ares then closes its idle sockets
        arm_retransmit_timer();
    }

    // ---- c-ares sockets and timeouts ----

    static void on_socket_state(void* data, ares_socket_t fd, int readable, int writable) {
        static_cast<impl*>(data)->socket_state(fd, readable != 0, writable != 0);
    }

    void socket_state(ares_socket_t fd, bool readable, bool writable) {
        auto it = sockets.find(fd);
        if (!readable && !writable) {
            // c-ares closes the socket right after this: let go of it without closing it.
            if (it != sockets.end()) {
                it->second->released = true;
                it->second->descriptor.release(); // pending waits complete with operation_aborted
                sockets.erase(it);
            }
            return;
        }
        if (it == sockets.end())
            it = sockets.emplace(fd, std::make_shared<watched_socket>(executor, fd)).first;
        auto socket = it->second;
        socket->want_read = readable;
        socket->want_write = writable;
        watch(socket);
    }

    void watch(const std::shared_ptr<watched_socket>& socket) {
        if (socket->released)
            return;
        if (socket->want_read && !socket->reading) {
            socket->reading = true;
            socket->descriptor.async_wait(asio::posix::stream_descriptor::wait_read,
                                          [self = weak_from_this(), socket](error_code ec) {
                                              socket->reading = false;
                                              auto resolver = self.lock();
                                              if (ec || socket->released || !resolver)
                                                  return;
                                              ares_process_fd(resolver->channel, socket->fd, ARES_SOCKET_BAD);
                                              resolver->after_cares_ran(socket);
                                          });
        }
        if (socket->want_write && !socket->writing) {
            socket->writing = true;
            socket->descriptor.async_wait(asio::posix::stream_descriptor::wait_write,
                                          [self = weak_from_this(), socket](error_code ec) {
                                              socket->writing = false;
                                              auto resolver = self.lock();
                                              if (ec || socket->released || !resolver)
                                                  return;
                                              ares_process_fd(resolver->channel, ARES_SOCKET_BAD, socket->fd);
                                              resolver->after_cares_ran(socket);
                                          });
        }
    }

    /// After c-ares processed a socket: wait on it again if it still wants that, and re-arm the timer.
    void after_cares_ran(const std::shared_ptr<watched_socket>& socket) {
        watch(socket);
        arm_retransmit_timer();
    }

    void arm_retransmit_timer() {
        timeval storage{};
        const timeval* next = ares_timeout(channel, nullptr, &storage);
        if (!next) {
            retransmit_timer.cancel();
            return;
        }
        retransmit_timer.expires_after(std::chrono::seconds(next->tv_sec) +
                                       std::chrono::microseconds(next->tv_usec));
        retransmit_timer.async_wait([self = weak_from_this()](error_code ec) {
            auto resolver = self.lock();
            if (ec || !resolver)
                return;
            ares_process_fd(resolver->channel, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
            resolver->arm_retransmit_timer();
        });
    }

    // ---- lookups ----

    std::shared_ptr<lookup> start_lookup(const std::string& name) {
        auto entry = std::make_shared<lookup>();
        entry->name = name;
        pending.emplace(name, entry);
        ++stats.lookups;
        ares_addrinfo_hints hints{};
        hints.ai_family = AF_UNSPEC; // A and AAAA, asked together
        hints.ai_socktype = SOCK_STREAM;
        auto* arg = new callback_arg{weak_from_this(), entry};
        // May call back before returning (a name c-ares rejects at once).
        ares_getaddrinfo(channel, name.c_str(), nullptr, &hints, &impl::on_addrinfo, arg);
        arm_retransmit_timer();
        return entry;
    }

    static void on_addrinfo(void* data, int status, int /*timeouts*/, ares_addrinfo* result) {
        std::unique_ptr<callback_arg> arg(static_cast<callback_arg*>(data));
        std::unique_ptr<ares_addrinfo, decltype(&ares_freeaddrinfo)> owned(result, &ares_freeaddrinfo);
        auto resolver = arg->resolver.lock();
        if (resolver && status != ARES_EDESTRUCTION)
            resolver->finish(*arg->pending, status, result);
        else
            finish_without_resolver(*arg->pending);
    }

    static void finish_without_resolver(lookup& entry) {
        entry.done = true;
        entry.ec = asio::error::operation_aborted;
        for (auto* w : entry.waiters)
            w->timer->cancel();
    }

    void finish(lookup& entry, int status, const ares_addrinfo* result) {
        std::chrono::seconds ttl = std::chrono::seconds::max();
        if (status == ARES_SUCCESS && result) {
            for (auto* node = result->nodes; node; node = node->ai_next) {
                if (node->ai_family == AF_INET) {
                    const auto* in = reinterpret_cast<const sockaddr_in*>(node->ai_addr);
                    asio::ip::address_v4::bytes_type bytes;
                    std::memcpy(bytes.data(), &in->sin_addr, 4);
                    entry.addresses.emplace_back(asio::ip::address_v4(bytes));
                } else if (node->ai_family == AF_INET6) {
                    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(node->ai_addr);
                    asio::ip::address_v6::bytes_type bytes;
                    std::memcpy(bytes.data(), &in6->sin6_addr, 16);
                    entry.addresses.emplace_back(asio::ip::address_v6(bytes, in6->sin6_scope_id));
                } else {
                    continue;
                }
                ttl = std::min(ttl, std::chrono::seconds(std::max(node->ai_ttl, 0)));
            }
            for (auto* cname = result->cnames; cname; cname = cname->next)
                ttl = std::min(ttl, std::chrono::seconds(std::max(cname->ttl, 0)));
        }
        const bool no_such_name = status == ARES_ENOTFOUND || status == ARES_ENODATA ||
                                  status == ARES_ENONAME || status == ARES_EBADNAME ||
                                  (status == ARES_SUCCESS && entry.addresses.empty());
        if (status == ARES_SUCCESS && !entry.addresses.empty()) {
            const auto kept = std::clamp<clock_type::duration>(ttl, config.min_ttl, config.max_ttl);
            remember(entry.name, {entry.addresses, clock_type::now() + kept});
        } else if (no_such_name) {
            entry.ec = asio::error::host_not_found;
            remember(entry.name, {{}, clock_type::now() + config.negative_ttl});
        } else if (status == ARES_ECANCELLED) {
            entry.ec = asio::error::operation_aborted;
        } else {
            entry.ec = asio::error::host_not_found_try_again;
        }
        entry.done = true;
        pending.erase(entry.name);
        for (auto* w : entry.waiters)
            w->timer->cancel();
    }

    void remember(const std::string& name, cache_entry entry) {
        // Expired entries go in sweeps whose cost is spread over as many inserts as the cache holds.
        if (++inserts_since_sweep > std::max<std::size_t>(1024, cache.size())) {
            inserts_since_sweep = 0;
            const auto now = clock_type::now();
            std::erase_if(cache, [now](const auto& item) { return item.second.expires <= now; });
        }
        cache.insert_or_assign(name, std::move(entry));
    }

    /// A cached answer or failure for `name`, if one is still fresh.
    const cache_entry* cached(const std::string& name) {
        auto it = cache.find(name);
        if (it == cache.end())
            return nullptr;
        if (it->second.expires <= clock_type::now()) {
            cache.erase(it);
            return nullptr;
        }
        return &it->second;
    }
};

dns_resolver::dns_resolver(asio::any_io_executor executor, const dns_config& config)
    : impl_(std::make_shared<impl>(std::move(executor), config)) {
    impl_->start();
}

dns_resolver::~dns_resolver() = default;

void dns_resolver::cancel() {
    impl_->cancel();
}

const dns_stats& dns_resolver::stats() const noexcept {
    return impl_->stats;
}

asio::awaitable<error_code> dns_resolver::resolve(std::string_view host, clock_type::time_point deadline,
                                                  std::vector<asio::ip::address>& addresses) {
    addresses.clear();
    {
        error_code literal_ec;
        const auto literal = asio::ip::make_address(std::string(host), literal_ec);
        if (!literal_ec) {
            addresses.push_back(literal);
            co_return error_code{};
        }
    }
    auto& self = *impl_;
    const std::string name = ascii::to_lower(host);
    if (auto it = self.hosts.find(name); it != self.hosts.end()) {
        ++self.stats.hosts_file;
        addresses = it->second;
        co_return error_code{};
    }
    if (name == "localhost" || name.ends_with(".localhost")) { // RFC 6761 6.3
        ++self.stats.hosts_file;
        addresses = {asio::ip::make_address("127.0.0.1"), asio::ip::make_address("::1")};
        co_return error_code{};
    }
    if (const auto* entry = self.cached(name)) {
        ++self.stats.cache_hits;
        addresses = entry->addresses;
        co_return addresses.empty() ? error_code(asio::error::host_not_found) : error_code{};
    }
    std::shared_ptr<impl::lookup> entry;
    if (auto it = self.pending.find(name); it != self.pending.end()) {
        ++self.stats.shared;
        entry = it->second;
    } else {
        entry = self.start_lookup(name);
    }
    if (!entry->done) {
        asio::steady_timer timer{self.executor, deadline};
        impl::waiter me{&timer};
        entry->waiters.push_back(&me);
        const auto position = std::prev(entry->waiters.end());
        auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::deferred));
        entry->waiters.erase(position);
        if (!entry->done)
            co_return ec == asio::error::operation_aborted ? error_code(asio::error::operation_aborted)
                                                           : error_code(error::connect_timeout);
    }
    if (entry->ec)
        co_return entry->ec;
    addresses = entry->addresses;
    co_return error_code{};
}

} // namespace asiocrawl::detail
