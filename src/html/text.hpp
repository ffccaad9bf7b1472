// Text as the HTML tokenizer hands it to tree construction: the input stream's preprocessing (CR LF and CR
// become LF; bytes that are not UTF-8 and code points the standard calls errors become U+FFFD) and character
// references, with the exact outcomes of gumbo 0.10.1, the link extractor's oracle (see docs/LINKS.md).
#pragma once

#include "util/ascii.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace asiocrawl::detail::html {

/// One decoded character reference (or the decision that the '&' starts none).
struct char_ref {
    /// Bytes consumed from the '&' on; 0 when the '&' is an ordinary character.
    std::size_t length = 0;
    /// What it stands for. gumbo keeps its digits in a 32-bit int, so a number past 2^31 wraps and may come
    /// out negative; -1 then reads as the end of the input in text (see docs/LINKS.md).
    std::int32_t first = 0;
    /// The second code point of the names that stand for two; -1 when none.
    std::int32_t second = -1;
};

/// Consumes the character reference that starts at `p` (a '&') before `end`. `additional_allowed` is the
/// attribute value's quote ('>' when unquoted; ' ' in text, which never counts); in an attribute value, a
/// name without ';' followed by '=' or an ASCII letter or digit is not a reference.
char_ref consume_char_ref(const char* p, const char* end, char additional_allowed,
                          bool in_attribute) noexcept;

/// Appends a code point in UTF-8 as gumbo does, negative values included (as their low byte).
void append_code_point(std::string& out, std::int32_t code_point);

/// Appends raw input text after the input stream's preprocessing; NUL becomes U+FFFD as the tokenizer does in
/// attribute names and values.
void append_input_text(std::string& out, std::string_view raw);

/// The value of an attribute as tree construction sees it: `raw` is the text between the quotes (or the
/// unquoted text), `quote` the quote or '>' when unquoted. Cut at the first NUL byte, as gumbo's C strings
/// are.
void decode_attribute_value(std::string& out, std::string_view raw, char quote);

/// True when `raw` decodes to itself: printable ASCII without '&'.
bool is_plain_text(std::string_view raw) noexcept;

} // namespace asiocrawl::detail::html
