// The tokenizer of the link extractor (see extractor.hpp): it reads the bytes once and hands each token to
// tree construction (tree_builder.hpp), which tells it what to read after a start tag.
#pragma once

#include "html/token.hpp"
#include "html/tree_builder.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace asiocrawl::detail::html {

class tokenizer {
public:
    tokenizer(std::string_view html, tree_builder& builder)
        : p_(html.data())
        , end_(html.data() + html.size())
        , builder_(builder) {}

    void run();

private:
    // -- Text --

    /// Where a numeric character reference in text stands for -1, which gumbo reads as the end of the input.
    const char* text_end_of_input(const char* from, const char* to) noexcept;

    /// Text of the data or plaintext states from `from` to `to`, handed to tree construction in runs of one
    /// kind. With `references`, character references count as what they stand for. Returns false when a
    /// reference ends the input.
    bool text_run(const char* from, const char* to, bool references);
    void emit_text_char(char_class c);

    // -- The data state --

    void data();

    /// At a '<' in the data state.
    void markup();
    void markup_declaration(const char* q);
    void comment(const char* s);
    void bogus_comment(const char* s);
    void cdata(const char* s);
    void doctype(const char* q);
    void end_tag_open(const char* q);
    void start_tag(const char* q);

    /// A start or end tag from its name's first letter; p_ is at its '<'.
    void tag_token(const char* name_start, bool start);
    static bool is_c_space(char c) noexcept;
    static tag lookup(const char* from, const char* to) noexcept;

    /// The attributes after a tag name, up to the '>' (returned); nullptr when the input ends first. With
    /// `collect`, the attributes (their names decoded, later duplicates dropped) go to attributes_.
    const char* attributes(const char* q, bool& self_closing, bool collect);

    /// Decodes an attribute name (after `leaked` bytes of the previous name, a duplicate) and adds the
    /// attribute; false when it is a duplicate, which is dropped.
    bool finish_name(std::string_view raw, std::size_t leaked);

    // -- Raw text states --

    /// RCDATA or RAWTEXT: up to the end tag of the element that opened it.
    void raw_text(bool references);

    /// When `lt` starts the end tag of the open raw text element ("</name" then a space, '/' or '>'), the
    /// name's end.
    const char* appropriate_end_tag(const char* lt) const noexcept;
    void raw_text_end(const char* lt, const char* name_end);

    /// Script data with its escaped and double escaped states.
    void script_data();

    const char* p_;
    const char* end_;
    tree_builder& builder_;
    lexer_state state_ = lexer_state::data;
    const char* raw_text_start_ = nullptr;
    std::vector<attribute> attributes_;
    std::string names_; // the decoded attribute names of the tag being read
    std::size_t last_name_offset_ = 0;
    std::size_t last_name_length_ = 0;
    std::unordered_multimap<std::uint64_t, std::uint32_t> name_index_;
    const char* gap_ = nullptr; // where a run of "</>" began, just before the next token
};

} // namespace asiocrawl::detail::html
