// Page requisites (--page-requisites, wget -p) in a real crawl on 127.0.0.1: a page with images, scripts,
// stylesheets that @import and url() more, inline styles, media and objects, and some of them on a second
// server (another port: another host to the scope rules). The exact set of URLs requested on each server,
// with and without requisites and span_hosts, with both HTML parsers, and the records and WARC that result.
#include <asiocrawl/crawler.hpp>

#include "support/files.hpp"
#include "support/loopback_crawl.hpp"
#include "support/temp_dir.hpp"

#include <asiocrawl/outputs/output_set.hpp>
#include <asiocrawl/report.hpp>
#include <asiocrawl_demo/site.hpp>

#include <boost/json/parse.hpp>

#include <gmock/gmock.h>

#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>

namespace asio = boost::asio;
using namespace asiocrawl;
using namespace asiocrawl::test;

using asiocrawl::test::read_file;

namespace {

using url_set = std::set<std::string>;

struct requisites_crawl : ::testing::Test {
    asio::io_context ctx;
    crawler_config config = loopback_crawl_config();
    loopback_site site{ctx.get_executor()};
    loopback_site cdn{ctx.get_executor()};
    temp_dir dir{"requisites-crawl"};

    requisites_crawl() {
        config.roots = {site.origin() + "/"};
        const std::string cdn_origin = cdn.origin();
        site.add("/", "<!doctype html><html><head>\n"
                      "<link rel=stylesheet href=/css/site.css>\n"
                      "<link rel=\"shortcut icon\" href=/favicon.ico>\n"
                      "<link rel=next href=/page2.html>\n"
                      "<script src=/js/app.js></script>\n"
                      "<style>@import \"/css/inline.css\"; body { background: url(/img/bg.png) }</style>\n"
                      "</head><body style=\"background: url('/img/body.png')\">\n"
                      "<img src=/img/a.png srcset=\"/img/a-2x.png 2x\">\n"
                      "<img src=" +
                          cdn_origin +
                          "/img/c.png>\n"
                          "<script src=" +
                          cdn_origin +
                          "/js/lib.js></script>\n"
                          "<video poster=/img/poster.png><source src=/media/v.webm></video>\n"
                          "<object data=/obj/o.svg></object><embed src=/obj/e.svg>\n"
                          "<template><img src=/img/inert.png></template>\n"
                          "<a href=/page2.html>next</a> <a href=" +
                          cdn_origin + "/off-site.html>off site</a>\n</body></html>\n");
        site.add("/page2.html", "<img src=/img/a.png><img src=/img/p2.png><a href=/>home</a>");
        site.add("/css/site.css",
                 "@import url(more.css);\nh1 { background: url(../img/h1.png) }\np { background: url(" +
                     cdn_origin + "/img/from-css.png) }\n",
                 "text/css");
        site.add("/css/more.css", "i { background: url(\"/img/more.png\") } /* url(/img/no.png) */",
                 "text/css");
        site.add("/css/inline.css", "b { color: red }", "text/css");
        for (const char* image :
             {"/img/bg.png", "/img/body.png", "/img/a.png", "/img/a-2x.png", "/img/p2.png", "/img/poster.png",
              "/img/h1.png", "/img/more.png", "/favicon.ico"})
            site.add(image, "PNG", "image/png");
        site.add("/js/app.js", "var a = '<img src=/img/no.png>';", "text/javascript");
        site.add("/media/v.webm", "WEBM", "video/webm");
        // An object that is an HTML document: fetched, not read for links.
        site.add("/obj/o.svg", "<a href=/never.html>x</a>", "text/html");
        site.add("/obj/e.svg", "<svg/>", "image/svg+xml");
        cdn.add("/img/c.png", "PNG", "image/png");
        cdn.add("/js/lib.js", "lib()", "text/javascript");
        cdn.add("/img/from-css.png", "PNG", "image/png");
        cdn.add("/off-site.html", "<img src=/img/never.png>");
    }

    /// Crawls with `outputs` attached; returns the report.
    report crawl(const outputs::output_config& outputs = {}) {
        crawler c{ctx.get_executor(), config};
        outputs::output_set out{ctx.get_executor(), outputs};
        out.attach(c);
        out.start();
        auto result = run_crawl(ctx, c, [&] {
            out.stop();
            site.stop();
            cdn.stop();
        });
        EXPECT_TRUE(result.has_value());
        if (!result)
            return {};
        EXPECT_THAT(out.finish(*result), ::testing::IsEmpty());
        return std::move(*result);
    }

    static url_set requested(const loopback_site& server) {
        url_set out;
        for (const auto& r : server.log())
            EXPECT_TRUE(out.insert(r.target).second) << r.target << " requested twice";
        return out;
    }
};

const url_set pages_only{"/", "/page2.html"};
const url_set site_requisites{"/css/site.css",   "/favicon.ico",  "/js/app.js",    "/css/inline.css",
                              "/img/bg.png",     "/img/body.png", "/img/a.png",    "/img/a-2x.png",
                              "/img/poster.png", "/media/v.webm", "/obj/o.svg",    "/obj/e.svg",
                              "/css/more.css",   "/img/h1.png",   "/img/more.png", "/img/p2.png"};
const url_set cdn_requisites{"/img/c.png", "/js/lib.js", "/img/from-css.png"};

url_set joined(url_set a, const url_set& b) {
    a.insert(b.begin(), b.end());
    return a;
}

} // namespace

TEST_F(requisites_crawl, off_by_default_only_pages_are_fetched) {
    crawl();
    EXPECT_EQ(requested(site), pages_only);
    EXPECT_EQ(requested(cdn), url_set{});
}

TEST_F(requisites_crawl, with_page_requisites_the_pages_own_host_gives_them) {
    config.requisites.enabled = true;
    const auto r = crawl();
    EXPECT_EQ(requested(site), joined(pages_only, site_requisites));
    EXPECT_EQ(requested(cdn), url_set{}) << "another port is another host";
    EXPECT_EQ(r.stats.at("requisites_fetched"), site_requisites.size());
    EXPECT_EQ(r.stats.at("skipped_requisite_off_host"), 3u) << "c.png, lib.js, from-css.png";
}

TEST_F(requisites_crawl, gumbo_pages_give_the_same_requisites) {
    config.requisites.enabled = true;
    config.html.parser = html_parser::gumbo;
    crawl();
    EXPECT_EQ(requested(site), joined(pages_only, site_requisites));
    EXPECT_EQ(requested(cdn), url_set{});
}

TEST_F(requisites_crawl, span_hosts_fetches_them_from_the_other_host_and_they_are_archived) {
    config.requisites.enabled = true;
    config.requisites.span_hosts = true;
    outputs::output_config outputs;
    outputs.records = (dir.path / "records.jsonl").string();
    outputs.warc.path = (dir.path / "crawl.warc").string();
    const auto r = crawl(outputs);
    EXPECT_EQ(requested(site), joined(pages_only, site_requisites));
    EXPECT_EQ(requested(cdn), cdn_requisites) << "requisites only: the off-site link is not followed";
    EXPECT_EQ(r.stats.at("requisites_fetched"), site_requisites.size() + cdn_requisites.size());

    // Each record says what the URL was fetched as.
    std::map<std::string, std::string> kinds;
    std::istringstream lines(read_file(outputs.records));
    for (std::string line; std::getline(lines, line);) {
        const auto object = boost::json::parse(line).as_object();
        const auto* kind = object.if_contains("requisite");
        kinds[std::string(object.at("url").as_string())] = kind ? std::string(kind->as_string()) : "";
    }
    const std::string s = site.origin(), c = cdn.origin();
    EXPECT_EQ(kinds.size(), pages_only.size() + site_requisites.size() + cdn_requisites.size());
    EXPECT_EQ(kinds[s + "/"], "");
    EXPECT_EQ(kinds[s + "/page2.html"], "");
    EXPECT_EQ(kinds[s + "/css/site.css"], "stylesheet");
    EXPECT_EQ(kinds[s + "/css/more.css"], "stylesheet");
    EXPECT_EQ(kinds[s + "/css/inline.css"], "stylesheet") << "an @import, in a <style> element";
    EXPECT_EQ(kinds[s + "/img/bg.png"], "style");
    EXPECT_EQ(kinds[s + "/img/h1.png"], "style");
    EXPECT_EQ(kinds[s + "/favicon.ico"], "icon");
    EXPECT_EQ(kinds[s + "/js/app.js"], "script");
    EXPECT_EQ(kinds[s + "/img/a-2x.png"], "image");
    EXPECT_EQ(kinds[s + "/media/v.webm"], "media");
    EXPECT_EQ(kinds[s + "/obj/o.svg"], "object");
    EXPECT_EQ(kinds[s + "/obj/e.svg"], "embed");
    EXPECT_EQ(kinds[c + "/js/lib.js"], "script");
    EXPECT_EQ(kinds[c + "/img/from-css.png"], "style");

    // The archive holds a response for every page and requisite, what a replay needs; the images with the
    // same bytes as an earlier one are revisit records of it.
    url_set archived;
    const std::string warc = read_file(outputs.warc.path);
    for (std::size_t at = warc.find("WARC-Type: "); at != std::string::npos;
         at = warc.find("WARC-Type: ", at + 1)) {
        const auto type = warc.substr(at, warc.find("\r\n", at) - at);
        if (type != "WARC-Type: response" && type != "WARC-Type: revisit")
            continue;
        const auto uri = warc.find("WARC-Target-URI: ", at);
        ASSERT_NE(uri, std::string::npos);
        const auto start = uri + std::string_view("WARC-Target-URI: ").size();
        EXPECT_TRUE(archived.insert(warc.substr(start, warc.find("\r\n", start) - start)).second);
    }
    url_set expected;
    for (const auto& target : joined(pages_only, site_requisites))
        expected.insert(s + target);
    for (const auto& target : cdn_requisites)
        expected.insert(c + target);
    EXPECT_EQ(archived, expected);
}
