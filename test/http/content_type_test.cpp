#include "http/content_type.hpp"

#include <gtest/gtest.h>

#include <string>

using asiocrawl::detail::parse_content_type;

namespace {

struct content_type_case {
    std::string header;
    std::string type;
    std::string charset;
};

const content_type_case cases[] = {
    {"text/html", "text/html", ""},
    {"text/html; charset=utf-8", "text/html", "utf-8"},
    {"TEXT/HTML; CHARSET=ISO-8859-1", "text/html", "iso-8859-1"},
    {"text/html;charset=\"windows-1252\"", "text/html", "windows-1252"},
    {"  text/html ;  charset = utf-8 ; foo=bar", "text/html", "utf-8"},
    {"text/html; foo=\"a;b\"; charset=utf-8", "text/html", "utf-8"},
    {"text/html; foo; charset=koi8-r", "text/html", "koi8-r"},
    {"text/html; charset=", "text/html", ""},
    {"text/html; charset=utf-8; charset=latin1", "text/html", "utf-8"},
    {"application/xhtml+xml", "application/xhtml+xml", ""},
    {"", "", ""},
    {";charset=utf-8", "", "utf-8"},
    {"text/plain; charset=\"unterminated", "text/plain", "unterminated"},
    {"text/plain; charset=\"a\\\"b\"", "text/plain", "a\"b"},
};

} // namespace

TEST(content_type, parses_media_type_and_charset) {
    for (const auto& c : cases) {
        SCOPED_TRACE(c.header);
        const auto parsed = parse_content_type(c.header);
        EXPECT_EQ(parsed.type, c.type);
        EXPECT_EQ(parsed.charset, c.charset);
    }
}
