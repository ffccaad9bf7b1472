// The character encoding a response declares for its body. Sans-io; nothing here guesses from byte
// statistics.
#pragma once

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

} // namespace asiocrawl
