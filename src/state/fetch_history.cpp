#include "state/fetch_history.hpp"

#include "state/fingerprint_set.hpp"
#include "state/varint.hpp"

#include "policy/sitemap.hpp"
#include "util/ascii.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <boost/uuid/random_generator.hpp>
#include <boost/uuid/uuid_io.hpp>

#include <charconv>

namespace asiocrawl::detail {

namespace {

// The format's version, first in every value: a later format can read this one.
constexpr std::uint64_t history_format = 1;

bool gone_status(int status) noexcept {
    return status == 404 || status == 410;
}

std::int64_t unix_micros(std::chrono::system_clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}

// CDXJ's 14-digit timestamp (YYYYMMDDhhmmss, UTC), read as the W3C datetime it spells.
std::optional<std::int64_t> parse_timestamp14(std::string_view s) {
    if (s.size() != 14)
        return std::nullopt;
    std::string w3c;
    w3c.append(s.substr(0, 4)).append("-").append(s.substr(4, 2)).append("-").append(s.substr(6, 2));
    w3c.append("T")
        .append(s.substr(8, 2))
        .append(":")
        .append(s.substr(10, 2))
        .append(":")
        .append(s.substr(12, 2));
    w3c.append("Z");
    const auto t = parse_w3c_datetime_micros(w3c);
    if (!t)
        return std::nullopt;
    return t->time_since_epoch().count();
}

std::string string_field(const boost::json::object& o, std::string_view name) {
    if (const auto* v = o.if_contains(name); v != nullptr && v->is_string())
        return std::string(v->as_string());
    return {};
}

int int_field(const boost::json::object& o, std::string_view name) {
    if (const auto* v = o.if_contains(name)) {
        if (v->is_int64())
            return static_cast<int>(v->as_int64());
        if (v->is_uint64())
            return static_cast<int>(v->as_uint64());
        if (v->is_string()) { // CDXJ writes the status as a string
            int n = 0;
            const auto& s = v->as_string();
            if (std::from_chars(s.data(), s.data() + s.size(), n).ec == std::errc{})
                return n;
        }
    }
    return 0;
}

std::optional<requisite_kind> requisite_by_name(std::string_view name) {
    for (int k = 0; k <= static_cast<int>(requisite_kind::style); ++k)
        if (requisite_kind_name(static_cast<requisite_kind>(k)) == name)
            return static_cast<requisite_kind>(k);
    return std::nullopt;
}

} // namespace

std::string encode(const fetch_history& h) {
    std::string out;
    out.reserve(32 + h.etag.size() + h.last_modified.size() + h.payload_digest.size() + h.location.size() +
                h.referrer.size());
    put_varint(out, history_format);
    // The flags: the kind in bits 0-3, from_sitemap in bit 4, a requisite's kind in bits 5-8, revisit_queued
    // in bit 9, outlinks_known in bit 10 (the outlinks follow the revisit entry then), a capture id in bit 11
    // (its 16 bytes come last), the capture's place in the archive in bit 12 (before the capture id).
    const bool has_capture_id = h.capture_id.size() == 16;
    const bool has_place = !h.warc_file.empty();
    std::uint64_t flags = static_cast<std::uint64_t>(h.kind) | (h.from_sitemap ? 0x10u : 0u) |
                          (h.revisit_queued ? 0x200u : 0u) | (h.outlinks_known ? 0x400u : 0u) |
                          (has_capture_id ? 0x800u : 0u) | (has_place ? 0x1000u : 0u);
    if (h.kind == item_kind::requisite)
        flags |= static_cast<std::uint64_t>(h.requisite) << 5;
    put_varint(out, flags);
    put_varint(out, static_cast<std::uint64_t>(h.status));
    put_varint(out, h.generation);
    put_varint(out, zigzag(h.depth));
    put_varint(out, zigzag(h.redirects_left));
    put_varint(out, zigzag(h.fetched_at_us));
    // The capture date is usually the fetch date: stored as the difference.
    put_varint(out, zigzag(h.fetched_at_us - h.captured_at_us));
    put_string(out, h.etag);
    put_string(out, h.last_modified);
    put_string(out, h.payload_digest);
    put_string(out, h.location);
    put_string(out, h.referrer);
    put_string(out, h.revisit ? encode_revisit_entry(*h.revisit) : std::string());
    if (h.outlinks_known) {
        // Fixed 8 bytes each: fingerprints are uniform, a varint would not shorten them.
        put_varint(out, h.outlinks.size());
        for (const auto fp : h.outlinks)
            for (int shift = 0; shift < 64; shift += 8)
                out.push_back(static_cast<char>((fp >> shift) & 0xff));
    }
    if (has_place) {
        put_string(out, h.warc_file);
        put_varint(out, h.warc_offset);
        put_varint(out, h.warc_length);
        put_string(out, h.warc_payload_digest);
    }
    if (has_capture_id)
        out += h.capture_id;
    return out;
}

std::optional<fetch_history> decode_fetch_history(std::string_view bytes) {
    varint_reader in{bytes};
    const auto format = in.varint();
    if (!format || *format != history_format)
        return std::nullopt;
    const auto flags = in.varint();
    const auto status = in.varint();
    const auto generation = in.varint();
    const auto depth = in.varint();
    const auto redirects = in.varint();
    const auto fetched = in.varint();
    const auto captured_before = in.varint();
    auto etag = in.string();
    auto last_modified = in.string();
    auto digest = in.string();
    auto location = in.string();
    auto referrer = in.string();
    auto revisit = in.string();
    std::vector<std::uint64_t> outlinks;
    if (flags && (*flags & 0x400) != 0) {
        const auto n = in.varint();
        if (!n || *n > max_outlinks_kept)
            return std::nullopt;
        const auto packed = in.bytes(static_cast<std::size_t>(*n) * 8);
        if (!packed)
            return std::nullopt;
        outlinks.reserve(*n);
        for (std::size_t i = 0; i < *n; ++i) {
            std::uint64_t fp = 0;
            for (int b = 7; b >= 0; --b)
                fp = (fp << 8) | static_cast<unsigned char>((*packed)[i * 8 + static_cast<std::size_t>(b)]);
            outlinks.push_back(fp);
        }
    }
    std::optional<std::string> warc_file{std::in_place};
    std::optional<std::uint64_t> warc_offset{0};
    std::optional<std::uint64_t> warc_length{0};
    std::optional<std::string> warc_digest{std::in_place};
    if (flags && (*flags & 0x1000) != 0) {
        warc_file = in.string();
        warc_offset = in.varint();
        warc_length = in.varint();
        warc_digest = in.string();
        if (!warc_file || warc_file->empty() || !warc_offset || !warc_length || !warc_digest)
            return std::nullopt;
    }
    std::string capture_id;
    if (flags && (*flags & 0x800) != 0) {
        const auto id = in.bytes(16);
        if (!id)
            return std::nullopt;
        capture_id = std::string(*id);
    }
    if (!revisit || !flags || !status || !generation || !depth || !redirects || !fetched ||
        !captured_before || !etag || !last_modified || !digest || !location || !referrer || !in.at_end() ||
        *status > 999 || *generation > 0xffffffffu)
        return std::nullopt;
    const auto kind = *flags & 0x0f;
    const auto requisite = (*flags >> 5) & 0x0f;
    if (kind > static_cast<std::uint64_t>(item_kind::requisite) ||
        requisite > static_cast<std::uint64_t>(requisite_kind::style) || (*flags >> 13) != 0)
        return std::nullopt;
    fetch_history h;
    if (!revisit->empty()) {
        h.revisit = decode_revisit_entry(*revisit);
        if (!h.revisit)
            return std::nullopt;
    }
    h.revisit_queued = (*flags & 0x200) != 0;
    h.outlinks_known = (*flags & 0x400) != 0;
    h.outlinks = std::move(outlinks);
    h.capture_id = std::move(capture_id);
    h.warc_file = std::move(*warc_file);
    h.warc_offset = *warc_offset;
    h.warc_length = *warc_length;
    h.warc_payload_digest = std::move(*warc_digest);
    h.kind = static_cast<item_kind>(kind);
    h.requisite = static_cast<requisite_kind>(requisite);
    h.from_sitemap = (*flags & 0x10) != 0;
    h.status = static_cast<int>(*status);
    h.generation = static_cast<std::uint32_t>(*generation);
    h.depth = static_cast<int>(unzigzag(*depth));
    h.redirects_left = static_cast<int>(unzigzag(*redirects));
    h.fetched_at_us = unzigzag(*fetched);
    h.captured_at_us = h.fetched_at_us - unzigzag(*captured_before);
    h.etag = std::move(*etag);
    h.last_modified = std::move(*last_modified);
    h.payload_digest = std::move(*digest);
    h.location = std::move(*location);
    h.referrer = std::move(*referrer);
    return h;
}

void fetch_history::keep_capture_of(const fetch_history& earlier) {
    captured_at_us = earlier.captured_at_us;
    capture_id = earlier.capture_id;
    warc_file = earlier.warc_file;
    warc_offset = earlier.warc_offset;
    warc_length = earlier.warc_length;
    warc_payload_digest = earlier.warc_payload_digest;
}

bool fetch_history::place(const archived_capture& archived) {
    if (capture_id.empty() || archived.file.empty() || capture_record_id(capture_id) != archived.record_id)
        return false;
    warc_file = archived.file;
    warc_offset = archived.offset;
    warc_length = archived.length;
    // Only when it says more than payload_digest: most payloads are not content-coded.
    warc_payload_digest = archived.payload_digest == payload_digest ? std::string() : archived.payload_digest;
    return true;
}

std::string new_capture_id() {
    thread_local boost::uuids::random_generator generate;
    const auto id = generate();
    return std::string(reinterpret_cast<const char*>(id.data), id.size());
}

std::string capture_record_id(std::string_view capture_id) {
    if (capture_id.size() != 16)
        return {};
    boost::uuids::uuid id;
    std::copy(capture_id.begin(), capture_id.end(), reinterpret_cast<char*>(id.data));
    return "<urn:uuid:" + boost::uuids::to_string(id) + ">";
}

std::uint64_t outlink_fingerprint(std::string_view url) noexcept {
    return url_fingerprint(url, 0x6f75746c696e6b73ull); // "outlinks"
}

change_kind compare(const fetch_history* previous, const record& now) noexcept {
    if (previous == nullptr)
        return change_kind::added;
    if (previous->status == 0) // known only as unanswered (a failure, a robots.txt denial): first answer
        return now.status == 0 ? change_kind::none : change_kind::added;
    if (now.not_modified)
        return change_kind::unchanged;
    if (now.status == 0)
        return change_kind::none; // no answer: nothing to compare
    if (gone_status(now.status))
        return gone_status(previous->status) ? change_kind::unchanged : change_kind::gone;
    if (previous->status != now.status)
        return change_kind::changed;
    if (now.status >= 300 && now.status < 400)
        return previous->location == now.next_url ? change_kind::unchanged : change_kind::changed;
    if (now.payload_digest.empty() && previous->payload_digest.empty())
        return now.size == 0 ? change_kind::unchanged : change_kind::changed; // nothing kept to compare
    return now.payload_digest == previous->payload_digest ? change_kind::unchanged : change_kind::changed;
}

fetch_history history_of(const record& r, const work_item& item, const fetch_history* previous,
                         std::uint32_t generation) {
    fetch_history h;
    h.status = r.status;
    h.etag = r.etag;
    h.last_modified = r.last_modified;
    h.payload_digest = r.payload_digest;
    h.location = r.next_url;
    h.fetched_at_us = unix_micros(r.fetched_at);
    h.captured_at_us = h.fetched_at_us;
    if (previous != nullptr) {
        if (r.not_modified) {
            // RFC 9110 15.4.5: a 304 stands for the stored response; its validators update it when sent.
            h.status = previous->status;
            h.payload_digest = previous->payload_digest;
            h.location = previous->location;
            h.keep_capture_of(*previous);
            if (h.etag.empty())
                h.etag = previous->etag;
            if (h.last_modified.empty())
                h.last_modified = previous->last_modified;
        } else if (r.change == change_kind::unchanged && !r.payload_digest.empty() &&
                   r.payload_digest == previous->payload_digest) {
            h.keep_capture_of(*previous); // archived as a revisit of that capture
        }
    }
    h.generation = generation;
    h.depth = item.depth;
    h.redirects_left = item.redirects_left;
    h.kind = item.kind;
    h.requisite = item.requisite;
    h.from_sitemap = item.from_sitemap;
    h.referrer = item.referrer;
    return h;
}

history_map parse_recrawl_source(std::string_view text, std::size_t& skipped) {
    history_map out;
    skipped = 0;
    while (!text.empty()) {
        const auto end = text.find('\n');
        std::string_view line = text.substr(0, end);
        text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
        line = ascii::trim(line, " \t\r");
        if (line.empty())
            continue;
        std::optional<std::int64_t> cdxj_time;
        std::string_view json = line;
        if (line.front() != '{') {
            // CDXJ: "SURT TIMESTAMP {json}"
            const auto first = line.find(' ');
            const auto second = first == std::string_view::npos ? first : line.find(' ', first + 1);
            if (second == std::string_view::npos) {
                ++skipped;
                continue;
            }
            cdxj_time = parse_timestamp14(line.substr(first + 1, second - first - 1));
            json = line.substr(second + 1);
        }
        boost::system::error_code ec;
        const auto value = boost::json::parse(json, ec);
        if (ec || !value.is_object()) {
            ++skipped;
            continue;
        }
        const auto& o = value.as_object();
        std::string url = string_field(o, "url");
        if (url.empty() || string_field(o, "mime") == "warc/revisit") {
            // A revisit holds no payload of its own: the capture it refers to says what the page was.
            ++skipped;
            continue;
        }
        fetch_history h;
        h.status = int_field(o, "status");
        h.etag = string_field(o, "etag");
        h.last_modified = string_field(o, "last_modified");
        h.payload_digest = string_field(o, cdxj_time ? "digest" : "payload_digest");
        if (!h.payload_digest.empty() && h.payload_digest.find(':') == std::string::npos)
            h.payload_digest.insert(0, "sha1:"); // pywb's indexer writes the bare base32
        h.location = string_field(o, "next_url");
        h.referrer = string_field(o, "referrer");
        h.depth = int_field(o, "depth");
        if (cdxj_time)
            h.fetched_at_us = *cdxj_time;
        else if (auto t = parse_w3c_datetime_micros(string_field(o, "fetched_at")))
            h.fetched_at_us = t->time_since_epoch().count();
        h.captured_at_us = h.fetched_at_us;
        if (o.if_contains("from_sitemap") != nullptr && o.at("from_sitemap").is_bool())
            h.from_sitemap = o.at("from_sitemap").as_bool();
        if (auto name = string_field(o, "requisite"); !name.empty()) {
            if (auto kind = requisite_by_name(name)) {
                h.kind = item_kind::requisite;
                h.requisite = *kind;
            }
        }
        // Records do not say how many redirects a URL had left, except the one where a chain was cut.
        if (string_field(o, "error_kind") == "redirect_limit")
            h.redirects_left = 0;
        if (o.if_contains("error_kind") != nullptr && h.status == 0) {
            ++skipped; // a failure: nothing to send back, and the URL is known by whoever linked it
            continue;
        }
        out.insert_or_assign(std::move(url), std::move(h));
    }
    return out;
}

} // namespace asiocrawl::detail
