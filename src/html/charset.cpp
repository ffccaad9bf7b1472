// Declared character encodings: BOM, Content-Type, and the HTML <meta> prescan (WHATWG HTML §13.2.3.2).
#include "html/charset.hpp"

#include "util/ascii.hpp"

#include <algorithm>
#include <cerrno>
#include <iconv.h>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace asiocrawl {
namespace {

namespace ascii = detail::ascii;

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

using ascii::is_html_whitespace;

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
        return ascii::iequals(bytes_.substr(pos_, 5), "<meta") && (is_html_whitespace(next) || next == '/');
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
        while (pos_ < bytes_.size() && (is_html_whitespace(bytes_[pos_]) || bytes_[pos_] == '/'))
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
            if (is_html_whitespace(c))
                break;
            if (c == '/' || c == '>')
                return a;
            a.name += ascii::to_lower(c);
        }
        while (pos_ < bytes_.size() && is_html_whitespace(bytes_[pos_]))
            ++pos_;
        if (pos_ >= bytes_.size())
            return exhaust();
        if (bytes_[pos_] != '=')
            return a;
        ++pos_;
        return value(std::move(a));
    }

    std::optional<attr> value(attr a) {
        while (pos_ < bytes_.size() && is_html_whitespace(bytes_[pos_]))
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
            while (pos < content.size() && is_html_whitespace(content[pos]))
                ++pos;
            if (pos >= content.size() || content[pos] != '=')
                continue;
            ++pos;
            while (pos < content.size() && is_html_whitespace(content[pos]))
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
    label = ascii::trim_html_whitespace(label);
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

namespace {

// ---- Conversions with glibc's iconv ----------------------------------------------------------------------

// The iconv names of the WHATWG encodings, for decoding and for encoding (they differ where the Encoding
// Standard's decoder reads a superset: its "gbk" decoder is the gb18030 decoder).
struct iconv_names {
    std::string_view whatwg;
    const char* decoder;
    const char* encoder;
};

constexpr iconv_names iconv_table[] = {
    {"ibm866", "IBM866", "IBM866"},
    {"iso-8859-2", "ISO-8859-2", "ISO-8859-2"},
    {"iso-8859-3", "ISO-8859-3", "ISO-8859-3"},
    {"iso-8859-4", "ISO-8859-4", "ISO-8859-4"},
    {"iso-8859-5", "ISO-8859-5", "ISO-8859-5"},
    {"iso-8859-6", "ISO-8859-6", "ISO-8859-6"},
    {"iso-8859-7", "ISO-8859-7", "ISO-8859-7"},
    {"iso-8859-8", "ISO-8859-8", "ISO-8859-8"},
    {"iso-8859-8-i", "ISO-8859-8", "ISO-8859-8"},
    {"iso-8859-10", "ISO-8859-10", "ISO-8859-10"},
    {"iso-8859-13", "ISO-8859-13", "ISO-8859-13"},
    {"iso-8859-14", "ISO-8859-14", "ISO-8859-14"},
    {"iso-8859-15", "ISO-8859-15", "ISO-8859-15"},
    {"iso-8859-16", "ISO-8859-16", "ISO-8859-16"},
    {"koi8-r", "KOI8-R", "KOI8-R"},
    {"koi8-u", "KOI8-U", "KOI8-U"},
    {"macintosh", "MACINTOSH", "MACINTOSH"},
    {"windows-874", "WINDOWS-874", "WINDOWS-874"},
    {"windows-1250", "CP1250", "CP1250"},
    {"windows-1251", "CP1251", "CP1251"},
    {"windows-1252", "CP1252", "CP1252"},
    {"windows-1253", "CP1253", "CP1253"},
    {"windows-1254", "CP1254", "CP1254"},
    {"windows-1255", "CP1255", "CP1255"},
    {"windows-1256", "CP1256", "CP1256"},
    {"windows-1257", "CP1257", "CP1257"},
    {"windows-1258", "CP1258", "CP1258"},
    {"x-mac-cyrillic", "MAC-CYRILLIC", "MAC-CYRILLIC"},
    {"gbk", "GB18030", "GBK"},
    {"gb18030", "GB18030", "GB18030"},
    {"big5", "BIG5-HKSCS", "BIG5-HKSCS"},
    {"euc-jp", "EUC-JP", "EUC-JP"},
    {"iso-2022-jp", "ISO-2022-JP", "ISO-2022-JP"},
    {"shift_jis", "CP932", "CP932"},
    {"euc-kr", "CP949", "CP949"},
    {"utf-16be", "UTF-16BE", nullptr},
    {"utf-16le", "UTF-16LE", nullptr},
};

const iconv_names* find_iconv_names(std::string_view encoding) noexcept {
    for (const auto& names : iconv_table)
        if (names.whatwg == encoding)
            return &names;
    return nullptr;
}

// Opening a converter loads a gconv module: each thread keeps the ones it opened.
class converter_cache {
public:
    converter_cache() = default;
    converter_cache(const converter_cache&) = delete;
    converter_cache& operator=(const converter_cache&) = delete;
    ~converter_cache() {
        for (auto& entry : entries_)
            if (entry.cd != invalid())
                iconv_close(entry.cd);
    }

    /// A converter from `from` to `to` in its initial state, or invalid().
    iconv_t get(const char* from, const char* to) {
        for (auto& entry : entries_)
            if (entry.from == from && entry.to == to) {
                if (entry.cd != invalid())
                    iconv(entry.cd, nullptr, nullptr, nullptr, nullptr);
                return entry.cd;
            }
        entries_.push_back({from, to, iconv_open(to, from)});
        return entries_.back().cd;
    }
    static iconv_t invalid() noexcept { return reinterpret_cast<iconv_t>(-1); }

private:
    struct entry {
        std::string from;
        std::string to;
        iconv_t cd;
    };
    std::vector<entry> entries_;
};

converter_cache& converters() {
    thread_local converter_cache cache;
    return cache;
}

constexpr std::string_view replacement_utf8 = "\xEF\xBF\xBD";

void append_utf8(std::string& out, char32_t cp) {
    if (cp < 0x80) {
        out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
        out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
}

/// Converts with iconv, calling `on_error(rest, out, cut)` at each input sequence the converter rejects
/// (`cut`: it is cut short by the end of the input); on_error appends what stands for it and returns the
/// bytes to skip.
template <class OnError>
bool convert(iconv_t cd, std::string_view input, std::string& out, OnError on_error) {
    char* in = const_cast<char*>(input.data()); // iconv's signature; it does not write to the input
    std::size_t in_left = input.size();
    std::size_t used = out.size();
    out.resize(used + input.size() * 2 + 16);
    for (bool flushed = false; !flushed;) {
        char* to = out.data() + used;
        std::size_t to_left = out.size() - used;
        std::size_t result;
        if (in_left > 0) {
            result = iconv(cd, &in, &in_left, &to, &to_left);
        } else {
            result = iconv(cd, nullptr, nullptr, &to, &to_left); // back to the initial shift state
            flushed = result != static_cast<std::size_t>(-1);
        }
        used = out.size() - to_left;
        if (result != static_cast<std::size_t>(-1))
            continue;
        if (errno == E2BIG) {
            out.resize(out.size() * 2 + 16);
            continue;
        }
        if (errno != EILSEQ && errno != EINVAL) {
            out.resize(used);
            return false;
        }
        out.resize(used);
        const std::size_t skip =
            std::min(on_error(std::string_view(in, in_left), out, errno == EINVAL), in_left);
        in += skip;
        in_left -= skip;
        used = out.size();
        out.resize(used + in_left * 2 + 16);
    }
    out.resize(used);
    return true;
}

} // namespace

std::optional<std::string> decode_to_utf8(std::string_view bytes, std::string_view encoding) {
    if (encoding.empty() || encoding == "utf-8")
        return std::nullopt;
    std::string out;
    if (encoding == "replacement") {
        // The whole input is one error (the encodings that ISO-2022-KR and others' labels name).
        if (!bytes.empty())
            out = replacement_utf8;
        return out;
    }
    if (encoding == "x-user-defined") {
        // Defined arithmetically: bytes 0x80-0xFF are U+F780-U+F7FF.
        out.reserve(bytes.size());
        for (const char c : bytes) {
            const auto b = static_cast<unsigned char>(c);
            if (b < 0x80)
                out.push_back(c);
            else
                append_utf8(out, 0xF780 + b - 0x80);
        }
        return out;
    }
    const iconv_names* names = find_iconv_names(encoding);
    if (names == nullptr)
        return std::nullopt;
    if (encoding == "utf-16le" && bytes.starts_with("\xFF\xFE"))
        bytes.remove_prefix(2);
    else if (encoding == "utf-16be" && bytes.starts_with("\xFE\xFF"))
        bytes.remove_prefix(2);
    const iconv_t cd = converters().get(names->decoder, "UTF-8");
    if (cd == converter_cache::invalid())
        return std::nullopt;
    const bool windows_1252 = encoding == "windows-1252";
    const std::size_t unit = encoding.starts_with("utf-16") ? 2 : 1;
    out.reserve(bytes.size() + bytes.size() / 4);
    const bool ok =
        convert(cd, bytes, out, [&](std::string_view rest, std::string& o, bool cut) -> std::size_t {
            const auto b = static_cast<unsigned char>(rest.front());
            // The five bytes windows-1252 leaves undefined are C1 controls for the Encoding Standard.
            if (windows_1252 && (b == 0x81 || b == 0x8D || b == 0x8F || b == 0x90 || b == 0x9D)) {
                append_utf8(o, b);
                return 1;
            }
            o += replacement_utf8;
            return cut ? rest.size() : std::min(unit, rest.size());
        });
    if (!ok)
        return std::nullopt;
    return out;
}

bool query_uses_document_encoding(std::string_view encoding) noexcept {
    return !(encoding.empty() || encoding == "utf-8" || encoding == "utf-16be" || encoding == "utf-16le" ||
             encoding == "replacement");
}

std::string encode_query(std::string_view utf8_query, std::string_view encoding) {
    const auto percent = [](std::string& out, unsigned char b) {
        static constexpr char hex[] = "0123456789ABCDEF";
        out.push_back('%');
        out.push_back(hex[b >> 4]);
        out.push_back(hex[b & 0xF]);
    };
    // One character at a time past ASCII: the code point of a character the encoding lacks is what is
    // written.
    const auto next_code_point = [](std::string_view s, std::size_t& i) -> char32_t {
        const auto b0 = static_cast<unsigned char>(s[i]);
        const std::size_t length = b0 < 0xE0 ? 2 : b0 < 0xF0 ? 3 : 4;
        if (b0 < 0xC2 || b0 > 0xF4 || i + length > s.size()) {
            ++i;
            return 0xFFFD;
        }
        char32_t cp = b0 & (0xFF >> (length + 1));
        for (std::size_t k = 1; k < length; ++k) {
            const auto b = static_cast<unsigned char>(s[i + k]);
            if ((b & 0xC0) != 0x80) {
                ++i;
                return 0xFFFD;
            }
            cp = (cp << 6) | (b & 0x3F);
        }
        i += length;
        return cp;
    };
    std::string out;
    const iconv_names* names = find_iconv_names(encoding);
    const bool user_defined = encoding == "x-user-defined";
    for (std::size_t i = 0; i < utf8_query.size();) {
        const auto b = static_cast<unsigned char>(utf8_query[i]);
        if (b < 0x80) {
            out.push_back(utf8_query[i++]);
            continue;
        }
        const std::size_t start = i;
        const char32_t cp = next_code_point(utf8_query, i);
        std::string bytes;
        bool mapped = false;
        if (user_defined) {
            if (cp >= 0xF780 && cp <= 0xF7FF) {
                bytes.push_back(static_cast<char>(cp - 0xF780 + 0x80));
                mapped = true;
            }
        } else if (names != nullptr && names->encoder != nullptr) {
            const iconv_t cd = converters().get("UTF-8", names->encoder);
            if (cd != converter_cache::invalid() && cp != 0xFFFD) {
                bool failed = false;
                convert(cd, utf8_query.substr(start, i - start), bytes,
                        [&](std::string_view rest, std::string&, bool) -> std::size_t {
                            failed = true;
                            return rest.size();
                        });
                mapped = !failed && !bytes.empty();
            }
            // windows-1252's C1 controls come back as themselves, as the Encoding Standard's index has them.
            if (!mapped && encoding == "windows-1252" &&
                (cp == 0x81 || cp == 0x8D || cp == 0x8F || cp == 0x90 || cp == 0x9D)) {
                bytes.assign(1, static_cast<char>(cp));
                mapped = true;
            }
        } else {
            bytes.assign(utf8_query.substr(start, i - start)); // no encoder known: UTF-8
            mapped = true;
        }
        if (mapped) {
            // As "percent-encode after encoding" with the special-query set: the ASCII bytes of a stateful
            // encoding's escape sequences stay as they are, but for '%', which would read as an escape here.
            for (const char c : bytes) {
                const auto byte = static_cast<unsigned char>(c);
                if (byte <= 0x20 || byte >= 0x7F || c == '%' || c == '"' || c == '#' || c == '<' ||
                    c == '>' || c == '\'')
                    percent(out, byte);
                else
                    out.push_back(c);
            }
        } else {
            out += "%26%23";
            out += std::to_string(static_cast<std::uint32_t>(cp));
            out += "%3B";
        }
    }
    return out;
}

} // namespace asiocrawl
