// Words for a certificate that did not verify, shared by every TLS client of the crawler (the fetcher's
// https connections, the Redis client's rediss:// one), so that an operator reads the same reasons in both.
#pragma once

#include <openssl/ssl.h>

#include <string>

namespace asiocrawl::detail {

/// Why the peer's certificate on `ssl` failed verification with result `verify` (SSL_get_verify_result),
/// for people: OpenSSL's text with what it is about (the expiry date, the names the certificate is for
/// against `host`, the untrusted issuer).
std::string certificate_problem(SSL* ssl, long verify, const std::string& host);

} // namespace asiocrawl::detail
