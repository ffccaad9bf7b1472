// Seeds from a file (crawler_config::input_file): the bytes of the file cut into seed lines, a chunk at a
// time, with the byte offset and line number where the next chunk starts. Sans-io: seed_reader does the
// reading; crawl_state admits the lines and keeps the position for a resume.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace asiocrawl::detail {

/// Where reading stands: the byte offset just past the last complete line taken, and its line number + 1.
struct seed_position {
    std::uint64_t offset = 0;
    std::uint64_t line = 1;
    /// The file was read to its end: a crawl with nothing waiting has finished (a re-crawl may begin).
    bool end = false;

    /// "OFFSET LINE", and " end" after it when the file was read to its end, as the state store keeps it.
    std::string to_text() const;
    /// The inverse of to_text(); {0, 1} for empty or malformed text.
    static seed_position from_text(std::string_view text);
};

struct seed_line {
    std::string text;       ///< trimmed of white space; never blank, never a comment
    std::uint64_t line = 0; ///< 1-based line number in the file
};

/// What one read of the seed file gave.
struct seed_chunk {
    std::vector<seed_line> lines;
    /// Lines that could not be seeds for a reason other than their text ("line 7: longer than 8 KiB").
    std::vector<std::string> problems;
    /// Past the last complete line of `lines` (the next read starts there on a resume).
    seed_position position;
    /// The file ended: no more chunks.
    bool end = false;
    /// Reading failed (`problems` says why): treated as the end.
    bool failed = false;
};

/// Cuts bytes into lines ('\n' or "\r\n"), skipping blank lines and those whose first non-blank character is
/// '#'. A line longer than `max_line` bytes is reported and skipped, never held whole.
class seed_splitter {
public:
    static constexpr std::size_t default_max_line = 8 * 1024;

    explicit seed_splitter(seed_position start = {}, std::size_t max_line = default_max_line)
        : position_(start)
        , max_line_(max_line) {}

    /// The next bytes of the file. Complete lines go into `out.lines`; `out.position` is updated.
    void feed(std::string_view bytes, seed_chunk& out);
    /// The end of the file: a last line without a line break counts too.
    void finish(seed_chunk& out);

    seed_position position() const noexcept { return position_; }

private:
    void take_line(std::string_view line, std::uint64_t bytes, seed_chunk& out);

    seed_position position_;
    std::size_t max_line_;
    std::string partial_;             // the start of a line whose end has not come yet
    std::uint64_t partial_bytes_ = 0; // bytes of that line so far (more than partial_ when too long)
    bool too_long_ = false;
};

} // namespace asiocrawl::detail
