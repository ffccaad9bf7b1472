// Link extraction from HTML with gumbo. Sans-io: bytes in, raw references out.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace asiocrawl {

/// What a page links to, as written in the markup (entities decoded by the HTML parser, nothing resolved).
struct page_links {
    /// href of the first <base> element that has one, if any. Links resolve against it.
    std::optional<std::string> base_href;
    /// In document order: <a href>, <area href>, <frame src>, <iframe src>, and the URL of
    /// <meta http-equiv="refresh" content="N; url=...">. Duplicates are kept; empty values are dropped.
    std::vector<std::string> references;
    /// True when the HTML parser failed one of its internal assertions on this page and gave up: no links
    /// were found, and the crawl goes on (gumbo 0.10.1 has such assertions; see docs/HOSTILE.md).
    bool parser_gave_up = false;
    /// With a max_links cap: the link-bearing tags (<a>/<area> with href, <frame>/<iframe> with src, meta
    /// refresh) past the first max_links, which were not parsed. Counted on the tokens, so approximate: an
    /// empty href or a link the parser would drop counts too.
    std::size_t dropped_references = 0;
};

/// Parses `html` (any bytes; never throws on malformed markup) and collects its links. With `max_links` other
/// than 0, the document is parsed only up to the first max_links link-bearing tags (so `references` has at
/// most that many), and those past them are counted in `dropped_references`. Whatever the cap, past 100,000
/// start tags the others are not parsed as elements, except those that carry links (see markup_guard.hpp).
page_links extract_links(std::string_view html, std::size_t max_links = 0);

/// The URL part of a meta refresh content attribute ("5; URL='/next'" -> "/next"); nullopt when it has none.
std::optional<std::string> parse_meta_refresh(std::string_view content);

/// True for the media types whose bodies are parsed for links: text/html and application/xhtml+xml.
bool is_html_media_type(std::string_view media_type) noexcept;

} // namespace asiocrawl
