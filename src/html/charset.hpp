// The character encoding a response declares for its body. Sans-io; nothing here guesses from byte
// statistics.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace asiocrawl {

struct charset_info {
    /// The WHATWG Encoding Standard name of the declared encoding ("utf-8", "windows-1252", "shift_jis",
    /// "utf-16le", ...); empty when nothing declares a known one.
    std::string charset;
    /// Where it was found: "bom", "content-type", "meta", or "" when charset is empty.
    std::string source;
};

/// The body's declared encoding, following the order of the WHATWG Encoding Standard's "decode" and of the
/// HTML parser's encoding sniffing, which browsers implement:
/// 1. a byte order mark (UTF-8 EF BB BF, UTF-16BE FE FF, UTF-16LE FF FE) — it outranks even Content-Type;
/// 2. the Content-Type charset parameter (`content_type_charset`, already extracted and unquoted);
/// 3. only when `is_html`: the HTML prescan of the first 1024 bytes for <meta charset=...> or
///    <meta http-equiv="content-type" content="...charset=...">, skipping comments and other tags' attribute
///    values; a meta naming UTF-16 means UTF-8 and "x-user-defined" means windows-1252, as the HTML standard
///    says (a document that is read as ASCII bytes cannot be UTF-16).
/// Labels are trimmed, lowercased and mapped to their encoding's name with the WHATWG label table ("utf8" and
/// "unicode-1-1-utf-8" -> "utf-8"; "latin1", "iso-8859-1", "ascii", "us-ascii" -> "windows-1252"; "sjis" ->
/// "shift_jis"; "gb2312" -> "gbk"; ...). A label the table does not know is not a declaration: detection goes
/// on with the next source.
charset_info detect_charset(std::string_view content_type_charset, std::string_view body, bool is_html);

/// The WHATWG encoding name for a label (trimmed of ASCII whitespace, any case), or "" when it is no label.
std::string_view charset_for_label(std::string_view label);

/// `bytes` decoded from `encoding` (a WHATWG encoding name, as detect_charset gives it) into UTF-8 with
/// glibc's iconv, the way the Encoding Standard's decoders read: a byte order mark of that encoding is
/// dropped, and a byte sequence the encoding does not define becomes U+FFFD. nullopt when the bytes are read
/// as they are: no encoding declared (""), "utf-8", or a name this function does not know.
std::optional<std::string> decode_to_utf8(std::string_view bytes, std::string_view encoding);

/// Whether the WHATWG URL parser encodes a document's queries in `encoding` rather than UTF-8: every encoding
/// but UTF-8, UTF-16 and "replacement" (and "" for an undeclared one, read as UTF-8).
bool query_uses_document_encoding(std::string_view encoding) noexcept;

/// The URL standard's "percent-encode after encoding" for a query: the non-ASCII characters of `utf8_query`
/// encoded in `encoding` and their bytes percent-encoded, a character the encoding lacks written as "&#N;"
/// (percent-encoded: "%26%23N%3B"). ASCII characters are left as they are for the URL parser that follows.
std::string encode_query(std::string_view utf8_query, std::string_view encoding);

} // namespace asiocrawl
