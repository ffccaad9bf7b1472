// A throwaway PKI made at test time with the OpenSSL API: a CA, and a server certificate for "localhost" and
// 127.0.0.1 and a client certificate signed by it. No key or certificate is checked in, so none can leak or
// expire in the repo.
#pragma once

#include <boost/asio/ssl/context.hpp>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace asiocrawl::test {

struct test_pki {
    std::string ca_pem;          ///< the CA certificate
    std::string server_cert_pem; ///< the server certificate followed by nothing else (the CA is the root)
    std::string server_key_pem;
    std::string client_cert_pem; ///< a client certificate (clientAuth) signed by the same CA
    std::string client_key_pem;
};

/// A CA and a server certificate for `names` (DNS names and IP addresses, as SAN entries), the server's valid
/// from `valid_from` to `valid_until` relative to now (by default from an hour ago for a day: pass a past
/// window for an expired certificate). Made once per call; EC P-256 keys, so it is quick.
test_pki make_test_pki(const std::vector<std::string>& names = {"localhost", "127.0.0.1"},
                       std::chrono::seconds valid_from = std::chrono::hours(-1),
                       std::chrono::seconds valid_until = std::chrono::hours(24));

/// A server context (TLS 1.2 and later) presenting the PKI's server certificate.
boost::asio::ssl::context make_server_context(const test_pki& pki);

/// Writes `pem` into a fresh file under the system temp directory and removes it on destruction.
class temp_pem_file {
public:
    explicit temp_pem_file(const std::string& pem);
    ~temp_pem_file();
    temp_pem_file(const temp_pem_file&) = delete;
    temp_pem_file& operator=(const temp_pem_file&) = delete;
    const std::filesystem::path& path() const noexcept { return path_; }

private:
    std::filesystem::path path_;
};

} // namespace asiocrawl::test
