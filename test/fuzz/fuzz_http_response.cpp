// The response path the fetcher runs, without sockets: Beast's response parser with the fetcher's kind of
// limits fed in fuzzed chunk sizes, interim responses skipped, then Content-Type parsing and link extraction
// on the body. Checks that the limits hold whatever the bytes.
#include "http/content_type.hpp"

#include "html/links.hpp"
#include "policy/redirect.hpp"
#include "url/url.hpp"

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string_view>

namespace http = boost::beast::http;

namespace {

constexpr std::uint64_t body_limit = 64 * 1024;
constexpr std::uint32_t header_limit = 4 * 1024;
constexpr int max_interim_responses = 8;

} // namespace

// Input: one byte choosing the chunk size the bytes arrive in, then the bytes the server sends.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0)
        return 0;
    const std::size_t chunk = 1 + data[0] % 64;
    std::string_view wire(reinterpret_cast<const char*>(data + 1), size - 1);

    std::optional<http::response_parser<http::string_body>> parser;
    // Bytes received and not yet consumed: they belong to the next message, as in the fetcher's buffer.
    std::string pending;
    for (int interim = 0;; ++interim) {
        parser.emplace();
        parser->body_limit(body_limit);
        parser->header_limit(header_limit);
        boost::beast::error_code ec;
        // Feed like a socket would: what the parser does not consume stays for the next read.
        bool progressed = true; // a new parser tries the leftover bytes before asking for more
        while (!ec && !parser->is_done()) {
            if (wire.empty() && (pending.empty() || !progressed)) {
                parser->put_eof(ec);
                break;
            }
            const auto take = std::min(chunk, wire.size());
            pending.append(wire.substr(0, take));
            wire.remove_prefix(take);
            const auto used = parser->put(boost::asio::buffer(pending), ec);
            if (ec == http::error::need_more)
                ec = {};
            progressed = used > 0;
            pending.erase(0, used);
        }
        if (parser->get().body().size() > body_limit) {
            std::fprintf(stderr, "body limit exceeded: %zu\n", parser->get().body().size());
            std::abort();
        }
        if (ec || !parser->is_done())
            return 0;
        const auto status = parser->get().result_int();
        if (status < 100 || status >= 200 || status == 101 || interim == max_interim_responses)
            break;
    }

    const auto& response = parser->get();
    static const auto page_url = *asiocrawl::parse_root("http://example.com/a/b");
    const auto status = static_cast<int>(response.result_int());
    if (asiocrawl::is_redirect_status(status)) {
        std::optional<std::string> location;
        if (auto it = response.find(http::field::location); it != response.end())
            location = std::string(it->value());
        (void)asiocrawl::decide_redirect(page_url, location, 3);
        return 0;
    }
    std::string_view content_type;
    if (auto it = response.find(http::field::content_type); it != response.end())
        content_type = it->value();
    const auto media = asiocrawl::detail::parse_content_type(content_type);
    if (asiocrawl::is_html_media_type(media.type)) {
        for (const auto& reference : asiocrawl::extract_links(response.body()).references)
            (void)asiocrawl::normalize_reference(page_url, reference);
    }
    return 0;
}
