// Sitemap parsing: XML through expat, plain text by lines.
#include "policy/sitemap.hpp"

#include <asiocrawl/error.hpp>

#include "util/ascii.hpp"

#include <expat.h>

#include <algorithm>
#include <climits>
#include <memory>
#include <utility>

namespace asiocrawl {
namespace {

namespace ascii = detail::ascii;

constexpr std::string_view xml_whitespace = " \t\r\n";
// expat reports a namespaced name as "uri<separator>local".
constexpr char namespace_separator = '\x01';
constexpr std::size_t chunk_bytes = 1u << 20;

std::string_view local_name(const XML_Char* name) {
    const std::string_view full(name);
    const auto separator = full.rfind(namespace_separator);
    return separator == std::string_view::npos ? full : full.substr(separator + 1);
}

// The entry fields read besides <loc>.
enum class field : std::uint8_t { none, loc, lastmod, changefreq };

// A <lastmod> or <changefreq> longer than this is invalid anyway: its text is not kept whole.
constexpr std::size_t max_hint_bytes = 64;

struct parse_state {
    XML_Parser parser = nullptr;
    std::size_t max_entries = 0;
    sitemap_document document;
    int depth = 0;               // elements currently open
    bool entry_ok = false;       // the open depth-1 element is a <url> (urlset) or a <sitemap> (index)
    field in = field::none;      // the entry's child element whose text is being collected
    bool rejected = false;       // we aborted: wrong root or a DTD entity declaration
    std::size_t entry_first = 0; // locations[entry_first..] came from the open entry
    sitemap_hints entry_hints;   // what the open entry said so far
    std::string text;

    void reject() {
        rejected = true;
        XML_StopParser(parser, XML_FALSE);
    }

    // The entry ends: its hints belong to each of its locations (<loc> may come before or after them).
    void end_entry() {
        auto& hints = document.hints;
        hints.resize(document.locations.size());
        std::fill(hints.begin() + static_cast<std::ptrdiff_t>(std::min(entry_first, hints.size())),
                  hints.end(), entry_hints);
        entry_hints = {};
        entry_first = document.locations.size();
    }
};

field entry_field(std::string_view local) {
    if (local == "loc")
        return field::loc;
    if (local == "lastmod")
        return field::lastmod;
    if (local == "changefreq")
        return field::changefreq;
    return field::none;
}

void on_start(void* data, const XML_Char* name, const XML_Char**) {
    auto& state = *static_cast<parse_state*>(data);
    const auto local = local_name(name);
    if (state.depth == 0) {
        if (local == "urlset") {
            state.document.is_index = false;
        } else if (local == "sitemapindex") {
            state.document.is_index = true;
        } else {
            state.reject();
            return;
        }
    } else if (state.depth == 1) {
        state.entry_ok = local == (state.document.is_index ? "sitemap" : "url");
        state.entry_first = state.document.locations.size();
        state.entry_hints = {};
    } else if (state.depth == 2 && state.entry_ok) {
        state.in = entry_field(local);
        if (state.in == field::changefreq && state.document.is_index)
            state.in = field::none;
        state.text.clear();
    }
    ++state.depth;
}

void on_end(void* data, const XML_Char*) {
    auto& state = *static_cast<parse_state*>(data);
    --state.depth;
    if (state.depth == 1 && state.entry_ok) {
        state.end_entry();
        return;
    }
    if (state.depth != 2 || state.in == field::none)
        return;
    const auto what = std::exchange(state.in, field::none);
    const auto value = ascii::trim(state.text, xml_whitespace);
    if (what == field::lastmod) {
        state.entry_hints.lastmod = parse_w3c_datetime(value);
        return;
    }
    if (what == field::changefreq) {
        state.entry_hints.changefreq = parse_changefreq(value);
        return;
    }
    if (value.empty())
        return;
    if (state.document.locations.size() >= state.max_entries) {
        state.document.truncated = true;
        XML_StopParser(state.parser, XML_FALSE);
        return;
    }
    state.document.locations.emplace_back(value);
}

void on_text(void* data, const XML_Char* text, int length) {
    auto& state = *static_cast<parse_state*>(data);
    // depth 3: directly inside <loc> (or <lastmod>, <changefreq>), not inside some child element of it.
    if (state.in == field::none || state.depth != 3)
        return;
    auto size = static_cast<std::size_t>(length);
    if (state.in != field::loc) {
        // One byte past the limit is enough to make the value invalid.
        size = std::min(size, max_hint_bytes + 1 - std::min(state.text.size(), max_hint_bytes + 1));
    }
    state.text.append(text, size);
}

void on_entity_declaration(void* data, const XML_Char*, int, const XML_Char*, int, const XML_Char*,
                           const XML_Char*, const XML_Char*, const XML_Char*) {
    static_cast<parse_state*>(data)->reject();
}

struct parser_deleter {
    void operator()(XML_Parser parser) const noexcept { XML_ParserFree(parser); }
};

} // namespace

boost::system::result<sitemap_document> parse_sitemap(std::string_view xml, std::size_t max_entries) {
    const std::unique_ptr<std::remove_pointer_t<XML_Parser>, parser_deleter> parser(
        XML_ParserCreateNS(nullptr, namespace_separator));
    if (!parser)
        throw std::bad_alloc();
    parse_state state;
    state.parser = parser.get();
    state.max_entries = max_entries;
    XML_SetUserData(parser.get(), &state);
    XML_SetElementHandler(parser.get(), on_start, on_end);
    XML_SetCharacterDataHandler(parser.get(), on_text);
    XML_SetEntityDeclHandler(parser.get(), on_entity_declaration);
    // The default already, stated because it is what keeps external DTDs and parameter entities unread.
    XML_SetParamEntityParsing(parser.get(), XML_PARAM_ENTITY_PARSING_NEVER);

    bool ok = true;
    do {
        const auto chunk = xml.substr(0, std::min(xml.size(), chunk_bytes));
        xml.remove_prefix(chunk.size());
        ok = XML_Parse(parser.get(), chunk.data(), static_cast<int>(chunk.size()), xml.empty()) ==
             XML_STATUS_OK;
    } while (ok && !xml.empty());

    // Hints of an entry cut short (truncated, or malformed XML) stay absent.
    state.document.hints.resize(state.document.locations.size());
    if (state.document.truncated)
        return std::move(state.document);
    if (!ok || state.rejected)
        return make_error_code(error::bad_response);
    return std::move(state.document);
}

sitemap_document parse_sitemap_text(std::string_view text, std::size_t max_entries) {
    if (text.starts_with("\xEF\xBB\xBF"))
        text.remove_prefix(3);
    sitemap_document document;
    while (!text.empty()) {
        const auto eol = text.find('\n');
        const auto line = ascii::trim(text.substr(0, eol), " \t\r\v\f");
        text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
        const bool is_url =
            ascii::iequals(line.substr(0, 7), "http://") || ascii::iequals(line.substr(0, 8), "https://");
        if (!is_url)
            continue;
        if (document.locations.size() >= max_entries) {
            document.truncated = true;
            break;
        }
        document.locations.emplace_back(line);
    }
    document.hints.resize(document.locations.size());
    return document;
}

namespace {

// Reads exactly `count` digits from the front of `text`.
std::optional<int> take_digits(std::string_view& text, std::size_t count) noexcept {
    if (text.size() < count)
        return std::nullopt;
    int value = 0;
    for (std::size_t i = 0; i < count; ++i) {
        if (!ascii::is_digit(text[i]))
            return std::nullopt;
        value = value * 10 + (text[i] - '0');
    }
    text.remove_prefix(count);
    return value;
}

bool take(std::string_view& text, char c) noexcept {
    if (text.empty() || text.front() != c)
        return false;
    text.remove_prefix(1);
    return true;
}

} // namespace

std::optional<std::chrono::sys_time<std::chrono::microseconds>>
parse_w3c_datetime_micros(std::string_view text) noexcept {
    using namespace std::chrono;
    const auto y = take_digits(text, 4);
    if (!y)
        return std::nullopt;
    int m = 1;
    int d = 1;
    bool full_date = false;
    if (take(text, '-')) {
        const auto month = take_digits(text, 2);
        if (!month)
            return std::nullopt;
        m = *month;
        if (take(text, '-')) {
            const auto day = take_digits(text, 2);
            if (!day)
                return std::nullopt;
            d = *day;
            full_date = true;
        }
    }
    const year_month_day date{year(*y), month(static_cast<unsigned>(m)), day(static_cast<unsigned>(d))};
    if (!date.ok())
        return std::nullopt;
    const sys_seconds midnight{sys_days(date)};
    if (text.empty())
        return midnight;
    // A time: only after a full date, hh:mm, optional :ss and .s, then the zone, required.
    if (!full_date || !take(text, 'T'))
        return std::nullopt;
    const auto hh = take_digits(text, 2);
    if (!hh || !take(text, ':'))
        return std::nullopt;
    const auto mm = take_digits(text, 2);
    if (!mm || *hh > 23 || *mm > 59)
        return std::nullopt;
    int ss = 0;
    microseconds fraction{0};
    if (take(text, ':')) {
        const auto second = take_digits(text, 2);
        if (!second || *second > 60)
            return std::nullopt;
        ss = *second;
        if (take(text, '.')) {
            std::size_t digits = 0;
            std::int64_t micros = 0;
            for (; digits < text.size() && ascii::is_digit(text[digits]); ++digits)
                if (digits < 6)
                    micros = micros * 10 + (text[digits] - '0');
            if (digits == 0)
                return std::nullopt;
            for (std::size_t scale = digits; scale < 6; ++scale)
                micros *= 10;
            fraction = microseconds(micros);
            text.remove_prefix(digits);
        }
    }
    seconds offset{0};
    if (!take(text, 'Z')) {
        const bool ahead = take(text, '+');
        if (!ahead && !take(text, '-'))
            return std::nullopt;
        const auto oh = take_digits(text, 2);
        if (!oh || !take(text, ':'))
            return std::nullopt;
        const auto om = take_digits(text, 2);
        if (!om || *oh > 23 || *om > 59)
            return std::nullopt;
        offset = hours(*oh) + minutes(*om);
        if (!ahead)
            offset = -offset;
    }
    if (!text.empty())
        return std::nullopt;
    // Local time = UTC + offset.
    return midnight + hours(*hh) + minutes(*mm) + seconds(ss) + fraction - offset;
}

std::optional<std::chrono::sys_seconds> parse_w3c_datetime(std::string_view text) noexcept {
    const auto exact = parse_w3c_datetime_micros(text);
    if (!exact)
        return std::nullopt;
    return std::chrono::floor<std::chrono::seconds>(*exact);
}

std::optional<sitemap_changefreq> parse_changefreq(std::string_view text) noexcept {
    constexpr std::pair<std::string_view, sitemap_changefreq> names[] = {
        {"always", sitemap_changefreq::always},   {"hourly", sitemap_changefreq::hourly},
        {"daily", sitemap_changefreq::daily},     {"weekly", sitemap_changefreq::weekly},
        {"monthly", sitemap_changefreq::monthly}, {"yearly", sitemap_changefreq::yearly},
        {"never", sitemap_changefreq::never},
    };
    for (const auto& [name, value] : names)
        if (ascii::iequals(text, name))
            return value;
    return std::nullopt;
}

bool looks_gzipped(std::string_view bytes) noexcept {
    return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1F &&
           static_cast<unsigned char>(bytes[1]) == 0x8B;
}

} // namespace asiocrawl
