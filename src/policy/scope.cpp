// Crawl scope: excluded domains, host rule (strict or public-suffix based) or listed domains, the roots'
// directories, trap limits, file names, then exclude and include patterns.
#include "policy/scope.hpp"

#include "url/percent.hpp"
#include "url/url_host.hpp"
#include "util/ascii.hpp"

#include <boost/regex.hpp>
#include <boost/url/ipv4_address.hpp>
#include <boost/url/parse.hpp>

#include <libpsl.h>

#include <fnmatch.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace asiocrawl {
namespace {

namespace urls = boost::urls;

constexpr std::string_view www_prefix = "www.";

std::string lowercase_without_trailing_dot(std::string_view host) {
    std::string out = detail::ascii::to_lower(host);
    if (out.ends_with('.')) {
        out.pop_back();
    }
    return out;
}

std::string_view without_www(std::string_view host) noexcept {
    if (host.starts_with(www_prefix) && host.size() > www_prefix.size()) {
        host.remove_prefix(www_prefix.size());
    }
    return host;
}

bool is_ip_literal(std::string_view host) {
    return host.starts_with('[') || host.find(':') != std::string_view::npos ||
           urls::parse_ipv4_address(host).has_value();
}

// The public suffix list, loaded once. psl_latest() picks the newer of libpsl's built-in list and the system
// file (Debian package "publicsuffix", /usr/share/publicsuffix), and returns the built-in list when the file
// is absent; psl_builtin() is the last resort. The context is read-only after loading, so sharing it is safe.
class public_suffix_list {
public:
    public_suffix_list()
        : latest_(psl_latest(nullptr)) {}
    ~public_suffix_list() { psl_free(latest_); } // a no-op for the built-in context
    public_suffix_list(const public_suffix_list&) = delete;
    public_suffix_list& operator=(const public_suffix_list&) = delete;

    const psl_ctx_t* context() const noexcept { return latest_ != nullptr ? latest_ : psl_builtin(); }

    static const public_suffix_list& instance() {
        static const public_suffix_list list;
        return list;
    }

private:
    psl_ctx_t* latest_;
};

// What decides whether two URLs are on the same server: http and https on their default ports share the key
// "default", so that http://h/ and https://h/ are one site; any explicit other port is its own server.
std::string port_key(urls::url_view url) {
    const auto port = url.port();
    const bool is_default = port.empty() || (url.scheme_id() == urls::scheme::http && port == "80") ||
                            (url.scheme_id() == urls::scheme::https && port == "443");
    return is_default ? "default" : std::string(port);
}

struct server {
    std::string host; // lowercase, no trailing dot
    bool host_is_ip = false;
    std::string registrable_domain;
    std::string port_key;

    // The public suffix lookup is only paid for when the lenient rule needs it.
    server(urls::url_view url, host_scope mode)
        : host(lowercase_without_trailing_dot(url.encoded_host()))
        , host_is_ip(is_ip_host(url))
        , registrable_domain(mode == host_scope::lenient && !host_is_ip ? asiocrawl::registrable_domain(host)
                                                                        : std::string())
        , port_key(asiocrawl::port_key(url)) {}

    static bool is_ip_host(urls::url_view url) noexcept {
        const auto type = url.host_type();
        return type == urls::host_type::ipv4 || type == urls::host_type::ipv6 ||
               type == urls::host_type::ipvfuture;
    }
};

bool same_host_strict(const server& a, const server& b) {
    if (a.host_is_ip || b.host_is_ip) {
        return a.host_is_ip == b.host_is_ip && a.host == b.host;
    }
    return a.host == b.host || without_www(a.host) == b.host || a.host == without_www(b.host);
}

bool same_host(const server& candidate, const server& root, host_scope mode) {
    if (mode == host_scope::lenient && !candidate.registrable_domain.empty() &&
        !root.registrable_domain.empty()) {
        return candidate.registrable_domain == root.registrable_domain;
    }
    return same_host_strict(candidate, root);
}

std::vector<boost::regex> compile_patterns(std::string_view option_name,
                                           const std::vector<std::string>& patterns) {
    std::vector<boost::regex> compiled;
    for (const auto& pattern : patterns) {
        if (pattern.empty()) {
            continue;
        }
        try {
            compiled.emplace_back(pattern.begin(), pattern.end(), boost::regex::perl);
        } catch (const boost::regex_error& e) {
            throw std::invalid_argument("invalid " + std::string(option_name) + " pattern \"" + pattern +
                                        "\": " + e.what());
        }
    }
    return compiled;
}

enum class match_result { matched, not_matched, failed };

match_result search(const boost::regex& pattern, std::string_view text) noexcept {
    try {
        return boost::regex_search(text.begin(), text.end(), pattern) ? match_result::matched
                                                                      : match_result::not_matched;
    } catch (...) {
        // Boost.Regex throws when a pathological pattern exceeds its complexity limit (or memory runs out).
        return match_result::failed;
    }
}

// Any of the patterns: matched when one matches, failed when none matches and one could not be evaluated.
match_result search_any(const std::vector<boost::regex>& patterns, std::string_view text) noexcept {
    bool failed = false;
    for (const auto& pattern : patterns) {
        const match_result result = search(pattern, text);
        if (result == match_result::matched) {
            return result;
        }
        failed = failed || result == match_result::failed;
    }
    return failed ? match_result::failed : match_result::not_matched;
}

std::string domain_key(std::string_view domain) {
    std::string key = lowercase_without_trailing_dot(domain);
    while (key.starts_with('.')) {
        key.erase(0, 1);
    }
    return key;
}

// "example.com" covers "example.com" and "a.example.com", never "badexample.com".
bool in_domains(std::string_view host, const std::vector<std::string>& domains) {
    for (const auto& domain : domains) {
        if (host == domain || (host.size() > domain.size() && host.ends_with(domain) &&
                               host[host.size() - domain.size() - 1] == '.')) {
            return true;
        }
    }
    return false;
}

// wget's directory of a URL: the path up to and including its last '/'.
std::string_view directory_of(std::string_view path) noexcept {
    const auto slash = path.rfind('/');
    return slash == std::string_view::npos ? std::string_view("/") : path.substr(0, slash + 1);
}

std::string file_name_of(urls::url_view url) {
    const std::string_view path = url.encoded_path();
    const auto slash = path.rfind('/');
    return detail::percent_decode(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

bool name_matches(const std::string& name, const std::vector<std::string>& entries) {
    for (const auto& entry : entries) {
        if (entry.find_first_of("*?[") != std::string::npos) {
            if (::fnmatch(entry.c_str(), name.c_str(), 0) == 0) {
                return true;
            }
        } else if (name.ends_with(entry)) {
            return true;
        }
    }
    return false;
}

bool name_acceptable(const std::string& name, const std::vector<std::string>& accept,
                     const std::vector<std::string>& reject) {
    if (!accept.empty() && !name_matches(name, accept)) {
        return false;
    }
    return !name_matches(name, reject);
}

bool has_html_suffix(std::string_view name) {
    const std::string lower = detail::ascii::to_lower(name);
    return lower.ends_with(".html") || lower.ends_with(".htm");
}

// What the trap limits and the query permutations read of a normalized URL: a parsed one's parts, or the
// parts of its text found by check_text() without a parse.
struct url_parts {
    std::string_view text;  // the whole URL
    std::string_view path;  // encoded
    bool has_query = false; // a '?', even with nothing after it
    std::string_view query; // encoded, without the '?'
};

url_parts parts_of(urls::url_view url) noexcept {
    return {url.buffer(), url.encoded_path(), url.has_query(), url.encoded_query()};
}

// Path segments as written (still encoded), without the empty one after a trailing slash: "/a/b/" is
// {"a", "b"}, "/" is {}. Empty segments inside the path ("/a//b") count: a trap can repeat them too.
template <class Visit>
void for_each_segment(std::string_view path, Visit&& visit) {
    if (path.starts_with('/')) {
        path.remove_prefix(1);
    }
    while (!path.empty()) {
        const auto slash = path.find('/');
        visit(path.substr(0, slash));
        if (slash == std::string_view::npos) {
            break;
        }
        path.remove_prefix(slash + 1);
    }
}

std::size_t segment_count(std::string_view path) noexcept {
    std::size_t count = 0;
    for_each_segment(path, [&](std::string_view) { ++count; });
    return count;
}

// The most times one segment occurs in the path. A path of a few segments (every real one) is compared pair
// by pair on the stack; a longer one is sorted.
std::size_t most_repetitions(std::string_view path, std::size_t count) {
    constexpr std::size_t on_stack = 32;
    if (count <= on_stack) {
        std::array<std::string_view, on_stack> segments;
        std::size_t n = 0;
        for_each_segment(path, [&](std::string_view segment) { segments[n++] = segment; });
        std::size_t most = 0;
        for (std::size_t i = 0; i < n; ++i) {
            std::size_t same = 0;
            for (std::size_t j = i; j < n; ++j) {
                same += segments[j] == segments[i] ? 1 : 0;
            }
            most = std::max(most, same);
        }
        return most;
    }
    std::vector<std::string_view> segments;
    segments.reserve(count);
    for_each_segment(path, [&](std::string_view segment) { segments.push_back(segment); });
    std::sort(segments.begin(), segments.end());
    std::size_t most = 0;
    for (std::size_t i = 0; i < segments.size();) {
        std::size_t j = i;
        while (j < segments.size() && segments[j] == segments[i]) {
            ++j;
        }
        most = std::max(most, j - i);
        i = j;
    }
    return most;
}

// "a=1&&b=2&" has two parameters: empty pieces are no parameter at all.
template <class Visit>
void for_each_param(const url_parts& url, Visit&& visit) {
    if (!url.has_query) {
        return;
    }
    std::string_view query = url.query;
    for (;;) {
        const auto amp = query.find('&');
        if (const auto piece = query.substr(0, amp); !piece.empty()) {
            visit(piece);
        }
        if (amp == std::string_view::npos) {
            break;
        }
        query.remove_prefix(amp + 1);
    }
}

std::size_t query_param_count(const url_parts& url) noexcept {
    std::size_t count = 0;
    for_each_param(url, [&](std::string_view) { ++count; });
    return count;
}

std::optional<scope_verdict> trap_verdict(const url_parts& url, const trap_config& traps) {
    // The length first: it bounds the work of every other check.
    if (traps.max_url_length != 0 && url.text.size() > traps.max_url_length) {
        return scope_verdict::url_too_long;
    }
    if (traps.max_path_segments != 0 || traps.max_segment_repetitions != 0) {
        const std::size_t segments = segment_count(url.path);
        if (traps.max_path_segments != 0 && segments > traps.max_path_segments) {
            return scope_verdict::too_many_segments;
        }
        // No segment occurs more often than the path has segments.
        if (traps.max_segment_repetitions != 0 && segments > traps.max_segment_repetitions &&
            most_repetitions(url.path, segments) > traps.max_segment_repetitions) {
            return scope_verdict::repeated_segment;
        }
    }
    if (traps.max_query_params != 0 && query_param_count(url) > traps.max_query_params) {
        return scope_verdict::too_many_params;
    }
    return std::nullopt;
}

std::optional<scope_verdict> trap_verdict(urls::url_view url, const trap_config& traps) {
    return trap_verdict(parts_of(url), traps);
}

// RFC 3986's pchar without pct-encoded: what a path segment or a query takes raw.
constexpr bool is_raw_pchar(char c) noexcept {
    return detail::is_unreserved_or_sub_delim(c) || c == ':' || c == '@';
}

// The parts of a normalized URL's text when it has the plain shape "scheme://authority", then a path of
// '/' and pchars, then "?" and a query of pchars, '/' and '?', with every '%' followed by two hex digits:
// RFC 3986's grammar, which parse_uri checks too. Anything else (a fragment, a raw character the grammar
// refuses, no "//"), nullopt: the caller parses it. The scheme and the authority are left for the caller to
// check (url_parts::text.substr(0, origin_size) parses alone exactly when the whole text does).
struct plain_url {
    url_parts parts;
    std::size_t origin_size = 0; // "scheme://authority"
};

std::optional<plain_url> split_plain(std::string_view text) noexcept {
    const auto colon = text.find(':');
    if (colon == std::string_view::npos || text.substr(colon + 1, 2) != "//") {
        return std::nullopt;
    }
    const auto origin_end = std::min(text.find_first_of("/?#", colon + 3), text.size());
    plain_url out;
    out.origin_size = origin_end;
    out.parts.text = text;
    std::size_t query_begin = text.size();
    for (std::size_t i = origin_end; i < text.size(); ++i) {
        const char c = text[i];
        if (is_raw_pchar(c) || c == '/') {
            continue;
        }
        if (c == '%') {
            if (i + 2 >= text.size() || !detail::ascii::is_hex_digit(text[i + 1]) ||
                !detail::ascii::is_hex_digit(text[i + 2])) {
                return std::nullopt;
            }
            i += 2;
            continue;
        }
        if (c == '?') {
            if (query_begin == text.size()) {
                query_begin = i;
            }
            continue;
        }
        return std::nullopt;
    }
    out.parts.path = text.substr(origin_end, query_begin - origin_end);
    out.parts.has_query = query_begin < text.size();
    if (out.parts.has_query) {
        out.parts.query = text.substr(query_begin + 1);
    }
    return out;
}

// Remembers, per scheme+host+port+path, which ordering of each parameter set was admitted first. Hashes
// rather than strings keep it small; a 64-bit collision would at worst skip one URL.
class query_orderings {
public:
    bool is_permutation_of_admitted(const url_parts& url) {
        if (query_param_count(url) < 2) {
            return false;
        }
        std::vector<std::string_view> params;
        for_each_param(url, [&](std::string_view param) { params.push_back(param); });
        const std::string_view text = url.text;
        const std::string_view path_key = text.substr(0, text.find('?'));
        const std::uint64_t exact = std::hash<std::string_view>{}(url.query);
        std::sort(params.begin(), params.end());
        std::string sorted;
        for (const auto param : params) {
            sorted += param;
            sorted += '&';
        }
        const std::uint64_t unordered = std::hash<std::string>{}(sorted);
        auto& admitted = by_path_[std::string(path_key)];
        const auto [it, inserted] = admitted.try_emplace(unordered, exact);
        return !inserted && it->second != exact;
    }

private:
    std::unordered_map<std::string, std::unordered_map<std::uint64_t, std::uint64_t>> by_path_;
};

} // namespace

std::string_view to_string(scope_verdict v) noexcept {
    switch (v) {
    case scope_verdict::in_scope:
        return "in_scope";
    case scope_verdict::off_host:
        return "off_host";
    case scope_verdict::excluded:
        return "excluded";
    case scope_verdict::not_included:
        return "not_included";
    case scope_verdict::url_too_long:
        return "url_too_long";
    case scope_verdict::too_many_segments:
        return "too_many_segments";
    case scope_verdict::repeated_segment:
        return "repeated_segment";
    case scope_verdict::too_many_params:
        return "too_many_params";
    case scope_verdict::permuted_query:
        return "permuted_query";
    case scope_verdict::excluded_domain:
        return "excluded_domain";
    case scope_verdict::parent_directory:
        return "parent_directory";
    case scope_verdict::rejected_file:
        return "rejected_file";
    }
    return "unknown";
}

std::string pattern_error(std::string_view pattern) {
    try {
        boost::regex compiled(pattern.begin(), pattern.end(), boost::regex::perl);
        return {};
    } catch (const boost::regex_error& e) {
        std::string why = e.what();
        // Boost's sentence ends in a period; the message it goes into goes on.
        while (!why.empty() && (why.back() == '.' || why.back() == ' '))
            why.pop_back();
        return why;
    }
}

bool file_name_wanted(urls::url_view url, const std::vector<std::string>& accept,
                      const std::vector<std::string>& reject) {
    if (accept.empty() && reject.empty()) {
        return true;
    }
    const std::string name = file_name_of(url);
    if (name.empty() || has_html_suffix(name)) {
        return true;
    }
    return name_acceptable(name, accept, reject);
}

bool file_name_kept(urls::url_view url, const std::vector<std::string>& accept,
                    const std::vector<std::string>& reject) {
    if (accept.empty() && reject.empty()) {
        return true;
    }
    std::string name = file_name_of(url);
    if (name.empty()) {
        name = "index.html"; // what save_dir names a directory URL's page, as wget does
    }
    return name_acceptable(name, accept, reject);
}

std::string registrable_domain(std::string_view host) {
    // Percent-encoded bytes in a host are UTF-8 (an IDN written raw in the page): libpsl wants them decoded.
    std::string name = lowercase_without_trailing_dot(detail::percent_decode(host));
    if (name.empty() || is_ip_literal(name) || name.find('.') == std::string::npos) {
        return {};
    }
    const char* domain = psl_registrable_domain(public_suffix_list::instance().context(), name.c_str());
    return domain != nullptr ? std::string(domain) : std::string();
}

struct scope::impl {
    host_scope mode;
    std::vector<server> roots;
    // no_parent: each root's directory, beside its server in `roots`; empty when no_parent is off.
    std::vector<std::string> root_directories;
    std::vector<std::string> domains;
    std::vector<std::string> exclude_domains;
    std::vector<std::string> accept;
    std::vector<std::string> reject;
    std::vector<boost::regex> include;
    std::vector<boost::regex> exclude;
    trap_config traps;
    query_orderings orderings;
    // Seeds (add_seed): millions of them, so hashed by "port_key host" rather than scanned like the roots.
    std::unordered_set<std::string> seed_hosts;            // every seed's host
    std::unordered_set<std::string> seed_hosts_without_rd; // lenient: seeds without a registrable domain
    std::unordered_set<std::string> seed_domains;          // lenient: "port_key registrable domain"
    std::unordered_map<std::string, std::vector<std::string>> seed_directories; // no_parent, by seed host
    bool no_parent = false;
    // check_text(): the host rules' verdict (excluded_domain, off_host or in_scope) by "scheme://authority".
    // Bounded: emptied when full, and by add_seed, which can widen the host rules.
    struct text_hash {
        using is_transparent = void;
        std::size_t operator()(std::string_view text) const noexcept {
            return std::hash<std::string_view>{}(text);
        }
    };
    static constexpr std::size_t max_host_verdicts = 1024;
    std::unordered_map<std::string, scope_verdict, text_hash, std::equal_to<>> host_verdicts;

    /// Rules that read more of a URL than check_text() splits out of its text.
    bool needs_parsed_url() const noexcept { return no_parent || !accept.empty() || !reject.empty(); }

    /// The host rules: excluded domains, then a root's host, a seed's or one of the domains.
    scope_verdict host_verdict(const server& candidate) const {
        if (!exclude_domains.empty() && in_domains(candidate.host, exclude_domains)) {
            return scope_verdict::excluded_domain;
        }
        for (const auto& root : roots) {
            if (candidate.port_key == root.port_key && same_host(candidate, root, mode)) {
                return scope_verdict::in_scope;
            }
        }
        if (!seed_hosts.empty() && seed_host_matches(candidate)) {
            return scope_verdict::in_scope;
        }
        return !domains.empty() && in_domains(candidate.host, domains) ? scope_verdict::in_scope
                                                                       : scope_verdict::off_host;
    }

    /// What check() does after the file name rule, on a URL's parts.
    scope_verdict pattern_verdict(const url_parts& url) {
        // A pattern that cannot be evaluated fails closed: a URL we cannot prove wanted is not fetched.
        if (!exclude.empty() && search_any(exclude, url.text) != match_result::not_matched) {
            return scope_verdict::excluded;
        }
        if (!include.empty() && search_any(include, url.text) != match_result::matched) {
            return scope_verdict::not_included;
        }
        // Last, so that only URLs otherwise admitted claim an ordering.
        if (traps.skip_query_permutations && orderings.is_permutation_of_admitted(url)) {
            return scope_verdict::permuted_query;
        }
        return scope_verdict::in_scope;
    }

    static std::string key(const server& s, std::string_view host) {
        return s.port_key + ' ' + std::string(host);
    }

    /// The seed host that `candidate` matches under same_host_strict's rule (one leading "www." ignored on
    /// either side), in `hosts`; empty when none.
    std::optional<std::string> strict_seed(const server& candidate,
                                           const std::unordered_set<std::string>& hosts) const {
        if (hosts.empty())
            return std::nullopt;
        std::string exact = key(candidate, candidate.host);
        if (hosts.contains(exact))
            return exact;
        if (!candidate.host_is_ip) {
            if (std::string stripped = key(candidate, without_www(candidate.host)); hosts.contains(stripped))
                return stripped;
            if (std::string prefixed = key(candidate, "www." + candidate.host); hosts.contains(prefixed))
                return prefixed;
        }
        return std::nullopt;
    }

    bool seed_host_matches(const server& candidate) const {
        if (mode == host_scope::lenient && !candidate.registrable_domain.empty())
            return seed_domains.contains(key(candidate, candidate.registrable_domain)) ||
                   strict_seed(candidate, seed_hosts_without_rd).has_value();
        return strict_seed(candidate, seed_hosts).has_value();
    }

    /// no_parent for a seed's host: below one of the directories of the seeds on that host (every strict
    /// match of the candidate's host), or true when no seed is on it.
    std::optional<bool> below_a_seed_directory(const server& candidate, urls::url_view url) const {
        if (seed_directories.empty())
            return std::nullopt;
        bool on_a_seed_host = false;
        for (std::string host : {key(candidate, candidate.host), key(candidate, without_www(candidate.host)),
                                 key(candidate, "www." + candidate.host)}) {
            const auto it = seed_directories.find(host);
            if (it == seed_directories.end())
                continue;
            on_a_seed_host = true;
            for (const auto& directory : it->second)
                if (url.encoded_path().starts_with(directory))
                    return true;
        }
        return on_a_seed_host ? std::optional<bool>(false) : std::nullopt;
    }

    bool below_a_root_directory(const server& candidate, urls::url_view url) const {
        const auto seed_verdict = below_a_seed_directory(candidate, url);
        if (seed_verdict == true)
            return true;
        bool on_a_root_host = seed_verdict.has_value();
        for (std::size_t i = 0; i < roots.size(); ++i) {
            if (candidate.port_key != roots[i].port_key || !same_host_strict(candidate, roots[i])) {
                continue;
            }
            on_a_root_host = true;
            if (url.encoded_path().starts_with(root_directories[i])) {
                return true;
            }
        }
        // wget's rule too: the parent check only concerns the roots' own hosts.
        return !on_a_root_host;
    }
};

scope::scope(const std::vector<urls::url>& roots, const crawler_config& config)
    : impl_(std::make_unique<impl>()) {
    impl_->mode = config.scope;
    impl_->traps = config.traps;
    impl_->no_parent = config.no_parent;
    impl_->roots.reserve(roots.size());
    for (const auto& root : roots) {
        impl_->roots.emplace_back(root, config.scope);
        if (config.no_parent) {
            impl_->root_directories.emplace_back(directory_of(root.encoded_path()));
        }
    }
    for (const auto& domain : config.domains) {
        impl_->domains.push_back(domain_key(domain));
    }
    for (const auto& domain : config.exclude_domains) {
        impl_->exclude_domains.push_back(domain_key(domain));
    }
    impl_->accept = config.accept;
    impl_->reject = config.reject;
    impl_->include = compile_patterns("include", config.include);
    impl_->exclude = compile_patterns("exclude", config.exclude);
}

namespace {

crawler_config single_patterns(host_scope mode, std::string_view include, std::string_view exclude,
                               const trap_config& traps) {
    crawler_config config;
    config.scope = mode;
    config.traps = traps;
    if (!include.empty()) {
        config.include.emplace_back(include);
    }
    if (!exclude.empty()) {
        config.exclude.emplace_back(exclude);
    }
    return config;
}

} // namespace

scope::scope(const std::vector<urls::url>& roots, host_scope mode, std::string_view include,
             std::string_view exclude, const trap_config& traps)
    : scope(roots, single_patterns(mode, include, exclude, traps)) {}

scope::~scope() = default;
scope::scope(scope&&) noexcept = default;
scope& scope::operator=(scope&&) noexcept = default;

bool scope::host_in_scope(urls::url_view url) const {
    return impl_->host_verdict(server(url, impl_->mode)) == scope_verdict::in_scope;
}

void scope::add_seed(urls::url_view seed) {
    if (!impl_->host_verdicts.empty()) {
        impl_->host_verdicts.clear();
    }
    const server s(seed, impl_->mode);
    auto host = impl::key(s, s.host);
    if (impl_->mode == host_scope::lenient) {
        if (s.registrable_domain.empty())
            impl_->seed_hosts_without_rd.insert(host);
        else
            impl_->seed_domains.insert(impl::key(s, s.registrable_domain));
    }
    if (impl_->no_parent) {
        auto& directories = impl_->seed_directories[host];
        std::string directory(directory_of(seed.encoded_path()));
        // A directory below one already there adds nothing; the list stays short for a host's many seeds.
        const bool covered = std::any_of(directories.begin(), directories.end(),
                                         [&](const std::string& d) { return directory.starts_with(d); });
        if (!covered) {
            std::erase_if(directories, [&](const std::string& d) { return d.starts_with(directory); });
            directories.push_back(std::move(directory));
        }
    }
    impl_->seed_hosts.insert(std::move(host));
}

scope_verdict scope::check(urls::url_view url) const {
    const server candidate(url, impl_->mode);
    if (const auto verdict = impl_->host_verdict(candidate); verdict != scope_verdict::in_scope) {
        return verdict;
    }
    if ((!impl_->root_directories.empty() || !impl_->seed_directories.empty()) &&
        !impl_->below_a_root_directory(candidate, url)) {
        return scope_verdict::parent_directory;
    }
    const url_parts parts = parts_of(url);
    if (const auto trapped = trap_verdict(parts, impl_->traps)) {
        return *trapped;
    }
    if (!file_name_wanted(url, impl_->accept, impl_->reject)) {
        return scope_verdict::rejected_file;
    }
    return impl_->pattern_verdict(parts);
}

std::optional<scope_verdict> scope::check_text(std::string_view text) const {
    const auto plain = impl_->needs_parsed_url() ? std::nullopt : split_plain(text);
    if (!plain) {
        const auto parsed = urls::parse_uri(text);
        if (!parsed) {
            return std::nullopt;
        }
        return check(*parsed);
    }
    const std::string_view origin = text.substr(0, plain->origin_size);
    auto& memo = impl_->host_verdicts;
    scope_verdict host;
    if (const auto it = memo.find(origin); it != memo.end()) {
        host = it->second;
    } else {
        // The scheme and authority parse alone exactly when the whole URL does: the path and query were
        // checked against the grammar by split_plain().
        const auto parsed = urls::parse_uri(origin);
        if (!parsed) {
            return std::nullopt;
        }
        host = impl_->host_verdict(server(*parsed, impl_->mode));
        if (memo.size() >= impl::max_host_verdicts) {
            memo.clear();
        }
        memo.emplace(origin, host);
    }
    if (host != scope_verdict::in_scope) {
        return host;
    }
    // No no_parent and no file name rule on this path (needs_parsed_url).
    if (const auto trapped = trap_verdict(plain->parts, impl_->traps)) {
        return *trapped;
    }
    return impl_->pattern_verdict(plain->parts);
}

scope_verdict scope::check_requisite(urls::url_view url, urls::url_view page, bool span_hosts) const {
    const server candidate(url, host_scope::strict);
    if (!impl_->exclude_domains.empty() && in_domains(candidate.host, impl_->exclude_domains)) {
        return scope_verdict::excluded_domain;
    }
    if (!span_hosts) {
        const server of_page(page, host_scope::strict);
        if (candidate.port_key != of_page.port_key || !same_host_strict(candidate, of_page)) {
            return scope_verdict::off_host;
        }
    }
    if (const auto trapped = trap_verdict(url, impl_->traps)) {
        return *trapped;
    }
    if (!file_name_wanted(url, impl_->accept, impl_->reject)) {
        return scope_verdict::rejected_file;
    }
    if (!impl_->exclude.empty() && search_any(impl_->exclude, url.buffer()) != match_result::not_matched) {
        return scope_verdict::excluded;
    }
    return scope_verdict::in_scope;
}

} // namespace asiocrawl
