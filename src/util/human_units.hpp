// Durations and byte counts as a person reads them in a log line: "1m30s", "250ms", "1.5 MiB", "900 bytes".
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace asiocrawl::detail {

/// "250ms", "1.5s", "1m", "1m30s", "2h", "1h5m" (whole seconds past a minute; tenths of a second below one).
inline std::string human_duration(std::chrono::milliseconds value) {
    long long ms = value.count();
    if (ms < 1000)
        return std::to_string(ms) + "ms";
    if (ms < 60'000) {
        char buffer[32];
        if (ms % 1000 == 0)
            std::snprintf(buffer, sizeof buffer, "%llds", ms / 1000);
        else
            std::snprintf(buffer, sizeof buffer, "%.1fs", static_cast<double>(ms) / 1000.0);
        return buffer;
    }
    const long long seconds = ms / 1000;
    const long long hours = seconds / 3600;
    const long long minutes = seconds / 60 % 60;
    const long long rest = seconds % 60;
    std::string text;
    if (hours > 0)
        text += std::to_string(hours) + "h";
    if (minutes > 0)
        text += std::to_string(minutes) + "m";
    if (rest > 0 && hours == 0)
        text += std::to_string(rest) + "s";
    return text;
}

/// "900 bytes", "1 KiB", "1.5 MiB", "2 GiB" (one decimal unless whole).
inline std::string human_bytes(std::uint64_t value) {
    if (value < 1024)
        return std::to_string(value) + (value == 1 ? " byte" : " bytes");
    static constexpr const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
    double amount = static_cast<double>(value) / 1024.0;
    std::size_t unit = 0;
    while (amount >= 1024.0 && unit + 1 < std::size(units)) {
        amount /= 1024.0;
        ++unit;
    }
    char buffer[48];
    if (amount == static_cast<double>(static_cast<std::uint64_t>(amount)))
        std::snprintf(buffer, sizeof buffer, "%.0f %s", amount, units[unit]);
    else
        std::snprintf(buffer, sizeof buffer, "%.1f %s", amount, units[unit]);
    return buffer;
}

} // namespace asiocrawl::detail
