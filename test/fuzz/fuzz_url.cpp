// URL resolution and normalization on hostile references: never crashes, and what comes out is a fixed point
// (normalizing a normalized URL changes nothing), http(s) only, and parses again as the same URL.
#include "policy/scope.hpp"
#include "url/url.hpp"

#include <boost/url/parse.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace {

void require(bool condition, const char* what, std::string_view detail) {
    if (!condition) {
        std::fprintf(stderr, "invariant broken: %s: [%.*s]\n", what, static_cast<int>(detail.size()),
                     detail.data());
        std::abort();
    }
}

const asiocrawl::scope& fuzz_scope() {
    static const asiocrawl::scope s({*asiocrawl::parse_root("http://example.com/")},
                                    asiocrawl::host_scope::lenient, "", "/logout");
    return s;
}

// The same rules, asked on the text (scope::check_text): fed the same URLs in the same order, it remembers
// the same query orderings, so its verdicts must be fuzz_scope()'s.
const asiocrawl::scope& fuzz_text_scope() {
    static const asiocrawl::scope s({*asiocrawl::parse_root("http://example.com/")},
                                    asiocrawl::host_scope::lenient, "", "/logout");
    return s;
}

} // namespace

// Input: "<base>\n<reference>"; without a newline the whole input is a root as a user would type it.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    const auto newline = input.find('\n');
    const std::string_view base_text = input.substr(0, newline);
    const std::string_view reference =
        newline == std::string_view::npos ? std::string_view{} : input.substr(newline + 1);

    (void)asiocrawl::clean_reference(input);
    (void)asiocrawl::remove_dot_segments(input);

    auto base = asiocrawl::parse_root(base_text);
    if (!base)
        return 0;
    require(asiocrawl::normalize(*base).has_value(), "a root does not normalize again", base->buffer());
    require(asiocrawl::normalize(*base)->buffer() == base->buffer(), "root normalization is not idempotent",
            base->buffer());
    if (newline == std::string_view::npos)
        return 0;

    auto link = asiocrawl::normalize_reference(*base, reference);
    if (!link)
        return 0;
    const std::string_view text = link->buffer();
    require(link->scheme() == "http" || link->scheme() == "https", "not http(s)", text);
    require(!link->has_fragment(), "fragment kept", text);
    auto again = asiocrawl::normalize(*link);
    require(again.has_value(), "a normalized URL does not normalize again", text);
    require(again->buffer() == text, "normalization is not idempotent", text);
    auto reparsed = boost::urls::parse_uri(text);
    require(reparsed.has_value(), "a normalized URL does not parse", text);
    const auto verdict = fuzz_scope().check(*link);
    const auto by_text = fuzz_text_scope().check_text(text);
    require(by_text.has_value() && *by_text == verdict, "check_text differs from check", text);
    // and on the raw reference, which may be no URL at all: the same answer as parse_uri and check (both
    // scopes asked, so that they go on remembering the same orderings)
    const auto raw = boost::urls::parse_uri(reference);
    const auto raw_by_text = fuzz_text_scope().check_text(reference);
    require(raw.has_value() == raw_by_text.has_value(), "check_text and parse_uri disagree on validity",
            reference);
    if (raw)
        require(fuzz_scope().check(*raw) == *raw_by_text, "check_text differs from check on a raw reference",
                reference);
    return 0;
}
