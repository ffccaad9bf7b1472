// Declared character encodings: BOM, Content-Type, and the HTML <meta> prescan (WHATWG HTML §13.2.3.2).
#include <asiocrawl/charset.hpp>

#include "ascii.hpp"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

namespace asiocrawl {
namespace {

namespace ascii = detail::ascii;

constexpr std::string_view html_whitespace = "\t\n\f\r ";
constexpr std::size_t prescan_bytes = 1024;

// The WHATWG Encoding Standard's label table: label -> encoding name (lowercased).
constexpr std::pair<std::string_view, std::string_view> labels[] = {
    {"unicode-1-1-utf-8", "utf-8"},
    {"unicode11utf8", "utf-8"},
    {"unicode20utf8", "utf-8"},
    {"utf-8", "utf-8"},
    {"utf8", "utf-8"},
    {"x-unicode20utf8", "utf-8"},
    {"866", "ibm866"},
    {"cp866", "ibm866"},
    {"csibm866", "ibm866"},
    {"ibm866", "ibm866"},
    {"csisolatin2", "iso-8859-2"},
    {"iso-8859-2", "iso-8859-2"},
    {"iso-ir-101", "iso-8859-2"},
    {"iso8859-2", "iso-8859-2"},
    {"iso88592", "iso-8859-2"},
    {"iso_8859-2", "iso-8859-2"},
    {"iso_8859-2:1987", "iso-8859-2"},
    {"l2", "iso-8859-2"},
    {"latin2", "iso-8859-2"},
    {"csisolatin3", "iso-8859-3"},
    {"iso-8859-3", "iso-8859-3"},
    {"iso-ir-109", "iso-8859-3"},
    {"iso8859-3", "iso-8859-3"},
    {"iso88593", "iso-8859-3"},
    {"iso_8859-3", "iso-8859-3"},
    {"iso_8859-3:1988", "iso-8859-3"},
    {"l3", "iso-8859-3"},
    {"latin3", "iso-8859-3"},
    {"csisolatin4", "iso-8859-4"},
    {"iso-8859-4", "iso-8859-4"},
    {"iso-ir-110", "iso-8859-4"},
    {"iso8859-4", "iso-8859-4"},
    {"iso88594", "iso-8859-4"},
    {"iso_8859-4", "iso-8859-4"},
    {"iso_8859-4:1988", "iso-8859-4"},
    {"l4", "iso-8859-4"},
    {"latin4", "iso-8859-4"},
    {"csisolatincyrillic", "iso-8859-5"},
    {"cyrillic", "iso-8859-5"},
    {"iso-8859-5", "iso-8859-5"},
    {"iso-ir-144", "iso-8859-5"},
    {"iso8859-5", "iso-8859-5"},
    {"iso88595", "iso-8859-5"},
    {"iso_8859-5", "iso-8859-5"},
    {"iso_8859-5:1988", "iso-8859-5"},
    {"arabic", "iso-8859-6"},
    {"asmo-708", "iso-8859-6"},
    {"csiso88596e", "iso-8859-6"},
    {"csiso88596i", "iso-8859-6"},
    {"csisolatinarabic", "iso-8859-6"},
    {"ecma-114", "iso-8859-6"},
    {"iso-8859-6", "iso-8859-6"},
    {"iso-8859-6-e", "iso-8859-6"},
    {"iso-8859-6-i", "iso-8859-6"},
    {"iso-ir-127", "iso-8859-6"},
    {"iso8859-6", "iso-8859-6"},
    {"iso88596", "iso-8859-6"},
    {"iso_8859-6", "iso-8859-6"},
    {"iso_8859-6:1987", "iso-8859-6"},
    {"csisolatingreek", "iso-8859-7"},
    {"ecma-118", "iso-8859-7"},
    {"elot_928", "iso-8859-7"},
    {"greek", "iso-8859-7"},
    {"greek8", "iso-8859-7"},
    {"iso-8859-7", "iso-8859-7"},
    {"iso-ir-126", "iso-8859-7"},
    {"iso8859-7", "iso-8859-7"},
    {"iso88597", "iso-8859-7"},
    {"iso_8859-7", "iso-8859-7"},
    {"iso_8859-7:1987", "iso-8859-7"},
    {"sun_eu_greek", "iso-8859-7"},
    {"csiso88598e", "iso-8859-8"},
    {"csisolatinhebrew", "iso-8859-8"},
    {"hebrew", "iso-8859-8"},
    {"iso-8859-8", "iso-8859-8"},
    {"iso-8859-8-e", "iso-8859-8"},
    {"iso-ir-138", "iso-8859-8"},
    {"iso8859-8", "iso-8859-8"},
    {"iso88598", "iso-8859-8"},
    {"iso_8859-8", "iso-8859-8"},
    {"iso_8859-8:1988", "iso-8859-8"},
    {"visual", "iso-8859-8"},
    {"csiso88598i", "iso-8859-8-i"},
    {"iso-8859-8-i", "iso-8859-8-i"},
    {"logical", "iso-8859-8-i"},
    {"csisolatin6", "iso-8859-10"},
    {"iso-8859-10", "iso-8859-10"},
    {"iso-ir-157", "iso-8859-10"},
    {"iso8859-10", "iso-8859-10"},
    {"iso885910", "iso-8859-10"},
    {"l6", "iso-8859-10"},
    {"latin6", "iso-8859-10"},
    {"iso-8859-13", "iso-8859-13"},
    {"iso8859-13", "iso-8859-13"},
    {"iso885913", "iso-8859-13"},
    {"iso-8859-14", "iso-8859-14"},
    {"iso8859-14", "iso-8859-14"},
    {"iso885914", "iso-8859-14"},
    {"csisolatin9", "iso-8859-15"},
    {"iso-8859-15", "iso-8859-15"},
    {"iso8859-15", "iso-8859-15"},
    {"iso885915", "iso-8859-15"},
    {"iso_8859-15", "iso-8859-15"},
    {"l9", "iso-8859-15"},
    {"iso-8859-16", "iso-8859-16"},
    {"cskoi8r", "koi8-r"},
    {"koi", "koi8-r"},
    {"koi8", "koi8-r"},
    {"koi8-r", "koi8-r"},
    {"koi8_r", "koi8-r"},
    {"koi8-ru", "koi8-u"},
    {"koi8-u", "koi8-u"},
    {"csmacintosh", "macintosh"},
    {"mac", "macintosh"},
    {"macintosh", "macintosh"},
    {"x-mac-roman", "macintosh"},
    {"dos-874", "windows-874"},
    {"iso-8859-11", "windows-874"},
    {"iso8859-11", "windows-874"},
    {"iso885911", "windows-874"},
    {"tis-620", "windows-874"},
    {"windows-874", "windows-874"},
    {"cp1250", "windows-1250"},
    {"windows-1250", "windows-1250"},
    {"x-cp1250", "windows-1250"},
    {"cp1251", "windows-1251"},
    {"windows-1251", "windows-1251"},
    {"x-cp1251", "windows-1251"},
    {"ansi_x3.4-1968", "windows-1252"},
    {"ascii", "windows-1252"},
    {"cp1252", "windows-1252"},
    {"cp819", "windows-1252"},
    {"csisolatin1", "windows-1252"},
    {"ibm819", "windows-1252"},
    {"iso-8859-1", "windows-1252"},
    {"iso-ir-100", "windows-1252"},
    {"iso8859-1", "windows-1252"},
    {"iso88591", "windows-1252"},
    {"iso_8859-1", "windows-1252"},
    {"iso_8859-1:1987", "windows-1252"},
    {"l1", "windows-1252"},
    {"latin1", "windows-1252"},
    {"us-ascii", "windows-1252"},
    {"windows-1252", "windows-1252"},
    {"x-cp1252", "windows-1252"},
    {"cp1253", "windows-1253"},
    {"windows-1253", "windows-1253"},
    {"x-cp1253", "windows-1253"},
    {"cp1254", "windows-1254"},
    {"csisolatin5", "windows-1254"},
    {"iso-8859-9", "windows-1254"},
    {"iso-ir-148", "windows-1254"},
    {"iso8859-9", "windows-1254"},
    {"iso88599", "windows-1254"},
    {"iso_8859-9", "windows-1254"},
    {"iso_8859-9:1989", "windows-1254"},
    {"l5", "windows-1254"},
    {"latin5", "windows-1254"},
    {"windows-1254", "windows-1254"},
    {"x-cp1254", "windows-1254"},
    {"cp1255", "windows-1255"},
    {"windows-1255", "windows-1255"},
    {"x-cp1255", "windows-1255"},
    {"cp1256", "windows-1256"},
    {"windows-1256", "windows-1256"},
    {"x-cp1256", "windows-1256"},
    {"cp1257", "windows-1257"},
    {"windows-1257", "windows-1257"},
    {"x-cp1257", "windows-1257"},
    {"cp1258", "windows-1258"},
    {"windows-1258", "windows-1258"},
    {"x-cp1258", "windows-1258"},
    {"x-mac-cyrillic", "x-mac-cyrillic"},
    {"x-mac-ukrainian", "x-mac-cyrillic"},
    {"chinese", "gbk"},
    {"csgb2312", "gbk"},
    {"csiso58gb231280", "gbk"},
    {"gb2312", "gbk"},
    {"gb_2312", "gbk"},
    {"gb_2312-80", "gbk"},
    {"gbk", "gbk"},
    {"iso-ir-58", "gbk"},
    {"x-gbk", "gbk"},
    {"gb18030", "gb18030"},
    {"big5", "big5"},
    {"big5-hkscs", "big5"},
    {"cn-big5", "big5"},
    {"csbig5", "big5"},
    {"x-x-big5", "big5"},
    {"cseucpkdfmtjapanese", "euc-jp"},
    {"euc-jp", "euc-jp"},
    {"x-euc-jp", "euc-jp"},
    {"csiso2022jp", "iso-2022-jp"},
    {"iso-2022-jp", "iso-2022-jp"},
    {"csshiftjis", "shift_jis"},
    {"ms932", "shift_jis"},
    {"ms_kanji", "shift_jis"},
    {"shift-jis", "shift_jis"},
    {"shift_jis", "shift_jis"},
    {"sjis", "shift_jis"},
    {"windows-31j", "shift_jis"},
    {"x-sjis", "shift_jis"},
    {"cseuckr", "euc-kr"},
    {"csksc56011987", "euc-kr"},
    {"euc-kr", "euc-kr"},
    {"iso-ir-149", "euc-kr"},
    {"korean", "euc-kr"},
    {"ks_c_5601-1987", "euc-kr"},
    {"ks_c_5601-1989", "euc-kr"},
    {"ksc5601", "euc-kr"},
    {"ksc_5601", "euc-kr"},
    {"windows-949", "euc-kr"},
    {"csiso2022kr", "replacement"},
    {"hz-gb-2312", "replacement"},
    {"iso-2022-cn", "replacement"},
    {"iso-2022-cn-ext", "replacement"},
    {"iso-2022-kr", "replacement"},
    {"replacement", "replacement"},
    {"unicodefffe", "utf-16be"},
    {"utf-16be", "utf-16be"},
    {"csunicode", "utf-16le"},
    {"iso-10646-ucs-2", "utf-16le"},
    {"ucs-2", "utf-16le"},
    {"unicode", "utf-16le"},
    {"unicodefeff", "utf-16le"},
    {"utf-16", "utf-16le"},
    {"utf-16le", "utf-16le"},
    {"x-user-defined", "x-user-defined"},
};

constexpr bool is_space(char c) noexcept {
    return html_whitespace.find(c) != std::string_view::npos;
}

// HTML §13.2.3.2 "prescan a byte stream to determine its encoding", over a window that ends the scan when
// it runs out: running out of bytes anywhere means no answer, as the standard says.
class prescanner {
public:
    explicit prescanner(std::string_view bytes)
        : bytes_(bytes) {}

    std::string_view run() {
        while (pos_ < bytes_.size()) {
            if (at("<!--")) {
                const auto end = bytes_.find("-->", pos_ + 2);
                if (end == std::string_view::npos)
                    return {};
                pos_ = end + 3;
                continue;
            }
            if (at_meta()) {
                pos_ += 5;
                const auto encoding = meta();
                if (exhausted_)
                    return {};
                if (!encoding.empty())
                    return encoding;
            } else if (bytes_[pos_] == '<' &&
                       (letter_at(pos_ + 1) || (byte_at(pos_ + 1) == '/' && letter_at(pos_ + 2)))) {
                pos_ = bytes_.find_first_of("\t\n\f\r >", pos_);
                if (pos_ == std::string_view::npos)
                    return {};
                while (attribute()) {
                }
                if (exhausted_)
                    return {};
            } else if (at("<!") || at("</") || at("<?")) {
                pos_ = bytes_.find('>', pos_ + 2);
                if (pos_ == std::string_view::npos)
                    return {};
            }
            ++pos_;
        }
        return {};
    }

private:
    struct attr {
        std::string name;
        std::string value;
    };

    bool at(std::string_view text) const { return bytes_.substr(pos_).starts_with(text); }
    char byte_at(std::size_t i) const { return i < bytes_.size() ? bytes_[i] : '\0'; }
    bool letter_at(std::size_t i) const { return ascii::is_alpha(byte_at(i)); }

    bool at_meta() const {
        const auto next = byte_at(pos_ + 5);
        return ascii::iequals(bytes_.substr(pos_, 5), "<meta") && (is_space(next) || next == '/');
    }

    // One <meta>'s attributes; the encoding it declares, if it declares a usable one.
    std::string_view meta() {
        std::vector<std::string> seen;
        bool got_pragma = false;
        std::optional<bool> need_pragma;
        std::string_view charset;
        bool charset_failed = false;
        while (auto a = attribute()) {
            if (std::find(seen.begin(), seen.end(), a->name) != seen.end())
                continue;
            seen.push_back(a->name);
            if (a->name == "http-equiv") {
                got_pragma = got_pragma || a->value == "content-type";
            } else if (a->name == "content") {
                const auto found = charset_from_content(a->value);
                if (!found.empty() && charset.empty() && !charset_failed) {
                    charset = found;
                    need_pragma = true;
                }
            } else if (a->name == "charset") {
                charset = charset_for_label(a->value);
                charset_failed = charset.empty();
                need_pragma = false;
            }
        }
        if (exhausted_ || !need_pragma || (*need_pragma && !got_pragma) || charset.empty())
            return {};
        if (charset == "utf-16be" || charset == "utf-16le")
            return "utf-8";
        if (charset == "x-user-defined")
            return "windows-1252";
        return charset;
    }

    // "Get an attribute": names and values lowercased, as the standard does before comparing them.
    std::optional<attr> attribute() {
        while (pos_ < bytes_.size() && (is_space(bytes_[pos_]) || bytes_[pos_] == '/'))
            ++pos_;
        if (pos_ >= bytes_.size())
            return exhaust();
        if (bytes_[pos_] == '>')
            return std::nullopt;
        attr a;
        for (;; ++pos_) {
            if (pos_ >= bytes_.size())
                return exhaust();
            const char c = bytes_[pos_];
            if (c == '=' && !a.name.empty()) {
                ++pos_;
                return value(std::move(a));
            }
            if (is_space(c))
                break;
            if (c == '/' || c == '>')
                return a;
            a.name += ascii::to_lower(c);
        }
        while (pos_ < bytes_.size() && is_space(bytes_[pos_]))
            ++pos_;
        if (pos_ >= bytes_.size())
            return exhaust();
        if (bytes_[pos_] != '=')
            return a;
        ++pos_;
        return value(std::move(a));
    }

    std::optional<attr> value(attr a) {
        while (pos_ < bytes_.size() && is_space(bytes_[pos_]))
            ++pos_;
        if (pos_ >= bytes_.size())
            return exhaust();
        const char first = bytes_[pos_];
        if (first == '"' || first == '\'') {
            const auto close = bytes_.find(first, pos_ + 1);
            if (close == std::string_view::npos)
                return exhaust();
            a.value = ascii::to_lower(bytes_.substr(pos_ + 1, close - pos_ - 1));
            pos_ = close + 1;
            return a;
        }
        if (first == '>')
            return a;
        const auto end = bytes_.find_first_of("\t\n\f\r >", pos_);
        if (end == std::string_view::npos)
            return exhaust();
        a.value = ascii::to_lower(bytes_.substr(pos_, end - pos_));
        pos_ = end;
        return a;
    }

    std::optional<attr> exhaust() {
        exhausted_ = true;
        pos_ = bytes_.size();
        return std::nullopt;
    }

    // HTML "algorithm for extracting a character encoding from a meta element", on the lowercased value.
    static std::string_view charset_from_content(std::string_view content) {
        std::size_t pos = 0;
        for (;;) {
            const auto found = content.find("charset", pos);
            if (found == std::string_view::npos)
                return {};
            pos = found + 7;
            while (pos < content.size() && is_space(content[pos]))
                ++pos;
            if (pos >= content.size() || content[pos] != '=')
                continue;
            ++pos;
            while (pos < content.size() && is_space(content[pos]))
                ++pos;
            if (pos >= content.size())
                return {};
            if (content[pos] == '"' || content[pos] == '\'') {
                const auto close = content.find(content[pos], pos + 1);
                if (close == std::string_view::npos)
                    return {};
                return charset_for_label(content.substr(pos + 1, close - pos - 1));
            }
            const auto end = content.find_first_of("\t\n\f\r ;", pos);
            return charset_for_label(content.substr(pos, end == std::string_view::npos ? end : end - pos));
        }
    }

    std::string_view bytes_;
    std::size_t pos_ = 0;
    bool exhausted_ = false;
};

} // namespace

std::string_view charset_for_label(std::string_view label) {
    label = ascii::trim(label, html_whitespace);
    if (label.empty() || label.size() > 32)
        return {};
    const std::string lowered = ascii::to_lower(label);
    for (const auto& [known, name] : labels) {
        if (known == lowered)
            return name;
    }
    return {};
}

charset_info detect_charset(std::string_view content_type_charset, std::string_view body, bool is_html) {
    if (body.starts_with("\xEF\xBB\xBF"))
        return {"utf-8", "bom"};
    if (body.starts_with("\xFE\xFF"))
        return {"utf-16be", "bom"};
    if (body.starts_with("\xFF\xFE"))
        return {"utf-16le", "bom"};
    if (const auto name = charset_for_label(content_type_charset); !name.empty())
        return {std::string(name), "content-type"};
    if (is_html) {
        if (const auto name = prescanner(body.substr(0, prescan_bytes)).run(); !name.empty())
            return {std::string(name), "meta"};
    }
    return {};
}

} // namespace asiocrawl
