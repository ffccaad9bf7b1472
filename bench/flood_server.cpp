// A hostile HTTP/1.1 server for bench/hostile_bench.sh: each flood is an endless answer that a careless
// client keeps in memory (an endless chunk extension, trailer section, header, status line, body, gzip
// bomb...). It sends a flood until the client hangs up or `--volume` bytes have gone out (counted here,
// server-side), then appends one line to the log: "NAME BYTES REASON MS" (REASON: volume or hangup).
//
// Plain POSIX sockets, one thread per connection (a benchmark tool, not the product: the crawler under test
// uses none of this). Pages:
//   /idle          links to /good1 and /good2: the crawl whose peak RSS is the baseline
//   /root/NAME     links to /flood/NAME, /good1 and /good2
//   /good1 /good2  small HTML pages
//   /flood/NAME    the flood NAME (--list prints them)
//   anything else  404 (robots.txt too)
// Prints its port on stdout once it listens, then serves until killed.

#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

namespace {

using clock_type = std::chrono::steady_clock;

std::uint64_t volume = 1ull << 30;
std::chrono::milliseconds trickle_interval{100};
std::string log_path;
std::mutex log_mutex;

/// One flood: the bytes that open the answer, then `unit` again and again (each copy a send), waiting `pause`
/// between sends when it is not zero.
struct flood {
    std::string prefix;
    std::string unit;
    std::chrono::milliseconds pause{0};
};

std::string repeated(std::string_view pattern, std::size_t at_least) {
    std::string out;
    out.reserve(at_least + pattern.size());
    while (out.size() < at_least)
        out.append(pattern);
    return out;
}

std::string chunk(std::string_view data) {
    char size[32];
    std::snprintf(size, sizeof size, "%zx\r\n", data.size());
    return std::string(size) + std::string(data) + "\r\n";
}

/// An endless gzip stream of zeros: the gzip header and a first deflate block, then a block that may repeat
/// for ever. Each block ends with a full flush, which empties the window: the next block of zeros compresses
/// to the same bytes, and any number of them in a row is a valid (never finished) gzip member. 1 MiB of
/// zeros is about 1 KiB of it.
std::pair<std::string, std::string> gzip_of_endless_zeros() {
    z_stream z{};
    if (deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) != Z_OK)
        throw std::runtime_error("deflateInit2 failed");
    const std::string zeros(1u << 20, '\0');
    auto block = [&] {
        std::string out(zeros.size(), '\0');
        z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(zeros.data()));
        z.avail_in = static_cast<uInt>(zeros.size());
        z.next_out = reinterpret_cast<Bytef*>(out.data());
        z.avail_out = static_cast<uInt>(out.size());
        if (deflate(&z, Z_FULL_FLUSH) != Z_OK || z.avail_in != 0)
            throw std::runtime_error("deflate failed");
        out.resize(out.size() - z.avail_out);
        return out;
    };
    const std::string first = block();
    const std::string second = block();
    const std::string third = block();
    deflateEnd(&z);
    if (second != third)
        throw std::runtime_error("a full-flushed block of zeros does not repeat");
    return {first, second};
}

const std::map<std::string, flood, std::less<>>& floods() {
    static const std::map<std::string, flood, std::less<>> all = [] {
        const std::string chunked_head =
            "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n";
        const std::string binary_chunked_head =
            "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n";
        const std::size_t unit = 64u << 10;
        const auto [gzip_first, gzip_block] = gzip_of_endless_zeros();
        std::map<std::string, flood, std::less<>> m;
        m["chunk-extension"] = {chunked_head + "10;ext=", repeated("x", unit)};
        m["trailer-section"] = {chunked_head + "5\r\nhello\r\n0\r\n", repeated("X-a: b\r\n", unit)};
        m["trailer-value"] = {chunked_head + "5\r\nhello\r\n0\r\nX-a: ", repeated("b", unit)};
        m["header-field"] = {"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-a: ", repeated("a", unit)};
        m["header-count"] = {"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n", repeated("X-a: b\r\n", unit)};
        m["status-line"] = {"HTTP/1.1 200 ", repeated("O", unit)};
        m["chunk-size-digits"] = {chunked_head, repeated("0", unit)};
        m["interim-1xx"] = {
            "", repeated("HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n", unit)};
        m["chunked-body"] = {binary_chunked_head, chunk(repeated("0123456789abcdef", unit))};
        m["close-body"] = {
            "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nConnection: close\r\n\r\n",
            repeated("0123456789abcdef", unit)};
        // A body that ends exactly at the volume: above the default body limit (refused on its head), within
        // a raised one.
        const std::string length_head =
            "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: ";
        std::uint64_t length = volume;
        for (int i = 0; i < 2; ++i) // the head's length depends on the number's digits
            length = volume -
                     std::min<std::uint64_t>(volume, length_head.size() + std::to_string(length).size() + 4);
        m["content-length"] = {length_head + std::to_string(length) + "\r\n\r\n",
                               repeated("0123456789abcdef", unit)};
        m["gzip-bomb"] = {"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\n"
                          "Connection: close\r\n\r\n" +
                              gzip_first,
                          repeated(gzip_block, unit)};
        m["gzip-transfer"] = {
            "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: gzip, chunked\r\n\r\n" +
                chunk(gzip_first),
            chunk(repeated(gzip_block, unit))};
        // A kilobyte of an endless body (delimited by the close, so that no length gives it away) per pause:
        // request_timeout ends it, not the volume.
        m["slow-trickle"] = {"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n\r\n",
                             repeated("<p>trickle</p>\n", 1024), trickle_interval};
        return m;
    }();
    return all;
}

bool send_all(int fd, std::string_view data) {
    while (!data.empty()) {
        const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
        if (n <= 0) {
            if (n < 0 && errno == EINTR)
                continue;
            return false;
        }
        data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

void log_flood(std::string_view name, std::uint64_t bytes, const char* reason, clock_type::time_point start) {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - start).count();
    std::lock_guard lock(log_mutex);
    if (FILE* f = std::fopen(log_path.c_str(), "a")) {
        std::fprintf(f, "%.*s %llu %s %lld\n", static_cast<int>(name.size()), name.data(),
                     static_cast<unsigned long long>(bytes), reason, static_cast<long long>(ms));
        std::fclose(f);
    }
}

/// Sends the flood until the volume is out or the client is gone.
void send_flood(int fd, std::string_view name, const flood& f) {
    const auto start = clock_type::now();
    std::uint64_t sent = 0;
    auto send_part = [&](std::string_view part) {
        if (sent + part.size() > volume)
            part = part.substr(0, static_cast<std::size_t>(volume - sent));
        if (!send_all(fd, part))
            return false;
        sent += part.size();
        return sent < volume;
    };
    bool going = send_part(f.prefix);
    while (going) {
        going = send_part(f.unit);
        if (going && f.pause.count() > 0)
            std::this_thread::sleep_for(f.pause);
    }
    log_flood(name, sent, sent >= volume ? "volume" : "hangup", start);
}

std::string page(std::string_view body) {
    return "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: " + std::to_string(body.size()) +
           "\r\n\r\n" + std::string(body);
}

void serve(int fd) {
    std::string in;
    char buffer[8192];
    for (;;) {
        std::size_t end;
        while ((end = in.find("\r\n\r\n")) == std::string::npos) {
            if (in.size() > (64u << 10))
                return;
            const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
            if (n <= 0)
                return;
            in.append(buffer, static_cast<std::size_t>(n));
        }
        const std::string head = in.substr(0, end);
        in.erase(0, end + 4);
        const auto first_space = head.find(' ');
        const auto second_space = head.find(' ', first_space + 1);
        if (first_space == std::string::npos || second_space == std::string::npos)
            return;
        const std::string target = head.substr(first_space + 1, second_space - first_space - 1);
        std::string answer;
        if (target == "/idle") {
            answer = page("<html><body><a href=\"/good1\">1</a> <a href=\"/good2\">2</a></body></html>\n");
        } else if (target.starts_with("/root/")) {
            answer = page("<html><body><a href=\"/flood/" + target.substr(6) +
                          "\">flood</a> <a href=\"/good1\">1</a> <a href=\"/good2\">2</a></body></html>\n");
        } else if (target == "/good1" || target == "/good2") {
            answer = page("<html><body><p>good</p><a href=\"/good1\">1</a></body></html>\n");
        } else if (target.starts_with("/flood/")) {
            const auto name = std::string_view(target).substr(7);
            const auto it = floods().find(name);
            if (it != floods().end()) {
                send_flood(fd, name, it->second);
                return;
            }
        }
        if (answer.empty())
            answer =
                "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 10\r\n\r\nnot found\n";
        if (!send_all(fd, answer))
            return;
    }
}

int usage(const char* message) {
    std::cerr << "asiocrawl-bench-flood-server: " << message
              << "\nUsage: asiocrawl-bench-flood-server --log FILE [--port N] [--volume BYTES] "
                 "[--trickle-interval-ms N] | --list\n";
    return 2;
}

} // namespace

int main(int argc, char* argv[]) {
    unsigned short port = 0;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        const bool has_value = i + 1 < argc;
        if (arg == "--list") {
            for (const auto& [name, _] : floods())
                std::cout << name << "\n";
            return 0;
        } else if (arg == "--port" && has_value) {
            port = static_cast<unsigned short>(std::stoul(argv[++i]));
        } else if (arg == "--volume" && has_value) {
            volume = std::stoull(argv[++i]);
        } else if (arg == "--trickle-interval-ms" && has_value) {
            trickle_interval = std::chrono::milliseconds(std::stoll(argv[++i]));
        } else if (arg == "--log" && has_value) {
            log_path = argv[++i];
        } else {
            return usage("unknown argument");
        }
    }
    if (log_path.empty())
        return usage("--log is needed");
    floods(); // made before the first connection: the gzip blocks take a few milliseconds

    const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int on = 1;
    ::setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(port);
    socklen_t length = sizeof address;
    if (::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(listener, 128) != 0 ||
        ::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
        std::perror("asiocrawl-bench-flood-server: listen");
        return 1;
    }
    std::cout << ntohs(address.sin_port) << std::endl;
    for (;;) {
        const int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED || errno == EMFILE)
                continue;
            std::perror("asiocrawl-bench-flood-server: accept");
            return 1;
        }
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
        std::thread([fd] {
            serve(fd);
            ::close(fd);
        }).detach();
    }
}
