// Deterministic generated websites with ground truth: what a correct crawler must request, and must not.
// Served by http_server for the demo, the integration tests and the benchmarks.
#pragma once

#include <asiocrawl_demo/http_server.hpp>

#include <cstdint>
#include <map>
#include <set>
#include <string>

namespace asiocrawl::demo {

/// One resource of a site, keyed by its request target ("/p/12.html", "/search?q=1").
struct resource {
    int status = 200;
    std::string content_type = "text/html; charset=utf-8";
    /// The body. The text "{{origin}}" is replaced when served with "http://" + the request's Host header, so
    /// absolute self-links work on any port.
    std::string body;
    /// Location header for redirects; may also contain "{{origin}}". Empty: no Location header.
    std::string location;
};

struct site {
    std::map<std::string, resource> resources; ///< keyed by request target
    /// Targets a correct crawler requests when started at "/" with default options (strict scope,
    /// max_redirect 10): every reachable page, redirect hop and broken link, each exactly once.
    std::set<std::string> expected_requests;
    /// Absolute URLs that appear in links (or in the Location of a reachable redirect) but are out of scope
    /// (other hosts or ports) or not http(s); never requested. http(s) URLs are in normalized form
    /// ("//Other.INVALID/x" is listed as "http://other.invalid/x"), other schemes as written ("mailto:..."),
    /// placeholders unexpanded ("{{other_origin}}/p/1.html").
    std::set<std::string> out_of_scope_links;
};

struct site_options {
    std::uint32_t pages = 200; ///< content pages (besides redirects, 404s and assets)
    std::uint32_t seed = 1;    ///< same seed and options: the same site, byte for byte
    std::uint32_t links_per_page = 12;
    std::uint32_t min_page_bytes = 2'000;
    std::uint32_t max_page_bytes = 8'000;
};

/// Builds a site that exercises every link shape a crawler meets: relative, root-relative, absolute
/// self-links, <base href>, fragments, query strings, dot segments, entities (&amp;), unquoted attributes,
/// redirect chains, redirect loops, two redirects joining on one page, 404s, a redirect without Location,
/// off-host links, mailto:/javascript:/ftp: links, non-HTML resources, links in comments and scripts that
/// must not be followed, and pages reachable only through frames, areas and meta refresh.
/// Throws std::invalid_argument when options.pages is 0 or min_page_bytes > max_page_bytes.
site generate_site(const site_options& options);

/// A handler serving `s` (404 with a small HTML body for unknown targets). `s` must outlive the server.
request_handler serve_site(const site& s);

} // namespace asiocrawl::demo
