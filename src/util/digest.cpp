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

std::string hex_encode(std::string_view bytes) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string out;
    out.reserve(2 * bytes.size());
    for (unsigned char byte : bytes) {
        out += digits[byte >> 4];
        out += digits[byte & 0xF];
    }
    return out;
}

message_digest::message_digest(algorithm a)
    : context_(EVP_MD_CTX_new()) {
    const EVP_MD* md = a == algorithm::sha1 ? EVP_sha1() : EVP_sha256();
    if (context_ == nullptr || EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(context_), md, nullptr) != 1) {
        EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(context_));
        throw std::runtime_error(a == algorithm::sha1 ? "SHA-1 unavailable" : "SHA-256 unavailable");
    }
}

message_digest::~message_digest() {
    EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(context_));
}

void message_digest::update(std::string_view data) {
    EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(context_), data.data(), data.size());
    bytes_ += data.size();
}

std::string message_digest::finish() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(context_), digest, &length);
    return std::string(reinterpret_cast<const char*>(digest), length);
}

std::string sha1_base32(std::string_view data) {
    sha1_digest hash;
    hash.update(data);
    return hash.finish();
}

} // namespace asiocrawl::detail
