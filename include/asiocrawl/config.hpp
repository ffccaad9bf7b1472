// Every option of a crawl, as plain aggregates with documented defaults and units.
#pragma once

#include <asiocrawl/sink.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace asiocrawl {

/// Which HTML parser reads pages for links.
enum class html_parser : std::uint8_t {
    /// The streaming extractor: one pass through the HTML tokenizer and the part of tree construction that
    /// decides where links are, no tree built; the same links as `gumbo` (docs/LINKS.md lists the deliberate
    /// differences). The default.
    fast,
    /// gumbo's full tree parse, behind the markup guard that keeps it linear (docs/HOSTILE.md).
    gumbo,
};

/// How a URL's host is compared with the roots' hosts.
enum class host_scope {
    /// The host equals a root's host, ignoring one leading "www." on either side. IP hosts match exactly.
    strict,
    /// The host shares a root's registrable domain (public suffix list via libpsl), so "news.bbc.co.uk" is in
    /// scope of "www.bbc.co.uk" but "itv.co.uk" is not. Hosts without a registrable domain (IP addresses,
    /// "localhost", public suffixes themselves) fall back to the strict comparison.
    lenient,
};

/// TLS for https URLs (OpenSSL through Beast's ssl_stream).
struct tls_config {
    /// Skip certificate and host-name verification. Loud on purpose: logged as a warning at start and marked
    /// in the report ("tls_insecure"). Default false.
    bool insecure = false;
    /// A PEM file of extra trusted CA certificates, used in addition to the system trust store (a private
    /// CA, a test CA). Empty: the system store only. Default empty.
    std::string ca_file;
    /// Most TLS handshakes in progress at once; more connections wait for a turn (within their
    /// connect_timeout), holding a socket and nothing else. A handshake holds OpenSSL's record and handshake
    /// buffers (tens of KiB) until it ends: thousands at once would cost more than all the connections that
    /// wait for answers. 0: no limit. Default 64.
    std::size_t max_handshakes = 64;
};

/// Name resolution (c-ares, on the crawler's executor).
struct dns_config {
    /// Name servers, each "ip", "ip:port" or "[ipv6]:port". Empty: the system's (/etc/resolv.conf).
    /// Default empty.
    std::vector<std::string> servers;
    /// Shortest time an answer is kept, whatever its TTL: a TTL of 0 would cost a query per connection.
    /// Default 30 s.
    std::chrono::milliseconds min_ttl{30'000};
    /// Longest time an answer is kept, whatever its TTL. Default 1 h.
    std::chrono::milliseconds max_ttl{3'600'000};
    /// How long "no such name" (NXDOMAIN, or a name without addresses) is remembered. Temporary failures
    /// (timeouts, SERVFAIL, refused) are not: a retry asks again. Default 30 s.
    std::chrono::milliseconds negative_ttl{30'000};
};

/// HTTP cookies (RFC 6265), kept in memory for the crawl.
struct cookie_config {
    /// Store cookies servers set and send them back, as wget does. Default true.
    bool enabled = true;
    /// A cookies.txt file (Netscape format, as written by wget, curl and browsers' exporters) read before
    /// the crawl. Empty: none. Default empty.
    std::string load_file;
    /// Where the jar is written in the same format when the crawl ends (session cookies included, with
    /// expiry 0). Empty: not written. Default empty.
    std::string save_file;
};

/// HTTP Strict Transport Security (RFC 6797): hosts that said, over https with a verified certificate, to be
/// reached over https only. An http URL of such a host (or of a subdomain, with includeSubDomains) is
/// answered without the network by a `307 Internal Redirect` to its https form (port 80, or none, becomes
/// 443; another explicit port is kept), which the crawl then follows as any redirect (docs/OUTPUTS.md).
struct hsts_config {
    /// Remember Strict-Transport-Security and upgrade http URLs (false: --no-hsts). Default true.
    bool enabled = true;
    /// A known-hosts file in wget2's format ("host port includeSubDomains created max-age" lines), read
    /// before the crawl when it exists and written when the crawl ends (--hsts-file). Without it, a crawl
    /// with a state dir keeps the hosts in the state dir's `hsts.txt`. Empty: none. Default empty.
    std::string file;
};

/// Whether https origins are fetched over HTTP/2 (fetch_config::http2).
enum class http2_mode : std::uint8_t {
    automatic, ///< offered in TLS (ALPN "h2,http/1.1"); the server's choice decides (default)
    off,       ///< HTTP/1.1 only (ALPN "http/1.1")
    only,      ///< HTTP/2 only: https offers ALPN "h2" alone; http URLs use h2c by prior knowledge
};

/// How pages are fetched. One fetcher serves the whole crawl.
struct fetch_config {
    /// Time allowed for DNS resolution plus the TCP connection (and TLS handshake) to one endpoint.
    /// Default 10 s.
    std::chrono::milliseconds connect_timeout{10'000};
    /// Time allowed to send a request and read the whole response (head and body). Default 30 s.
    std::chrono::milliseconds request_timeout{30'000};
    /// Largest response body accepted, in bytes, counted both as received and after decoding (gzip, deflate,
    /// br, zstd); a larger one becomes an error::body_too_large record. Default 16 MiB.
    std::uint64_t max_body_bytes = 16u << 20;
    /// Largest response head (status line plus header fields), in bytes; the trailer section of a chunked
    /// body has the same limit. A larger one is an error::header_too_large record. Default 64 KiB.
    std::uint32_t max_header_bytes = 64u << 10;
    /// An idle keep-alive connection older than this is closed instead of reused: servers close idle
    /// connections on their own schedule, and a reused dead connection costs a round trip. A server's
    /// `Keep-Alive: timeout=N` shortens it for that connection. Default 15 s.
    std::chrono::milliseconds idle_timeout{15'000};
    /// The User-Agent request header. Empty: "asiocrawl/<version> (+<contact_url>)". Its product token (the
    /// part before the first '/') is what robots.txt groups are matched on. Default empty.
    std::string user_agent;
    /// Where site owners learn who crawls them; goes into the default User-Agent. Set it to your own page.
    /// Default "https://asiocrawl.invalid/bot" (a placeholder).
    std::string contact_url = "https://asiocrawl.invalid/bot";
    /// Send "Accept-Encoding: gzip, deflate, br, zstd" and decode bodies while they stream in. Default true.
    bool compression = true;
    /// Refuse to connect to loopback, private (RFC 1918, fc00::/7), link-local (169.254/16, fe80::/10, which
    /// holds cloud metadata services), unspecified and multicast addresses. Checked on the resolved address,
    /// so a DNS name cannot bypass it; host_overrides are checked too. error::forbidden_address. Default
    /// false (the CLI's loopback demo needs it off); the container image turns it on.
    bool refuse_private_addresses = false;
    /// TLS settings for https URLs.
    tls_config tls;
    /// Host name -> IP address used instead of DNS, like curl's --resolve (staging sites, tests). The URL,
    /// the Host header, TLS SNI and scope still use the name. Such hosts are reached directly, never through
    /// a proxy. Default empty.
    std::map<std::string, std::string> host_overrides;
    /// Name resolution.
    dns_config dns;
    /// Proxy for http and https URLs: "http://[user:password@]host[:port]" (port 80 when absent; an
    /// "https://" proxy is not supported). https URLs go through a CONNECT tunnel and TLS is verified end to
    /// end against the URL's host; http URLs are sent to the proxy in absolute form. Credentials go in
    /// Proxy-Authorization (Basic) and are never logged. Empty: direct. Default empty.
    std::string proxy;
    /// Proxy for http URLs only, instead of `proxy`. Default empty.
    std::string http_proxy;
    /// Proxy for https URLs only, instead of `proxy`. Default empty.
    std::string https_proxy;
    /// Hosts reached directly despite a proxy, as in the no_proxy variable: "example.com" matches that host
    /// and its subdomains (".example.com" the same), an IP address matches itself, "*" matches everything.
    /// Default empty.
    std::vector<std::string> no_proxy;
    /// Cookies.
    cookie_config cookies;
    /// Extra request header fields, each "Name: value", sent with every request. Host, Content-Length,
    /// Authorization, Proxy-Authorization and hop-by-hop fields (Connection, Keep-Alive, TE, Trailer,
    /// Transfer-Encoding, Upgrade, Proxy-Connection) are refused; a User-Agent, Accept or Cookie given here
    /// replaces ours. Default empty.
    std::vector<std::string> headers;
    /// Most bytes per second read from the network, all connections of the crawl together (wget
    /// --limit-rate). A token bucket in front of every read: a connection that would go over waits before it
    /// reads on. The waits do not count toward request_timeout. 0: no limit. Default 0.
    std::uint64_t limit_rate = 0;
    /// Basic credentials per origin: "https://example.com" (scheme://host[:port]) -> "user:password". Sent
    /// with every request to that origin and to no other (redirects elsewhere do not carry them), never
    /// logged or recorded; an archived raw request (WARC) holds the Authorization header as sent. A root URL
    /// with userinfo ("https://user:pw@host/") adds its origin here. Default empty.
    std::map<std::string, std::string> credentials;
    /// HSTS.
    hsts_config hsts;
    /// HTTP/2 (docs/FETCHING.md): automatic offers h2 to https servers and uses it when chosen, one
    /// connection per origin carrying up to max_per_host streams; off speaks HTTP/1.1 only; only refuses a
    /// server that does not choose h2 and speaks cleartext h2 (prior knowledge) to http URLs. Default
    /// automatic.
    http2_mode http2 = http2_mode::automatic;
};

/// robots.txt (RFC 9309).
struct robots_config {
    /// Fetch /robots.txt once per origin before anything else from it and obey it. false: --ignore-robots.
    /// Default true.
    bool obey = true;
    /// Largest robots.txt read, in bytes; the rest is ignored (RFC 9309 asks for at least 500 KiB).
    /// Default 500 KiB.
    std::uint64_t max_bytes = 500u << 10;
    /// Redirects followed when fetching robots.txt (RFC 9309: at least 5). Default 5.
    int max_redirects = 5;
    /// How long an origin whose robots.txt answered 5xx or could not be reached stays fully disallowed
    /// before robots.txt is fetched again (RFC 9309 2.3.1.4). Default 60 s.
    std::chrono::milliseconds unavailable_retry{60'000};
    /// Largest Crawl-delay honored; a larger one is clamped to this (a hostile robots.txt must not stall the
    /// crawl for a day). Default 30 s.
    std::chrono::milliseconds max_crawl_delay{30'000};
    /// Also leave out the links of <a>/<area> elements whose rel holds "nofollow", counted as
    /// skipped_rel_nofollow (wget ignores rel=nofollow; Google treats it as a hint). A page's own nofollow
    /// (<meta name=robots>, X-Robots-Tag) is obeyed whenever `obey` is. Default false.
    bool obey_rel_nofollow = false;
};

/// Adaptive politeness, off by default: each host's delay follows its measured response time (a request's
/// start to the end of its answer) toward `target_concurrency` requests in flight to it: the new delay is the
/// mean of the previous delay and latency / target_concurrency, and never less than the latter (Scrapy's
/// AutoThrottle rule). An error answer (not 2xx or 3xx) or a network failure never lowers the delay. The
/// delay never falls below politeness.delay or the host's robots.txt Crawl-delay, and never exceeds
/// `max_delay`.
struct autothrottle_config {
    /// Turns it on. Default false.
    bool enabled = false;
    /// Each host's delay before its first answer is measured. Default 1 s.
    std::chrono::milliseconds start_delay{1'000};
    /// The largest delay it sets (a floor from delay or Crawl-delay above it still wins). Default 60 s.
    std::chrono::milliseconds max_delay{60'000};
    /// Requests in flight to one host that the delay aims at, on average. Above 0. Default 1.
    double target_concurrency = 1.0;
};

/// Per-host politeness. A host is the URL's host name (all ports and schemes of one host share it).
struct politeness_config {
    /// Most requests in flight to one host at once. At least 1. Default 2.
    std::size_t max_per_host = 2;
    /// Least time between the starts of two requests to one host. The effective delay is the larger of this
    /// and the host's robots.txt Crawl-delay. Default 0.
    std::chrono::milliseconds delay{0};
    /// Draw each wait between two request starts to one host from [0.5, 1.5] × the host's delay (wget
    /// --random-wait), so the requests do not come at a fixed beat. No effect while the delay is 0.
    /// Default false.
    bool random_wait = false;
    /// Adaptive politeness (Scrapy's AutoThrottle): see autothrottle_config.
    autothrottle_config autothrottle;
};

/// Settings for the hosts or URLs one rule matches (crawler_config::hosts, docs/CONTROL.md), overriding the
/// global ones; an unset field keeps the global setting. The first rule that matches a URL is its rule.
struct host_rule {
    /// "example.com" (that host only), "*.example.com" (the host and every subdomain), or a URL prefix
    /// "https://example.com/docs/" (URLs that start with it, after normalization).
    std::string match;
    /// The host's delay between request starts (politeness.delay). A host pattern only: a host is scheduled
    /// as one.
    std::optional<std::chrono::milliseconds> delay;
    /// The host's requests in flight (politeness.max_per_host), at least 1. A host pattern only.
    std::optional<std::size_t> max_per_host;
    /// At most this many URLs admitted under the rule (as max_pages counts them), the rule's own count.
    std::optional<std::size_t> max_pages;
    /// Fetch and obey robots.txt (robots.obey). A host pattern only: robots.txt governs whole origins.
    std::optional<bool> obey_robots;
    /// Request header fields "Name: value" added to the rule's URLs, after fetch.headers.
    std::vector<std::string> headers;
};

/// Retries of network failures and of the statuses in `statuses` (429 and 503 by default).
struct retry_config {
    /// Wait before the second attempt; each further attempt waits `multiplier` times longer. Default 500 ms.
    std::chrono::milliseconds initial_backoff{500};
    /// Growth factor of the backoff. At least 1. Default 2.
    double multiplier = 2.0;
    /// Random spread: a wait is drawn uniformly from [w × (1 − jitter), w]. 0 to 1. Default 0.5.
    double jitter = 0.5;
    /// Cap on one wait, whether computed or asked for by Retry-After. Default 60 s.
    std::chrono::milliseconds max_backoff{60'000};
    /// HTTP statuses answered again after a backoff, like network failures; after max_tries attempts the
    /// URL gets an error::retry_limit record. 500, 502 and 504 are common additions. Each 400 to 599.
    /// Default 429, 503.
    std::vector<int> statuses{429, 503};
};

/// Crawler-trap defenses, applied to discovered URLs (never to roots). Each rejection is counted in the
/// report as skipped_<reason>. 0 disables a limit.
struct trap_config {
    /// Longest URL, in bytes of its normalized form. Default 2048.
    std::size_t max_url_length = 2048;
    /// Most path segments. Default 32.
    std::size_t max_path_segments = 32;
    /// Most occurrences of one segment in a path (/a/b/a/b/a/b/...). Default 3.
    std::size_t max_segment_repetitions = 3;
    /// Most query parameters. Default 32.
    std::size_t max_query_params = 32;
    /// Most distinct links taken from one HTML page, the first in document order; a repeat of a kept link (up
    /// to its fragment) costs nothing, and the links to the others are counted as
    /// skipped_links_over_page_cap. A page of a million links must not become a million queued URLs. Default
    /// 10,000 (Heritrix keeps 6,000 outlinks a page, Nutch 100).
    std::size_t max_links_per_page = 10'000;
    /// Skip a URL whose query holds the same parameters as an already admitted URL of the same scheme, host,
    /// port and path, in another order (?a=1&b=2 after ?b=2&a=1): the same page under another name, which
    /// dedup on the exact URL cannot see. Counted as skipped_permuted_query. Default true.
    bool skip_query_permutations = true;
};

/// How pages are read for links.
struct html_config {
    /// The parser: fast (the streaming extractor, no tree) or gumbo (a full tree parse behind the markup
    /// guard). Both find the same links (docs/LINKS.md). Default fast.
    html_parser parser = html_parser::fast;
};

/// Page requisites (wget -p): what a crawled page needs to display, fetched so that an archive of it replays
/// (docs/LINKS.md, "Page requisites in the crawl").
struct requisites_config {
    /// Also fetch the requisites of each crawled HTML page: images (src, srcset, video poster), scripts,
    /// stylesheets, icons, preloads, media, objects, embeds, url() and @import in inline styles, and url()
    /// and @import in the stylesheets so fetched. Each is fetched once; its body is not read for links
    /// (a stylesheet's for its references only). Their scope rule: exclude_domains, traps, accept/reject,
    /// exclude and robots.txt apply; include, no_parent, domains and max_depth do not; the host must be the
    /// page's (and its port) unless span_hosts. Default false.
    bool enabled = false;
    /// Requisites may come from any host (wget -p -H), not only from the page's own; exclude_domains still
    /// apply. Needs `enabled`. Default false.
    bool span_hosts = false;
};

/// TLS to a shared crawl's Redis (a rediss:// state.redis URL). The server's certificate and host name are
/// verified against the system trust store and ca_file (an IP-address host against the certificate's IP
/// addresses). Setting any of these with a redis:// URL is a configuration error.
struct redis_tls_config {
    /// A PEM file of CA certificates trusted for Redis, in addition to the system trust store (the private CA
    /// that signed redis-server's tls-cert-file). Empty: the system store only. Default empty.
    std::string ca_file;
    /// A PEM client certificate (chain) presented to Redis, whose tls-auth-clients is on by default. Empty:
    /// none. Default empty.
    std::string cert_file;
    /// The PEM private key of cert_file. Empty: read from cert_file (one PEM holding both). Needs cert_file.
    /// Default empty.
    std::string key_file;
    /// Skip verifying Redis's certificate and host name (the traffic is still encrypted, but anyone in the
    /// middle can read it). Logged as a warning once. Default false.
    bool insecure = false;
};

/// When continuous mode fetches a URL again (docs/RECRAWL.md, src/policy/revisit_schedule.hpp): each URL's
/// interval shrinks when a visit finds it changed and grows when it does not, within [min, max].
struct revisit_config {
    /// The shortest interval between two visits of a URL. Default 1 hour; at least 1 second.
    std::chrono::milliseconds min = std::chrono::hours(1);
    /// The longest; also the interval of a gone page. Default 30 days (720h); at least min.
    std::chrono::milliseconds max = std::chrono::hours(24 * 30);
    /// The interval after a URL's first fetch (a sitemap's <changefreq> gives it instead when there is one).
    /// Default 1 day; clamped into [min, max].
    std::chrono::milliseconds initial = std::chrono::hours(24);
    /// The interval is multiplied by this when a visit finds the page unchanged. Default 1.25; in (1, 2].
    double grow = 1.25;
    /// And by this when it finds it changed. Default 0.8; in [0.5, 1).
    double shrink = 0.8;
};

/// Where a crawl keeps its state so that it survives a kill (docs/STATE.md).
struct state_config {
    /// Directory of the crawl's durable state (an embedded RocksDB database). Set: every admitted URL, every
    /// finished one and the counters are committed there as the crawl goes, waiting URLs live on disk rather
    /// than in memory, and the same crawl started again with the same directory resumes where it was, even
    /// after kill -9. Empty: the crawl lives in memory only. Default empty.
    std::string dir;
    /// fsync at every commit, so that a power loss or kernel crash loses nothing either (a killed process
    /// loses nothing without it: commits reach the kernel before a URL counts as done). Default false.
    bool fsync = false;
    /// Waiting URLs of one host held in memory; the others are read back from disk in order as the host
    /// drains. At least 1; raised to 2 x min(politeness.max_per_host, max_tasks) when smaller, so that
    /// a host never waits on its refills. Default 64.
    std::size_t window = 64;
    /// Start over: delete the previous crawl's state in `dir` first (a directory that holds something else
    /// is refused, never emptied). Default false.
    bool reset = false;
    /// Re-crawl (docs/RECRAWL.md): when the crawl in `dir` (or in `redis`) has finished, start a new
    /// generation over it: every URL it knows is fetched again with a conditional request (If-None-Match,
    /// If-Modified-Since from its fetch history), links of changed pages are followed, and each record says
    /// how the URL changed (record::change). A generation that did not finish is resumed, so the same command
    /// resumes a killed re-crawl. Needs `dir` or `redis`. Default false.
    bool recrawl = false;
    /// A re-crawl without a state: a previous run's records (JSON Lines, with their etag, last_modified and
    /// payload_digest) or a CDXJ index, whose URLs are fetched again with conditional requests as `recrawl`
    /// does. Excludes `dir` and `redis`. Default empty.
    std::string recrawl_from;
    /// A shared crawl (docs/DEPLOY.md): redis://[[user]:password@]host[:port][/db], or rediss:// for Redis
    /// over TLS (see redis_tls). Set: this process is
    /// one worker of a crawl whose seen set, frontier, leases and counters live in that Redis, and every
    /// worker runs the same command. The password may be given apart instead (redis_password). Excludes
    /// `dir`. Default empty.
    std::string redis;
    /// The password for `redis` when its URL carries none (the CLI takes it from the
    /// ASIOCRAWL_REDIS_PASSWORD environment variable; the library reads no environment). Never logged.
    /// Default empty: no password unless the URL has one.
    std::string redis_password;
    /// The shared crawl's name in Redis. Empty: a hash of the crawl's definition (roots, scope, ...), so
    /// that instances started with the same command join the same crawl. Default empty.
    std::string crawl_id;
    /// This worker's name in the shared crawl (its leases and counters carry it): unique among the workers
    /// running at once. Empty: a random name ("instance-" and 16 hex digits). The CLI fills it from
    /// --instance, JOB_COMPLETION_INDEX, or else the host name and process id. Default empty.
    std::string instance;
    /// How long a leased URL belongs to the worker that took it; a worker renews its leases every third of
    /// it, and the URLs of a worker that stops renewing (killed) go to another after it. Default 30 s.
    std::chrono::milliseconds lease{30000};
    /// How long a worker of a shared crawl waits for an unreachable Redis before it gives up (async_run
    /// completes with error::redis_unreachable, the CLI's exit status 1; its leases go back to the crawl
    /// when they expire, and its outputs are complete for what it committed). Default 5 minutes.
    std::chrono::milliseconds redis_timeout{300000};
    /// TLS settings for a rediss:// `redis` URL.
    redis_tls_config redis_tls;
};

/// One crawl: where it starts, how far it goes, how hard it works.
struct crawler_config {
    /// Start URLs (at least one, unless input_file is set). A root without a scheme gets "http://"; a root
    /// that is not an http(s) URL
    /// ("not a url", "mailto:a@b.c") is a configuration error (validate() names it). Roots are always
    /// fetched: the scope rules, include/exclude patterns, depth and page limits apply to what is discovered
    /// from them.
    std::vector<std::string> roots;
    /// Worker coroutines, and so the largest number of requests in flight at once. At least 1. Default 100.
    std::size_t max_tasks = 100;
    /// Redirects followed in one chain; the next one ends the chain with error::redirect_limit. At least 0.
    /// Default 10.
    int max_redirect = 10;
    /// Attempts per URL, in total, when the network fails (refused, reset, timeout, DNS) or the server
    /// answers a status of retry.statuses (429 or 503 by default); then the URL gets a failure record. Other
    /// HTTP statuses are answers and are not retried. Waits between attempts follow `retry`. At least 1.
    /// Default 4.
    int max_tries = 4;
    /// Host matching rule, see host_scope. Default strict.
    host_scope scope = host_scope::strict;
    /// Regular expressions (Perl syntax, Boost.Regex) searched in each discovered URL (normalized form); a
    /// URL in which any of them is found stays out. Empty: nothing excluded. Default empty.
    std::vector<std::string> exclude;
    /// Regular expressions searched in each discovered URL; when any are given, only URLs in which at least
    /// one is found are crawled. Empty: everything in scope is included. Default empty.
    std::vector<std::string> include;
    /// Stay below each root's directory, like wget --no-parent: a discovered URL on a root's host (and port)
    /// must have a path that starts with the root's directory, the path up to its last '/' ("/a/b/" for
    /// "http://h/a/b/", "/a/" for "http://h/a/b.html" and for "http://h/a/b"). URLs on hosts that no root
    /// has (admitted by `scope: lenient` or `domains`) are not restricted. Default false.
    bool no_parent = false;
    /// More hosts to crawl: a discovered URL whose host is one of these domains or a subdomain of one
    /// ("example.org" admits "example.org" and "www.example.org") is in scope, besides the roots' hosts
    /// (wget -H -D). Lowercase names, no scheme. Default empty.
    std::vector<std::string> domains;
    /// Hosts never crawled: a discovered URL whose host is one of these domains or a subdomain of one is out
    /// of scope, whatever the other rules say (wget --exclude-domains). Default empty.
    std::vector<std::string> exclude_domains;
    /// wget -A: file-name suffixes ("pdf", ".jpg") or shell patterns ("*report*.pdf", "img[0-9].png")
    /// that a discovered URL's file name (the last path segment, percent-decoded, without the query) must
    /// match, case-sensitively. Directory URLs (ending in '/') and names ending in ".html" or ".htm" are
    /// exempt: they are fetched anyway so that the crawl can go through them. Empty: every name. Default
    /// empty.
    std::vector<std::string> accept;
    /// wget -R: the same forms; a discovered URL whose file name matches one is not fetched (same
    /// exemptions as `accept`). Default empty.
    std::vector<std::string> reject;
    /// Media types fetched (wget's -A, by Content-Type rather than file name): "image/png", "image/*" or
    /// "*/*", case-insensitive. Decided on the response head: a 2xx answer of another type is not read (the
    /// connection is closed) and its record carries the status and error::type_rejected, counted as
    /// `type_rejected`, not as a failure. HTML (text/html, application/xhtml+xml), answers without a
    /// Content-Type, and robots.txt and sitemaps are always read, so the crawl can go through pages. Empty:
    /// every type. Default empty.
    std::vector<std::string> accept_types;
    /// Seeds read from this file, one URL a line, besides `roots` (either may be empty, not both). With
    /// input_fd set, the seeds are read from that descriptor instead and input_file only names them (in
    /// messages and in the crawl's definition; the CLI names standard input "-"). Blank lines and lines
    /// starting with '#' are skipped; a line that is not an http(s) URL is logged with its line number,
    /// counted as skipped_invalid_seed and skipped. The file is read a chunk at a time on a thread of its
    /// own, as the frontier runs low, never whole; seeds extend the scope as roots do (their hosts join the
    /// roots' hosts as they are read). With a state dir, the byte offset of the seeds admitted so far is
    /// kept, and a resumed crawl reads on from there. Default empty.
    std::string input_file;
    /// An already-open descriptor to read the seeds from instead of opening input_file (which must name
    /// them): a pipe or a terminal is read as it comes, never closed by the crawler (the CLI passes
    /// standard input for `-i -`). -1: open input_file. Default -1.
    int input_fd = -1;
    /// Largest link depth crawled: roots are depth 0, a link found on a depth-d page is depth d+1. A redirect
    /// keeps the depth of the URL that redirected. Unset: unlimited. Default unset.
    std::optional<int> max_depth;
    /// Largest number of distinct URLs admitted to the queue (roots, links, redirect targets and page
    /// requisites; not the robots.txt and sitemap files read on the way); further URLs are counted as
    /// skipped (skipped_max_pages). Unset: unlimited. Default unset.
    std::optional<std::size_t> max_pages;
    /// Stop gracefully (as on SIGTERM: fetches in flight finish, what waits is the report's todo) once this
    /// many body bytes (decoded) have been fetched, over every run of a resumed crawl (wget -Q). 0: no
    /// limit. Default 0.
    std::uint64_t quota = 0;
    /// Stop gracefully once this run has lasted this long (wall clock from its start; a resumed crawl gets
    /// it anew). 0: no limit. Default 0.
    std::chrono::milliseconds max_time{0};
    /// Keep every record in the final report (the classic report lists them all). Turn off for very large
    /// crawls that consume records through a sink only; counters are kept either way. Default true.
    bool keep_records = true;
    /// Give each record its payload_digest (a SHA-1 over every body: 13-17% of a plain crawl's cycles).
    /// Turn off when nothing reads it from the records; a crawl that keeps a fetch history (a state
    /// directory, a shared crawl, a re-crawl) computes it anyway, for the history compares it. Archives
    /// (WARC) compute their own digests either way. Default true.
    bool payload_digests = true;
    /// Also queue the URLs listed in sitemaps: Sitemap lines of robots.txt, else /sitemap.xml of each root's
    /// origin; sitemap index files and gzip-compressed sitemaps are followed. The URLs pass the same filters
    /// as links. A guessed /sitemap.xml that answers 404 or 410 is no broken link: no record, counted as
    /// sitemaps_absent. Default false.
    bool sitemaps = false;
    /// Threads that parse HTML and extract links. 0: parse inline on the crawler's executor, the classic
    /// single-threaded design. Crawl state stays on the executor either way. Default 0.
    std::size_t parse_threads = 0;
    /// How pages are fetched.
    fetch_config fetch;
    /// Waits between attempts.
    retry_config retry;
    /// robots.txt handling.
    robots_config robots;
    /// Per-host limits.
    politeness_config politeness;
    /// Crawler-trap defenses.
    trap_config traps;
    /// HTML parsing.
    html_config html;
    /// Page requisites.
    requisites_config requisites;
    /// Durable state.
    state_config state;
    /// Continuous mode (docs/RECRAWL.md): the crawl does not end when every URL was fetched; each is fetched
    /// again (conditionally) when `revisit` says it is due, new links are followed as they appear, and the
    /// crawl runs until it is stopped (stop(), a signal, max_time). With state.dir the schedule survives a
    /// stop and a kill. Default false.
    bool continuous = false;
    /// The revisit schedule of continuous mode.
    revisit_config revisit;
    /// Per-host rules (docs/CONTROL.md): the first that matches a URL overrides the global settings for it.
    std::vector<host_rule> hosts;
};

/// One problem with a config: the field it concerns and what is wrong with it.
struct config_problem {
    /// The field's path, as config files and the CLI's config keys write it: "max_tasks", "roots" (for
    /// roots[1]), "fetch.proxy", "state.redis_tls.key_file".
    std::string key;
    /// The whole sentence, naming the field (with its index or key where it has one) and saying what is
    /// wrong: "max_tasks must be at least 1", "roots[1] must be an http or https URL (...)", "fetch.proxy:
    /// only http:// proxies". A value that may hold a password is never repeated. The CLI prints it.
    std::string message;

    /// A problem whose message starts with the field's path, ended by a space, '[' or ':'.
    static config_problem about(std::string message);

    friend bool operator==(const config_problem&, const config_problem&) = default;
};

/// Checks a config without touching the network. Returns one problem per mistake, in the order of the
/// fields; empty when the config is usable. crawler's constructor throws std::invalid_argument with these
/// messages when it is not.
std::vector<config_problem> validate(const crawler_config& config);

} // namespace asiocrawl
