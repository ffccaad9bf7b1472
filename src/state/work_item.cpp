#include "state/work_item.hpp"

#include "state/varint.hpp"

namespace asiocrawl::detail {

std::string_view requisite_name(const work_item& item) noexcept {
    return item.kind == item_kind::requisite ? requisite_kind_name(item.requisite) : std::string_view();
}

std::string encode(const work_item& item) {
    std::string out;
    out.reserve(16 + item.url.size() + item.referrer.size());
    // The flags: the kind in bits 0-3, from_sitemap in bit 4, a requisite's kind in bits 5-8, guessed in
    // bit 9.
    std::uint64_t flags = static_cast<std::uint64_t>(item.kind) | (item.from_sitemap ? 0x10u : 0u) |
                          (item.guessed ? 0x200u : 0u);
    if (item.kind == item_kind::requisite)
        flags |= static_cast<std::uint64_t>(item.requisite) << 5;
    put_varint(out, flags);
    put_varint(out, zigzag(item.redirects_left));
    put_varint(out, zigzag(item.depth));
    put_varint(out, zigzag(item.tries));
    put_varint(out, zigzag(item.first_started_us));
    put_string(out, item.url);
    put_string(out, item.referrer);
    return out;
}

std::optional<work_item> decode_work_item(std::string_view bytes) {
    varint_reader in{bytes};
    work_item item;
    const auto flags = in.varint();
    const auto redirects = in.varint();
    const auto depth = in.varint();
    const auto tries = in.varint();
    const auto started = in.varint();
    auto url = in.string();
    auto referrer = in.string();
    if (!flags || !redirects || !depth || !tries || !started || !url || !referrer || !in.at_end())
        return std::nullopt;
    const auto kind = *flags & 0x0f;
    const auto requisite = (*flags >> 5) & 0x0f;
    if (kind > static_cast<std::uint64_t>(item_kind::requisite) || (*flags >> 10) != 0 ||
        requisite > static_cast<std::uint64_t>(requisite_kind::style) ||
        (requisite != 0 && kind != static_cast<std::uint64_t>(item_kind::requisite)))
        return std::nullopt;
    item.kind = static_cast<item_kind>(kind);
    item.requisite = static_cast<requisite_kind>(requisite);
    item.from_sitemap = (*flags & 0x10) != 0;
    item.guessed = (*flags & 0x200) != 0;
    item.redirects_left = static_cast<int>(unzigzag(*redirects));
    item.depth = static_cast<int>(unzigzag(*depth));
    item.tries = static_cast<int>(unzigzag(*tries));
    item.first_started_us = unzigzag(*started);
    item.url = std::move(*url);
    item.referrer = std::move(*referrer);
    return item;
}

} // namespace asiocrawl::detail
