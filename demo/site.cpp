// The site generator. Every link is written together with the normalized target a correct crawler resolves it
// to, so the ground truth is a walk over the link graph the generator built, never a scrape of its own HTML.
// The walk models the crawler: a seen-set on normalized targets, links on text/html and application/xhtml+xml
// pages, redirects followed with a budget of 10 per chain. It runs twice (FIFO and LIFO) and the generator
// refuses a site whose ground truth would depend on crawl order.

#include <asiocrawl_demo/site.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/beast/http/verb.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <random>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

namespace asiocrawl::demo {

namespace http = boost::beast::http;

namespace {

constexpr std::string_view origin = "{{origin}}";
constexpr std::string_view other_origin = "{{other_origin}}";
constexpr std::string_view html_utf8 = "text/html; charset=utf-8";
constexpr int redirect_budget = 10;

/// Uniform integers from raw mt19937 output, the same with every standard library (the standard fixes the
/// engine's output, not the distributions').
class random_source {
public:
    explicit random_source(std::uint32_t seed)
        : engine_(seed) {}

    /// Uniform in [0, n), n > 0: rejects the 2^32 mod n lowest raw values so every residue is equally likely.
    std::uint32_t below(std::uint32_t n) {
        const std::uint32_t reject_under = (std::uint32_t{0} - n) % n;
        std::uint32_t x = 0;
        do {
            x = static_cast<std::uint32_t>(engine_());
        } while (x < reject_under);
        return x % n;
    }

    /// Uniform in [lo, hi], lo <= hi.
    std::uint32_t between(std::uint32_t lo, std::uint32_t hi) {
        return hi - lo == UINT32_MAX ? static_cast<std::uint32_t>(engine_()) : lo + below(hi - lo + 1);
    }

    /// True with probability num/den.
    bool chance(std::uint32_t num, std::uint32_t den) { return below(den) < num; }

private:
    std::mt19937 engine_;
};

constexpr std::array<std::string_view, 48> vocabulary{
    "asynchronous", "awaitable",  "buffer",    "coroutine", "crawler", "deadline", "executor", "fetch",
    "frontier",     "graph",      "handler",   "header",    "host",    "index",    "keep",     "alive",
    "latency",      "link",       "loopback",  "markup",    "network", "origin",   "page",     "parser",
    "path",         "politeness", "queue",     "redirect",  "request", "resolve",  "response", "robots",
    "scope",        "segment",    "socket",    "status",    "strand",  "stream",   "target",   "throughput",
    "timer",        "token",      "traversal", "visit",     "worker",  "the",      "of",       "and",
};

std::string content_target(std::uint32_t i) {
    return "/p/" + std::to_string(i) + ".html";
}

/// `s` as a double-quoted attribute value.
std::string attr_escape(std::string_view s) {
    std::string out;
    for (const char c : s) {
        if (c == '&') {
            out += "&amp;";
        } else if (c == '"') {
            out += "&quot;";
        } else {
            out += c;
        }
    }
    return out;
}

/// Text content.
std::string text_escape(std::string_view s) {
    std::string out;
    for (const char c : s) {
        if (c == '&') {
            out += "&amp;";
        } else if (c == '<') {
            out += "&lt;";
        } else if (c == '>') {
            out += "&gt;";
        } else {
            out += c;
        }
    }
    return out;
}

std::string anchor(std::string_view href, std::string_view text) {
    return "<a href=\"" + attr_escape(href) + "\">" + text_escape(text) + "</a>";
}

/// The directory segments of a root-relative target: "/a/b/c.html?q" -> {"a", "b"}.
std::vector<std::string> directory_segments(std::string_view target) {
    target = target.substr(0, target.find('?'));
    std::vector<std::string> out;
    std::size_t start = 1;
    for (std::size_t slash = target.find('/', start); slash != std::string_view::npos;
         slash = target.find('/', start)) {
        out.emplace_back(target.substr(start, slash - start));
        start = slash + 1;
    }
    return out;
}

/// A relative reference from the document `from` to `to` (both root-relative targets) without dot segments
/// unless it must climb: "/p/3.html" -> "/p/12.html" gives "12.html"; "/docs/x.html" -> "/p/1.html" gives
/// "../p/1.html".
std::string relative_reference(std::string_view from, std::string_view to) {
    const auto from_dirs = directory_segments(from);
    const auto to_dirs = directory_segments(to);
    std::size_t common = 0;
    while (common < from_dirs.size() && common < to_dirs.size() && from_dirs[common] == to_dirs[common]) {
        ++common;
    }
    std::string out;
    for (std::size_t i = common; i < from_dirs.size(); ++i) {
        out += "../";
    }
    for (std::size_t i = common; i < to_dirs.size(); ++i) {
        out += to_dirs[i] + "/";
    }
    const std::string_view path = to.substr(0, to.find('?'));
    out += to.substr(path.rfind('/') + 1); // the last segment, with the query
    if (out.empty()) {
        return "./";
    }
    const auto first_segment = std::string_view(out).substr(0, out.find('/'));
    if (first_segment.find(':') != std::string_view::npos || out.front() == '?') {
        out.insert(0, "./");
    }
    return out;
}

bool is_unreserved(unsigned char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_' || c == '~';
}

bool is_upper_hex(char c) {
    return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F');
}

/// True for a target in the crawler's normalized form: root-relative, no fragment, no dot segments, only
/// characters RFC 3986 allows raw, percent-encoding with uppercase hex and never for an unreserved character.
bool is_normalized_target(std::string_view t) {
    if (t.empty() || t.front() != '/' || t.find('#') != std::string_view::npos) {
        return false;
    }
    const auto path = t.substr(0, t.find('?'));
    std::string_view rest = path;
    while (!rest.empty()) {
        rest.remove_prefix(1);
        const auto segment = rest.substr(0, rest.find('/'));
        if (segment == "." || segment == "..") {
            return false;
        }
        rest.remove_prefix(segment.size());
    }
    constexpr std::string_view allowed_raw = "!$&'()*+,;=:@/?";
    for (std::size_t i = 0; i < t.size(); ++i) {
        const auto c = static_cast<unsigned char>(t[i]);
        if (c == '%') {
            if (i + 2 >= t.size() || !is_upper_hex(t[i + 1]) || !is_upper_hex(t[i + 2])) {
                return false;
            }
            const auto value =
                static_cast<unsigned char>(std::stoi(std::string(t.substr(i + 1, 2)), nullptr, 16));
            if (is_unreserved(value)) {
                return false;
            }
            i += 2;
        } else if (!is_unreserved(c) && allowed_raw.find(static_cast<char>(c)) == std::string_view::npos) {
            return false;
        }
    }
    return true;
}

bool is_followed_redirect(int status) {
    return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

bool is_parsed_media_type(std::string_view content_type) {
    const auto media = content_type.substr(0, content_type.find(';'));
    return media == "text/html" || media == "application/xhtml+xml";
}

/// A resource plus what a correct crawler takes from it: the in-scope targets it follows (links of an HTML
/// page, or a redirect's Location) and the out-of-scope URLs it meets.
struct node {
    resource res;
    std::vector<std::string> follows;
    std::vector<std::string> off_scope;
};

/// Markup under construction, each link written together with where it leads.
struct fragment {
    std::string markup;
    std::vector<std::string> follows;
    std::vector<std::string> off_scope;

    fragment& text(std::string_view m) {
        markup += m;
        return *this;
    }
    fragment& link(std::string_view m, std::string target) {
        markup += m;
        follows.push_back(std::move(target));
        return *this;
    }
    fragment& off(std::string_view m, std::string absolute) {
        markup += m;
        off_scope.push_back(std::move(absolute));
        return *this;
    }
    fragment& append(const fragment& other) {
        markup += other.markup;
        follows.insert(follows.end(), other.follows.begin(), other.follows.end());
        off_scope.insert(off_scope.end(), other.off_scope.begin(), other.off_scope.end());
        return *this;
    }
};

/// How a page is wrapped into a document.
enum class layout { html, frameset, xhtml };

/// An off-site or non-http link: as written, and as listed in out_of_scope_links (normalized).
struct off_site_link {
    std::string_view href;
    std::string_view absolute;
};

constexpr std::array<off_site_link, 11> off_site_links{{
    {"http://other.invalid/x", "http://other.invalid/x"},
    {"{{other_origin}}/p/1.html", "{{other_origin}}/p/1.html"},
    {"https://other.invalid/secure", "https://other.invalid/secure"},
    {"//other.invalid/protocol-relative", "http://other.invalid/protocol-relative"},
    {"HTTP://Other.INVALID/Upper", "http://other.invalid/Upper"},
    {"http://127.0.0.1:1/p/1.html", "http://127.0.0.1:1/p/1.html"},
    {"mailto:webmaster@example.invalid", "mailto:webmaster@example.invalid"},
    {"javascript:void(0)", "javascript:void(0)"},
    {"tel:+1-555-0100", "tel:+1-555-0100"},
    {"ftp://ftp.example.invalid/pub/file.txt", "ftp://ftp.example.invalid/pub/file.txt"},
    {"data:text/plain,hello", "data:text/plain,hello"},
}};

/// off_site_links[0, first_non_http_link) are http(s) links to other hosts or ports; the rest are not http.
constexpr std::size_t first_non_http_link = 6;

/// The link styles used between content pages; every one is used at least once when pages >= the count.
constexpr std::uint32_t link_style_count = 16;

/// A 1x1 grayscale PNG carrying `text` in a tEXt chunk (valid, so image tools accept it).
std::string png_with_text(std::string_view text) {
    std::array<std::uint32_t, 256> table{};
    for (std::uint32_t n = 0; n < 256; ++n) {
        std::uint32_t c = n;
        for (int k = 0; k < 8; ++k) {
            c = (c & 1u) != 0 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        }
        table[n] = c;
    }
    const auto crc32 = [&table](std::string_view bytes) {
        std::uint32_t c = 0xFFFFFFFFu;
        for (const char b : bytes) {
            c = table[(c ^ static_cast<unsigned char>(b)) & 0xFFu] ^ (c >> 8);
        }
        return c ^ 0xFFFFFFFFu;
    };
    const auto be32 = [](std::uint32_t v) {
        std::string s(4, '\0');
        for (int i = 0; i < 4; ++i) {
            s[static_cast<std::size_t>(i)] = static_cast<char>((v >> (24 - 8 * i)) & 0xFFu);
        }
        return s;
    };
    const auto chunk = [&](std::string_view type, std::string_view data) {
        const std::string typed = std::string(type) + std::string(data);
        return be32(static_cast<std::uint32_t>(data.size())) + typed + be32(crc32(typed));
    };
    using namespace std::string_literals;
    const std::string header = be32(1) + be32(1) + "\x08\x00\x00\x00\x00"s; // 8-bit grayscale
    // zlib stream: one stored deflate block holding the scanline (filter 0, one white pixel), then Adler-32.
    const std::string scanline = "\x00\xff"s;
    const std::string idat = "\x78\x01\x01\x02\x00\xfd\xff"s + scanline + be32((0x0101u << 16) | 0x0100u);
    return "\x89PNG\r\n\x1a\n"s + chunk("IHDR", header) + chunk("tEXt", "Comment\0"s + std::string(text)) +
           chunk("IDAT", idat) + chunk("IEND", "");
}

class site_builder {
public:
    explicit site_builder(const site_options& options)
        : options_(options)
        , rng_(options.seed) {
        if (options.pages == 0) {
            throw std::invalid_argument("site_options::pages must be at least 1");
        }
        if (options.min_page_bytes > options.max_page_bytes) {
            throw std::invalid_argument("site_options::min_page_bytes must not exceed max_page_bytes");
        }
        const link_mix& m = options.links;
        for (const std::uint32_t weight : {m.broken, m.fragment, m.off_site, m.off_host, m.non_http,
                                           m.redirect, m.query, m.relative, m.absolute, m.styled}) {
            mix_total_ += weight;
            if (weight > 1'000'000 || mix_total_ > 1'000'000) {
                throw std::invalid_argument("site_options::links: weights must add up to at most 1000000");
            }
        }
        if (mix_total_ == 0) {
            throw std::invalid_argument("site_options::links: at least one weight must be positive");
        }
        if (m.base_pages > 100) {
            throw std::invalid_argument("site_options::links.base_pages is a percentage, at most 100");
        }
    }

    site build() {
        add_root();
        add_docs();
        add_base_pages();
        add_search_pages();
        add_redirects();
        add_special_pages();
        add_files();
        add_hidden_and_orphans();
        add_content_pages();
        return finish();
    }

private:
    // ---- building blocks -------------------------------------------------------------------------------

    std::uint32_t some_page() { return rng_.below(options_.pages); }
    std::uint32_t page_or_last(std::uint32_t i) const { return std::min(i, options_.pages - 1); }

    /// Filler paragraphs of exactly `bytes` bytes (no markup other than <p>, no links).
    std::string filler(std::size_t bytes) {
        std::string out;
        out.reserve(bytes);
        constexpr std::size_t wrapper = std::string_view("<p></p>\n").size();
        while (bytes - out.size() > wrapper) {
            const std::size_t room = bytes - out.size() - wrapper;
            const std::size_t want = std::min<std::size_t>(room, 150 + rng_.below(450));
            std::string para;
            for (;;) {
                const auto word = vocabulary[rng_.below(vocabulary.size())];
                if (para.size() + 1 + word.size() + 1 > want) {
                    break;
                }
                para += para.empty() ? "" : " ";
                para += word;
            }
            if (!para.empty() && para.size() < want) {
                para.front() = static_cast<char>(para.front() - 'a' + 'A');
                para += '.';
            }
            para.resize(want, ' ');
            out += "<p>" + para + "</p>\n";
        }
        out.append(bytes - out.size(), '\n');
        return out;
    }

    /// Wraps `body` into a document padded with filler to a size drawn in [min_page_bytes, max_page_bytes]
    /// (a page whose markup alone is larger is left as is).
    std::string document(std::string_view title, std::string_view head, std::string_view body, layout kind) {
        std::string before;
        std::string after;
        switch (kind) {
        case layout::html:
            before = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" +
                     text_escape(title) + "</title>\n" + std::string(head) +
                     "</head>\n<body>\n<h1 id=\"top\">" + text_escape(title) + "</h1>\n" + std::string(body);
            after = "</body>\n</html>\n";
            break;
        case layout::frameset:
            // No body: a frameset document. The filler goes into <noframes>, which HTML parses as raw text.
            before = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" +
                     text_escape(title) + "</title>\n" + std::string(head) + "</head>\n" + std::string(body) +
                     "<noframes>\n";
            after = "</noframes>\n</frameset>\n</html>\n";
            break;
        case layout::xhtml:
            before = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE html>\n"
                     "<html xmlns=\"http://www.w3.org/1999/xhtml\" xml:lang=\"en\">\n<head>\n<title>" +
                     text_escape(title) + "</title>\n" + std::string(head) +
                     "</head>\n<body>\n<h1 id=\"top\">" + text_escape(title) + "</h1>\n" + std::string(body);
            after = "</body>\n</html>\n";
            break;
        }
        const std::size_t target = rng_.between(options_.min_page_bytes, options_.max_page_bytes);
        const std::size_t bare = before.size() + after.size();
        return before + filler(target > bare ? target - bare : 0) + after;
    }

    void add(std::string target, node n) {
        if (!nodes_.emplace(target, std::move(n)).second) {
            throw std::logic_error("site generator: duplicate resource " + target);
        }
    }

    void add_page(std::string target, std::string_view title, const fragment& body,
                  std::string_view head = {}, layout kind = layout::html,
                  std::string_view content_type = html_utf8) {
        node n;
        n.res.status = 200;
        n.res.content_type = std::string(content_type);
        n.res.body = document(title, head, body.markup, kind);
        n.follows = body.follows;
        n.off_scope = body.off_scope;
        add(std::move(target), std::move(n));
    }

    /// A small page that leads back home, for leaves of the special sections.
    void add_leaf(std::string target, std::string_view title) {
        fragment body;
        body.link("<p>" + anchor("/", "Home") + "</p>\n", "/");
        add_page(std::move(target), title, body);
    }

    /// `follow`: the normalized in-scope target of `location`, or nullopt when the crawler does not request
    /// it (no Location, off-host, or a status it does not follow); `off`: the out-of-scope URL it names.
    void add_redirect(std::string target, int status, std::string location, std::optional<std::string> follow,
                      std::optional<std::string> off = std::nullopt) {
        node n;
        n.res.status = status;
        n.res.content_type.clear();
        n.res.location = std::move(location);
        if (follow) {
            n.follows.push_back(std::move(*follow));
        }
        if (off) {
            n.off_scope.push_back(std::move(*off));
        }
        add(std::move(target), std::move(n));
    }

    void add_file(std::string target, std::string_view content_type, std::string body, int status = 200) {
        node n;
        n.res.status = status;
        n.res.content_type = std::string(content_type);
        n.res.body = std::move(body);
        add(std::move(target), std::move(n));
    }

    /// Markup to place somewhere on a content page (a page in /p/, so relative references start there).
    void scatter(fragment f) { snippets_.push_back(std::move(f)); }

    /// A link from the page `from` to content page `to` in one of link_style_count styles.
    std::string content_link(std::string_view from, std::uint32_t to, std::uint32_t style) {
        const std::string target = content_target(to);
        const std::string number = std::to_string(to);
        const std::string text = "Page " + number;
        const std::string relative = relative_reference(from, target);
        const std::size_t depth = directory_segments(from).size();
        std::string climb;
        for (std::size_t i = 0; i < depth; ++i) {
            climb += "../";
        }
        switch (style) {
        case 0: // root-relative
            return anchor(target, text);
        case 1: // relative
            return anchor(relative, text);
        case 2: // explicit current directory
            return anchor("./" + relative, text);
        case 3: // up to the root and down again
            return anchor(climb + target.substr(1), text);
        case 4: // absolute self-link
            return anchor(std::string(origin) + target, text);
        case 5: // fragment
            return anchor(target + "#section-" + std::to_string(rng_.below(5)), text);
        case 6: { // dot segments
            static constexpr std::array<std::string_view, 3> forms{"/a/../p/", "/p/./", "/p/x/y/../../"};
            return anchor(std::string(forms[to % forms.size()]) + number + ".html", text);
        }
        case 7: // unquoted attribute
            return "<a href=" + target + ">" + text + "</a>";
        case 8: // uppercase tag and attribute names
            return "<A HREF=\"" + target + "\">" + text + "</A>";
        case 9: // single-quoted attribute
            return "<a href='" + relative + "'>" + text + "</a>";
        case 10: // whitespace and newlines around the URL
            return "<a href=\"\n\t  " + target + " \n\">" + text + "</a>";
        case 11: { // character references
            std::string href;
            for (const char c : target) {
                href += c == '/' ? "&#47;" : c == '.' ? "&#x2E;" : std::string(1, c);
            }
            return "<a href=\"" + href + "\">" + text + "</a>";
        }
        case 12: { // percent-encoded unreserved characters, either hex case
            std::string href = "/%70/";
            for (const char c : number) {
                href += "%3" + std::string(1, c);
            }
            href += rng_.chance(1, 2) ? "%2ehtml" : "%2Ehtml";
            return anchor(href, text);
        }
        case 13: // other attributes, a quoted '>' and spaces around '='
            return "<a class=\"nav link\" title=\"a > b\" href = \"" + target + "\" data-n=" + number + " >" +
                   text + "</a>";
        case 14: // absolute, with dot segments and a fragment
            return anchor(std::string(origin) + "/p/../p/./" + number + ".html#frag", text);
        default: // above the root: extra ".." segments are dropped (RFC 3986 section 5.4.2)
            return anchor("../" + climb + target.substr(1), text);
        }
    }

    // ---- sections -----------------------------------------------------------------------------------------

    void add_root() {
        fragment body;
        body.text("<p>A generated site for crawler tests.</p>\n<ul>\n");
        body.link("<li>" + anchor("p/0.html", "First page") + "</li>\n", content_target(0));
        body.link("<li>" + anchor("./p/" + std::to_string(page_or_last(1)) + ".html", "Second page") +
                      "</li>\n",
                  content_target(page_or_last(1)));
        body.link("<li>" + anchor(std::string(origin) + "/docs/index.html", "Encodings") + "</li>\n",
                  "/docs/index.html");
        body.link("<li>" + anchor("base/index.html", "Base URLs") + "</li>\n", "/base/index.html");
        body.link("<li>" + anchor("search?q=1&page=1", "Search") + "</li>\n", "/search?q=1&page=1");
        body.link("<li>" + anchor(origin, "This site") + "</li>\n", "/");
        body.link("<li>" + anchor("#top", "Top") + "</li>\n", "/");
        body.text("</ul>\n");
        add_page("/", "Home", body);
    }

    /// Percent-encoding: one resource per name, reached through several spellings.
    void add_docs() {
        fragment body;
        body.text("<ul>\n");
        const std::string cafe = "/caf%C3%A9.html";
        body.link("<li>" + anchor("/caf\xC3\xA9.html", "raw UTF-8") + "</li>\n", cafe);
        body.link("<li>" + anchor("/caf%c3%a9.html", "lowercase hex") + "</li>\n", cafe);
        body.link("<li>" + anchor("/caf%C3%A9.html", "uppercase hex") + "</li>\n", cafe);
        body.link("<li>" + anchor("../caf%C3%A9.html", "relative") + "</li>\n", cafe);
        const std::string space = "/docs/with%20space.html";
        body.link("<li>" + anchor("with space.html", "raw space") + "</li>\n", space);
        body.link("<li>" + anchor("/docs/with%20space.html", "encoded space") + "</li>\n", space);
        const std::string menu = "/docs/men%C3%BC%20caf%C3%A9.html";
        body.link("<li>" + anchor("men\xC3\xBC caf\xC3\xA9.html", "raw space and UTF-8") + "</li>\n", menu);
        body.link("<li>" + anchor("/docs/men%c3%bc%20caf%c3%a9.html", "lowercase") + "</li>\n", menu);
        body.link("<li>" + anchor("/docs/men%C3%BC caf%C3%A9.html", "mixed") + "</li>\n", menu);
        const std::string tilde = "/docs/~tilde.html";
        body.link("<li>" + anchor("%7Etilde.html", "encoded tilde") + "</li>\n", tilde);
        body.link("<li>" + anchor("/docs/%7etilde.html", "encoded tilde, lowercase") + "</li>\n", tilde);
        body.link("<li>" + anchor("~tilde.html", "raw tilde") + "</li>\n", tilde);
        const std::string slash = "/docs/a%2Fb.html";
        body.link("<li>" + anchor("a%2fb.html", "an encoded slash stays encoded") + "</li>\n", slash);
        body.text("</ul>\n");
        add_page("/docs/index.html", "Encodings", body);
        for (const auto& target : {cafe, space, menu, tilde, slash}) {
            add_leaf(target, "Encoded name");
        }
    }

    /// <base href>: the first one counts, relative and absolute forms.
    void add_base_pages() {
        fragment body;
        body.text("<ul>\n");
        body.link("<li>" + anchor("page1.html", "page 1") + "</li>\n", "/base/dir/page1.html");
        body.link("<li>" + anchor("sub/page2.html", "page 2") + "</li>\n", "/base/dir/sub/page2.html");
        body.link("<li>" + anchor("../other.html", "other") + "</li>\n", "/base/other.html");
        body.link("<li>" + anchor("/p/" + std::to_string(page_or_last(2)) + ".html", "content") + "</li>\n",
                  content_target(page_or_last(2)));
        body.link("<li>" + anchor(std::string(origin) + "/base/abs/index.html", "absolute base") + "</li>\n",
                  "/base/abs/index.html");
        body.link("<li>" + anchor("/base/rel/index.html", "relative base") + "</li>\n",
                  "/base/rel/index.html");
        body.text("</ul>\n");
        add_page("/base/index.html", "Base", body, "<base href=\"/base/dir/\">\n<base href=\"/wrong/\">\n");
        add_leaf("/base/dir/page1.html", "Base page 1");
        add_leaf("/base/dir/sub/page2.html", "Base page 2");
        add_leaf("/base/other.html", "Base other");

        fragment abs;
        abs.link(anchor("leaf.html", "leaf"), "/base/abs/deeper/leaf.html");
        abs.link(anchor("../up.html", "up"), "/base/abs/up.html");
        add_page("/base/abs/index.html", "Absolute base", abs,
                 "<base href=\"" + std::string(origin) + "/base/abs/deeper/\">\n");
        add_leaf("/base/abs/deeper/leaf.html", "Absolute base leaf");
        add_leaf("/base/abs/up.html", "Absolute base up");

        fragment rel;
        rel.link(anchor("x.html", "x"), "/base/rel/dir2/x.html");
        add_page("/base/rel/index.html", "Relative base", rel, "<base href=\"dir2/\">\n");
        add_leaf("/base/rel/dir2/x.html", "Relative base leaf");
    }

    /// Query strings: "&" written as "&amp;" or "&#38;", query-only references.
    void add_search_pages() {
        constexpr int queries = 3;
        constexpr int result_pages = 3;
        const auto target = [](int q, int page) {
            return "/search?q=" + std::to_string(q) + "&page=" + std::to_string(page);
        };
        for (int q = 1; q <= queries; ++q) {
            for (int page = 1; page <= result_pages; ++page) {
                fragment body;
                body.text("<ul>\n");
                if (page < result_pages) {
                    body.link(
                        "<li>" +
                            anchor("?q=" + std::to_string(q) + "&page=" + std::to_string(page + 1), "Next") +
                            "</li>\n",
                        target(q, page + 1));
                }
                if (q < queries) {
                    const std::string query = "/search?q=" + std::to_string(q + 1) + "&#38;page=1";
                    body.link("<li><a href=\"" + query + "\">Next query</a></li>\n", target(q + 1, 1));
                }
                const auto p = some_page();
                body.link("<li>" + anchor(content_target(p), "Result") + "</li>\n", content_target(p));
                body.text("</ul>\n");
                add_page(target(q, page), "Search", body);
            }
        }
        scatter(
            fragment{}.link("<p>" + anchor("/search?q=2&page=3", "Search again") + "</p>\n", target(2, 3)));
        add_leaf("/search?q=99&page=1", "Unlinked search"); // an orphan
    }

    void add_redirects() {
        // A 5-hop chain using every followed status, with absolute, relative and messy Locations.
        add_redirect("/r/301", 301, "/r/302", "/r/302");
        add_redirect("/r/302", 302, std::string(origin) + "/r/303", "/r/303");
        add_redirect("/r/303", 303, "307", "/r/307");
        add_redirect("/r/307", 307, "/r/./x/../308#frag", "/r/308");
        add_redirect("/r/308", 308, "/only/redirected.html", "/only/redirected.html");
        add_leaf("/only/redirected.html", "Reached through five redirects");
        scatter(fragment{}.link("<p>" + anchor("/r/301", "Moved") + "</p>\n", "/r/301"));

        // A loop: each URL requested once.
        add_redirect("/loop/a", 302, "/loop/b", "/loop/b");
        add_redirect("/loop/b", 301, "c", "/loop/c");
        add_redirect("/loop/c", 307, std::string(origin) + "/loop/a", "/loop/a");
        scatter(fragment{}.link("<p>" + anchor("/loop/a", "Loop") + "</p>\n", "/loop/a"));

        // Two redirects joining on one page.
        add_redirect("/join/a", 301, "/only/joined.html", "/only/joined.html");
        add_redirect("/join/b", 308, std::string(origin) + "/only/joined.html", "/only/joined.html");
        add_leaf("/only/joined.html", "Joined");
        scatter(fragment{}.link("<p>" + anchor("/join/a", "Join A") + "</p>\n", "/join/a"));
        scatter(fragment{}.link("<p>" + anchor("../join/b", "Join B") + "</p>\n", "/join/b"));

        // Off-host targets: never requested.
        add_redirect("/r/offsite", 302, "http://other.invalid/landing", std::nullopt,
                     "http://other.invalid/landing");
        add_redirect("/r/other-origin", 301, std::string(other_origin) + "/p/0.html", std::nullopt,
                     std::string(other_origin) + "/p/0.html");
        scatter(fragment{}.link("<p>" + anchor("/r/offsite", "Elsewhere") + "</p>\n", "/r/offsite"));
        scatter(
            fragment{}.link("<p>" + anchor("/r/other-origin", "Other origin") + "</p>\n", "/r/other-origin"));

        // No Location: requested once, an error record.
        add_redirect("/r/no-location", 302, "", std::nullopt);
        scatter(fragment{}.link("<p>" + anchor("/r/no-location", "Nowhere") + "</p>\n", "/r/no-location"));

        // A relative Location, resolved against the request URL.
        add_redirect("/r/rel/go", 303, "../../only/relative-redirect.html", "/only/relative-redirect.html");
        add_leaf("/only/relative-redirect.html", "Relative redirect target");
        scatter(fragment{}.link("<p>" + anchor("/r/rel/go", "Relative") + "</p>\n", "/r/rel/go"));

        // To a missing page (requested, 404), and back to an already seen page (not requested again).
        add_redirect("/r/to-missing", 307, "/missing/redirected.html", "/missing/redirected.html");
        add_redirect("/r/home", 302, std::string(origin) + "/", "/");
        scatter(fragment{}.link("<p>" + anchor("/r/to-missing", "Gone") + "</p>\n", "/r/to-missing"));
        scatter(fragment{}.link("<p>" + anchor("/r/home", "Home again") + "</p>\n", "/r/home"));

        // One-hop moves onto content pages.
        for (std::uint32_t k = 0; k < 5; ++k) {
            static constexpr std::array<int, 5> statuses{301, 302, 303, 307, 308};
            const std::string from = "/r/moved/" + std::to_string(k);
            const std::string to = content_target(some_page());
            add_redirect(from, statuses[k], to, to);
            scatter(fragment{}.link("<p>" + anchor(from, "Moved " + std::to_string(k)) + "</p>\n", from));
        }

        // 12 hops: with a budget of 10 the crawler requests /chain/0 .. /chain/10 and no further.
        constexpr int chain_length = 12;
        for (int k = 0; k < chain_length; ++k) {
            static constexpr std::array<int, 5> statuses{302, 301, 307, 308, 303};
            const std::string next = std::to_string(k + 1);
            const std::string target = "/chain/" + next;
            add_redirect("/chain/" + std::to_string(k),
                         statuses[static_cast<std::size_t>(k) % statuses.size()], k % 2 == 0 ? target : next,
                         target);
        }
        add_leaf("/chain/" + std::to_string(chain_length), "End of the long chain");
        scatter(fragment{}.link("<p>" + anchor("/chain/0", "Long chain") + "</p>\n", "/chain/0"));

        // Statuses the crawler records but does not follow.
        add_file("/status/500", html_utf8, "<!DOCTYPE html>\n<title>Error</title>\n<p>Internal error.</p>\n",
                 500);
        add_file("/status/410", html_utf8, "<!DOCTYPE html>\n<title>Gone</title>\n<p>Gone for good.</p>\n",
                 410);
        add_redirect("/status/300", 300, "/hidden/from-300.html", std::nullopt);
        for (const std::string_view s : {"/status/500", "/status/410", "/status/300"}) {
            scatter(fragment{}.link("<p>" + anchor(s, "Status") + "</p>\n", std::string(s)));
        }
    }

    /// Pages reachable only through a frame, an iframe, an area, a meta refresh or an XHTML page.
    void add_special_pages() {
        fragment frames;
        frames.text("<frameset cols=\"30%,70%\">\n");
        frames.link("<frame src=\"left.html\" name=\"left\">\n", "/frames/left.html");
        frames.link("<FRAME SRC=\"/only/frame.html\" NAME=\"main\">\n", "/only/frame.html");
        add_page("/frames/index.html", "Frames", frames, {}, layout::frameset);
        add_leaf("/frames/left.html", "Left frame");
        add_leaf("/only/frame.html", "Only through a frame");
        scatter(
            fragment{}.link("<p>" + anchor("/frames/index.html", "Frames") + "</p>\n", "/frames/index.html"));

        scatter(fragment{}.link("<p><iframe src=\"../only/iframe.html\" title=\"embedded\"></iframe></p>\n",
                                "/only/iframe.html"));
        add_leaf("/only/iframe.html", "Only through an iframe");

        scatter(
            fragment{}
                .text("<p><img src=\"/hidden/map.png\" usemap=\"#shapes\" alt=\"shapes\" width=\"40\" "
                      "height=\"20\">\n<map name=\"shapes\">\n")
                .link("<area shape=\"rect\" coords=\"0,0,20,20\" href=\"/only/area.html\" alt=\"left\">\n",
                      "/only/area.html")
                .link("<AREA SHAPE=rect COORDS=\"20,0,40,20\" HREF=/p/0.html ALT=right>\n", content_target(0))
                .text("</map></p>\n"));
        add_leaf("/only/area.html", "Only through an area");

        add_page("/meta/refresh.html", "Refresh", fragment{}.link("", "/only/refresh.html"),
                 "<meta http-equiv=\"refresh\" content=\"0; url=/only/refresh.html\">\n");
        add_page("/meta/refresh-quoted.html", "Refresh", fragment{}.link("", "/only/refresh-quoted.html"),
                 "<meta http-equiv=\"refresh\" content=\"5; URL='/only/refresh-quoted.html'\">\n");
        add_leaf("/only/refresh.html", "Only through a meta refresh");
        add_leaf("/only/refresh-quoted.html", "Only through a quoted meta refresh");
        scatter(fragment{}.link("<p>" + anchor("/meta/refresh.html", "Refresh") + "</p>\n",
                                "/meta/refresh.html"));
        scatter(fragment{}.link("<p>" + anchor("/meta/refresh-quoted.html", "Refresh later") + "</p>\n",
                                "/meta/refresh-quoted.html"));

        fragment xhtml;
        xhtml.link("<p><a href=\"/only/from-xhtml.html\">XHTML link</a></p>\n", "/only/from-xhtml.html");
        xhtml.link("<p><a href=\"../p/0.html\">Back</a><br/></p>\n", content_target(0));
        add_page("/xhtml/page.xhtml", "XHTML", xhtml, {}, layout::xhtml, "application/xhtml+xml");
        add_leaf("/only/from-xhtml.html", "Only through an XHTML page");
        scatter(
            fragment{}.link("<p>" + anchor("/xhtml/page.xhtml", "XHTML") + "</p>\n", "/xhtml/page.xhtml"));

        // Off-site and non-http links, all on one page (some also appear at random on content pages).
        fragment off;
        off.text("<ul>\n");
        for (const auto& l : off_site_links) {
            off.off("<li>" + anchor(l.href, "elsewhere") + "</li>\n", std::string(l.absolute));
        }
        off.text("</ul>\n");
        scatter(std::move(off));

        scatter(fragment{}.link("<p>" + anchor("/missing/linked.html", "Broken link") + "</p>\n",
                                "/missing/linked.html"));
    }

    /// Resources whose bodies look like HTML but are not parsed for links.
    void add_files() {
        add_file("/files/notes.txt", "text/plain; charset=utf-8",
                 "Notes. Not HTML, so this is not a link: <a href=\"/hidden/from-text.html\">text</a>\n");
        add_file(
            "/files/page.html", "text/plain",
            "<!DOCTYPE html>\n<html><body><a href=\"/hidden/from-plain-html.html\">served as text/plain</a>"
            "</body></html>\n");
        add_file("/files/logo.png", "image/png", png_with_text("<a href=\"/hidden/from-png.html\">png</a>"));
        add_file("/files/data.json", "application/json",
                 "{\"html\": \"<a href=\\\"/hidden/from-json.html\\\">json</a>\", \"url\": "
                 "\"/hidden/from-json-url\"}"
                 "\n");
        scatter(fragment{}.link("<p>" + anchor("/files/notes.txt", "Notes") + "</p>\n", "/files/notes.txt"));
        scatter(
            fragment{}.link("<p>" + anchor("../files/page.html", "Plain") + "</p>\n", "/files/page.html"));
        scatter(fragment{}.link("<p>" + anchor("/files/logo.png", "Logo") + "</p>\n", "/files/logo.png"));
        scatter(fragment{}.link("<p>" + anchor("/files/data.json", "Data") + "</p>\n", "/files/data.json"));
    }

    /// Links no correct crawler follows (comments, scripts, styles, templates), and pages nothing reachable
    /// links to. Some hidden targets exist so a wrong request would cascade.
    void add_hidden_and_orphans() {
        scatter(fragment{}.text("<!-- <a href=\"/hidden/comment.html\">commented out</a> -->\n"));
        scatter(fragment{}.text("<script>\nvar html = '<a href=\"/hidden/script.html\">x</a>';\n"
                                "document.title = html.length > 0 ? \"a\" : \"b\";\n</script>\n"));
        scatter(fragment{}.text("<style>\n/* <a href=\"/hidden/style.html\">x</a> */\nbody { margin: 0; }\n"
                                "</style>\n"));
        scatter(fragment{}.text("<template><a href=\"/hidden/template.html\">templated</a></template>\n"));

        fragment comment_page;
        comment_page.link(anchor("/hidden/deeper.html", "Deeper"), "/hidden/deeper.html");
        comment_page.link(anchor("/orphan/0.html", "Orphans"), "/orphan/0.html");
        add_page("/hidden/comment.html", "Should never be requested", comment_page);
        add_leaf("/hidden/deeper.html", "Should never be requested");

        constexpr int orphans = 4;
        for (int k = 0; k < orphans; ++k) {
            fragment body;
            const std::string next = "/orphan/" + std::to_string((k + 1) % orphans) + ".html";
            body.link(anchor(next, "Next orphan"), next);
            add_page("/orphan/" + std::to_string(k) + ".html", "Orphan", body);
        }
    }

    /// One link of a content page drawn from the link mix. `self` is the page, `from` the document its
    /// relative references resolve against (the page, or its <base href>).
    void add_mixed_link(fragment& body, std::uint32_t page, const std::string& self,
                        const std::string& from) {
        const link_mix& m = options_.links;
        // Weight-0 kinds take an empty range: the draws, and so the default site, do not depend on them.
        std::uint32_t roll = rng_.below(mix_total_);
        const auto take = [&roll](std::uint32_t weight) {
            if (roll < weight) {
                return true;
            }
            roll -= weight;
            return false;
        };
        const auto li = [](const std::string& a) { return "<li>" + a + "</li>\n"; };
        if (take(m.broken)) {
            const std::string missing = "/missing/" + std::to_string(rng_.below(30)) + ".html";
            body.link(li(anchor(relative_reference(from, missing), "Broken")), missing);
        } else if (take(m.fragment)) {
            // On a page with a base, "#x" alone would resolve against the base: name the page too.
            const std::string page_ref = from == self ? "" : relative_reference(from, self);
            body.link(li(anchor(page_ref + "#section-" + std::to_string(rng_.below(5)), "Section")), self);
        } else if (take(m.off_site)) {
            const auto& l = off_site_links[rng_.below(off_site_links.size())];
            body.off(li(anchor(l.href, "Elsewhere")), std::string(l.absolute));
        } else if (take(m.off_host)) {
            const auto& l = off_site_links[rng_.below(first_non_http_link)];
            body.off(li(anchor(l.href, "Elsewhere")), std::string(l.absolute));
        } else if (take(m.non_http)) {
            const auto& l =
                off_site_links[first_non_http_link + rng_.below(off_site_links.size() - first_non_http_link)];
            body.off(li(anchor(l.href, "Elsewhere")), std::string(l.absolute));
        } else if (take(m.redirect)) {
            static constexpr std::array<int, 5> statuses{301, 302, 303, 307, 308};
            const std::string from_target = "/r/go/" + std::to_string(redirects_made_);
            const std::string to = content_target(some_page());
            add_redirect(from_target, statuses[redirects_made_ % statuses.size()], to, to);
            ++redirects_made_;
            body.link(li(anchor(relative_reference(from, from_target), "Moved")), from_target);
        } else if (take(m.query)) {
            const std::string variant = content_target(some_page()) + "?from=" + std::to_string(page);
            if (nodes_.count(variant) == 0) {
                add_leaf(variant, "Query variant");
            }
            body.link(li(anchor(relative_reference(from, variant), "Variant")), variant);
        } else if (take(m.relative)) {
            const auto to = some_page();
            body.link(li(content_link(from, to, 1)), content_target(to));
        } else if (take(m.absolute)) {
            const auto to = some_page();
            body.link(li(content_link(from, to, 4)), content_target(to));
        } else {
            const auto to = some_page();
            body.link(li(content_link(from, to, rng_.below(link_style_count))), content_target(to));
        }
    }

    void add_content_pages() {
        // Pages with a <base href>; never page 0, so that the snippets below always have a home.
        std::vector<bool> has_base(options_.pages, false);
        std::vector<std::uint32_t> plain_pages;
        if (options_.links.base_pages > 0) {
            for (std::uint32_t i = 1; i < options_.pages; ++i) {
                has_base[i] = rng_.below(100) < options_.links.base_pages;
            }
            for (std::uint32_t i = 0; i < options_.pages; ++i) {
                if (!has_base[i]) {
                    plain_pages.push_back(i);
                }
            }
        }
        // Where each snippet goes. Snippets hold relative references written for /p/, so not on base pages.
        std::vector<std::vector<std::size_t>> placed(options_.pages);
        for (std::size_t s = 0; s < snippets_.size(); ++s) {
            const auto at = plain_pages.empty()
                                ? some_page()
                                : plain_pages[rng_.below(static_cast<std::uint32_t>(plain_pages.size()))];
            placed[at].push_back(s);
        }
        const std::uint32_t links = std::max<std::uint32_t>(options_.links_per_page, 1);
        for (std::uint32_t i = 0; i < options_.pages; ++i) {
            const std::string self = content_target(i);
            // The base is the root: a crawler that ignores it requests /p/p/N.html for "p/N.html".
            const std::string from = has_base[i] ? "/index.html" : self;
            fragment body;
            static constexpr std::array<std::string_view, 3> home_forms{"/", "../", "{{origin}}/"};
            const std::string_view home = home_forms[i % home_forms.size()];
            body.link("<nav>" + anchor(has_base[i] && home == "../" ? "./" : home, "Home") + "</nav>\n<ul>\n",
                      "/");
            // The next page in a rotating style: every page is reachable, and every style is used.
            if (i + 1 < options_.pages) {
                body.link("<li>" + content_link(from, i + 1, i % link_style_count) + "</li>\n",
                          content_target(i + 1));
            }
            for (std::uint32_t k = 1; k < links; ++k) {
                add_mixed_link(body, i, self, from);
            }
            body.text("</ul>\n");
            for (const auto s : placed[i]) {
                body.append(snippets_[s]);
            }
            // Some pages say text/html without a charset.
            const bool no_charset = i % 10 == 3 || (options_.pages <= 3 && i == 0);
            const std::string head =
                has_base[i] ? "<base href=\"" + std::string(origin) + "/\">\n" : std::string();
            add_page(self, "Page " + std::to_string(i), body, head, layout::html,
                     no_charset ? "text/html" : html_utf8);
        }
    }

    // ---- ground truth -------------------------------------------------------------------------------------

    struct walk_result {
        std::set<std::string> requested;
        std::set<std::string> off_scope;
    };

    /// The crawl a correct crawler makes, in FIFO or LIFO order.
    walk_result walk(bool lifo) const {
        struct item {
            std::string target;
            int budget;
        };
        walk_result out;
        std::deque<item> queue{{"/", redirect_budget}};
        out.requested.insert("/");
        while (!queue.empty()) {
            item it = lifo ? std::move(queue.back()) : std::move(queue.front());
            if (lifo) {
                queue.pop_back();
            } else {
                queue.pop_front();
            }
            const auto found = nodes_.find(it.target);
            if (found == nodes_.end()) {
                continue; // 404
            }
            const node& n = found->second;
            int next_budget = redirect_budget;
            if (is_followed_redirect(n.res.status)) {
                if (it.budget == 0) {
                    continue; // the redirect limit ends the chain here
                }
                next_budget = it.budget - 1;
            } else if (!is_parsed_media_type(n.res.content_type)) {
                continue;
            }
            out.off_scope.insert(n.off_scope.begin(), n.off_scope.end());
            for (const auto& target : n.follows) {
                if (out.requested.insert(target).second) {
                    queue.push_back({target, next_budget});
                }
            }
        }
        return out;
    }

    site finish() {
        for (const auto& [target, n] : nodes_) {
            if (!is_normalized_target(target)) {
                throw std::logic_error("site generator: resource key not normalized: " + target);
            }
            for (const auto& f : n.follows) {
                if (!is_normalized_target(f)) {
                    throw std::logic_error("site generator: link target not normalized: " + f);
                }
            }
        }
        auto fifo = walk(false);
        const auto lifo = walk(true);
        if (fifo.requested != lifo.requested || fifo.off_scope != lifo.off_scope) {
            throw std::logic_error("site generator: the ground truth depends on crawl order");
        }
        site out;
        for (auto& [target, n] : nodes_) {
            out.resources.emplace(target, std::move(n.res));
        }
        out.expected_requests = std::move(fifo.requested);
        out.out_of_scope_links = std::move(fifo.off_scope);
        return out;
    }

    site_options options_;
    std::uint32_t mix_total_ = 0;
    std::uint32_t redirects_made_ = 0;
    random_source rng_;
    std::map<std::string, node> nodes_;
    std::vector<fragment> snippets_;
};

// ---- serving ----------------------------------------------------------------------------------------------

/// "{{origin}}" -> "http://" + host; "{{other_origin}}" -> the other loopback name with the same port.
std::string substitute(std::string_view text, std::string_view host) {
    if (text.find("{{") == std::string_view::npos) {
        return std::string(text);
    }
    if (host.empty()) {
        host = "127.0.0.1";
    }
    std::string_view name = host;
    std::string_view port;
    if (const auto colon = host.rfind(':');
        colon != std::string_view::npos && host.find(']', colon) == std::string_view::npos) {
        name = host.substr(0, colon);
        port = host.substr(colon);
    }
    const std::string self = "http://" + std::string(host);
    const std::string other =
        std::string(name == "127.0.0.1" ? "http://localhost" : "http://127.0.0.1") + std::string(port);
    std::string out;
    out.reserve(text.size() + 64);
    for (std::size_t i = 0; i < text.size();) {
        if (text.compare(i, origin.size(), origin) == 0) {
            out += self;
            i += origin.size();
        } else if (text.compare(i, other_origin.size(), other_origin) == 0) {
            out += other;
            i += other_origin.size();
        } else {
            out += text[i++];
        }
    }
    return out;
}

http_response make_response(const site& s, const http_request& req) {
    http_response res;
    res.version(11);
    const bool head = req.method() == http::verb::head;
    if (req.method() != http::verb::get && !head) {
        res.result(http::status::method_not_allowed);
        res.set(http::field::allow, "GET, HEAD");
        res.set(http::field::content_type, "text/plain; charset=utf-8");
        res.body() = "Method not allowed\n";
        return res;
    }
    const std::string_view host = req[http::field::host];
    const auto found = s.resources.find(std::string(req.target()));
    if (found == s.resources.end()) {
        res.result(http::status::not_found);
        res.set(http::field::content_type, html_utf8);
        res.body() = "<!DOCTYPE html>\n<html><head><title>Not Found</title></head><body><h1>Not Found</h1>"
                     "<p>Nothing at " +
                     text_escape(req.target()) + ".</p></body></html>\n";
    } else {
        const resource& r = found->second;
        res.result(static_cast<unsigned>(r.status));
        if (!r.content_type.empty()) {
            res.set(http::field::content_type, r.content_type);
        }
        if (!r.location.empty()) {
            res.set(http::field::location, substitute(r.location, host));
        }
        res.body() = substitute(r.body, host);
    }
    if (head) {
        res.content_length(res.body().size());
        res.body().clear();
    }
    return res;
}

boost::asio::awaitable<std::optional<http_response>> ready(std::optional<http_response> res) {
    co_return res;
}

} // namespace

site generate_site(const site_options& options) {
    return site_builder(options).build();
}

link_mix parse_link_mix(std::string_view spec) {
    link_mix mix;
    const std::array<std::pair<std::string_view, std::uint32_t*>, 11> fields{{
        {"broken", &mix.broken},
        {"fragment", &mix.fragment},
        {"off_site", &mix.off_site},
        {"off_host", &mix.off_host},
        {"non_http", &mix.non_http},
        {"redirect", &mix.redirect},
        {"query", &mix.query},
        {"relative", &mix.relative},
        {"absolute", &mix.absolute},
        {"styled", &mix.styled},
        {"base_pages", &mix.base_pages},
    }};
    for (bool more = !spec.empty(); more;) {
        const auto comma = spec.find(',');
        const std::string_view item = spec.substr(0, comma);
        more = comma != std::string_view::npos;
        spec = more ? spec.substr(comma + 1) : std::string_view{};
        const auto equals = item.find('=');
        const auto field = std::find_if(fields.begin(), fields.end(),
                                        [&](const auto& f) { return f.first == item.substr(0, equals); });
        if (equals == std::string_view::npos || field == fields.end()) {
            throw std::invalid_argument("link mix: expected kind=weight with a known kind, got \"" +
                                        std::string(item) + "\"");
        }
        const std::string_view digits = item.substr(equals + 1);
        if (digits.empty() || digits.size() > 7 ||
            digits.find_first_not_of("0123456789") != std::string_view::npos) {
            throw std::invalid_argument("link mix: bad weight in \"" + std::string(item) + "\"");
        }
        *field->second = static_cast<std::uint32_t>(std::stoul(std::string(digits)));
    }
    return mix;
}

std::string expand_placeholders(std::string_view text, std::string_view host) {
    return substitute(text, host);
}

request_handler serve_site(const site& s) {
    return [served = &s](const http_request& req) { return ready(make_response(*served, req)); };
}

} // namespace asiocrawl::demo
