// Saved pages: response bodies stored under DIR/host/path, in wget's layout, by a thread of their own.
#pragma once

#include <asiocrawl/outputs/files.hpp>
#include <asiocrawl/outputs/output_config.hpp>
#include <asiocrawl/record.hpp>

#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace asiocrawl::outputs {

/// Where the body of `url` goes, relative to the save directory, following wget:
/// - the first component is the host, with ":port" when the port is not the scheme's default;
/// - a URL whose path ends in '/' (or is empty) is stored as "index.html" in that directory;
/// - the query stays in the file name after a '?' ("list?page=2"), as wget does on Unix;
/// - path segments are percent-decoded, then made safe: '/', '\' , NUL and control characters are
///   percent-encoded again, "." and ".." become "%2E" and "%2E%2E", empty segments are dropped, and a
///   component longer than 255 bytes is cut and given a hash of the whole so distinct names stay distinct.
/// The result never has an absolute root, a "." or ".." component, or an empty one, so no URL can escape
/// the directory. nullopt for what is not an absolute http(s) URL.
std::optional<std::filesystem::path> save_path_for(std::string_view url);

/// Writes bodies under a directory from a thread of its own. write() copies the body and returns at once.
/// Collisions with the tree already on disk are resolved as wget does for directory URLs: when a directory
/// is needed where a file was saved ("/a" then "/a/b"), the file moves to "a/index.html"; when a file is to
/// be saved where a directory exists, it becomes "<dir>/index.html". A file is written under a temporary
/// name and renamed, so a crash never leaves a half-written page under its real name.
class save_dir_writer {
public:
    /// Creates `directory` if needed. Throws std::filesystem::filesystem_error when it cannot, and
    /// output_exists under create_new when it exists and is not empty (overwrite and append write into it,
    /// replacing the files of pages fetched again, as wget -r does).
    explicit save_dir_writer(std::filesystem::path directory, open_mode mode = open_mode::create_new,
                             std::size_t queue_limit_bytes = 64u << 20);
    /// Closes (see close()).
    ~save_dir_writer();
    save_dir_writer(const save_dir_writer&) = delete;
    save_dir_writer& operator=(const save_dir_writer&) = delete;

    /// Queues `body` to be saved for `r.url` (use as the crawler's body sink).
    void write(const record& r, std::string_view body);

    /// True from when more than the queue limit waited until it is back under half of it: pass to
    /// crawler::set_backpressure.
    bool busy() const noexcept;
    /// Called on the writer thread whenever busy() turns false. Set before the first write().
    void set_on_drained(std::function<void()> on_drained);
    /// Called once, on the writer thread, with error() when the first write fails. Set before the first
    /// write().
    void set_on_error(std::function<void(const std::string& error)> on_error);
    /// `done` runs on the writer thread once every body written before is saved under its name, and with
    /// `sync` fsync'd with its directory.
    void barrier(bool sync, std::function<void()> done);
    /// The first failure so far ("" when none).
    std::string error() const;

    /// Writes what is queued and stops the thread. Idempotent. Returns "" or the first error.
    std::string close();

    /// Files written (complete after close()).
    std::size_t files_written() const noexcept;

private:
    struct state;
    std::shared_ptr<state> state_;
};

} // namespace asiocrawl::outputs
