// Payload digests in the form archives use: "sha1:" and the SHA-1 in RFC 4648 base32 (WARC-Payload-Digest,
// CDXJ's digest field, a re-crawl's fetch history).
#pragma once

#include <string>
#include <string_view>

namespace asiocrawl::detail {

/// RFC 4648 base32, upper case, with '=' padding only when `bytes` is not a multiple of 5.
std::string base32_encode(std::string_view bytes);

/// Incremental SHA-1 (OpenSSL's EVP interface: SHA1_Init is deprecated in OpenSSL 3).
class sha1_digest {
public:
    sha1_digest();
    ~sha1_digest();
    sha1_digest(const sha1_digest&) = delete;
    sha1_digest& operator=(const sha1_digest&) = delete;

    void update(std::string_view data);
    /// "sha1:" and the base32 digest of everything given to update(). Call once.
    std::string finish();

private:
    void* context_;
};

/// "sha1:" and the base32 SHA-1 of `data`.
std::string sha1_base32(std::string_view data);

} // namespace asiocrawl::detail
