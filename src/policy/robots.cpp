// robots.txt parsing and matching (RFC 9309).
#include "policy/robots.hpp"

#include "util/ascii.hpp"

#include <algorithm>
#include <cstdint>

namespace asiocrawl {
namespace {

namespace ascii = detail::ascii;

constexpr std::string_view blanks = " \t\v\f";
constexpr std::string_view utf8_bom = "\xEF\xBB\xBF";
// Google's cap on one line (8 times the 2083 bytes of the longest URL old browsers took): bytes past it are
// dropped and the rest of the line still counts. Without a cap a line costs nothing more, but a rule cut
// short matches what Google's crawler matches.
constexpr std::size_t longest_line = 2083 * 8 - 1;
constexpr std::chrono::milliseconds longest_crawl_delay = std::chrono::hours(24);

enum class key_kind { user_agent, allow, disallow, crawl_delay, sitemap, unknown };

key_kind classify(std::string_view key) {
    const std::string k = ascii::to_lower(key);
    if (k == "user-agent" || k == "useragent" || k == "user agent")
        return key_kind::user_agent;
    if (k == "allow")
        return key_kind::allow;
    if (k == "disallow" || k == "dissallow" || k == "disalow" || k == "dissalow" || k == "diasllow" ||
        k == "disallaw")
        return key_kind::disallow;
    if (k == "crawl-delay" || k == "crawldelay" || k == "crawl delay")
        return key_kind::crawl_delay;
    if (k == "sitemap" || k == "site-map")
        return key_kind::sitemap;
    return key_kind::unknown;
}

// The product-token part of a user-agent value or of our own token: "FooBot/1.2 (+http://...)" -> "FooBot".
std::string_view agent_prefix(std::string_view value) {
    std::size_t n = 0;
    while (n < value.size() && (ascii::is_alpha(value[n]) || value[n] == '_' || value[n] == '-'))
        ++n;
    return value.substr(0, n);
}

// "*", and "* anything": Google reads a star followed by a blank as the global group too.
bool is_global_agent(std::string_view value) {
    return !value.empty() && value[0] == '*' && (value.size() == 1 || blanks.find(value[1]) != blanks.npos);
}

// A leading UTF-8 byte order mark, whole or cut short by a broken editor, is never part of a key.
std::string_view skip_byte_order_mark(std::string_view body) {
    for (const char b : utf8_bom) {
        if (body.empty() || body.front() != b)
            break;
        body.remove_prefix(1);
    }
    return body;
}

// "key: value", or "key value" when the colon was forgotten and the line is exactly two words (Google's
// reading of "Disallow /x"; anything longer without a colon is too ambiguous and is ignored).
bool split_line(std::string_view line, std::string_view& key, std::string_view& value) {
    line = ascii::trim(line, blanks);
    if (const auto colon = line.find(':'); colon != std::string_view::npos) {
        key = ascii::trim(line.substr(0, colon), blanks);
        value = ascii::trim(line.substr(colon + 1), blanks);
        return true;
    }
    constexpr std::string_view separators = " \t";
    const auto gap = line.find_first_of(separators);
    if (gap == std::string_view::npos)
        return false;
    value = ascii::trim(line.substr(gap), separators);
    if (value.find_first_of(separators) != std::string_view::npos)
        return false;
    key = line.substr(0, gap);
    return true;
}

constexpr bool is_unreserved(unsigned char c) noexcept {
    return ascii::is_alpha(static_cast<char>(c)) || ascii::is_digit(static_cast<char>(c)) || c == '-' ||
           c == '.' || c == '_' || c == '~';
}

unsigned hex_value(char c) noexcept {
    if (ascii::is_digit(c))
        return static_cast<unsigned>(c - '0');
    return static_cast<unsigned>(ascii::to_lower(c) - 'a' + 10);
}

void append_escaped(std::string& out, unsigned char byte) {
    constexpr char digits[] = "0123456789ABCDEF";
    out += '%';
    out += digits[byte >> 4];
    out += digits[byte & 0xF];
}

// The one normal form both patterns and URL paths are compared in (RFC 9309 §2.2.2). In a pattern '*' is the
// wildcard and is kept (runs of it collapse to one); everywhere else '*' and '$' are literal and escaped,
// which is how a pattern spells them ("%2A", "%24").
std::string normalize(std::string_view in, bool is_pattern) {
    std::string out;
    out.reserve(in.size());
    for (std::size_t i = 0; i < in.size(); ++i) {
        const auto c = static_cast<unsigned char>(in[i]);
        if (c == '*' && is_pattern) {
            if (out.empty() || out.back() != '*')
                out += '*';
        } else if (c == '%' && i + 2 < in.size() && ascii::is_hex_digit(in[i + 1]) &&
                   ascii::is_hex_digit(in[i + 2])) {
            const auto decoded = static_cast<unsigned char>(hex_value(in[i + 1]) * 16 + hex_value(in[i + 2]));
            if (is_unreserved(decoded))
                out += static_cast<char>(decoded);
            else
                append_escaped(out, decoded);
            i += 2;
        } else if (c == '%' || c == '*' || c == '$' || c <= 0x20 || c >= 0x7F) {
            append_escaped(out, c);
        } else {
            out += static_cast<char>(c);
        }
    }
    return out;
}

// Glob match of a normalized pattern against the start of a normalized path. Each literal piece between
// wildcards is matched at its leftmost possible place: with only '*' as a metacharacter, a leftmost placement
// never prevents a later piece from matching, so no backtracking is needed.
bool matches(std::string_view pattern, bool anchored, std::string_view path) {
    auto star = pattern.find('*');
    if (star == std::string_view::npos)
        return anchored ? path == pattern : path.starts_with(pattern);
    if (!path.starts_with(pattern.substr(0, star)))
        return false;
    std::size_t pos = star;
    std::string_view rest = pattern.substr(star + 1);
    for (;;) {
        star = rest.find('*');
        if (star == std::string_view::npos) {
            if (anchored)
                return path.size() - pos >= rest.size() && path.ends_with(rest);
            return path.find(rest, pos) != std::string_view::npos;
        }
        const auto piece = rest.substr(0, star);
        rest = rest.substr(star + 1);
        const auto found = path.find(piece, pos);
        if (found == std::string_view::npos)
            return false;
        pos = found + piece.size();
    }
}

// Decimal seconds, fractions allowed; nothing else (no sign, exponent or unit).
std::optional<std::chrono::milliseconds> parse_crawl_delay(std::string_view value) {
    const auto dot = value.find('.');
    const auto whole = value.substr(0, dot);
    const auto fraction = dot == std::string_view::npos ? std::string_view{} : value.substr(dot + 1);
    if (whole.empty() && fraction.empty())
        return std::nullopt;
    const auto all_digits = [](std::string_view s) {
        return std::all_of(s.begin(), s.end(), ascii::is_digit);
    };
    if (!all_digits(whole) || !all_digits(fraction))
        return std::nullopt;
    const std::int64_t cap = longest_crawl_delay.count();
    std::int64_t ms = 0;
    for (char c : whole) {
        ms = ms * 10 + (c - '0') * 1000;
        if (ms >= cap)
            return longest_crawl_delay;
    }
    std::int64_t scale = 100;
    for (std::size_t i = 0; i < fraction.size() && i < 3; ++i, scale /= 10)
        ms += (fraction[i] - '0') * scale;
    if (fraction.size() > 3 && fraction[3] >= '5')
        ++ms;
    return std::chrono::milliseconds(std::min(ms, cap));
}

} // namespace

std::string robots_path_of(std::string_view url) {
    // A network-path reference ("//host/path") starts with its host.
    const std::size_t host_start = url.starts_with("//") ? 2 : 0;
    constexpr std::string_view path_starts = "/?;";
    std::size_t path_search = host_start;
    // "://" ends a scheme only before any path, params or query: "?u=http://x" has none.
    if (const auto scheme_end = url.find("://", host_start);
        scheme_end != std::string_view::npos && scheme_end < url.find_first_of(path_starts, host_start))
        path_search = scheme_end + 3;
    const auto path_start = url.find_first_of(path_starts, path_search);
    if (path_start == std::string_view::npos)
        return "/";
    const auto fragment = url.find('#', host_start);
    if (fragment != std::string_view::npos && fragment < path_start)
        return "/";
    auto path = url.substr(path_start, fragment == std::string_view::npos ? url.npos : fragment - path_start);
    return path.front() == '/' ? std::string(path) : "/" + std::string(path);
}

robots_fetch_verdict robots_verdict_for_status(int status) noexcept {
    if (status >= 200 && status < 300)
        return robots_fetch_verdict::parse;
    if (status == 429)
        return robots_fetch_verdict::disallow_all;
    if (status >= 300 && status < 500)
        return robots_fetch_verdict::allow_all;
    return robots_fetch_verdict::disallow_all;
}

bool robots_rules::valid_product_token(std::string_view token) noexcept {
    return !token.empty() && agent_prefix(token).size() == token.size();
}

robots_rules robots_rules::parse(std::string_view body, std::string_view product_token) {
    body = skip_byte_order_mark(body);
    // An invalid token ("Foo Bar", "bot/2.1") names no group: only "*" groups apply to it (Google's choice;
    // RFC 9309 2.2.1 lets a product token hold letters, '_' and '-' only).
    const auto token = valid_product_token(product_token) ? product_token : std::string_view{};

    // Rules of the groups naming us and of the "*" groups are collected side by side; which set applies is
    // only known at the end of the file.
    struct selection {
        bool found = false;
        std::vector<rule> rules;
        std::optional<std::chrono::milliseconds> crawl_delay;
    };
    selection ours;
    selection global;
    bool group_is_ours = false;
    bool group_is_global = false;
    bool group_has_rules = false;
    std::vector<std::string> sitemaps;

    while (!body.empty()) {
        const auto eol = body.find_first_of("\r\n");
        auto line = body.substr(0, eol);
        body.remove_prefix(eol == std::string_view::npos ? body.size() : eol + 1);

        line = line.substr(0, longest_line);
        line = line.substr(0, line.find('#'));
        std::string_view key;
        std::string_view value;
        if (!split_line(line, key, value))
            continue;
        const auto kind = classify(key);

        switch (kind) {
        case key_kind::user_agent:
            if (group_has_rules) {
                group_is_ours = group_is_global = group_has_rules = false;
            }
            if (is_global_agent(value)) {
                group_is_global = global.found = true;
            } else if (!token.empty() && ascii::iequals(agent_prefix(value), token)) {
                group_is_ours = ours.found = true;
            }
            break;
        case key_kind::allow:
        case key_kind::disallow:
        case key_kind::crawl_delay: {
            group_has_rules = true;
            if (!group_is_ours && !group_is_global)
                break;
            std::optional<rule> parsed;
            std::optional<rule> directory;
            std::optional<std::chrono::milliseconds> delay;
            if (kind == key_kind::crawl_delay) {
                delay = parse_crawl_delay(value);
            } else if (!value.empty()) {
                const bool rooted = value.front() == '/' || value.front() == '*';
                std::string raw = rooted ? std::string(value) : "/" + std::string(value);
                rule r;
                r.allow = kind == key_kind::allow;
                // Google: allowing a directory's ".../index.htm*" allows the directory itself ("dir/$"): it
                // is the same page under its other name.
                if (const auto slash = raw.rfind('/');
                    r.allow && slash != std::string::npos && raw.compare(slash, 10, "/index.htm") == 0)
                    directory = rule{normalize(raw.substr(0, slash + 1), true), true, true};
                r.anchored = raw.back() == '$';
                if (r.anchored)
                    raw.pop_back();
                r.pattern = normalize(raw, true);
                parsed = std::move(r);
            }
            for (auto* target : {group_is_ours ? &ours : nullptr, group_is_global ? &global : nullptr}) {
                if (target == nullptr)
                    continue;
                if (parsed)
                    target->rules.push_back(*parsed);
                if (directory)
                    target->rules.push_back(*directory);
                if (delay && !target->crawl_delay)
                    target->crawl_delay = delay;
            }
            break;
        }
        case key_kind::sitemap:
            if (!value.empty())
                sitemaps.emplace_back(value);
            break;
        case key_kind::unknown:
            break;
        }
    }

    robots_rules result;
    selection& chosen = ours.found ? ours : global;
    result.rules_ = std::move(chosen.rules);
    result.crawl_delay_ = chosen.crawl_delay;
    result.sitemaps_ = std::move(sitemaps);
    const auto specificity = [](const rule& r) { return r.pattern.size() + (r.anchored ? 1 : 0); };
    std::stable_sort(result.rules_.begin(), result.rules_.end(), [&](const rule& a, const rule& b) {
        const auto la = specificity(a);
        const auto lb = specificity(b);
        return la != lb ? la > lb : a.allow && !b.allow;
    });
    return result;
}

robots_rules robots_rules::allow_all() {
    return {};
}

robots_rules robots_rules::disallow_all() {
    robots_rules result;
    result.rules_.push_back(rule{"*", false, false});
    return result;
}

bool robots_rules::allowed(std::string_view path_and_query) const {
    if (path_and_query.empty())
        path_and_query = "/";
    if (path_and_query.substr(0, path_and_query.find('?')) == "/robots.txt")
        return true;
    if (rules_.empty())
        return true;
    const auto path = normalize(path_and_query, false);
    for (const auto& r : rules_) {
        if (matches(r.pattern, r.anchored, path))
            return r.allow;
    }
    return true;
}

std::optional<std::chrono::milliseconds> robots_rules::crawl_delay() const {
    return crawl_delay_;
}

const std::vector<std::string>& robots_rules::sitemaps() const noexcept {
    return sitemaps_;
}

} // namespace asiocrawl
