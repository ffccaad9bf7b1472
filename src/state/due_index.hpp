// Continuous mode's due-time index in a state directory (key `D`, docs/STATE.md): one empty-valued key per
// URL waiting for its revisit, ordered by due time, so that the crawl reads the next due URLs a window at a
// time instead of holding every URL's schedule in memory.
#pragma once

#include "state/varint.hpp"

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace asiocrawl::detail {

/// A URL's place in the due-time index: when it is due (seconds since the epoch), then the URL.
struct due_key {
    std::int64_t due = 0;
    std::string url;
    auto operator<=>(const due_key&) const = default;
};

/// The sign bit flipped: big-endian bytes of a signed time then sort as the times do.
inline constexpr std::uint64_t due_key_bias = std::uint64_t{1} << 63;

/// `D`, the due seconds (8 bytes, big-endian, sign-flipped), the URL.
inline std::string encode_due_key(const due_key& key) {
    std::string out = "D";
    put_be(out, static_cast<std::uint64_t>(key.due) ^ due_key_bias, 8);
    out += key.url;
    return out;
}

/// nullopt for anything but a `D` key with its 8 bytes of time (an empty URL is refused too).
inline std::optional<due_key> decode_due_key(std::string_view bytes) {
    if (bytes.size() < 10 || bytes[0] != 'D')
        return std::nullopt;
    due_key key;
    key.due = static_cast<std::int64_t>(get_be(bytes.substr(1, 8), 8) ^ due_key_bias);
    key.url = std::string(bytes.substr(9));
    return key;
}

/// The first key after `key`: a read that goes on from a window's last key starts here.
inline due_key due_key_after(const due_key& key) {
    return {key.due, key.url + '\0'};
}

} // namespace asiocrawl::detail
