// Link extraction in a real crawl on 127.0.0.1: pages in legacy encodings request what a browser requests, a
// page past the link cap says so at the default log level and in its record, and both HTML parsers crawl
// alike.
#include <asiocrawl/crawler.hpp>

#include "support/loopback_crawl.hpp"
#include "support/records.hpp"

#include <asiocrawl/report.hpp>
#include <asiocrawl_demo/site.hpp>

#include <gmock/gmock.h>

#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

namespace asio = boost::asio;
using namespace asiocrawl;
using namespace asiocrawl::test;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::UnorderedElementsAre;

// gtest prints an enumeration's bytes in a parameter's description otherwise.
namespace asiocrawl {
inline void PrintTo(html_parser parser, std::ostream* out) {
    *out << (parser == html_parser::fast ? "fast" : "gumbo");
}
} // namespace asiocrawl

namespace {

struct links_crawl : ::testing::Test {
    asio::io_context ctx;
    crawler_config config = loopback_crawl_config();
    loopback_site server{ctx.get_executor()};
    std::vector<std::pair<log_level, std::string>> logged;

    void add(const std::string& target, std::string body,
             std::string content_type = "text/html; charset=utf-8") {
        server.add(target, std::move(body), std::move(content_type));
    }

    report crawl() {
        config.roots = {server.origin() + "/"};
        crawler c{ctx.get_executor(), config};
        logger log;
        log.write = [this](log_level level, std::string_view message) {
            logged.emplace_back(level, message);
        };
        c.set_logger(log); // the default level: warning
        auto result = run_crawl(ctx, c, [this] { server.stop(); });
        EXPECT_TRUE(result.has_value());
        return result ? std::move(*result) : report{};
    }

    std::vector<std::string> requested() const { return server.requested(); }

    const record* find(const report& r, const std::string& target) const {
        return asiocrawl::test::find(r, server.url(target));
    }
};

TEST_F(links_crawl, a_windows_1252_page_requests_utf8_paths_and_windows_1252_queries) {
    add("/", "<a href=\"t\xE9?q=\xE9\">x</a>", "text/html; charset=windows-1252");
    add("/t%C3%A9?q=%E9", "ok");
    auto r = crawl();
    EXPECT_THAT(requested(), UnorderedElementsAre("/", "/t%C3%A9?q=%E9"));
    EXPECT_EQ(find(r, "/")->charset, "windows-1252");
    EXPECT_EQ(find(r, "/t%C3%A9?q=%E9")->status, 200);
}

TEST_F(links_crawl, a_charset_declared_in_a_meta_counts_too) {
    add("/", "<meta charset=\"iso-8859-1\"><a href=\"caf\xE9?x=\xE9\">x</a>", "text/html");
    add("/caf%C3%A9?x=%E9", "ok");
    crawl();
    EXPECT_THAT(requested(), UnorderedElementsAre("/", "/caf%C3%A9?x=%E9"));
}

TEST_F(links_crawl, a_page_past_the_link_cap_warns_and_says_so_in_its_record) {
    config.traps.max_links_per_page = 2;
    add("/", "<a href=/1>1</a><a href=/2>2</a><a href=/3>3</a><a href=/4>4</a><a href=/5>5</a>");
    add("/1", "");
    add("/2", "");
    auto r = crawl();
    EXPECT_THAT(requested(), UnorderedElementsAre("/", "/1", "/2"));
    const record* root = find(r, "/");
    ASSERT_NE(root, nullptr);
    EXPECT_EQ(root->links_dropped, 3u);
    EXPECT_THAT(to_json_line(*root), HasSubstr("\"links_dropped\":3"));
    EXPECT_EQ(find(r, "/1")->links_dropped, 0u);
    EXPECT_THAT(to_json_line(*find(r, "/1")), Not(HasSubstr("links_dropped")));
    bool warned = false;
    for (const auto& [level, message] : logged)
        if (level == log_level::warning && message.find(server.origin() + "/") != std::string::npos &&
            message.find("3 links past the first 2") != std::string::npos)
            warned = true;
    EXPECT_TRUE(warned) << "a warning naming the page and the count dropped";
}

class links_crawl_by_parser : public links_crawl, public ::testing::WithParamInterface<html_parser> {};

TEST_P(links_crawl_by_parser, both_parsers_crawl_the_demo_site_alike) {
    config.html.parser = GetParam();
    demo::site_options options;
    options.pages = 40;
    options.links = demo::parse_link_mix("broken=2,fragment=3,off_site=1,redirect=2,query=2,relative=10,"
                                         "absolute=5,styled=73,base_pages=10");
    const auto site = demo::generate_site(options);
    demo::http_server site_server{ctx.get_executor(), demo::serve_site(site)};
    config.roots = {site_server.origin() + "/"};
    crawler c{ctx.get_executor(), config};
    auto result = run_crawl(ctx, c, [&] {
        site_server.stop();
        server.stop();
    });
    ASSERT_TRUE(result.has_value());
    std::set<std::string> targets;
    for (const auto& req : site_server.log())
        targets.insert(req.target);
    EXPECT_EQ(targets, site.expected_requests);
}

INSTANTIATE_TEST_SUITE_P(Parsers, links_crawl_by_parser,
                         ::testing::Values(html_parser::fast, html_parser::gumbo),
                         [](const ::testing::TestParamInfo<html_parser>& info) {
                             return info.param == html_parser::fast ? "fast" : "gumbo";
                         });

} // namespace
