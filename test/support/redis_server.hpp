// A real redis-server for a test: on a free loopback port (redis has no "--port 0": a port is picked by
// binding 127.0.0.1:0 first), in a temporary directory, with an append-only file so that a restart keeps
// what was written. Stopped with SIGKILL by pid when the test ends; every wait is bounded. With a
// redis_tls_setup it also listens for TLS (Debian's redis-server links OpenSSL) on a second port; the plain
// port stays for the test's own checks (command()), the client under test uses tls_url().
#pragma once

#include "support/process.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace asiocrawl::test {

/// The full path of `program` on $PATH, or empty.
inline std::string find_program(const std::string& program) {
    const char* path = std::getenv("PATH");
    std::stringstream dirs(path ? path : "/usr/bin:/bin");
    for (std::string dir; std::getline(dirs, dir, ':');) {
        const auto candidate = std::filesystem::path(dir) / program;
        if (::access(candidate.c_str(), X_OK) == 0)
            return candidate.string();
    }
    return {};
}

/// A loopback TCP port nobody listens on now (the kernel's pick for 127.0.0.1:0).
inline std::uint16_t free_loopback_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
        ::close(fd);
        throw std::runtime_error("no free loopback port");
    }
    ::close(fd);
    return ntohs(address.sin_port);
}

/// One RESP command over a blocking socket, for the test's own checks (the crawler uses
/// src/store/redis_client.cpp). Returns the raw answer bytes read within `limit`; empty when nothing
/// answered.
inline std::string redis_raw(std::uint16_t port, const std::string& resp,
                             std::chrono::milliseconds limit = std::chrono::milliseconds{1000}) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(port);
    std::string answer;
    if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
        ::send(fd, resp.data(), resp.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(resp.size())) {
        pollfd p{fd, POLLIN, 0};
        char buffer[4096];
        while (::poll(&p, 1, static_cast<int>(limit.count())) > 0) {
            const auto n = ::recv(fd, buffer, sizeof buffer, 0);
            if (n <= 0)
                break;
            answer.append(buffer, static_cast<std::size_t>(n));
            if (answer.ends_with("\r\n"))
                break;
        }
    }
    ::close(fd);
    return answer;
}

/// PEM texts (e.g. from support/tls_certs.hpp's make_test_pki) for a redis-server speaking TLS.
struct redis_tls_setup {
    std::string ca_pem;   ///< trusted for client certificates (tls-ca-cert-file)
    std::string cert_pem; ///< the server's certificate
    std::string key_pem;
    bool auth_clients = false; ///< tls-auth-clients: a client certificate signed by ca_pem is required
};

class redis_server {
public:
    /// Skips nothing: a missing redis-server fails the test (scripts/install-deps.sh installs it).
    redis_server()
        : program_(find_program("redis-server"))
        , port_(free_loopback_port()) {
        if (program_.empty())
            throw std::runtime_error("redis-server is not installed (scripts/install-deps.sh installs it)");
        start();
    }

    /// Also on a TLS port, its PEM files written into the server's directory.
    explicit redis_server(const redis_tls_setup& tls)
        : program_(find_program("redis-server"))
        , port_(free_loopback_port())
        , tls_port_(free_loopback_port()) {
        while (tls_port_ == port_)
            tls_port_ = free_loopback_port();
        if (program_.empty())
            throw std::runtime_error("redis-server is not installed (scripts/install-deps.sh installs it)");
        const std::pair<const char*, const std::string*> files[] = {
            {"ca.pem", &tls.ca_pem}, {"server.pem", &tls.cert_pem}, {"server.key", &tls.key_pem}};
        for (const auto& [name, pem] : files) {
            std::ofstream out(dir_.path / name, std::ios::binary);
            out << *pem;
            if (!out.flush())
                throw std::runtime_error(std::string("cannot write ") + name);
        }
        tls_arguments_ = {"--tls-port",         std::to_string(tls_port_),
                          "--tls-cert-file",    (dir_.path / "server.pem").string(),
                          "--tls-key-file",     (dir_.path / "server.key").string(),
                          "--tls-ca-cert-file", (dir_.path / "ca.pem").string(),
                          "--tls-auth-clients", tls.auth_clients ? "yes" : "no"};
        start();
    }

    std::uint16_t port() const noexcept { return port_; }
    std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_) + "/0"; }
    std::uint16_t tls_port() const noexcept { return tls_port_; }
    /// The TLS port as `host` names it (a certificate is checked against that name).
    std::string tls_url(const std::string& host = "127.0.0.1") const {
        return "rediss://" + host + ":" + std::to_string(tls_port_) + "/0";
    }
    pid_t pid() const noexcept { return process_ ? process_->pid() : -1; }
    const std::filesystem::path& dir() const noexcept { return dir_.path; }

    /// Starts the server (again, on the same port and directory: the append-only file is replayed) and
    /// waits until it answers PING.
    void start() {
        std::vector<std::string> argv{program_,
                                      "--port",
                                      std::to_string(port_),
                                      "--bind",
                                      "127.0.0.1",
                                      "--dir",
                                      dir_.path.string(),
                                      "--save",
                                      "",
                                      "--appendonly",
                                      "yes",
                                      "--appendfsync",
                                      "always",
                                      "--daemonize",
                                      "no",
                                      "--protected-mode",
                                      "no",
                                      "--logfile",
                                      (dir_.path / "redis.log").string()};
        argv.insert(argv.end(), tls_arguments_.begin(), tls_arguments_.end());
        process_ = std::make_unique<child_process>(std::move(argv));
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds{10};
        while (std::chrono::steady_clock::now() < deadline) {
            if (redis_raw(port_, "*1\r\n$4\r\nPING\r\n", std::chrono::milliseconds{200}) == "+PONG\r\n")
                return;
            std::this_thread::sleep_for(std::chrono::milliseconds{20});
        }
        throw std::runtime_error("redis-server did not answer PING within 10 s on port " +
                                 std::to_string(port_));
    }

    /// SIGKILL, as an OOM kill or a node loss would do it.
    void kill() {
        if (process_)
            process_->signal(SIGKILL);
        process_.reset(); // reaps it
    }

    /// A command's raw answer, e.g. command("DBSIZE") -> ":42\r\n".
    std::string command(std::initializer_list<std::string> args) const {
        std::string resp = "*" + std::to_string(args.size()) + "\r\n";
        for (const auto& a : args)
            resp += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
        return redis_raw(port_, resp);
    }

    ~redis_server() { kill(); }

private:
    temp_dir dir_{"redis"};
    std::string program_;
    std::uint16_t port_;
    std::uint16_t tls_port_ = 0;
    std::vector<std::string> tls_arguments_;
    std::unique_ptr<child_process> process_;
};

} // namespace asiocrawl::test
