#include <asiocrawl/outputs/files.hpp>

#include <cerrno>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace asiocrawl::outputs {

namespace {

[[noreturn]] void throw_errno(const std::string& what) {
    throw std::system_error(errno, std::generic_category(), what);
}

} // namespace

void create_parent_directories(const std::string& path) {
    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    if (parent.empty())
        return;
    std::error_code ec;
    std::filesystem::create_directories(parent, ec);
    if (ec)
        throw std::system_error(ec, "cannot create the directory " + parent.string());
}

tail_repair repair_jsonl_tail(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0)
        throw_errno("cannot open " + path);
    struct fd_closer {
        int fd;
        ~fd_closer() { ::close(fd); }
    } closer{fd};
    struct stat info {};
    if (::fstat(fd, &info) != 0)
        throw_errno("cannot stat " + path);
    const auto size = static_cast<std::uint64_t>(info.st_size);
    tail_repair result;
    result.kept_bytes = size;
    // Backwards, a block at a time, to the last line break.
    std::vector<char> block(64 * 1024);
    std::uint64_t end = size;
    bool first_block = true;
    while (end > 0) {
        const std::uint64_t begin = end > block.size() ? end - block.size() : 0;
        const auto length = static_cast<std::size_t>(end - begin);
        const ssize_t n = ::pread(fd, block.data(), length, static_cast<off_t>(begin));
        if (n < 0 || static_cast<std::size_t>(n) != length)
            throw_errno("cannot read " + path);
        if (first_block && block[length - 1] == '\n')
            return result; // ends cleanly
        first_block = false;
        for (std::size_t i = length; i-- > 0;) {
            if (block[i] == '\n') {
                result.kept_bytes = begin + i + 1;
                result.cut_bytes = size - result.kept_bytes;
                if (::ftruncate(fd, static_cast<off_t>(result.kept_bytes)) != 0)
                    throw_errno("cannot cut the torn last line of " + path);
                return result;
            }
        }
        end = begin;
    }
    // Not one whole line: everything is torn.
    result.kept_bytes = 0;
    result.cut_bytes = size;
    if (size > 0 && ::ftruncate(fd, 0) != 0)
        throw_errno("cannot cut the torn last line of " + path);
    return result;
}

int open_output_file(const std::string& path, open_mode mode, std::string_view what, tail_repair* repaired) {
    struct stat info {};
    const bool exists = ::stat(path.c_str(), &info) == 0;
    int flags = O_WRONLY | O_CLOEXEC;
    if (exists && !S_ISREG(info.st_mode)) {
        // /dev/null, /dev/full, a FIFO: nothing to replace, and O_TRUNC/O_APPEND mean nothing there.
    } else if (exists) {
        switch (mode) {
        case open_mode::create_new:
            throw output_exists(std::string(what) + ": " + path +
                                " exists already (--overwrite or output.overwrite: true replaces it)");
        case open_mode::overwrite:
            flags |= O_TRUNC;
            break;
        case open_mode::append:
            if (tail_repair cut = repair_jsonl_tail(path); repaired)
                *repaired = cut;
            flags |= O_APPEND;
            break;
        }
    } else {
        create_parent_directories(path);
        // O_EXCL: a file another process creates meanwhile is not taken over either.
        flags |= O_CREAT | (mode == open_mode::create_new ? O_EXCL : 0) |
                 (mode == open_mode::append ? O_APPEND : 0);
    }
    const int fd = ::open(path.c_str(), flags, 0644);
    if (fd < 0) {
        if (errno == EEXIST)
            throw output_exists(std::string(what) + ": " + path +
                                " exists already (--overwrite replaces it)");
        throw std::system_error(errno, std::generic_category(), std::string(what) + ": cannot open " + path);
    }
    return fd;
}

} // namespace asiocrawl::outputs
