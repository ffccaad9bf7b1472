// A small tmpfs mounted for a test: a disk that fills up for real. Mounted in a mount namespace of the test
// process's own when it can make one (then the mount goes with the process, however it ends), else in the
// current one and unmounted (lazily) when the object goes. Needs root (CAP_SYS_ADMIN): without it, why is
// in `problem` and the test skips, saying so.
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <sched.h>
#include <sys/mount.h>
#include <sys/statvfs.h>

namespace asiocrawl::test {

class tmpfs_mount {
public:
    /// Mounts a tmpfs of `bytes` on `dir` (created when absent).
    tmpfs_mount(std::filesystem::path dir, std::uint64_t bytes)
        : dir_(std::move(dir)) {
        private_namespace();
        std::error_code ec;
        std::filesystem::create_directories(dir_, ec);
        const std::string options = "size=" + std::to_string(bytes) + ",mode=0755";
        if (::mount("tmpfs", dir_.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) != 0) {
            problem = "cannot mount a tmpfs on " + dir_.string() + ": " + std::strerror(errno) +
                      " (the full-disk tests need root)";
            return;
        }
        mounted_ = true;
    }
    ~tmpfs_mount() {
        if (mounted_)
            ::umount2(dir_.c_str(), MNT_DETACH);
    }
    tmpfs_mount(const tmpfs_mount&) = delete;
    tmpfs_mount& operator=(const tmpfs_mount&) = delete;

    const std::filesystem::path& path() const { return dir_; }

    /// Bytes free for files.
    std::uint64_t available() const {
        struct statvfs info {};
        if (::statvfs(dir_.c_str(), &info) != 0)
            return 0;
        return static_cast<std::uint64_t>(info.f_bavail) * info.f_frsize;
    }

    /// Writes `filler` (a file on this tmpfs) so that about `leave` bytes stay free.
    void fill_leaving(std::uint64_t leave, const std::filesystem::path& filler) const {
        const std::uint64_t free = available();
        std::ofstream out{filler, std::ios::binary};
        const std::vector<char> chunk(64 * 1024, 'x');
        for (std::uint64_t left = free > leave ? free - leave : 0; left > 0 && out;) {
            const auto n = static_cast<std::streamsize>(std::min<std::uint64_t>(left, chunk.size()));
            out.write(chunk.data(), n);
            left -= static_cast<std::uint64_t>(n);
        }
    }

    /// "" when mounted; else why not.
    std::string problem;

private:
    /// Once per process, while it has one thread (unshare refuses CLONE_NEWNS otherwise): mounts made
    /// afterwards are the process's own, seen by its children, gone with it.
    static void private_namespace() {
        static const bool done = [] {
            if (::unshare(CLONE_NEWNS) != 0)
                return false;
            // Else a mount here would propagate back to the namespace the process came from.
            return ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0;
        }();
        (void)done;
    }

    std::filesystem::path dir_;
    bool mounted_ = false;
};

} // namespace asiocrawl::test
