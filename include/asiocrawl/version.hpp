#pragma once

#include <string>
#include <string_view>

namespace asiocrawl {

/// The library version, "MAJOR.MINOR.PATCH".
std::string_view version() noexcept;

/// The default User-Agent: "asiocrawl/<version>".
std::string default_user_agent();

} // namespace asiocrawl
