// A record's durable form: what a resumed crawl reads back for the classic per-URL report. Lossless for
// the error codes a crawl makes (ours, the system's, DNS, HTTP parsing); an error of another category comes
// back with its message and kind name only. The answer's protocol (http/1.1, h2) is kept since issue 24; a
// record written before reads back with none.
#pragma once

#include <asiocrawl/record.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace asiocrawl::detail {

std::string encode(const record& r);
/// nullopt when `bytes` is not what encode() writes.
std::optional<record> decode_record(std::string_view bytes);

} // namespace asiocrawl::detail
