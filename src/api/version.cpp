#include <asiocrawl/version.hpp>

namespace asiocrawl {

std::string_view version() noexcept {
    return ASIOCRAWL_VERSION_STRING;
}

std::string default_user_agent(std::string_view contact_url) {
    std::string agent = "asiocrawl/";
    agent += version();
    if (!contact_url.empty()) {
        agent += " (+";
        agent += contact_url;
        agent += ')';
    }
    return agent;
}

std::string_view product_token(std::string_view user_agent) noexcept {
    const auto end = user_agent.find_first_of("/ \t");
    return user_agent.substr(0, end);
}

} // namespace asiocrawl
