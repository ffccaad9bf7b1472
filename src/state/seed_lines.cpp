#include "state/seed_lines.hpp"

#include "util/ascii.hpp"

#include <charconv>

namespace asiocrawl::detail {

namespace {

// A line's blanks: C's isspace set but the newline that ends it.
constexpr std::string_view line_blanks = " \t\r\v\f";

} // namespace

std::string seed_position::to_text() const {
    return std::to_string(offset) + " " + std::to_string(line) + (end ? " end" : "");
}

seed_position seed_position::from_text(std::string_view text) {
    seed_position p;
    constexpr std::string_view end_mark = " end";
    const bool end = text.ends_with(end_mark);
    if (end)
        text.remove_suffix(end_mark.size());
    const auto space = text.find(' ');
    if (space == std::string_view::npos)
        return p;
    std::uint64_t offset = 0;
    std::uint64_t line = 0;
    const auto a = std::from_chars(text.data(), text.data() + space, offset);
    const auto b = std::from_chars(text.data() + space + 1, text.data() + text.size(), line);
    if (a.ec != std::errc{} || a.ptr != text.data() + space || b.ec != std::errc{} ||
        b.ptr != text.data() + text.size() || line == 0)
        return p;
    p.offset = offset;
    p.line = line;
    p.end = end;
    return p;
}

void seed_splitter::take_line(std::string_view line, std::uint64_t bytes, seed_chunk& out) {
    const std::uint64_t number = position_.line;
    position_.offset += bytes;
    ++position_.line;
    if (too_long_) {
        out.problems.push_back("line " + std::to_string(number) + ": longer than " +
                               std::to_string(max_line_) + " bytes, skipped");
        return;
    }
    const auto text = ascii::trim(line, line_blanks);
    if (text.empty() || text.front() == '#')
        return;
    out.lines.push_back({std::string(text), number});
}

void seed_splitter::feed(std::string_view bytes, seed_chunk& out) {
    while (!bytes.empty()) {
        const auto newline = bytes.find('\n');
        const std::string_view piece = bytes.substr(0, newline);
        if (!too_long_) {
            if (partial_.size() + piece.size() > max_line_) {
                too_long_ = true;
                partial_.clear();
                partial_.shrink_to_fit();
            } else {
                partial_.append(piece);
            }
        }
        partial_bytes_ += piece.size();
        if (newline == std::string_view::npos)
            break;
        take_line(partial_, partial_bytes_ + 1, out);
        partial_.clear();
        partial_bytes_ = 0;
        too_long_ = false;
        bytes.remove_prefix(newline + 1);
    }
    out.position = position_;
}

void seed_splitter::finish(seed_chunk& out) {
    if (partial_bytes_ > 0)
        take_line(partial_, partial_bytes_, out);
    partial_.clear();
    partial_bytes_ = 0;
    too_long_ = false;
    out.position = position_;
    out.end = true;
}

} // namespace asiocrawl::detail
