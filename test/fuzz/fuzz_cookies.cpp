// Cookies and the other settings a server or a user hands the fetcher, on hostile input: Set-Cookie values,
// cookies.txt text, header options, proxy URLs, no_proxy lists. Never crashes, and the jar's invariants hold:
// its Cookie header holds no line break, it stays within its bounds, and its cookies.txt reads back the same.
#include "http/cookie_jar.hpp"
#include "http/fetch_settings.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

void require(bool condition, const char* what, std::string_view detail) {
    if (!condition) {
        std::fprintf(stderr, "invariant broken: %s: [%.*s]\n", what, static_cast<int>(detail.size()),
                     detail.data());
        std::abort();
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace asiocrawl::detail;
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    const auto now = std::chrono::system_clock::from_time_t(1'750'000'000);

    // Each line a Set-Cookie value, from one of two hosts, over http or https.
    cookie_jar jar;
    std::size_t line_number = 0;
    for (std::string_view rest = input; !rest.empty(); ++line_number) {
        const auto newline = rest.find('\n');
        const auto line = rest.substr(0, newline);
        rest = newline == std::string_view::npos ? std::string_view{} : rest.substr(newline + 1);
        const cookie_target from{line_number % 2 ? "https" : "http",
                                 line_number % 3 ? "www.example.com" : "a.b.example.co.uk",
                                 line_number % 4 ? "/dir/page" : "/"};
        jar.set_cookie(from, line, now);
    }
    require(jar.size() <= cookie_jar::max_cookies, "jar bound", input);
    for (const auto* host : {"www.example.com", "example.com", "a.b.example.co.uk", "x.www.example.com"}) {
        const auto header = jar.cookie_header({"https", host, "/dir/page/x"}, now);
        require(header.find_first_of("\r\n") == std::string::npos, "no line break in Cookie", header);
    }
    const std::string saved = jar.to_netscape(now);
    cookie_jar again;
    again.load_netscape(saved, now);
    require(again.to_netscape(now) == saved, "cookies.txt round trip", saved);

    // The same text as a cookies.txt file, a date, a header option, a proxy, a no_proxy list.
    cookie_jar loaded;
    loaded.load_netscape(input, now);
    require(loaded.size() <= cookie_jar::max_cookies, "loaded jar bound", input);
    parse_cookie_date(input);
    const auto header = parse_header_option(input);
    if (header.field)
        require(header.field->value.find_first_of("\r\n") == std::string::npos, "header value", input);
    std::string why;
    if (const auto proxy = parse_proxy(input, &why))
        require(proxy->display.find('@') == std::string::npos, "no credentials in a proxy's display", input);
    bypasses_proxy({std::string(input)}, "www.example.com", "80");
    bypasses_proxy({std::string(input)}, "10.1.2.3", "80");
    return 0;
}
