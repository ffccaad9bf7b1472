// The set of URLs a crawl has already admitted: the dedup check every discovered link passes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace asiocrawl::detail {

/// An exact set of normalized URL strings, packed for large crawls: a URL costs its own bytes minus its
/// origin (scheme://host:port, stored once per origin and referred to by number) plus about 13 bytes, instead
/// of the ~100 bytes of overhead of a std::unordered_set<std::string> node. Nothing is ever removed.
///
/// Layout: the URL tails live back to back in large byte blocks, each entry as varint(origin id)
/// varint(length) bytes. An open-addressing table of 64-bit slots (linear probing, load <= 3/4) holds, per
/// entry, its offset in the blocks (40 bits) and 24 bits of its hash, so most failed probes never touch the
/// blocks.
class seen_set {
public:
    /// True when `url` was not in the set (and now is).
    bool insert(std::string_view url) {
        const auto [origin, tail] = split(url);
        const std::uint32_t origin_id = intern(origin);
        const std::uint64_t hash = hash_of(origin_id, tail);
        if ((size_ + 1) * 4 > slots_.size() * 3)
            grow();
        std::size_t i = hash & (slots_.size() - 1);
        for (; slots_[i] != 0; i = (i + 1) & (slots_.size() - 1)) {
            if (matches(slots_[i], hash, origin_id, tail))
                return false;
        }
        slots_[i] = make_slot(append(origin_id, tail), hash);
        ++size_;
        return true;
    }

    bool contains(std::string_view url) const {
        if (slots_.empty())
            return false;
        const auto [origin, tail] = split(url);
        const auto known = origins_.find(origin);
        if (known == origins_.end())
            return false;
        const std::uint64_t hash = hash_of(known->second, tail);
        for (std::size_t i = hash & (slots_.size() - 1); slots_[i] != 0; i = (i + 1) & (slots_.size() - 1)) {
            if (matches(slots_[i], hash, known->second, tail))
                return true;
        }
        return false;
    }

    std::size_t size() const noexcept { return size_; }

    /// Heap bytes held: blocks, table and the origin dictionary.
    std::size_t memory_bytes() const noexcept {
        std::size_t bytes = blocks_.size() * block_bytes + slots_.size() * sizeof(std::uint64_t);
        for (const auto& [origin, id] : origins_)
            bytes += origin.capacity() + 1 + 4 * sizeof(void*); // node, hash, bucket, id
        return bytes;
    }

private:
    static constexpr std::size_t block_bytes = 1 << 20;
    static constexpr int offset_bits = 40;
    static constexpr std::uint64_t offset_mask = (std::uint64_t{1} << offset_bits) - 1;

    struct parts {
        std::string_view origin;
        std::string_view tail;
    };

    // "scheme://authority" and the rest. Any string works: without "://" the origin is empty.
    static parts split(std::string_view url) noexcept {
        const auto scheme_end = url.find("://");
        if (scheme_end == std::string_view::npos)
            return {{}, url};
        const auto tail_start = url.find_first_of("/?#", scheme_end + 3);
        if (tail_start == std::string_view::npos)
            return {url, {}};
        return {url.substr(0, tail_start), url.substr(tail_start)};
    }

    std::uint32_t intern(std::string_view origin) {
        if (auto known = origins_.find(origin); known != origins_.end())
            return known->second;
        const auto id = static_cast<std::uint32_t>(origins_.size());
        origins_.emplace(std::string(origin), id);
        return id;
    }

    struct string_hash {
        using is_transparent = void;
        std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
    };

    // FNV-1a, then a murmur finalizer so the low bits (the table index) and high bits (the tag) both mix.
    static std::uint64_t hash_of(std::uint32_t origin_id, std::string_view tail) noexcept {
        std::uint64_t h = 0xcbf29ce484222325ULL ^ origin_id;
        for (const unsigned char c : tail) {
            h ^= c;
            h *= 0x100000001b3ULL;
        }
        h ^= h >> 33;
        h *= 0xff51afd7ed558ccdULL;
        h ^= h >> 33;
        h *= 0xc4ceb9fe1a85ec53ULL;
        h ^= h >> 33;
        return h;
    }

    // Offset + 1 so that 0 means an empty slot.
    static std::uint64_t make_slot(std::uint64_t offset, std::uint64_t hash) noexcept {
        return ((hash >> offset_bits) << offset_bits) | (offset + 1);
    }

    static std::size_t put_varint(unsigned char* out, std::uint64_t v) noexcept {
        std::size_t n = 0;
        while (v >= 0x80) {
            out[n++] = static_cast<unsigned char>(v | 0x80);
            v >>= 7;
        }
        out[n++] = static_cast<unsigned char>(v);
        return n;
    }

    static std::uint64_t get_varint(const unsigned char*& in) noexcept {
        std::uint64_t v = 0;
        for (int shift = 0;; shift += 7) {
            const unsigned char byte = *in++;
            v |= std::uint64_t{byte & 0x7fu} << shift;
            if (byte < 0x80)
                return v;
        }
    }

    bool matches(std::uint64_t slot, std::uint64_t hash, std::uint32_t origin_id,
                 std::string_view tail) const {
        if ((slot >> offset_bits) != (hash >> offset_bits))
            return false;
        const std::uint64_t offset = (slot & offset_mask) - 1;
        const unsigned char* p = blocks_[offset / block_bytes].get() + offset % block_bytes;
        if (get_varint(p) != origin_id)
            return false;
        const std::uint64_t length = get_varint(p);
        return length == tail.size() && (tail.empty() || std::memcmp(p, tail.data(), tail.size()) == 0);
    }

    // Entries never straddle blocks; a URL longer than a block gets a block of its own size class (rare).
    std::uint64_t append(std::uint32_t origin_id, std::string_view tail) {
        const std::size_t need = tail.size() + 20;
        if (blocks_.empty() || used_ + need > block_bytes) {
            if (need > block_bytes)
                throw std::length_error("seen_set: URL longer than 1 MiB");
            blocks_.push_back(std::make_unique<unsigned char[]>(block_bytes));
            used_ = 0;
        }
        unsigned char* start = blocks_.back().get() + used_;
        unsigned char* p = start;
        p += put_varint(p, origin_id);
        p += put_varint(p, tail.size());
        if (!tail.empty()) // an empty view may hold a null pointer, which memcpy must not get
            std::memcpy(p, tail.data(), tail.size());
        p += tail.size();
        const std::uint64_t offset = (blocks_.size() - 1) * block_bytes + used_;
        used_ += static_cast<std::size_t>(p - start);
        return offset;
    }

    void grow() {
        std::vector<std::uint64_t> bigger(slots_.empty() ? 1024 : slots_.size() * 2, 0);
        for (const std::uint64_t slot : slots_) {
            if (slot == 0)
                continue;
            const std::uint64_t offset = (slot & offset_mask) - 1;
            const unsigned char* p = blocks_[offset / block_bytes].get() + offset % block_bytes;
            const auto origin_id = static_cast<std::uint32_t>(get_varint(p));
            const std::uint64_t length = get_varint(p);
            const std::uint64_t hash =
                hash_of(origin_id, std::string_view(reinterpret_cast<const char*>(p), length));
            std::size_t i = hash & (bigger.size() - 1);
            while (bigger[i] != 0)
                i = (i + 1) & (bigger.size() - 1);
            bigger[i] = slot;
        }
        slots_ = std::move(bigger);
    }

    std::vector<std::unique_ptr<unsigned char[]>> blocks_;
    std::size_t used_ = 0;
    std::vector<std::uint64_t> slots_;
    std::size_t size_ = 0;
    std::unordered_map<std::string, std::uint32_t, string_hash, std::equal_to<>> origins_;
};

} // namespace asiocrawl::detail
