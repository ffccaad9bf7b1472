// Percent-decoding, as the URL Standard's "percent-decode" does it: each '%' followed by two hex digits
// becomes that byte, and any other '%' stays as it is. The one decoder of the URL, policy and output layers;
// Boost.URL decodes, this only decides what a malformed escape becomes.
#pragma once

#include <string>
#include <string_view>

namespace asiocrawl::detail {

/// `text` with its "%XX" escapes decoded ("%41" is "A", "%00" a NUL byte); a '%' that starts no escape ("%",
/// "%4", "%zz") is kept as written, with whatever follows it.
std::string percent_decode(std::string_view text);

} // namespace asiocrawl::detail
