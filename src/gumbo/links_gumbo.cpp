// gumbo behind the markup guard: the parser of record for `html.parser: gumbo` and the fast extractor's
// oracle.
#include "gumbo/links_gumbo.hpp"

#include "gumbo/markup_guard.hpp"
#include "util/ascii.hpp"

#include <gumbo.h>

#include <algorithm>
#include <csetjmp>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

// The parse in progress on this thread, where a failed gumbo assertion returns to.
thread_local std::jmp_buf* gumbo_recovery_point = nullptr;

} // namespace

// gumbo 0.10.1 asserts on some malformed markup, and Debian builds it with assertions on: the abort would end
// the whole crawl for one page. cmake/gumbo.cmake links gumbo's objects with __assert_fail renamed to this,
// so that a failed assertion abandons that one parse instead. Jumping out of gumbo's C frames is safe:
// everything it allocated is in the parse arena, and it keeps no other state.
extern "C" [[noreturn]] void asiocrawl_gumbo_assert_fail(const char* assertion, const char* file,
                                                         unsigned int line, const char* function) {
    if (gumbo_recovery_point != nullptr)
        std::longjmp(*gumbo_recovery_point, 1);
    // Not inside extract_links (nothing else calls gumbo): what glibc's assert does.
    std::fprintf(stderr, "%s:%u: %s: Assertion `%s' failed.\n", file, line, function, assertion);
    std::abort();
}

namespace asiocrawl {

namespace {

/// gumbo_parse_with_options, or nullptr when gumbo failed one of its assertions on this input.
GumboOutput* parse_or_give_up(const GumboOptions& options, const char* buffer, std::size_t size) {
    std::jmp_buf recovery;
    // Nothing with a destructor lives between here and gumbo's frames: longjmp skips only C code.
    if (setjmp(recovery) != 0) {
        gumbo_recovery_point = nullptr;
        return nullptr;
    }
    gumbo_recovery_point = &recovery;
    GumboOutput* const output = gumbo_parse_with_options(&options, buffer, size);
    gumbo_recovery_point = nullptr;
    return output;
}

// HTML's "ASCII whitespace" is what the spec skips in attribute micro-syntaxes (no vertical tab).
using detail::ascii::is_html_blank;
using detail::ascii::trim_html_whitespace;

// gumbo's memory for one parse, from a bump allocator over a list of chunks: allocating is a pointer bump,
// freeing is nothing, and the whole tree goes at once when the parse is done (no gumbo_destroy_output, which
// walks the tree to free each node). gumbo grows its buffers by allocating, copying and freeing the old
// block, so the old blocks stay until the end of the parse: less than the final size of each buffer in all.
// One per parse thread (extract_links runs on a pool of them); between parses it keeps at most
// `retained_bytes` of chunks, so that one huge page does not hold its memory for good.
class parse_arena {
public:
    parse_arena() = default;
    parse_arena(const parse_arena&) = delete;
    parse_arena& operator=(const parse_arena&) = delete;
    ~parse_arena() {
        for (const chunk& c : chunks_)
            std::free(c.data);
    }

    static void* allocate(void* userdata, std::size_t size) noexcept {
        return static_cast<parse_arena*>(userdata)->take(size);
    }
    static void deallocate(void* /*userdata*/, void* /*block*/) noexcept {}

    /// After a parse: all is free again, and the chunks beyond `retained_bytes` go back to the system.
    void reset() noexcept {
        std::size_t kept = 0;
        std::size_t count = 0;
        while (count < chunks_.size() && kept + chunks_[count].size <= retained_bytes)
            kept += chunks_[count++].size;
        for (std::size_t i = count; i < chunks_.size(); ++i)
            std::free(chunks_[i].data);
        chunks_.resize(count);
        current_ = 0;
        next_ = end_ = nullptr;
        if (!chunks_.empty()) {
            next_ = chunks_.front().data;
            end_ = next_ + chunks_.front().size;
        }
    }

private:
    static constexpr std::size_t alignment = alignof(std::max_align_t);
    static constexpr std::size_t first_chunk = 64 * 1024;
    static constexpr std::size_t largest_chunk = 4 * 1024 * 1024;
    static constexpr std::size_t retained_bytes = 4 * 1024 * 1024;
    static constexpr std::size_t largest_request = std::size_t{1} << 40;

    struct chunk {
        std::byte* data;
        std::size_t size;
    };

    void* take(std::size_t size) noexcept {
        if (size > largest_request)
            return nullptr;
        size = size == 0 ? alignment : (size + alignment - 1) & ~(alignment - 1);
        if (size > static_cast<std::size_t>(end_ - next_))
            return take_slow(size);
        void* block = next_;
        next_ += size;
        return block;
    }

    void* take_slow(std::size_t size) noexcept {
        // The next retained chunk if it is big enough, else a new one twice the last (up to 4 MiB), or the
        // size.
        while (current_ + 1 < chunks_.size()) {
            ++current_;
            if (chunks_[current_].size >= size) {
                next_ = chunks_[current_].data + size;
                end_ = chunks_[current_].data + chunks_[current_].size;
                return chunks_[current_].data;
            }
        }
        std::size_t chunk_size =
            chunks_.empty() ? first_chunk : std::min(chunks_.back().size * 2, largest_chunk);
        chunk_size = std::max(chunk_size, size);
        auto* data = static_cast<std::byte*>(std::malloc(chunk_size));
        if (data == nullptr)
            return nullptr; // as gumbo's default allocator, malloc, would
        try {
            chunks_.push_back({data, chunk_size});
        } catch (...) {
            std::free(data);
            return nullptr;
        }
        current_ = chunks_.size() - 1;
        next_ = data + size;
        end_ = data + chunk_size;
        return data;
    }

    std::vector<chunk> chunks_;
    std::size_t current_ = 0; // the chunk next_ points into
    std::byte* next_ = nullptr;
    std::byte* end_ = nullptr;
};

const char* attribute_value(const GumboElement& element, const char* name) noexcept {
    const GumboAttribute* attribute = gumbo_get_attribute(&element.attributes, name);
    return attribute != nullptr ? attribute->value : nullptr;
}

void add_reference(page_links& links, const char* value) {
    // The raw value is kept (the crawler cleans references itself); only values that cannot name anything
    // but the page itself are dropped.
    if (value != nullptr && !is_html_blank(value)) {
        links.references.emplace_back(value);
    }
}

bool rel_has(const char* rel, std::string_view word) noexcept {
    return rel != nullptr && detail::ascii::has_html_token(rel, word);
}

class link_collector {
public:
    link_collector(page_links& links, bool skip_rel_nofollow)
        : links_(links)
        , skip_rel_nofollow_(skip_rel_nofollow) {}

    void visit(const GumboElement& element) {
        // Foreign content (SVG, MathML) has elements named like HTML ones that mean something else; only
        // SVG's <a> is a hyperlink too.
        if (element.tag_namespace == GUMBO_NAMESPACE_SVG) {
            if (element.tag == GUMBO_TAG_A) {
                add_reference(links_, attribute_value(element, "href"));
            }
            return;
        }
        if (element.tag_namespace != GUMBO_NAMESPACE_HTML) {
            return;
        }

        switch (element.tag) {
        case GUMBO_TAG_A:
        case GUMBO_TAG_AREA:
            if (skip_rel_nofollow_ && rel_has(attribute_value(element, "rel"), "nofollow")) {
                if (const char* href = attribute_value(element, "href");
                    href != nullptr && !is_html_blank(href))
                    ++links_.rel_nofollow;
                break;
            }
            add_reference(links_, attribute_value(element, "href"));
            break;
        case GUMBO_TAG_LINK:
            visit_link(element);
            break;
        case GUMBO_TAG_FRAME:
        case GUMBO_TAG_IFRAME:
            add_reference(links_, attribute_value(element, "src"));
            break;
        case GUMBO_TAG_BASE:
            visit_base(element);
            break;
        case GUMBO_TAG_META:
            visit_meta(element);
            break;
        default:
            break;
        }
    }

private:
    void visit_base(const GumboElement& element) {
        // The document base URL comes from the first <base> that has an href at all, even an unusable one:
        // later <base> elements never count.
        if (seen_base_href_) {
            return;
        }
        const char* href = attribute_value(element, "href");
        if (href == nullptr) {
            return;
        }
        seen_base_href_ = true;
        if (!is_html_blank(href)) {
            links_.base_href.emplace(href);
        }
    }

    void visit_link(const GumboElement& element) {
        // The first <link rel=canonical> with a non-blank href, in document order.
        if (links_.canonical || !rel_has(attribute_value(element, "rel"), "canonical"))
            return;
        if (const char* href = attribute_value(element, "href"); href != nullptr && !is_html_blank(href))
            links_.canonical.emplace(href);
    }

    void visit_meta(const GumboElement& element) {
        if (const char* name = attribute_value(element, "name");
            name != nullptr && detail::ascii::iequals(trim_html_whitespace(name), "robots")) {
            if (const char* content = attribute_value(element, "content"))
                links_.meta_robots |= parse_robots_directives(content);
        }
        const char* http_equiv = attribute_value(element, "http-equiv");
        if (http_equiv == nullptr || !detail::ascii::iequals(http_equiv, "refresh")) {
            return;
        }
        const char* content = attribute_value(element, "content");
        if (content == nullptr) {
            return;
        }
        if (auto target = parse_meta_refresh(content); target && !is_html_blank(*target)) {
            links_.references.push_back(std::move(*target));
        }
    }

    page_links& links_;
    bool skip_rel_nofollow_;
    bool seen_base_href_ = false;
};

const GumboVector* children_of(const GumboNode& node) noexcept {
    switch (node.type) {
    case GUMBO_NODE_DOCUMENT:
        return &node.v.document.children;
    case GUMBO_NODE_ELEMENT:
        return &node.v.element.children;
    default:
        // Template contents are inert (browsers neither load nor follow them) and text, comments and CDATA
        // hold no elements: gumbo never parses <script>/<style> text or comments as markup.
        return nullptr;
    }
}

} // namespace

namespace detail {

page_links extract_links_unguarded(std::string_view parsed, bool skip_rel_nofollow) {
    page_links links;

    GumboOptions options = kGumboDefaultOptions;
    // Parse errors are of no use here, and recording them costs time on exactly the sloppy pages that make
    // many.
    options.max_errors = 0;
    thread_local parse_arena arena;
    struct arena_reset {
        parse_arena& arena;
        ~arena_reset() { arena.reset(); }
    } const reset{arena};
    options.allocator = &parse_arena::allocate;
    options.deallocator = &parse_arena::deallocate;
    options.userdata = &arena;
    // gumbo keeps pointers into the buffer but never writes to it; an empty view may have a null data().
    const char* buffer = parsed.empty() ? "" : parsed.data();
    // Never gumbo_destroy_output: the arena frees the whole tree when this function returns.
    GumboOutput* const output = parse_or_give_up(options, buffer, parsed.size());
    if (output == nullptr) {
        links.parser_gave_up = true;
        return links;
    }
    if (output->document == nullptr) {
        return links;
    }

    link_collector collector{links, skip_rel_nofollow};
    // An explicit stack, not recursion: hostile pages nest elements hundreds of thousands deep. Children are
    // pushed in reverse so that they pop, and are visited, in document order.
    std::vector<const GumboNode*> pending{output->document};
    while (!pending.empty()) {
        const GumboNode* node = pending.back();
        pending.pop_back();
        if (node->type == GUMBO_NODE_ELEMENT) {
            collector.visit(node->v.element);
        }
        if (const GumboVector* children = children_of(*node)) {
            for (unsigned int i = children->length; i > 0; --i) {
                pending.push_back(static_cast<const GumboNode*>(children->data[i - 1]));
            }
        }
    }
    return links;
}

page_links extract_links_gumbo(std::string_view html, std::size_t max_links, bool skip_rel_nofollow) {
    // gumbo 0.10.1 is quadratic (and worse) in nesting depth, formatting elements and attributes per tag, and
    // fails assertions on some CDATA: the guard blanks what exceeds its limits and those CDATA sections, and
    // leaves ordinary pages untouched (no copy). It also bounds the size of the tree (elements, and links
    // past max_links: the rest of the document is cut and its link-bearing tags only counted).
    detail::markup_guard_limits limits;
    limits.max_links = max_links;
    const detail::markup_guard_result guarded = detail::guard_markup(html, limits);
    page_links links = extract_links_unguarded(
        guarded.rewritten ? std::string_view{*guarded.rewritten} : html, skip_rel_nofollow);
    links.dropped_references = guarded.dropped_links;
    return links;
}

} // namespace detail

} // namespace asiocrawl
