// Message digests over OpenSSL's EVP interface (SHA1_Init and friends are deprecated in OpenSSL 3), and the
// text forms archives use: "sha1:" and the SHA-1 in RFC 4648 base32 (WARC-Payload-Digest, CDXJ's digest
// field, a re-crawl's fetch history), "sha256:" and hex (WACZ's datapackage.json).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace asiocrawl::detail {

/// RFC 4648 base32, upper case, with '=' padding only when `bytes` is not a multiple of 5.
std::string base32_encode(std::string_view bytes);
/// Lower-case hex, two digits a byte.
std::string hex_encode(std::string_view bytes);

/// An incremental digest of one algorithm.
class message_digest {
public:
    enum class algorithm { sha1, sha256 };

    /// Throws std::runtime_error when OpenSSL does not offer the algorithm.
    explicit message_digest(algorithm a);
    ~message_digest();
    message_digest(const message_digest&) = delete;
    message_digest& operator=(const message_digest&) = delete;

    void update(std::string_view data);
    /// The digest of everything given to update(), as raw bytes. Call once.
    std::string finish();
    /// Bytes given to update() so far.
    std::uint64_t bytes() const noexcept { return bytes_; }

private:
    void* context_;
    std::uint64_t bytes_ = 0;
};

/// Incremental SHA-1 in archive form.
class sha1_digest {
public:
    sha1_digest()
        : hash_(message_digest::algorithm::sha1) {}
    void update(std::string_view data) { hash_.update(data); }
    /// "sha1:" and the base32 digest of everything given to update(). Call once.
    std::string finish() { return "sha1:" + base32_encode(hash_.finish()); }

private:
    message_digest hash_;
};

/// "sha1:" and the base32 SHA-1 of `data`.
std::string sha1_base32(std::string_view data);

} // namespace asiocrawl::detail
