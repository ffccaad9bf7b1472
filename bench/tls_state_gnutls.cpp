// asiocrawl-bench-tls-state-gnutls: the counterpart of asiocrawl-bench-tls-state with a GnuTLS client, to
// know whether another TLS library from Debian would keep a waiting connection under 8 KiB
// (docs/FETCHING.md). The product does not use GnuTLS; this only measures it.
//
// N client/server pairs over socketpairs, the servers OpenSSL (the tests' PKI helper, TLS 1.3, EC P-256), the
// clients GnuTLS with the default priorities, the certificate verified against the CA and the host name
// checked. Each client handshakes, writes a request and reads what the server sent after the handshake (its
// session tickets); the servers are then freed. Printed: malloc's bytes in use per client (mallinfo2).

#include "support/tls_certs.hpp"

#include <gnutls/gnutls.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <malloc.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

void check(bool ok, const char* what) {
    if (!ok) {
        ERR_print_errors_fp(stderr);
        throw std::runtime_error(what);
    }
}

struct pair {
    gnutls_session_t client = nullptr;
    SSL* server = nullptr;
    int fds[2] = {-1, -1};
};

} // namespace

int main(int argc, char** argv) try {
    std::size_t connections = 1000;
    bool no_tickets = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--connections" && i + 1 < argc)
            connections = std::stoul(argv[++i]);
        else if (a == "--no-tickets")
            no_tickets = true; // GNUTLS_NO_TICKETS: the client asks for none
        else
            throw std::invalid_argument(
                "usage: asiocrawl-bench-tls-state-gnutls [--connections N] [--no-tickets]");
    }
    rlimit limit{};
    getrlimit(RLIMIT_NOFILE, &limit);
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);

    check(gnutls_global_init() == 0, "gnutls_global_init");
    const auto pki = asiocrawl::test::make_test_pki();
    auto server_context = asiocrawl::test::make_server_context(pki);
    gnutls_certificate_credentials_t credentials = nullptr;
    check(gnutls_certificate_allocate_credentials(&credentials) == 0, "credentials");
    gnutls_datum_t ca{reinterpret_cast<unsigned char*>(const_cast<char*>(pki.ca_pem.data())),
                      static_cast<unsigned>(pki.ca_pem.size())};
    check(gnutls_certificate_set_x509_trust_mem(credentials, &ca, GNUTLS_X509_FMT_PEM) == 1, "trust");

    std::vector<pair> pairs(connections + 1);
    const auto open = [&](pair& p) {
        check(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, p.fds) == 0, "socketpair");
        check(gnutls_init(&p.client,
                          GNUTLS_CLIENT | GNUTLS_NONBLOCK | (no_tickets ? GNUTLS_NO_TICKETS : 0)) == 0,
              "gnutls_init");
        gnutls_set_default_priority(p.client);
        gnutls_server_name_set(p.client, GNUTLS_NAME_DNS, "localhost", 9);
        gnutls_credentials_set(p.client, GNUTLS_CRD_CERTIFICATE, credentials);
        gnutls_session_set_verify_cert(p.client, "localhost", 0);
        gnutls_transport_set_int(p.client, p.fds[0]);
        p.server = SSL_new(server_context.native_handle());
        SSL_set_fd(p.server, p.fds[1]);
        SSL_set_accept_state(p.server);
        bool client_done = false, server_done = false;
        for (int round = 0; round < 100 && !(client_done && server_done); ++round) {
            if (!client_done) {
                const int rc = gnutls_handshake(p.client);
                client_done = rc == 0;
                check(rc == 0 || rc == GNUTLS_E_AGAIN, "client handshake");
            }
            if (!server_done) {
                const int rc = SSL_do_handshake(p.server);
                server_done = rc == 1;
                check(rc == 1 || SSL_get_error(p.server, rc) == SSL_ERROR_WANT_READ, "server handshake");
            }
        }
        check(client_done && server_done, "handshake");
        constexpr char request[] = "GET / HTTP/1.1\r\nHost: localhost\r\nUser-Agent: asiocrawl\r\n\r\n";
        check(gnutls_record_send(p.client, request, sizeof request - 1) > 0, "write");
        char buffer[4096];
        check(SSL_read(p.server, buffer, sizeof buffer) > 0, "server read");
        check(gnutls_record_recv(p.client, buffer, sizeof buffer) == GNUTLS_E_AGAIN, "client read");
    };
    open(pairs[0]);
    malloc_trim(0);
    const auto before = mallinfo2();
    for (std::size_t i = 1; i < pairs.size(); ++i)
        open(pairs[i]);
    for (std::size_t i = 1; i < pairs.size(); ++i) {
        SSL_free(pairs[i].server);
        pairs[i].server = nullptr;
    }
    const auto after = mallinfo2();
    char* description = gnutls_session_get_desc(pairs[1].client);
    std::printf("GnuTLS %s client%s, %zu connections (%s)\n", gnutls_check_version(nullptr),
                no_tickets ? " without tickets" : "", connections, description);
    gnutls_free(description);
    std::printf("malloc in use per client: %.0f B (uordblks delta)\n",
                (static_cast<double>(after.uordblks) - static_cast<double>(before.uordblks)) /
                    static_cast<double>(connections));
    for (auto& p : pairs) {
        gnutls_deinit(p.client);
        SSL_free(p.server);
        close(p.fds[0]);
        close(p.fds[1]);
    }
    gnutls_certificate_free_credentials(credentials);
    gnutls_global_deinit();
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "asiocrawl-bench-tls-state-gnutls: %s\n", e.what());
    return 1;
}
