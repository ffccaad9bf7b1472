// asiocrawl-bench-tls-state: what OpenSSL keeps per client connection while it waits for an answer, byte by
// byte, with the client set up as the fetcher sets it up (src/http/tls_handshake.cpp: make_tls_context,
// tls_client::handshake).
//
// N client/server pairs over socketpairs in one thread: each handshakes (TLS 1.3, EC P-256 certificate from
// the tests' PKI helper, verified against its CA with the host name checked), the client writes a request,
// reads what the server sent after the handshake (its session tickets), and frees its record buffers, as the
// fetcher does before it waits. The servers are then freed, so what remains is the clients' state.
//
// Printed: malloc's bytes in use per client (mallinfo2 uordblks delta, which counts chunk headers), and with
// --by-site the live OpenSSL allocations per client by the OpenSSL source line that made them (through
// CRYPTO_set_mem_functions; a small header per allocation, so run without it for the malloc figure).
// Variants (--variant): product (the fetcher's settings), no-ticket (SSL_OP_NO_TICKET on the client),
// server-no-tickets (the server sends none), tls12 (TLS 1.2 only), aes128 and chacha20 (the client offers
// only TLS_AES_128_GCM_SHA256, or only TLS_CHACHA20_POLY1305_SHA256), before-tickets (measured before the
// client reads the tickets: what a connection holds between its handshake and its first read).

#include "support/tls_certs.hpp"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <fcntl.h>
#include <malloc.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

// ---- attribution of OpenSSL's allocations (only with --by-site) ----
struct site {
    const char* file = nullptr;
    int line = 0;
};
constexpr std::size_t max_sites = 8192;
site sites[max_sites];
std::size_t site_count = 0;
bool client_side = false; // set around every call made on a client's SSL
bool counting = false;    // allocations made while connections are being made

struct alignas(16) header {
    std::uint32_t size;
    std::uint16_t site_index;
    std::uint8_t client;
    std::uint8_t counted;
};

std::uint16_t site_of(const char* file, int line) {
    for (std::size_t i = 0; i < site_count; ++i)
        if (sites[i].line == line && (sites[i].file == file || std::strcmp(sites[i].file, file) == 0))
            return static_cast<std::uint16_t>(i);
    if (site_count == max_sites)
        return 0;
    sites[site_count] = {file, line};
    return static_cast<std::uint16_t>(site_count++);
}

// Live bytes and allocations per site, client side, counted ones only.
std::vector<long long> live_bytes(max_sites), live_count(max_sites);

void account(const header& h, int sign) {
    if (h.client && h.counted) {
        live_bytes[h.site_index] += sign * static_cast<long long>(h.size);
        live_count[h.site_index] += sign;
    }
}

void* tracked_malloc(std::size_t size, const char* file, int line) {
    auto* h = static_cast<header*>(std::malloc(sizeof(header) + size));
    if (!h)
        return nullptr;
    *h = {static_cast<std::uint32_t>(size), site_of(file ? file : "?", line), client_side, counting};
    account(*h, +1);
    return h + 1;
}

void tracked_free(void* p, const char*, int) {
    if (!p)
        return;
    auto* h = static_cast<header*>(p) - 1;
    account(*h, -1);
    std::free(h);
}

void* tracked_realloc(void* p, std::size_t size, const char* file, int line) {
    if (!p)
        return tracked_malloc(size, file, line);
    if (size == 0) {
        tracked_free(p, file, line);
        return nullptr;
    }
    auto* old = static_cast<header*>(p) - 1;
    const header before = *old;
    account(before, -1);
    auto* h = static_cast<header*>(std::realloc(old, sizeof(header) + size));
    if (!h) {
        account(before, +1);
        return nullptr;
    }
    *h = {static_cast<std::uint32_t>(size), site_of(file ? file : "?", line), client_side, counting};
    account(*h, +1);
    return h + 1;
}

// ---- connections ----
void check(bool ok, const char* what) {
    if (!ok) {
        ERR_print_errors_fp(stderr);
        throw std::runtime_error(what);
    }
}

struct side_guard {
    bool before;
    explicit side_guard(bool client)
        : before(client_side) {
        client_side = client;
    }
    ~side_guard() { client_side = before; }
};

struct pair {
    SSL* client = nullptr;
    SSL* server = nullptr;
    int fds[2] = {-1, -1};
};

/// Runs each side's handshake step until both are done; false if one failed.
bool shake(pair& p) {
    bool client_done = false, server_done = false;
    for (int round = 0; round < 100 && !(client_done && server_done); ++round) {
        if (!client_done) {
            side_guard g(true);
            const int rc = SSL_do_handshake(p.client);
            client_done = rc == 1;
            if (rc != 1 && SSL_get_error(p.client, rc) != SSL_ERROR_WANT_READ)
                return false;
        }
        if (!server_done) {
            const int rc = SSL_do_handshake(p.server);
            server_done = rc == 1;
            if (rc != 1 && SSL_get_error(p.server, rc) != SSL_ERROR_WANT_READ)
                return false;
        }
    }
    return client_done && server_done;
}

struct options {
    std::size_t connections = 1000;
    std::string variant = "product";
    bool by_site = false;
};

bool known_variant(const std::string& name) {
    for (const char* v :
         {"product", "no-ticket", "server-no-tickets", "tls12", "aes128", "chacha20", "before-tickets"})
        if (name == v)
            return true;
    return false;
}

options parse(int argc, char** argv) {
    options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--connections" && i + 1 < argc)
            o.connections = std::stoul(argv[++i]);
        else if (a == "--variant" && i + 1 < argc && known_variant(argv[i + 1]))
            o.variant = argv[++i];
        else if (a == "--by-site")
            o.by_site = true;
        else
            throw std::invalid_argument(
                "usage: asiocrawl-bench-tls-state [--connections N] [--variant "
                "product|no-ticket|server-no-tickets|tls12|aes128|chacha20|before-tickets] [--by-site]");
    }
    return o;
}

SSL_CTX* make_client_context(const options& o, const std::string& ca_pem) {
    SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
    // As make_tls_context in src/http/tls_handshake.cpp.
    SSL_CTX_set_options(ctx, SSL_OP_ALL | SSL_OP_NO_SSLv2 | SSL_OP_NO_SSLv3 | SSL_OP_NO_TLSv1 |
                                 SSL_OP_NO_TLSv1_1 | SSL_OP_IGNORE_UNEXPECTED_EOF);
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS | SSL_MODE_ENABLE_PARTIAL_WRITE |
                              SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    if (o.variant == "no-ticket")
        SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
    if (o.variant == "tls12")
        SSL_CTX_set_max_proto_version(ctx, TLS1_2_VERSION);
    if (o.variant == "chacha20")
        SSL_CTX_set_ciphersuites(ctx, "TLS_CHACHA20_POLY1305_SHA256");
    if (o.variant == "aes128")
        SSL_CTX_set_ciphersuites(ctx, "TLS_AES_128_GCM_SHA256");
    BIO* bio = BIO_new_mem_buf(ca_pem.data(), static_cast<int>(ca_pem.size()));
    X509* ca = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
    check(ca != nullptr, "CA");
    X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx), ca);
    X509_free(ca);
    BIO_free(bio);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
    return ctx;
}

} // namespace

int main(int argc, char** argv) try {
    const options o = parse(argc, argv);
    if (o.by_site)
        CRYPTO_set_mem_functions(tracked_malloc, tracked_realloc, tracked_free);
    rlimit limit{};
    getrlimit(RLIMIT_NOFILE, &limit);
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);

    const auto pki = asiocrawl::test::make_test_pki();
    auto server_context = asiocrawl::test::make_server_context(pki);
    SSL_CTX* server_ctx = server_context.native_handle();
    if (o.variant == "server-no-tickets")
        SSL_CTX_set_num_tickets(server_ctx, 0);
    SSL_CTX* client_ctx = make_client_context(o, pki.ca_pem);

    // One pair first, so one-time state (method tables, providers, caches) is not counted per connection.
    std::vector<pair> pairs(o.connections + 1);
    const auto open = [&](pair& p) {
        check(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, p.fds) == 0, "socketpair");
        {
            side_guard g(true);
            p.client = SSL_new(client_ctx);
            SSL_set_fd(p.client, p.fds[0]);
            SSL_set_tlsext_host_name(p.client, "localhost");
            SSL_set1_host(p.client, "localhost");
            SSL_set_connect_state(p.client);
        }
        p.server = SSL_new(server_ctx);
        SSL_set_fd(p.server, p.fds[1]);
        SSL_set_accept_state(p.server);
        check(shake(p), "handshake");
        {
            side_guard g(true);
            check(SSL_get_verify_result(p.client) == X509_V_OK, "verification");
            constexpr char request[] = "GET / HTTP/1.1\r\nHost: localhost\r\nUser-Agent: asiocrawl\r\n\r\n";
            check(SSL_write(p.client, request, sizeof request - 1) > 0, "write");
        }
        char buffer[4096];
        check(SSL_read(p.server, buffer, sizeof buffer) > 0, "server read");
        {
            // The tickets the server sent after its Finished (TLS 1.3) are read as the fetcher reads on a
            // wake-up; then the record buffers go, as before the fetcher's wait.
            side_guard g(true);
            if (o.variant != "before-tickets") {
                const int n = SSL_read(p.client, buffer, sizeof buffer);
                check(n < 0 && SSL_get_error(p.client, n) == SSL_ERROR_WANT_READ, "client read");
            }
            SSL_free_buffers(p.client);
        }
    };
    open(pairs[0]);
    malloc_trim(0);
    const auto before = mallinfo2();
    counting = true;
    for (std::size_t i = 1; i < pairs.size(); ++i)
        open(pairs[i]);
    counting = false;
    for (std::size_t i = 1; i < pairs.size(); ++i) {
        SSL_free(pairs[i].server);
        pairs[i].server = nullptr;
    }
    const auto after = mallinfo2();
    const double n = static_cast<double>(o.connections);
    std::printf("variant %s, %zu client connections (%s, %s)\n", o.variant.c_str(), o.connections,
                SSL_get_version(pairs[1].client), SSL_get_cipher_name(pairs[1].client));
    std::printf("malloc in use per client: %.0f B (uordblks delta%s)\n",
                (static_cast<double>(after.uordblks) - static_cast<double>(before.uordblks)) / n,
                o.by_site ? ", with the attribution's headers" : "");
    if (o.by_site) {
        std::vector<std::pair<long long, std::size_t>> order;
        long long total = 0, count = 0;
        for (std::size_t i = 0; i < site_count; ++i)
            if (live_bytes[i] != 0) {
                order.emplace_back(live_bytes[i], i);
                total += live_bytes[i];
                count += live_count[i];
            }
        std::sort(order.rbegin(), order.rend());
        std::printf("OpenSSL live per client: %.0f B requested in %.1f allocations\n", total / n, count / n);
        for (const auto& [bytes, i] : order)
            if (bytes / n >= 1.0)
                std::printf("  %7.0f B %5.1f x  %s:%d\n", bytes / n, live_count[i] / n, sites[i].file,
                            sites[i].line);
    }
    for (auto& p : pairs) {
        SSL_free(p.client);
        SSL_free(p.server);
        close(p.fds[0]);
        close(p.fds[1]);
    }
    SSL_CTX_free(client_ctx);
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "asiocrawl-bench-tls-state: %s\n", e.what());
    return 1;
}
