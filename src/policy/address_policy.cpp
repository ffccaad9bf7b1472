#include "policy/address_policy.hpp"

#include <array>
#include <cstdint>

namespace asiocrawl::detail {

namespace {

namespace ip = boost::asio::ip;

struct v4_range {
    std::uint32_t network;
    int prefix;
};

constexpr std::uint32_t v4(int a, int b, int c, int d) {
    return (std::uint32_t(a) << 24) | (std::uint32_t(b) << 16) | (std::uint32_t(c) << 8) | std::uint32_t(d);
}

// IANA IPv4 Special-Purpose Address Registry entries that are not globally reachable.
constexpr std::array refused_v4{
    v4_range{v4(0, 0, 0, 0), 8},       // "this network", includes the unspecified address
    v4_range{v4(10, 0, 0, 0), 8},      // RFC 1918
    v4_range{v4(100, 64, 0, 0), 10},   // shared address space (CGNAT)
    v4_range{v4(127, 0, 0, 0), 8},     // loopback
    v4_range{v4(169, 254, 0, 0), 16},  // link-local, cloud metadata services
    v4_range{v4(172, 16, 0, 0), 12},   // RFC 1918
    v4_range{v4(192, 0, 0, 0), 24},    // IETF protocol assignments
    v4_range{v4(192, 0, 2, 0), 24},    // documentation (TEST-NET-1)
    v4_range{v4(192, 88, 99, 0), 24},  // deprecated 6to4 relay anycast
    v4_range{v4(192, 168, 0, 0), 16},  // RFC 1918
    v4_range{v4(198, 18, 0, 0), 15},   // benchmarking
    v4_range{v4(198, 51, 100, 0), 24}, // documentation (TEST-NET-2)
    v4_range{v4(203, 0, 113, 0), 24},  // documentation (TEST-NET-3)
    v4_range{v4(224, 0, 0, 0), 4},     // multicast
    v4_range{v4(240, 0, 0, 0), 4},     // reserved, and the limited broadcast address
};

bool is_refused_v4(const ip::address_v4& address) {
    const std::uint32_t bits = address.to_uint();
    for (const auto& range : refused_v4) {
        const std::uint32_t mask = range.prefix == 0 ? 0 : ~std::uint32_t{0} << (32 - range.prefix);
        if ((bits & mask) == range.network)
            return true;
    }
    return false;
}

/// The first `prefix` bits of `bytes` equal those of `network`.
bool has_prefix(const ip::address_v6::bytes_type& bytes, const ip::address_v6::bytes_type& network,
                int prefix) {
    for (int i = 0; prefix > 0; ++i, prefix -= 8) {
        const unsigned mask = prefix >= 8 ? 0xffu : (0xffu << (8 - prefix)) & 0xffu;
        if ((bytes[i] & mask) != (network[i] & mask))
            return false;
    }
    return true;
}

ip::address_v4 v4_at(const ip::address_v6::bytes_type& bytes, int offset) {
    return ip::address_v4{
        ip::address_v4::bytes_type{bytes[offset], bytes[offset + 1], bytes[offset + 2], bytes[offset + 3]}};
}

bool is_refused_v6(const ip::address_v6& address) {
    const auto bytes = address.to_bytes();
    using b = ip::address_v6::bytes_type;
    if (address.is_unspecified() || address.is_loopback() || address.is_multicast())
        return true;
    if (address.is_v4_mapped()) // ::ffff:a.b.c.d reaches a.b.c.d
        return is_refused_v4(address.to_v4());
    if (has_prefix(bytes, b{}, 96)) // IPv4-compatible ::a.b.c.d (deprecated, still routed by some stacks)
        return is_refused_v4(v4_at(bytes, 12));
    if (has_prefix(bytes, b{0x00, 0x64, 0xff, 0x9b}, 96)) // NAT64 well-known prefix
        return is_refused_v4(v4_at(bytes, 12));
    if (has_prefix(bytes, b{0x20, 0x02}, 16)) // 6to4 embeds the IPv4 address after the prefix
        return is_refused_v4(v4_at(bytes, 2));
    return has_prefix(bytes, b{0xfc}, 7)                        // unique local
           || has_prefix(bytes, b{0xfe, 0x80}, 10)              // link-local
           || has_prefix(bytes, b{0xfe, 0xc0}, 10)              // site-local (deprecated)
           || has_prefix(bytes, b{0x01, 0x00}, 64)              // discard-only
           || has_prefix(bytes, b{0x20, 0x01, 0x0d, 0xb8}, 32)  // documentation
           || has_prefix(bytes, b{0x20, 0x01, 0x00, 0x00}, 23); // IETF protocol assignments (Teredo etc.)
}

} // namespace

bool is_refused_address(const boost::asio::ip::address& address) noexcept {
    return address.is_v4() ? is_refused_v4(address.to_v4()) : is_refused_v6(address.to_v6());
}

} // namespace asiocrawl::detail
