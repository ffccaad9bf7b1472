#include "policy/hsts.hpp"

#include "util/ascii.hpp"

#include <boost/url/parse.hpp>
#include <boost/url/url.hpp>

#include <arpa/inet.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <sstream>

namespace asiocrawl::detail {

namespace {

/// RFC 9110 tchar.
constexpr bool is_tchar(char c) noexcept {
    return ascii::is_alnum(c) || std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

void skip_space(std::string_view& s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
}

std::string_view take_token(std::string_view& s) {
    std::size_t n = 0;
    while (n < s.size() && is_tchar(s[n]))
        ++n;
    const auto token = s.substr(0, n);
    s.remove_prefix(n);
    return token;
}

/// A quoted-string at the front of `s` (which starts with '"'), unescaped; nullopt when it does not end or
/// holds a control character.
std::optional<std::string> take_quoted(std::string_view& s) {
    std::string out;
    std::size_t i = 1;
    for (; i < s.size(); ++i) {
        const char c = s[i];
        if (c == '"') {
            s.remove_prefix(i + 1);
            return out;
        }
        if (c == '\\') {
            if (++i == s.size())
                return std::nullopt;
        }
        const auto u = static_cast<unsigned char>(s[i]);
        if ((u < 0x20 && s[i] != '\t') || u == 0x7f)
            return std::nullopt;
        out += s[i];
    }
    return std::nullopt;
}

/// delta-seconds, saturating.
std::optional<std::uint64_t> delta_seconds(std::string_view digits) {
    if (digits.empty() || !std::all_of(digits.begin(), digits.end(), ascii::is_digit))
        return std::nullopt;
    std::uint64_t value = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ec == std::errc::result_out_of_range)
        return std::numeric_limits<std::uint64_t>::max();
    if (ec != std::errc{} || end != digits.data() + digits.size())
        return std::nullopt;
    return value;
}

std::string_view without_trailing_dot(std::string_view host) {
    if (!host.empty() && host.back() == '.')
        host.remove_suffix(1);
    return host;
}

} // namespace

std::optional<sts_directives> parse_strict_transport_security(std::string_view value) {
    sts_directives out;
    bool saw_max_age = false;
    std::vector<std::string> seen; // unknown names too: a repeated one is a repeated directive (6.1 rule 2)
    std::string_view rest = value;
    for (;;) {
        skip_space(rest);
        if (rest.empty())
            break;
        if (rest.front() == ';') { // an empty directive
            rest.remove_prefix(1);
            continue;
        }
        const auto name = take_token(rest);
        if (name.empty())
            return std::nullopt;
        skip_space(rest);
        std::optional<std::string> directive_value;
        if (!rest.empty() && rest.front() == '=') {
            rest.remove_prefix(1);
            skip_space(rest);
            if (!rest.empty() && rest.front() == '"') {
                directive_value = take_quoted(rest);
                if (!directive_value)
                    return std::nullopt;
            } else {
                const auto token = take_token(rest);
                if (token.empty())
                    return std::nullopt;
                directive_value = std::string(token);
            }
            skip_space(rest);
        }
        if (!rest.empty()) {
            if (rest.front() != ';')
                return std::nullopt;
            rest.remove_prefix(1);
        }
        std::string lower = ascii::to_lower(name);
        if (std::find(seen.begin(), seen.end(), lower) != seen.end())
            return std::nullopt;
        seen.push_back(lower);
        if (lower == "max-age") {
            const auto seconds = directive_value ? delta_seconds(*directive_value) : std::nullopt;
            if (!seconds)
                return std::nullopt;
            out.max_age = *seconds;
            saw_max_age = true;
        } else if (lower == "includesubdomains") {
            if (directive_value) // a valueless directive (6.1.2)
                return std::nullopt;
            out.include_subdomains = true;
        }
        // Any other directive is ignored (6.1 rule 4).
    }
    if (!saw_max_age)
        return std::nullopt;
    return out;
}

bool is_ip_literal_host(std::string_view host) {
    if (host.empty())
        return false;
    if (host.front() == '[' || host.find(':') != std::string_view::npos)
        return true;
    unsigned char buffer[4];
    const std::string text(without_trailing_dot(host));
    return inet_pton(AF_INET, text.c_str(), buffer) == 1;
}

bool hsts_store::entry::expired(clock::time_point now) const {
    const auto now_s = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
    if (now_s < created)
        return false; // the clock went back: still valid until created + max_age
    return static_cast<std::uint64_t>(now_s - created) >= max_age;
}

void hsts_store::note(std::string host, entry e) {
    auto it = entries_.find(host);
    if (it != entries_.end()) {
        if (it->second.include_subdomains != e.include_subdomains || it->second.port != e.port)
            ++changes_;
        it->second = e;
        return;
    }
    if (entries_.size() >= max_hosts_) {
        ++refused_;
        return;
    }
    entries_.emplace(std::move(host), e);
    ++changes_;
}

bool hsts_store::observe(std::string_view host, std::uint16_t port, std::string_view field_value,
                         clock::time_point now) {
    host = without_trailing_dot(host);
    if (host.empty() || is_ip_literal_host(host))
        return false;
    const auto directives = parse_strict_transport_security(field_value);
    if (!directives)
        return false;
    std::string key = ascii::to_lower(host);
    if (directives->max_age == 0) {
        changes_ += entries_.erase(key);
        return true;
    }
    entry e;
    e.port = port;
    e.include_subdomains = directives->include_subdomains;
    e.created = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
    e.max_age = directives->max_age;
    note(std::move(key), e);
    return true;
}

bool hsts_store::known(std::string_view host, clock::time_point now) const {
    host = without_trailing_dot(host);
    if (entries_.empty() || host.empty() || is_ip_literal_host(host))
        return false;
    std::string name = ascii::to_lower(host);
    std::string_view candidate = name;
    for (bool congruent = true;; congruent = false) {
        const auto it = entries_.find(std::string(candidate));
        if (it != entries_.end() && !it->second.expired(now) && (congruent || it->second.include_subdomains))
            return true;
        const auto dot = candidate.find('.');
        if (dot == std::string_view::npos)
            return false;
        candidate.remove_prefix(dot + 1);
    }
}

std::optional<std::string> hsts_store::upgrade(std::string_view url, clock::time_point now) const {
    if (entries_.empty() || url.size() < 7 || !ascii::iequals(url.substr(0, 7), "http://"))
        return std::nullopt;
    auto parsed = boost::urls::parse_uri(url);
    if (!parsed)
        return std::nullopt;
    if (!known(parsed->encoded_host(), now))
        return std::nullopt;
    boost::urls::url u = *parsed;
    u.set_scheme("https");
    if (!u.has_port() || u.port_number() == 80)
        u.remove_port();
    return std::string(u.buffer());
}

std::vector<std::string> hsts_store::load(std::istream& in, clock::time_point now) {
    std::vector<std::string> problems;
    std::string line;
    for (std::size_t number = 1; std::getline(in, line); ++number) {
        const auto text = ascii::trim(line, " \t\r");
        if (text.empty() || text.front() == '#')
            continue;
        std::istringstream fields{std::string(text)};
        std::string host;
        long long port = 0, include = 0, created = 0;
        std::string max_age_text;
        std::string extra;
        if (!(fields >> host >> port >> include >> created >> max_age_text) || (fields >> extra) ||
            port < 0 || port > 65535 || (include != 0 && include != 1) || created < 0) {
            problems.push_back("line " + std::to_string(number) +
                               " is not \"host port 0|1 created max-age\"");
            continue;
        }
        const auto max_age = delta_seconds(max_age_text);
        if (!max_age) {
            problems.push_back("line " + std::to_string(number) + " has no max-age");
            continue;
        }
        const auto name = without_trailing_dot(host);
        if (name.empty() || is_ip_literal_host(name))
            continue;
        entry e;
        e.port = port == 0 ? 443 : static_cast<std::uint16_t>(port); // GNU Wget writes 0 for the default
        e.include_subdomains = include == 1;
        e.created = created;
        e.max_age = *max_age;
        if (e.max_age == 0 || e.expired(now))
            continue;
        note(ascii::to_lower(name), e);
    }
    if (in.bad())
        problems.push_back("a read error");
    return problems;
}

void hsts_store::save(std::ostream& out, clock::time_point now) const {
    std::vector<std::pair<std::string_view, const entry*>> sorted;
    for (const auto& [host, e] : entries_)
        if (!e.expired(now))
            sorted.emplace_back(host, &e);
    std::sort(sorted.begin(), sorted.end());
    out << "#HSTS 1.0 file\n#Generated by asiocrawl. Edit at your own risk.\n"
           "# <hostname> <port> <incl. subdomains> <created> <max-age>\n";
    for (const auto& [host, e] : sorted)
        out << host << ' ' << e->port << ' ' << (e->include_subdomains ? 1 : 0) << ' ' << e->created << ' '
            << e->max_age << '\n';
}

} // namespace asiocrawl::detail
