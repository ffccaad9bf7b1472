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
    // Crawler-trap defenses (trap_config); never applied to roots, which do not pass through check().
    url_too_long,      ///< the normalized URL is longer than trap_config::max_url_length
    too_many_segments, ///< the path has more than trap_config::max_path_segments segments
    repeated_segment,  ///< one path segment occurs more than trap_config::max_segment_repetitions times
    too_many_params,   ///< the query has more than trap_config::max_query_params parameters
    permuted_query,    ///< the parameters of an already admitted URL of the same path, in another order
};

/// The lowercase name used in "skipped_<name>" counters: "in_scope", "off_host", "excluded", "not_included",
/// "url_too_long", "too_many_segments", "repeated_segment", "too_many_params", "permuted_query".
std::string_view to_string(scope_verdict v) noexcept;

/// Decides scope for normalized URLs. Hosts are compared as strings after normalization; ports must match
/// too (a different port is a different server), where http and https on their default ports count as one.
/// Built once per crawl; check() is cheap. Not thread-safe: use it from the crawl's executor only.
class scope {
public:
    /// `roots` are normalized absolute URLs. Throws std::invalid_argument naming the pattern when `include`
    /// or `exclude` is not a valid regular expression. `traps` limits what check() admits (a 0 limit is off).
    scope(const std::vector<boost::urls::url>& roots, host_scope mode, std::string_view include,
          std::string_view exclude, const trap_config& traps = {});
    ~scope();
    scope(scope&&) noexcept;
    scope& operator=(scope&&) noexcept;

    /// Host rule only.
    bool host_in_scope(boost::urls::url_view url) const;

    /// Host rule, then the trap limits (before any pattern, so a hostile 1 MB URL never reaches the regex
    /// engine), then exclude, then include, on the normalized URL string. With
    /// trap_config::skip_query_permutations, an in-scope URL with two or more query parameters is remembered
    /// (a 64-bit hash of its sorted parameters per path), so a later call with a reordering of it answers
    /// permuted_query while the same URL keeps answering in_scope.
    scope_verdict check(boost::urls::url_view url) const;

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

/// The registrable domain ("eTLD+1") of a host per the public suffix list: "news.bbc.co.uk" -> "bbc.co.uk".
/// Empty for IP addresses, single-label hosts and public suffixes themselves.
std::string registrable_domain(std::string_view host);

} // namespace asiocrawl
