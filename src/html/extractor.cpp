// extract(): the tokenizer (tokenizer.hpp) feeding tree construction (tree_builder.hpp), one pass.
#include "html/extractor.hpp"

#include "html/tokenizer.hpp"
#include "html/tree_builder.hpp"

namespace asiocrawl::detail::html {

void extract(std::string_view html, const extractor_options& options, extraction& out) {
    out.text.clear();
    out.entries.clear();
    out.dropped_links = 0;
    out.dropped_requisites = 0;
    out.rel_nofollow = 0;
    tree_builder builder(options, out);
    tokenizer lexer(html, builder);
    lexer.run();
}

} // namespace asiocrawl::detail::html
