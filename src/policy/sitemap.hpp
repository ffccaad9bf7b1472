// Sitemaps (sitemaps.org protocol 0.9): the URLs a site lists for crawlers. Sans-io: the crawler fetches the
// file, gunzips it when needed, and hands the bytes here.
#pragma once

#include <boost/system/result.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace asiocrawl {

/// The most <loc> entries one sitemap file may hold, per the protocol.
inline constexpr std::size_t sitemap_max_entries = 50'000;

struct sitemap_document {
    /// true for <sitemapindex> (its locations are further sitemaps), false for <urlset> (pages).
    bool is_index = false;
    /// The <loc> texts in document order: entities decoded, CDATA unwrapped, surrounding whitespace trimmed,
    /// otherwise as written (not resolved, not normalized, not checked). Empty <loc>s are skipped.
    std::vector<std::string> locations;
    /// More entries followed than max_entries: the rest were not read.
    bool truncated = false;
};

/// Parses sitemap XML (already decompressed) with expat. Elements are recognized by local name whatever
/// their namespace (sitemaps with a missing or wrong xmlns are common): a <loc> counts when it is a child of
/// a <url> child of the root <urlset>, or of a <sitemap> child of the root <sitemapindex>, so extension
/// elements such as <image:loc> deeper down are ignored. At most `max_entries` locations are kept.
/// Errors (all error::bad_response, "the peer answered something unusable"): malformed XML anywhere in the
/// document (including an empty body or junk after the root), a root element other than urlset or
/// sitemapindex, and any DTD entity declaration — sitemaps never need one, and refusing them rules out
/// entity-expansion attacks (billion laughs) and external entities outright.
boost::system::result<sitemap_document> parse_sitemap(std::string_view xml,
                                                      std::size_t max_entries = sitemap_max_entries);

/// Parses a plain-text sitemap: one URL per line (LF or CRLF), UTF-8 BOM allowed. Lines are trimmed; empty
/// lines and lines that do not start with "http://" or "https://" (case-insensitive) are skipped, so an
/// HTML error page served in its place yields nothing. is_index is false.
sitemap_document parse_sitemap_text(std::string_view text, std::size_t max_entries = sitemap_max_entries);

/// True when bytes start with the gzip magic (1f 8b): a .xml.gz served without Content-Encoding.
bool looks_gzipped(std::string_view bytes) noexcept;

} // namespace asiocrawl
