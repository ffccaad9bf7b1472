// Reading a whole file, for tests that check what an output or a fixture holds.
#pragma once

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace asiocrawl::test {

/// The file's bytes, or "" when it cannot be opened (the test's own expectations then fail with the content).
inline std::string read_file(const std::filesystem::path& path) {
    std::ifstream in{path, std::ios::binary};
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

} // namespace asiocrawl::test
