// How the library talks to its embedder: it never prints; it calls these.
#pragma once

#include <asiocrawl/record.hpp>

#include <functional>
#include <string_view>

namespace asiocrawl {

enum class log_level { debug = 0, info = 1, warning = 2, error = 3, off = 4 };

/// A level and a function the embedder supplies. Messages below `level` are never formatted.
/// Called on the crawler's executor, one call at a time.
struct logger {
    log_level level = log_level::warning;
    std::function<void(log_level, std::string_view)> write;

    bool enabled(log_level l) const noexcept { return write && l >= level && level != log_level::off; }
};

/// Called once per record, on the crawler's executor, as soon as the record is final. The record is only
/// valid during the call: copy what you keep. Must not throw.
using record_sink = std::function<void(const record&)>;

} // namespace asiocrawl
