#pragma once

#include <string>
#include <string_view>

namespace asiocrawl {

/// The library version, "MAJOR.MINOR.PATCH".
std::string_view version() noexcept;

/// The default User-Agent: "asiocrawl/<version> (+<contact_url>)".
std::string default_user_agent(std::string_view contact_url);

/// The product token robots.txt groups are matched on: the User-Agent up to the first '/' or space
/// ("asiocrawl").
std::string_view product_token(std::string_view user_agent) noexcept;

} // namespace asiocrawl
