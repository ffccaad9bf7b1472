#include "state/fingerprint_set.hpp"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace asiocrawl::detail {

std::uint64_t url_fingerprint(std::string_view url, std::uint64_t seed) noexcept {
    return XXH3_64bits_withSeed(url.data(), url.size(), seed);
}

bool fingerprint_set::insert(std::uint64_t fp) {
    // 4/5 full at most: a failed probe then reads about 13 slots, two cache lines.
    if ((size_ + 1) * 5 > slots_.size() * 4)
        rehash(slots_.empty() ? 1024 : slots_.size() + slots_.size() / 2);
    fp = stored(fp);
    for (std::size_t i = home(fp);; i = (i + 1 == slots_.size()) ? 0 : i + 1) {
        if (slots_[i] == fp)
            return false;
        if (slots_[i] == 0) {
            slots_[i] = fp;
            ++size_;
            return true;
        }
    }
}

bool fingerprint_set::contains(std::uint64_t fp) const noexcept {
    if (slots_.empty())
        return false;
    fp = stored(fp);
    for (std::size_t i = home(fp);; i = (i + 1 == slots_.size()) ? 0 : i + 1) {
        if (slots_[i] == fp)
            return true;
        if (slots_[i] == 0)
            return false;
    }
}

bool fingerprint_set::erase(std::uint64_t fp) noexcept {
    if (slots_.empty())
        return false;
    fp = stored(fp);
    std::size_t hole = home(fp);
    for (; slots_[hole] != fp; hole = after(hole))
        if (slots_[hole] == 0)
            return false;
    // Every later fingerprint of the same run whose home is not in (hole, j] moves back into the hole, so
    // that a lookup for it, which starts at its home, still finds it before an empty slot.
    for (std::size_t j = after(hole); slots_[j] != 0; j = after(j)) {
        const std::size_t h = home(slots_[j]);
        const bool movable = hole <= j ? (h <= hole || h > j) : (h <= hole && h > j);
        if (movable) {
            slots_[hole] = slots_[j];
            hole = j;
        }
    }
    slots_[hole] = 0;
    --size_;
    return true;
}

void fingerprint_set::reserve(std::size_t n) {
    const std::size_t needed = n + n / 4 + 1;
    if (needed > slots_.size())
        rehash(needed);
}

void fingerprint_set::rehash(std::size_t slots) {
    std::vector<std::uint64_t> old;
    old.swap(slots_);
    slots_.assign(slots, 0);
    for (const std::uint64_t fp : old) {
        if (fp == 0)
            continue;
        std::size_t i = home(fp);
        while (slots_[i] != 0)
            i = (i + 1 == slots_.size()) ? 0 : i + 1;
        slots_[i] = fp;
    }
}

} // namespace asiocrawl::detail
