#include <asiocrawl/version.hpp>

namespace asiocrawl {

std::string_view version() noexcept {
    return ASIOCRAWL_VERSION_STRING;
}

std::string default_user_agent() {
    return "asiocrawl/" + std::string(version());
}

} // namespace asiocrawl
