#include <asiocrawl/outputs/save_dir.hpp>

#include "support/files.hpp"
#include "support/temp_dir.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

using asiocrawl::test::read_file;

namespace {

namespace fs = std::filesystem;
using asiocrawl::record;
using asiocrawl::outputs::save_dir_writer;
using asiocrawl::outputs::save_path_for;

struct path_case {
    const char* name;
    std::string url;
    std::string path; // empty: no path (not an http URL)
};

class SavePath : public testing::TestWithParam<path_case> {};

TEST_P(SavePath, MapsLikeWgetAndStaysInside) {
    const auto result = save_path_for(GetParam().url);
    if (GetParam().path.empty()) {
        EXPECT_FALSE(result.has_value());
        return;
    }
    ASSERT_TRUE(result.has_value());
    EXPECT_EQ(result->string(), GetParam().path);
    EXPECT_TRUE(result->is_relative());
    for (const fs::path& component : *result) {
        EXPECT_NE(component, "..");
        EXPECT_NE(component, ".");
        EXPECT_FALSE(component.empty());
        EXPECT_LE(component.string().size(), 255u);
        EXPECT_EQ(component.string().find('\0'), std::string::npos);
    }
}

const std::string long_segment(300, 'a');

INSTANTIATE_TEST_SUITE_P(
    Urls, SavePath,
    testing::Values(
        path_case{"root", "http://example.com/", "example.com/index.html"},
        path_case{"no_path", "http://example.com", "example.com/index.html"},
        path_case{"file", "http://example.com/a/b.html", "example.com/a/b.html"},
        path_case{"directory_url", "http://example.com/a/b/", "example.com/a/b/index.html"},
        path_case{"query_kept_in_name", "http://example.com/list?page=2&x=y", "example.com/list?page=2&x=y"},
        path_case{"query_on_directory", "http://example.com/dir/?q=1", "example.com/dir/index.html?q=1"},
        path_case{"slash_in_query_encoded", "http://example.com/s?next=/a/../b",
                  "example.com/s?next=%2Fa%2F..%2Fb"},
        path_case{"fragment_dropped", "http://example.com/a#top", "example.com/a"},
        path_case{"default_port_dropped", "http://example.com:80/a", "example.com/a"},
        path_case{"https_default_port_dropped", "https://example.com:443/a", "example.com/a"},
        path_case{"other_port_kept", "http://127.0.0.1:8080/a", "127.0.0.1:8080/a"},
        path_case{"host_lowercased", "http://EXAMPLE.com/A", "example.com/A"},
        path_case{"ipv6_host", "http://[::1]:81/x", "[::1]:81/x"},
        path_case{"userinfo_ignored", "http://user:pw@example.com/x", "example.com/x"},
        path_case{"dot_dot_segments", "http://example.com/../../etc/passwd",
                  "example.com/%2E%2E/%2E%2E/etc/passwd"},
        path_case{"dot_segment", "http://example.com/./a", "example.com/%2E/a"},
        path_case{"encoded_dots", "http://example.com/%2e%2E/x", "example.com/%2E%2E/x"},
        path_case{"encoded_dot_dot_file", "http://example.com/a/%2e%2e", "example.com/a/%2E%2E"},
        path_case{"encoded_slash_stays_in_one_name", "http://example.com/a%2Fb/c", "example.com/a%2Fb/c"},
        path_case{"encoded_slash_with_dots", "http://example.com/..%2F..%2Fetc", "example.com/..%2F..%2Fetc"},
        path_case{"encoded_backslash", "http://example.com/a%5C..", "example.com/a%5C.."},
        path_case{"encoded_nul", "http://example.com/a%00b", "example.com/a%00b"},
        path_case{"control_characters", "http://example.com/a%0Ab%7F", "example.com/a%0Ab%7F"},
        path_case{"encoded_space_decoded", "http://example.com/a%20b", "example.com/a b"},
        path_case{"utf8_decoded", "http://example.com/caf%C3%A9", "example.com/caf\xC3\xA9"},
        path_case{"empty_segments_dropped", "http://example.com//a///b", "example.com/a/b"},
        path_case{"absolute_looking_path", "http://example.com//etc/passwd", "example.com/etc/passwd"},
        path_case{"encoded_percent", "http://example.com/100%25", "example.com/100%"},
        // The crawler's URLs are normalized before they get here; a malformed one is not guessed at.
        path_case{"bad_escape_rejected", "http://example.com/%zz", ""},
        path_case{"long_name_shortened", "http://example.com/" + long_segment,
                  "example.com/" + std::string(200, 'a') + "~" + "003ef1ba9ea9f2f4"}, // sha1("a" x 300),
        path_case{"not_http", "ftp://example.com/a", ""}, path_case{"relative", "/a/b", ""},
        path_case{"garbage", "http://exa mple.com/", ""}),
    [](const testing::TestParamInfo<path_case>& info) { return info.param.name; });

TEST(SavePathLimits, LongNamesStayDistinct) {
    const auto a = save_path_for("http://example.com/" + std::string(300, 'a') + "1");
    const auto b = save_path_for("http://example.com/" + std::string(300, 'a') + "2");
    ASSERT_TRUE(a && b);
    EXPECT_NE(*a, *b);
    EXPECT_LE(a->filename().string().size(), 255u);
}

TEST(SavePathLimits, CutDoesNotSplitAUtf8Character) {
    // 199 ASCII bytes then two-byte characters: byte 200 is the second byte of an "é".
    const auto p = save_path_for("http://example.com/" + std::string(199, 'x') + std::string(40, 'y') + [] {
        std::string s;
        for (int i = 0; i < 60; ++i)
            s += "%C3%A9";
        return s;
    }());
    ASSERT_TRUE(p);
    const std::string name = p->filename().string();
    EXPECT_LE(name.size(), 255u);
    const std::size_t tilde = name.rfind('~');
    ASSERT_NE(tilde, std::string::npos);
    // What precedes the hash ends on a whole character.
    EXPECT_NE(static_cast<unsigned char>(name[tilde - 1]), 0xC3);
}

// The writer creates its directory itself: the tests start without one.
struct save_test_dir : asiocrawl::test::temp_dir {
    save_test_dir()
        : temp_dir("save-test", false) {}
};

record page(std::string url) {
    record r;
    r.url = std::move(url);
    r.status = 200;
    return r;
}

std::size_t regular_files_under(const fs::path& root) {
    std::size_t n = 0;
    for (const auto& entry : fs::recursive_directory_iterator(root))
        n += entry.is_regular_file() ? 1 : 0;
    return n;
}

TEST(SaveDirWriter, WritesTheTreeAndResolvesCollisions) {
    save_test_dir dir;
    {
        save_dir_writer writer{dir.path / "site"};
        writer.write(page("http://example.com/"), "root");
        writer.write(page("http://example.com/a"), "file a");     // a file first...
        writer.write(page("http://example.com/a/b"), "file a/b"); // ...then a is needed as a directory
        writer.write(page("http://example.com/c/d"), "file c/d"); // c is a directory first...
        writer.write(page("http://example.com/c"), "file c");     // ...then c is wanted as a file
        writer.write(page("http://example.com/q?x=1"), "query");
        writer.write(page("http://example.com/../../escape"), "dots");
        writer.write(page("http://example.com/%2e%2e%2fescape"), "encoded");
        writer.write(page("http://example.com/bin"), std::string("\0\x01\xff", 3));
        writer.write(page("mailto:nobody@example.com"), "ignored");
        EXPECT_EQ(writer.close(), "");
        EXPECT_EQ(writer.files_written(), 9u);
    }
    const fs::path site = dir.path / "site" / "example.com";
    EXPECT_EQ(read_file(site / "index.html"), "root");
    EXPECT_EQ(read_file(site / "a" / "index.html"), "file a");
    EXPECT_EQ(read_file(site / "a" / "b"), "file a/b");
    EXPECT_EQ(read_file(site / "c" / "d"), "file c/d");
    EXPECT_EQ(read_file(site / "c" / "index.html"), "file c");
    EXPECT_EQ(read_file(site / "q?x=1"), "query");
    EXPECT_EQ(read_file(site / "%2E%2E" / "%2E%2E" / "escape"), "dots");
    EXPECT_EQ(read_file(site / "..%2Fescape"), "encoded");
    EXPECT_EQ(read_file(site / "bin"), std::string("\0\x01\xff", 3));
    // Nothing outside DIR, no temporary files left behind.
    EXPECT_EQ(regular_files_under(dir.path), 9u);
    EXPECT_EQ(regular_files_under(dir.path / "site"), 9u);
}

TEST(SaveDirWriter, ASymlinkInTheTreeIsNotFollowed) {
    save_test_dir dir;
    fs::create_directories(dir.path / "outside");
    fs::create_directories(dir.path / "site" / "example.com");
    fs::create_directory_symlink(dir.path / "outside", dir.path / "site" / "example.com" / "link");
    save_dir_writer writer{dir.path / "site", asiocrawl::outputs::open_mode::overwrite};
    writer.write(page("http://example.com/link/x"), "must not land outside");
    writer.write(page("http://example.com/fine"), "fine");
    EXPECT_THAT(writer.close(), testing::HasSubstr("refusing"));
    EXPECT_TRUE(fs::is_empty(dir.path / "outside"));
    EXPECT_EQ(read_file(dir.path / "site" / "example.com" / "fine"), "fine");
}

TEST(SaveDirWriter, ADirectoryWithFilesIsRefusedUnlessOverwriting) {
    save_test_dir dir;
    fs::create_directories(dir.path / "site" / "example.com");
    EXPECT_THROW(save_dir_writer{dir.path / "site"}, asiocrawl::outputs::output_exists);
    save_dir_writer writer{dir.path / "site", asiocrawl::outputs::open_mode::append};
    writer.write(page("http://example.com/p"), "more");
    EXPECT_EQ(writer.close(), "");
    EXPECT_EQ(read_file(dir.path / "site" / "example.com" / "p"), "more");
}

TEST(SaveDirWriter, LaterCopyOfAUrlReplacesTheEarlierOne) {
    save_test_dir dir;
    save_dir_writer writer{dir.path};
    writer.write(page("http://example.com/p"), "first");
    writer.write(page("http://example.com/p"), "second");
    EXPECT_EQ(writer.close(), "");
    EXPECT_EQ(read_file(dir.path / "example.com" / "p"), "second");
}

} // namespace
