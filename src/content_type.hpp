// Content-Type header parsing (RFC 9110 §8.3): the media type and its charset parameter. Sans-io.
#pragma once

#include <string>
#include <string_view>

namespace asiocrawl::detail {

struct media_type {
    std::string type;    ///< "text/html", lowercased, parameters stripped; empty when the header is empty
    std::string charset; ///< charset parameter, lowercased and unquoted; empty when absent
};

/// Tolerant of what servers send: extra whitespace, quoted or unquoted values, parameters in any case,
/// empty parameters. Never throws.
media_type parse_content_type(std::string_view header);

} // namespace asiocrawl::detail
