// Crawl scope: host rule (strict or public-suffix based), then exclude and include patterns.
#include <asiocrawl/scope.hpp>

#include "ascii.hpp"

#include <boost/regex.hpp>
#include <boost/url/ipv4_address.hpp>

#include <libpsl.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
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

// Percent-encoded bytes in a host are UTF-8 (an IDN written raw in the page): libpsl wants them decoded.
std::string percent_decoded(std::string_view s) {
    const auto hex = [](char c) -> int {
        if (c >= '0' && c <= '9') {
            return c - '0';
        }
        if (c >= 'a' && c <= 'f') {
            return c - 'a' + 10;
        }
        if (c >= 'A' && c <= 'F') {
            return c - 'A' + 10;
        }
        return -1;
    };
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
            out += static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
            i += 2;
        } else {
            out += s[i];
        }
    }
    return out;
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

std::optional<boost::regex> compile_pattern(std::string_view option_name, std::string_view pattern) {
    if (pattern.empty()) {
        return std::nullopt;
    }
    try {
        return boost::regex(pattern.begin(), pattern.end(), boost::regex::perl);
    } catch (const boost::regex_error& e) {
        throw std::invalid_argument("invalid " + std::string(option_name) + " pattern \"" +
                                    std::string(pattern) + "\": " + e.what());
    }
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

// Path segments as written (still encoded), without the empty one after a trailing slash: "/a/b/" is
// {"a", "b"}, "/" is {}. Empty segments inside the path ("/a//b") count: a trap can repeat them too.
std::vector<std::string_view> path_segments(std::string_view path) {
    std::vector<std::string_view> segments;
    if (path.starts_with('/')) {
        path.remove_prefix(1);
    }
    while (!path.empty()) {
        const auto slash = path.find('/');
        segments.push_back(path.substr(0, slash));
        if (slash == std::string_view::npos) {
            break;
        }
        path.remove_prefix(slash + 1);
    }
    return segments;
}

std::size_t most_repetitions(std::vector<std::string_view> segments) {
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
std::vector<std::string_view> query_params(urls::url_view url) {
    std::vector<std::string_view> params;
    if (!url.has_query()) {
        return params;
    }
    std::string_view query = url.encoded_query();
    for (;;) {
        const auto amp = query.find('&');
        if (const auto piece = query.substr(0, amp); !piece.empty()) {
            params.push_back(piece);
        }
        if (amp == std::string_view::npos) {
            break;
        }
        query.remove_prefix(amp + 1);
    }
    return params;
}

std::optional<scope_verdict> trap_verdict(urls::url_view url, const trap_config& traps) {
    // The length first: it bounds the work of every other check.
    if (traps.max_url_length != 0 && url.buffer().size() > traps.max_url_length) {
        return scope_verdict::url_too_long;
    }
    if (traps.max_path_segments != 0 || traps.max_segment_repetitions != 0) {
        const auto segments = path_segments(url.encoded_path());
        if (traps.max_path_segments != 0 && segments.size() > traps.max_path_segments) {
            return scope_verdict::too_many_segments;
        }
        if (traps.max_segment_repetitions != 0 &&
            most_repetitions(segments) > traps.max_segment_repetitions) {
            return scope_verdict::repeated_segment;
        }
    }
    if (traps.max_query_params != 0 && query_params(url).size() > traps.max_query_params) {
        return scope_verdict::too_many_params;
    }
    return std::nullopt;
}

// Remembers, per scheme+host+port+path, which ordering of each parameter set was admitted first. Hashes
// rather than strings keep it small; a 64-bit collision would at worst skip one URL.
class query_orderings {
public:
    bool is_permutation_of_admitted(urls::url_view url) {
        auto params = query_params(url);
        if (params.size() < 2) {
            return false;
        }
        const std::string_view text = url.buffer();
        const std::string_view path_key = text.substr(0, text.find('?'));
        const std::uint64_t exact = std::hash<std::string_view>{}(url.encoded_query());
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
    }
    return "unknown";
}

std::string registrable_domain(std::string_view host) {
    std::string name = lowercase_without_trailing_dot(percent_decoded(host));
    if (name.empty() || is_ip_literal(name) || name.find('.') == std::string::npos) {
        return {};
    }
    const char* domain = psl_registrable_domain(public_suffix_list::instance().context(), name.c_str());
    return domain != nullptr ? std::string(domain) : std::string();
}

struct scope::impl {
    host_scope mode;
    std::vector<server> roots;
    std::optional<boost::regex> include;
    std::optional<boost::regex> exclude;
    trap_config traps;
    query_orderings orderings;
};

scope::scope(const std::vector<urls::url>& roots, host_scope mode, std::string_view include,
             std::string_view exclude, const trap_config& traps)
    : impl_(std::make_unique<impl>()) {
    impl_->mode = mode;
    impl_->traps = traps;
    impl_->roots.reserve(roots.size());
    for (const auto& root : roots) {
        impl_->roots.emplace_back(root, mode);
    }
    impl_->include = compile_pattern("include", include);
    impl_->exclude = compile_pattern("exclude", exclude);
}

scope::~scope() = default;
scope::scope(scope&&) noexcept = default;
scope& scope::operator=(scope&&) noexcept = default;

bool scope::host_in_scope(urls::url_view url) const {
    const server candidate(url, impl_->mode);
    for (const auto& root : impl_->roots) {
        if (candidate.port_key == root.port_key && same_host(candidate, root, impl_->mode)) {
            return true;
        }
    }
    return false;
}

scope_verdict scope::check(urls::url_view url) const {
    if (!host_in_scope(url)) {
        return scope_verdict::off_host;
    }
    if (const auto trapped = trap_verdict(url, impl_->traps)) {
        return *trapped;
    }
    const std::string_view text = url.buffer();
    // A pattern that cannot be evaluated fails closed: a URL we cannot prove wanted is not fetched.
    if (impl_->exclude && search(*impl_->exclude, text) != match_result::not_matched) {
        return scope_verdict::excluded;
    }
    if (impl_->include && search(*impl_->include, text) != match_result::matched) {
        return scope_verdict::not_included;
    }
    // Last, so that only URLs otherwise admitted claim an ordering.
    if (impl_->traps.skip_query_permutations && impl_->orderings.is_permutation_of_admitted(url)) {
        return scope_verdict::permuted_query;
    }
    return scope_verdict::in_scope;
}

} // namespace asiocrawl
