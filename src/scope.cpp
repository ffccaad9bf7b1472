// Crawl scope: host rule (strict or public-suffix based), then exclude and include patterns.
#include <asiocrawl/scope.hpp>

#include "ascii.hpp"

#include <boost/regex.hpp>
#include <boost/url/ipv4_address.hpp>

#include <libpsl.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

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
};

scope::scope(const std::vector<urls::url>& roots, host_scope mode, std::string_view include,
             std::string_view exclude)
    : impl_(std::make_unique<impl>()) {
    impl_->mode = mode;
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
    const std::string_view text = url.buffer();
    // A pattern that cannot be evaluated fails closed: a URL we cannot prove wanted is not fetched.
    if (impl_->exclude && search(*impl_->exclude, text) != match_result::not_matched) {
        return scope_verdict::excluded;
    }
    if (impl_->include && search(*impl_->include, text) != match_result::matched) {
        return scope_verdict::not_included;
    }
    return scope_verdict::in_scope;
}

} // namespace asiocrawl
