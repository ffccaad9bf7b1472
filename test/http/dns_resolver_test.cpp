// The c-ares resolver against a real DNS server on 127.0.0.1 (support/dns_server.hpp): answers, sharing of
// lookups in flight, the TTL cache and its bounds, negative answers, deadlines.
#include "http/dns_resolver.hpp"

#include "support/dns_server.hpp"
#include "support/loopback.hpp"

#include <asiocrawl/error.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace asio = boost::asio;
using namespace asiocrawl;
using namespace asiocrawl::test;
using boost::system::error_code;
using detail::dns_resolver;
using std::chrono::milliseconds;

namespace {

struct lookup_result {
    error_code ec;
    std::vector<std::string> addresses;
};

struct dns_fixture : ::testing::Test {
    asio::io_context ctx;
    std::map<std::string, dns_answer> zone;
    dns_server server{ctx.get_executor(), [this](const std::string& name) -> std::optional<dns_answer> {
                          auto it = zone.find(name);
                          if (it == zone.end())
                              return std::nullopt;
                          return it->second;
                      }};
    dns_config config;

    dns_fixture() { config.servers = {server.address()}; }

    static asio::awaitable<lookup_result> resolve(dns_resolver& resolver, std::string name,
                                                  milliseconds within = milliseconds(5000)) {
        std::vector<asio::ip::address> addresses;
        lookup_result r;
        r.ec = co_await resolver.resolve(name, std::chrono::steady_clock::now() + within, addresses);
        for (const auto& a : addresses)
            r.addresses.push_back(a.to_string());
        co_return r;
    }

    /// Runs `body` to completion, then stops the server so that the context runs dry.
    void run(std::function<asio::awaitable<void>()> body) {
        asio::co_spawn(ctx, std::move(body), [&](std::exception_ptr e) {
            server.stop();
            if (e)
                std::rethrow_exception(e);
        });
        run_bounded(ctx, std::chrono::seconds(30));
    }
};

} // namespace

TEST_F(dns_fixture, answers_a_and_aaaa_from_the_configured_server) {
    zone["www.example.test"] = {{"192.0.2.1", "192.0.2.2"}, {"2001:db8::1"}, 300};
    dns_resolver resolver{ctx.get_executor(), config};
    lookup_result r;
    run([&]() -> asio::awaitable<void> { r = co_await resolve(resolver, "WWW.Example.test"); });
    EXPECT_FALSE(r.ec) << r.ec.message();
    std::sort(r.addresses.begin(), r.addresses.end());
    EXPECT_EQ(r.addresses, (std::vector<std::string>{"192.0.2.1", "192.0.2.2", "2001:db8::1"}));
    EXPECT_EQ(server.queries("www.example.test", dns_server::type_a), 1u);
    EXPECT_EQ(server.queries("www.example.test", dns_server::type_aaaa), 1u);
}

TEST_F(dns_fixture, callers_of_one_name_share_one_lookup_and_then_the_cache) {
    zone["shared.test"] = {{"192.0.2.7"}, {}, 300, milliseconds(100)};
    dns_resolver resolver{ctx.get_executor(), config};
    std::vector<lookup_result> results(10);
    run([&]() -> asio::awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        std::size_t done = 0;
        asio::steady_timer all_done{ex, std::chrono::steady_clock::time_point::max()};
        for (auto& r : results)
            asio::co_spawn(
                ex, [&]() -> asio::awaitable<void> { r = co_await resolve(resolver, "shared.test"); },
                [&](std::exception_ptr) {
                    if (++done == results.size())
                        all_done.cancel();
                });
        co_await all_done.async_wait(asio::as_tuple(asio::use_awaitable));
        results.push_back(co_await resolve(resolver, "shared.test")); // answered from the cache
    });
    for (const auto& r : results) {
        EXPECT_FALSE(r.ec) << r.ec.message();
        EXPECT_EQ(r.addresses, std::vector<std::string>{"192.0.2.7"});
    }
    EXPECT_EQ(server.queries("shared.test", dns_server::type_a), 1u);
    EXPECT_EQ(resolver.stats().lookups, 1u);
    EXPECT_EQ(resolver.stats().shared, 9u);
    EXPECT_EQ(resolver.stats().cache_hits, 1u);
}

TEST_F(dns_fixture, answers_expire_after_their_ttl_within_the_configured_bounds) {
    zone["short.test"] = {{"192.0.2.1"}, {}, 3600, milliseconds(0)};
    config.min_ttl = milliseconds(0);
    config.max_ttl = milliseconds(50); // clamps the hour the server says
    dns_resolver resolver{ctx.get_executor(), config};
    run([&]() -> asio::awaitable<void> {
        co_await resolve(resolver, "short.test");
        co_await resolve(resolver, "short.test");
        co_await sleep_for(milliseconds(120));
        co_await resolve(resolver, "short.test");
    });
    EXPECT_EQ(server.queries("short.test", dns_server::type_a), 2u);
    EXPECT_EQ(resolver.stats().cache_hits, 1u);
}

TEST_F(dns_fixture, a_ttl_of_zero_is_raised_to_the_minimum) {
    zone["zero.test"] = {{"192.0.2.1"}, {}, 0, milliseconds(0)};
    dns_resolver resolver{ctx.get_executor(), config}; // min_ttl 30 s
    run([&]() -> asio::awaitable<void> {
        for (int i = 0; i < 5; ++i)
            co_await resolve(resolver, "zero.test");
    });
    EXPECT_EQ(server.queries("zero.test", dns_server::type_a), 1u);
}

TEST_F(dns_fixture, no_such_name_is_remembered_for_the_negative_ttl) {
    dns_resolver resolver{ctx.get_executor(), config};
    lookup_result first, second;
    run([&]() -> asio::awaitable<void> {
        first = co_await resolve(resolver, "missing.test");
        second = co_await resolve(resolver, "missing.test");
    });
    EXPECT_EQ(first.ec, asio::error::host_not_found) << first.ec.message();
    EXPECT_EQ(second.ec, asio::error::host_not_found) << second.ec.message();
    EXPECT_EQ(error_kind(first.ec), "host_not_found");
    EXPECT_EQ(server.queries("missing.test", dns_server::type_a), 1u);
}

TEST_F(dns_fixture, a_name_without_addresses_is_host_not_found) {
    zone["nodata.test"] = dns_answer{};
    dns_resolver resolver{ctx.get_executor(), config};
    lookup_result r;
    run([&]() -> asio::awaitable<void> { r = co_await resolve(resolver, "nodata.test"); });
    EXPECT_EQ(r.ec, asio::error::host_not_found) << r.ec.message();
}

TEST_F(dns_fixture, a_server_failure_is_temporary_and_asked_again) {
    dns_answer failing;
    failing.rcode = 2; // SERVFAIL
    zone["flaky.test"] = failing;
    dns_resolver resolver{ctx.get_executor(), config};
    lookup_result first, second;
    run([&]() -> asio::awaitable<void> {
        first = co_await resolve(resolver, "flaky.test");
        zone["flaky.test"] = {{"192.0.2.9"}, {}, 300};
        second = co_await resolve(resolver, "flaky.test");
    });
    EXPECT_EQ(first.ec, asio::error::host_not_found_try_again) << first.ec.message();
    EXPECT_FALSE(second.ec) << second.ec.message();
    EXPECT_EQ(second.addresses, std::vector<std::string>{"192.0.2.9"});
}

TEST_F(dns_fixture, a_deadline_ends_one_wait_and_the_lookup_goes_on_for_the_others) {
    zone["slow.test"] = {{"192.0.2.3"}, {}, 300, milliseconds(400)};
    dns_resolver resolver{ctx.get_executor(), config};
    lookup_result impatient, patient;
    run([&]() -> asio::awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        asio::steady_timer patient_done{ex, std::chrono::steady_clock::time_point::max()};
        asio::co_spawn(
            ex, [&]() -> asio::awaitable<void> { patient = co_await resolve(resolver, "slow.test"); },
            [&](std::exception_ptr) { patient_done.cancel(); });
        impatient = co_await resolve(resolver, "slow.test", milliseconds(50));
        co_await patient_done.async_wait(asio::as_tuple(asio::use_awaitable));
    });
    EXPECT_EQ(impatient.ec, error::connect_timeout) << impatient.ec.message();
    EXPECT_FALSE(patient.ec) << patient.ec.message();
    EXPECT_EQ(patient.addresses, std::vector<std::string>{"192.0.2.3"});
    EXPECT_EQ(server.queries("slow.test", dns_server::type_a), 1u);
}

TEST_F(dns_fixture, a_silent_server_ends_in_the_deadline) {
    dns_answer silent;
    silent.drop = true;
    zone["silent.test"] = silent;
    dns_resolver resolver{ctx.get_executor(), config};
    lookup_result r;
    run([&]() -> asio::awaitable<void> {
        r = co_await resolve(resolver, "silent.test", milliseconds(200));
        resolver.cancel(); // or c-ares would go on asking for seconds
    });
    EXPECT_EQ(r.ec, error::connect_timeout) << r.ec.message();
}

TEST_F(dns_fixture, ip_literals_and_localhost_need_no_query) {
    dns_resolver resolver{ctx.get_executor(), config};
    lookup_result v4, v6, local;
    run([&]() -> asio::awaitable<void> {
        v4 = co_await resolve(resolver, "127.0.0.1");
        v6 = co_await resolve(resolver, "::1");
        local = co_await resolve(resolver, "localhost");
    });
    EXPECT_EQ(v4.addresses, std::vector<std::string>{"127.0.0.1"});
    EXPECT_EQ(v6.addresses, std::vector<std::string>{"::1"});
    EXPECT_FALSE(local.addresses.empty());
    EXPECT_EQ(local.addresses.front().rfind("127.", 0) == 0 || local.addresses.front() == "::1", true);
    EXPECT_EQ(server.total_queries(), 0u);
}

TEST_F(dns_fixture, destroying_the_resolver_ends_lookups_in_flight) {
    zone["never.test"] = {{"192.0.2.1"}, {}, 300, milliseconds(10'000)};
    std::optional<dns_resolver> resolver;
    resolver.emplace(ctx.get_executor(), config);
    lookup_result r;
    run([&]() -> asio::awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        asio::co_spawn(ex, sleep_for(milliseconds(50)), [&](std::exception_ptr) { resolver.reset(); });
        r = co_await resolve(*resolver, "never.test");
    });
    EXPECT_EQ(r.ec, asio::error::operation_aborted) << r.ec.message();
}

TEST(dns_config_servers, malformed_servers_are_refused) {
    asio::io_context ctx;
    for (std::string bad : {"example.com", "1.2.3.4:", "1.2.3.4:99999", "[::1", "1.2.3.4:x"}) {
        dns_config config;
        config.servers = {bad};
        EXPECT_THROW((dns_resolver{ctx.get_executor(), config}), std::invalid_argument) << bad;
    }
    dns_config config;
    config.servers = {"127.0.0.1", "127.0.0.1:5353", "[::1]:53", "::1"};
    EXPECT_NO_THROW((dns_resolver{ctx.get_executor(), config}));
}
