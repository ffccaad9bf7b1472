// Sitemap parsing: XML through expat, plain text by lines.
#include "policy/sitemap.hpp"

#include <asiocrawl/error.hpp>

#include "util/ascii.hpp"

#include <expat.h>

#include <algorithm>
#include <climits>
#include <memory>

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

struct parse_state {
    XML_Parser parser = nullptr;
    std::size_t max_entries = 0;
    sitemap_document document;
    int depth = 0;         // elements currently open
    bool entry_ok = false; // the open depth-1 element is a <url> (urlset) or a <sitemap> (index)
    bool in_loc = false;   // inside the entry's <loc>, collecting its text
    bool rejected = false; // we aborted: wrong root or a DTD entity declaration
    std::string text;

    void reject() {
        rejected = true;
        XML_StopParser(parser, XML_FALSE);
    }
};

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
    } else if (state.depth == 2 && state.entry_ok && local == "loc") {
        state.in_loc = true;
        state.text.clear();
    }
    ++state.depth;
}

void on_end(void* data, const XML_Char*) {
    auto& state = *static_cast<parse_state*>(data);
    --state.depth;
    if (state.depth != 2 || !state.in_loc)
        return;
    state.in_loc = false;
    const auto location = ascii::trim(state.text, xml_whitespace);
    if (location.empty())
        return;
    if (state.document.locations.size() >= state.max_entries) {
        state.document.truncated = true;
        XML_StopParser(state.parser, XML_FALSE);
        return;
    }
    state.document.locations.emplace_back(location);
}

void on_text(void* data, const XML_Char* text, int length) {
    auto& state = *static_cast<parse_state*>(data);
    // depth 3: directly inside <loc>, not inside some child element of it.
    if (state.in_loc && state.depth == 3)
        state.text.append(text, static_cast<std::size_t>(length));
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
    return document;
}

bool looks_gzipped(std::string_view bytes) noexcept {
    return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1F &&
           static_cast<unsigned char>(bytes[1]) == 0x8B;
}

} // namespace asiocrawl
