// Times as text in the one form records, WARC-Date and the fetch history share: RFC 3339 in UTC with
// microseconds ("2026-11-28T00:45:06.811891Z", WARC 1.1's W3C date with a fraction).
#pragma once

#include <chrono>
#include <string>

namespace asiocrawl::detail {

std::string rfc3339_micros(std::chrono::system_clock::time_point when);

} // namespace asiocrawl::detail
