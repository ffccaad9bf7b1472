// The vocabulary between the link extractor's tokenizer (tokenizer.hpp) and its tree construction
// (tree_builder.hpp): the tokens the one emits and the other consumes, and what tree construction tells the
// tokenizer to read next.
#pragma once

#include "html/tags.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace asiocrawl::detail::html {

enum class space : std::uint8_t { html, svg, mathml };

/// What the tokenizer reads after a start tag: tree construction decides.
enum class lexer_state : std::uint8_t { data, rcdata, rawtext, script, plaintext };

/// A character as tree construction tells them apart (gumbo's token types).
enum class char_class : std::uint8_t { whitespace, other, null, cdata };

struct attribute {
    std::string_view name;     // lowercased and decoded, as tree construction compares names
    std::uint32_t name_offset; // while the tag is read: where the name is in the tokenizer's name buffer
    std::string_view value;    // as written, between the quotes
    char quote;                // '"', '\'', '>' when unquoted, 0 when there is no value
};

struct token {
    enum class type : std::uint8_t { start_tag, end_tag, characters, comment, doctype, eof };
    type kind = type::eof;
    tag name = tag::unknown;
    bool self_closing = false;
    // Start tag: the name as written; end tag: everything between "</" and ">". Foreign content compares
    // these.
    std::string_view raw_name;
    const attribute* attributes = nullptr;
    std::size_t attribute_count = 0;
    char_class chars = char_class::other;
    bool quirks = false; // doctype: it puts the document in quirks mode

    bool is_start(tag t) const noexcept { return kind == type::start_tag && name == t; }
    bool is_end(tag t) const noexcept { return kind == type::end_tag && name == t; }
    bool is_start_in(const tag_set& s) const noexcept { return kind == type::start_tag && s.contains(name); }
    bool is_end_in(const tag_set& s) const noexcept { return kind == type::end_tag && s.contains(name); }
    bool is_chars(char_class c) const noexcept { return kind == type::characters && chars == c; }
    bool is_whitespace() const noexcept { return is_chars(char_class::whitespace); }

    /// The attribute of that name (names are unique: the tokenizer drops later duplicates).
    const attribute* find(std::string_view lowercase_name) const noexcept {
        for (std::size_t i = 0; i < attribute_count; ++i)
            if (attributes[i].name == lowercase_name)
                return &attributes[i];
        return nullptr;
    }
};

/// FNV-1a with a final mix: the tokenizer's duplicate-attribute index and tree construction's attribute sets.
inline std::uint64_t hash_bytes(std::string_view bytes, std::uint64_t seed) noexcept {
    std::uint64_t h = seed ^ 0xcbf29ce484222325ull;
    for (const char c : bytes)
        h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    return h ^ (h >> 32);
}

} // namespace asiocrawl::detail::html
