#include "http/decoder.hpp"

#include "util/ascii.hpp"

#include <brotli/decode.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

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
        else if (ascii::iequals(item, "br"))
            coding = content_coding::br;
        else if (ascii::iequals(item, "zstd"))
            coding = content_coding::zstd;
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

/// max_zstd_window as a window log (ZSTD_d_windowLogMax).
constexpr int max_zstd_window_log = 23;
static_assert(std::uint64_t{1} << max_zstd_window_log == max_zstd_window);

/// "8 MiB", "1 GiB", "1536 KiB": a window size for a problem text.
std::string size_text(std::uint64_t bytes) {
    if (bytes >= (1u << 30) && bytes % (1u << 30) == 0)
        return std::to_string(bytes >> 30) + " GiB";
    if (bytes >= (1u << 20) && bytes % (1u << 20) == 0)
        return std::to_string(bytes >> 20) + " MiB";
    return std::to_string(bytes >> 10) + " KiB";
}

/// The window a zstd frame header asks for (RFC 8878 3.1.1.1), when `header` holds enough of it; nullopt
/// when it is not a frame header or is still incomplete (the decoder then says what is wrong).
std::optional<std::uint64_t> zstd_window_of(std::string_view header) {
    if (header.size() < 6 || static_cast<unsigned char>(header[0]) != 0x28 ||
        static_cast<unsigned char>(header[1]) != 0xb5 || static_cast<unsigned char>(header[2]) != 0x2f ||
        static_cast<unsigned char>(header[3]) != 0xfd)
        return std::nullopt;
    const auto descriptor = static_cast<unsigned char>(header[4]);
    if ((descriptor & 0x20) != 0) // single segment: the window is the content size, read by zstd itself
        return std::nullopt;
    const auto window_descriptor = static_cast<unsigned char>(header[5]);
    const std::uint64_t base = std::uint64_t{1} << (10 + (window_descriptor >> 3));
    return base + (base / 8) * (window_descriptor & 7);
}

} // namespace

struct content_decoder::state {
    state(content_coding c, std::uint64_t l)
        : coding(c)
        , limit(l) {}
    ~state() {
        if (inflating)
            inflateEnd(&stream);
        if (brotli)
            BrotliDecoderDestroyInstance(brotli);
        if (zstd)
            ZSTD_freeDCtx(zstd);
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
    BrotliDecoderState* brotli = nullptr;
    ZSTD_DCtx* zstd = nullptr;
    std::string zstd_head; ///< the first bytes of a zstd frame, kept to name its window when it is refused
    std::string problem;

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
            if (rc != Z_OK) {
                problem = std::string(coding == content_coding::gzip ? "gzip: " : "deflate: ") +
                          (stream.msg ? stream.msg : "the stream does not decode");
                return status::corrupt;
            }
            if (stream.avail_in == 0 && stream.avail_out != 0)
                break; // everything consumed and nothing held back
        }
        return status::ok;
    }

    status brotli_some(std::string_view input, std::string& out) {
        if (!brotli && !(brotli = BrotliDecoderCreateInstance(nullptr, nullptr, nullptr)))
            throw std::bad_alloc();
        if (member_done)
            return status::ok; // bytes after the end of the stream: ignored, as after gzip's
        auto next_in = reinterpret_cast<const std::uint8_t*>(input.data());
        std::size_t avail_in = input.size();
        std::array<std::uint8_t, output_chunk> chunk;
        for (;;) {
            auto next_out = chunk.data();
            std::size_t avail_out = chunk.size();
            const auto rc =
                BrotliDecoderDecompressStream(brotli, &avail_in, &next_in, &avail_out, &next_out, nullptr);
            const std::size_t produced = chunk.size() - avail_out;
            if (produced > 0 && !emit(reinterpret_cast<const char*>(chunk.data()), produced, out))
                return status::limit_exceeded;
            switch (rc) {
            case BROTLI_DECODER_RESULT_SUCCESS:
                member_done = true;
                return status::ok;
            case BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT:
                return status::ok;
            case BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT:
                continue;
            case BROTLI_DECODER_RESULT_ERROR:
                break;
            }
            problem = std::string("brotli: ") + BrotliDecoderErrorString(BrotliDecoderGetErrorCode(brotli));
            return status::corrupt;
        }
    }

    status zstd_some(std::string_view input, std::string& out) {
        if (!zstd) {
            if (!(zstd = ZSTD_createDCtx()))
                throw std::bad_alloc();
            // Refused in the frame header, before the window is allocated.
            if (ZSTD_isError(ZSTD_DCtx_setParameter(zstd, ZSTD_d_windowLogMax, max_zstd_window_log)))
                throw std::bad_alloc();
        }
        if (zstd_head.size() < 6)
            zstd_head.append(input.substr(0, 6 - zstd_head.size()));
        ZSTD_inBuffer in{input.data(), input.size(), 0};
        std::array<char, output_chunk> chunk;
        for (;;) {
            ZSTD_outBuffer o{chunk.data(), chunk.size(), 0};
            const std::size_t rc = ZSTD_decompressStream(zstd, &o, &in);
            if (ZSTD_isError(rc)) {
                if (ZSTD_getErrorCode(rc) == ZSTD_error_frameParameter_windowTooLarge) {
                    // The first frame's header is kept: a later frame's window goes unnamed.
                    const auto window = zstd_window_of(zstd_head);
                    const bool named = window && *window > max_zstd_window;
                    problem = "zstd frame window " + (named ? size_text(*window) + " " : std::string()) +
                              "is over the " + size_text(max_zstd_window) + " bound";
                } else {
                    problem = std::string("zstd: ") + ZSTD_getErrorName(rc);
                }
                return status::corrupt;
            }
            if (o.pos > 0 && !emit(chunk.data(), o.pos, out))
                return status::limit_exceeded;
            member_done = rc == 0; // a frame ended here; the next bytes, if any, start another
            if (in.pos == in.size && o.pos < o.size)
                return status::ok; // everything consumed and nothing held back
        }
    }

    status feed(std::string_view input, std::string& out) {
        if (input.empty())
            return status::ok;
        saw_input = true;
        switch (coding) {
        case content_coding::identity:
            return emit(input.data(), input.size(), out) ? status::ok : status::limit_exceeded;
        case content_coding::unsupported:
            problem = "a content coding we do not decode";
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
        case content_coding::br:
            return brotli_some(input, out);
        case content_coding::zstd:
            return zstd_some(input, out);
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
    const bool compressed = s.coding != content_coding::identity && s.coding != content_coding::unsupported;
    if (compressed && s.saw_input && !s.member_done) {
        s.verdict = status::corrupt; // cut short
        s.problem = "the compressed stream ends early";
    }
    return s.verdict;
}

const std::string& content_decoder::problem() const noexcept {
    return state_->problem;
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
