// Output files: opening them under an open_mode (never silently replacing an earlier crawl's results), and
// repairing what a kill left at the end of a file that a resumed crawl continues.
#pragma once

#include <asiocrawl/outputs/output_config.hpp>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace asiocrawl::outputs {

/// An output that exists already while the open mode is create_new. The CLI exits with status 2 on it.
class output_exists : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// What a repair found at the end of a file.
struct tail_repair {
    /// The file's length after the repair.
    std::uint64_t kept_bytes = 0;
    /// Bytes removed from its end: a torn line or record (0 when the file ended cleanly).
    std::uint64_t cut_bytes = 0;
    /// Whole records kept (WARC records; not counted for JSON Lines, whose repair reads only the tail).
    std::size_t whole_records = 0;
};

/// Opens `path` for writing (O_WRONLY | O_CLOEXEC) and returns the file descriptor; parent directories are
/// created first. An existing regular file is refused under create_new (output_exists, naming `what`, the
/// key, and --overwrite), truncated under overwrite, and under append repaired with repair_jsonl_tail then
/// opened at its end (`repaired` receives what was cut). Something that exists and is not a regular file
/// (a device such as /dev/null or /dev/full, a FIFO) is opened as it is, whatever the mode. Throws
/// output_exists, or std::system_error naming the path.
int open_output_file(const std::string& path, open_mode mode, std::string_view what,
                     tail_repair* repaired = nullptr);

/// Creates the parent directories of `path` when they are missing. Throws std::system_error.
void create_parent_directories(const std::string& path);

/// Cuts a torn last line of a JSON Lines file: the bytes after the last '\n', which a kill in the middle of a
/// write leaves. Reads the file's tail only, so it is cheap on a file of any size. Throws std::system_error.
tail_repair repair_jsonl_tail(const std::string& path);

} // namespace asiocrawl::outputs
