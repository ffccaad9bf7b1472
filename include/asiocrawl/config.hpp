// Every option of a crawl, as plain aggregates with documented defaults and units.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace asiocrawl {

/// How a URL's host is compared with the roots' hosts.
enum class host_scope {
    /// The host equals a root's host, ignoring one leading "www." on either side. IP hosts match exactly.
    strict,
    /// The host shares a root's registrable domain (public suffix list via libpsl), so "news.bbc.co.uk" is in
    /// scope of "www.bbc.co.uk" but "itv.co.uk" is not. Hosts without a registrable domain (IP addresses,
    /// "localhost", public suffixes themselves) fall back to the strict comparison.
    lenient,
};

/// How pages are fetched. One fetcher serves the whole crawl.
struct fetch_config {
    /// Time allowed for DNS resolution plus the TCP connection to one endpoint. Default 10 s.
    std::chrono::milliseconds connect_timeout{10'000};
    /// Time allowed to send a request and read the whole response (head and body). Default 30 s.
    std::chrono::milliseconds request_timeout{30'000};
    /// Largest response body accepted, in bytes; a larger one becomes an error::body_too_large record.
    /// Default 16 MiB.
    std::uint64_t max_body_bytes = 16u << 20;
    /// Largest response head (status line plus header fields), in bytes. Default 64 KiB.
    std::uint32_t max_header_bytes = 64u << 10;
    /// An idle keep-alive connection older than this is closed instead of reused: servers close idle
    /// connections on their own schedule, and a reused dead connection costs a round trip. Default 15 s.
    std::chrono::milliseconds idle_timeout{15'000};
    /// The User-Agent request header. Default (empty): "asiocrawl/<version>".
    std::string user_agent;
    /// Host name -> IP address used instead of DNS, like curl's --resolve (staging sites, tests). The URL,
    /// the Host header and scope still use the name. Default empty.
    std::map<std::string, std::string> host_overrides;
};

/// One crawl: where it starts, how far it goes, how hard it works.
struct crawler_config {
    /// Start URLs (at least one). A root without a scheme gets "http://". Roots are always fetched: the
    /// include/exclude patterns, depth and page limits apply to what is discovered from them.
    std::vector<std::string> roots;
    /// Worker coroutines, and so the largest number of requests in flight at once. At least 1. Default 100.
    std::size_t max_tasks = 100;
    /// Redirects followed in one chain; the next one ends the chain with error::redirect_limit. At least 0.
    /// Default 10.
    int max_redirect = 10;
    /// Attempts per URL, in total, when the network fails (refused, reset, timeout, DNS); then the URL gets a
    /// failure record. HTTP error statuses are answers, not failures, and are not retried. At least 1.
    /// Default 4.
    int max_tries = 4;
    /// Host matching rule, see host_scope. Default strict.
    host_scope scope = host_scope::strict;
    /// Regular expression (Perl syntax, Boost.Regex) searched in each discovered URL (normalized form); a
    /// match keeps the URL out. Empty: nothing excluded. Default empty.
    std::string exclude;
    /// Regular expression searched in each discovered URL; when set, only matching URLs are crawled. Empty:
    /// everything in scope is included. Default empty.
    std::string include;
    /// Largest link depth crawled: roots are depth 0, a link found on a depth-d page is depth d+1. A redirect
    /// keeps the depth of the URL that redirected. Unset: unlimited. Default unset.
    std::optional<int> max_depth;
    /// Largest number of distinct URLs admitted to the queue (roots, links and redirect targets); further
    /// URLs are counted as skipped. Unset: unlimited. Default unset.
    std::optional<std::size_t> max_pages;
    /// Keep every record in the final report (the classic report lists them all). Turn off for very large
    /// crawls that consume records through a sink only; counters are kept either way. Default true.
    bool keep_records = true;
    /// How pages are fetched.
    fetch_config fetch;
};

/// Checks a config without touching the network. Returns one message per problem, each naming the field
/// ("max_tasks must be at least 1"); empty when the config is usable.
std::vector<std::string> validate(const crawler_config& config);

} // namespace asiocrawl
