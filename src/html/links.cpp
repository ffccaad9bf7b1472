// The public face of link extraction: the fast streaming extractor by default, gumbo behind html.parser:
// gumbo.
#include "html/links.hpp"

#include "gumbo/links_gumbo.hpp"
#include "html/extractor.hpp"
#include "util/ascii.hpp"

namespace asiocrawl {

namespace {

// HTML's "ASCII whitespace" is what the spec skips in attribute micro-syntaxes (no vertical tab).
using detail::ascii::is_html_blank;
using detail::ascii::is_html_whitespace;
using detail::ascii::trim_html_whitespace;

page_links extract_links_fast(std::string_view html, const extract_options& options) {
    detail::html::extractor_options extractor;
    extractor.max_links = options.max_links;
    extractor.requisites = options.requisites;
    extractor.skip_rel_nofollow = options.skip_rel_nofollow;
    thread_local detail::html::extraction found;
    detail::html::extract(html, extractor, found);
    page_links links;
    links.dropped_references = found.dropped_links;
    links.rel_nofollow = found.rel_nofollow;
    bool seen_base = false;
    for (const auto& entry : found.entries) {
        switch (entry.kind) {
        case detail::html::entry_kind::link:
            links.references.emplace_back(found.value(entry));
            break;
        case detail::html::entry_kind::base:
            // The first <base> with an href decides, even when that href is blank.
            if (!seen_base && !is_html_blank(found.value(entry)))
                links.base_href.emplace(found.value(entry));
            seen_base = true;
            break;
        case detail::html::entry_kind::robots: {
            const int code = found.value(entry).front() - '0';
            links.meta_robots |= robots_directives{(code & 1) != 0, (code & 2) != 0};
            break;
        }
        case detail::html::entry_kind::canonical:
            if (!links.canonical)
                links.canonical.emplace(found.value(entry));
            break;
        case detail::html::entry_kind::requisite:
            links.requisites.push_back({std::string(found.value(entry)), entry.requisite});
            break;
        }
    }
    // The buffers are kept for the thread's next page, but not the memory of an uncommonly large one.
    constexpr std::size_t retained_bytes = 1u << 20;
    if (found.text.capacity() + found.entries.capacity() * sizeof(found.entries[0]) > retained_bytes)
        found = {};
    return links;
}

} // namespace

page_links extract_links(std::string_view html, const extract_options& options) {
    if (options.parser == html_parser::gumbo) {
        page_links links = detail::extract_links_gumbo(html, options.max_links, options.skip_rel_nofollow);
        if (options.max_links != 0 && links.references.size() > options.max_links) {
            links.dropped_references += links.references.size() - options.max_links;
            links.references.resize(options.max_links);
        }
        return links;
    }
    return extract_links_fast(html, options);
}

page_links extract_links(std::string_view html, std::size_t max_links) {
    extract_options options;
    options.max_links = max_links;
    return extract_links(html, options);
}

robots_directives parse_robots_directives(std::string_view content) noexcept {
    robots_directives found;
    while (!content.empty()) {
        const auto comma = content.find(',');
        const std::string_view word = trim_html_whitespace(content.substr(0, comma));
        content = comma == std::string_view::npos ? std::string_view() : content.substr(comma + 1);
        if (detail::ascii::iequals(word, "none")) {
            found.noindex = true;
            found.nofollow = true;
        } else if (detail::ascii::iequals(word, "noindex")) {
            found.noindex = true;
        } else if (detail::ascii::iequals(word, "nofollow")) {
            found.nofollow = true;
        }
    }
    return found;
}

std::string_view requisite_kind_name(requisite_kind kind) noexcept {
    switch (kind) {
    case requisite_kind::image:
        return "image";
    case requisite_kind::script:
        return "script";
    case requisite_kind::stylesheet:
        return "stylesheet";
    case requisite_kind::icon:
        return "icon";
    case requisite_kind::preload:
        return "preload";
    case requisite_kind::media:
        return "media";
    case requisite_kind::object:
        return "object";
    case requisite_kind::embed:
        return "embed";
    case requisite_kind::style:
        return "style";
    }
    return "unknown";
}

std::optional<std::string> parse_meta_refresh(std::string_view content) {
    // The HTML standard's "shared declarative refresh steps", keeping only the URL.
    std::size_t position = 0;
    const auto at_end = [&] { return position >= content.size(); };
    const auto current = [&] { return content[position]; };
    const auto skip_whitespace = [&] {
        while (!at_end() && is_html_whitespace(current())) {
            ++position;
        }
    };

    skip_whitespace();
    // The delay is mandatory: it must start with a digit or a dot ("url=/x" alone is not a refresh).
    if (at_end() || !(detail::ascii::is_digit(current()) || current() == '.')) {
        return std::nullopt;
    }
    while (!at_end() && (detail::ascii::is_digit(current()) || current() == '.')) {
        ++position;
    }
    if (at_end()) {
        return std::nullopt; // a plain reload of the same page
    }
    if (!(current() == ';' || current() == ',' || is_html_whitespace(current()))) {
        return std::nullopt; // "5x": not a delay, so not a refresh at all
    }
    skip_whitespace();
    if (!at_end() && (current() == ';' || current() == ',')) {
        ++position;
    }
    skip_whitespace();
    if (at_end()) {
        return std::nullopt;
    }

    // Without a full "url =" prefix the whole remainder is the URL, so "0; urchin.html" stays intact.
    const std::size_t remainder_start = position;
    const auto consume = [&](char lower) {
        if (!at_end() && detail::ascii::to_lower(current()) == lower) {
            ++position;
            return true;
        }
        return false;
    };
    bool skip_quotes = true;
    if (consume('u')) {
        if (consume('r') && consume('l')) {
            skip_whitespace();
            if (consume('=')) {
                skip_whitespace();
            } else {
                skip_quotes = false;
            }
        } else {
            skip_quotes = false;
        }
    }
    if (!skip_quotes) {
        position = remainder_start;
    }

    std::string_view url = content.substr(position);
    if (skip_quotes && !url.empty() && (url.front() == '\'' || url.front() == '"')) {
        const char quote = url.front();
        url.remove_prefix(1);
        url = url.substr(0, url.find(quote));
    }
    url = trim_html_whitespace(url);
    if (url.empty()) {
        return std::nullopt;
    }
    return std::string(url);
}

bool is_html_media_type(std::string_view media_type) noexcept {
    const std::string_view essence = trim_html_whitespace(media_type.substr(0, media_type.find(';')));
    return detail::ascii::iequals(essence, "text/html") ||
           detail::ascii::iequals(essence, "application/xhtml+xml");
}

} // namespace asiocrawl
