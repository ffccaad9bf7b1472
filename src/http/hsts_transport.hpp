// HSTS (RFC 6797) in front of another transport: an http URL of a Known HSTS Host is answered without the
// network by a `307 Internal Redirect` to its https form (the crawl then follows it as any redirect, so
// scope, robots.txt, dedup and max_redirects apply to the https URL as usual), and the Strict-Transport-
// Security field of an https answer whose certificate verified updates the known hosts. The hosts are read
// from and written to files in wget2's format (src/policy/hsts.hpp). docs/OUTPUTS.md, "HSTS".
#pragma once

#include "http/transport.hpp"
#include "policy/hsts.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace asiocrawl::detail {

/// Where known hosts come from and go to.
struct hsts_files {
    /// Read before the crawl, in order, when they exist (a missing file is an empty one).
    std::vector<std::string> load;
    /// Written when the crawl ends (finish()), each whole (a temporary file renamed over it).
    std::vector<std::string> save;
};

class hsts_transport final : public transport {
public:
    /// Throws std::invalid_argument when a file to load exists but cannot be read. `trust_headers` is false
    /// when certificates are not verified (tls.insecure): nothing is learned then, known hosts still upgrade.
    hsts_transport(std::unique_ptr<transport> inner, hsts_files files, bool trust_headers);

    boost::asio::awaitable<void> fetch_into(std::string_view url, fetch_options options,
                                            std::unique_ptr<fetch_result>& out) override;
    void close_idle() override { inner_->close_idle(); }
    /// The inner transport's finish(), then the known hosts are saved; also says which lines of a loaded
    /// file were skipped.
    std::vector<std::string> finish() override;
    const fetcher_stats& stats() const noexcept override { return inner_->stats(); }
    const dns_stats& dns() const noexcept override { return inner_->dns(); }
    std::size_t cookies() const noexcept override { return inner_->cookies(); }

    /// Writes the known hosts to `path` (a temporary file renamed over it); what went wrong, if anything.
    std::optional<std::string> save(const std::string& path) const;
    /// The known hosts as save() writes them, for write_known_hosts() on another thread (a file write
    /// must not block the crawler's executor).
    std::string known_hosts_text() const;
    /// Writes `text` to `path` through a temporary file renamed over it; what went wrong, if anything.
    static std::optional<std::string> write_known_hosts(const std::string& path, const std::string& text);

    const hsts_store& store() const noexcept { return store_; }

private:
    std::unique_ptr<transport> inner_;
    hsts_files files_;
    bool trust_headers_;
    hsts_store store_;
    std::vector<std::string> load_problems_;
};

} // namespace asiocrawl::detail
