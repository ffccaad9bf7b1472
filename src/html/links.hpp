// Link extraction from HTML. Sans-io: bytes in, raw references out.
#pragma once

#include <asiocrawl/config.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace asiocrawl {

/// What a page requisite is: a resource the page needs to display, which an archive that replays needs too.
enum class requisite_kind : std::uint8_t {
    image,      ///< <img src>, <img srcset>, <video poster>
    script,     ///< <script src>
    stylesheet, ///< <link rel=stylesheet href>
    icon,       ///< <link rel=icon href> (also "shortcut icon", "apple-touch-icon")
    preload,    ///< <link rel=preload href>, <link rel=modulepreload href>
    media,      ///< <video src>, <audio src>, <source src>
    object,     ///< <object data>
    embed,      ///< <embed src>
    style,      ///< url() and @import in a <style> element or a style attribute
};

/// A name for a requisite kind: "image", "script", "stylesheet", ...
std::string_view requisite_kind_name(requisite_kind kind) noexcept;

struct page_requisite {
    /// The reference as written (entities decoded, nothing resolved).
    std::string url;
    requisite_kind kind;
};

/// What robots meta tags or X-Robots-Tag headers ask of a crawler (Google's robots meta tag specification);
/// only the two a crawler that does not index acts upon or reports.
struct robots_directives {
    bool noindex = false;  ///< "noindex" or "none"
    bool nofollow = false; ///< "nofollow" or "none": the page's links are not to be followed

    robots_directives& operator|=(const robots_directives& other) noexcept {
        noindex = noindex || other.noindex;
        nofollow = nofollow || other.nofollow;
        return *this;
    }
    bool operator==(const robots_directives&) const = default;
};

/// The directives of a <meta name=robots> content attribute: comma-separated, case-insensitive, whitespace
/// around each ignored; unknown ones (index, follow, noarchive, max-snippet:...) are ignored.
robots_directives parse_robots_directives(std::string_view content) noexcept;

/// What a page links to, as written in the markup (entities decoded by the HTML parser, nothing resolved).
struct page_links {
    /// href of the first <base> element that has one, if any. Links resolve against it.
    std::optional<std::string> base_href;
    /// In document order: <a href>, <area href>, <frame src>, <iframe src>, SVG <a href> (or xlink:href), and
    /// the URL of <meta http-equiv="refresh" content="N; url=...">. Duplicates are kept; empty values are
    /// dropped.
    std::vector<std::string> references;
    /// Page requisites in document order, only when asked for (extract_options::requisites); empty values are
    /// dropped. Never in `references`.
    std::vector<page_requisite> requisites;
    /// True when the HTML parser failed one of its internal assertions on this page and gave up: no links
    /// were found, and the crawl goes on (only gumbo 0.10.1 has such assertions; see docs/HOSTILE.md).
    bool parser_gave_up = false;
    /// With a max_links cap: the links past the first max_links. The fast parser counts exactly the links it
    /// would have returned; gumbo's path counts the link-bearing tags of the part of the document it cut off
    /// (approximate: an empty href counts too).
    std::size_t dropped_references = 0;
    /// Every <meta name=robots> of the page together (an element in template contents does not count).
    robots_directives meta_robots;
    /// href of the first <link rel=canonical> in document order with a non-blank one, as written.
    std::optional<std::string> canonical;
    /// <a>/<area> links left out because their rel holds "nofollow" (extract_options::skip_rel_nofollow).
    std::size_t rel_nofollow = 0;
};

struct extract_options {
    html_parser parser = html_parser::fast;
    /// Keep the first max_links references (and requisites); 0: no cap.
    std::size_t max_links = 0;
    /// Also collect page requisites (off by default: a crawl that only follows links needs none).
    bool requisites = false;
    /// Leave out the links of <a> and <area> elements whose rel holds "nofollow" (config
    /// robots.obey_rel_nofollow), counting them in page_links::rel_nofollow.
    bool skip_rel_nofollow = false;
};

/// Parses `html` (any bytes, read as UTF-8; never throws on malformed markup) and collects its links.
page_links extract_links(std::string_view html, const extract_options& options);

/// The same with the fast parser: at most max_links references (0: no cap), the others counted in
/// `dropped_references`.
page_links extract_links(std::string_view html, std::size_t max_links = 0);

/// The URL part of a meta refresh content attribute ("5; URL='/next'" -> "/next"); nullopt when it has none.
std::optional<std::string> parse_meta_refresh(std::string_view content);

/// True for the media types whose bodies are parsed for links: text/html and application/xhtml+xml.
bool is_html_media_type(std::string_view media_type) noexcept;

/// A reference found in CSS: the argument of url() or of @import.
struct css_reference {
    std::string url;
    /// From an @import rule (the stylesheet it names is a stylesheet too), not a url() elsewhere.
    bool import = false;
};

/// The url() and @import references of a stylesheet (or of a style attribute's declarations), in order,
/// following the CSS Syntax tokenizer: comments, strings, escapes and identifiers such as "myurl(" are not
/// mistaken for references. `css` is UTF-8.
std::vector<css_reference> extract_css_references(std::string_view css);

} // namespace asiocrawl
