// What the crawler says about each URL it dealt with: one record per fetched URL, redirect hop and failure.
#pragma once

#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace asiocrawl {

/// How a URL compares with the previous crawl's capture of it, in a re-crawl (docs/RECRAWL.md).
enum class change_kind : std::uint8_t {
    none,      ///< not a re-crawl (a first crawl), or nothing to compare (robots.txt)
    added,     ///< "new": the previous crawl did not know this URL
    changed,   ///< "changed": another status, redirect target or payload than last time
    unchanged, ///< "unchanged": 304 Not Modified, or the same status and payload digest
    gone,      ///< "gone": it now answers 404 or 410 and did not last time, or no page of the re-crawl
               ///< leads to it any more (then it was not requested: status 0, tries 0)
};

/// "new", "changed", "unchanged", "gone"; "" for none.
constexpr std::string_view change_name(change_kind c) noexcept {
    switch (c) {
    case change_kind::added:
        return "new";
    case change_kind::changed:
        return "changed";
    case change_kind::unchanged:
        return "unchanged";
    case change_kind::gone:
        return "gone";
    default:
        return "";
    }
}

/// One outcome. Exactly one of these shapes:
/// - a page:      status != 0, no error, next_url empty;
/// - a redirect:  status is 3xx, next_url holds the resolved target (even when the target is not followed:
///                out of scope, excluded or already seen) — or error is set when the chain cannot go on;
/// - a failure:   error set; status is 0 when no response arrived (network failure after max_tries);
/// - gone:        in a re-crawl that follows links, a known URL no page links to any more: change is gone,
///                status 0, tries 0, no error (it was not requested).
struct record {
    /// The normalized URL that was requested.
    std::string url;
    /// The resolved Location of a redirect; empty otherwise.
    std::string next_url;
    /// How the crawl came to this URL: the page that links to it, the URL that redirected to it, or the
    /// sitemap (or robots.txt) that lists it. Empty for a root.
    std::string referrer;
    /// HTTP status of the last response; 0 when none arrived.
    int status = 0;
    /// Why this URL failed (asiocrawl::error or a network error); empty on success.
    boost::system::error_code error;
    /// What more there is to say about `error` when there is something: why a certificate did not verify
    /// (expired when, which issuer, which names it holds instead of the host), what a proxy answered.
    /// Written after the error's message in JSON Lines and the report; never holds credentials.
    std::string error_detail;
    /// Body bytes received.
    std::uint64_t size = 0;
    /// Media type from Content-Type, lowercased, without parameters ("text/html"); empty when absent.
    std::string content_type;
    /// The body's character encoding, lowercased, as declared: from Content-Type, else a byte order mark,
    /// else <meta charset> / <meta http-equiv>. Empty when nothing declares one: never guessed.
    std::string charset;
    /// Where `charset` came from: "content-type", "bom", "meta", or empty.
    std::string charset_source;
    /// Links on the page that are in scope (after scope, include/exclude and depth filters).
    std::size_t num_urls = 0;
    /// Of those, the ones not seen before, which were queued.
    std::size_t num_new_urls = 0;
    /// Links of the page to others than its first traps.max_links_per_page distinct links, which were not
    /// followed (also logged as a warning). 0 when the page is under the cap.
    std::size_t links_dropped = 0;
    /// Link depth: 0 for roots.
    int depth = 0;
    /// Attempts made (1 when the first one succeeded).
    int tries = 0;
    /// The URL came from a sitemap rather than a link or redirect.
    bool from_sitemap = false;
    /// For a page requisite (crawler_config::requisites), what the page needs it as: "image", "script",
    /// "stylesheet", "icon", "preload", "media", "object", "embed" or "style" (requisite_kind_name); empty
    /// for every other URL.
    std::string requisite;
    /// The response's validators as sent (ETag, Last-Modified), empty when absent: what a re-crawl's
    /// conditional request sends back.
    std::string etag;
    std::string last_modified;
    /// "sha1:" and the base32 SHA-1 of the decoded body, for an answer with a body (what a re-crawl compares
    /// to tell changed from unchanged; the WARC-Payload-Digest when the body had no content coding); empty
    /// otherwise.
    std::string payload_digest;
    /// When the last attempt's request was sent (the capture's date in an archive); epoch when none was.
    std::chrono::system_clock::time_point fetched_at{};
    /// In a re-crawl: how this URL compares with the previous crawl (change_kind); none otherwise.
    change_kind change = change_kind::none;
    /// The server answered 304 Not Modified to the re-crawl's conditional request (status is 304).
    bool not_modified = false;
    /// When the first attempt started, measured from the start of the crawl.
    std::chrono::microseconds started{0};
    /// The protocol of the last attempt's answer: "http/1.1" or "h2"; empty when none came.
    std::string protocol;
    /// From the start of the first attempt to the end of the last one.
    std::chrono::microseconds elapsed{0};
    /// The page asks not to be indexed: a <meta name="robots"> or an X-Robots-Tag header (for every crawler,
    /// or naming ours) says noindex or none. Recorded, not acted upon: asiocrawl indexes nothing.
    bool noindex = false;
    /// The page asks that its links not be followed (nofollow or none, from the same places). With
    /// robots.obey they were not: num_urls is 0 and the crawl counts them as skipped_nofollow.
    bool nofollow = false;
    /// The canonical URL the page names (RFC 6596), resolved and normalized like a link: its first
    /// <link rel="canonical" href>, else a `Link: <...>; rel="canonical"` header's target; empty when none.
    std::string canonical;

    bool is_redirect() const noexcept { return status >= 300 && status < 400 && !next_url.empty(); }
    bool failed() const noexcept { return static_cast<bool>(error); }
};

} // namespace asiocrawl
