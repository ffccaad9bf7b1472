// The streaming link extractor: one pass over the bytes through the HTML tokenizer and the part of tree
// construction that decides which elements exist and where (insertion modes, the stack of open elements, the
// list of active formatting elements, foster parenting, the adoption agency, foreign content, templates,
// frameset). It builds no tree: it keeps the open elements, and the references it finds in a list whose order
// is the document order of the tree a full parser would build. gumbo 0.10.1 is its oracle: where gumbo
// departs from the HTML standard the extractor does the same, and docs/LINKS.md lists where it deliberately
// does not.
//
// Internal to asiocrawl (links.cpp, page_links.cpp); sans-io; time linear in the input (see extract_options).
#pragma once

#include "html/links.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace asiocrawl::detail::html {

enum class entry_kind : std::uint8_t {
    link,      ///< a/area href, frame/iframe src, SVG a href or xlink:href, meta refresh URL
    base,      ///< the href of a <base> (possibly blank)
    requisite, ///< see requisite_kind
    canonical, ///< the href of a <link rel=canonical> (the first one in document order counts)
    robots,    ///< what a <meta name=robots> says: "1" noindex, "2" nofollow, "3" both
};

struct extractor_options {
    /// Links kept, in document order; 0: all. Requisites have a cap of the same size of their own.
    std::size_t max_links = 0;
    /// Also collect page requisites (images, scripts, stylesheets, ...).
    bool requisites = false;
    /// Leave out the links of <a>/<area> elements whose rel holds "nofollow" (counted in rel_nofollow).
    bool skip_rel_nofollow = false;
    /// Open elements beyond which an ordinary start tag opens no element (its references are still taken):
    /// keeps every stack walk short on hostile nesting. Chromium caps its DOM depth at 512 too.
    std::size_t max_depth = 512;
    /// Active formatting elements since the last marker beyond which the oldest is forgotten: bounds the work
    /// of re-creating them after each block.
    std::size_t max_formatting = 128;
};

struct extraction {
    struct entry {
        entry_kind kind;
        requisite_kind requisite;
        std::uint32_t offset;
        std::uint32_t length;
    };
    std::string text;           ///< the values, referenced by the entries
    std::vector<entry> entries; ///< in document order
    std::size_t dropped_links = 0;
    std::size_t dropped_requisites = 0;
    /// <a>/<area> links left out for their rel=nofollow (extractor_options::skip_rel_nofollow).
    std::size_t rel_nofollow = 0;

    std::string_view value(const entry& e) const noexcept {
        return std::string_view(text).substr(e.offset, e.length);
    }
};

/// Extracts the references of `html` (UTF-8, or any bytes: malformed input is read as the HTML standard
/// says).
void extract(std::string_view html, const extractor_options& options, extraction& out);

} // namespace asiocrawl::detail::html
