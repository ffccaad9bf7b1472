#include "store/redis_client.hpp"

#include "http/tls_certificate.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/experimental/channel.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/url/pct_string_view.hpp>

#include <hiredis/hiredis.h>
#include <openssl/err.h>
#include <openssl/x509_vfy.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>

namespace asiocrawl::redis {

namespace asio = boost::asio;
namespace ssl = asio::ssl;
using asio::ip::tcp;
using namespace asio::experimental::awaitable_operators;

namespace {

/// The userinfo's %-escapes decoded (Boost.URL checks them); nothing when one is malformed.
std::optional<std::string> percent_decoded(std::string_view s) {
    const auto checked = boost::urls::make_pct_string_view(s);
    if (!checked)
        return std::nullopt;
    return checked->decode();
}

reply convert(const redisReply& r) {
    reply out;
    switch (r.type) {
    case REDIS_REPLY_STRING:
        out.type = reply::kind::string;
        out.str.assign(r.str, r.len);
        break;
    case REDIS_REPLY_STATUS:
        out.type = reply::kind::status;
        out.str.assign(r.str, r.len);
        break;
    case REDIS_REPLY_ERROR:
        out.type = reply::kind::error;
        out.str.assign(r.str, r.len);
        break;
    case REDIS_REPLY_INTEGER:
        out.type = reply::kind::integer;
        out.integer = r.integer;
        break;
    case REDIS_REPLY_ARRAY:
        out.type = reply::kind::array;
        out.elements.reserve(r.elements);
        for (std::size_t i = 0; i < r.elements; ++i)
            out.elements.push_back(convert(*r.element[i]));
        break;
    default:
        out.type = reply::kind::nil;
        break;
    }
    return out;
}

/// hiredis's formatter: RESP bytes of one command, appended to `out`.
void format(const command& c, std::string& out) {
    std::vector<const char*> argv;
    std::vector<std::size_t> lengths;
    argv.reserve(c.size());
    lengths.reserve(c.size());
    for (const auto& arg : c) {
        argv.push_back(arg.data());
        lengths.push_back(arg.size());
    }
    char* formatted = nullptr;
    const int n = redisFormatCommandArgv(&formatted, static_cast<int>(c.size()), argv.data(), lengths.data());
    if (n < 0 || formatted == nullptr)
        throw std::bad_alloc();
    out.append(formatted, static_cast<std::size_t>(n));
    redisFreeCommand(formatted);
}

struct reader_deleter {
    void operator()(redisReader* r) const noexcept { redisReaderFree(r); }
};

/// The TLS context of a rediss:// client, its files read once (at start, before any crawling).
ssl::context make_tls_context(const tls_options& tls) {
    ssl::context context{ssl::context::tls_client};
    context.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                        ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
    // A file that cannot be opened says why in the system's words; one that opens but holds no usable PEM
    // says it in OpenSSL's.
    const auto use = [](const std::string& which, const std::string& path, auto load) {
        if (path.empty())
            return;
        if (!std::ifstream(path))
            throw tls_file_error(which, path, std::strerror(errno));
        boost::system::error_code ec;
        load(path, ec);
        if (ec)
            throw tls_file_error(which, path, ec.message());
    };
    if (tls.insecure) {
        context.set_verify_mode(ssl::verify_none);
    } else {
        context.set_verify_mode(ssl::verify_peer);
        // An unreadable system store leaves ca_file alone to trust: certificates then fail, as they should.
        boost::system::error_code ignored;
        context.set_default_verify_paths(ignored);
    }
    use("ca_file", tls.ca_file,
        [&](const std::string& path, boost::system::error_code& ec) { context.load_verify_file(path, ec); });
    use("cert_file", tls.cert_file, [&](const std::string& path, boost::system::error_code& ec) {
        context.use_certificate_chain_file(path, ec);
    });
    const std::string& key = tls.key_file.empty() ? tls.cert_file : tls.key_file;
    use(tls.key_file.empty() ? "cert_file" : "key_file", key,
        [&](const std::string& path, boost::system::error_code& ec) {
            context.use_private_key_file(path, ssl::context::pem, ec);
        });
    // A system store that could not be read leaves errors queued, which the first handshake would report
    // as its own.
    ERR_clear_error();
    return context;
}

bool is_ip_address(const std::string& host) {
    boost::system::error_code ec;
    asio::ip::make_address(host, ec);
    return !ec;
}

} // namespace

parse_result parse_url(std::string_view url, std::string_view password_from_environment) {
    endpoint e;
    std::string_view rest;
    if (url.starts_with("redis://")) {
        rest = url.substr(8);
    } else if (url.starts_with("rediss://")) {
        rest = url.substr(9);
        e.tls = true;
    } else {
        return {std::nullopt, "a Redis URL starts with redis:// or rediss://"};
    }
    const auto slash = rest.find('/');
    std::string_view authority = rest.substr(0, slash);
    std::string_view path = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash + 1);
    if (const auto at = authority.rfind('@'); at != std::string_view::npos) {
        const auto userinfo = authority.substr(0, at);
        authority.remove_prefix(at + 1);
        const auto colon = userinfo.find(':');
        auto user = percent_decoded(userinfo.substr(0, colon));
        auto password = colon == std::string_view::npos ? std::optional<std::string>{std::string{}}
                                                        : percent_decoded(userinfo.substr(colon + 1));
        if (!user || !password)
            return {std::nullopt, "the Redis URL's user or password has a bad %-escape"};
        if (colon == std::string_view::npos) {
            // redis://secret@host: the lone userinfo is the password, as redis-cli reads it.
            e.password = std::move(*user);
        } else {
            e.username = std::move(*user);
            e.password = std::move(*password);
        }
    }
    if (e.password.empty())
        e.password = std::string(password_from_environment);
    if (!authority.empty() && authority.front() == '[') {
        const auto close = authority.find(']');
        if (close == std::string_view::npos)
            return {std::nullopt, "the Redis URL's IPv6 host has no ']'"};
        e.host = std::string(authority.substr(1, close - 1));
        authority.remove_prefix(close + 1);
        if (!authority.empty() && authority.front() != ':')
            return {std::nullopt, "the Redis URL has text after its IPv6 host"};
        if (!authority.empty())
            e.port = std::string(authority.substr(1));
    } else {
        const auto colon = authority.rfind(':');
        e.host = std::string(authority.substr(0, colon));
        if (colon != std::string_view::npos)
            e.port = std::string(authority.substr(colon + 1));
    }
    if (e.host.empty())
        return {std::nullopt, "the Redis URL has no host"};
    unsigned port = 0;
    const auto [pend, perr] = std::from_chars(e.port.data(), e.port.data() + e.port.size(), port);
    if (perr != std::errc{} || pend != e.port.data() + e.port.size() || port == 0 || port > 65535)
        return {std::nullopt, "the Redis URL's port \"" + e.port + "\" is not a port number"};
    if (!path.empty()) {
        const auto [dend, derr] = std::from_chars(path.data(), path.data() + path.size(), e.db);
        if (derr != std::errc{} || dend != path.data() + path.size() || e.db < 0)
            return {std::nullopt, "the Redis URL's database \"" + std::string(path) + "\" is not a number"};
    }
    return {std::move(e), {}};
}

std::string redacted(const endpoint& e) {
    std::string out = e.tls ? "rediss://" : "redis://";
    if (!e.username.empty() || !e.password.empty())
        out += e.username + (e.password.empty() ? "" : ":***") + "@";
    out += e.host.find(':') != std::string::npos ? "[" + e.host + "]" : e.host;
    out += ":" + e.port + "/" + std::to_string(e.db);
    return out;
}

const reply& checked(const reply& r) {
    if (r.is_error())
        throw server_error("redis: " + r.str);
    return r;
}

struct client::impl {
    impl(asio::any_io_executor ex, client_options o)
        : executor(ex)
        , options(std::move(o))
        , socket(ex)
        , timer(ex)
        , turn(ex, 1) {
        if (options.where.tls)
            tls_context.emplace(make_tls_context(options.tls));
    }

    asio::any_io_executor executor;
    client_options options;
    tcp::socket socket;
    std::optional<ssl::context> tls_context;
    // rediss://: the connection's TLS session over `socket`, made afresh with each connection.
    std::optional<ssl::stream<tcp::socket&>> tls;
    asio::steady_timer timer;
    // A lock for one call at a time: a send takes it, a receive gives it back; waiters queue in order.
    asio::experimental::channel<void(boost::system::error_code)> turn;
    std::unique_ptr<redisReader, reader_deleter> reader;
    bool is_connected = false;
    bool closed = false;
    std::uint64_t connections = 0;
    // Since when every attempt failed (set by the first failure, cleared by an answer): the give-up clock.
    std::optional<std::chrono::steady_clock::time_point> failing_since;
    std::string read_buffer = std::string(16 * 1024, '\0');

    // Called by the call holding the turn, never with an operation of its own under way: the TLS stream
    // can go with the socket.
    void drop() {
        if (!failing_since)
            failing_since = std::chrono::steady_clock::now();
        boost::system::error_code ignored;
        socket.close(ignored);
        tls.reset();
        reader.reset();
        is_connected = false;
    }

    // Each operation races a timer: a Redis that stops answering counts as a lost connection.
    asio::awaitable<boost::system::error_code> connect_bounded(const tcp::endpoint& target) {
        auto result = co_await (socket.async_connect(target, asio::as_tuple(asio::use_awaitable)) ||
                                timer.async_wait(asio::as_tuple(asio::use_awaitable)));
        if (result.index() == 1)
            co_return make_error_code(asio::error::timed_out);
        co_return std::get<0>(std::get<0>(result));
    }

    asio::awaitable<boost::system::error_code> handshake_bounded() {
        auto result =
            co_await (tls->async_handshake(ssl::stream_base::client, asio::as_tuple(asio::use_awaitable)) ||
                      timer.async_wait(asio::as_tuple(asio::use_awaitable)));
        if (result.index() == 1)
            co_return make_error_code(asio::error::timed_out);
        co_return std::get<0>(std::get<0>(result));
    }

    template <class Stream>
    asio::awaitable<boost::system::error_code> write_bounded_on(Stream& stream, const std::string& out) {
        timer.expires_after(options.io_timeout);
        auto result =
            co_await (asio::async_write(stream, asio::buffer(out), asio::as_tuple(asio::use_awaitable)) ||
                      timer.async_wait(asio::as_tuple(asio::use_awaitable)));
        if (result.index() == 1)
            co_return make_error_code(asio::error::timed_out);
        co_return std::get<0>(std::get<0>(result));
    }

    asio::awaitable<boost::system::error_code> write_bounded(const std::string& out) {
        if (tls)
            return write_bounded_on(*tls, out);
        return write_bounded_on(socket, out);
    }

    template <class Stream>
    asio::awaitable<std::tuple<boost::system::error_code, std::size_t>> read_bounded_on(Stream& stream) {
        timer.expires_after(options.io_timeout);
        auto result = co_await (
            stream.async_read_some(asio::buffer(read_buffer), asio::as_tuple(asio::use_awaitable)) ||
            timer.async_wait(asio::as_tuple(asio::use_awaitable)));
        if (result.index() == 1)
            co_return std::tuple{make_error_code(asio::error::timed_out), std::size_t{0}};
        co_return std::get<0>(result);
    }

    asio::awaitable<std::tuple<boost::system::error_code, std::size_t>> read_bounded() {
        if (tls)
            return read_bounded_on(*tls);
        return read_bounded_on(socket);
    }

    /// Why a TLS handshake failed, for the log: the certificate's problem in the fetcher's words, or what
    /// the server's answer suggests.
    std::string handshake_failure(const boost::system::error_code& ec) {
        SSL* ssl = tls->native_handle();
        const long verify = options.tls.insecure ? X509_V_OK : SSL_get_verify_result(ssl);
        ERR_clear_error();
        if (verify != X509_V_OK)
            return "TLS: " + detail::certificate_problem(ssl, verify, options.where.host);
        // A plain Redis reads a ClientHello as the start of an inline command and waits for its end.
        if (ec == asio::error::timed_out)
            return "TLS: no answer to the handshake within the connect timeout (is it a plain redis:// port? "
                   "those stay silent)";
        if (ec == asio::error::eof || ec == ssl::error::stream_truncated ||
            ec == asio::error::connection_reset)
            return "TLS: the server closed the connection during the handshake (" + ec.message() + ")";
        // A plain Redis answers a ClientHello with an error line, which OpenSSL reads as a bad record.
        if (ec.category() == asio::error::get_ssl_category() &&
            ERR_GET_REASON(static_cast<unsigned long>(ec.value())) == SSL_R_WRONG_VERSION_NUMBER)
            return "TLS: the server does not speak TLS (" + ec.message() + "): is it a plain redis:// port?";
        return "TLS handshake failed: " + ec.message();
    }

    /// Connects (and shakes hands, for rediss://) within connect_timeout, then authenticates. Returns why
    /// it failed, or nothing.
    asio::awaitable<std::optional<std::string>> connect_once() {
        drop();
        boost::system::error_code ec;
        std::vector<tcp::endpoint> targets;
        const auto port = static_cast<unsigned short>(std::stoi(options.where.port));
        if (auto address = asio::ip::make_address(options.where.host, ec); !ec) {
            targets.emplace_back(address, port);
        } else {
            tcp::resolver resolver(executor);
            auto [rec, results] = co_await resolver.async_resolve(options.where.host, options.where.port,
                                                                  asio::as_tuple(asio::use_awaitable));
            if (rec)
                co_return rec.message();
            for (const auto& r : results)
                targets.push_back(r.endpoint());
        }
        ec = asio::error::host_not_found;
        for (const auto& target : targets) {
            drop();
            timer.expires_after(options.connect_timeout);
            ec = co_await connect_bounded(target);
            if (!ec)
                break;
        }
        if (ec)
            co_return ec.message();
        socket.set_option(tcp::no_delay(true), ec);
        if (options.where.tls) {
            tls.emplace(socket, *tls_context);
            SSL* ssl = tls->native_handle();
            // SNI carries host names only (RFC 6066 3); an IP address is checked against IP SANs.
            const bool ip = is_ip_address(options.where.host);
            if (!ip)
                SSL_set_tlsext_host_name(ssl, options.where.host.c_str());
            if (!options.tls.insecure) {
                if (ip)
                    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), options.where.host.c_str());
                else
                    SSL_set1_host(ssl, options.where.host.c_str());
            }
            // The handshake spends what the TCP connection left of connect_timeout.
            ec = co_await handshake_bounded();
            if (ec) {
                auto why = handshake_failure(ec);
                drop();
                co_return why;
            }
        }
        reader.reset(redisReaderCreate());
        is_connected = true;
        ++connections;
        std::vector<command> hello;
        if (!options.where.password.empty()) {
            if (options.where.username.empty())
                hello.push_back({"AUTH", options.where.password});
            else
                hello.push_back({"AUTH", options.where.username, options.where.password});
        }
        if (options.where.db != 0)
            hello.push_back({"SELECT", std::to_string(options.where.db)});
        // Under TLS 1.3 a server that wants a client certificate refuses it after the handshake, at the
        // first read: one round trip now makes that a failure to connect, with its reason.
        if (options.where.tls && hello.empty())
            hello.push_back({"PING"});
        if (hello.empty())
            co_return std::nullopt;
        std::vector<reply> answers;
        try {
            answers = co_await exchange(hello);
        } catch (const connection_lost& e) {
            drop();
            std::string why = e.what();
            if (why.find("certificate required") != std::string::npos)
                why += " (the server asks for a client certificate)";
            // The server's alert may be lost to a reset that came first: a likely cause is still worth
            // naming.
            else if (options.where.tls && options.tls.cert_file.empty())
                why += " (right after the TLS handshake: does the server want a client certificate? "
                       "redis-server's tls-auth-clients is on by default)";
            co_return why;
        }
        for (const auto& a : answers) {
            if (a.is_error()) {
                drop();
                // Not a network trouble that waiting cures: the caller hears it (without the password).
                throw server_error("redis: " + a.str);
            }
        }
        co_return std::nullopt;
    }

    void give_up_if_too_long(const std::string& why) const {
        if (options.give_up_after.count() <= 0 || !failing_since)
            return;
        const auto failing = std::chrono::steady_clock::now() - *failing_since;
        if (failing >= options.give_up_after)
            throw unreachable(
                "redis: " + redacted(options.where) + " has not answered for " +
                std::to_string(std::chrono::duration_cast<std::chrono::seconds>(failing).count()) + " s (" +
                why + ")");
    }

    asio::awaitable<void> ensure_connected() {
        auto wait = options.backoff_min;
        std::string last_failure = "not connected";
        for (int attempt = 1; !is_connected; ++attempt) {
            if (closed)
                throw std::runtime_error("redis: the client is closed");
            give_up_if_too_long(last_failure);
            const auto failure = co_await connect_once();
            if (closed) {
                drop();
                throw std::runtime_error("redis: the client is closed");
            }
            if (!failure)
                break;
            last_failure = *failure;
            if (options.on_retry)
                options.on_retry(attempt, "connecting to " + redacted(options.where) + ": " + *failure);
            timer.expires_after(wait);
            co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
            wait = std::min(wait * 2, options.backoff_max);
        }
    }

    /// Writes the commands in one write and reads their answers in order.
    asio::awaitable<std::vector<reply>> exchange(const std::vector<command>& commands) {
        std::string out;
        for (const auto& c : commands)
            format(c, out);
        const auto wec = co_await write_bounded(out);
        if (wec) {
            drop();
            throw connection_lost("redis: writing to " + redacted(options.where) + ": " + wec.message());
        }
        std::vector<reply> answers;
        answers.reserve(commands.size());
        while (answers.size() < commands.size()) {
            void* raw = nullptr;
            if (redisReaderGetReply(reader.get(), &raw) != REDIS_OK) {
                const std::string why = reader->errstr;
                drop();
                throw connection_lost("redis: protocol error from " + redacted(options.where) + ": " + why);
            }
            if (raw != nullptr) {
                std::unique_ptr<redisReply, void (*)(void*)> owned(static_cast<redisReply*>(raw),
                                                                   freeReplyObject);
                answers.push_back(convert(*owned));
                continue;
            }
            auto [rec, n] = co_await read_bounded();
            if (rec) {
                drop();
                throw connection_lost("redis: reading from " + redacted(options.where) + ": " +
                                      rec.message());
            }
            redisReaderFeed(reader.get(), read_buffer.data(), n);
        }
        co_return answers;
    }
};

client::client(asio::any_io_executor executor, client_options options)
    : impl_(std::make_shared<impl>(std::move(executor), std::move(options))) {}

client::~client() {
    close();
}

namespace {

// A free coroutine given the impl by value: a coroutine's body runs only when it is first resumed, and a
// member coroutine would read `this` then, when the client may be gone already.
asio::awaitable<std::vector<reply>> execute_on(std::shared_ptr<client::impl> self,
                                               std::vector<command> commands) {
    if (self->closed)
        throw std::runtime_error("redis: the client is closed");
    co_await self->turn.async_send(boost::system::error_code{}, asio::use_awaitable);
    struct give_back {
        client::impl& i;
        ~give_back() {
            i.turn.try_receive([](boost::system::error_code) {});
        }
    } guard{*self};
    auto wait = self->options.backoff_min;
    for (int attempt = 1;; ++attempt) {
        co_await self->ensure_connected();
        auto answers = co_await self->exchange(commands);
        // A Redis that restarts answers LOADING to every command until its data set is back: nothing ran,
        // so the commands are sent again once it is ready.
        const bool loading = std::all_of(answers.begin(), answers.end(), [](const reply& r) {
            return r.is_error() && r.str.starts_with("LOADING");
        });
        if (!loading) {
            self->failing_since.reset();
            co_return answers;
        }
        if (!self->failing_since)
            self->failing_since = std::chrono::steady_clock::now();
        self->give_up_if_too_long("loading its data set");
        if (self->options.on_retry)
            self->options.on_retry(attempt, redacted(self->options.where) + " is loading its data set");
        self->timer.expires_after(wait);
        co_await self->timer.async_wait(asio::as_tuple(asio::use_awaitable));
        wait = std::min(wait * 2, self->options.backoff_max);
    }
}

asio::awaitable<reply> call_on(std::shared_ptr<client::impl> self, std::vector<command> one) {
    auto answers = co_await execute_on(std::move(self), std::move(one));
    checked(answers.front());
    co_return std::move(answers.front());
}

} // namespace

asio::awaitable<std::vector<reply>> client::execute(std::vector<command> commands) {
    return execute_on(impl_, std::move(commands));
}

asio::awaitable<reply> client::call(command c) {
    std::vector<command> one;
    one.push_back(std::move(c));
    return call_on(impl_, std::move(one));
}

void client::close() {
    if (!impl_)
        return;
    impl_->closed = true;
    // Only the socket: a call under way may have its answer read already, its completion queued, and
    // still feed the reader. The reader is the caller's that holds the turn, and goes with its connection.
    boost::system::error_code ignored;
    impl_->socket.close(ignored);
    impl_->is_connected = false;
    impl_->timer.cancel();
}

bool client::connected() const noexcept {
    return impl_->is_connected;
}

std::uint64_t client::connections() const noexcept {
    return impl_->connections;
}

} // namespace asiocrawl::redis
