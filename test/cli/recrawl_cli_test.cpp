// Crawls that come back, with the real asiocrawl command against a real nginx serving static files (ETag and
// Last-Modified as nginx makes them): a site crawled into a state directory, changed (a page edited, one
// removed, one added), crawled again with --recrawl. Every known URL is asked for with its validators, the
// unchanged ones answer 304, each record says what changed, and the new WARC's revisit records, read by
// warcio.js, point at the first crawl's captures. A re-crawl killed midway resumes with the same command.
#include "support/compress.hpp"
#include "support/nginx_server.hpp"
#include "support/process.hpp"
#include "support/redis_server.hpp"
#include "support/temp_dir.hpp"

#include "state/fetch_history.hpp"
#include "store/state_store.hpp"

#include <boost/json/parse.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include <sys/wait.h>

namespace fs = std::filesystem;
using namespace asiocrawl::test;
using namespace std::chrono_literals;

namespace recrawl_cli_test {
namespace {

const std::string cli = ASIOCRAWL_CLI_PATH;

void write_file(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
}

std::string page(const std::string& title, const std::vector<std::string>& links) {
    std::string html =
        "<!doctype html><html><head><title>" + title + "</title></head><body><h1>" + title + "</h1>";
    for (const auto& link : links)
        html += "<a href=\"" + link + "\">" + link + "</a>\n";
    return html + "</body></html>\n";
}

/// URL -> its record (the last one, for a URL recorded twice across a kill); a torn last line is skipped.
std::map<std::string, boost::json::object> read_records(const fs::path& file) {
    std::map<std::string, boost::json::object> out;
    std::ifstream in(file);
    for (std::string line; std::getline(in, line);) {
        // A line being written (read while the crawler runs) or cut by a kill is not a record yet.
        boost::system::error_code ec;
        auto value = boost::json::parse(line, ec);
        if (ec || !value.is_object())
            continue;
        auto& object = value.as_object();
        out[std::string(object.at("url").as_string())] = std::move(object);
    }
    return out;
}

std::string change_of(const boost::json::object& r) {
    const auto* c = r.if_contains("change");
    return c != nullptr ? std::string(c->as_string()) : "";
}

struct warc_record {
    std::string type;
    boost::json::object headers;
    int http_status = 0;
};

/// The records of `files` as warcio.js reads them; empty (and the test skipped) without warcio.js.
std::vector<warc_record> read_warcs(const std::vector<fs::path>& files, std::string& problem) {
    std::vector<warc_record> out;
    if (std::string_view(ASIOCRAWL_NODE_PROGRAM).empty() ||
        !fs::exists(fs::path(ASIOCRAWL_WARC_CHECK_DIR) / "node_modules" / "warcio" / "package.json")) {
        problem = "warcio.js is not installed: run scripts/install-test-tools.sh";
        return out;
    }
    std::string command =
        std::string("cd '") + ASIOCRAWL_WARC_CHECK_DIR + "' && '" + ASIOCRAWL_NODE_PROGRAM + "' dump.mjs";
    for (const auto& f : files)
        command += " '" + f.string() + "'";
    FILE* pipe = ::popen(command.c_str(), "r");
    std::string text;
    char buffer[4096];
    while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe))
        text.append(buffer, n);
    const int status = ::pclose(pipe);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        problem = "warcio.js could not read the WARC: " + text;
        return out;
    }
    std::stringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        auto value = boost::json::parse(line).as_object();
        warc_record r;
        r.type = std::string(value.at("type").as_string());
        r.headers = value.at("headers").as_object();
        // warcio gives the status as a number, a string, or null for a request.
        if (const auto* s = value.if_contains("http_status"); s != nullptr && s->is_string())
            r.http_status = std::atoi(s->as_string().c_str());
        else if (s != nullptr && s->is_number())
            r.http_status = static_cast<int>(s->to_number<std::int64_t>());
        out.push_back(std::move(r));
    }
    return out;
}

/// A WARC header of `r` (warcio.js gives the names in lower case).
std::string header(const warc_record& r, std::string name) {
    for (auto& c : name)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const auto* v = r.headers.if_contains(name);
    return v != nullptr ? std::string(v->as_string()) : "";
}

/// URL -> its fetch history entry, as the state directory keeps it.
std::map<std::string, asiocrawl::detail::fetch_history> read_history(const fs::path& state) {
    std::map<std::string, asiocrawl::detail::fetch_history> out;
    asiocrawl::detail::state_lock lock(state);
    const auto store = asiocrawl::detail::state_store::open(state);
    store->for_each_history([&](std::string_view url, std::string_view bytes) {
        auto entry = asiocrawl::detail::decode_fetch_history(bytes);
        EXPECT_TRUE(entry) << url;
        if (entry)
            out.emplace(url, std::move(*entry));
    });
    return out;
}

/// The record at `offset` of a .warc.gz: the one gzip member there, inflated (and only it: `length` bytes).
std::string warc_record_at(const fs::path& file, std::uint64_t offset, std::uint64_t length) {
    std::ifstream in(file, std::ios::binary);
    std::string member(length, '\0');
    in.seekg(static_cast<std::streamoff>(offset));
    in.read(member.data(), static_cast<std::streamsize>(length));
    if (static_cast<std::uint64_t>(in.gcount()) != length)
        return "(past the end of the file)";
    bool whole = false;
    auto out = gunzip_member(member, &whole); // exactly one member, all of it
    return whole ? out : "(not one whole gzip member)";
}

struct recrawl_cli : ::testing::Test {
    temp_dir dir{"recrawl-cli"};
    fs::path site = dir.path / "site";
    fs::path state = dir.path / "state";

    process_result crawl(const std::string& root, const std::string& generation,
                         std::vector<std::string> extra = {}) {
        std::vector<std::string> argv{cli,
                                      root,
                                      "--state-dir",
                                      state.string(),
                                      "-o",
                                      (dir.path / (generation + ".jsonl")).string(),
                                      "--warc",
                                      (dir.path / (generation + ".warc.gz")).string(),
                                      "--report-json",
                                      (dir.path / (generation + ".json")).string(),
                                      "--no-report",
                                      "-q"};
        argv.insert(argv.end(), extra.begin(), extra.end());
        return run_process(argv, 120s);
    }

    boost::json::object counters(const std::string& generation) {
        std::ifstream in(dir.path / (generation + ".json"));
        std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
        return boost::json::parse(text).as_object().at("counters").as_object();
    }
};

TEST_F(recrawl_cli, ConditionalRequestsFor304sChangesAndRevisits) {
    write_file(site / "index.html", page("home", {"a.html", "b.html", "c.html", "d.html"}));
    write_file(site / "a.html", page("a", {"index.html"}));
    write_file(site / "b.html", page("b", {"f.html"}));
    write_file(site / "c.html", page("c", {}));
    write_file(site / "d.html", page("d", {}));
    write_file(site / "f.html", page("f", {}));
    nginx_server server(site);
    const std::string root = server.origin() + "/index.html";

    auto first = crawl(root, "gen1");
    ASSERT_EQ(first.exit_code, 0) << first.err;
    const auto gen1 = read_records(dir.path / "gen1.jsonl");
    ASSERT_EQ(gen1.size(), 6u);
    for (const auto& [url, r] : gen1) {
        EXPECT_EQ(change_of(r), "") << url << ": a first crawl compares with nothing";
        EXPECT_TRUE(r.contains("etag")) << url;
        EXPECT_TRUE(r.contains("last_modified")) << url;
    }
    const auto requests_before = server.requests().size();

    // The state says which WARC record holds each page: its offset and length there give the member that
    // inflates to that response record.
    const auto history1 = read_history(state);
    for (const auto& [url, r] : gen1) {
        ASSERT_TRUE(history1.contains(url)) << url;
        const auto& h = history1.at(url);
        EXPECT_EQ(h.warc_file, "gen1.warc.gz") << url;
        const auto text = warc_record_at(dir.path / h.warc_file, h.warc_offset, h.warc_length);
        EXPECT_TRUE(text.starts_with("WARC/1.1\r\nWARC-Type: response\r\n"))
            << url << ": " << text.substr(0, 80);
        EXPECT_NE(text.find("WARC-Record-ID: " + asiocrawl::detail::capture_record_id(h.capture_id) + "\r\n"),
                  std::string::npos)
            << url;
        EXPECT_NE(text.find("WARC-Target-URI: " + url + "\r\n"), std::string::npos) << url;
    }

    // The site changes: b edited (another size: another ETag even within the same second) to link to a new
    // page e instead of f (which stays on the server, linked from nowhere), c removed.
    write_file(site / "b.html", page("b, edited", {"e.html"}));
    fs::remove(site / "c.html");
    write_file(site / "e.html", page("e", {}));

    auto second = crawl(root, "gen2", {"--recrawl"});
    ASSERT_EQ(second.exit_code, 0) << second.err;
    const auto gen2 = read_records(dir.path / "gen2.jsonl");
    const auto o = server.origin();
    ASSERT_EQ(gen2.size(), 7u);

    // Every known URL a page still links to was asked for again, conditionally (a 304's links are followed
    // from the history); the new one plainly; f, which no page links to any more, not at all.
    std::map<std::string, nginx_request> asked;
    const auto all = server.requests();
    for (std::size_t i = requests_before; i < all.size(); ++i)
        asked[all[i].uri] = all[i];
    for (const char* known : {"/index.html", "/a.html", "/b.html", "/c.html", "/d.html"}) {
        ASSERT_TRUE(asked.contains(known)) << known << " was not fetched again";
        EXPECT_FALSE(asked[known].if_none_match.empty()) << known;
        EXPECT_FALSE(asked[known].if_modified_since.empty()) << known;
    }
    EXPECT_TRUE(asked["/e.html"].if_none_match.empty());
    EXPECT_FALSE(asked.contains("/f.html"));
    EXPECT_EQ(asked["/index.html"].status, 304);
    EXPECT_EQ(asked["/a.html"].status, 304);
    EXPECT_EQ(asked["/d.html"].status, 304);
    EXPECT_EQ(asked["/b.html"].status, 200);
    EXPECT_EQ(asked["/c.html"].status, 404);

    EXPECT_EQ(change_of(gen2.at(o + "/index.html")), "unchanged");
    EXPECT_TRUE(gen2.at(o + "/index.html").contains("not_modified"));
    EXPECT_EQ(gen2.at(o + "/index.html").at("status").as_int64(), 304);
    EXPECT_EQ(change_of(gen2.at(o + "/a.html")), "unchanged");
    EXPECT_EQ(change_of(gen2.at(o + "/d.html")), "unchanged");
    EXPECT_EQ(change_of(gen2.at(o + "/b.html")), "changed");
    EXPECT_EQ(change_of(gen2.at(o + "/c.html")), "gone");
    EXPECT_EQ(change_of(gen2.at(o + "/e.html")), "new");
    EXPECT_EQ(change_of(gen2.at(o + "/f.html")), "gone");
    EXPECT_EQ(gen2.at(o + "/f.html").at("status").as_int64(), 0);
    EXPECT_EQ(gen2.at(o + "/f.html").at("tries").as_int64(), 0);

    // A 304 stands for the first crawl's capture and keeps its place; a changed page is in the new archive.
    const auto history2 = read_history(state);
    EXPECT_EQ(history2.at(o + "/a.html").warc_file, "gen1.warc.gz");
    EXPECT_EQ(history2.at(o + "/a.html").warc_offset, history1.at(o + "/a.html").warc_offset);
    EXPECT_EQ(history2.at(o + "/b.html").warc_file, "gen2.warc.gz");
    const auto& b = history2.at(o + "/b.html");
    EXPECT_NE(warc_record_at(dir.path / b.warc_file, b.warc_offset, b.warc_length).find("b, edited"),
              std::string::npos);
    EXPECT_FALSE(history2.contains(o + "/f.html")) << "gone: forgotten";

    const auto c = counters("gen2");
    EXPECT_EQ(c.at("change_unchanged").as_int64(), 3);
    EXPECT_EQ(c.at("change_changed").as_int64(), 1);
    EXPECT_EQ(c.at("change_gone").as_int64(), 2);
    EXPECT_EQ(c.at("gone_unlinked").as_int64(), 1);
    EXPECT_EQ(c.at("change_new").as_int64(), 1);
    EXPECT_EQ(c.at("not_modified").as_int64(), 3);

    // The archives: each 304 is a server-not-modified revisit of the first crawl's response record.
    std::string problem;
    const auto warc1 = read_warcs({dir.path / "gen1.warc.gz"}, problem);
    const auto warc2 = read_warcs({dir.path / "gen2.warc.gz"}, problem);
    if (!problem.empty())
        GTEST_SKIP() << problem;
    std::map<std::string, std::string> captured_at; // URL -> WARC-Date of its response in the first crawl
    std::map<std::string, std::string> captured_as; // URL -> its WARC-Record-ID
    for (const auto& r : warc1)
        if (r.type == "response") {
            captured_at[header(r, "WARC-Target-URI")] = header(r, "WARC-Date");
            captured_as[header(r, "WARC-Target-URI")] = header(r, "WARC-Record-ID");
        }
    std::set<std::string> revisited;
    for (const auto& r : warc2) {
        const auto url = header(r, "WARC-Target-URI");
        // (An identical-payload revisit within this crawl is the writer's own: nginx's 404 page for c.html is
        // the one it served for robots.txt.)
        if (r.type == "revisit" &&
            header(r, "WARC-Profile") == "http://netpreserve.org/warc/1.1/revisit/server-not-modified") {
            EXPECT_EQ(header(r, "WARC-Refers-To-Target-URI"), url);
            EXPECT_EQ(header(r, "WARC-Refers-To-Date"), captured_at[url]) << url;
            EXPECT_EQ(header(r, "WARC-Refers-To"), captured_as[url]) << url;
            EXPECT_FALSE(captured_as[url].empty()) << url;
            EXPECT_EQ(r.http_status, 304) << url;
            revisited.insert(url);
        } else if (r.type == "response") {
            EXPECT_NE(r.http_status, 304) << url << ": a 304 is archived as a revisit";
        }
    }
    EXPECT_EQ(revisited, (std::set<std::string>{o + "/index.html", o + "/a.html", o + "/d.html"}));
}

TEST_F(recrawl_cli, AKilledRecrawlResumesWithTheSameCommand) {
    constexpr int pages = 120;
    std::vector<std::string> links;
    for (int i = 0; i < pages; ++i) {
        links.push_back("p" + std::to_string(i) + ".html");
        write_file(site / links.back(), page("page " + std::to_string(i), {}));
    }
    write_file(site / "index.html", page("home", links));
    nginx_server server(site);
    const std::string root = server.origin() + "/index.html";
    ASSERT_EQ(crawl(root, "gen1").exit_code, 0);

    // Every tenth page edited.
    for (int i = 0; i < pages; i += 10)
        write_file(site / ("p" + std::to_string(i) + ".html"),
                   page("page " + std::to_string(i) + " edited", {}));

    // Slow enough to be killed midway: one request at a time, 20 ms apart.
    const std::vector<std::string> slow{"--recrawl", "--max-per-host", "1", "--delay", "20ms"};
    std::vector<std::string> argv{
        cli,           root, "--state-dir", state.string(), "-o", (dir.path / "gen2.jsonl").string(),
        "--no-report", "-q"};
    argv.insert(argv.end(), slow.begin(), slow.end());
    {
        child_process killed(argv);
        const auto deadline = std::chrono::steady_clock::now() + 60s;
        while (read_records(dir.path / "gen2.jsonl").size() < 30 &&
               std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(20ms);
        killed.signal(SIGKILL);
        EXPECT_EQ(killed.wait(10s).exit_code, 128 + SIGKILL);
    }
    const auto before_resume = read_records(dir.path / "gen2.jsonl").size();
    ASSERT_GE(before_resume, 30u);
    ASSERT_LT(before_resume, static_cast<std::size_t>(pages));

    auto resumed = run_process(argv, 120s);
    ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
    const auto gen2 = read_records(dir.path / "gen2.jsonl");
    ASSERT_EQ(gen2.size(), static_cast<std::size_t>(pages + 1));
    for (int i = 0; i < pages; ++i) {
        const auto url = server.origin() + "/p" + std::to_string(i) + ".html";
        EXPECT_EQ(change_of(gen2.at(url)), i % 10 == 0 ? "changed" : "unchanged") << url;
    }
    // A third run: the re-crawl finished, so --recrawl begins generation 3, where everything is unchanged.
    auto third = run_process({cli, root, "--state-dir", state.string(), "--recrawl", "-o",
                              (dir.path / "gen3.jsonl").string(), "--no-report", "-q"},
                             120s);
    ASSERT_EQ(third.exit_code, 0) << third.err;
    for (const auto& [url, r] : read_records(dir.path / "gen3.jsonl"))
        EXPECT_EQ(change_of(r), "unchanged") << url;
}

TEST_F(recrawl_cli, RecrawlFromAPreviousRunsRecords) {
    write_file(site / "index.html", page("home", {"a.html"}));
    write_file(site / "a.html", page("a", {}));
    nginx_server server(site);
    const std::string root = server.origin() + "/index.html";
    auto first = run_process({cli, root, "-o", (dir.path / "gen1.jsonl").string(), "--no-report", "-q"}, 60s);
    ASSERT_EQ(first.exit_code, 0) << first.err;
    write_file(site / "a.html", page("a, edited", {}));
    auto second = run_process({cli, root, "--recrawl-from", (dir.path / "gen1.jsonl").string(), "-o",
                               (dir.path / "gen2.jsonl").string(), "--no-report", "-q"},
                              60s);
    ASSERT_EQ(second.exit_code, 0) << second.err;
    const auto gen2 = read_records(dir.path / "gen2.jsonl");
    EXPECT_EQ(change_of(gen2.at(server.origin() + "/index.html")), "unchanged");
    EXPECT_EQ(change_of(gen2.at(server.origin() + "/a.html")), "changed");
    EXPECT_EQ(server.requests().back().if_none_match.empty(), false);

    // Without a state directory --recrawl is refused: it names what to use instead.
    auto refused = run_process({cli, root, "--recrawl", "--no-report", "-q"}, 60s);
    EXPECT_EQ(refused.exit_code, 2);
    EXPECT_NE(refused.err.find("recrawl_from"), std::string::npos) << refused.err;
}

TEST_F(recrawl_cli, ASharedCrawlRecrawlsThroughRedisFromEveryInstance) {
    write_file(site / "index.html", page("home", {"a.html", "b.html", "c.html"}));
    write_file(site / "a.html", page("a", {}));
    write_file(site / "b.html", page("b", {}));
    write_file(site / "c.html", page("c", {}));
    nginx_server server(site);
    redis_server redis;
    const std::string root = server.origin() + "/index.html";
    const auto instance = [&](const std::string& name, const std::string& generation, bool recrawl,
                              const char* delay = "0") {
        std::vector<std::string> argv{
            cli,           root,   "--redis",    redis.url(),
            "--crawl-id",  "site", "--instance", name,
            "--lease",     "2s",   "-o",         (dir.path / (generation + "-" + name + ".jsonl")).string(),
            "--no-report", "-q"};
        if (recrawl)
            argv.emplace_back("--recrawl");
        argv.insert(argv.end(), {"--delay", delay});
        return std::make_unique<child_process>(argv);
    };
    auto first = instance("one", "gen1", false)->wait(60s);
    ASSERT_EQ(first.exit_code, 0) << first.err;
    ASSERT_EQ(read_records(dir.path / "gen1-one.jsonl").size(), 4u);
    const auto requests_before = server.requests().size();

    write_file(site / "b.html", page("b, edited", {}));
    fs::remove(site / "c.html");
    // Two instances begin the re-crawl at once: one begins the generation, the other joins it (a delay keeps
    // the generation going for two seconds at least: one that ended before an instance came would be followed
    // by the next).
    auto one = instance("one", "gen2", true, "500ms");
    auto two = instance("two", "gen2", true, "500ms");
    for (auto* child : {one.get(), two.get()}) {
        const auto result = child->wait(60s);
        EXPECT_EQ(result.exit_code, 0) << result.err;
    }
    auto gen2 = read_records(dir.path / "gen2-one.jsonl");
    gen2.merge(read_records(dir.path / "gen2-two.jsonl"));
    const auto o = server.origin();
    ASSERT_EQ(gen2.size(), 4u);
    EXPECT_EQ(change_of(gen2.at(o + "/index.html")), "unchanged");
    EXPECT_EQ(change_of(gen2.at(o + "/a.html")), "unchanged");
    EXPECT_EQ(change_of(gen2.at(o + "/b.html")), "changed");
    EXPECT_EQ(change_of(gen2.at(o + "/c.html")), "gone");
    std::map<std::string, int> asked;
    const auto all = server.requests();
    for (std::size_t i = requests_before; i < all.size(); ++i) {
        ++asked[all[i].uri];
        if (all[i].uri != "/robots.txt") {
            EXPECT_FALSE(all[i].if_none_match.empty()) << all[i].uri << " was not asked conditionally";
        }
    }
    for (const char* known : {"/index.html", "/a.html", "/b.html", "/c.html"})
        EXPECT_EQ(asked[known], 1) << known << ": once, by one of the instances";

    // Run again after the generation is done: a third one begins (nothing changed: all unchanged).
    auto third = instance("one", "gen3", true)->wait(60s);
    ASSERT_EQ(third.exit_code, 0) << third.err;
    const auto gen3 = read_records(dir.path / "gen3-one.jsonl");
    EXPECT_EQ(change_of(gen3.at(o + "/b.html")), "unchanged");
    EXPECT_EQ(gen3.at(o + "/b.html").at("status").as_int64(), 304);
    EXPECT_EQ(gen3.at(o + "/c.html").at("status").as_int64(), 404);
    EXPECT_EQ(gen3.size(), 4u);
}

TEST_F(recrawl_cli, ASharedRecrawlFollowsLinksAndReportsUnlinkedUrlsGoneWithoutRequestingThem) {
    // index -> a, b; a -> c; b -> d. Then b links to e (new) instead of d, which stays on the site: only
    // b changes, and nothing leads to d any more.
    write_file(site / "index.html", page("home", {"a.html", "b.html"}));
    write_file(site / "a.html", page("a", {"c.html"}));
    write_file(site / "b.html", page("b", {"d.html"}));
    write_file(site / "c.html", page("c", {}));
    write_file(site / "d.html", page("d", {}));
    nginx_server server(site);
    redis_server redis;
    const std::string root = server.origin() + "/index.html";
    // The delay keeps the second generation going while the second instance starts.
    const auto instance = [&](const std::string& name, const std::string& generation, bool recrawl,
                              const char* delay = "0") {
        std::vector<std::string> argv{cli,
                                      root,
                                      "--redis",
                                      redis.url(),
                                      "--crawl-id",
                                      "site",
                                      "--instance",
                                      name,
                                      "--lease",
                                      "2s",
                                      "--delay",
                                      delay,
                                      "-o",
                                      (dir.path / (generation + "-" + name + ".jsonl")).string(),
                                      "--report-json",
                                      (dir.path / (generation + "-" + name + ".json")).string(),
                                      "--no-report",
                                      "-q"};
        if (recrawl)
            argv.emplace_back("--recrawl");
        return std::make_unique<child_process>(argv);
    };
    auto first = instance("one", "gen1", false)->wait(60s);
    ASSERT_EQ(first.exit_code, 0) << first.err;
    ASSERT_EQ(read_records(dir.path / "gen1-one.jsonl").size(), 5u);
    const auto requests_before = server.requests().size();

    write_file(site / "b.html", page("b, edited", {"e.html"}));
    write_file(site / "e.html", page("e", {}));
    // One instance begins the generation, the other joins it once it runs (without --recrawl: one that came
    // after the end would find the crawl over, instead of beginning a third generation).
    auto one = instance("one", "gen2", true, "250ms");
    for (int i = 0; i < 6000 && server.requests().size() == requests_before; ++i)
        std::this_thread::sleep_for(10ms);
    auto two = instance("two", "gen2", false, "250ms");
    for (auto* child : {one.get(), two.get()}) {
        const auto result = child->wait(60s);
        EXPECT_EQ(result.exit_code, 0) << result.err;
    }
    auto gen2 = read_records(dir.path / "gen2-one.jsonl");
    gen2.merge(read_records(dir.path / "gen2-two.jsonl"));
    const auto o = server.origin();
    ASSERT_EQ(gen2.size(), 6u);
    for (const char* unchanged : {"/index.html", "/a.html", "/c.html"}) {
        EXPECT_EQ(change_of(gen2.at(o + unchanged)), "unchanged") << unchanged;
        EXPECT_EQ(gen2.at(o + unchanged).at("status").as_int64(), 304) << unchanged;
    }
    EXPECT_EQ(change_of(gen2.at(o + "/b.html")), "changed");
    EXPECT_EQ(change_of(gen2.at(o + "/e.html")), "new");
    const auto& d = gen2.at(o + "/d.html");
    EXPECT_EQ(change_of(d), "gone");
    EXPECT_EQ(d.at("status").as_int64(), 0);
    EXPECT_EQ(d.at("tries").as_int64(), 0);
    std::map<std::string, int> asked;
    const auto all = server.requests();
    for (std::size_t i = requests_before; i < all.size(); ++i)
        ++asked[all[i].uri];
    EXPECT_EQ(asked.count("/d.html"), 0u) << "an unlinked URL is reported gone without a request";
    for (const char* reached : {"/index.html", "/a.html", "/b.html", "/c.html", "/e.html"})
        EXPECT_EQ(asked[reached], 1) << reached << ": once, by one of the instances";

    // Every instance's report counts the whole generation.
    std::ifstream in(dir.path / "gen2-one.json");
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    const auto counters = boost::json::parse(text).as_object().at("counters").as_object();
    const auto counter = [&](const char* name) {
        const auto* v = counters.if_contains(name);
        return v != nullptr ? v->to_number<std::int64_t>() : 0;
    };
    EXPECT_EQ(counter("gone_unlinked"), 1) << text;
    EXPECT_EQ(counter("change_gone"), 1) << text;
    EXPECT_EQ(counter("not_modified"), 3) << text;
    EXPECT_EQ(counter("change_unchanged"), 3) << text;
    EXPECT_EQ(counter("change_changed"), 1) << text;
    EXPECT_EQ(counter("change_new"), 1) << text;

    // Gone is reported once: the next generation neither asks for d nor reports it again.
    auto third = instance("one", "gen3", true)->wait(60s);
    ASSERT_EQ(third.exit_code, 0) << third.err;
    const auto gen3 = read_records(dir.path / "gen3-one.jsonl");
    EXPECT_EQ(gen3.size(), 5u);
    EXPECT_EQ(gen3.count(o + "/d.html"), 0u);
    EXPECT_EQ(change_of(gen3.at(o + "/e.html")), "unchanged");
}

TEST_F(recrawl_cli, ContinuousModeRevisitsUntilStopped) {
    write_file(site / "index.html", page("home", {"a.html"}));
    write_file(site / "a.html", page("a", {}));
    nginx_server server(site);
    const std::string root = server.origin() + "/index.html";
    // Intervals of 1 to 2 seconds, stopped after 5: each page is fetched about three times.
    auto run = run_process({cli, root, "--continuous", "--revisit-min", "1s", "--revisit-max", "2s",
                            "--max-time", "5s", "--state-dir", state.string(), "-o",
                            (dir.path / "records.jsonl").string(), "--no-report", "-q"},
                           60s);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    std::vector<nginx_request> home;
    for (const auto& r : server.requests())
        if (r.uri == "/index.html")
            home.push_back(r);
    ASSERT_GE(home.size(), 2u);
    EXPECT_EQ(home[0].status, 200);
    EXPECT_TRUE(home[0].if_none_match.empty());
    for (std::size_t i = 1; i < home.size(); ++i) {
        EXPECT_FALSE(home[i].if_none_match.empty()) << "visit " << i;
        EXPECT_EQ(home[i].status, 304) << "visit " << i;
    }
    // Records: the first visit is new, the others unchanged.
    std::vector<std::string> changes;
    std::ifstream in(dir.path / "records.jsonl");
    for (std::string line; std::getline(in, line);) {
        const auto r = boost::json::parse(line).as_object();
        if (r.at("url").as_string() == root)
            changes.push_back(change_of(r));
    }
    ASSERT_EQ(changes.size(), home.size());
    EXPECT_EQ(changes[0], "new");
    for (std::size_t i = 1; i < changes.size(); ++i)
        EXPECT_EQ(changes[i], "unchanged");

    // The same command again: the schedule was kept, so the first request of the new run is a conditional
    // one.
    const auto before = server.requests().size();
    auto again = run_process({cli, root, "--continuous", "--revisit-min", "1s", "--revisit-max", "2s",
                              "--max-time", "3s", "--state-dir", state.string(), "-o",
                              (dir.path / "records2.jsonl").string(), "--no-report", "-q"},
                             60s);
    EXPECT_EQ(again.exit_code, 0) << again.err;
    const auto after = server.requests();
    ASSERT_GT(after.size(), before);
    for (std::size_t i = before; i < after.size(); ++i) {
        if (after[i].uri != "/robots.txt") { // asked again each run (RFC 9309), not from the history
            EXPECT_FALSE(after[i].if_none_match.empty())
                << after[i].uri << ": a resumed schedule revisits, never starts over";
        }
    }
}

TEST_F(recrawl_cli, ContinuousModeOverRedisRevisitsFromTwoInstancesAndGoesOnWithTheSchedule) {
    write_file(site / "index.html", page("home", {"a.html", "b.html"}));
    write_file(site / "a.html", page("a", {}));
    write_file(site / "b.html", page("b", {}));
    nginx_server server(site);
    redis_server redis;
    const std::string root = server.origin() + "/index.html";
    // Intervals of 1 to 2 seconds (the first one is revisit.initial clamped to 2 s). Each run is stopped with
    // SIGTERM once the server has seen what it waits for (a fixed --max-time would race a slow start), the
    // time limit only a backstop.
    const auto instance = [&](const std::string& name, const char* run_time) {
        std::vector<std::string> argv{cli,
                                      root,
                                      "--continuous",
                                      "--revisit-min",
                                      "1s",
                                      "--revisit-max",
                                      "2s",
                                      "--max-time",
                                      run_time,
                                      "--redis",
                                      redis.url(),
                                      "--crawl-id",
                                      "live",
                                      "--instance",
                                      name,
                                      "--lease",
                                      "2s",
                                      "-o",
                                      (dir.path / (name + ".jsonl")).string(),
                                      "--no-report",
                                      "-q"};
        return std::make_unique<child_process>(argv);
    };
    const auto stop_when = [&](const std::vector<child_process*>& children, auto&& done) {
        for (int i = 0; i < 3000 && !done(); ++i)
            std::this_thread::sleep_for(10ms);
        for (auto* child : children) {
            child->signal(SIGTERM);
            const auto result = child->wait(60s);
            EXPECT_EQ(result.exit_code, 143) << "a graceful stop: " << result.err;
        }
    };
    const auto every_page_visited_twice = [&] {
        std::map<std::string, int> count;
        for (const auto& r : server.requests())
            if (r.uri != "/robots.txt")
                ++count[r.uri];
        return count.size() == 3 &&
               std::all_of(count.begin(), count.end(), [](const auto& c) { return c.second >= 2; });
    };
    auto one = instance("one", "60s");
    auto two = instance("two", "60s");
    stop_when({one.get(), two.get()}, every_page_visited_twice);
    // Each page: its first visit in full, once (by one of the instances), every later one conditional.
    std::map<std::string, std::vector<nginx_request>> visits;
    for (const auto& r : server.requests())
        if (r.uri != "/robots.txt")
            visits[r.uri].push_back(r);
    ASSERT_EQ(visits.size(), 3u);
    for (const auto& [uri, requests] : visits) {
        ASSERT_GE(requests.size(), 2u) << uri << ": revisited";
        EXPECT_TRUE(requests[0].if_none_match.empty()) << uri;
        EXPECT_EQ(requests[0].status, 200) << uri;
        for (std::size_t i = 1; i < requests.size(); ++i) {
            EXPECT_FALSE(requests[i].if_none_match.empty()) << uri << " visit " << i;
            EXPECT_EQ(requests[i].status, 304) << uri << " visit " << i;
        }
    }
    // The records of both instances: the first visit of a page new, the others unchanged.
    std::size_t records = 0;
    std::map<std::string, std::vector<std::string>> changes;
    for (const char* name : {"one", "two"}) {
        std::ifstream in(dir.path / (std::string(name) + ".jsonl"));
        for (std::string line; std::getline(in, line); ++records) {
            const auto r = boost::json::parse(line).as_object();
            changes[std::string(r.at("url").as_string())].push_back(change_of(r));
        }
    }
    for (const auto& [url, found] : changes) {
        if (url.ends_with("/robots.txt"))
            continue;
        EXPECT_EQ(std::count(found.begin(), found.end(), "new"), 1) << url;
        EXPECT_EQ(std::count(found.begin(), found.end(), "unchanged"), static_cast<long>(found.size()) - 1)
            << url;
    }

    // Both stopped, one started again: it goes on with the schedule in Redis (nothing starts over in full).
    const auto before = server.requests().size();
    auto again = instance("one", "60s");
    stop_when({again.get()}, [&] { return server.requests().size() > before; });
    const auto after = server.requests();
    ASSERT_GT(after.size(), before);
    for (std::size_t i = before; i < after.size(); ++i) {
        if (after[i].uri != "/robots.txt") {
            EXPECT_FALSE(after[i].if_none_match.empty())
                << after[i].uri << ": a resumed schedule revisits, never starts over";
        }
    }
    // `asiocrawl report` does not call it over: each of the three pages waits for its revisit, or (caught by
    // the stop between its due time and its record) is unfinished in the frontier.
    const auto report = run_process({cli, "report", "--redis", redis.url(), "--crawl-id", "live"}, 60s);
    EXPECT_EQ(report.exit_code, 0) << report.err;
    const auto count_after = [&](const std::string& label) {
        const auto at = report.out.find(label);
        return at == std::string::npos ? 0 : std::stoi(report.out.substr(at + label.size()));
    };
    EXPECT_EQ(count_after("Unfinished: ") + count_after("Scheduled: "), 3) << report.out;
    EXPECT_NE(report.out.find(" URLs wait for their revisit"), std::string::npos) << report.out;
    EXPECT_EQ(report.out.find("the crawl is over"), std::string::npos) << report.out;

    // Only a continuous instance may join a continuous crawl: another would drop the revisits it fetches.
    auto one_shot =
        run_process({cli, root, "--redis", redis.url(), "--crawl-id", "live", "--no-report", "-q"}, 60s);
    EXPECT_EQ(one_shot.exit_code, 2);
    EXPECT_NE(one_shot.err.find("continuous"), std::string::npos) << one_shot.err;
}

} // namespace
} // namespace recrawl_cli_test
