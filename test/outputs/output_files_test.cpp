// Opening output files under an open_mode, and cutting the torn last line a kill leaves in JSON Lines.
#include <asiocrawl/outputs/files.hpp>

#include "support/files.hpp"
#include "support/temp_dir.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <system_error>

#include <unistd.h>

using asiocrawl::test::read_file;

namespace {

namespace fs = std::filesystem;
using namespace asiocrawl::outputs;
using asiocrawl::test::temp_dir;

void write_file(const fs::path& path, const std::string& text) {
    std::ofstream{path, std::ios::binary} << text;
}

void write_through(int fd, const std::string& text) {
    ASSERT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
    ::close(fd);
}

TEST(OpenOutputFile, CreatesParentDirectories) {
    temp_dir dir{"open-output"};
    const fs::path path = dir.path / "archive" / "2024" / "records.jsonl";
    write_through(open_output_file(path.string(), open_mode::create_new, "output.records"), "x\n");
    EXPECT_EQ(read_file(path), "x\n");
}

TEST(OpenOutputFile, NeverSilentlyReplacesAFile) {
    temp_dir dir{"open-output-exists"};
    const fs::path path = dir.path / "records.jsonl";
    write_file(path, "earlier crawl\n");
    try {
        ::close(open_output_file(path.string(), open_mode::create_new, "output.records"));
        FAIL() << "an existing file was opened under create_new";
    } catch (const output_exists& e) {
        EXPECT_THAT(e.what(), testing::HasSubstr("output.records: " + path.string() + " exists already"));
        EXPECT_THAT(e.what(), testing::HasSubstr("--overwrite"));
    }
    EXPECT_EQ(read_file(path), "earlier crawl\n") << "left as it was";

    write_through(open_output_file(path.string(), open_mode::overwrite, "output.records"), "new\n");
    EXPECT_EQ(read_file(path), "new\n");
    write_through(open_output_file(path.string(), open_mode::append, "output.records"), "more\n");
    EXPECT_EQ(read_file(path), "new\nmore\n");
}

TEST(OpenOutputFile, DevicesAreWrittenAsTheyAre) {
    // /dev/null exists and is not a regular file: no mode refuses or truncates it.
    for (auto mode : {open_mode::create_new, open_mode::overwrite, open_mode::append})
        ::close(open_output_file("/dev/null", mode, "output.records"));
}

TEST(OpenOutputFile, AnUnusablePlaceIsASystemError) {
    temp_dir dir{"open-output-bad"};
    write_file(dir.path / "a-file", "");
    EXPECT_THROW(open_output_file((dir.path / "a-file" / "below" / "x.jsonl").string(), open_mode::create_new,
                                  "output.records"),
                 std::system_error);
}

TEST(OpenOutputFile, AppendCutsATornLastLineFirst) {
    temp_dir dir{"open-output-append"};
    const fs::path path = dir.path / "records.jsonl";
    write_file(path, "{\"url\":\"a\"}\n{\"url\":\"b\"}\n{\"url\":\"c\",\"st");
    tail_repair repair;
    write_through(open_output_file(path.string(), open_mode::append, "output.records", &repair),
                  "{\"url\":\"c\"}\n");
    EXPECT_EQ(repair.cut_bytes, 14u);
    EXPECT_EQ(read_file(path), "{\"url\":\"a\"}\n{\"url\":\"b\"}\n{\"url\":\"c\"}\n");
}

struct torn_case {
    std::string text;
    std::string kept;
};

TEST(RepairJsonlTail, CutsAfterTheLastLineBreak) {
    const std::string long_line(200'000, 'y'); // longer than the block read backwards
    const torn_case cases[] = {
        {"", ""},
        {"a\n", "a\n"},
        {"a\nb\n", "a\nb\n"},
        {"a\nb", "a\n"},
        {"torn", ""},
        {"a\n" + long_line, "a\n"},
        {long_line + "\n" + long_line, long_line + "\n"},
        {"a\n\n", "a\n\n"},
    };
    temp_dir dir{"repair-jsonl"};
    for (const auto& c : cases) {
        SCOPED_TRACE(c.text.substr(0, 20));
        const fs::path path = dir.path / "records.jsonl";
        write_file(path, c.text);
        const tail_repair repair = repair_jsonl_tail(path.string());
        EXPECT_EQ(read_file(path), c.kept);
        EXPECT_EQ(repair.kept_bytes, c.kept.size());
        EXPECT_EQ(repair.cut_bytes, c.text.size() - c.kept.size());
    }
    EXPECT_THROW(repair_jsonl_tail((dir.path / "missing.jsonl").string()), std::system_error);
}

} // namespace
