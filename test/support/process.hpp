// Runs another program of this project as a child process, for tests of the command-line tools.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <sys/types.h>

namespace asiocrawl::test {

struct process_result {
    int exit_code = -1; ///< exit status, or 128 + signal number when killed by a signal
    std::string out;
    std::string err;
    bool timed_out = false;
    std::uint64_t peak_rss_bytes = 0; ///< the child's peak resident set size, sampled while it ran
};

/// A running child with stdout and stderr captured to temporary files.
class child_process {
public:
    /// `extra_environment` (NAME=VALUE strings) is added to this process's environment for the child.
    explicit child_process(std::vector<std::string> argv, std::vector<std::string> extra_environment = {});
    ~child_process();
    child_process(const child_process&) = delete;
    child_process& operator=(const child_process&) = delete;

    pid_t pid() const noexcept { return pid_; }
    void signal(int signo) const;
    /// What the child has written to stdout so far.
    std::string stdout_so_far() const;
    /// What the child has written to stderr so far.
    std::string stderr_so_far() const;
    /// Waits for the child to exit (killing it after `limit`: a hang fails the test, it does not block it).
    process_result wait(std::chrono::seconds limit = std::chrono::seconds{60});

private:
    pid_t pid_ = -1;
    std::string out_path_;
    std::string err_path_;
    bool reaped_ = false;
};

/// Runs argv to completion.
process_result run_process(std::vector<std::string> argv,
                           std::chrono::seconds limit = std::chrono::seconds{60});
/// Runs argv to completion with NAME=VALUE strings added to the environment.
process_result run_process(std::vector<std::string> argv, std::vector<std::string> extra_environment,
                           std::chrono::seconds limit = std::chrono::seconds{60});

} // namespace asiocrawl::test
