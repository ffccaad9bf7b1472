// A fresh directory under the system's temporary directory, removed with its contents when the test ends.
#pragma once

#include <filesystem>
#include <random>
#include <string>
#include <string_view>
#include <system_error>

namespace asiocrawl::test {

struct temp_dir {
    std::filesystem::path path;

    /// `tag` names the test in the directory's name. `create`: false leaves the directory to the code under
    /// test, which must create it itself.
    explicit temp_dir(std::string_view tag, bool create = true) {
        std::random_device random;
        path = std::filesystem::temp_directory_path() /
               ("asiocrawl-" + std::string(tag) + "-" + std::to_string(random()));
        if (create)
            std::filesystem::create_directories(path);
    }
    ~temp_dir() {
        std::error_code ignored;
        std::filesystem::remove_all(path, ignored);
    }
    temp_dir(const temp_dir&) = delete;
    temp_dir& operator=(const temp_dir&) = delete;
};

} // namespace asiocrawl::test
