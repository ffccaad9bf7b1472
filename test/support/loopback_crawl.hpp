// The set-up the crawl integration tests share: a site of fixed pages on an in-process loopback server, the
// crawler settings those tests start from, and one crawl run to its end on the test's io_context.
#pragma once

#include "support/loopback.hpp"

#include <asiocrawl/crawler.hpp>
#include <asiocrawl/report.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/system/system_error.hpp>

#include <chrono>
#include <cstddef>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace asiocrawl::test {

/// An HTML page of one link to each of `hrefs`.
inline std::string links_page(const std::vector<std::string>& hrefs) {
    std::string html = "<html><body>";
    for (const auto& h : hrefs)
        html += "<a href=\"" + h + "\">link</a>\n";
    return html + "</body></html>";
}

/// A loopback server (demo::http_server on 127.0.0.1) that answers each target with the response added for
/// it, and any other target with a 404 page. Pages may be added after the server is up: links often need its
/// port.
class loopback_site {
public:
    /// Runs before each answer, e.g. to note when a request came or to delay the answer.
    using request_hook = std::function<boost::asio::awaitable<void>(const http_request&)>;

    explicit loopback_site(boost::asio::any_io_executor executor, request_hook before_answer = {})
        : server_{std::move(executor), serve(pages_, std::move(before_answer))} {}

    void add(const std::string& target, http_response response) { (*pages_)[target] = std::move(response); }
    /// A 200 answer with `body`.
    void add(const std::string& target, std::string body,
             std::string content_type = "text/html; charset=utf-8") {
        add(target, make_response(200, std::move(body), std::move(content_type)));
    }

    std::string origin() const { return server_.origin(); }
    std::string url(const std::string& target) const { return server_.origin() + target; }
    unsigned short port() const noexcept { return server_.port(); }
    std::size_t requests() const noexcept { return server_.requests(); }
    std::size_t peak_in_flight() const noexcept { return server_.peak_in_flight(); }
    const std::vector<demo::logged_request>& log() const noexcept { return server_.log(); }
    /// The targets requested, in arrival order.
    std::vector<std::string> requested() const {
        std::vector<std::string> out;
        for (const auto& r : server_.log())
            out.push_back(r.target);
        return out;
    }
    /// Closes the server, so that the context runs out of work once the crawl is done.
    void stop() { server_.stop(); }

private:
    using page_map = std::map<std::string, http_response>;

    // The handler holds the map by shared_ptr: it may outlive this object inside a connection's coroutine.
    static demo::request_handler serve(std::shared_ptr<const page_map> pages, request_hook before_answer) {
        return [pages, before_answer](
                   const http_request& req) -> boost::asio::awaitable<std::optional<http_response>> {
            if (before_answer)
                co_await before_answer(req);
            auto it = pages->find(std::string(req.target()));
            if (it == pages->end())
                co_return make_response(404, "<h1>not found</h1>");
            co_return it->second;
        };
    }

    std::shared_ptr<page_map> pages_ = std::make_shared<page_map>();
    demo::http_server server_;
};

/// What the crawl tests start from: 4 tasks, and neither robots.txt nor a per-host limit, whose layers have
/// their own tests (polite_crawl_test) and would only add requests and waits.
inline crawler_config loopback_crawl_config() {
    crawler_config config;
    config.max_tasks = 4;
    config.robots.obey = false;
    config.politeness.max_per_host = 1000;
    return config;
}

/// Runs `c` on `ctx` until its crawl completes and the context runs dry. `when_done` runs in the crawl's
/// completion handler and must stop the servers, or the context never runs out of work. Returns the report,
/// or nullopt when the crawl did not complete (run_bounded has failed the test then).
template <class WhenDone>
std::optional<report> run_crawl(boost::asio::io_context& ctx, crawler& c, WhenDone when_done,
                                std::chrono::seconds limit = std::chrono::seconds{60}) {
    std::optional<report> result;
    c.async_run([&](boost::system::error_code ec, report r) {
        when_done();
        if (ec) // out of ctx.run(): the test fails, naming the code and what failed
            throw boost::system::system_error(ec, r.failure);
        result = std::move(r);
    });
    run_bounded(ctx, limit);
    return result;
}

} // namespace asiocrawl::test
