// A Redis client on the crawler's own executor: hiredis formats commands (redisFormatCommandArgv) and parses
// answers (redisReader); the bytes travel over an Asio socket. One connection, no thread of its own. A call
// sends all its commands in one write and matches the answers in order (pipelining); calls made while one
// is under way wait their turn. A lost connection is made again with backoff. A rediss:// endpoint speaks TLS
// (OpenSSL through Asio's ssl::stream over the same socket); each connection is a fresh TLS session.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace asiocrawl::redis {

/// Where a shared crawl's Redis is: redis://[[user]:password@]host[:port][/db].
struct endpoint {
    std::string host = "127.0.0.1";
    std::string port = "6379";
    int db = 0;
    std::string username; ///< empty: AUTH with the password alone
    std::string password; ///< never logged; empty: no AUTH
    bool tls = false;     ///< rediss://
};

/// Parses a redis:// or rediss:// URL; percent-escapes in the user and password are decoded. The error
/// message never contains the password. `password_from_environment` is used when the URL has none.
struct parse_result {
    std::optional<endpoint> value;
    std::string error;
};
parse_result parse_url(std::string_view url, std::string_view password_from_environment = {});
/// The URL without its password, for logs.
std::string redacted(const endpoint& e);

/// One answer, converted from hiredis's redisReply.
struct reply {
    enum class kind { string, array, integer, nil, status, error };
    kind type = kind::nil;
    std::string str; ///< string, status and error
    long long integer = 0;
    std::vector<reply> elements;

    bool is_error() const noexcept { return type == kind::error; }
};

/// A Redis error answer (WRONGTYPE, NOSCRIPT, a Lua error...): the server got the command and refused it.
class server_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// The connection broke while commands were under way: they may or may not have run.
class connection_lost : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Redis stayed unreachable (or kept failing, or kept loading) for client_options::give_up_after.
class unreachable : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// A TLS file (CA, client certificate or key) that cannot be read or used. Thrown by the client's
/// constructor.
class tls_file_error : public std::runtime_error {
public:
    tls_file_error(std::string which_file, std::string file_path, const std::string& why)
        : std::runtime_error("cannot use " + file_path + ": " + why)
        , which(std::move(which_file))
        , path(std::move(file_path)) {}
    std::string which; ///< "ca_file", "cert_file" or "key_file"
    std::string path;
};

/// TLS for a rediss:// endpoint. The server's certificate is verified against the system trust store and
/// ca_file, and its names against the endpoint's host (an IP address against the certificate's IP
/// addresses), unless `insecure`.
struct tls_options {
    std::string ca_file;   ///< extra trusted CA certificates (PEM); empty: the system store only
    std::string cert_file; ///< a client certificate (PEM chain); empty: none
    std::string key_file;  ///< its private key (PEM); empty: read from cert_file
    bool insecure = false; ///< no verification of the server's certificate or name
};

/// A command as its arguments ("SET", "k", "v"); binary-safe.
using command = std::vector<std::string>;

struct client_options {
    endpoint where;
    /// Used when where.tls.
    tls_options tls;
    /// The TCP connection and, for rediss://, the TLS handshake.
    std::chrono::milliseconds connect_timeout{2000};
    /// An answer that takes longer counts as a lost connection.
    std::chrono::milliseconds io_timeout{10000};
    /// Reconnection backoff: doubles from min to max.
    std::chrono::milliseconds backoff_min{50};
    std::chrono::milliseconds backoff_max{2000};
    /// A Redis that has not answered for this long (every call since failed): calls throw unreachable.
    /// Zero: wait for ever.
    std::chrono::milliseconds give_up_after{0};
    /// Told about each failed attempt to connect (attempt number, why: a TLS failure names its reason, such
    /// as the certificate's problem); never given the password.
    std::function<void(int, const std::string&)> on_retry;
};

class client {
public:
    /// Reads the TLS files of a rediss:// endpoint now: throws tls_file_error when one cannot be used.
    client(boost::asio::any_io_executor executor, client_options options);
    ~client();
    client(const client&) = delete;
    client& operator=(const client&) = delete;

    /// Sends `commands` in one write and returns their answers in order (error answers included, as
    /// values). Connects first if needed, retrying with backoff until it succeeds, close() is called or
    /// give_up_after has passed since Redis last answered (unreachable). Throws connection_lost when the
    /// connection breaks with commands under way (they may have run), and std::runtime_error after close().
    boost::asio::awaitable<std::vector<reply>> execute(std::vector<command> commands);
    /// One command; an error answer is thrown as server_error.
    boost::asio::awaitable<reply> call(command c);

    /// Closes the connection and fails every call now and later.
    void close();
    bool connected() const noexcept;
    /// Connections made so far (a reconnect counts).
    std::uint64_t connections() const noexcept;

    struct impl; // shared by the calls under way: they outlive the client safely

private:
    std::shared_ptr<impl> impl_;
};

/// Throws server_error if `r` is an error answer; returns it otherwise.
const reply& checked(const reply& r);

} // namespace asiocrawl::redis
