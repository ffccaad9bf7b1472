// Compression for tests that need gzip, deflate, br and zstd bodies (the library only decompresses): zlib,
// libbrotlienc and libzstd's encoders, and zstd frames written by hand (a window too large, an RLE bomb).
#pragma once

#include <brotli/encode.h>
#include <zlib.h>
#include <zstd.h>

#include <array>
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
/// complete member: what a WARC reader gets from a record's offset and length in a ".warc.gz". `consumed`
/// (when given) is the member's length when it ended, 0 when it did not.
inline std::string gunzip_member(std::string_view data, bool* whole = nullptr,
                                 std::size_t* consumed = nullptr) {
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
    if (consumed != nullptr)
        *consumed = rc == Z_STREAM_END ? static_cast<std::size_t>(z.total_in) : 0;
    inflateEnd(&z);
    return out;
}

/// Every gzip member of `data` in turn, inflated and concatenated, as a WARC reader reads a ".warc.gz".
/// `members` counts them; `complete` is false when one did not end (the rest is not read).
inline std::string gunzip_members(std::string_view data, int* members = nullptr, bool* complete = nullptr) {
    std::string out;
    int count = 0;
    bool ended = true;
    while (!data.empty() && ended) {
        std::size_t used = 0;
        out += gunzip_member(data, nullptr, &used);
        ++count;
        ended = used > 0;
        data.remove_prefix(used);
    }
    if (members != nullptr)
        *members = count;
    if (complete != nullptr)
        *complete = ended;
    return out;
}

/// `data` as one brotli stream (quality 5, a 4 MiB window).
inline std::string brotli(std::string_view data, int quality = 5) {
    std::string out(BrotliEncoderMaxCompressedSize(data.size()) + 16, '\0');
    std::size_t size = out.size();
    if (!BrotliEncoderCompress(quality, 22, BROTLI_MODE_GENERIC, data.size(),
                               reinterpret_cast<const std::uint8_t*>(data.data()), &size,
                               reinterpret_cast<std::uint8_t*>(out.data())))
        throw std::runtime_error("BrotliEncoderCompress");
    out.resize(size);
    return out;
}

/// A brotli "bomb": `megabytes` MiB of zeros, streamed through the encoder a MiB at a time (never all of it
/// in memory).
inline std::string brotli_bomb(std::size_t megabytes) {
    BrotliEncoderState* s = BrotliEncoderCreateInstance(nullptr, nullptr, nullptr);
    if (!s)
        throw std::runtime_error("BrotliEncoderCreateInstance");
    BrotliEncoderSetParameter(s, BROTLI_PARAM_QUALITY, 1);
    const std::string zeros(1 << 20, '\0');
    std::string out;
    std::array<std::uint8_t, 4096> chunk;
    for (std::size_t i = 0; i <= megabytes; ++i) {
        const bool last = i == megabytes;
        std::size_t avail_in = last ? 0 : zeros.size();
        auto next_in = reinterpret_cast<const std::uint8_t*>(zeros.data());
        const auto op = last ? BROTLI_OPERATION_FINISH : BROTLI_OPERATION_PROCESS;
        do {
            std::size_t avail_out = chunk.size();
            auto next_out = chunk.data();
            if (!BrotliEncoderCompressStream(s, op, &avail_in, &next_in, &avail_out, &next_out, nullptr))
                throw std::runtime_error("BrotliEncoderCompressStream");
            out.append(reinterpret_cast<const char*>(chunk.data()), chunk.size() - avail_out);
        } while (avail_in > 0 || BrotliEncoderHasMoreOutput(s) || (last && !BrotliEncoderIsFinished(s)));
    }
    BrotliEncoderDestroyInstance(s);
    return out;
}

/// `data` as one zstd frame (level 3).
inline std::string zstd(std::string_view data, int level = 3) {
    std::string out(ZSTD_compressBound(data.size()), '\0');
    const std::size_t size = ZSTD_compress(out.data(), out.size(), data.data(), data.size(), level);
    if (ZSTD_isError(size))
        throw std::runtime_error("ZSTD_compress");
    out.resize(size);
    return out;
}

/// The header of a zstd frame (RFC 8878 3.1.1) without a content size, single segment off, whose window is
/// 2^`window_log` bytes.
inline std::string zstd_frame_header(int window_log) {
    std::string h("\x28\xb5\x2f\xfd", 4);
    h += '\0'; // Frame_Header_Descriptor: no FCS, no checksum, no dictionary
    h += static_cast<char>((window_log - 10) << 3); // Window_Descriptor: exponent, mantissa 0
    return h;
}

/// A zstd block header (RFC 8878 3.1.1.2): type 0 raw, 1 RLE.
inline std::string zstd_block_header(bool last, int type, std::uint32_t size) {
    const std::uint32_t v = (last ? 1u : 0u) | (static_cast<std::uint32_t>(type) << 1) | (size << 3);
    return {static_cast<char>(v & 0xff), static_cast<char>((v >> 8) & 0xff),
            static_cast<char>((v >> 16) & 0xff)};
}

/// A frame with a 2^`window_log` window holding `text` in one raw block.
inline std::string zstd_raw_frame(int window_log, std::string_view text) {
    return zstd_frame_header(window_log) +
           zstd_block_header(true, 0, static_cast<std::uint32_t>(text.size())) + std::string(text);
}

/// A zstd "bomb": `megabytes` MiB of zeros as RLE blocks of 128 KiB, four bytes each, in a frame with an
/// 8 MiB window. 1 GiB is 32 KiB on the wire.
inline std::string zstd_bomb(std::size_t megabytes) {
    std::string bomb = zstd_frame_header(23);
    const std::size_t blocks = megabytes * 8;
    for (std::size_t i = 0; i < blocks; ++i) {
        bomb += zstd_block_header(i + 1 == blocks, 1, 128u << 10);
        bomb += '\0';
    }
    return bomb;
}

} // namespace asiocrawl::test
