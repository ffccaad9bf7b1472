// The dashboard's static files (dashboard/, compiled in: dashboard_files.hpp), served by the control API's
// listener at `/` and `/dashboard/NAME`. The page asks for the API's token itself; the files need none.
#include <asiocrawl/outputs/control_api.hpp>

#include "control/dashboard_files.hpp"

namespace asiocrawl::outputs {

namespace {

// Only the listener's own scripts, styles and API; no inline script or style, no frames, no plugins.
constexpr std::string_view content_security_policy =
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const detail::embedded_file* find_file(std::string_view name) {
    for (std::size_t i = 0; i < detail::dashboard_file_count; ++i)
        if (detail::dashboard_files[i].name == name)
            return &detail::dashboard_files[i];
    return nullptr;
}

listener_response text_reply(unsigned status, std::string body) {
    listener_response r;
    r.status = status;
    r.content_type = "text/plain; charset=utf-8";
    r.body = std::move(body);
    return r;
}

/// True when an If-None-Match list names `etag` (or is "*").
bool matches(std::string_view if_none_match, std::string_view etag) {
    while (!if_none_match.empty()) {
        const auto comma = if_none_match.find(',');
        std::string_view one = if_none_match.substr(0, comma);
        while (!one.empty() && (one.front() == ' ' || one.front() == '\t'))
            one.remove_prefix(1);
        while (!one.empty() && (one.back() == ' ' || one.back() == '\t'))
            one.remove_suffix(1);
        if (one.starts_with("W/"))
            one.remove_prefix(2);
        if (one == etag || one == "*")
            return true;
        if (comma == std::string_view::npos)
            break;
        if_none_match.remove_prefix(comma + 1);
    }
    return false;
}

} // namespace

listener_response dashboard_file(const listener_request& request) {
    const std::string_view path = request.target.substr(0, request.target.find('?'));
    const detail::embedded_file* file = nullptr;
    if (path == "/" || path == "/index.html")
        file = find_file("index.html");
    else if (path.starts_with("/dashboard/") && path != "/dashboard/index.html")
        file = find_file(path.substr(11));
    if (file == nullptr)
        return text_reply(404, "not found: try /, /metrics, /healthz or /api/status\n");
    if (request.method != "GET" && request.method != "HEAD") {
        auto r = text_reply(405, "method not allowed\n");
        r.allow = "GET, HEAD";
        return r;
    }
    listener_response r;
    // Revalidated on every load (a cheap 304): the files change with the binary, not with the URL.
    r.cache_control = "no-cache";
    r.fields = {{"ETag", std::string(file->etag)},
                {"X-Content-Type-Options", "nosniff"},
                {"Referrer-Policy", "no-referrer"}};
    if (file->content_type.starts_with("text/html")) {
        r.fields.emplace_back("Content-Security-Policy", std::string(content_security_policy));
        r.fields.emplace_back("X-Frame-Options", "DENY");
    }
    r.content_type = std::string(file->content_type);
    if (matches(request.if_none_match, file->etag)) {
        r.status = 304;
        return r;
    }
    r.body = std::string(file->bytes);
    return r;
}

} // namespace asiocrawl::outputs
