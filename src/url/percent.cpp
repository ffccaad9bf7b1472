#include "url/percent.hpp"

#include "util/ascii.hpp"

#include <boost/url/grammar/string_token.hpp>
#include <boost/url/pct_string_view.hpp>

namespace asiocrawl::detail {

namespace urls = boost::urls;

std::string percent_decode(std::string_view text) {
    // The usual case: the whole text is well-formed (Boost.URL's encoded accessors never give anything else).
    if (const auto checked = urls::make_pct_string_view(text))
        return checked->decode();
    // Runs of well-formed text go to Boost.URL; a '%' that starts no escape is copied between them.
    std::string out;
    out.reserve(text.size());
    for (;;) {
        auto stray = text.find('%');
        while (stray != std::string_view::npos && stray + 2 < text.size() &&
               ascii::is_hex_digit(text[stray + 1]) && ascii::is_hex_digit(text[stray + 2]))
            stray = text.find('%', stray + 3);
        urls::make_pct_string_view(text.substr(0, stray))
            .value()
            .decode({}, urls::string_token::append_to(out));
        if (stray == std::string_view::npos)
            return out;
        out += '%';
        text.remove_prefix(stray + 1);
    }
}

} // namespace asiocrawl::detail
