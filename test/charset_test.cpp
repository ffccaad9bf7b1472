#include <asiocrawl/charset.hpp>

#include <gtest/gtest.h>

#include <string>

using asiocrawl::charset_for_label;
using asiocrawl::detect_charset;

namespace {

struct charset_case {
    std::string name;
    std::string content_type_charset;
    std::string body;
    bool is_html;
    std::string charset;
    std::string source;
};

const std::string ct = "content-type";
const std::string bom = "bom";
const std::string meta = "meta";

const charset_case cases[] = {
    // Content-Type, with the WHATWG label table.
    {"content-type", "utf-8", "<p>x", true, "utf-8", ct},
    {"alias utf8", "utf8", "", true, "utf-8", ct},
    {"trimmed and any case", " \tUTF-8 ", "", true, "utf-8", ct},
    {"iso-8859-1 is windows-1252", "iso-8859-1", "", true, "windows-1252", ct},
    {"latin1 is windows-1252", "latin1", "", true, "windows-1252", ct},
    {"ascii is windows-1252", "ascii", "", true, "windows-1252", ct},
    {"us-ascii is windows-1252", "us-ascii", "", true, "windows-1252", ct},
    {"sjis", "sjis", "", true, "shift_jis", ct},
    {"gb2312 is gbk", "gb2312", "", true, "gbk", ct},
    {"utf-16 is utf-16le", "utf-16", "", false, "utf-16le", ct},
    {"iso-2022-kr is replacement", "iso-2022-kr", "", false, "replacement", ct},
    {"not HTML: no prescan", "windows-1251", "<meta charset=utf-8>", false, "windows-1251", ct},
    {"Content-Type beats meta", "koi8-r", "<meta charset=utf-8>", true, "koi8-r", ct},
    {"unknown Content-Type label falls through", "bogus", "<meta charset=utf-8>", true, "utf-8", meta},
    {"unknown label and nothing else", "bogus", "<p>", true, "", ""},
    {"nothing at all", "", "", true, "", ""},
    {"not HTML and no header", "", "<meta charset=utf-8>", false, "", ""},
    // A byte order mark outranks everything.
    {"UTF-8 BOM", "iso-8859-1", "\xEF\xBB\xBF<html>", true, "utf-8", bom},
    {"UTF-16BE BOM", "utf-8", "\xFE\xFF\0<", false, "utf-16be", bom},
    {"UTF-16LE BOM", "", std::string("\xFF\xFE<\0", 4), true, "utf-16le", bom},
    {"half a BOM", "", "\xEF\xBB<meta charset=koi8-r>", true, "koi8-r", meta},
    // <meta charset>, any quoting.
    {"double quotes", "", "<meta charset=\"utf-8\">", true, "utf-8", meta},
    {"single quotes", "", "<meta charset='koi8-r'>", true, "koi8-r", meta},
    {"no quotes", "", "<meta charset=shift_jis>", true, "shift_jis", meta},
    {"upper case", "", "<META CHARSET=UTF-8>", true, "utf-8", meta},
    {"spaces around = and inside quotes", "", "<meta charset = ' utf-8 ' >", true, "utf-8", meta},
    {"slash after meta", "", "<meta/charset=utf-8>", true, "utf-8", meta},
    {"self-closing", "", "<meta charset=\"utf-8\"/>", true, "utf-8", meta},
    {"inside a document", "", "<!DOCTYPE html><html><head><title>x</title><meta charset=euc-kr></head>", true,
     "euc-kr", meta},
    // <meta http-equiv content>.
    {"http-equiv", "", "<meta http-equiv=\"Content-Type\" content=\"text/html; charset=iso-8859-1\">", true,
     "windows-1252", meta},
    {"content before http-equiv", "", "<meta content='text/html; charset=euc-jp' http-equiv='content-type'>",
     true, "euc-jp", meta},
    {"unquoted http-equiv", "", "<meta http-equiv=content-type content=text/html;charset=big5>", true, "big5",
     meta},
    {"quoted charset in content", "",
     "<meta http-equiv=\"content-type\" content=\"text/html; charset='gbk'\">", true, "gbk", meta},
    {"unmatched quote in content", "",
     "<meta http-equiv=\"content-type\" content='text/html; charset=\"utf-8'>", true, "", ""},
    {"charset without = is skipped", "",
     "<meta http-equiv=\"content-type\" content=\"text/html; charsetx; charset = utf-8\">", true, "utf-8",
     meta},
    {"content without http-equiv is no declaration", "", "<meta content=\"text/html; charset=utf-8\">", true,
     "", ""},
    {"other http-equiv", "", "<meta http-equiv=\"refresh\" content=\"0; charset=utf-8\">", true, "", ""},
    {"charset attribute beats content", "",
     "<meta http-equiv=content-type content=\"text/html; charset=koi8-r\" charset=utf-8>", true, "utf-8",
     meta},
    // Lying or garbage metas.
    {"garbage label skipped, next meta used", "", "<meta charset=\"garbage\"><meta charset=\"utf-8\">", true,
     "utf-8", meta},
    {"failed charset is not replaced by content", "",
     "<meta charset=garbage content=\"text/html; charset=utf-8\" http-equiv=content-type>", true, "", ""},
    {"meta claiming UTF-16 means UTF-8", "", "<meta charset=\"utf-16\">", true, "utf-8", meta},
    {"meta claiming UTF-16BE means UTF-8", "", "<meta charset=UTF-16BE>", true, "utf-8", meta},
    {"x-user-defined means windows-1252", "", "<meta charset=x-user-defined>", true, "windows-1252", meta},
    {"duplicate attribute ignored", "", "<meta charset=utf-8 charset=koi8-r>", true, "utf-8", meta},
    {"empty charset", "", "<meta charset=\"\"><meta charset=koi8-r>", true, "koi8-r", meta},
    {"binary garbage before", "", std::string("\x00\xFF\x80<<>\x01", 7) + "<meta charset=utf-8>", true,
     "utf-8", meta},
    // What the prescan skips.
    {"comment", "", "<!-- <meta charset=koi8-r> --><meta charset=utf-8>", true, "utf-8", meta},
    {"<!--> closes at once", "", "<!--><meta charset=koi8-r>", true, "koi8-r", meta},
    {"unterminated comment", "", "<!-- <meta charset=utf-8>", true, "", ""},
    {"other tags' attribute values", "", "<div title='<meta charset=koi8-r>'><meta charset=utf-8>", true,
     "utf-8", meta},
    {"end tag attributes", "", "</meta charset=koi8-r><meta charset=utf-8>", true, "utf-8", meta},
    {"not a meta element", "", "<metax charset=utf-8>", true, "", ""},
    {"processing instruction", "", "<?xml version='1.0' encoding='koi8-r'?><meta charset=utf-8>", true,
     "utf-8", meta},
    {"bogus comment", "", "<!DOCTYPE html charset=koi8-r><meta charset=utf-8>", true, "utf-8", meta},
    // The 1024-byte window.
    {"meta inside the window", "", std::string(1000, ' ') + "<meta charset=utf-8>", true, "utf-8", meta},
    {"meta after the window", "", std::string(1024, ' ') + "<meta charset=utf-8>", true, "", ""},
    {"meta across the window's end", "", std::string(1010, ' ') + "<meta charset=utf-8>", true, "", ""},
    {"body ends inside the meta", "", "<meta charset=\"utf-8\"", true, "", ""},
    {"body ends inside the value", "", "<meta charset=utf-8", true, "", ""},
};

} // namespace

TEST(charset, detect) {
    for (const auto& c : cases) {
        SCOPED_TRACE(c.name);
        const auto info = detect_charset(c.content_type_charset, c.body, c.is_html);
        EXPECT_EQ(info.charset, c.charset);
        EXPECT_EQ(info.source, c.source);
    }
}

TEST(charset, labels) {
    const std::pair<std::string, std::string> cases[] = {
        {"utf-8", "utf-8"},
        {"  UTF8 \t", "utf-8"},
        {"unicode-1-1-utf-8", "utf-8"},
        {"ISO_8859-1:1987", "windows-1252"},
        {"cp1251", "windows-1251"},
        {"windows-31j", "shift_jis"},
        {"ks_c_5601-1987", "euc-kr"},
        {"x-user-defined", "x-user-defined"},
        {"utf-16be", "utf-16be"},
        {"", ""},
        {"utf-8 x", ""},
        {"utf_8", ""},
        {"latin-1", ""},
        {std::string(1000, 'a'), ""},
    };
    for (const auto& [label, name] : cases)
        EXPECT_EQ(charset_for_label(label), name) << "'" << label << "'";
}
