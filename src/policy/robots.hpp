// robots.txt (RFC 9309): what an origin's answer means, and the rules of the group that applies to us.
// Sans-io: the crawler fetches /robots.txt, caps the body at robots_config::max_bytes, and hands the bytes
// here.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace asiocrawl {

enum class robots_fetch_verdict {
    parse,        ///< a 2xx answer: parse the body
    allow_all,    ///< the file is "unavailable": crawl as if there were no robots.txt
    disallow_all, ///< the origin is "unreachable": crawl nothing there for now
};

/// What an origin's final robots.txt status means (RFC 9309 §2.3.1):
/// - 2xx: parse;
/// - 3xx (only reached when the caller gave up following redirects, after robots_config::max_redirects):
///   allow_all, since §2.3.1.2 lets a crawler treat such a file as unavailable;
/// - 4xx: allow_all ("unavailable"), except 429 Too Many Requests: disallow_all, as Google does, since it is
///   the server asking for less traffic, not saying there is no file;
/// - 5xx: disallow_all ("unreachable");
/// - anything else (1xx, out-of-range numbers): disallow_all, the cautious reading of an answer we cannot
///   interpret.
robots_fetch_verdict robots_verdict_for_status(int status) noexcept;

/// The part of a URL robots.txt rules are matched against: path, params and query, without the fragment,
/// "/" when empty ("http://h/a;b?c#d" -> "/a;b?c"). Without a scheme the first segment is the host
/// ("h/a" -> "/a"), as Google's matcher reads it, except a path that starts with "/".
std::string robots_path_of(std::string_view url);

/// The rules of one robots.txt that apply to one product token.
class robots_rules {
public:
    /// Allows everything (same as allow_all()).
    robots_rules() = default;

    /// Parses a robots.txt body and keeps the rules of the group(s) for `product_token`:
    /// - a group is one or more user-agent lines followed by rules; it ends at the next user-agent line
    ///   that follows a rule. Blank lines do not end groups. Rules before any user-agent line are ignored;
    /// - a user-agent value matches when its leading run of [A-Za-z_-] equals the product token,
    ///   case-insensitively ("FooBot/1.2" and "FooBot Images" match token "foobot"). The token itself must
    ///   be valid (valid_product_token()); an invalid one matches only "*" groups. All matching groups are
    ///   merged; when none matches, all "*" groups are merged ("*" and "* anything" are both the global
    ///   agent); when there is no "*" group either, everything is allowed;
    /// - keys are case-insensitive; a few common misspellings are accepted ("useragent", "user agent",
    ///   "dissallow", "disalow", "diasllow", "disallaw", "site-map"); unknown keys are ignored; a line
    ///   without a colon counts only when it is exactly two words ("Disallow /x", as Google reads it); "#"
    ///   starts a comment; a leading UTF-8 BOM (or a prefix of one), CR, LF and CRLF line ends are accepted;
    ///   bytes past 16,663 on one line are dropped (Google's cap); an empty allow/disallow is no rule;
    /// - a pattern that starts with neither "/" nor "*" gets a leading "/" (as Google does);
    /// - an allow whose last segment starts with "index.htm" also allows its directory exactly ("Allow:
    ///   /d/index.html" allows "/d/" too), as Google does.
    /// Never throws on any input bytes (only std::bad_alloc).
    static robots_rules parse(std::string_view body, std::string_view product_token);
    static robots_rules allow_all();
    /// RFC 9309 2.2.1: a product token is one or more of [A-Za-z_-] ("FooBot", not "FooBot/1.2").
    static bool valid_product_token(std::string_view token) noexcept;
    static robots_rules disallow_all();

    /// Whether the URL whose encoded path plus "?query" (if any) is `path_and_query` ("/a/b?x=1") may be
    /// fetched. The most specific matching rule wins (the one with the longest pattern, measured after the
    /// normalization below); on equal length allow wins; no matching rule allows. `*` matches any sequence,
    /// a final `$` anchors the end. Both sides are compared in one normal form (RFC 9309 §2.2.2): %XX of an
    /// unreserved character is decoded, other %XX get upper-case hex, raw non-ASCII, control and space
    /// bytes are percent-encoded, and a literal `*` or `$` in the URL compares equal to %2A / %24.
    /// "/robots.txt" is always allowed. Worst case O(pattern length × path length) per rule, no backtracking.
    bool allowed(std::string_view path_and_query) const;

    /// Crawl-delay of the selected group(s), the first one given: decimal seconds, fractions allowed
    /// ("0.5"), rounded to milliseconds and capped at one day. Unparsable or negative values are ignored.
    /// The crawler still clamps it with robots_config::max_crawl_delay.
    std::optional<std::chrono::milliseconds> crawl_delay() const;

    /// Sitemap: lines anywhere in the file (they belong to no group), values as written, in file order.
    const std::vector<std::string>& sitemaps() const noexcept;

private:
    struct rule {
        std::string pattern; ///< normal form; '*' is the wildcard (a literal '*' is "%2A")
        bool anchored = false;
        bool allow = false;
    };
    /// Sorted most specific first, allow before disallow at equal length: the first match decides.
    std::vector<rule> rules_;
    std::optional<std::chrono::milliseconds> crawl_delay_;
    std::vector<std::string> sitemaps_;
};

} // namespace asiocrawl
