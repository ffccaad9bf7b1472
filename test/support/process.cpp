#include "support/process.hpp"
#include "support/files.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <thread>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace asiocrawl::test {

namespace {

std::string temp_path(const char* tag) {
    std::string path = "/tmp/asiocrawl-test-" + std::string(tag) + "-XXXXXX";
    const int fd = ::mkstemp(path.data());
    if (fd < 0)
        throw std::runtime_error("mkstemp failed");
    ::close(fd);
    return path;
}

/// VmHWM of a running process, in bytes (0 once it has exited). Not wait4's ru_maxrss: Linux carries the
/// high-water mark of the address space a process had before exec into it, and a child spawned with
/// posix_spawn (vfork) had its parent's.
std::uint64_t resident_high_water_mark(pid_t pid) {
    std::ifstream status{"/proc/" + std::to_string(pid) + "/status"};
    std::string line;
    while (std::getline(status, line))
        if (line.starts_with("VmHWM:"))
            return std::strtoull(line.c_str() + 6, nullptr, 10) * 1024; // "VmHWM:   1234 kB"
    return 0;
}

} // namespace

child_process::child_process(std::vector<std::string> argv, std::vector<std::string> extra_environment)
    : out_path_(temp_path("out"))
    , err_path_(temp_path("err")) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, out_path_.c_str(), O_WRONLY | O_TRUNC, 0);
    posix_spawn_file_actions_addopen(&actions, 2, err_path_.c_str(), O_WRONLY | O_TRUNC, 0);
    std::vector<char*> args;
    for (auto& a : argv)
        args.push_back(a.data());
    args.push_back(nullptr);
    std::vector<char*> env;
    // An added variable replaces the inherited one of the same name.
    auto overridden = [&](std::string_view variable) {
        const auto name = variable.substr(0, variable.find('=') + 1);
        for (const auto& extra : extra_environment)
            if (std::string_view(extra).starts_with(name))
                return true;
        return false;
    };
    for (char** variable = environ; *variable; ++variable)
        if (!overridden(*variable))
            env.push_back(*variable);
    for (auto& variable : extra_environment)
        env.push_back(variable.data());
    env.push_back(nullptr);
    const int rc = ::posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), env.data());
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0)
        throw std::runtime_error("cannot start " + argv.at(0));
}

child_process::~child_process() {
    if (!reaped_) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
    }
    std::remove(out_path_.c_str());
    std::remove(err_path_.c_str());
}

void child_process::signal(int signo) const {
    ::kill(pid_, signo);
}

std::string child_process::stdout_so_far() const {
    return read_file(out_path_);
}

std::string child_process::stderr_so_far() const {
    return read_file(err_path_);
}

process_result child_process::wait(std::chrono::seconds limit) {
    process_result result;
    const auto deadline = std::chrono::steady_clock::now() + limit;
    int status = 0;
    for (;;) {
        result.peak_rss_bytes = std::max(result.peak_rss_bytes, resident_high_water_mark(pid_));
        const pid_t done = ::waitpid(pid_, &status, WNOHANG);
        if (done == pid_)
            break;
        if (std::chrono::steady_clock::now() > deadline) {
            result.timed_out = true;
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, &status, 0);
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds{10});
    }
    reaped_ = true;
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    result.out = read_file(out_path_);
    result.err = read_file(err_path_);
    return result;
}

process_result run_process(std::vector<std::string> argv, std::chrono::seconds limit) {
    child_process child{std::move(argv)};
    return child.wait(limit);
}

process_result run_process(std::vector<std::string> argv, std::vector<std::string> extra_environment,
                           std::chrono::seconds limit) {
    child_process child{std::move(argv), std::move(extra_environment)};
    return child.wait(limit);
}

} // namespace asiocrawl::test
