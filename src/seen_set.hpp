// The set of URLs a crawl has already admitted: the dedup check every discovered link passes.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_set>

namespace asiocrawl::detail {

/// Exact set of normalized URL strings. Interface kept small so the representation can change (a compact
/// fingerprint table) without touching the crawler; memory_bytes() is what the seen-set benchmark reports.
class seen_set {
public:
    /// True when `url` was not in the set (and now is).
    bool insert(std::string_view url) { return urls_.emplace(url).second; }
    bool contains(std::string_view url) const { return urls_.contains(std::string(url)); }
    std::size_t size() const noexcept { return urls_.size(); }

    /// Approximate heap bytes held: nodes, buckets and the string buffers that do not fit inline.
    std::size_t memory_bytes() const noexcept {
        std::size_t bytes = urls_.bucket_count() * sizeof(void*);
        for (const auto& url : urls_) {
            bytes += sizeof(void*) + sizeof(std::size_t) + sizeof(std::string); // node: next, hash, value
            if (url.capacity() > 15)
                bytes += url.capacity() + 1;
        }
        return bytes;
    }

private:
    std::unordered_set<std::string> urls_;
};

} // namespace asiocrawl::detail
