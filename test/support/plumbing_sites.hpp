// Sites for the plumbing tests, as handlers of the loopback server (demo::http_server): one that sets cookies
// and wants them back, one that requires Basic credentials. Each records what it was sent.
#pragma once

#include "support/loopback.hpp"

#include <boost/beast/http/field.hpp>

#include <optional>
#include <string>
#include <vector>

namespace asiocrawl::test {

/// What a server saw of one request: its target and the fields the plumbing tests look at ("X-Extra" is a
/// field a test sends with --header).
struct request_seen {
    std::string target;
    std::string host;
    std::string cookie;
    std::string authorization;
    std::string proxy_authorization;
    std::string user_agent;
    std::string extra;
};

inline request_seen seen_of(const http_request& req) {
    auto value = [&](auto field) { return std::string(req[field]); };
    return {std::string(req.target()),
            value(boost::beast::http::field::host),
            value(boost::beast::http::field::cookie),
            value(boost::beast::http::field::authorization),
            value(boost::beast::http::field::proxy_authorization),
            value(boost::beast::http::field::user_agent),
            std::string(req["X-Extra"])};
}

inline std::string link_page(const std::vector<std::string>& hrefs) {
    std::string html = "<html><body>";
    for (const auto& h : hrefs)
        html += "<a href=\"" + h + "\">x</a>";
    return html + "</body></html>";
}

/// A site that sets a session cookie on "/" and serves "/private" only to a request that carries it.
inline demo::request_handler cookie_site(std::vector<request_seen>& seen) {
    return [&seen](const http_request& req) -> boost::asio::awaitable<std::optional<http_response>> {
        seen.push_back(seen_of(req));
        if (req.target() == "/") {
            auto res = make_response(200, link_page({"/private"}));
            res.insert(boost::beast::http::field::set_cookie, "session=s3; Path=/; HttpOnly");
            res.insert(boost::beast::http::field::set_cookie, "theme=dark; Max-Age=3600");
            co_return res;
        }
        if (req.target() == "/private") {
            const bool ok =
                std::string(req[boost::beast::http::field::cookie]).find("session=s3") != std::string::npos;
            co_return make_response(ok ? 200 : 403, ok ? "members only" : "who are you?");
        }
        co_return make_response(404);
    };
}

/// A site that answers 401 (with a Basic challenge) to any request without `expected_authorization`; with it,
/// "/" links to "/inside" and "/away", and "/away" redirects to `away_to`.
inline demo::request_handler login_site(std::string expected_authorization, std::vector<request_seen>& seen,
                                        std::string away_to) {
    return [expected_authorization, &seen,
            away_to](const http_request& req) -> boost::asio::awaitable<std::optional<http_response>> {
        seen.push_back(seen_of(req));
        if (std::string(req[boost::beast::http::field::authorization]) != expected_authorization) {
            auto res = make_response(401, "login first");
            res.set(boost::beast::http::field::www_authenticate, "Basic realm=\"test\"");
            co_return res;
        }
        if (req.target() == "/away")
            co_return redirect_to(302, away_to);
        co_return make_response(200, link_page({"/inside", "/away"}));
    };
}

} // namespace asiocrawl::test
