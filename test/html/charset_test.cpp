#include "html/charset.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <tuple>

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

// ---------------------------------------------------------------------------------------------------------------
// Decoding a page into UTF-8 (glibc iconv), as the Encoding Standard's decoders read it.

struct decode_case {
    const char* name;
    std::string bytes;
    std::string encoding;
    std::optional<std::string> utf8; // nullopt: the bytes are read as they are
};

TEST(charset, decode_to_utf8) {
    const decode_case cases[] = {
        {"undeclared_is_read_as_is", "caf\xC3\xA9", "", std::nullopt},
        {"utf8_is_read_as_is", "caf\xC3\xA9", "utf-8", std::nullopt},
        {"unknown_name_is_read_as_is", "x", "klingon", std::nullopt},
        {"windows_1252", "t\xE9 \x80 \x9F", "windows-1252", "t\xC3\xA9 \xE2\x82\xAC \xC5\xB8"},
        // The five bytes windows-1252 leaves undefined are C1 controls for the Encoding Standard.
        {"windows_1252_c1_gaps", "\x81\x8D\x8F\x90\x9D", "windows-1252",
         "\xC2\x81\xC2\x8D\xC2\x8F\xC2\x90\xC2\x9D"},
        {"iso_8859_2", "\xB1", "iso-8859-2", "\xC4\x85"},
        {"koi8_r", "\xC1", "koi8-r", "\xD0\xB0"},
        {"shift_jis", "\x93\xFA\x96\x7B", "shift_jis", "\xE6\x97\xA5\xE6\x9C\xAC"},
        // A trail byte that is '\\' in ASCII stays in its character.
        {"shift_jis_backslash_trail", "\x95\x5C", "shift_jis", "\xE8\xA1\xA8"},
        {"euc_jp", "\xC6\xFC", "euc-jp", "\xE6\x97\xA5"},
        {"gbk", "\xD6\xD0", "gbk", "\xE4\xB8\xAD"},
        {"big5", "\xA4\xA4", "big5", "\xE4\xB8\xAD"},
        {"euc_kr", "\xC7\xD1", "euc-kr", "\xED\x95\x9C"},
        {"iso_2022_jp", "\x1B$BF|\x1B(B", "iso-2022-jp", "\xE6\x97\xA5"},
        {"utf16le_without_bom", std::string("a\0\xE9\0", 4), "utf-16le", "a\xC3\xA9"},
        {"utf16le_bom_dropped",
         std::string("\xFF\xFE"
                     "a\0",
                     4),
         "utf-16le", "a"},
        {"utf16be_bom_dropped", std::string("\xFE\xFF\0a", 4), "utf-16be", "a"},
        {"utf16_odd_byte_at_the_end", std::string("a\0b", 3), "utf-16le", "a\xEF\xBF\xBD"},
        {"malformed_multibyte", "\x81\x20", "shift_jis", "\xEF\xBF\xBD "},
        {"x_user_defined", "a\x80\xFF", "x-user-defined", "a\xEF\x9E\x80\xEF\x9F\xBF"},
        {"replacement", "anything", "replacement", "\xEF\xBF\xBD"},
        {"replacement_of_nothing", "", "replacement", ""},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.name);
        EXPECT_EQ(asiocrawl::decode_to_utf8(c.bytes, c.encoding), c.utf8);
    }
}

TEST(charset, queries_use_the_document_encoding_but_for_utf8_and_utf16) {
    for (const char* name : {"", "utf-8", "utf-16le", "utf-16be", "replacement"})
        EXPECT_FALSE(asiocrawl::query_uses_document_encoding(name)) << name;
    for (const char* name : {"windows-1252", "shift_jis", "iso-2022-jp", "gbk", "x-user-defined"})
        EXPECT_TRUE(asiocrawl::query_uses_document_encoding(name)) << name;
}

TEST(charset, encode_query) {
    const std::tuple<std::string, std::string, std::string> cases[] = {
        {"q=\xC3\xA9", "windows-1252", "q=%E9"},
        {"a=1&b=\xE2\x82\xAC", "windows-1252", "a=1&b=%80"},
        // A character the encoding lacks is written as an HTML numeric reference, percent-encoded.
        {"q=\xE2\x98\x83", "windows-1252", "q=%26%239731%3B"},
        {"q=\xE6\x97\xA5", "shift_jis", "q=%93%FA"},
        {"q=\xE6\x97\xA5", "euc-jp", "q=%C6%FC"},
        {"q=\xE6\x97\xA5", "iso-2022-jp", "q=%1B$BF|%1B(B"},
        {"q=\xE4\xB8\xAD", "gbk", "q=%D6%D0"},
        {"q=\xEF\x9E\x80", "x-user-defined", "q=%80"},
        {"q=\xC3\xA9", "x-user-defined", "q=%26%23233%3B"},
        {"plain ascii stays", "windows-1252", "plain ascii stays"},
        {"q=\xEF\xBF\xBD", "windows-1252", "q=%26%2365533%3B"},
    };
    for (const auto& [query, encoding, encoded] : cases)
        EXPECT_EQ(asiocrawl::encode_query(query, encoding), encoded) << encoding << " " << query;
}
