#include "util/digest.hpp"

#include <openssl/evp.h>

#include <cstdint>
#include <stdexcept>

namespace asiocrawl::detail {

std::string base32_encode(std::string_view bytes) {
    static constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    std::string out;
    out.reserve((bytes.size() + 4) / 5 * 8);
    std::uint64_t buffer = 0;
    int bits = 0;
    for (unsigned char byte : bytes) {
        buffer = (buffer << 8) | byte;
        bits += 8;
        while (bits >= 5) {
            out += alphabet[(buffer >> (bits - 5)) & 31];
            bits -= 5;
        }
    }
    if (bits > 0)
        out += alphabet[(buffer << (5 - bits)) & 31];
    while (out.size() % 8 != 0)
        out += '=';
    return out;
}

sha1_digest::sha1_digest()
    : context_(EVP_MD_CTX_new()) {
    if (context_ == nullptr ||
        EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(context_), EVP_sha1(), nullptr) != 1) {
        EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(context_));
        throw std::runtime_error("SHA-1 unavailable");
    }
}

sha1_digest::~sha1_digest() {
    EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(context_));
}

void sha1_digest::update(std::string_view data) {
    EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(context_), data.data(), data.size());
}

std::string sha1_digest::finish() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(context_), digest, &length);
    return "sha1:" + base32_encode({reinterpret_cast<const char*>(digest), length});
}

std::string sha1_base32(std::string_view data) {
    sha1_digest hash;
    hash.update(data);
    return hash.finish();
}

} // namespace asiocrawl::detail
