// A test suite that speaks TLS to its own loopback servers: one throwaway PKI (a CA and a certificate for
// "localhost" and 127.0.0.1) made once for the whole suite, and the CA in a file for fetch_config's ca_file.
#pragma once

#include "support/tls_certs.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <optional>

namespace asiocrawl::test {

/// Derive a fixture from it: `pki` and `ca_file` exist from the suite's start to its end.
struct pki_suite : ::testing::Test {
    static inline std::optional<test_pki> pki;
    static inline std::unique_ptr<temp_pem_file> ca_file;

    static void SetUpTestSuite() {
        pki = make_test_pki({"localhost", "127.0.0.1"});
        ca_file = std::make_unique<temp_pem_file>(pki->ca_pem);
    }
    static void TearDownTestSuite() {
        ca_file.reset();
        pki.reset();
    }
};

} // namespace asiocrawl::test
