// Which discovered URLs a crawl may fetch: host scope, include/exclude patterns. Sans-io.
#pragma once

#include <asiocrawl/config.hpp>

#include <boost/url/url.hpp>
#include <boost/url/url_view.hpp>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace asiocrawl {

enum class scope_verdict {
    in_scope,
    off_host,     ///< host (or port) not covered by any root under the host_scope rule
    excluded,     ///< matched the exclude pattern
    not_included, ///< an include pattern is set and did not match
};

/// The lowercase name used in "skipped_<name>" counters: "in_scope", "off_host", "excluded", "not_included".
std::string_view to_string(scope_verdict v) noexcept;

/// Decides scope for normalized URLs. Hosts are compared as strings after normalization; ports must match
/// too (a different port is a different server), where http and https on their default ports count as one.
/// Built once per crawl; check() is const and cheap.
class scope {
public:
    /// `roots` are normalized absolute URLs. Throws std::invalid_argument naming the pattern when `include`
    /// or `exclude` is not a valid regular expression.
    scope(const std::vector<boost::urls::url>& roots, host_scope mode, std::string_view include,
          std::string_view exclude);
    ~scope();
    scope(scope&&) noexcept;
    scope& operator=(scope&&) noexcept;

    /// Host rule only.
    bool host_in_scope(boost::urls::url_view url) const;

    /// Host rule, then exclude, then include, on the normalized URL string.
    scope_verdict check(boost::urls::url_view url) const;

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

/// The registrable domain ("eTLD+1") of a host per the public suffix list: "news.bbc.co.uk" -> "bbc.co.uk".
/// Empty for IP addresses, single-label hosts and public suffixes themselves.
std::string registrable_domain(std::string_view host);

} // namespace asiocrawl
