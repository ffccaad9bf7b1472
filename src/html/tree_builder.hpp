// Tree construction of the link extractor (see extractor.hpp): the insertion modes, the stack of open
// elements, the list of active formatting elements, and the document-order list the references go into. It
// takes the tokens of tokenizer.hpp one by one and answers what the tokenizer reads next.
#pragma once

#include "html/extractor.hpp"
#include "html/tags.hpp"
#include "html/token.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace asiocrawl::detail::html {

enum class mode : std::uint8_t {
    initial,
    before_html,
    before_head,
    in_head,
    in_head_noscript,
    after_head,
    in_body,
    text,
    in_table,
    in_table_text,
    in_caption,
    in_column_group,
    in_table_body,
    in_row,
    in_cell,
    in_select,
    in_select_in_table,
    in_template,
    after_body,
    in_frameset,
    after_frameset,
    after_after_body,
    after_after_frameset,
};

enum class scope_kind : std::uint8_t { normal, list_item, button, table, select };

// ---- The document-order list ------------------------------------------------------------------------------
//
// The references go into a doubly linked list whose order is the document order of the tree a full parser
// would build. Each open element has two markers in it, around its content; inserting into an element links
// before its end marker, foster parenting links before the table's start marker, and the adoption agency
// moves the range between an element's markers. Closed elements lose their markers: their content never moves
// alone.

inline constexpr std::uint32_t no_item = 0; // item 0 is the list's sentinel
inline constexpr std::uint32_t marker = UINT32_MAX;

struct list_item {
    std::uint32_t prev;
    std::uint32_t next;
    std::uint32_t entry; // index into entries_, or `marker`
};

// ---- Elements ---------------------------------------------------------------------------------------------

inline constexpr std::uint32_t no_element = 0; // element 0 is unused; in the formatting list it is the marker

struct element {
    tag name = tag::unknown;
    space ns = space::html;
    bool html_integration_point = false;
    bool open = false;
    std::uint32_t refs = 0; // stack, formatting list, head and form pointers
    std::uint32_t start = no_item;
    std::uint32_t end = no_item;
    std::string_view raw_name;
    // For the Noah's Ark clause: the attributes as a set.
    std::uint64_t attributes_hash = 0;
    std::uint32_t attribute_count = 0;
    // An <a>'s href when it makes a link: clones make it again.
    bool has_link = false;
    std::uint32_t link_offset = 0;
    std::uint32_t link_length = 0;
};

/// What the tokenizer calls per token, and the small functions those call, are defined here (inline: the
/// tokenizer is another file); the rest is in tree_builder.cpp.
class tree_builder {
public:
    tree_builder(const extractor_options& options, extraction& out)
        : options_(options)
        , out_(out) {
        items_.push_back({0, 0, marker}); // the sentinel
        elements_.emplace_back();         // no_element
    }

    // -- Questions of the tokenizer --

    bool stopped() const noexcept { return stopped_; }
    bool current_node_is_foreign() const noexcept {
        return !stack_.empty() && el(stack_.back()).ns != space::html;
    }
    bool in_initial_mode() const noexcept { return mode_ == mode::initial; }
    tag raw_text_tag() const noexcept { return raw_text_tag_; }

    /// True when a run of text of any kind would change nothing now.
    bool text_is_noop() const noexcept {
        if (ignore_next_linefeed_)
            return false;
        if (stack_.empty())
            return false;
        const element& current = el(stack_.back());
        const bool html_content = current.ns == space::html || current.html_integration_point ||
                                  (current.ns == space::mathml && is_mathml_text_integration_point(current));
        if (!html_content) // foreign content: frameset-ok, and pending table text that it adds to
            return !frameset_ok_ && (mode_ != mode::in_table_text || pending_table_text_);
        switch (mode_) {
        case mode::in_body:
        case mode::in_template:
            return !frameset_ok_ && reconstruct_is_noop();
        case mode::in_select:
        case mode::in_select_in_table:
        case mode::in_frameset:
        case mode::after_frameset:
            return true;
        case mode::after_after_frameset:
            return reconstruct_is_noop();
        case mode::in_table_text:
            return pending_table_text_;
        default:
            return false;
        }
    }

    /// Consumes the "ignore the next line feed" flag of <pre>, <listing> and <textarea>.
    bool take_ignore_linefeed() noexcept {
        const bool flag = ignore_next_linefeed_;
        ignore_next_linefeed_ = false;
        return flag;
    }

    // -- Tokens --

    lexer_state start_tag(const token& t) {
        next_lexer_state_ = lexer_state::data;
        process(t);
        return next_lexer_state_;
    }
    void end_tag(const token& t) { process(t); }
    void characters(char_class c, std::size_t count) {
        token t;
        t.kind = token::type::characters;
        t.chars = c;
        process(t);
        if (count > 1)
            process(t); // after the first, a run changes nothing more: the mode it ends in is stable
    }
    void comment() {
        token t;
        t.kind = token::type::comment;
        process(t);
    }
    void doctype(bool quirks) {
        token t;
        t.kind = token::type::doctype;
        t.quirks = quirks;
        process(t);
    }
    /// The text of the raw text element now open (for <style>), before its end tag or the end of input.
    void raw_text(std::string_view text) { raw_text_ = text; }
    void end_of_input() {
        token t;
        t.kind = token::type::eof;
        process(t);
        finish();
    }

private:
    // -- Elements and the stack --

    element& el(std::uint32_t id) noexcept { return elements_[id]; }
    const element& el(std::uint32_t id) const noexcept { return elements_[id]; }

    std::uint32_t new_element(tag name, space ns);
    void retain(std::uint32_t id) noexcept;
    void release(std::uint32_t id);

    std::uint32_t current() const noexcept { return stack_.back(); }
    bool is_html(std::uint32_t id, tag t) const noexcept;
    bool is_html_in(std::uint32_t id, const tag_set& s) const noexcept;
    bool current_is(tag t) const noexcept;
    static bool is_mathml_text_integration_point(const element& e) noexcept {
        return e.ns == space::mathml && (e.name == tag::mi || e.name == tag::mo || e.name == tag::mn ||
                                         e.name == tag::ms || e.name == tag::mtext);
    }
    bool is_special(std::uint32_t id) const noexcept;
    bool in_scope_set(const element& e, scope_kind kind) const noexcept;

    bool has_in_scope(const tag_set& targets, scope_kind kind) const noexcept;
    bool has_in_scope(tag t, scope_kind kind = scope_kind::normal) const noexcept;
    bool has_open(tag t) const noexcept;
    bool has_node_in_scope(std::uint32_t id) const noexcept;
    std::ptrdiff_t stack_index(std::uint32_t id) const noexcept;

    void push(std::uint32_t id);
    /// An element leaves the stack: its markers go (its content stays where it is).
    void closed(std::uint32_t id);
    std::uint32_t pop();
    bool has_open_anywhere(tag t) const noexcept;
    void pop_until(std::uint32_t id);
    void pop_until_html(tag t);
    void remove_from_stack(std::uint32_t id);

    // -- The document-order list --

    std::uint32_t new_item(std::uint32_t entry);
    void link_before(std::uint32_t at, std::uint32_t first, std::uint32_t last) noexcept;
    void link_before(std::uint32_t at, std::uint32_t item) noexcept;
    void unlink(std::uint32_t first, std::uint32_t last) noexcept;
    void unlink_free(std::uint32_t i) noexcept;
    /// Gives an element its markers, as a detached pair.
    void make_markers(element& e);

    // -- References --

    bool references_are_inert() const noexcept;

    void emit(entry_kind kind, requisite_kind requisite, std::string_view value, std::uint32_t before);
    void emit_stored(entry_kind kind, requisite_kind requisite, std::uint32_t offset, std::uint32_t length,
                     std::uint32_t before);

    /// Between tokens, where every element that may still be cloned is on the stack or in the formatting
    /// list.
    void maybe_compact() {
        if ((options_.max_links != 0 && (stored_links_ >= 2 * options_.max_links + 16 ||
                                         stored_requisites_ >= 2 * options_.max_links + 16)) ||
            stored_bases_ >= 64)
            compact();
    }

    /// Keeps the first max_links links and requisites and the first base, in document order, and the values
    /// that they and the open <a> elements need: later insertions can only come before what it drops.
    void compact();
    void finish();
    std::string& scratch();
    std::string_view decoded(const attribute& a);
    void emit_link_attribute(const token& t, std::string_view name, std::uint32_t before, element* e);

    void emit_requisite_attribute(const token& t, std::string_view name, requisite_kind kind,
                                  std::uint32_t before);
    void emit_css(std::string_view css, std::uint32_t before);
    void emit_srcset(std::string_view srcset, std::uint32_t before);

    /// The references an element makes, placed before `before` (its end marker, or where it goes when it is
    /// void).
    void emit_references(element& e, const token& t, std::uint32_t before);
    void emit_requisites(const element& e, const token& t, std::uint32_t before);
    static std::optional<requisite_kind> link_requisite(std::string_view rel);
    /// True when the space-separated tokens of `rel` hold `word` (lowercase), ASCII case-insensitively.
    static bool rel_has(std::string_view rel, std::string_view word);

    // -- Inserting elements --

    /// Where a new node goes: before this item of the list.
    std::uint32_t insertion_point(std::uint32_t override_target = no_element);
    void set_attributes_identity(element& e, const token& t);

    /// A start tag's element, inserted at the appropriate place and pushed; no_element when the stack is full
    /// and the tag is an ordinary one (its references are still taken).
    std::uint32_t insert_element(const token& t, space ns, bool bounded);
    std::uint32_t insert_html(const token& t, bool bounded = true);
    void insert_void(const token& t);
    std::uint32_t insert_implied(tag name);
    std::uint32_t clone_of(std::uint32_t original);
    void generic_raw_text(const token& t, lexer_state state);

    // -- The list of active formatting elements --

    bool reconstruct_is_noop() const noexcept {
        return formatting_.empty() || formatting_.back() == no_element || el(formatting_.back()).open;
    }
    /// Adds an element that was pushed (nothing when the stack was full and it was not).
    void add_formatting(std::uint32_t id);
    void add_marker();
    void remove_formatting_at(std::size_t i);
    std::ptrdiff_t formatting_index(std::uint32_t id) const noexcept;
    void clear_formatting_to_marker();
    std::uint32_t last_formatting_a() const noexcept;

    void reconstruct();

    /// The adoption agency algorithm, as gumbo 0.10.1 runs it (after its step 13.5 a node stays on the
    /// stack).
    void adoption_agency(tag subject);
    /// Moves `child` (with its content) to the end of `parent`'s content.
    void move_into(std::uint32_t child, std::uint32_t parent);

    // -- Helpers of the rules --

    void generate_implied_end_tags(tag except = tag::count_);
    void generate_implied_end_tags_thoroughly();
    void close_element(tag t);
    void close_p_in_button_scope();
    void clear_stack_to(const tag_set& context);
    bool close_table();
    void close_cell(tag cell);
    void close_current_cell();
    void close_select();
    void reset_insertion_mode();
    bool input_is_hidden(const token& t);

    // -- Dispatch --

    void process(const token& t) {
        if (stopped_)
            return;
        if (t.kind != token::type::characters)
            ignore_next_linefeed_ = false;
        maybe_compact();
        do {
            reprocess_ = false;
            dispatch(t);
        } while (reprocess_ && !stopped_);
    }

    void dispatch(const token& t);
    void in_mode(const token& t);
    void reprocess(mode m);

    // -- The insertion modes --

    void initial(const token& t);
    void before_html(const token& t);
    void before_head(const token& t);
    void set_head(std::uint32_t id);
    void in_head(const token& t);
    void in_head_noscript(const token& t);
    void after_head(const token& t);
    void in_body(const token& t);
    void in_body_start(const token& t);
    void in_body_frameset(const token& t);
    void close_list_item(bool is_li);
    void set_form(std::uint32_t id);
    void in_body_end(const token& t);
    void text(const token& t);
    void in_table(const token& t);
    void in_table_text(const token& t);
    void in_caption(const token& t);
    void in_column_group(const token& t);
    void in_table_body(const token& t);
    void in_row(const token& t);
    void in_cell(const token& t);
    void in_select(const token& t);
    void in_select_in_table(const token& t);
    void in_template(const token& t);
    void switch_template_mode(mode m);
    void after_body(const token& t);
    void in_frameset(const token& t);
    void after_frameset(const token& t);
    void after_after_body(const token& t);
    void after_after_frameset(const token& t);
    void foreign_content(const token& t);

    const extractor_options& options_;
    extraction& out_;

    std::vector<list_item> items_;
    std::uint32_t free_items_ = no_item;
    std::vector<extraction::entry> entries_;
    std::size_t stored_links_ = 0;
    // The page has had more links than the cap: every compaction from then on keeps distinct documents only,
    // also one that finds no more than the cap stored (an earlier one left the kept links, and a later link
    // may repeat one of them).
    bool links_over_cap_ = false;
    // Past the cap: repeats of a kept link dropped uncounted, by document. Counted after all if a link
    // inserted before them later (foster parenting) takes that document's place. At most max_links entries.
    std::unordered_map<std::string, std::size_t> dropped_repeats_;
    std::size_t stored_requisites_ = 0;
    std::size_t stored_bases_ = 0;

    std::vector<element> elements_;
    std::vector<std::uint32_t> free_elements_;
    std::vector<std::uint32_t> stack_;
    std::vector<std::uint32_t> formatting_; // no_element is a marker
    std::vector<mode> template_modes_;
    std::uint32_t head_element_ = no_element;
    std::uint32_t form_element_ = no_element;
    std::size_t templates_open_ = 0;

    mode mode_ = mode::initial;
    mode original_mode_ = mode::initial;
    lexer_state next_lexer_state_ = lexer_state::data;
    tag raw_text_tag_ = tag::unknown;
    std::string_view raw_text_;
    bool frameset_ok_ = true;
    bool foster_ = false;
    bool quirks_ = false;
    bool ignore_next_linefeed_ = false;
    bool pending_table_text_ = false;
    bool reprocess_ = false;
    bool stopped_ = false;

    std::string scratch_;
};

} // namespace asiocrawl::detail::html
