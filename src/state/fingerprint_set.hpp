// The crawl's seen set as 64-bit fingerprints: the dedup check every discovered URL passes, at a fixed
// 8 bytes a slot whatever the URL's length.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace asiocrawl::detail {

/// The fingerprint of a normalized URL: XXH3-64 with the crawl's seed. Two distinct URLs share one with
/// probability 2^-64, so among n URLs some pair does with probability about n^2 / 2^65: 2.7e-8 at a million
/// URLs, 2.7e-4 at a hundred million (docs/STATE.md). The cost of a collision is one URL never fetched.
/// The seed is drawn once per crawl and kept in its state, so a resumed crawl hashes as before.
std::uint64_t url_fingerprint(std::string_view url, std::uint64_t seed) noexcept;

/// An open-addressing set of fingerprints (linear probing). It grows by half when 80% full, so between
/// growths it is 53% to 80% full: 10 to 15 bytes a URL. The seen set never removes; a re-crawl's set of
/// known URLs not reached yet does (erase), and never shrinks its table.
class fingerprint_set {
public:
    /// True when `fp` was not in the set (and now is).
    bool insert(std::uint64_t fp);
    bool contains(std::uint64_t fp) const noexcept;
    /// True when `fp` was in the set (and now is not). Backward-shift deletion: no tombstones, so lookups
    /// stay as short as if `fp` had never been inserted.
    bool erase(std::uint64_t fp) noexcept;
    std::size_t size() const noexcept { return size_; }
    /// Heap bytes held by the table.
    std::size_t memory_bytes() const noexcept { return slots_.capacity() * sizeof(std::uint64_t); }
    /// Makes room for `n` fingerprints at once (a resumed crawl knows how many it will load).
    void reserve(std::size_t n);

private:
    // 0 marks an empty slot, so the fingerprint 0 is stored as 1: one more collision pair in 2^64.
    static std::uint64_t stored(std::uint64_t fp) noexcept { return fp == 0 ? 1 : fp; }
    // Maps a fingerprint onto [0, size) without a power-of-two size (Lemire's multiply-shift), after a
    // mix: multiply-shift keeps order, and a resumed crawl reads its fingerprints back sorted, which would
    // pile them all into the first slots of the growing table.
    std::size_t home(std::uint64_t fp) const noexcept {
        fp ^= fp >> 31;
        fp *= 0x7fb5d329728ea185ull;
        fp ^= fp >> 27;
        __extension__ using wide = unsigned __int128; // g++ and clang++: the high half of a 64x64 product
        return static_cast<std::size_t>((static_cast<wide>(fp) * slots_.size()) >> 64);
    }
    void rehash(std::size_t slots);
    std::size_t after(std::size_t i) const noexcept { return i + 1 == slots_.size() ? 0 : i + 1; }

    std::vector<std::uint64_t> slots_;
    std::size_t size_ = 0;
};

/// A bounded memory of fingerprints: direct-mapped on `slots` (a power of two) 8-byte slots, allocated at the
/// first insert; a newcomer takes its slot's place, so it forgets. contains() is true only for a fingerprint
/// inserted and not yet displaced (or, with probability 2^-64 a lookup, one that equals it).
class fingerprint_memo {
public:
    explicit fingerprint_memo(std::size_t slots)
        : mask_(slots - 1) {}
    bool contains(std::uint64_t fp) const noexcept {
        return !slots_.empty() && slots_[slot(fp)] == stored(fp);
    }
    void insert(std::uint64_t fp) {
        if (slots_.empty())
            slots_.resize(mask_ + 1);
        slots_[slot(fp)] = stored(fp);
    }
    std::size_t memory_bytes() const noexcept { return slots_.capacity() * sizeof(std::uint64_t); }

private:
    static std::uint64_t stored(std::uint64_t fp) noexcept { return fp == 0 ? 1 : fp; }
    std::size_t slot(std::uint64_t fp) const noexcept { return static_cast<std::size_t>(fp >> 7) & mask_; }

    std::size_t mask_;
    std::vector<std::uint64_t> slots_;
};

} // namespace asiocrawl::detail
