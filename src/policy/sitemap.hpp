// Sitemaps (sitemaps.org protocol 0.9): the URLs a site lists for crawlers. Sans-io: the crawler fetches the
// file, gunzips it when needed, and hands the bytes here.
#pragma once

#include <boost/system/result.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace asiocrawl {

/// The most <loc> entries one sitemap file may hold, per the protocol.
inline constexpr std::size_t sitemap_max_entries = 50'000;

/// A <changefreq> value: how often the site says a page changes (sitemaps.org: a hint, not a command).
enum class sitemap_changefreq : std::uint8_t { always, hourly, daily, weekly, monthly, yearly, never };

/// What a sitemap says about one of its entries besides the location. Both are optional in the protocol and
/// absent when the text is not a valid value.
struct sitemap_hints {
    /// <lastmod>, in UTC, whole seconds (fractions dropped); see parse_w3c_datetime.
    std::optional<std::chrono::sys_seconds> lastmod;
    /// <changefreq> (only in a <urlset>; a <sitemap> entry of an index has none).
    std::optional<sitemap_changefreq> changefreq;

    friend bool operator==(const sitemap_hints&, const sitemap_hints&) = default;
};

struct sitemap_document {
    /// true for <sitemapindex> (its locations are further sitemaps), false for <urlset> (pages).
    bool is_index = false;
    /// The <loc> texts in document order: entities decoded, CDATA unwrapped, surrounding whitespace trimmed,
    /// otherwise as written (not resolved, not normalized, not checked). Empty <loc>s are skipped.
    std::vector<std::string> locations;
    /// hints[i] is what the entry of locations[i] says besides its location; always as long as locations
    /// (all absent for a plain-text sitemap). An entry with several <loc>s gives each of them its hints.
    std::vector<sitemap_hints> hints;
    /// More entries followed than max_entries: the rest were not read.
    bool truncated = false;
};

/// Parses sitemap XML (already decompressed) with expat. Elements are recognized by local name whatever
/// their namespace (sitemaps with a missing or wrong xmlns are common): a <loc> counts when it is a child of
/// a <url> child of the root <urlset>, or of a <sitemap> child of the root <sitemapindex>, so extension
/// elements such as <image:loc> deeper down are ignored. At most `max_entries` locations are kept.
/// <lastmod> and <changefreq> are read from the same places as <loc> (children of the entry), trimmed,
/// through parse_w3c_datetime and parse_changefreq; a text longer than 64 bytes is not read whole and counts
/// as invalid, and when an entry repeats one of them the last one counts.
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

/// Parses a W3C datetime (https://www.w3.org/TR/NOTE-datetime), the form of a sitemap's <lastmod>: YYYY,
/// YYYY-MM, YYYY-MM-DD, YYYY-MM-DDThh:mmTZD, YYYY-MM-DDThh:mm:ssTZD or YYYY-MM-DDThh:mm:ss.sTZD (any number
/// of fraction digits, dropped), where TZD is Z, +hh:mm or -hh:mm and is required when there is a time. A
/// date alone means its first second in UTC. Strict as the note is: exactly these forms (upper-case T and
/// Z, no surrounding whitespace), four-digit years, real calendar dates (leap years counted), hours 00-23,
/// minutes 00-59, seconds 00-60 (a leap second reads as the next minute's first), offsets up to 23:59.
/// nullopt otherwise.
std::optional<std::chrono::sys_seconds> parse_w3c_datetime(std::string_view text) noexcept;

/// The same, keeping the fraction to the microsecond (further digits dropped): the form records' fetched_at
/// and WARC-Date take (RFC 3339 in UTC, "2026-11-28T00:45:06.811891Z"), read back exactly.
std::optional<std::chrono::sys_time<std::chrono::microseconds>>
parse_w3c_datetime_micros(std::string_view text) noexcept;

/// Parses a <changefreq> value: always, hourly, daily, weekly, monthly, yearly or never, ignoring ASCII case.
/// nullopt otherwise.
std::optional<sitemap_changefreq> parse_changefreq(std::string_view text) noexcept;

/// True when bytes start with the gzip magic (1f 8b): a .xml.gz served without Content-Encoding.
bool looks_gzipped(std::string_view bytes) noexcept;

} // namespace asiocrawl
