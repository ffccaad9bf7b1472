// Deterministic generated websites with ground truth: what a correct crawler must request, and must not.
// Served by http_server for the demo, the integration tests and the benchmarks.
#pragma once

#include <asiocrawl_demo/http_server.hpp>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>

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

/// What the links of content pages are, as relative weights drawn per link (besides the first link of each
/// page, which always leads to the next page so that every page is reachable). The defaults are the classic
/// mix: 2% broken, 3% fragment-only, 2% off-site, 93% links to content pages in varied styles. Kinds with
/// weight 0 draw nothing from the generator's random source, so adding one never changes other sites.
struct link_mix {
    std::uint32_t broken = 2;   ///< to /missing/N.html, which answers 404
    std::uint32_t fragment = 3; ///< "#section-N": the page itself
    std::uint32_t off_site = 2; ///< an off-host or a non-http link, either kind
    std::uint32_t off_host = 0; ///< another host or port (absolute, protocol-relative, https)
    std::uint32_t non_http = 0; ///< mailto:, javascript:, tel:, ftp:, data:
    std::uint32_t redirect = 0; ///< a redirect of its own (301/302/303/307/308) onto a content page
    std::uint32_t query = 0;    ///< a query variant of a content page ("/p/7.html?from=3"), a small page
    std::uint32_t relative = 0; ///< a content page, as a relative reference ("7.html")
    std::uint32_t absolute = 0; ///< a content page, as an absolute URL
    /// A content page in one of 16 styles: root-relative, relative, absolute, dot segments, entities,
    /// percent-encoding, unquoted and uppercase attributes, fragments, whitespace.
    std::uint32_t styled = 93;
    /// Percentage (0 to 100) of content pages, page 0 excepted, carrying <base href="{{origin}}/">; every
    /// relative link on such a page is written against that base (so a crawler ignoring it goes wrong).
    std::uint32_t base_pages = 0;
};

struct site_options {
    std::uint32_t pages = 200; ///< content pages (besides redirects, 404s and assets)
    std::uint32_t seed = 1;    ///< same seed and options: the same site, byte for byte
    std::uint32_t links_per_page = 12;
    std::uint32_t min_page_bytes = 2'000;
    std::uint32_t max_page_bytes = 8'000;
    link_mix links = {};
};

/// Builds a site that exercises every link shape a crawler meets: relative, root-relative, absolute
/// self-links, <base href>, fragments, query strings, dot segments, entities (&amp;), unquoted attributes,
/// redirect chains, redirect loops, two redirects joining on one page, 404s, a redirect without Location,
/// off-host links, mailto:/javascript:/ftp: links, non-HTML resources, links in comments and scripts that
/// must not be followed, and pages reachable only through frames, areas and meta refresh.
/// Throws std::invalid_argument when options.pages is 0, min_page_bytes > max_page_bytes, every link_mix
/// weight is 0 or base_pages exceeds 100.
site generate_site(const site_options& options);

/// `text` as served to a request with Host `host`: "{{origin}}" becomes "http://" + host, and
/// "{{other_origin}}" the other loopback name ("localhost" for "127.0.0.1", else "127.0.0.1") with the same
/// port. For writing a site out as static files.
std::string expand_placeholders(std::string_view text, std::string_view host);

/// Reads a link mix written "kind=weight,kind=weight" (kinds as the link_mix fields, e.g.
/// "redirect=5,query=5,base_pages=10"); unnamed kinds keep their defaults. Throws std::invalid_argument
/// naming the bad part.
link_mix parse_link_mix(std::string_view spec);

/// A handler serving `s` (404 with a small HTML body for unknown targets). `s` must outlive the server.
request_handler serve_site(const site& s);

} // namespace asiocrawl::demo
