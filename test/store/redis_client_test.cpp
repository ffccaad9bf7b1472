// The Asio Redis client against a real redis-server: pipelined bursts, error answers, a server killed and
// started again, the redis:// URL, and the same over TLS (rediss://) with its certificate failures.
#include "state/crawl_state.hpp"
#include "store/redis_client.hpp"
#include "store/shared_store.hpp"

#include "support/redis_server.hpp"
#include "support/tls_certs.hpp"

#include <asiocrawl/error.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <gtest/gtest.h>

#include <csignal>
#include <iostream>
#include <set>
#include <thread>

namespace asio = boost::asio;
using namespace asiocrawl;
using namespace asiocrawl::test;
using namespace std::chrono_literals;

namespace {

redis::client_options options_for(const redis_server& server) {
    redis::client_options o;
    o.where = redis::parse_url(server.url()).value.value();
    o.io_timeout = 5s;
    return o;
}

/// Runs a coroutine on a fresh io_context to completion (bounded: a hang fails the test).
template <class F>
auto run(asio::io_context& ctx, F f) {
    auto future = asio::co_spawn(ctx, std::move(f), asio::use_future);
    ctx.restart();
    ctx.run_for(30s);
    EXPECT_EQ(future.wait_for(0s), std::future_status::ready) << "the coroutine did not finish in 30 s";
    return future.get();
}

} // namespace

TEST(redis_url, parses_host_port_db_and_password) {
    struct row {
        std::string url;
        std::string env_password;
        bool ok;
        std::string host, port;
        int db;
        std::string user, password;
        bool tls;
    };
    const std::vector<row> rows = {
        {"redis://127.0.0.1:6380/2", "", true, "127.0.0.1", "6380", 2, "", "", false},
        {"redis://redis", "", true, "redis", "6379", 0, "", "", false},
        {"redis://:s%40cret@h:1/0", "", true, "h", "1", 0, "", "s@cret", false},
        {"redis://bob:pw@h/3", "", true, "h", "6379", 3, "bob", "pw", false},
        {"redis://pw@h", "", true, "h", "6379", 0, "", "pw", false},
        {"redis://h", "fromenv", true, "h", "6379", 0, "", "fromenv", false},
        {"redis://:inurl@h", "fromenv", true, "h", "6379", 0, "", "inurl", false},
        {"rediss://[::1]:7000/1", "", true, "::1", "7000", 1, "", "", true},
        {"http://h", "", false, "", "", 0, "", "", false},
        {"redis://h:99999", "", false, "", "", 0, "", "", false},
        {"redis://h/x", "", false, "", "", 0, "", "", false},
        {"redis://:%zz@h", "", false, "", "", 0, "", "", false},
        {"redis://", "", false, "", "", 0, "", "", false},
    };
    for (const auto& r : rows) {
        SCOPED_TRACE(r.url);
        const auto parsed = redis::parse_url(r.url, r.env_password);
        ASSERT_EQ(parsed.value.has_value(), r.ok) << parsed.error;
        if (!r.ok) {
            EXPECT_FALSE(parsed.error.empty());
            continue;
        }
        EXPECT_EQ(parsed.value->host, r.host);
        EXPECT_EQ(parsed.value->port, r.port);
        EXPECT_EQ(parsed.value->db, r.db);
        EXPECT_EQ(parsed.value->username, r.user);
        EXPECT_EQ(parsed.value->password, r.password);
        EXPECT_EQ(parsed.value->tls, r.tls);
        if (!r.password.empty()) {
            EXPECT_EQ(redis::redacted(*parsed.value).find(r.password), std::string::npos);
        }
    }
}

TEST(redis_client, pipelined_burst_answers_in_order) {
    redis_server server;
    asio::io_context ctx;
    redis::client client(ctx.get_executor(), options_for(server));
    const int n = 5000;
    auto answers = run(ctx, [&]() -> asio::awaitable<std::vector<redis::reply>> {
        std::vector<redis::command> burst;
        for (int i = 0; i < n; ++i)
            burst.push_back({"RPUSH", "list", "item-" + std::to_string(i)});
        burst.push_back({"LRANGE", "list", "0", "-1"});
        co_return co_await client.execute(std::move(burst));
    });
    ASSERT_EQ(answers.size(), static_cast<std::size_t>(n + 1));
    for (int i = 0; i < n; ++i) {
        ASSERT_EQ(answers[static_cast<std::size_t>(i)].type, redis::reply::kind::integer);
        ASSERT_EQ(answers[static_cast<std::size_t>(i)].integer, i + 1);
    }
    const auto& all = answers.back();
    ASSERT_EQ(all.elements.size(), static_cast<std::size_t>(n));
    EXPECT_EQ(all.elements[1234].str, "item-1234");
    EXPECT_EQ(client.connections(), 1u);
}

TEST(redis_client, concurrent_callers_take_turns) {
    redis_server server;
    asio::io_context ctx;
    redis::client client(ctx.get_executor(), options_for(server));
    int finished = 0;
    for (int caller = 0; caller < 20; ++caller) {
        asio::co_spawn(
            ctx,
            [&client, &finished, caller]() -> asio::awaitable<void> {
                for (int i = 0; i < 10; ++i) {
                    std::vector<redis::command> commands{
                        {"INCR", "counter"},
                        {"SET", "caller" + std::to_string(caller), std::to_string(i)},
                        {"GET", "caller" + std::to_string(caller)}};
                    auto answers = co_await client.execute(std::move(commands));
                    EXPECT_EQ(answers.at(2).str, std::to_string(i));
                }
                ++finished;
            },
            asio::detached);
    }
    ctx.run_for(30s);
    EXPECT_EQ(finished, 20);
    EXPECT_EQ(server.command({"GET", "counter"}), "$3\r\n200\r\n");
}

TEST(redis_client, error_answers_are_values_in_a_pipeline_and_thrown_by_call) {
    redis_server server;
    asio::io_context ctx;
    redis::client client(ctx.get_executor(), options_for(server));
    auto answers = run(ctx, [&]() -> asio::awaitable<std::vector<redis::reply>> {
        std::vector<redis::command> commands{
            {"SET", "s", "x"}, {"LPUSH", "s", "y"}, {"GET", "s"}, {"NOSUCH"}};
        co_return co_await client.execute(std::move(commands));
    });
    ASSERT_EQ(answers.size(), 4u);
    EXPECT_EQ(answers[0].str, "OK");
    EXPECT_TRUE(answers[1].is_error());
    EXPECT_NE(answers[1].str.find("WRONGTYPE"), std::string::npos);
    EXPECT_EQ(answers[2].str, "x");
    EXPECT_TRUE(answers[3].is_error());
    std::string thrown;
    run(ctx, [&]() -> asio::awaitable<void> {
        try {
            redis::command push{"LPUSH", "s", "y"};
            co_await client.call(std::move(push));
        } catch (const redis::server_error& e) {
            thrown = e.what();
        }
        // The connection is still good after an error answer.
        redis::command ping{"PING"};
        auto pong = co_await client.call(std::move(ping));
        EXPECT_EQ(pong.str, "PONG");
    });
    EXPECT_NE(thrown.find("WRONGTYPE"), std::string::npos);
    EXPECT_EQ(client.connections(), 1u);
}

TEST(redis_client, reconnects_after_the_server_is_killed_and_started_again) {
    redis_server server;
    asio::io_context ctx;
    auto options = options_for(server);
    std::vector<std::string> retries;
    options.on_retry = [&](int, const std::string& why) { retries.push_back(why); };
    redis::client client(ctx.get_executor(), options);
    run(ctx, [&]() -> asio::awaitable<void> {
        redis::command set{"SET", "kept", "by-aof"};
        co_await client.call(std::move(set));
    });

    server.kill();
    bool lost = false;
    run(ctx, [&]() -> asio::awaitable<void> {
        try {
            redis::command get{"GET", "kept"};
            co_await client.call(std::move(get));
        } catch (const redis::connection_lost&) {
            lost = true;
        }
    });
    EXPECT_TRUE(lost) << "a call on a dead connection says so (its commands may have run)";

    // The server comes back while the client is retrying with backoff.
    std::thread restarter([&] {
        std::this_thread::sleep_for(400ms);
        server.start();
    });
    auto value = run(ctx, [&]() -> asio::awaitable<std::string> {
        redis::command get{"GET", "kept"};
        auto r = co_await client.call(std::move(get));
        co_return r.str;
    });
    restarter.join();
    EXPECT_EQ(value, "by-aof") << "appendonly + appendfsync always: the write survived the kill";
    EXPECT_EQ(client.connections(), 2u);
    EXPECT_FALSE(retries.empty()) << "the failed connection attempts were reported";
}

TEST(redis_client, auth_failure_is_a_server_error_without_the_password) {
    redis_server server;
    server.command({"CONFIG", "SET", "requirepass", "right-one"});
    asio::io_context ctx;
    auto options = options_for(server);
    options.where.password = "wrong-one";
    redis::client client(ctx.get_executor(), options);
    std::string error;
    run(ctx, [&]() -> asio::awaitable<void> {
        try {
            redis::command ping{"PING"};
            co_await client.call(std::move(ping));
        } catch (const redis::server_error& e) {
            error = e.what();
        }
    });
    EXPECT_FALSE(error.empty());
    EXPECT_EQ(error.find("wrong-one"), std::string::npos);

    options.where.password = "right-one";
    redis::client good(ctx.get_executor(), options);
    auto pong = run(ctx, [&]() -> asio::awaitable<std::string> {
        redis::command ping{"PING"};
        auto answer = co_await good.call(std::move(ping));
        co_return answer.str;
    });
    EXPECT_EQ(pong, "PONG");
}

namespace {

/// close() may come at any moment while another coroutine is inside a call (the crawler closes the client
/// when it stops, with its lease loop still waiting for an answer): at every step of a call's handlers in
/// turn, the call ends with an answer or a thrown error, never a crash (a reader freed under a read that
/// had already completed). Steps are tried until the call ends before close() (at most 500).
void close_at_every_step(const redis::client_options& options) {
    for (int steps = 0; steps < 500; ++steps) {
        SCOPED_TRACE("close after " + std::to_string(steps) + " handlers");
        asio::io_context ctx;
        auto client = std::make_unique<redis::client>(ctx.get_executor(), options);
        bool ended = false;
        // The call is made now, as the crawler makes it; the client may be gone before it first runs.
        auto call = client->execute(std::vector<redis::command>(50, redis::command{"PING"}));
        asio::co_spawn(
            ctx,
            [](asio::awaitable<std::vector<redis::reply>> under_way, bool& ended) -> asio::awaitable<void> {
                try {
                    co_await std::move(under_way);
                } catch (const std::exception&) {
                }
                ended = true;
            }(std::move(call), ended), // parameters, not captures: the lambda is gone once it has begun
            asio::detached);
        for (int i = 0; i < steps && !ended; ++i)
            ctx.run_one_for(5s);
        const bool ended_before_close = ended;
        client->close();
        client.reset(); // the crawler's client goes too; the call under way keeps what it uses
        ctx.run_for(10s);
        EXPECT_TRUE(ended);
        if (ended_before_close)
            return;
    }
    ADD_FAILURE() << "the call took more than 500 handlers";
}

} // namespace

TEST(redis_client, close_at_any_step_of_a_call_under_way_is_safe) {
    redis_server server;
    close_at_every_step(options_for(server));
}

namespace {

/// A TLS redis-server presenting a certificate of `pki`, and the PEM files a client may be given.
struct tls_fixture {
    explicit tls_fixture(test_pki p, bool auth_clients = false)
        : pki(std::move(p))
        , server(redis_tls_setup{pki.ca_pem, pki.server_cert_pem, pki.server_key_pem, auth_clients}) {}
    test_pki pki;
    redis_server server;
    temp_pem_file ca{pki.ca_pem};
    temp_pem_file client_cert{pki.client_cert_pem};
    temp_pem_file client_key{pki.client_key_pem};

    redis::client_options options(const std::string& host = "127.0.0.1") const {
        redis::client_options o;
        o.where = redis::parse_url(server.tls_url(host)).value.value();
        o.tls.ca_file = ca.path().string();
        o.io_timeout = 5s;
        return o;
    }
};

/// PING through a client made with `options`, retrying as a crawl would for at most `give_up_after`:
/// "PONG", or why it failed (every retry's reason too, in `retries`).
std::string ping(redis::client_options options, std::vector<std::string>* retries = nullptr,
                 std::chrono::milliseconds give_up_after = 1500ms) {
    asio::io_context ctx;
    options.give_up_after = give_up_after;
    options.backoff_max = 200ms;
    options.on_retry = [retries](int, const std::string& why) {
        if (retries)
            retries->push_back(why);
    };
    redis::client client(ctx.get_executor(), options);
    return run(ctx, [&]() -> asio::awaitable<std::string> {
        try {
            redis::command ping{"PING"};
            auto answer = co_await client.call(std::move(ping));
            co_return answer.str;
        } catch (const std::exception& e) {
            co_return std::string(e.what());
        }
    });
}

} // namespace

TEST(redis_tls, pipelined_calls_and_auth_over_tls_never_show_the_password) {
    tls_fixture tls{make_test_pki()};
    tls.server.command({"CONFIG", "SET", "requirepass", "tls-secret"});
    asio::io_context ctx;
    auto options = tls.options();
    options.where.password = "tls-secret";
    std::vector<std::string> said;
    options.on_retry = [&](int, const std::string& why) { said.push_back(why); };
    redis::client client(ctx.get_executor(), options);
    const int n = 2000;
    auto answers = run(ctx, [&]() -> asio::awaitable<std::vector<redis::reply>> {
        std::vector<redis::command> burst;
        for (int i = 0; i < n; ++i)
            burst.push_back({"RPUSH", "list", std::string(100, 'x') + std::to_string(i)});
        burst.push_back({"LRANGE", "list", "0", "-1"});
        co_return co_await client.execute(std::move(burst));
    });
    ASSERT_EQ(answers.size(), static_cast<std::size_t>(n + 1));
    for (int i = 0; i < n; ++i)
        ASSERT_EQ(answers[static_cast<std::size_t>(i)].integer, i + 1);
    ASSERT_EQ(answers.back().elements.size(), static_cast<std::size_t>(n));
    EXPECT_EQ(answers.back().elements[1999].str, std::string(100, 'x') + "1999");
    EXPECT_EQ(client.connections(), 1u);
    EXPECT_TRUE(said.empty());

    // A wrong password over TLS: the server's refusal, without the password; the log's words lack it too.
    options.where.password = "not-the-tls-secret";
    std::vector<std::string> retries;
    const auto refused = ping(options, &retries);
    EXPECT_NE(refused.find("WRONGPASS"), std::string::npos) << refused;
    EXPECT_EQ(refused.find("not-the-tls-secret"), std::string::npos) << refused;
    EXPECT_EQ(redis::redacted(options.where).find("not-the-tls-secret"), std::string::npos);
    EXPECT_EQ(redis::redacted(options.where),
              "rediss://:***@127.0.0.1:" + std::to_string(tls.server.tls_port()) + "/0");
    for (const auto& why : retries)
        EXPECT_EQ(why.find("not-the-tls-secret"), std::string::npos) << why;
}

TEST(redis_tls, a_certificate_from_an_untrusted_ca_is_refused_with_its_reason) {
    tls_fixture tls{make_test_pki()};
    auto options = tls.options();
    const auto other = make_test_pki();
    temp_pem_file other_ca{other.ca_pem};
    options.tls.ca_file = other_ca.path().string();
    options.where.password = "never-shown";
    std::vector<std::string> retries;
    const auto failure = ping(options, &retries, 300ms);
    std::cout << failure << "\n";
    // Counted like an unreachable Redis: retried until give_up_after, then given up with the reason.
    EXPECT_NE(failure.find("has not answered for"), std::string::npos) << failure;
    EXPECT_NE(failure.find("is not trusted"), std::string::npos) << failure;
    EXPECT_NE(failure.find("asiocrawl test CA"), std::string::npos) << failure;
    ASSERT_FALSE(retries.empty());
    EXPECT_NE(retries.front().find("is not trusted"), std::string::npos) << retries.front();
    EXPECT_EQ(failure.find("never-shown"), std::string::npos);
    // Trusted through ca_file, the same server answers.
    options.tls.ca_file = tls.ca.path().string();
    options.where.password.clear();
    EXPECT_EQ(ping(options), "PONG");
}

TEST(redis_tls, the_host_name_and_ip_address_are_checked_against_the_certificate) {
    {
        // Connected to by IP address: the certificate's IP addresses count, not its DNS names.
        tls_fixture tls{make_test_pki({"redis.example"})};
        const auto failure = ping(tls.options("127.0.0.1"), nullptr, 300ms);
        std::cout << failure << "\n";
        EXPECT_NE(failure.find("the certificate is for redis.example, not 127.0.0.1"), std::string::npos)
            << failure;
        auto insecure = tls.options("127.0.0.1");
        insecure.tls.insecure = true;
        insecure.tls.ca_file.clear();
        EXPECT_EQ(ping(insecure), "PONG") << "insecure: neither the name nor the issuer is checked";
    }
    {
        tls_fixture tls{make_test_pki({"redis.example", "127.0.0.1"})};
        EXPECT_EQ(ping(tls.options("127.0.0.1")), "PONG") << "an IP SAN matches an IP-address host";
        const auto failure = ping(tls.options("localhost"), nullptr, 300ms);
        std::cout << failure << "\n";
        EXPECT_NE(failure.find("the certificate is for redis.example, 127.0.0.1, not localhost"),
                  std::string::npos)
            << failure;
    }
}

TEST(redis_tls, a_client_certificate_is_presented_when_the_server_requires_one) {
    tls_fixture tls{make_test_pki(), true};
    std::vector<std::string> retries;
    const auto failure = ping(tls.options(), &retries, 300ms);
    std::cout << failure << "\n";
    EXPECT_NE(failure.find("client certificate"), std::string::npos) << failure;
    EXPECT_NE(failure.find("has not answered for"), std::string::npos) << failure;

    auto with_cert = tls.options();
    with_cert.tls.cert_file = tls.client_cert.path().string();
    with_cert.tls.key_file = tls.client_key.path().string();
    EXPECT_EQ(ping(with_cert), "PONG");
    // One PEM holding both the certificate and its key.
    temp_pem_file both{tls.pki.client_cert_pem + tls.pki.client_key_pem};
    with_cert.tls.cert_file = both.path().string();
    with_cert.tls.key_file.clear();
    EXPECT_EQ(ping(with_cert), "PONG");
}

TEST(redis_tls, a_plain_server_on_a_rediss_url_is_named_as_such) {
    redis_server plain;
    auto options = redis::parse_url("rediss://127.0.0.1:" + std::to_string(plain.port())).value.value();
    redis::client_options o;
    o.where = options;
    o.connect_timeout = 300ms;
    const auto failure = ping(o, nullptr, 300ms);
    std::cout << failure << "\n";
    EXPECT_NE(failure.find("is it a plain redis:// port?"), std::string::npos) << failure;
}

TEST(redis_tls, unusable_tls_files_are_named_when_the_client_is_made) {
    asio::io_context ctx;
    temp_pem_file not_pem{"this is not a certificate\n"};
    // Aggregates in order: ca_file, cert_file, key_file, insecure.
    struct row {
        redis::tls_options tls;
        std::string which, path;
    };
    const std::string bad = not_pem.path().string();
    const std::vector<row> rows = {
        {{"/nonexistent/ca.pem", "", "", false}, "ca_file", "/nonexistent/ca.pem"},
        {{bad, "", "", false}, "ca_file", bad},
        {{"", "/nonexistent/client.pem", "", false}, "cert_file", "/nonexistent/client.pem"},
        {{"", bad, "", false}, "cert_file", bad},
    };
    redis::client_options options;
    options.where = redis::parse_url("rediss://127.0.0.1:1").value.value();
    for (const auto& r : rows) {
        SCOPED_TRACE(r.path);
        options.tls = r.tls;
        try {
            redis::client client(ctx.get_executor(), options);
            ADD_FAILURE() << "no error";
        } catch (const redis::tls_file_error& e) {
            EXPECT_EQ(e.which, r.which);
            EXPECT_EQ(e.path, r.path);
            EXPECT_NE(std::string(e.what()).find(r.path), std::string::npos) << e.what();
            std::cout << e.what() << "\n";
        }
    }
    // A key that does not open names the key file.
    const auto pki = make_test_pki();
    temp_pem_file cert{pki.client_cert_pem};
    options.tls = {"", cert.path().string(), "/nonexistent/client.key", false};
    try {
        redis::client client(ctx.get_executor(), options);
        ADD_FAILURE() << "no error";
    } catch (const redis::tls_file_error& e) {
        EXPECT_EQ(e.which, "key_file");
    }
    // The files of a redis:// endpoint are not read at all.
    options.where.tls = false;
    EXPECT_NO_THROW(redis::client(ctx.get_executor(), options));
}

TEST(redis_tls, reconnects_with_a_fresh_session_after_the_server_is_killed_and_started_again) {
    tls_fixture tls{make_test_pki()};
    asio::io_context ctx;
    auto options = tls.options();
    std::vector<std::string> retries;
    options.on_retry = [&](int, const std::string& why) { retries.push_back(why); };
    redis::client client(ctx.get_executor(), options);
    run(ctx, [&]() -> asio::awaitable<void> {
        redis::command set{"SET", "kept", "over-tls"};
        co_await client.call(std::move(set));
    });
    tls.server.kill();
    bool lost = false;
    run(ctx, [&]() -> asio::awaitable<void> {
        try {
            redis::command get{"GET", "kept"};
            co_await client.call(std::move(get));
        } catch (const redis::connection_lost&) {
            lost = true;
        }
    });
    EXPECT_TRUE(lost);
    std::thread restarter([&] {
        std::this_thread::sleep_for(400ms);
        tls.server.start();
    });
    auto value = run(ctx, [&]() -> asio::awaitable<std::string> {
        redis::command get{"GET", "kept"};
        auto r = co_await client.call(std::move(get));
        co_return r.str;
    });
    restarter.join();
    EXPECT_EQ(value, "over-tls");
    EXPECT_EQ(client.connections(), 2u);
    EXPECT_FALSE(retries.empty());
}

TEST(redis_tls, close_at_any_step_of_a_call_under_way_is_safe) {
    tls_fixture tls{make_test_pki()};
    close_at_every_step(tls.options());
}

// asiocrawl report --redis, and every instance's final report: the instances' counters added up.
TEST(shared_report, sums_every_instances_counters) {
    const std::map<std::string, std::string> counters = {
        {"0", R"({"stats":{"status_200":5,"retries":1},"done":6,"failures":1,"robots_denied":0,"retries":1,)"
              R"("bytes":10,"elapsed_us":2000000,"runs":1,"started_at_us":1000})"},
        {"1",
         R"({"stats":{"status_200":7,"status_404":2},"done":9,"failures":2,"robots_denied":0,"retries":0,)"
         R"("bytes":20,"elapsed_us":3000000,"runs":2,"started_at_us":500})"},
        {"2", "not json"},
    };
    std::vector<std::string> skipped;
    const auto r = detail::combined_report(counters, &skipped);
    EXPECT_EQ(r.done, 15u);
    EXPECT_EQ(r.stats.at("status_200"), 12u);
    EXPECT_EQ(r.stats.at("status_404"), 2u);
    EXPECT_EQ(r.stats.at("retries"), 1u);
    EXPECT_EQ(r.runs, 3u);
    EXPECT_EQ(r.started_at.time_since_epoch(), std::chrono::microseconds(500));
    EXPECT_EQ(r.elapsed, std::chrono::seconds(3));
    EXPECT_EQ(skipped, std::vector<std::string>{"2"});
    EXPECT_EQ(detail::combined_report({}).done, 0u);
}

TEST(shared_store, a_robots_answer_is_shared_until_it_is_a_day_old) {
    redis_server server;
    asio::io_context ctx;
    redis::client client(ctx.get_executor(), options_for(server));
    detail::shared_store store(client, {.crawl_id = "robots", .instance = "0"});
    const std::string url = "http://a.test/robots.txt";
    const detail::shared_store::robots_answer fetched{200, std::nullopt, "User-agent: *\nDisallow: /x\n"};
    run(ctx, [&]() -> asio::awaitable<void> { co_await store.store_robots(url, fetched); });
    const auto fresh = run(ctx, [&] { return store.cached_robots(url, detail::robots_cache_lifetime); });
    ASSERT_TRUE(fresh);
    EXPECT_EQ(fresh->status, 200);
    EXPECT_FALSE(fresh->location);
    EXPECT_EQ(fresh->body, fetched.body);

    // Stored a day and a minute ago (the first line is when it was fetched): too old to use, so the next
    // instance to claim it fetches it again.
    const auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
    const auto day_old = std::to_string(now_ms - 24 * 3600 * 1000 - 60 * 1000) + "\n200\n0\n" + fetched.body;
    server.command({"HSET", store.prefix() + "robots", url, day_old});
    EXPECT_FALSE(run(ctx, [&] { return store.cached_robots(url, detail::robots_cache_lifetime); }));
    const std::string never_fetched =
        "http://b.test/robots.txt"; // outlives the coroutine, which takes a reference
    EXPECT_FALSE(run(ctx, [&] { return store.cached_robots(never_fetched, 24h); }));
}

// The control API's steering in Redis (docs/CONTROL.md, "Shared crawls"): a paused host is leased to no
// instance until resumed; a host's rule in the config spaces its leases crawl-wide, and the API's limits win
// over the rule. A delay of a minute keeps it free of timing: the second lease comes well within it.
TEST(shared_store, a_paused_host_is_not_leased_and_the_apis_limits_win_over_a_rule) {
    redis_server server;
    asio::io_context ctx;
    redis::client client(ctx.get_executor(), options_for(server));
    detail::shared_store::settings settings{.crawl_id = "controls", .instance = "0", .max_per_host = 4};
    settings.rule_for = [](const std::string& host) {
        detail::shared_store::host_limits limits;
        if (host == "ruled.test")
            limits.delay = std::chrono::minutes(1);
        return limits;
    };
    detail::shared_store store(client, settings);
    const std::string free_host = "free.test"; // outlive the coroutines, which take references
    const std::string ruled_host = "ruled.test";
    detail::state_batch batch;
    batch.new_hosts = {{0, "free.test"}, {1, "ruled.test"}};
    std::uint64_t fingerprint = 1;
    for (const detail::host_id host : {0u, 1u}) {
        for (int i = 0; i < 3; ++i) {
            detail::work_item item;
            item.url = "http://" + batch.new_hosts[host].second + "/" + std::to_string(i);
            batch.fingerprints.push_back(fingerprint++);
            batch.waiting.push_back({host, 0, detail::encode(item)});
        }
    }
    const auto lease = [&] {
        auto answer = run(ctx, [&] { return store.lease(10, 10, 1); });
        std::multiset<std::string> hosts;
        for (const auto& taken : answer.items)
            hosts.insert(taken.item.url.substr(7, taken.item.url.find('/', 7) - 7));
        return std::pair{hosts, answer.controls_version};
    };
    run(ctx, [&]() -> asio::awaitable<void> {
        // Paused first: its URLs come after, as a paused host's links do.
        co_await store.pause(free_host);
        co_await store.commit(batch);
    });
    EXPECT_EQ(server.command({"HGET", store.prefix() + "rule_limits", "ruled.test"}),
              "$18\r\n{\"delay_ms\":60000}\r\n");

    const auto [first, version] = lease();
    EXPECT_EQ(first, std::multiset<std::string>{"ruled.test"})
        << "free.test is paused; ruled.test one a minute";
    const auto controls = run(ctx, [&] { return store.read_controls(); });
    EXPECT_EQ(controls.version, version);
    ASSERT_EQ(controls.hosts.size(), 1u);
    EXPECT_TRUE(controls.hosts.at("free.test").paused);

    EXPECT_TRUE(run(ctx, [&] { return store.resume(free_host); }));
    EXPECT_FALSE(run(ctx, [&] { return store.resume(free_host); })) << "not paused any more";
    const auto [second, later] = lease();
    EXPECT_EQ(second, (std::multiset<std::string>{"free.test", "free.test", "free.test"}))
        << "resumed; ruled.test's minute has not passed";
    EXPECT_GT(later, version);

    // The API's delay replaces the rule's for every instance, and a shorter one applies at once.
    run(ctx, [&] { return store.set_limits(ruled_host, {std::chrono::milliseconds(0), 2}); });
    const auto [third, latest] = lease();
    EXPECT_EQ(third, (std::multiset<std::string>{"ruled.test"})) << "max_per_host 2: one leased already";
    const auto limited = run(ctx, [&] { return store.read_controls(); });
    EXPECT_EQ(limited.version, latest);
    EXPECT_EQ(limited.hosts.at("ruled.test").limits,
              (detail::shared_store::host_limits{std::chrono::milliseconds(0), 2}));
    EXPECT_FALSE(limited.hosts.at("ruled.test").paused);
}

// A shared re-crawl over a history that says what each page linked to (docs/RECRAWL.md, "Shared crawls"): the
// generation admits no known URL itself; a leased page that may answer 304 brings the entries of its links
// the crawl has not admitted; an instance that joined the generation before is over leases nothing after; and
// once only the generation's hold is left, one instance at a time holds the wrap-up, whose cursor a successor
// takes on when the first stops renewing its claim (killed). No timed assertion: the successor asks until the
// claim has expired.
TEST(shared_store, a_generation_that_follows_links_leases_their_entries_and_is_wrapped_up_by_one_instance) {
    redis_server server;
    asio::io_context ctx;
    redis::client client(ctx.get_executor(), options_for(server));
    const detail::shared_store::settings settings{
        .crawl_id = "follow", .instance = "a", .lease = 200ms, .max_per_host = 4};
    detail::shared_store a(client, settings);
    auto other = settings;
    other.instance = "b";
    detail::shared_store b(client, other);
    const std::string page = "http://h.test/a";
    const std::string link = "http://h.test/b";
    const std::uint64_t seed = 7; // the crawl's, for the seen set's fingerprints

    // The first generation: both URLs admitted, fetched, finished, their entries written.
    detail::state_batch first;
    first.new_hosts = {{0, "h.test"}};
    for (const auto& url : {page, link}) {
        detail::work_item item;
        item.url = url;
        first.fingerprints.push_back(detail::url_fingerprint(url, seed)); // the seen set's
        first.waiting.push_back({0, 0, detail::encode(item)});
        detail::fetch_history h;
        h.status = 200;
        h.etag = "\"1\"";
        h.generation = 1;
        h.outlinks_known = true;
        if (url == page)
            h.outlinks = {detail::outlink_fingerprint(link)};
        first.history.emplace_back(url, detail::encode(h));
    }
    run(ctx, [&] { return a.commit(first); });
    const auto leased = run(ctx, [&] { return a.lease(10, 10, 1); });
    ASSERT_EQ(leased.items.size(), 2u);
    detail::state_batch done;
    for (const auto& taken : leased.items)
        done.finished.emplace_back(0, taken.id);
    run(ctx, [&] { return a.commit(done); });

    const auto began = run(ctx, [&] { return a.begin_generation(true); });
    EXPECT_EQ(began.generation, 2u);
    EXPECT_TRUE(began.follows_links);
    EXPECT_FALSE(began.admit) << "the roots only: known URLs are reached through links";
    const auto joined = run(ctx, [&] { return b.begin_generation(false); });
    EXPECT_EQ(joined.generation, 2u);
    EXPECT_TRUE(joined.follows_links);

    // The root comes again (as every instance admits it at its start); the wrap-up is not due while it waits.
    detail::state_batch root;
    root.fingerprints = {first.fingerprints.front()};
    root.waiting.push_back(first.waiting.front());
    run(ctx, [&] { return a.commit(root); });
    EXPECT_FALSE(run(ctx, [&] { return a.claim_wrap_up(); }));

    // Nothing is leased until the URL index that finds a 304's links is built from the history, by one
    // instance at a time (a crawl never re-crawled keeps none).
    const auto indexing = run(ctx, [&] { return a.lease(10, 10, 2, true, true); });
    EXPECT_TRUE(indexing.items.empty());
    EXPECT_TRUE(indexing.indexing);
    EXPECT_GT(indexing.unfinished, 0);
    const auto index_from = run(ctx, [&] { return a.claim_index(); });
    ASSERT_TRUE(index_from);
    EXPECT_EQ(*index_from, "0") << "from the start";
    EXPECT_FALSE(run(ctx, [&] { return b.claim_index(); })) << "a claims it";
    const auto indexed = run(ctx, [&] { return a.index_from(*index_from, seed); });
    ASSERT_TRUE(indexed);
    EXPECT_EQ(*indexed, "0") << "two entries: one chunk, and the index is built";
    EXPECT_FALSE(run(ctx, [&] { return b.claim_index(); })) << "built: nothing to claim";
    const auto stale = run(ctx, [&] { return b.lease(10, 10, 1); });
    EXPECT_TRUE(stale.items.empty()) << "an instance of the first generation has no part in the second";
    EXPECT_EQ(stale.unfinished, 0);
    const auto again = run(ctx, [&] { return a.lease(10, 10, 2, true, true); });
    ASSERT_EQ(again.items.size(), 1u);
    const auto& taken = again.items.front();
    ASSERT_TRUE(taken.before);
    EXPECT_EQ(taken.before->generation, 1u);
    ASSERT_EQ(taken.known_outlinks.size(), 1u) << "its link, not admitted in this generation";
    EXPECT_EQ(taken.known_outlinks.front().first, link);
    detail::state_batch finished;
    finished.finished.emplace_back(0, taken.id);
    run(ctx, [&] { return a.commit(finished); });

    // Only the hold is left, but an instance still reading its seed file holds the wrap-up off (its roots are
    // not committed yet); a claimer's own mark does not (it claims once its own seeds are read).
    const std::vector<std::uint64_t> no_leases;
    run(ctx, [&] { return b.renew(no_leases, true); });
    run(ctx, [&] { return a.renew(no_leases, true); });
    EXPECT_FALSE(run(ctx, [&] { return a.claim_wrap_up(); })) << "b is reading seeds";
    run(ctx, [&] { return b.renew(no_leases, false); });

    // One instance claims the wrap-up, the other cannot while the claim lasts.
    const auto claimed = run(ctx, [&] { return a.claim_wrap_up(); });
    ASSERT_TRUE(claimed);
    EXPECT_EQ(*claimed, "0");
    EXPECT_FALSE(run(ctx, [&] { return b.claim_wrap_up(); }));
    const std::string cursor = "17"; // outlives the coroutine, which takes a reference
    EXPECT_TRUE(run(ctx, [&] { return a.wrapped_up_to(cursor); }));
    const std::vector<std::uint64_t> fingerprints{first.fingerprints[0], first.fingerprints[1]};
    EXPECT_EQ(run(ctx, [&] { return a.seen(fingerprints); }), (std::vector<bool>{true, false}));

    // `a` stops renewing its claim (killed): `b` takes it on from the cursor, and `a` finds it gone.
    std::optional<std::string> taken_on;
    for (int i = 0; i < 500 && !taken_on; ++i) {
        taken_on = run(ctx, [&] { return b.claim_wrap_up(); });
        if (!taken_on)
            std::this_thread::sleep_for(10ms);
    }
    ASSERT_TRUE(taken_on);
    EXPECT_EQ(*taken_on, cursor);
    EXPECT_FALSE(run(ctx, [&] { return a.wrapped_up_to(cursor); }));
    EXPECT_FALSE(run(ctx, [&] { return a.end_wrap_up(); }));
    EXPECT_TRUE(run(ctx, [&] { return b.end_wrap_up(); }));
    EXPECT_EQ(run(ctx, [&] { return b.read_status(); }).unfinished, 0)
        << "the hold is released: the crawl ends";
    EXPECT_FALSE(run(ctx, [&] { return b.claim_wrap_up(); }));
    const auto index_left = run(ctx, [&]() -> asio::awaitable<redis::reply> {
        redis::command exists{"EXISTS", b.prefix() + "urlof"};
        co_return co_await client.call(std::move(exists));
    });
    EXPECT_EQ(index_left.integer, 0) << "the URL index is gone with the generation";
}

// A history written before entries kept their outlinks (no 'outlinks' mark in meta): the new generation
// admits every known URL, as it did then.
TEST(shared_store, a_history_without_outlinks_begins_a_generation_that_admits_every_known_url) {
    redis_server server;
    asio::io_context ctx;
    redis::client client(ctx.get_executor(), options_for(server));
    detail::shared_store store(client, {.crawl_id = "older", .instance = "a"});
    detail::fetch_history h;
    h.status = 200;
    h.generation = 1;
    server.command({"HSET", store.prefix() + "history", "http://h.test/", detail::encode(h)});
    const auto began = run(ctx, [&] { return store.begin_generation(true); });
    EXPECT_EQ(began.generation, 2u);
    EXPECT_TRUE(began.admit);
    EXPECT_EQ(began.admit_from, "0");
    EXPECT_FALSE(began.follows_links);
    EXPECT_FALSE(run(ctx, [&] { return store.claim_wrap_up(); })) << "no wrap-up: gone means 404 or 410";
}

// Continuous mode over Redis (docs/RECRAWL.md, "Continuous mode in a shared crawl"): a commit schedules each
// recorded URL in `due`; the lease script queues it again under a new id once due (not before), with its
// history entry for the conditional request; a revisit leased by an instance that dies comes back when the
// lease expires, once, and a late commit of the same URL moves its time without doubling it. No timed
// assertion: the due times are an hour apart from now, and the successor asks until the lease has expired.
TEST(shared_store,
     a_committed_schedule_comes_back_into_the_frontier_when_due_and_not_lost_with_its_instance) {
    redis_server server;
    asio::io_context ctx;
    redis::client client(ctx.get_executor(), options_for(server));
    const detail::shared_store::settings settings{
        .crawl_id = "continuous", .instance = "a", .lease = 200ms, .max_per_host = 4};
    detail::shared_store a(client, settings);
    auto other = settings;
    other.instance = "b";
    detail::shared_store b(client, other);
    const std::string definition = "{}";
    EXPECT_EQ(run(ctx, [&] { return a.join(7, definition, true); }), 7u);
    EXPECT_EQ(run(ctx, [&] { return b.join(8, definition, true); }), 7u);
    detail::shared_store one_shot(client, other);
    EXPECT_THROW(run(ctx, [&] { return one_shot.join(9, definition, false); }), crawl_error)
        << "an instance without the schedule would drop the revisits it fetches";

    const std::string due_now = "http://h.test/now";
    const std::string due_later = "http://h.test/later";
    detail::state_batch admitted;
    admitted.new_hosts = {{0, "h.test"}};
    for (const auto& url : {due_now, due_later}) {
        detail::work_item item;
        item.url = url;
        admitted.fingerprints.push_back(admitted.fingerprints.size() + 1);
        admitted.waiting.push_back({0, 0, detail::encode(item)});
    }
    run(ctx, [&] { return a.commit(admitted); });
    const auto first = run(ctx, [&] { return a.lease(10, 10, 1, true); });
    ASSERT_EQ(first.items.size(), 2u);
    EXPECT_EQ(first.due_ms, -1) << "nothing scheduled yet";

    // Both fetched: one is due already (a second ago), the other in an hour.
    const auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
    detail::state_batch fetched;
    for (const auto& taken : first.items) {
        fetched.finished.emplace_back(0, taken.id);
        detail::fetch_history h;
        h.status = 200;
        h.etag = "\"1\"";
        fetched.history.emplace_back(taken.item.url, detail::encode(h));
        detail::work_item again;
        again.url = taken.item.url;
        again.depth = 1;
        const bool now = taken.item.url == due_now;
        fetched.shared_due.push_back(
            {taken.item.url, now ? now_ms - 1000 : now_ms + 3600 * 1000, "h.test", detail::encode(again)});
    }
    run(ctx, [&] { return a.commit(fetched); });
    EXPECT_EQ(server.command({"ZCARD", a.prefix() + "due"}), ":2\r\n");

    const auto revisit = run(ctx, [&] { return a.lease(10, 10, 1, true); });
    EXPECT_EQ(revisit.revisits, 1u) << "the URL due an hour from now stays in `due`";
    ASSERT_EQ(revisit.items.size(), 1u);
    const auto& taken = revisit.items.front();
    EXPECT_EQ(taken.item.url, due_now);
    EXPECT_EQ(taken.item.depth, 1);
    EXPECT_GT(taken.id, first.items.back().id) << "queued under a new id";
    ASSERT_TRUE(taken.before) << "leased with its history entry: a conditional request";
    EXPECT_EQ(taken.before->etag, "\"1\"");
    EXPECT_EQ(revisit.unfinished, 1);
    EXPECT_GT(revisit.due_ms, 3000 * 1000) << "the next one is due in about an hour";
    EXPECT_EQ(server.command({"ZCARD", a.prefix() + "due"}), ":1\r\n");
    EXPECT_EQ(server.command({"HLEN", a.prefix() + "dueitem"}), ":1\r\n");

    // `a` dies with the revisit leased: `b` gets it once its lease expires, and nothing else.
    std::vector<detail::shared_store::leased> successor;
    for (int i = 0; i < 500 && successor.empty(); ++i) {
        successor = run(ctx, [&] { return b.lease(10, 10, 1, true); }).items;
        if (successor.empty())
            std::this_thread::sleep_for(10ms);
    }
    ASSERT_EQ(successor.size(), 1u);
    EXPECT_EQ(successor.front().id, taken.id);
    EXPECT_EQ(successor.front().item.url, due_now);
    const auto nothing_more = run(ctx, [&] { return b.lease(10, 10, 1, true); });
    EXPECT_TRUE(nothing_more.items.empty());
    EXPECT_EQ(nothing_more.revisits, 0u);

    // `b` records it and schedules it again; `a`'s late commit of the same fetch finishes nothing (not its
    // lease any more) and moves the time of the one member the URL has.
    auto scheduled = [&](const std::string& instance, std::int64_t due_ms) {
        detail::state_batch batch;
        batch.finished.emplace_back(0, taken.id);
        detail::work_item again;
        again.url = due_now;
        batch.shared_due.push_back({due_now, due_ms, "h.test", detail::encode(again)});
        return instance == "a" ? run(ctx, [&] { return a.commit(batch); })
                               : run(ctx, [&] { return b.commit(batch); });
    };
    scheduled("b", now_ms + 7200 * 1000);
    scheduled("a", now_ms + 5400 * 1000);
    EXPECT_EQ(server.command({"ZCARD", a.prefix() + "due"}), ":2\r\n");
    EXPECT_EQ(server.command({"ZSCORE", a.prefix() + "due", due_now}),
              "$13\r\n" + std::to_string(now_ms + 5400 * 1000) + "\r\n");
    const auto after = run(ctx, [&] { return a.lease(10, 10, 1, true); });
    EXPECT_TRUE(after.items.empty());
    EXPECT_EQ(after.unfinished, 0) << "nothing waits: the crawl waits for its next due time";
}
