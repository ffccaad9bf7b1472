// What a crawl remembers of each URL it fetched, for the crawl that comes back (docs/RECRAWL.md): the
// validators a conditional request sends, the payload digest that tells a changed page from an unchanged
// one, and the capture a WARC revisit record refers to.
#pragma once

#include "state/work_item.hpp"

#include "policy/revisit_schedule.hpp"

#include <asiocrawl/record.hpp>
#include <asiocrawl/sink.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace asiocrawl::detail {

/// One URL's last fetch. Kept in the state directory under its URL (key `F`), and read from a previous run's
/// records or CDXJ index for recrawl_from.
struct fetch_history {
    int status = 0;
    std::string etag;
    std::string last_modified;
    /// record::payload_digest of the capture that holds the payload; empty when unknown or bodiless.
    std::string payload_digest;
    /// A redirect's target (record::next_url).
    std::string location;
    /// When the last request for it was sent (unix microseconds).
    std::int64_t fetched_at_us = 0;
    /// When the capture holding its payload was made (its WARC-Date): the last full response, not a 304 nor
    /// a revisit. 0 when unknown.
    std::int64_t captured_at_us = 0;
    /// The generation (crawl_state::generation()) that fetched it last.
    std::uint32_t generation = 0;
    /// How the crawl came to it, so that a new generation admits it as it was admitted before.
    int depth = 0;
    /// Redirects it may still follow (work_item::redirects_left); -1 when unknown (the config's
    /// max_redirect).
    int redirects_left = -1;
    item_kind kind = item_kind::page;
    requisite_kind requisite = requisite_kind::image;
    bool from_sitemap = false;
    std::string referrer;
    /// Continuous mode: when the URL is due again, and its interval.
    std::optional<revisit_entry> revisit;
    /// Continuous mode: the URL is in the frontier for its revisit (it waits on disk with a state dir), so a
    /// resume does not schedule it a second time.
    bool revisit_queued = false;
    /// What this URL's answer led the crawl to (its in-scope links and requisites, a sitemap's URLs), as
    /// outlink_fingerprint()s: a re-crawl follows them again when the URL answers 304, whose body it does not
    /// see, and a known URL that no page of the new generation leads to is gone. Meaningful only when
    /// outlinks_known: a history read from a previous run's records (recrawl_from) has none.
    std::vector<std::uint64_t> outlinks;
    bool outlinks_known = false;
    /// The WARC-Record-ID the crawl gave the capture that holds the payload (http_exchange::record_id), as
    /// 16 bytes (a version 4 UUID); empty when unknown. A revisit names it in WARC-Refers-To.
    std::string capture_id;
    /// Where the archive put that capture (archived_capture, from the outputs' flush): the WARC file's name,
    /// the record's offset and length there, and its WARC-Payload-Digest when that differs from
    /// payload_digest (a content-coded payload: the WARC keeps the coded bytes). Empty file: unknown (no
    /// WARC, or the crawl was killed between the archive's write and the commit that would have said where).
    std::string warc_file;
    std::uint64_t warc_offset = 0;
    std::uint64_t warc_length = 0;
    std::string warc_payload_digest;

    /// The payload digest a revisit of this capture must repeat: the archived record's.
    const std::string& archived_payload_digest() const noexcept {
        return warc_payload_digest.empty() ? payload_digest : warc_payload_digest;
    }
    /// Takes the capture `earlier` names (its id, date and place in the archive): this fetch repeats it.
    void keep_capture_of(const fetch_history& earlier);
    /// Says where the archive put this entry's capture, when `archived` names it.
    bool place(const archived_capture& archived);
};

/// A new capture id: 16 bytes of a version 4 UUID from the operating system's entropy (never repeated by a
/// resumed crawl, as a seeded generator would).
std::string new_capture_id();
/// "<urn:uuid:...>", the WARC-Record-ID a capture id stands for; empty for an empty id.
std::string capture_record_id(std::string_view capture_id);

/// The fingerprint an entry's outlinks name a URL by: fixed, not the crawl's seed, so that it reads the same
/// in every generation.
std::uint64_t outlink_fingerprint(std::string_view url) noexcept;

/// At most this many outlinks are kept for one URL (a sitemap lists at most 50,000 URLs): past it the entry
/// says outlinks_known = false, and the re-crawl admits every known URL instead.
inline constexpr std::size_t max_outlinks_kept = 65'536;

/// Heterogeneous lookup: a URL held as a string_view finds its entry without a copy.
struct url_hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

/// URL (normalized) -> its last fetch.
using history_map = std::unordered_map<std::string, fetch_history, url_hash, std::equal_to<>>;

std::string encode(const fetch_history& h);
/// nullopt when `bytes` is not what encode() writes.
std::optional<fetch_history> decode_fetch_history(std::string_view bytes);

/// How `now` (the record of this generation's fetch) compares with `previous` (nullptr: the URL was not
/// known). A network failure (status 0) compares as none: it says nothing about the page.
change_kind compare(const fetch_history* previous, const record& now) noexcept;

/// The history entry a record leaves for the next generation; `previous` (may be null) keeps what a 304
/// does not repeat (the payload digest and its capture date, validators it did not resend).
fetch_history history_of(const record& r, const work_item& item, const fetch_history* previous,
                         std::uint32_t generation);

/// Reads a previous run's output for recrawl_from: JSON Lines records (asiocrawl's `-o` format, with url,
/// status and, when present, etag, last_modified, payload_digest, next_url, fetched_at, depth, referrer), or
/// a CDXJ index ("SURT TIMESTAMP {json}" lines with url, status, digest). Lines that are neither are counted
/// in `skipped`. The last line of a URL wins.
history_map parse_recrawl_source(std::string_view text, std::size_t& skipped);

} // namespace asiocrawl::detail
