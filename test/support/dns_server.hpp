// A DNS server on 127.0.0.1 (UDP) for tests and benchmarks: answers A and AAAA questions from a zone function
// with chosen addresses, TTL, delay and response code, and counts the questions it got per name and type.
// Each answer is sent by a coroutine of its own, so delayed answers overlap as a real resolver's do.
// Single-threaded: run it on one executor and read its counters there (or after that executor stopped).
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/udp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace asiocrawl::test {

struct dns_answer {
    std::vector<std::string> ipv4;
    std::vector<std::string> ipv6;
    std::uint32_t ttl = 300;
    std::chrono::milliseconds delay{0};
    /// 0 NOERROR, 2 SERVFAIL, 3 NXDOMAIN, 5 REFUSED. With 0 and no address of the asked type: NODATA.
    int rcode = 0;
    /// Never answer (the client times out).
    bool drop = false;
};

/// What the server answers for a name (lowercase, no trailing dot); nullopt: NXDOMAIN.
using dns_zone = std::function<std::optional<dns_answer>(const std::string& name)>;

class dns_server {
public:
    static constexpr std::uint16_t type_a = 1;
    static constexpr std::uint16_t type_aaaa = 28;

    dns_server(boost::asio::any_io_executor executor, dns_zone zone)
        : state_(std::make_shared<state>(executor, std::move(zone))) {
        boost::asio::co_spawn(executor, serve(state_), boost::asio::detached);
    }
    ~dns_server() { stop(); }
    dns_server(const dns_server&) = delete;
    dns_server& operator=(const dns_server&) = delete;

    unsigned short port() const { return state_->port; }
    /// "127.0.0.1:<port>", for fetch_config::dns.servers.
    std::string address() const { return "127.0.0.1:" + std::to_string(port()); }

    /// Questions received for `name` of `type` (type_a or type_aaaa).
    std::size_t queries(const std::string& name, std::uint16_t type) const {
        auto it = state_->counts.find({name, type});
        return it == state_->counts.end() ? 0 : it->second;
    }
    std::size_t total_queries() const { return state_->total; }
    /// Every (name, type) asked, with its count.
    const std::map<std::pair<std::string, std::uint16_t>, std::size_t>& counts() const {
        return state_->counts;
    }

    /// Closes the socket and cancels the delayed answers, so that the executor runs out of work.
    void stop() {
        boost::system::error_code ignored;
        state_->socket.close(ignored);
        for (auto* timer : state_->delays)
            timer->cancel();
    }

private:
    struct state {
        state(boost::asio::any_io_executor ex, dns_zone z)
            : socket(ex, {boost::asio::ip::make_address("127.0.0.1"), 0})
            , zone(std::move(z))
            , port(socket.local_endpoint().port()) {}
        boost::asio::ip::udp::socket socket;
        dns_zone zone;
        unsigned short port;
        std::map<std::pair<std::string, std::uint16_t>, std::size_t> counts;
        std::size_t total = 0;
        std::vector<boost::asio::steady_timer*> delays;
    };

    struct question {
        std::string name;
        std::uint16_t type = 0;
        std::size_t end = 0; // offset after QTYPE and QCLASS
    };

    static std::optional<question> parse_question(const std::vector<unsigned char>& q) {
        if (q.size() < 12)
            return std::nullopt;
        question out;
        std::size_t at = 12;
        while (at < q.size() && q[at] != 0) {
            const std::size_t length = q[at];
            if (length > 63 || at + 1 + length > q.size())
                return std::nullopt;
            if (!out.name.empty())
                out.name += '.';
            for (std::size_t i = 0; i < length; ++i) {
                char c = static_cast<char>(q[at + 1 + i]);
                out.name += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
            }
            at += 1 + length;
        }
        if (at + 5 > q.size())
            return std::nullopt;
        out.type = static_cast<std::uint16_t>(q[at + 1] << 8 | q[at + 2]);
        out.end = at + 5;
        return out;
    }

    static void put16(std::vector<unsigned char>& out, unsigned value) {
        out.push_back(static_cast<unsigned char>(value >> 8));
        out.push_back(static_cast<unsigned char>(value));
    }

    static std::vector<unsigned char> response(const std::vector<unsigned char>& query, const question& q,
                                               const std::optional<dns_answer>& answer) {
        std::vector<std::array<unsigned char, 16>> records;
        std::size_t record_size = q.type == type_aaaa ? 16 : 4;
        if (answer && answer->rcode == 0) {
            const auto& texts = q.type == type_aaaa ? answer->ipv6 : answer->ipv4;
            if (q.type == type_a || q.type == type_aaaa) {
                for (const auto& text : texts) {
                    std::array<unsigned char, 16> bytes{};
                    const auto address = boost::asio::ip::make_address(text);
                    if (address.is_v4()) {
                        const auto b = address.to_v4().to_bytes();
                        std::copy(b.begin(), b.end(), bytes.begin());
                    } else {
                        const auto b = address.to_v6().to_bytes();
                        std::copy(b.begin(), b.end(), bytes.begin());
                    }
                    records.push_back(bytes);
                }
            }
        }
        const int rcode = answer ? answer->rcode : 3;
        std::vector<unsigned char> out(query.begin(), query.begin() + 2); // the query's id
        put16(out, 0x8180 | static_cast<unsigned>(rcode)); // response, recursion desired and available
        put16(out, 1);
        put16(out, static_cast<unsigned>(records.size()));
        put16(out, 0);
        put16(out, 0);
        out.insert(out.end(), query.begin() + 12, query.begin() + static_cast<std::ptrdiff_t>(q.end));
        for (const auto& bytes : records) {
            put16(out, 0xc00c); // the name: a pointer to the question's
            put16(out, q.type);
            put16(out, 1); // IN
            put16(out, answer->ttl >> 16);
            put16(out, answer->ttl & 0xffff);
            put16(out, static_cast<unsigned>(record_size));
            out.insert(out.end(), bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(record_size));
        }
        return out;
    }

    static boost::asio::awaitable<void> answer_later(std::shared_ptr<state> s,
                                                     std::vector<unsigned char> bytes,
                                                     boost::asio::ip::udp::endpoint to,
                                                     std::chrono::milliseconds delay) {
        constexpr auto tuple = boost::asio::as_tuple(boost::asio::use_awaitable);
        if (delay.count() > 0) {
            boost::asio::steady_timer timer{s->socket.get_executor(), delay};
            s->delays.push_back(&timer);
            auto [ec] = co_await timer.async_wait(tuple);
            std::erase(s->delays, &timer);
            if (ec || !s->socket.is_open())
                co_return;
        }
        co_await s->socket.async_send_to(boost::asio::buffer(bytes), to, tuple);
    }

    static boost::asio::awaitable<void> serve(std::shared_ptr<state> s) {
        constexpr auto tuple = boost::asio::as_tuple(boost::asio::use_awaitable);
        std::vector<unsigned char> buffer(4096);
        for (;;) {
            boost::asio::ip::udp::endpoint from;
            auto [ec, n] = co_await s->socket.async_receive_from(boost::asio::buffer(buffer), from, tuple);
            if (ec == boost::asio::error::operation_aborted || !s->socket.is_open())
                co_return;
            if (ec)
                continue;
            std::vector<unsigned char> query(buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(n));
            const auto q = parse_question(query);
            if (!q)
                continue;
            ++s->counts[{q->name, q->type}];
            ++s->total;
            const auto answer = s->zone(q->name);
            if (answer && answer->drop)
                continue;
            boost::asio::co_spawn(s->socket.get_executor(),
                                  answer_later(s, response(query, *q, answer), from,
                                               answer ? answer->delay : std::chrono::milliseconds{0}),
                                  boost::asio::detached);
        }
    }

    std::shared_ptr<state> state_;
};

} // namespace asiocrawl::test
