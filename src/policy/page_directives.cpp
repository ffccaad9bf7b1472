#include "policy/page_directives.hpp"

#include "util/ascii.hpp"

#include <array>

namespace asiocrawl {

namespace {

using detail::ascii::iequals;

constexpr bool is_ows(char c) noexcept {
    return c == ' ' || c == '\t';
}

std::string_view trim_ows(std::string_view text) noexcept {
    while (!text.empty() && is_ows(text.front()))
        text.remove_prefix(1);
    while (!text.empty() && is_ows(text.back()))
        text.remove_suffix(1);
    return text;
}

/// A rule written "name: value" (Google's list), as opposed to a user agent's name before a colon.
bool takes_a_value(std::string_view name) noexcept {
    constexpr std::array<std::string_view, 4> rules = {"unavailable_after", "max-snippet",
                                                       "max-image-preview", "max-video-preview"};
    for (const auto rule : rules)
        if (iequals(name, rule))
            return true;
    return false;
}

robots_directives parse_one_value(std::string_view value, std::string_view product_token) noexcept {
    robots_directives found;
    bool applies = true; // no user agent named yet: the rules are for every crawler
    while (!value.empty()) {
        const auto comma = value.find(',');
        std::string_view item = trim_ows(value.substr(0, comma));
        value = comma == std::string_view::npos ? std::string_view() : value.substr(comma + 1);
        if (const auto colon = item.find(':'); colon != std::string_view::npos) {
            const std::string_view name = trim_ows(item.substr(0, colon));
            if (takes_a_value(name))
                continue;
            applies = !product_token.empty() && iequals(name, product_token);
            item = trim_ows(item.substr(colon + 1));
            if (const auto inner = item.find(':'); inner != std::string_view::npos)
                continue; // "agent: unavailable_after: ..."
        }
        if (applies)
            found |= parse_robots_directives(item);
    }
    return found;
}

} // namespace

robots_directives parse_x_robots_tag(std::string_view values, std::string_view product_token) noexcept {
    robots_directives found;
    while (!values.empty()) {
        const auto newline = values.find('\n');
        found |= parse_one_value(values.substr(0, newline), product_token);
        values = newline == std::string_view::npos ? std::string_view() : values.substr(newline + 1);
    }
    return found;
}

std::optional<std::string_view> canonical_link_target(std::string_view value) {
    // link-value = "<" URI-Reference ">" *( OWS ";" OWS link-param ), several separated by commas
    // (RFC 8288 3); link-param = token BWS [ "=" BWS ( token / quoted-string ) ].
    std::size_t i = 0;
    const auto skip_ows = [&] {
        while (i < value.size() && is_ows(value[i]))
            ++i;
    };
    while (i < value.size()) {
        while (i < value.size() && (is_ows(value[i]) || value[i] == ','))
            ++i;
        if (i >= value.size() || value[i] != '<')
            return std::nullopt;
        const auto close = value.find('>', i + 1);
        if (close == std::string_view::npos)
            return std::nullopt;
        const std::string_view target = value.substr(i + 1, close - i - 1);
        i = close + 1;
        bool canonical = false;
        for (;;) {
            skip_ows();
            if (i >= value.size() || value[i] != ';')
                break;
            ++i;
            skip_ows();
            const std::size_t name_start = i;
            while (i < value.size() && value[i] != '=' && value[i] != ';' && value[i] != ',' &&
                   !is_ows(value[i]))
                ++i;
            const std::string_view name = value.substr(name_start, i - name_start);
            skip_ows();
            std::string unquoted;
            std::string_view param;
            if (i < value.size() && value[i] == '=') {
                ++i;
                skip_ows();
                if (i < value.size() && value[i] == '"') {
                    ++i;
                    while (i < value.size() && value[i] != '"') {
                        if (value[i] == '\\' && i + 1 < value.size())
                            ++i;
                        unquoted += value[i++];
                    }
                    if (i < value.size())
                        ++i; // the closing quote
                    param = unquoted;
                } else {
                    const std::size_t start = i;
                    while (i < value.size() && value[i] != ';' && value[i] != ',' && !is_ows(value[i]))
                        ++i;
                    param = value.substr(start, i - start);
                }
            }
            if (!iequals(name, "rel"))
                continue;
            // rel is a space-separated list of relation types, compared case-insensitively.
            std::size_t k = 0;
            while (k < param.size()) {
                while (k < param.size() && is_ows(param[k]))
                    ++k;
                const std::size_t start = k;
                while (k < param.size() && !is_ows(param[k]))
                    ++k;
                if (k > start && iequals(param.substr(start, k - start), "canonical"))
                    canonical = true;
            }
        }
        if (canonical)
            return target;
        skip_ows();
        if (i < value.size() && value[i] != ',')
            return std::nullopt; // not a link-value boundary: malformed
    }
    return std::nullopt;
}

} // namespace asiocrawl
