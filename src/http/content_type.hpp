// Content-Type header parsing (RFC 9110 §8.3): the media type and its charset parameter. Sans-io.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace asiocrawl::detail {

struct media_type {
    std::string type;    ///< "text/html", lowercased, parameters stripped; empty when the header is empty
    std::string charset; ///< charset parameter, lowercased and unquoted; empty when absent
};

/// Tolerant of what servers send: extra whitespace, quoted or unquoted values, parameters in any case,
/// empty parameters. Never throws.
media_type parse_content_type(std::string_view header);

/// crawler_config::accept_types on a Content-Type header: true when `accept` is empty, the header names no
/// type, the type is HTML (read for its links whatever the list says), or it matches an entry ("image/png",
/// "image/*", "*/*"), case-insensitively.
bool media_type_accepted(std::string_view header, const std::vector<std::string>& accept);

} // namespace asiocrawl::detail
