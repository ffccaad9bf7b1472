// Content-Encoding decoding (gzip, deflate, br, zstd) as a sans-io streaming decoder: bytes go in as they
// arrive from the network and decoded bytes come out, never more than a limit. A compression bomb therefore
// costs at most the limit in memory and the time to decode that much, however large it would grow; the
// decoders' own windows are bounded too (zlib 32 KiB, brotli 16 MiB by its format, zstd max_zstd_window).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace asiocrawl::detail {

/// The codings we decode: gzip, deflate, br (RFC 7932) and zstd (RFC 8878), the four we advertise.
/// Anything else a server sends anyway (compress, a stack of two codings) is `unsupported`, and the fetcher
/// reports it as error::decoding_failed rather than handing undecodable bytes to the HTML parser.
enum class content_coding { identity, gzip, deflate, br, zstd, unsupported };

/// Reads a Content-Encoding field value: "", "identity" -> identity; "gzip", "x-gzip" -> gzip; "deflate" ->
/// deflate; "br" -> br; "zstd" -> zstd (case-insensitive, surrounding whitespace ignored; "identity" entries
/// in a list are skipped). Two real codings ("gzip, br") are unsupported.
content_coding parse_content_coding(std::string_view field_value) noexcept;

/// The largest zstd window accepted: 8 MiB, the limit RFC 8878 section 3.1.1.1.2 recommends decoders
/// enforce and browsers do. A frame asking for more is refused (corrupt, with a problem() that says so)
/// before anything that size is allocated.
constexpr std::uint64_t max_zstd_window = 8u << 20;

/// Decodes one body. "deflate" is accepted both zlib-wrapped (RFC 1950, what the RFC means) and raw (RFC
/// 1951, what many servers send); gzip accepts concatenated members, and bytes after the last member are
/// ignored, as browsers do; bytes after the end of a brotli stream are ignored the same way. zstd accepts
/// concatenated (and skippable) frames, as RFC 8878 asks; anything after them that is not a frame is
/// corrupt.
class content_decoder {
public:
    enum class status {
        ok,             ///< everything so far decoded
        limit_exceeded, ///< more than `limit` bytes would come out; `out` got exactly up to the limit
        corrupt,        ///< the input is not valid for the coding (or, from finish(), it ended early)
    };

    /// `limit`: most decoded bytes ever appended, in total over every feed() call.
    content_decoder(content_coding coding, std::uint64_t limit);
    ~content_decoder();
    content_decoder(content_decoder&&) noexcept;
    content_decoder& operator=(content_decoder&&) noexcept;

    /// Decodes `input`, appending the result to `out`. After a status other than ok the decoder is done:
    /// further calls return the same status and append nothing.
    status feed(std::string_view input, std::string& out);

    /// The body ended: corrupt when a compressed stream stopped before its end. An empty body is fine.
    status finish();

    /// Decoded bytes appended so far.
    std::uint64_t decoded_bytes() const noexcept;

    /// After `corrupt`: what was wrong, for the record ("zstd frame window 1 GiB is over the 8 MiB bound",
    /// "brotli: ..."); empty otherwise.
    const std::string& problem() const noexcept;

private:
    struct state;
    std::unique_ptr<state> state_;
};

/// Decompresses a whole gzip (or zlib) document, e.g. a .xml.gz sitemap. nullopt when it is corrupt,
/// truncated, or would decompress to more than `limit` bytes.
std::optional<std::string> gunzip(std::string_view compressed, std::uint64_t limit);

} // namespace asiocrawl::detail
