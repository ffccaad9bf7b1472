// LEB128 varints and length-prefixed strings: the byte forms a durable crawl state is written in.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace asiocrawl::detail {

inline void put_varint(std::string& out, std::uint64_t v) {
    while (v >= 0x80) {
        out.push_back(static_cast<char>((v & 0x7f) | 0x80));
        v >>= 7;
    }
    out.push_back(static_cast<char>(v));
}

inline std::uint64_t zigzag(std::int64_t v) noexcept {
    return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}
inline std::int64_t unzigzag(std::uint64_t v) noexcept {
    return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1);
}

inline void put_string(std::string& out, std::string_view s) {
    put_varint(out, s.size());
    out.append(s);
}

/// Big-endian, so that byte order is key order.
inline void put_be(std::string& out, std::uint64_t v, int bytes) {
    for (int i = bytes - 1; i >= 0; --i)
        out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
inline std::uint64_t get_be(std::string_view in, int bytes) noexcept {
    std::uint64_t v = 0;
    for (int i = 0; i < bytes; ++i)
        v = (v << 8) | static_cast<unsigned char>(in[static_cast<std::size_t>(i)]);
    return v;
}

/// Reads what put_varint/put_string wrote; every read is nullopt past the end or on a malformed varint.
class varint_reader {
public:
    explicit varint_reader(std::string_view in)
        : in_(in) {}

    std::optional<std::uint64_t> varint() {
        std::uint64_t v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (in_.empty())
                return std::nullopt;
            const auto byte = static_cast<unsigned char>(in_.front());
            in_.remove_prefix(1);
            v |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
            if ((byte & 0x80) == 0)
                return v;
        }
        return std::nullopt;
    }

    std::optional<std::string> string() {
        const auto size = varint();
        if (!size || *size > in_.size())
            return std::nullopt;
        std::string s(in_.substr(0, static_cast<std::size_t>(*size)));
        in_.remove_prefix(static_cast<std::size_t>(*size));
        return s;
    }

    /// The next `n` bytes as they are.
    std::optional<std::string_view> bytes(std::size_t n) {
        if (n > in_.size())
            return std::nullopt;
        const auto out = in_.substr(0, n);
        in_.remove_prefix(n);
        return out;
    }

    bool at_end() const noexcept { return in_.empty(); }

private:
    std::string_view in_;
};

} // namespace asiocrawl::detail
