#include "policy/address_policy.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using asiocrawl::detail::is_refused_address;

TEST(is_refused_address, refuses_what_is_not_the_public_internet) {
    const std::vector<std::string> refused{
        "0.0.0.0",
        "0.1.2.3",
        "127.0.0.1",
        "127.255.255.254",
        "10.0.0.1",
        "10.255.255.255",
        "172.16.0.1",
        "172.31.255.255",
        "192.168.1.1",
        "100.64.0.1",
        "100.127.255.255",
        "169.254.169.254", // cloud metadata
        "169.254.0.1",
        "192.0.0.8",
        "192.0.2.1",
        "198.18.0.1",
        "198.51.100.7",
        "203.0.113.9",
        "224.0.0.1",
        "239.255.255.250",
        "240.0.0.1",
        "255.255.255.255",
        "::",
        "::1",
        "fe80::1",
        "febf::1",
        "fec0::1",
        "fc00::1",
        "fd12:3456::1",
        "ff02::1",
        "::ffff:127.0.0.1", // IPv4-mapped forms reach the IPv4 address
        "::ffff:169.254.169.254",
        "::ffff:10.1.2.3",
        "::127.0.0.1",       // IPv4-compatible
        "64:ff9b::10.0.0.1", // NAT64
        "2002:7f00:1::",     // 6to4 of 127.0.0.1
        "2002:a9fe:a9fe::1", // 6to4 of 169.254.169.254
        "2001:db8::1",
        "100::1",
    };
    for (const auto& text : refused)
        EXPECT_TRUE(is_refused_address(boost::asio::ip::make_address(text))) << text;
}

TEST(is_refused_address, allows_public_addresses) {
    const std::vector<std::string> allowed{
        "1.1.1.1",
        "8.8.8.8",
        "93.184.216.34",
        "9.255.255.255",  // just below 10/8
        "11.0.0.0",       // just above
        "172.15.255.255", // just below 172.16/12
        "172.32.0.0",     // just above
        "100.63.255.255", // just below 100.64/10
        "100.128.0.0",    // just above
        "169.253.255.255",
        "192.169.0.0",
        "223.255.255.255",
        "2606:4700:4700::1111",
        "2a00:1450:4001:800::200e",
        "::ffff:8.8.8.8",
        "64:ff9b::808:808", // NAT64 of 8.8.8.8
        "2002:808:808::1",  // 6to4 of 8.8.8.8
        "fbff:ffff::1",     // just below fc00::/7
        "fe00::1",          // between fc00::/7 and fe80::/10
    };
    for (const auto& text : allowed)
        EXPECT_FALSE(is_refused_address(boost::asio::ip::make_address(text))) << text;
}
