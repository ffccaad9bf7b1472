// zlib compression for tests that need gzip and deflate bodies (the library only decompresses).
#pragma once

#include <zlib.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace asiocrawl::test {

enum class wrapper { gzip, zlib, raw };

/// `data` compressed with deflate inside the given wrapper.
inline std::string compress(std::string_view data, wrapper w, int level = Z_DEFAULT_COMPRESSION) {
    const int window_bits = w == wrapper::gzip ? 15 + 16 : w == wrapper::zlib ? 15 : -15;
    z_stream z{};
    if (deflateInit2(&z, level, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        throw std::runtime_error("deflateInit2");
    std::string out(deflateBound(&z, static_cast<uLong>(data.size())), '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    z.avail_in = static_cast<uInt>(data.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    const int rc = deflate(&z, Z_FINISH);
    out.resize(z.total_out);
    deflateEnd(&z);
    if (rc != Z_STREAM_END)
        throw std::runtime_error("deflate");
    return out;
}

/// A gzip "bomb": `megabytes` MiB of zeros in about a thousandth of that. Built without compressing all of
/// it: after a full flush deflate forgets its history, so every further MiB of zeros compresses to the same
/// bytes, which are repeated; then a final empty block and the trailer (CRC-32 and size of the whole).
inline std::string gzip_bomb(std::size_t megabytes) {
    z_stream z{};
    if (deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) != Z_OK)
        throw std::runtime_error("deflateInit2");
    const std::string zeros(1 << 20, '\0');
    auto compress_one = [&] {
        std::string out(deflateBound(&z, static_cast<uLong>(zeros.size())) + 64, '\0');
        z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(zeros.data()));
        z.avail_in = static_cast<uInt>(zeros.size());
        z.next_out = reinterpret_cast<Bytef*>(out.data());
        z.avail_out = static_cast<uInt>(out.size());
        deflate(&z, Z_FULL_FLUSH);
        out.resize(out.size() - z.avail_out);
        return out;
    };
    std::string bomb = compress_one(); // with the gzip header
    const std::string repeated = compress_one();
    deflateEnd(&z);
    const auto zeros_crc =
        crc32(0, reinterpret_cast<const Bytef*>(zeros.data()), static_cast<uInt>(zeros.size()));
    uLong crc = zeros_crc;
    for (std::size_t i = 1; i < megabytes; ++i) {
        bomb += repeated;
        crc = crc32_combine(crc, zeros_crc, static_cast<z_off_t>(zeros.size()));
    }
    bomb += std::string("\x03\x00", 2); // final fixed-Huffman block holding only end-of-block
    const auto size = static_cast<std::uint32_t>(megabytes << 20);
    for (int i = 0; i < 4; ++i)
        bomb += static_cast<char>((crc >> (8 * i)) & 0xff);
    for (int i = 0; i < 4; ++i)
        bomb += static_cast<char>((size >> (8 * i)) & 0xff);
    return bomb;
}

/// The first gzip member of `data`, inflated. `whole` (when given) says whether `data` is exactly one
/// complete member: what a WARC reader gets from a record's offset and length in a ".warc.gz".
inline std::string gunzip_member(std::string_view data, bool* whole = nullptr) {
    z_stream z{};
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
        throw std::runtime_error("inflateInit2");
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    z.avail_in = static_cast<uInt>(data.size());
    std::string out;
    char buffer[16384];
    int rc = Z_OK;
    while (rc == Z_OK) {
        z.next_out = reinterpret_cast<Bytef*>(buffer);
        z.avail_out = sizeof buffer;
        rc = inflate(&z, Z_NO_FLUSH);
        out.append(buffer, sizeof buffer - z.avail_out);
    }
    if (whole != nullptr)
        *whole = rc == Z_STREAM_END && z.avail_in == 0;
    inflateEnd(&z);
    return out;
}

} // namespace asiocrawl::test
