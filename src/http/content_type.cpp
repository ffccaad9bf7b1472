#include "http/content_type.hpp"

#include "util/ascii.hpp"

#include "html/links.hpp"

namespace asiocrawl::detail {

namespace {

// Optional whitespace (RFC 9110 §5.6.3) around tokens and parameters.
constexpr std::string_view http_whitespace = " \t";

std::string_view trim(std::string_view s) {
    return ascii::trim(s, http_whitespace);
}

using ascii::to_lower;

/// The value of one parameter, unquoted; a quoted value may contain ';' and backslash escapes.
std::string_view take_parameter_value(std::string_view& rest, std::string& unescaped) {
    rest = trim(rest);
    if (!rest.empty() && rest.front() == '"') {
        unescaped.clear();
        std::size_t i = 1;
        for (; i < rest.size() && rest[i] != '"'; ++i) {
            if (rest[i] == '\\' && i + 1 < rest.size())
                ++i;
            unescaped += rest[i];
        }
        const auto end = rest.find(';', i);
        rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
        return unescaped;
    }
    const auto end = rest.find(';');
    auto value = trim(rest.substr(0, end));
    rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
    return value;
}

} // namespace

media_type parse_content_type(std::string_view header) {
    media_type result;
    const auto semicolon = header.find(';');
    result.type = to_lower(trim(header.substr(0, semicolon)));
    if (semicolon == std::string_view::npos)
        return result;
    std::string_view rest = header.substr(semicolon + 1);
    std::string unescaped;
    while (!rest.empty()) {
        const auto equals = rest.find('=');
        const auto next = rest.find(';');
        if (equals == std::string_view::npos || (next != std::string_view::npos && next < equals)) {
            // A parameter without a value: skip it.
            rest = next == std::string_view::npos ? std::string_view{} : rest.substr(next + 1);
            continue;
        }
        const std::string name = to_lower(trim(rest.substr(0, equals)));
        rest = rest.substr(equals + 1);
        const auto value = take_parameter_value(rest, unescaped);
        if (name == "charset" && result.charset.empty())
            result.charset = to_lower(value);
    }
    return result;
}

bool media_type_accepted(std::string_view header, const std::vector<std::string>& accept) {
    if (accept.empty())
        return true;
    const std::string type = parse_content_type(header).type;
    if (type.empty() || is_html_media_type(type))
        return true;
    const auto slash = type.find('/');
    const std::string_view main_type = std::string_view(type).substr(0, slash);
    for (const auto& entry : accept) {
        const std::string wanted = to_lower(entry);
        if (wanted == "*/*" || wanted == type)
            return true;
        if (wanted.size() > 2 && wanted.ends_with("/*") &&
            std::string_view(wanted).substr(0, wanted.size() - 2) == main_type)
            return true;
    }
    return false;
}

} // namespace asiocrawl::detail
