#include "url/percent.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace {

using asiocrawl::detail::percent_decode;
using namespace std::string_literals;

TEST(PercentDecode, EscapesDecodedAndStrayPercentSignsKept) {
    struct row {
        std::string_view encoded;
        std::string decoded;
    };
    const std::vector<row> rows{
        {"", ""},
        {"plain", "plain"},
        {"%41", "A"},
        {"a%2fb%2F", "a/b/"},
        {"fa%C3%9F", "fa\xc3\x9f"},
        {"a%00b", "a\0b"s},
        {"%FF", "\xff"},
        {"a+b", "a+b"}, // a plus is not a space outside forms
        // A '%' that starts no escape stays as written (the URL Standard's percent-decode).
        {"%", "%"},
        {"%%", "%%"},
        {"a%", "a%"},
        {"a%4", "a%4"},
        {"%4g", "%4g"},
        {"%zz%41", "%zzA"},
        {"%%41", "%A"},
        {"%41%", "A%"},
        {"%4%41", "%4A"},
        {"100%", "100%"},
        {"%2%30", "%20"}, // decoded once: the '0' that follows a stray '%2' is not joined to it
    };
    for (const auto& r : rows) {
        SCOPED_TRACE(r.encoded);
        EXPECT_EQ(percent_decode(r.encoded), r.decoded);
    }
}

} // namespace
