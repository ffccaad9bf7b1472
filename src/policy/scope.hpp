// Which discovered URLs a crawl may fetch: host scope, domains, the roots' directories, file names,
// include/exclude patterns and trap limits. Sans-io.
#pragma once

#include <asiocrawl/config.hpp>

#include <boost/url/url.hpp>
#include <boost/url/url_view.hpp>

#include <memory>
#include <optional>
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
    excluded_domain,   ///< the host is one of crawler_config::exclude_domains or a subdomain of one
    parent_directory,  ///< crawler_config::no_parent: on a root's host, but not below the root's directory
    rejected_file,     ///< the file name fails crawler_config::accept / reject (wget -A / -R)
};

/// The lowercase name used in "skipped_<name>" counters: "in_scope", "off_host", "excluded", "not_included",
/// "url_too_long", "too_many_segments", "repeated_segment", "too_many_params", "permuted_query",
/// "excluded_domain", "parent_directory", "rejected_file".
std::string_view to_string(scope_verdict v) noexcept;

/// Decides scope for normalized URLs. Hosts are compared as strings after normalization; ports must match
/// too (a different port is a different server), where http and https on their default ports count as one.
/// Built once per crawl; check() is cheap. Not thread-safe: use it from the crawl's executor only.
class scope {
public:
    /// `roots` are normalized absolute URLs; every rule comes from `config` (scope, include, exclude,
    /// no_parent, domains, exclude_domains, accept, reject, traps). Throws std::invalid_argument naming the
    /// pattern when one of include/exclude is not a valid regular expression.
    scope(const std::vector<boost::urls::url>& roots, const crawler_config& config);
    /// One include and one exclude pattern ("" for none), and no other rule than `mode` and `traps`.
    scope(const std::vector<boost::urls::url>& roots, host_scope mode, std::string_view include,
          std::string_view exclude, const trap_config& traps = {});
    ~scope();
    scope(scope&&) noexcept;
    scope& operator=(scope&&) noexcept;

    /// Host rules only: not an excluded domain, and a root's host (under the host_scope rule) or one of the
    /// domains.
    bool host_in_scope(boost::urls::url_view url) const;

    /// In this order: excluded domains, the host rules, no_parent, the trap limits (before any pattern, so a
    /// hostile 1 MB URL never reaches the regex engine), accept/reject, then exclude, then include, on the
    /// normalized URL string. With
    /// trap_config::skip_query_permutations, an in-scope URL with two or more query parameters is remembered
    /// (a 64-bit hash of its sorted parameters per path), so a later call with a reordering of it answers
    /// permuted_query while the same URL keeps answering in_scope.
    scope_verdict check(boost::urls::url_view url) const;

    /// check() on the text of a normalized URL (what the link resolver gives), or nullopt when the text is
    /// not a URL (boost::urls::parse_uri fails). The same verdicts in the same order as check(url), but
    /// cheaper: a plain "scheme://authority/path?query" is not parsed whole. Its grammar is checked in one
    /// pass, its host rules are remembered per scheme and authority (a bounded memo, emptied by add_seed),
    /// and the trap limits, patterns and query permutations work on the text. Rules that need a parsed URL
    /// (no_parent, accept/reject) and texts of any other shape go through parse_uri and check().
    std::optional<scope_verdict> check_text(std::string_view text) const;

    /// The rule for a requisite of `page` (crawler_config::requisites), in this order: excluded domains,
    /// the host rule (the page's host and port, ignoring one leading "www.", unless `span_hosts`), the
    /// trap limits, accept/reject, exclude. The host rules of the roots, domains, no_parent, include and
    /// query permutations do not apply: a page in scope gets what it needs to display (wget -p).
    scope_verdict check_requisite(boost::urls::url_view url, boost::urls::url_view page,
                                  bool span_hosts) const;

    /// A seed (crawler_config::input_file) extends the scope as a root does: its host joins the roots'
    /// hosts, and with no_parent its directory joins theirs. Hashed, not scanned: millions of seeds keep
    /// check() as cheap as a handful of roots.
    void add_seed(boost::urls::url_view seed);

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

/// Why `pattern` is not a valid regular expression for include/exclude (Perl syntax, Boost.Regex), or ""
/// when it is one.
std::string pattern_error(std::string_view pattern);

/// wget's -A/-R rule on the file name of a normalized URL: true when the URL is wanted. The file name is the
/// last path segment, percent-decoded, without the query. A name with '*', '?' or '[' in an entry is
/// matched as a shell pattern (fnmatch), any other entry as a suffix, both case-sensitively. With `accept`
/// non-empty the name must match one of its entries; a name that matches a `reject` entry is unwanted.
/// Directory URLs (an empty name) and names ending in ".html" or ".htm" (any case) are always wanted,
/// as wget always fetches what it may need to traverse.
bool file_name_wanted(boost::urls::url_view url, const std::vector<std::string>& accept,
                      const std::vector<std::string>& reject);

/// The same rule without the exemption for HTML names and directories: whether the file would be kept
/// after the fetch (wget deletes the HTML pages it fetched only to traverse them; asiocrawl's save_dir
/// does not store them).
bool file_name_kept(boost::urls::url_view url, const std::vector<std::string>& accept,
                    const std::vector<std::string>& reject);

/// The registrable domain ("eTLD+1") of a host per the public suffix list: "news.bbc.co.uk" -> "bbc.co.uk".
/// Empty for IP addresses, single-label hosts and public suffixes themselves.
std::string registrable_domain(std::string_view host);

} // namespace asiocrawl
