// Which peer addresses a crawler must not connect to when fetch_config::refuse_private_addresses is on: a
// crawler fed untrusted URLs would otherwise let any page point it at the machine's own services or the
// cloud metadata endpoint (169.254.169.254), a server-side request forgery. Sans-io: a pure function.
#pragma once

#include <boost/asio/ip/address.hpp>

namespace asiocrawl::detail {

/// True for addresses that are not on the public internet: unspecified, loopback, "this network"
/// (0.0.0.0/8), RFC 1918, shared CGNAT space (100.64.0.0/10), link-local (169.254.0.0/16, fe80::/10),
/// IETF protocol assignments (192.0.0.0/24), documentation and benchmarking ranges, multicast, reserved
/// (240.0.0.0/4) and broadcast, unique-local fc00::/7, site-local fec0::/10, discard-only 100::/64, and the
/// IPv6 forms that embed an IPv4 address (IPv4-mapped ::ffff:0:0/96, IPv4-compatible ::/96, NAT64
/// 64:ff9b::/96, 6to4 2002::/16) when the embedded address is refused.
bool is_refused_address(const boost::asio::ip::address& address) noexcept;

} // namespace asiocrawl::detail
