#include "http/decoder.hpp"

#include "util/ascii.hpp"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <new>

namespace asiocrawl::detail {

content_coding parse_content_coding(std::string_view field_value) noexcept {
    // A list of codings means they were applied in order; one real coding among "identity" entries is
    // still just that coding, but two real ones (gzip, gzip) are beyond what we decode.
    content_coding found = content_coding::identity;
    while (!field_value.empty()) {
        const auto comma = field_value.find(',');
        const auto item = ascii::trim(field_value.substr(0, comma), " \t");
        field_value = comma == std::string_view::npos ? std::string_view{} : field_value.substr(comma + 1);
        content_coding coding;
        if (item.empty() || ascii::iequals(item, "identity"))
            continue;
        if (ascii::iequals(item, "gzip") || ascii::iequals(item, "x-gzip"))
            coding = content_coding::gzip;
        else if (ascii::iequals(item, "deflate"))
            coding = content_coding::deflate;
        else
            return content_coding::unsupported;
        if (found != content_coding::identity)
            return content_coding::unsupported;
        found = coding;
    }
    return found;
}

namespace {

/// Inflated bytes are produced this many at a time: the only memory a decoder holds besides zlib's window.
constexpr std::size_t output_chunk = 16 * 1024;

/// RFC 1950 header: compression method 8 with a window of at most 32 KiB, and a check value.
bool looks_like_zlib_header(unsigned char cmf, unsigned char flg) {
    return (cmf & 0x0f) == 8 && (cmf >> 4) <= 7 && ((cmf << 8) | flg) % 31 == 0;
}

constexpr unsigned char gzip_magic = 0x1f;

} // namespace

struct content_decoder::state {
    state(content_coding c, std::uint64_t l)
        : coding(c)
        , limit(l) {}
    ~state() {
        if (inflating)
            inflateEnd(&stream);
    }
    state(const state&) = delete;
    state& operator=(const state&) = delete;

    content_coding coding;
    std::uint64_t limit;
    std::uint64_t decoded = 0;
    status verdict = status::ok;
    bool saw_input = false;
    z_stream stream{};
    bool inflating = false;
    bool member_done = false;   ///< a compressed stream reached its end; what follows is decided on arrival
    bool ignore_rest = false;   ///< bytes after the end that are not another gzip member
    std::string deflate_prefix; ///< the first bytes of a deflate body, until its flavor is known

    bool start_inflate(int window_bits) {
        if (inflateInit2(&stream, window_bits) != Z_OK)
            return false;
        inflating = true;
        return true;
    }

    /// Makes room for `adding` more bytes in `out`, doubling as std::string would but never past what this
    /// decoder may still add: a body at its limit then holds the limit, not the next power of two (a 16 MiB
    /// body grew to 32 MiB of capacity, and needed 48 MiB while it moved).
    void grow_within_limit(std::string& out, std::size_t adding) const {
        const std::size_t needed = out.size() + adding;
        if (needed <= out.capacity())
            return;
        const std::size_t most = out.size() + static_cast<std::size_t>(limit - decoded);
        // Into a fresh string: libstdc++'s reserve() on a grown one doubles anyway.
        std::string larger;
        larger.reserve(std::min(most, std::max(needed, out.capacity() * 2)));
        larger.append(out);
        out.swap(larger);
    }

    /// Appends what fits under the limit; false when the limit was crossed.
    bool emit(const char* data, std::size_t size, std::string& out) {
        grow_within_limit(out, std::min<std::uint64_t>(size, limit - decoded));
        if (size > limit - decoded) {
            out.append(data, static_cast<std::size_t>(limit - decoded));
            decoded = limit;
            return false;
        }
        out.append(data, size);
        decoded += size;
        return true;
    }

    status inflate_some(std::string_view input, std::string& out) {
        stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input.data()));
        stream.avail_in = static_cast<uInt>(input.size());
        std::array<char, output_chunk> chunk;
        while (!ignore_rest) {
            if (member_done) {
                if (stream.avail_in == 0)
                    break;
                // Another gzip member (RFC 1952 allows a series); anything else is trailing junk.
                if (coding != content_coding::gzip || *stream.next_in != gzip_magic) {
                    ignore_rest = true;
                    break;
                }
                if (inflateReset(&stream) != Z_OK)
                    return status::corrupt;
                member_done = false;
            }
            stream.next_out = reinterpret_cast<Bytef*>(chunk.data());
            stream.avail_out = static_cast<uInt>(chunk.size());
            const int rc = inflate(&stream, Z_NO_FLUSH);
            const std::size_t produced = chunk.size() - stream.avail_out;
            if (produced > 0 && !emit(chunk.data(), produced, out))
                return status::limit_exceeded;
            if (rc == Z_STREAM_END) {
                member_done = true;
                continue;
            }
            if (rc == Z_BUF_ERROR) // no progress possible: wants more input
                break;
            if (rc != Z_OK)
                return status::corrupt;
            if (stream.avail_in == 0 && stream.avail_out != 0)
                break; // everything consumed and nothing held back
        }
        return status::ok;
    }

    status feed(std::string_view input, std::string& out) {
        if (input.empty())
            return status::ok;
        saw_input = true;
        switch (coding) {
        case content_coding::identity:
            return emit(input.data(), input.size(), out) ? status::ok : status::limit_exceeded;
        case content_coding::unsupported:
            return status::corrupt;
        case content_coding::gzip:
            if (!inflating && !start_inflate(15 + 32)) // +32: gzip or zlib header, detected
                throw std::bad_alloc();
            return inflate_some(input, out);
        case content_coding::deflate:
            if (!inflating) {
                deflate_prefix.append(input);
                if (deflate_prefix.size() < 2)
                    return status::ok;
                const auto cmf = static_cast<unsigned char>(deflate_prefix[0]);
                const auto flg = static_cast<unsigned char>(deflate_prefix[1]);
                if (!start_inflate(looks_like_zlib_header(cmf, flg) ? 15 : -15))
                    throw std::bad_alloc();
                std::string prefix = std::move(deflate_prefix);
                deflate_prefix.clear();
                return inflate_some(prefix, out);
            }
            return inflate_some(input, out);
        }
        return status::corrupt;
    }
};

content_decoder::content_decoder(content_coding coding, std::uint64_t limit)
    : state_(std::make_unique<state>(coding, limit)) {}

content_decoder::~content_decoder() = default;
content_decoder::content_decoder(content_decoder&&) noexcept = default;
content_decoder& content_decoder::operator=(content_decoder&&) noexcept = default;

content_decoder::status content_decoder::feed(std::string_view input, std::string& out) {
    auto& s = *state_;
    if (s.verdict == status::ok)
        s.verdict = s.feed(input, out);
    return s.verdict;
}

content_decoder::status content_decoder::finish() {
    auto& s = *state_;
    if (s.verdict != status::ok)
        return s.verdict;
    const bool compressed = s.coding == content_coding::gzip || s.coding == content_coding::deflate;
    if (compressed && s.saw_input && !s.member_done)
        s.verdict = status::corrupt; // cut short
    return s.verdict;
}

std::uint64_t content_decoder::decoded_bytes() const noexcept {
    return state_->decoded;
}

std::optional<std::string> gunzip(std::string_view compressed, std::uint64_t limit) {
    content_decoder decoder{content_coding::gzip, limit};
    std::string out;
    if (decoder.feed(compressed, out) != content_decoder::status::ok ||
        decoder.finish() != content_decoder::status::ok)
        return std::nullopt;
    return out;
}

} // namespace asiocrawl::detail
