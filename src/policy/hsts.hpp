// HTTP Strict Transport Security (RFC 6797), sans-io: the Strict-Transport-Security header's parser, and the
// known-hosts store that says whether an http URL must be upgraded to https before it is fetched. The
// transport that consults it is src/http/hsts_transport.hpp; docs/OUTPUTS.md says how an upgrade is recorded.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <istream>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace asiocrawl::detail {

/// What a valid Strict-Transport-Security field value says.
struct sts_directives {
    std::uint64_t max_age = 0; ///< seconds; values past 2^64 - 1 saturate
    bool include_subdomains = false;
};

/// Parses a Strict-Transport-Security field value as RFC 6797 section 6.1 defines it: directives separated by
/// ';' (empty ones allowed), names case-insensitive, values a token or a quoted-string. max-age is required
/// and is digits (quoted or not); includeSubDomains takes no value; unknown directives are ignored; a
/// directive given twice, or anything that does not follow the grammar, makes the whole field invalid
/// (nullopt), and the UA then ignores it (6.1).
std::optional<sts_directives> parse_strict_transport_security(std::string_view value);

/// True for an IP-literal host ("127.0.0.1", "[::1]", "::1"): never a Known HSTS Host (RFC 6797 8.1.1).
bool is_ip_literal_host(std::string_view host);

/// Known HSTS Hosts with their expiry. One thread (the crawler's executor).
class hsts_store {
public:
    using clock = std::chrono::system_clock;

    /// Most hosts kept by default: past it, a new host's header is not remembered (counted in refused()). A
    /// crawl of more hosts than this that all send the header upgrades the first ones only.
    static constexpr std::size_t default_max_hosts = 100'000;

    explicit hsts_store(std::size_t max_hosts = default_max_hosts)
        : max_hosts_(max_hosts) {}

    /// The first Strict-Transport-Security field of a response from https://`host`:`port` whose certificate
    /// verified (the caller checks that: RFC 6797 8.1 forbids taking it from an insecure connection). Valid
    /// directives note the host, or update it (max-age=0 forgets it, 6.1.1); an invalid value, or an
    /// IP-literal host, changes nothing. `host` as in a normalized URL (lowercase, punycode). Returns true
    /// when the value was valid and the host not an IP literal.
    bool observe(std::string_view host, std::uint16_t port, std::string_view field_value,
                 clock::time_point now);

    /// True when `host` is a Known HSTS Host at `now`: noted itself (a congruent match), or a superdomain of
    /// it is, with includeSubDomains (8.2). Expired entries do not count.
    bool known(std::string_view host, clock::time_point now) const;

    /// The https URL to fetch instead of `url` when it is an http URL of a known host: the scheme becomes
    /// https, port 80 (written or implied) becomes https's default, another explicit port is kept, as
    /// browsers do (8.3). nullopt when `url` stays as it is.
    std::optional<std::string> upgrade(std::string_view url, clock::time_point now) const;

    /// Reads a known-hosts file in wget2's format: '#' comment lines, blank lines, and lines of
    /// "host port includeSubDomains(0|1) created(Unix time) max-age(seconds)" separated by spaces or tabs
    /// (GNU Wget 1.x writes the same fields). Expired entries and IP-literal hosts are skipped; a malformed
    /// line is skipped with a problem naming its number. Returns the problems (empty when all went well).
    std::vector<std::string> load(std::istream& in, clock::time_point now);

    /// Writes the unexpired entries in wget2's format (a header of '#' lines, then one line per host,
    /// sorted).
    void save(std::ostream& out, clock::time_point now) const;

    std::size_t size() const noexcept { return entries_.size(); }
    /// Counts the changes to which hosts are known and how (a host noted or forgotten, its includeSubDomains
    /// or port changed), not a known host's max-age refreshed: what is worth saving at once.
    std::uint64_t changes() const noexcept { return changes_; }
    /// Headers not remembered because the store was full.
    std::size_t refused() const noexcept { return refused_; }

private:
    struct entry {
        std::uint16_t port = 443;
        bool include_subdomains = false;
        std::int64_t created = 0; ///< Unix time
        std::uint64_t max_age = 0;
        bool expired(clock::time_point now) const;
    };
    void note(std::string host, entry e);

    std::size_t max_hosts_;
    std::unordered_map<std::string, entry> entries_;
    std::size_t refused_ = 0;
    std::uint64_t changes_ = 0;
};

} // namespace asiocrawl::detail
