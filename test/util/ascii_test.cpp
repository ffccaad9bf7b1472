#include "util/ascii.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace {

namespace ascii = asiocrawl::detail::ascii;

TEST(Ascii, CharacterClassesIgnoreTheLocaleAndBytesAbove127) {
    for (int i = 0; i < 256; ++i) {
        const char c = static_cast<char>(i);
        const bool letter = (i >= 'a' && i <= 'z') || (i >= 'A' && i <= 'Z');
        const bool digit = i >= '0' && i <= '9';
        SCOPED_TRACE(i);
        EXPECT_EQ(ascii::is_alpha(c), letter);
        EXPECT_EQ(ascii::is_digit(c), digit);
        EXPECT_EQ(ascii::is_alnum(c), letter || digit);
        EXPECT_EQ(ascii::to_lower(c), i >= 'A' && i <= 'Z' ? static_cast<char>(i + 32) : c);
    }
    EXPECT_EQ(ascii::to_lower(std::string_view("MiXeD-\xc3\x84")), "mixed-\xc3\x84");
    EXPECT_TRUE(ascii::iequals("Content-Length", "content-LENGTH"));
    EXPECT_FALSE(ascii::iequals("a", "ab"));
    EXPECT_FALSE(ascii::iequals("\xc3\x84", "\xc3\xa4")); // only ASCII letters fold
}

TEST(Ascii, HtmlWhitespaceIsTabLfFfCrSpace) {
    std::string members;
    for (int i = 0; i < 256; ++i)
        if (ascii::is_html_whitespace(static_cast<char>(i)))
            members += static_cast<char>(i);
    EXPECT_EQ(members, "\t\n\f\r ");
    for (const char c : ascii::html_whitespace)
        EXPECT_TRUE(ascii::is_html_whitespace(c));
    EXPECT_EQ(ascii::trim_html_whitespace(" \t\n\f\rx y\r\n"), "x y");
    EXPECT_EQ(ascii::trim_html_whitespace("\vx\v"), "\vx\v") << "no vertical tab in HTML's set";
    EXPECT_EQ(ascii::trim_html_whitespace(" \t "), "");
}

TEST(Ascii, TrimTakesTheSetItIsGiven) {
    EXPECT_EQ(ascii::trim(" \tv \t", ascii::http_whitespace), "v");
    EXPECT_EQ(ascii::trim("\r\nv\f", ascii::http_whitespace), "\r\nv\f") << "HTTP's OWS is SP and HTAB only";
    EXPECT_EQ(ascii::trim(" \t\n\v\f\rv\v", ascii::c_whitespace), "v");
    EXPECT_EQ(ascii::trim("", ascii::c_whitespace), "");
    EXPECT_EQ(ascii::trim("xx", "x"), "");
}

TEST(Ascii, TrimIfTakesAPredicate) {
    const auto c0_or_space = [](char c) { return static_cast<unsigned char>(c) <= 0x20; };
    EXPECT_EQ(ascii::trim_if(std::string_view("\x01 \x1f"
                                              "a b"
                                              "\x00 ",
                                              8),
                             c0_or_space),
              "a b");
    EXPECT_EQ(ascii::trim_if("\x7f"
                             "a",
                             c0_or_space),
              "\x7f"
              "a");
    EXPECT_EQ(ascii::trim_if("   ", c0_or_space), "");
    static_assert(ascii::trim_if(" a ", [](char c) { return c == ' '; }) == "a");
}

} // namespace
