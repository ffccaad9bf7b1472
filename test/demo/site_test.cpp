// Tests of the demo site generator and the loopback server. The ground truth is checked against an
// independent reference crawler written here (its own tag scanner, RFC 3986 resolver and normalizer), so a
// mistake in the generator's by-construction targets cannot hide behind the same mistake in a check.
#include <asiocrawl_demo/site.hpp>

#include <asiocrawl_demo/http_server.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::awaitable;
using asio::ip::tcp;
using asiocrawl::demo::generate_site;
using asiocrawl::demo::http_request;
using asiocrawl::demo::http_response;
using asiocrawl::demo::http_server;
using asiocrawl::demo::request_handler;
using asiocrawl::demo::serve_site;
using asiocrawl::demo::site;
using asiocrawl::demo::site_options;

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

// ==========================================================================================================
// A reference crawler, sans-io: an HTML tag scanner, an RFC 3986 resolver and the crawl policy.
// ==========================================================================================================
namespace ref {

std::string lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
    return out;
}

bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

void append_utf8(std::string& out, unsigned long cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

/// The character references the generator may write in attributes.
std::string decode_entities(std::string_view s) {
    std::string out;
    for (std::size_t i = 0; i < s.size();) {
        if (s[i] == '&') {
            const auto semi = s.find(';', i);
            if (semi != std::string_view::npos) {
                const auto name = s.substr(i + 1, semi - i - 1);
                if (name == "amp" || name == "quot" || name == "lt" || name == "gt" || name == "apos") {
                    out += name == "amp"    ? '&'
                           : name == "quot" ? '"'
                           : name == "lt"   ? '<'
                           : name == "gt"   ? '>'
                                            : '\'';
                    i = semi + 1;
                    continue;
                }
                if (name.size() > 1 && name[0] == '#') {
                    const bool hex = name[1] == 'x' || name[1] == 'X';
                    append_utf8(out,
                                std::stoul(std::string(name.substr(hex ? 2 : 1)), nullptr, hex ? 16 : 10));
                    i = semi + 1;
                    continue;
                }
            }
        }
        out += s[i++];
    }
    return out;
}

struct tag {
    std::string name;
    std::vector<std::pair<std::string, std::string>> attributes;

    std::optional<std::string> get(std::string_view attribute) const {
        for (const auto& [n, v] : attributes) {
            if (n == attribute) {
                return v;
            }
        }
        return std::nullopt;
    }
};

/// Start tags outside comments, raw-text elements and templates, in document order.
std::vector<tag> start_tags(std::string_view html) {
    static const std::set<std::string, std::less<>> raw_text{"script", "style",  "noframes", "textarea",
                                                             "title",  "iframe", "xmp",      "noembed"};
    std::vector<tag> out;
    int template_depth = 0;
    std::size_t i = 0;
    while ((i = html.find('<', i)) != std::string_view::npos) {
        if (html.substr(i, 4) == "<!--") {
            const auto end = html.find("-->", i + 4);
            i = end == std::string_view::npos ? html.size() : end + 3;
            continue;
        }
        if (i + 1 < html.size() && (html[i + 1] == '!' || html[i + 1] == '?')) {
            const auto end = html.find('>', i);
            i = end == std::string_view::npos ? html.size() : end + 1;
            continue;
        }
        const bool closing = i + 1 < html.size() && html[i + 1] == '/';
        std::size_t p = i + (closing ? 2 : 1);
        std::size_t name_end = p;
        while (name_end < html.size() && std::isalnum(static_cast<unsigned char>(html[name_end]))) {
            ++name_end;
        }
        if (name_end == p) {
            ++i; // a lone '<' is text
            continue;
        }
        tag t{lower(html.substr(p, name_end - p)), {}};
        p = name_end;
        // attributes
        for (;;) {
            while (p < html.size() && (is_space(html[p]) || html[p] == '/')) {
                ++p;
            }
            if (p >= html.size() || html[p] == '>') {
                break;
            }
            const std::size_t attribute_start = p;
            while (p < html.size() && !is_space(html[p]) && html[p] != '=' && html[p] != '>' &&
                   html[p] != '/') {
                ++p;
            }
            std::string attribute = lower(html.substr(attribute_start, p - attribute_start));
            while (p < html.size() && is_space(html[p])) {
                ++p;
            }
            std::string value;
            if (p < html.size() && html[p] == '=') {
                ++p;
                while (p < html.size() && is_space(html[p])) {
                    ++p;
                }
                if (p < html.size() && (html[p] == '"' || html[p] == '\'')) {
                    const auto end = html.find(html[p], p + 1);
                    if (end == std::string_view::npos) {
                        p = html.size();
                        break;
                    }
                    value = std::string(html.substr(p + 1, end - p - 1));
                    p = end + 1;
                } else {
                    const std::size_t value_start = p;
                    while (p < html.size() && !is_space(html[p]) && html[p] != '>') {
                        ++p;
                    }
                    value = std::string(html.substr(value_start, p - value_start));
                }
            }
            t.attributes.emplace_back(std::move(attribute), decode_entities(value));
        }
        i = p + 1;
        if (closing) {
            if (t.name == "template" && template_depth > 0) {
                --template_depth;
            }
            continue;
        }
        if (t.name == "template") {
            ++template_depth;
            continue;
        }
        const std::string name = t.name;
        if (template_depth == 0) {
            out.push_back(std::move(t));
        }
        if (raw_text.count(name) != 0) {
            // Skip to the matching end tag, case-insensitively.
            const std::string rest = lower(html.substr(i));
            const auto end = rest.find("</" + name);
            i = end == std::string::npos ? html.size() : i + end;
        }
    }
    return out;
}

struct page_links {
    std::optional<std::string> base;
    std::vector<std::string> references;
};

page_links extract(std::string_view html) {
    page_links out;
    for (const auto& t : start_tags(html)) {
        std::optional<std::string> value;
        if (t.name == "a" || t.name == "area") {
            value = t.get("href");
        } else if (t.name == "frame" || t.name == "iframe") {
            value = t.get("src");
        } else if (t.name == "base") {
            if (!out.base) {
                out.base = t.get("href");
            }
        } else if (t.name == "meta" && lower(t.get("http-equiv").value_or("")) == "refresh") {
            const std::string content = t.get("content").value_or("");
            const auto at = lower(content).find("url=");
            if (at != std::string::npos) {
                std::string url = content.substr(at + 4);
                if (!url.empty() && (url.front() == '\'' || url.front() == '"')) {
                    url = url.substr(1, url.find(url.front(), 1) - 1);
                }
                value = url;
            }
        }
        if (value && !value->empty()) {
            out.references.push_back(*value);
        }
    }
    return out;
}

struct url {
    std::string scheme;
    std::optional<std::string> authority;
    std::string path;
    std::optional<std::string> query;
};

/// What browsers do before parsing: trim, drop tabs and newlines, percent-encode spaces and non-ASCII bytes.
std::string clean(std::string_view s) {
    while (!s.empty() && is_space(s.front())) {
        s.remove_prefix(1);
    }
    while (!s.empty() && is_space(s.back())) {
        s.remove_suffix(1);
    }
    std::string out;
    for (const char c : s) {
        const auto u = static_cast<unsigned char>(c);
        if (c == '\t' || c == '\n' || c == '\r') {
            continue;
        }
        if (c == ' ' || u >= 0x80) {
            static constexpr char hex[] = "0123456789ABCDEF";
            out += '%';
            out += hex[u >> 4];
            out += hex[u & 15];
        } else {
            out += c;
        }
    }
    return out;
}

url parse(std::string_view s) {
    url u;
    s = s.substr(0, s.find('#'));
    const auto colon = s.find(':');
    if (colon != std::string_view::npos && colon > 0 && std::isalpha(static_cast<unsigned char>(s[0])) &&
        s.substr(0, colon).find_first_of("/?") == std::string_view::npos) {
        u.scheme = lower(s.substr(0, colon));
        s.remove_prefix(colon + 1);
    }
    if (s.substr(0, 2) == "//") {
        s.remove_prefix(2);
        const auto end = std::min(s.find('/'), s.find('?'));
        u.authority = std::string(s.substr(0, end));
        s.remove_prefix(end == std::string_view::npos ? s.size() : end);
    }
    const auto q = s.find('?');
    u.path = std::string(s.substr(0, q));
    if (q != std::string_view::npos) {
        u.query = std::string(s.substr(q + 1));
    }
    return u;
}

std::string remove_dot_segments(std::string in) {
    std::string out;
    while (!in.empty()) {
        if (in.rfind("../", 0) == 0) {
            in.erase(0, 3);
        } else if (in.rfind("./", 0) == 0) {
            in.erase(0, 2);
        } else if (in.rfind("/./", 0) == 0) {
            in.erase(0, 2);
        } else if (in == "/.") {
            in = "/";
        } else if (in.rfind("/../", 0) == 0 || in == "/..") {
            in = in == "/.." ? "/" : in.substr(3);
            const auto slash = out.rfind('/');
            out.erase(slash == std::string::npos ? 0 : slash);
        } else if (in == "." || in == "..") {
            in.clear();
        } else {
            const auto next = in.find('/', 1);
            out += in.substr(0, next);
            in.erase(0, next == std::string::npos ? in.size() : next);
        }
    }
    return out;
}

/// RFC 3986 section 5.2.2.
url resolve(const url& base, std::string_view reference) {
    const url r = parse(clean(reference));
    url t;
    if (!r.scheme.empty()) {
        t = r;
        t.path = remove_dot_segments(r.path);
        return t;
    }
    t.scheme = base.scheme;
    if (r.authority) {
        t.authority = r.authority;
        t.path = remove_dot_segments(r.path);
        t.query = r.query;
        return t;
    }
    t.authority = base.authority;
    if (r.path.empty()) {
        t.path = base.path;
        t.query = r.query ? r.query : base.query;
    } else {
        if (r.path.front() == '/') {
            t.path = remove_dot_segments(r.path);
        } else {
            const std::string merged = base.authority && base.path.empty()
                                           ? "/" + r.path
                                           : base.path.substr(0, base.path.rfind('/') + 1) + r.path;
            t.path = remove_dot_segments(merged);
        }
        t.query = r.query;
    }
    return t;
}

std::string normalize_percent(std::string_view s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
            std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
            const auto value =
                static_cast<unsigned char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
            if (std::isalnum(value) || value == '-' || value == '.' || value == '_' || value == '~') {
                out += static_cast<char>(value);
            } else {
                out += '%';
                out += static_cast<char>(std::toupper(static_cast<unsigned char>(s[i + 1])));
                out += static_cast<char>(std::toupper(static_cast<unsigned char>(s[i + 2])));
            }
            i += 2;
        } else {
            out += s[i];
        }
    }
    return out;
}

/// A sans-io crawl of one origin: next() gives the target to request, then on_response() takes the answer.
class crawler {
public:
    explicit crawler(std::string authority)
        : authority_(std::move(authority)) {
        admit("/", max_redirect);
    }

    std::optional<std::string> next() {
        if (queue_.empty()) {
            return std::nullopt;
        }
        current_ = queue_.front();
        queue_.pop_front();
        return current_.target;
    }

    void on_response(const http_response& res) {
        const url base = parse("http://" + authority_ + current_.target);
        const auto status = res.result_int();
        if (status == 301 || status == 302 || status == 303 || status == 307 || status == 308) {
            const auto location = res.find(http::field::location);
            if (location == res.end() || current_.budget == 0) {
                return;
            }
            discover(resolve(base, std::string(location->value())), current_.budget - 1);
            return;
        }
        const std::string type = lower(std::string(res[http::field::content_type]));
        const std::string media = type.substr(0, type.find(';'));
        if (media != "text/html" && media != "application/xhtml+xml") {
            return;
        }
        const page_links links = extract(res.body());
        const url document_base = links.base ? resolve(base, *links.base) : base;
        for (const auto& reference : links.references) {
            discover(resolve(document_base, reference), max_redirect);
        }
    }

    const std::set<std::string>& requested() const { return seen_; }
    const std::set<std::string>& off_scope() const { return off_scope_; }

private:
    static constexpr int max_redirect = 10;
    struct item {
        std::string target;
        int budget = max_redirect;
    };

    void discover(url u, int budget) {
        if (u.scheme != "http" && u.scheme != "https") {
            std::string raw = u.scheme + ":" + (u.authority ? "//" + *u.authority : "") + u.path +
                              (u.query ? "?" + *u.query : "");
            off_scope_.insert(raw);
            return;
        }
        std::string authority = lower(u.authority.value_or(""));
        if (u.scheme == "http" && authority.size() > 3 && authority.substr(authority.size() - 3) == ":80") {
            authority.resize(authority.size() - 3);
        }
        std::string path = normalize_percent(u.path.empty() ? "/" : u.path);
        std::string target = path + (u.query ? "?" + normalize_percent(*u.query) : "");
        if (u.scheme != "http" || authority != authority_) {
            off_scope_.insert(u.scheme + "://" + authority + target);
            return;
        }
        admit(target, budget);
    }

    void admit(const std::string& target, int budget) {
        if (seen_.insert(target).second) {
            queue_.push_back({target, budget});
        }
    }

    std::string authority_;
    std::deque<item> queue_;
    item current_;
    std::set<std::string> seen_;
    std::set<std::string> off_scope_;
};

} // namespace ref

// ==========================================================================================================
// Helpers
// ==========================================================================================================

http_request get_request(std::string target, std::string host, http::verb method = http::verb::get) {
    http_request req{method, target, 11};
    req.set(http::field::host, host);
    return req;
}

/// Calls a handler outside any server.
http_response call(const request_handler& handler, const http_request& req) {
    asio::io_context io;
    std::optional<http_response> out;
    std::exception_ptr failure;
    asio::co_spawn(io, handler(req), [&](std::exception_ptr e, std::optional<http_response> r) {
        failure = e;
        out = std::move(r);
    });
    io.run();
    if (failure) {
        std::rethrow_exception(failure);
    }
    if (!out) {
        throw std::runtime_error("the handler answered nothing");
    }
    return std::move(*out);
}

/// The out-of-scope list with placeholders expanded for a server reached as `host`.
std::set<std::string> expand(const std::set<std::string>& links, const std::string& host,
                             const std::string& other_host) {
    std::set<std::string> out;
    for (std::string s : links) {
        for (const auto& [from, to] :
             {std::pair<std::string, std::string>{"{{origin}}", "http://" + host},
              std::pair<std::string, std::string>{"{{other_origin}}", "http://" + other_host}}) {
            for (auto at = s.find(from); at != std::string::npos; at = s.find(from)) {
                s.replace(at, from.size(), to);
            }
        }
        out.insert(s);
    }
    return out;
}

bool any_resource(const site& s,
                  const std::function<bool(const std::string&, const asiocrawl::demo::resource&)>& f) {
    return std::any_of(s.resources.begin(), s.resources.end(),
                       [&](const auto& kv) { return f(kv.first, kv.second); });
}

bool body_contains(const site& s, std::string_view needle) {
    return any_resource(
        s, [&](const std::string&, const auto& r) { return r.body.find(needle) != std::string::npos; });
}

bool is_html(const asiocrawl::demo::resource& r) {
    return r.content_type.rfind("text/html", 0) == 0 || r.content_type.rfind("application/xhtml+xml", 0) == 0;
}

// ==========================================================================================================
// The generator
// ==========================================================================================================

TEST(Site, SameOptionsGiveTheSameSiteByteForByte) {
    const site a = generate_site({});
    const site b = generate_site({});
    ASSERT_EQ(a.resources.size(), b.resources.size());
    for (const auto& [target, r] : a.resources) {
        const auto it = b.resources.find(target);
        ASSERT_NE(it, b.resources.end()) << target;
        EXPECT_EQ(r.status, it->second.status) << target;
        EXPECT_EQ(r.content_type, it->second.content_type) << target;
        EXPECT_EQ(r.location, it->second.location) << target;
        EXPECT_EQ(r.body, it->second.body) << target;
    }
    EXPECT_EQ(a.expected_requests, b.expected_requests);
    EXPECT_EQ(a.out_of_scope_links, b.out_of_scope_links);
}

TEST(Site, AnotherSeedGivesAnotherSite) {
    site_options other;
    other.seed = 2;
    const site a = generate_site({});
    const site b = generate_site(other);
    std::size_t differing = 0;
    for (const auto& [target, r] : a.resources) {
        const auto it = b.resources.find(target);
        differing += it == b.resources.end() || it->second.body != r.body ? 1 : 0;
    }
    EXPECT_GT(differing, a.resources.size() / 2);
}

/// FNV-1a over every resource: a fingerprint of the whole site.
std::uint64_t fingerprint(const site& s) {
    std::uint64_t h = 14695981039346656037ull;
    const auto mix = [&h](std::string_view bytes) {
        for (const unsigned char c : bytes) {
            h = (h ^ c) * 1099511628211ull;
        }
        h = (h ^ 0xFFu) * 1099511628211ull; // field separator
    };
    for (const auto& [target, r] : s.resources) {
        mix(target);
        mix(std::to_string(r.status));
        mix(r.content_type);
        mix(r.location);
        mix(r.body);
    }
    return h;
}

TEST(Site, PinnedOutputForSeedOne) {
    // The generator draws from raw mt19937 output only (no standard distribution), so the default site is the
    // same with every standard library. Update these pins deliberately when the generator changes.
    const site s = generate_site({});
    EXPECT_EQ(s.resources.size(), 287u);
    EXPECT_EQ(s.expected_requests.size(), 307u);
    EXPECT_EQ(s.out_of_scope_links.size(), 13u);
    EXPECT_EQ(fingerprint(s), 0xc63ff29fc4043897ull);
}

TEST(Site, InvalidOptionsAreRejected) {
    site_options none;
    none.pages = 0;
    EXPECT_THROW(generate_site(none), std::invalid_argument);
    site_options inverted;
    inverted.min_page_bytes = 5000;
    inverted.max_page_bytes = 4000;
    EXPECT_THROW(generate_site(inverted), std::invalid_argument);
    site_options no_links;
    no_links.links = {.broken = 0, .fragment = 0, .off_site = 0, .styled = 0};
    EXPECT_THROW(generate_site(no_links), std::invalid_argument);
    site_options too_many_bases;
    too_many_bases.links.base_pages = 101;
    EXPECT_THROW(generate_site(too_many_bases), std::invalid_argument);
}

TEST(Site, EveryExpectedTargetIsAResourceOrAnIntentional404) {
    const site s = generate_site({});
    for (const auto& target : s.expected_requests) {
        EXPECT_TRUE(s.resources.count(target) == 1 || target.rfind("/missing/", 0) == 0) << target;
        EXPECT_NE(target.rfind("/hidden/", 0), 0u) << target;
        EXPECT_NE(target.rfind("/orphan/", 0), 0u) << target;
    }
    for (std::uint32_t i = 0; i < 200; ++i) {
        EXPECT_EQ(s.expected_requests.count("/p/" + std::to_string(i) + ".html"), 1u) << i;
    }
    EXPECT_EQ(s.expected_requests.count("/missing/redirected.html"), 1u);
}

TEST(Site, TheLongChainStopsAfterTenRedirects) {
    const site s = generate_site({});
    for (int k = 0; k <= 12; ++k) {
        const std::string target = "/chain/" + std::to_string(k);
        ASSERT_EQ(s.resources.count(target), 1u) << target;
        EXPECT_EQ(s.expected_requests.count(target), k <= 10 ? 1u : 0u) << target;
    }
}

TEST(Site, RedirectsLoopsAndJoinsAreRequestedOnce) {
    const site s = generate_site({});
    for (const char* t :
         {"/r/301", "/r/302", "/r/303", "/r/307", "/r/308", "/only/redirected.html", "/loop/a", "/loop/b",
          "/loop/c", "/join/a", "/join/b", "/only/joined.html", "/r/no-location", "/r/rel/go",
          "/only/relative-redirect.html", "/r/offsite", "/r/other-origin"}) {
        EXPECT_EQ(s.expected_requests.count(t), 1u) << t;
    }
    EXPECT_EQ(s.expected_requests.count("/hidden/from-300.html"), 0u);
    EXPECT_EQ(s.out_of_scope_links.count("http://other.invalid/landing"), 1u);
    EXPECT_EQ(s.out_of_scope_links.count("{{other_origin}}/p/0.html"), 1u);
}

TEST(Site, PagesStayWithinTheSizeBounds) {
    for (const site_options& options : {site_options{}, site_options{50, 7, 6, 4'000, 5'000}}) {
        const site s = generate_site(options);
        for (const auto& [target, r] : s.resources) {
            if (r.status == 200 && is_html(r)) {
                EXPECT_GE(r.body.size(), options.min_page_bytes) << target;
                EXPECT_LE(r.body.size(), options.max_page_bytes) << target;
            }
        }
    }
}

TEST(Site, EveryFeatureIsPresent) {
    const site s = generate_site({});
    // Link shapes
    for (const char* marker : {
             "href=\"p/0.html\"",          // relative from the root
             "href=\"../p/",               // parent-relative
             "href=\"./",                  // explicit current directory
             "href=\"../../p/",            // climbs above the root
             "href=\"{{origin}}/p/",       // absolute self-link
             "href=\"{{origin}}\"",        // the origin without a path
             "#section-",                  // fragments
             "href=\"#top\"",              // fragment only
             "&amp;page=",                 // entity in a query
             "&#38;page=",                 // numeric entity in a query
             "&#47;p&#47;",                // numeric entities in a path
             "href=\"?q=",                 // query-only reference
             "/a/../p/",                   // dot segments
             "<base href=\"/base/dir/\">", // base
             "<base href=\"/wrong/\">",    // a second base, ignored
             "<base href=\"dir2/\">",      // a relative base
             "<base href=\"{{origin}}/base/abs/deeper/\">",
             "<a href=/p/",                  // unquoted
             "<A HREF=\"",                   // uppercase
             "<a href='",                    // single quotes
             "href=\"\n",                    // whitespace and newlines around the URL
             "title=\"a > b\" href = \"",    // messy attributes
             "/%70/%3",                      // percent-encoded unreserved characters
             "/caf\xC3\xA9.html",            // raw non-ASCII
             "/caf%c3%a9.html",              // lowercase hex
             "/caf%C3%A9.html",              // uppercase hex
             "with space.html",              // raw space
             "men\xC3\xBC caf\xC3\xA9.html", // raw space and non-ASCII in one reference
             "a%2fb.html",                   // an encoded reserved character
             "<frame src=",                  // frames
             "<iframe src=",                 // iframes
             "<area shape=",                 // areas
             "<AREA SHAPE=rect",             //
             "http-equiv=\"refresh\" content=\"0; url=/only/refresh.html\"",
             "<!-- <a href=\"/hidden/",      // links in comments
             "<script>",                     // and scripts
             "<style>",                      // and styles
             "<template><a href=\"/hidden/", // and templates
             "<img src=\"/hidden/",          // images are not links
             "{{other_origin}}/p/1.html",    // the same server under another host name
             "http://other.invalid/x",       // another host
             "href=\"//other.invalid/",      // scheme-relative
             "http://127.0.0.1:1/",          // another port
             "mailto:",
             "javascript:",
             "tel:",
             "ftp:",
             "data:",
         }) {
        EXPECT_TRUE(body_contains(s, marker)) << "missing feature marker: " << marker;
    }
    // Redirects
    for (const int status : {301, 302, 303, 307, 308}) {
        EXPECT_TRUE(any_resource(s, [&](const std::string&, const auto& r) {
            return r.status == status && !r.location.empty();
        })) << status;
    }
    EXPECT_TRUE(any_resource(
        s, [](const std::string&, const auto& r) { return r.status == 302 && r.location.empty(); }));
    EXPECT_TRUE(any_resource(s, [](const std::string&, const auto& r) {
        return !r.location.empty() && r.location[0] != '/' && r.location.rfind("{{", 0) != 0 &&
               r.location.rfind("http", 0) != 0;
    })) << "relative Location";
    EXPECT_TRUE(any_resource(s, [](const std::string&, const auto& r) {
        return r.location.rfind("http://other.invalid", 0) == 0;
    }));
    EXPECT_TRUE(any_resource(
        s, [](const std::string&, const auto& r) { return r.location.rfind("{{other_origin}}", 0) == 0; }));
    // Content types
    for (const char* type : {"text/plain", "image/png", "application/json"}) {
        EXPECT_TRUE(any_resource(s, [&](const std::string& t, const auto& r) {
            return r.content_type.rfind(type, 0) == 0 && r.body.find("/hidden/") != std::string::npos &&
                   s.expected_requests.count(t) == 1;
        })) << type;
    }
    EXPECT_TRUE(any_resource(s, [&](const std::string& t, const auto& r) {
        return r.content_type == "application/xhtml+xml" && s.expected_requests.count(t) == 1;
    }));
    EXPECT_TRUE(any_resource(s, [&](const std::string& t, const auto& r) {
        return r.content_type == "text/html" && t.rfind("/p/", 0) == 0;
    })) << "a content page without charset";
    EXPECT_TRUE(any_resource(s, [&](const std::string& t, const auto&) {
        return s.expected_requests.count(t) == 0;
    })) << "orphans";
    for (const char* only : {"/only/frame.html", "/only/iframe.html", "/only/area.html", "/only/refresh.html",
                             "/only/refresh-quoted.html", "/only/from-xhtml.html"}) {
        EXPECT_EQ(s.expected_requests.count(only), 1u) << only;
    }
    for (const char* t :
         {"/search?q=1&page=1", "/search?q=3&page=3", "/caf%C3%A9.html", "/docs/men%C3%BC%20caf%C3%A9.html",
          "/docs/with%20space.html", "/docs/~tilde.html", "/docs/a%2Fb.html", "/base/dir/page1.html",
          "/base/abs/deeper/leaf.html", "/base/rel/dir2/x.html"}) {
        EXPECT_EQ(s.expected_requests.count(t), 1u) << t;
    }
    EXPECT_EQ(s.expected_requests.count("/base/page1.html"), 0u);
    EXPECT_EQ(s.expected_requests.count("/wrong/page1.html"), 0u);
}

/// The generator's by-construction ground truth equals what the independent reference crawler finds.
void expect_reference_crawl_matches(const site_options& options) {
    const site s = generate_site(options);
    const std::string host = "127.0.0.1:4242";
    const request_handler handler = serve_site(s);
    ref::crawler crawler(host);
    std::size_t requests = 0;
    while (const auto target = crawler.next()) {
        crawler.on_response(call(handler, get_request(*target, host)));
        ++requests;
    }
    EXPECT_EQ(requests, s.expected_requests.size());
    std::vector<std::string> extra;
    std::vector<std::string> missing;
    std::set_difference(crawler.requested().begin(), crawler.requested().end(), s.expected_requests.begin(),
                        s.expected_requests.end(), std::back_inserter(extra));
    std::set_difference(s.expected_requests.begin(), s.expected_requests.end(), crawler.requested().begin(),
                        crawler.requested().end(), std::back_inserter(missing));
    EXPECT_TRUE(extra.empty()) << "requested but not expected, e.g. " << (extra.empty() ? "" : extra.front());
    EXPECT_TRUE(missing.empty()) << "expected but not requested, e.g. "
                                 << (missing.empty() ? "" : missing.front());
    EXPECT_EQ(crawler.off_scope(), expand(s.out_of_scope_links, host, "localhost:4242"));
}

TEST(Site, GroundTruthMatchesAReferenceCrawl) {
    expect_reference_crawl_matches({});
    expect_reference_crawl_matches({300, 1, 12, 2'000, 8'000});
    for (std::uint32_t seed = 2; seed <= 6; ++seed) {
        expect_reference_crawl_matches({1 + seed * 15, seed, seed, 1'000, 3'000});
    }
    expect_reference_crawl_matches({1, 9, 1, 2'000, 8'000});
}

/// A mix with every kind of link, and pages with <base href>.
site_options every_kind_of_link(std::uint32_t seed) {
    site_options options;
    options.pages = 150;
    options.seed = seed;
    options.links_per_page = 10;
    options.links = {.broken = 1,
                     .fragment = 1,
                     .off_site = 1,
                     .off_host = 1,
                     .non_http = 1,
                     .redirect = 2,
                     .query = 2,
                     .relative = 1,
                     .absolute = 1,
                     .styled = 1,
                     .base_pages = 30};
    return options;
}

TEST(Site, EveryLinkKindOfAMixIsPresentAndCrawledAsTheGroundTruthSays) {
    for (std::uint32_t seed = 1; seed <= 3; ++seed) {
        expect_reference_crawl_matches(every_kind_of_link(seed));
    }
    const site s = generate_site(every_kind_of_link(1));
    std::size_t redirects = 0;
    std::size_t variants = 0;
    std::size_t base_pages = 0;
    for (const auto& [target, r] : s.resources) {
        if (target.rfind("/r/go/", 0) == 0) {
            ++redirects;
            EXPECT_EQ(s.expected_requests.count(target), 1u) << target;
            EXPECT_EQ(s.expected_requests.count(r.location), 1u) << r.location;
        }
        if (target.find("?from=") != std::string::npos) {
            ++variants;
        }
        if (r.body.find("<base href=\"{{origin}}/\">") != std::string::npos) {
            ++base_pages;
        }
    }
    EXPECT_GT(redirects, 50u);
    EXPECT_GT(variants, 50u);
    EXPECT_GT(base_pages, 20u);
    EXPECT_LT(base_pages, 80u);
    // A crawler that ignored <base href="/"> would resolve "p/N.html" on those pages to /p/p/N.html.
    EXPECT_EQ(std::count_if(s.expected_requests.begin(), s.expected_requests.end(),
                            [](const std::string& t) { return t.rfind("/p/p/", 0) == 0; }),
              0);
    EXPECT_EQ(s.out_of_scope_links.count("mailto:webmaster@example.invalid"), 1u);
    EXPECT_EQ(s.out_of_scope_links.count("http://other.invalid/x"), 1u);
}

TEST(Site, LinkMixSpecsAreParsed) {
    const auto mix = asiocrawl::demo::parse_link_mix("redirect=5,query=7,base_pages=10,styled=0");
    EXPECT_EQ(mix.redirect, 5u);
    EXPECT_EQ(mix.query, 7u);
    EXPECT_EQ(mix.base_pages, 10u);
    EXPECT_EQ(mix.styled, 0u);
    EXPECT_EQ(mix.broken, 2u); // unnamed kinds keep their defaults
    EXPECT_EQ(asiocrawl::demo::parse_link_mix("").styled, 93u);
    for (const char* bad : {"redirect", "nothing=1", "query=x", "query=", "query=-1", "query=1,"}) {
        EXPECT_THROW(asiocrawl::demo::parse_link_mix(bad), std::invalid_argument) << bad;
    }
}

TEST(Site, AKindWithWeightZeroIsNeverDrawn) {
    site_options only_relative;
    only_relative.links = {.broken = 0, .fragment = 0, .off_site = 0, .relative = 1, .styled = 0};
    const site s = generate_site(only_relative);
    const site classic = generate_site({});
    // Off-site links then come from the scattered off-site snippet only, which both sites share.
    EXPECT_EQ(s.out_of_scope_links, classic.out_of_scope_links);
    for (const auto& [target, r] : s.resources) {
        EXPECT_EQ(target.rfind("/r/go/", 0), std::string::npos) << target;
        EXPECT_EQ(target.find("?from="), std::string::npos) << target;
    }
    EXPECT_EQ(std::count_if(s.expected_requests.begin(), s.expected_requests.end(),
                            [](const std::string& t) { return t.rfind("/missing/", 0) == 0; }),
              2); // /missing/linked.html and /missing/redirected.html, from the snippets
    expect_reference_crawl_matches(only_relative);
}

TEST(ServeSite, SubstitutesPlaceholdersAndAnswersHeadAnd404) {
    const site s = generate_site({});
    const request_handler handler = serve_site(s);

    const auto root = call(handler, get_request("/", "127.0.0.1:5555"));
    EXPECT_EQ(root.result_int(), 200);
    EXPECT_NE(root.body().find("href=\"http://127.0.0.1:5555/docs/index.html\""), std::string::npos);
    EXPECT_EQ(root.body().find("{{"), std::string::npos);

    const auto other = call(handler, get_request("/r/other-origin", "127.0.0.1:5555"));
    EXPECT_EQ(other.result_int(), 301);
    EXPECT_EQ(other[http::field::location], "http://localhost:5555/p/0.html");
    const auto swapped = call(handler, get_request("/r/other-origin", "localhost:5555"));
    EXPECT_EQ(swapped[http::field::location], "http://127.0.0.1:5555/p/0.html");

    const auto head = call(handler, get_request("/", "127.0.0.1:5555", http::verb::head));
    EXPECT_EQ(head.result_int(), 200);
    EXPECT_TRUE(head.body().empty());
    EXPECT_EQ(head[http::field::content_length], std::to_string(root.body().size()));

    const auto missing = call(handler, get_request("/no/such/page", "127.0.0.1:5555"));
    EXPECT_EQ(missing.result_int(), 404);
    EXPECT_EQ(missing[http::field::content_type], "text/html; charset=utf-8");

    const auto post = call(handler, get_request("/", "127.0.0.1:5555", http::verb::post));
    EXPECT_EQ(post.result_int(), 405);

    const auto no_location = call(handler, get_request("/r/no-location", "127.0.0.1:5555"));
    EXPECT_EQ(no_location.result_int(), 302);
    EXPECT_EQ(no_location.find(http::field::location), no_location.end());
}

// ==========================================================================================================
// The server
// ==========================================================================================================

/// Runs `ctx` until it runs out of work, at most `limit`; true when it did run out (nothing lingered).
bool runs_to_completion(asio::io_context& ctx, std::chrono::seconds limit = std::chrono::seconds(20)) {
    ctx.run_for(limit);
    return ctx.stopped();
}

/// Spawns a test coroutine whose exception, if any, is kept for the test to rethrow.
struct spawned {
    bool done = false;
    std::exception_ptr failure;
    void check() const {
        EXPECT_TRUE(done);
        if (failure) {
            std::rethrow_exception(failure);
        }
    }
};

void spawn(asio::io_context& ctx, awaitable<void> coro, spawned& result) {
    asio::co_spawn(ctx, std::move(coro), [&result](std::exception_ptr e) {
        result.done = true;
        result.failure = e;
    });
}

struct exchange {
    beast::error_code ec;
    http_response response;
};

/// Sends each request on one connection in turn; stops at the first error.
awaitable<std::vector<exchange>> fetch(unsigned short port, std::vector<http_request> requests) {
    beast::tcp_stream stream(co_await asio::this_coro::executor);
    stream.expires_after(std::chrono::seconds(10));
    co_await stream.async_connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port),
                                  asio::use_awaitable);
    std::vector<exchange> out;
    beast::flat_buffer buffer;
    for (auto& req : requests) {
        exchange x;
        stream.expires_after(std::chrono::seconds(10));
        auto [write_ec, written] = co_await http::async_write(stream, req, use_tuple);
        x.ec = write_ec;
        if (!x.ec) {
            http::response_parser<http::string_body> parser;
            parser.skip(req.method() == http::verb::head);
            auto [read_ec, read] = co_await http::async_read(stream, buffer, parser, use_tuple);
            x.ec = read_ec;
            if (!read_ec) {
                x.response = parser.release();
            }
        }
        out.push_back(std::move(x));
        if (out.back().ec) {
            break;
        }
    }
    co_return out;
}

awaitable<void> fetch_then_stop(http_server& server, std::vector<http_request> requests,
                                std::vector<exchange>& out) {
    out = co_await fetch(server.port(), std::move(requests));
    server.stop();
}

TEST(HttpServer, ServesTheSiteWithPlaceholdersForItsPort) {
    const site s = generate_site({});
    asio::io_context ctx;
    http_server server(ctx.get_executor(), serve_site(s));
    ASSERT_NE(server.port(), 0);
    EXPECT_EQ(server.origin(), "http://127.0.0.1:" + std::to_string(server.port()));
    const std::string host = "127.0.0.1:" + std::to_string(server.port());

    std::vector<exchange> got;
    spawned task;
    spawn(ctx, fetch_then_stop(server, {get_request("/", host), get_request("/nowhere", host)}, got), task);
    ASSERT_TRUE(runs_to_completion(ctx));
    task.check();
    ASSERT_EQ(got.size(), 2u);
    ASSERT_FALSE(got[0].ec) << got[0].ec.message();
    EXPECT_EQ(got[0].response.result_int(), 200);
    EXPECT_NE(got[0].response.body().find("http://" + host + "/docs/index.html"), std::string::npos);
    EXPECT_EQ(got[0].response.body().find("{{origin}}"), std::string::npos);
    EXPECT_EQ(got[0].response[http::field::content_length], std::to_string(got[0].response.body().size()));
    ASSERT_FALSE(got[1].ec) << got[1].ec.message();
    EXPECT_EQ(got[1].response.result_int(), 404);

    ASSERT_EQ(server.log().size(), 2u);
    EXPECT_EQ(server.log()[0].method, "GET");
    EXPECT_EQ(server.log()[0].target, "/");
    EXPECT_EQ(server.log()[0].host, host);
    EXPECT_EQ(server.log()[1].target, "/nowhere");
    EXPECT_EQ(server.requests(), 2u);
    EXPECT_EQ(server.in_flight(), 0u);
}

TEST(HttpServer, KeepAliveReusesOneConnection) {
    const site s = generate_site({});
    asio::io_context ctx;
    http_server server(ctx.get_executor(), serve_site(s));
    const std::string host = "127.0.0.1:" + std::to_string(server.port());

    std::vector<exchange> got;
    spawned task;
    spawn(ctx,
          fetch_then_stop(server,
                          {get_request("/p/1.html", host), get_request("/p/2.html", host, http::verb::head),
                           get_request("/p/3.html", host)},
                          got),
          task);
    ASSERT_TRUE(runs_to_completion(ctx));
    task.check();
    ASSERT_EQ(got.size(), 3u);
    for (const auto& x : got) {
        EXPECT_FALSE(x.ec) << x.ec.message();
        EXPECT_EQ(x.response.result_int(), 200);
        EXPECT_TRUE(x.response.keep_alive());
    }
    EXPECT_TRUE(got[1].response.body().empty());
    EXPECT_EQ(server.connections(), 1u);
    EXPECT_EQ(server.requests(), 3u);
    ASSERT_EQ(server.log().size(), 3u);
    for (const auto& entry : server.log()) {
        EXPECT_EQ(entry.connection, 1u);
    }
    EXPECT_EQ(server.log()[1].method, "HEAD");
}

TEST(HttpServer, ConnectionCloseFromTheRequestOrTheHandlerIsHonored) {
    asio::io_context ctx;
    http_server server(ctx.get_executor(),
                       [](const http_request& req) -> awaitable<std::optional<http_response>> {
                           http_response res{http::status::ok, 11};
                           res.body() = "ok";
                           if (req.target() == "/close") {
                               res.set(http::field::connection, "close");
                           }
                           co_return res;
                       });
    const std::string host = "127.0.0.1:" + std::to_string(server.port());
    auto closing = get_request("/a", host);
    closing.keep_alive(false);

    std::vector<exchange> by_client;
    std::vector<exchange> by_handler;
    spawned task;
    spawn(
        ctx,
        [](http_server& srv, std::string h, http_request closing_req, std::vector<exchange>& a,
           std::vector<exchange>& b) -> awaitable<void> {
            // Built first: g++ 12 rejects a braced list in the same full expression as co_await.
            std::vector<http_request> first{std::move(closing_req), get_request("/b", h)};
            std::vector<http_request> second{get_request("/close", h), get_request("/b", h)};
            a = co_await fetch(srv.port(), std::move(first));
            b = co_await fetch(srv.port(), std::move(second));
            srv.stop();
        }(server, host, closing, by_client, by_handler),
        task);
    ASSERT_TRUE(runs_to_completion(ctx));
    task.check();
    ASSERT_EQ(by_client.size(), 2u);
    EXPECT_FALSE(by_client[0].response.keep_alive());
    EXPECT_TRUE(by_client[1].ec); // the server closed after the first answer
    ASSERT_EQ(by_handler.size(), 2u);
    EXPECT_EQ(by_handler[0].response.body(), "ok");
    EXPECT_FALSE(by_handler[0].response.keep_alive());
    EXPECT_TRUE(by_handler[1].ec);
    EXPECT_EQ(server.connections(), 2u);
    EXPECT_EQ(server.requests(), 2u);
}

TEST(HttpServer, NulloptClosesTheConnectionWithoutAnswer) {
    asio::io_context ctx;
    http_server server(
        ctx.get_executor(),
        [](const http_request&) -> awaitable<std::optional<http_response>> { co_return std::nullopt; });
    const std::string host = "127.0.0.1:" + std::to_string(server.port());
    std::vector<exchange> got;
    spawned task;
    spawn(ctx, fetch_then_stop(server, {get_request("/drop", host)}, got), task);
    ASSERT_TRUE(runs_to_completion(ctx));
    task.check();
    ASSERT_EQ(got.size(), 1u);
    EXPECT_TRUE(got[0].ec == http::error::end_of_stream || got[0].ec == asio::error::eof ||
                got[0].ec == asio::error::connection_reset)
        << got[0].ec.message();
    EXPECT_EQ(server.requests(), 1u);
    EXPECT_EQ(server.in_flight(), 0u);
}

TEST(HttpServer, AThrowingHandlerGetsA500) {
    asio::io_context ctx;
    http_server server(ctx.get_executor(),
                       [](const http_request&) -> awaitable<std::optional<http_response>> {
                           throw std::runtime_error("boom");
                           co_return std::nullopt;
                       });
    const std::string host = "127.0.0.1:" + std::to_string(server.port());
    std::vector<exchange> got;
    spawned task;
    spawn(ctx, fetch_then_stop(server, {get_request("/", host)}, got), task);
    ASSERT_TRUE(runs_to_completion(ctx));
    task.check();
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].response.result_int(), 500);
    EXPECT_NE(got[0].response.body().find("boom"), std::string::npos);
}

awaitable<void> stop_after(http_server& server, std::chrono::milliseconds delay) {
    asio::steady_timer timer(co_await asio::this_coro::executor, delay);
    co_await timer.async_wait(asio::use_awaitable);
    server.stop();
}

awaitable<void> fetch_into(unsigned short port, std::vector<http_request> requests,
                           std::vector<exchange>& out) {
    out = co_await fetch(port, std::move(requests));
}

TEST(HttpServer, StopReleasesHandlersWaitingForIt) {
    asio::io_context ctx;
    http_server* self = nullptr;
    int released = 0;
    http_server server(ctx.get_executor(),
                       [&self, &released](const http_request&) -> awaitable<std::optional<http_response>> {
                           co_await self->wait_stopped();
                           ++released;
                           co_return http_response{http::status::ok, 11};
                       });
    self = &server;
    const std::string host = "127.0.0.1:" + std::to_string(server.port());
    std::vector<exchange> first;
    std::vector<exchange> second;
    spawned a;
    spawned b;
    spawned stopper;
    spawn(ctx, fetch_into(server.port(), {get_request("/hang", host)}, first), a);
    spawn(ctx, fetch_into(server.port(), {get_request("/hang", host)}, second), b);
    spawn(ctx, stop_after(server, std::chrono::milliseconds(200)), stopper);
    ASSERT_TRUE(runs_to_completion(ctx));
    a.check();
    b.check();
    stopper.check();
    EXPECT_EQ(released, 2);
    ASSERT_EQ(first.size(), 1u);
    EXPECT_TRUE(first[0].ec); // closed, not answered
    ASSERT_EQ(second.size(), 1u);
    EXPECT_TRUE(second[0].ec);
    EXPECT_EQ(server.requests(), 2u);
    EXPECT_EQ(server.in_flight(), 0u);
    EXPECT_EQ(server.peak_in_flight(), 2u);
}

TEST(HttpServer, StopCancelsSlowHandlersAndIdleConnections) {
    asio::io_context ctx;
    http_server server(
        ctx.get_executor(), [](const http_request& req) -> awaitable<std::optional<http_response>> {
            if (req.target() == "/slow") {
                asio::steady_timer timer(co_await asio::this_coro::executor, std::chrono::hours(1));
                co_await timer.async_wait(asio::use_awaitable);
            }
            co_return http_response{http::status::ok, 11};
        });
    const std::string host = "127.0.0.1:" + std::to_string(server.port());
    std::vector<exchange> slow;
    std::vector<exchange> fast;
    spawned a;
    spawned b;
    spawned stopper;
    spawn(ctx, fetch_into(server.port(), {get_request("/slow", host)}, slow), a);
    spawn(ctx, fetch_into(server.port(), {get_request("/fast", host)}, fast), b);
    spawn(ctx, stop_after(server, std::chrono::milliseconds(200)), stopper);
    ASSERT_TRUE(runs_to_completion(ctx));
    a.check();
    b.check();
    ASSERT_EQ(slow.size(), 1u);
    EXPECT_TRUE(slow[0].ec);
    ASSERT_EQ(fast.size(), 1u);
    EXPECT_FALSE(fast[0].ec);
}

awaitable<void> idle_client(unsigned short port, beast::error_code& result) {
    beast::tcp_stream stream(co_await asio::this_coro::executor);
    co_await stream.async_connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port),
                                  asio::use_awaitable);
    char byte = 0;
    stream.expires_after(std::chrono::seconds(10));
    auto [ec, n] = co_await stream.async_read_some(asio::buffer(&byte, 1), use_tuple);
    result = ec;
}

TEST(HttpServer, StopClosesConnectionsThatNeverSentARequest) {
    asio::io_context ctx;
    http_server server(ctx.get_executor(), serve_site(generate_site({})));
    beast::error_code idle_result;
    spawned client;
    spawned stopper;
    spawn(ctx, idle_client(server.port(), idle_result), client);
    spawn(ctx, stop_after(server, std::chrono::milliseconds(200)), stopper);
    ASSERT_TRUE(runs_to_completion(ctx));
    client.check();
    EXPECT_EQ(idle_result, asio::error::eof);
    EXPECT_EQ(server.connections(), 1u);
    EXPECT_EQ(server.requests(), 0u);
}

TEST(HttpServer, PeakInFlightCountsConcurrentRequests) {
    asio::io_context ctx;
    http_server server(
        ctx.get_executor(), [](const http_request&) -> awaitable<std::optional<http_response>> {
            asio::steady_timer timer(co_await asio::this_coro::executor, std::chrono::milliseconds(100));
            co_await timer.async_wait(asio::use_awaitable);
            http_response res{http::status::ok, 11};
            res.body() = "slow";
            co_return res;
        });
    const std::string host = "127.0.0.1:" + std::to_string(server.port());
    constexpr std::size_t clients = 5;
    std::vector<std::vector<exchange>> got(clients);
    std::vector<spawned> tasks(clients);
    for (std::size_t i = 0; i < clients; ++i) {
        spawn(ctx, fetch_into(server.port(), {get_request("/" + std::to_string(i), host)}, got[i]), tasks[i]);
    }
    // Let the clients finish, then stop.
    const auto all_done = [&tasks] {
        return std::all_of(tasks.begin(), tasks.end(), [](const spawned& t) { return t.done; });
    };
    for (int i = 0; i < 1000 && !all_done(); ++i) {
        ctx.run_for(std::chrono::milliseconds(10));
    }
    EXPECT_EQ(server.in_flight(), 0u);
    server.stop();
    ASSERT_TRUE(runs_to_completion(ctx));
    for (std::size_t i = 0; i < clients; ++i) {
        tasks[i].check();
        ASSERT_EQ(got[i].size(), 1u);
        EXPECT_EQ(got[i][0].response.body(), "slow");
    }
    EXPECT_EQ(server.peak_in_flight(), clients);
    EXPECT_EQ(server.in_flight(), 0u);
    EXPECT_EQ(server.connections(), clients);
    EXPECT_EQ(server.requests(), clients);
    std::set<std::size_t> serials;
    for (const auto& entry : server.log()) {
        serials.insert(entry.connection);
    }
    EXPECT_EQ(serials, (std::set<std::size_t>{1, 2, 3, 4, 5}));
}

TEST(HttpServer, DestroyingTheServerMidSessionIsSafe) {
    asio::io_context ctx;
    std::vector<exchange> got;
    spawned client;
    {
        auto server = std::make_unique<http_server>(
            ctx.get_executor(), [](const http_request&) -> awaitable<std::optional<http_response>> {
                asio::steady_timer timer(co_await asio::this_coro::executor, std::chrono::milliseconds(50));
                co_await timer.async_wait(asio::use_awaitable);
                co_return http_response{http::status::ok, 11};
            });
        spawn(ctx, fetch_into(server->port(), {get_request("/", "x")}, got), client);
        // Run until the request is being handled, then destroy the handle.
        for (int i = 0; i < 200 && server->in_flight() == 0; ++i) {
            ctx.run_for(std::chrono::milliseconds(5));
        }
        EXPECT_EQ(server->in_flight(), 1u);
    }
    ASSERT_TRUE(runs_to_completion(ctx));
    client.check();
    ASSERT_EQ(got.size(), 1u);
    EXPECT_TRUE(got[0].ec);
}

TEST(HttpServer, BindsTheRequestedPortWithReuseAddress) {
    asio::io_context ctx;
    unsigned short port = 0;
    {
        http_server first(ctx.get_executor(), serve_site(generate_site({})));
        port = first.port();
    }
    ASSERT_TRUE(runs_to_completion(ctx));
    ctx.restart();
    http_server again(ctx.get_executor(), serve_site(generate_site({})), port);
    EXPECT_EQ(again.port(), port);
    EXPECT_THROW(http_server(ctx.get_executor(), serve_site(generate_site({})), port),
                 boost::system::system_error);
    again.stop();
    EXPECT_TRUE(runs_to_completion(ctx));
}

/// The reference crawler over real sockets: the server's log is exactly the ground truth.
awaitable<void> crawl_over_network(http_server& server, std::size_t& fetched) {
    const std::string host = "127.0.0.1:" + std::to_string(server.port());
    ref::crawler crawler(host);
    beast::tcp_stream stream(co_await asio::this_coro::executor);
    co_await stream.async_connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), server.port()),
                                  asio::use_awaitable);
    beast::flat_buffer buffer;
    while (const auto target = crawler.next()) {
        auto req = get_request(*target, host);
        stream.expires_after(std::chrono::seconds(10));
        co_await http::async_write(stream, req, asio::use_awaitable);
        http::response_parser<http::string_body> parser;
        co_await http::async_read(stream, buffer, parser, asio::use_awaitable);
        crawler.on_response(parser.get());
        ++fetched;
    }
    server.stop();
}

TEST(HttpServer, AReferenceCrawlOverTheNetworkRequestsExactlyTheGroundTruth) {
    const site s = generate_site({});
    asio::io_context ctx;
    http_server server(ctx.get_executor(), serve_site(s));
    std::size_t fetched = 0;
    spawned task;
    spawn(ctx, crawl_over_network(server, fetched), task);
    ASSERT_TRUE(runs_to_completion(ctx, std::chrono::seconds(60)));
    task.check();
    EXPECT_EQ(fetched, s.expected_requests.size());
    EXPECT_EQ(server.connections(), 1u);
    std::set<std::string> logged;
    for (const auto& entry : server.log()) {
        EXPECT_TRUE(logged.insert(entry.target).second) << "requested twice: " << entry.target;
        EXPECT_EQ(entry.host, "127.0.0.1:" + std::to_string(server.port()));
    }
    EXPECT_EQ(logged, s.expected_requests);
}

} // namespace
