// asiocrawl-bench-tls-state-mbedtls: a lower bound of what an mbedTLS client connection keeps, to know
// whether Debian's mbedTLS would keep a waiting connection under 8 KiB (docs/FETCHING.md). The product does
// not use mbedTLS; this only measures it. Debian's build (2.28) has no TLS 1.3 and no
// MBEDTLS_SSL_VARIABLE_BUFFER_LENGTH: mbedtls_ssl_setup allocates both record buffers at their full size and
// keeps them until mbedtls_ssl_free. Measured: malloc's bytes in use per client after mbedtls_ssl_setup,
// before any handshake (which only adds).

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/ssl.h>
#include <mbedtls/version.h>

#include <malloc.h>

#include <cstdio>
#include <memory>
#include <vector>

int main() {
    constexpr std::size_t connections = 1000;
    mbedtls_entropy_context entropy;
    mbedtls_ctr_drbg_context random;
    mbedtls_ssl_config config;
    mbedtls_entropy_init(&entropy);
    mbedtls_ctr_drbg_init(&random);
    mbedtls_ssl_config_init(&config);
    if (mbedtls_ctr_drbg_seed(&random, mbedtls_entropy_func, &entropy, nullptr, 0) != 0 ||
        mbedtls_ssl_config_defaults(&config, MBEDTLS_SSL_IS_CLIENT, MBEDTLS_SSL_TRANSPORT_STREAM,
                                    MBEDTLS_SSL_PRESET_DEFAULT) != 0) {
        std::fprintf(stderr, "asiocrawl-bench-tls-state-mbedtls: setup failed\n");
        return 1;
    }
    mbedtls_ssl_conf_rng(&config, mbedtls_ctr_drbg_random, &random);
    mbedtls_ssl_conf_authmode(&config, MBEDTLS_SSL_VERIFY_REQUIRED);
    auto clients = std::make_unique<mbedtls_ssl_context[]>(connections);
    malloc_trim(0);
    const auto before = mallinfo2();
    for (std::size_t i = 0; i < connections; ++i) {
        mbedtls_ssl_init(&clients[i]);
        if (mbedtls_ssl_setup(&clients[i], &config) != 0 ||
            mbedtls_ssl_set_hostname(&clients[i], "localhost") != 0) {
            std::fprintf(stderr, "asiocrawl-bench-tls-state-mbedtls: mbedtls_ssl_setup failed\n");
            return 1;
        }
    }
    const auto after = mallinfo2();
    std::printf("mbedTLS %s client, %zu connections set up, no handshake yet\n", MBEDTLS_VERSION_STRING,
                connections);
    std::printf("malloc in use per client: %.0f B (uordblks delta) + %zu B the mbedtls_ssl_context itself\n",
                (static_cast<double>(after.uordblks) - static_cast<double>(before.uordblks)) /
                    static_cast<double>(connections),
                sizeof(mbedtls_ssl_context));
    for (std::size_t i = 0; i < connections; ++i)
        mbedtls_ssl_free(&clients[i]);
    mbedtls_ssl_config_free(&config);
    mbedtls_ctr_drbg_free(&random);
    mbedtls_entropy_free(&entropy);
    return 0;
}
