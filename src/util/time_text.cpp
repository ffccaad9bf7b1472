#include "util/time_text.hpp"

#include <cstdio>
#include <ctime>

namespace asiocrawl::detail {

std::string rfc3339_micros(std::chrono::system_clock::time_point when) {
    const auto micros =
        std::chrono::duration_cast<std::chrono::microseconds>(when.time_since_epoch()).count();
    std::time_t seconds = static_cast<std::time_t>(micros / 1'000'000);
    long fraction = static_cast<long>(micros % 1'000'000);
    if (fraction < 0) { // before 1970: the fraction counts up from the second below
        fraction += 1'000'000;
        --seconds;
    }
    std::tm utc{};
    if (gmtime_r(&seconds, &utc) == nullptr)
        return "";
    char date[64];
    const std::size_t length = std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &utc);
    char out[96];
    const int n = std::snprintf(out, sizeof out, "%.*s.%06ldZ", static_cast<int>(length), date, fraction);
    return std::string(out, n > 0 ? static_cast<std::size_t>(n) : 0);
}

} // namespace asiocrawl::detail
