// CDXJ indexes and WACZ packages: SURT keys against pywb's (the surt package's) own examples, then real
// crawls of a loopback site into WARC files whose index is checked record by record against the bytes on
// disk, and whose WACZ is opened with libzip and checked against its datapackage.json.
#include <asiocrawl/outputs/archive.hpp>

#include <asiocrawl/crawler.hpp>
#include <asiocrawl/error.hpp>
#include <asiocrawl/outputs/output_set.hpp>
#include <asiocrawl/outputs/warc.hpp>

#include "support/compress.hpp"
#include "support/files.hpp"
#include "support/loopback_crawl.hpp"
#include "support/temp_dir.hpp"

#include <boost/json/parse.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <openssl/evp.h>
#include <zip.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using namespace asiocrawl;
using namespace asiocrawl::outputs;
using asiocrawl::test::read_file;

// ---- sans-io ----

struct surt_case {
    const char* url;
    const char* key;
};

class SurtKey : public testing::TestWithParam<surt_case> {};

TEST_P(SurtKey, AsPywbMakesIt) {
    EXPECT_EQ(surt_key(GetParam().url), GetParam().key) << GetParam().url;
}

// The first ones are the surt package's own test cases (tests/test_surt.py, IAURLCanonicalizer's tests).
INSTANTIATE_TEST_SUITE_P(
    Table, SurtKey,
    testing::Values(surt_case{"http://www.archive.org/", "org,archive)/"},
                    surt_case{"http://archive.org/", "org,archive)/"},
                    surt_case{"http://archive.org/goo/", "org,archive)/goo"},
                    surt_case{"http://archive.org/goo/?", "org,archive)/goo"},
                    surt_case{"http://archive.org/goo/?b&a", "org,archive)/goo?a&b"},
                    surt_case{"http://archive.org/goo/?a=2&b&a=1", "org,archive)/goo?a=1&a=2&b"},
                    surt_case{"http://ARCHIVE.ORG/", "org,archive)/"},
                    surt_case{"http://www.archive.org:80/", "org,archive)/"},
                    surt_case{"https://www.archive.org:80/", "org,archive:80)/"},
                    surt_case{"http://www.archive.org:443/", "org,archive:443)/"},
                    surt_case{"https://www.archive.org:443/", "org,archive)/"},
                    surt_case{"http://www.archive.org/big/", "org,archive)/big"},
                    surt_case{"http://www12.foo.com/", "com,foo)/"},
                    surt_case{"http://www2foo.com/", "com,www2foo)/"},
                    surt_case{"http://www2.www2foo.com/", "com,www2foo)/"},
                    surt_case{"http://example.com/foo?X=Y", "com,example)/foo?x=y"},
                    surt_case{"http://archive.org/index.html?a=1&", "org,archive)/index.html?&a=1"},
                    surt_case{"dns:archive.org", "dns:archive.org"},
                    surt_case{"mailto:foo@example.com", "mailto:foo@example.com"},
                    // And what a crawl on loopback archives.
                    surt_case{"http://127.0.0.1:8080/p/0.html", "1,0,0,127:8080)/p/0.html"},
                    surt_case{"http://user:pw@Example.COM./A/B/#frag", "com,example)/a/b"},
                    surt_case{"https://example.com", "com,example)/"},
                    surt_case{"https://example.com?b=1&a=2#x", "com,example)/?a=2&b=1"},
                    surt_case{"http://[::1]:8080/x", "[::1]:8080)/x"}));

TEST(CdxTimestamp, FourteenDigitsOfTheWarcDate) {
    EXPECT_EQ(cdx_timestamp("2024-05-01T12:34:56.123456Z"), "20240501123456");
    EXPECT_EQ(cdx_timestamp("2024-05-01T12:34:56Z"), "20240501123456");
    EXPECT_EQ(cdx_timestamp("2024-05-01"), "");
}

TEST(CdxjPath, BesideTheWarcFile) {
    EXPECT_EQ(cdxj_path_for("a/crawl-00001.warc.gz"), "a/crawl-00001.cdxj");
    EXPECT_EQ(cdxj_path_for("crawl.warc"), "crawl.cdxj");
    EXPECT_EQ(cdxj_path_for("dump.gz"), "dump.cdxj");
    EXPECT_EQ(cdxj_path_for("archive"), "archive.cdxj");
}

TEST(CdxjLine, KeyTimestampAndTheFieldsReplayToolsRead) {
    warc_capture c;
    c.type = "response";
    c.url = "http://www.example.com/A?b=1&a=2";
    c.date = "2024-05-01T12:34:56.123456Z";
    c.mime = "text/html";
    c.status = "200";
    c.digest = "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ";
    c.offset = 1131;
    c.length = 1447;
    EXPECT_EQ(cdxj_line(c, "crawl.warc.gz"),
              "com,example)/a?a=2&b=1 20240501123456 "
              "{\"url\":\"http://www.example.com/A?b=1&a=2\",\"mime\":\"text/html\",\"status\":\"200\","
              "\"digest\":\"sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ\",\"length\":\"1447\",\"offset\":\"1131\","
              "\"filename\":\"crawl.warc.gz\"}");
}

TEST(IndexWarcFile, RefusesWhatIsNotWarc) {
    test::temp_dir dir{"archive-bad"};
    const std::string plain = (dir.path / "x.warc").string();
    std::ofstream(plain) << "GET / HTTP/1.1\r\n\r\n";
    EXPECT_THROW(index_warc_file(plain), std::runtime_error);
    // A record whose block runs past the end of the file.
    std::ofstream(plain, std::ios::trunc)
        << "WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: 100\r\n\r\nabc";
    EXPECT_THROW(index_warc_file(plain), std::runtime_error);
    // A gzip member cut short.
    const std::string gz = (dir.path / "x.warc.gz").string();
    const std::string member = gzip_member(warc_record_bytes({{"WARC-Type", "resource"}}, "abc"));
    std::ofstream(gz, std::ios::binary) << member.substr(0, member.size() - 5);
    EXPECT_THROW(index_warc_file(gz), std::runtime_error);
    EXPECT_THROW(index_warc_file((dir.path / "missing.warc").string()), std::runtime_error);
}

// ---- real crawls ----

std::string sha256_hex(std::string_view data) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    EVP_Digest(data.data(), data.size(), digest, &n, EVP_sha256(), nullptr);
    std::string out;
    static constexpr char digits[] = "0123456789abcdef";
    for (unsigned int i = 0; i < n; ++i) {
        out += digits[digest[i] >> 4];
        out += digits[digest[i] & 0xF];
    }
    return "sha256:" + out;
}

std::string warc_header(std::string_view record, std::string_view name) {
    const std::string prefix = "\r\n" + std::string(name) + ": ";
    const auto at = record.find(prefix);
    if (at == std::string_view::npos || at > record.find("\r\n\r\n"))
        return "";
    const auto start = at + prefix.size();
    return std::string(record.substr(start, record.find("\r\n", start) - start));
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        lines.push_back(line);
    return lines;
}

/// Every line of a CDXJ file: its key and timestamp agree with its url and the record's date, and its offset
/// and length are exactly one record (one gzip member when compressed) whose Target-URI, date and payload
/// digest are the line's. Returns the number of revisit lines.
int check_cdxj_against_warcs(const std::vector<std::string>& lines, const fs::path& dir) {
    int revisits = 0;
    for (const auto& line : lines) {
        SCOPED_TRACE(line);
        const auto first = line.find(' ');
        const auto second = line.find(' ', first + 1);
        const auto fields = boost::json::parse(line.substr(second + 1)).as_object();
        const std::string url(fields.at("url").as_string());
        const std::string file(fields.at("filename").as_string());
        EXPECT_EQ(line.substr(0, first), surt_key(url));
        const std::string warc = read_file((dir / file).string());
        const auto offset = std::stoull(std::string(fields.at("offset").as_string()));
        const auto length = std::stoull(std::string(fields.at("length").as_string()));
        EXPECT_LE(offset + length, warc.size());
        std::string record = warc.substr(offset, length);
        if (file.ends_with(".gz")) {
            bool whole = false;
            record = test::gunzip_member(record, &whole);
            EXPECT_TRUE(whole) << "offset/length is not one whole gzip member";
        } else {
            EXPECT_TRUE(record.ends_with("\r\n\r\n"));
            EXPECT_TRUE(offset + length == warc.size() || warc.compare(offset + length, 9, "WARC/1.1\r") == 0)
                << "the next record does not start right after";
        }
        EXPECT_TRUE(record.starts_with("WARC/1.1\r\n"));
        EXPECT_EQ(warc_header(record, "WARC-Target-URI"), url);
        EXPECT_EQ(warc_header(record, "WARC-Payload-Digest"), std::string(fields.at("digest").as_string()));
        EXPECT_EQ(line.substr(first + 1, second - first - 1),
                  cdx_timestamp(warc_header(record, "WARC-Date")));
        const std::string type = warc_header(record, "WARC-Type");
        EXPECT_THAT(type, testing::AnyOf("response", "revisit"));
        if (type == "revisit") {
            EXPECT_EQ(fields.at("mime").as_string(), "warc/revisit");
            ++revisits;
        }
        if (fields.contains("status")) {
            EXPECT_TRUE(record.find("HTTP/1.1 " + std::string(fields.at("status").as_string())) !=
                        std::string::npos);
        }
    }
    return revisits;
}

std::size_t count_records(const std::string& warc_path, std::string_view type) {
    std::string text = read_file(warc_path);
    if (warc_path.ends_with(".gz")) {
        std::string all = test::gunzip_members(text);
        text = std::move(all);
    }
    std::size_t n = 0;
    const std::string needle = "\r\nWARC-Type: " + std::string(type) + "\r\n";
    for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
        ++n;
    return n;
}

/// A crawl of a loopback site into outputs.
struct archive_crawl_base : testing::Test {
    asio::io_context ctx;
    crawler_config config = test::loopback_crawl_config();
    test::loopback_site site{ctx.get_executor()};
    test::temp_dir dir{"archive-crawl"};

    /// Crawls `config.roots` with `outputs`; the report, or nullopt (a failure) when the crawl did not end.
    std::optional<report> crawl(const output_config& outputs) {
        crawler c{ctx.get_executor(), config};
        output_set out{ctx.get_executor(), outputs};
        out.attach(c);
        out.start();
        auto result = test::run_crawl(ctx, c, [&] {
            out.stop();
            site.stop();
        });
        if (!result)
            ADD_FAILURE() << "the crawl did not end";
        else
            EXPECT_THAT(out.finish(*result), testing::IsEmpty());
        return result;
    }
};

/// The site most archive tests crawl: titles, a repeated payload, an image, a query, a missing page.
struct archive_crawl : archive_crawl_base {
    archive_crawl() {
        config.roots = {site.origin() + "/"};
        site.add("/", "<html><head><title>Home &amp; garden</title></head><body><h1>Welcome home</h1>"
                      "<a href=/a.html>a</a> <a href=/b.html>b</a> <a href=/img.png>i</a> "
                      "<a href=/gone.html>gone</a> <a href=/q?z=1&a=2>q</a></body></html>");
        std::string more;
        for (int i = 0; i < 20; ++i) {
            site.add("/p/" + std::to_string(i) + ".html", "<title>Page " + std::to_string(i) + "</title>" +
                                                              std::string(400, 'x') + std::to_string(i));
            more += "<a href=/p/" + std::to_string(i) + ".html>p</a>";
        }
        const std::string same =
            "<html><head><title>\n  Same\n  page </title></head><body>same text" + more + "</body></html>";
        site.add("/a.html", same);
        site.add("/b.html", same); // the same payload: one of the two is a revisit record
        site.add("/img.png", "PNG", "image/png");
        site.add("/q?z=1&a=2", "<p>query page</p>");
    }
};

TEST_F(archive_crawl, CdxjOfACompressedWarcPointsAtEachRecordsGzipMember) {
    output_config outputs;
    outputs.warc.path = (dir.path / "crawl.warc.gz").string();
    outputs.cdxj = true;
    crawl(outputs);
    const std::string cdxj = read_file((dir.path / "crawl.cdxj").string());
    const auto lines = lines_of(cdxj);
    EXPECT_TRUE(std::is_sorted(lines.begin(), lines.end()));
    // One line per response and revisit record, none for warcinfo and request records.
    const std::size_t responses = count_records(outputs.warc.path, "response");
    const std::size_t revisits = count_records(outputs.warc.path, "revisit");
    EXPECT_GE(responses, 24u);
    EXPECT_EQ(lines.size(), responses + revisits);
    EXPECT_EQ(check_cdxj_against_warcs(lines, dir.path), static_cast<int>(revisits));
    EXPECT_GE(revisits, 1u);
    const std::string origin_key = surt_key(site.origin() + "/");
    EXPECT_THAT(cdxj, testing::HasSubstr(origin_key + "q?a=2&z=1 "));
    EXPECT_THAT(cdxj, testing::HasSubstr("\"mime\":\"image/png\""));
    EXPECT_THAT(cdxj, testing::HasSubstr("\"status\":\"404\""));
}

TEST_F(archive_crawl, CdxjOfAPlainWarcPointsAtEachRecord) {
    output_config outputs;
    outputs.warc.path = (dir.path / "crawl.warc").string();
    outputs.cdxj = true;
    crawl(outputs);
    const auto lines = lines_of(read_file((dir.path / "crawl.cdxj").string()));
    EXPECT_TRUE(std::is_sorted(lines.begin(), lines.end()));
    EXPECT_EQ(lines.size(),
              count_records(outputs.warc.path, "response") + count_records(outputs.warc.path, "revisit"));
    check_cdxj_against_warcs(lines, dir.path);
}

// br and zstd pages are decoded for their links and archived as they came, coded, as gzip ones are: the
// WARC's payload digest is that of the coded bytes (WARC 1.1: the content coding is kept).
using archive_codings = archive_crawl_base;

TEST_F(archive_codings, BrotliAndZstdPagesAreFollowedAndArchivedCoded) {
    const std::string br = test::brotli(test::links_page({"/z.html"}) + std::string(300, ' '));
    const std::string zs = test::zstd(test::links_page({"/end.html"}) + std::string(300, ' '));
    auto coded = [](const std::string& body, const char* coding) {
        auto res = test::make_response(200, body);
        res.set(boost::beast::http::field::content_encoding, coding);
        return res;
    };
    site.add("/", coded(br, "br"));
    site.add("/z.html", coded(zs, "zstd"));
    site.add("/end.html", "<p>the end</p>");
    config.roots = {site.origin() + "/"};
    output_config outputs;
    outputs.warc.path = (dir.path / "crawl.warc").string();
    outputs.warc.revisits = false;
    const auto result = crawl(outputs);
    ASSERT_TRUE(result.has_value());
    EXPECT_THAT(site.requested(), testing::UnorderedElementsAre("/", "/z.html", "/end.html"));
    for (const auto& r : result->records)
        EXPECT_FALSE(r.error) << r.url << ": " << r.error.message() << " " << r.error_detail;
    const std::string warc = read_file(outputs.warc.path);
    EXPECT_NE(warc.find("Content-Encoding: br\r\n"), std::string::npos);
    EXPECT_NE(warc.find(br), std::string::npos) << "the brotli bytes as they came";
    EXPECT_NE(warc.find(zs), std::string::npos) << "the zstd bytes as they came";
    EXPECT_NE(warc.find("WARC-Payload-Digest: " + warc_sha1_digest(br) + "\r\n"), std::string::npos);
    EXPECT_NE(warc.find("WARC-Payload-Digest: " + warc_sha1_digest(zs) + "\r\n"), std::string::npos);
}

TEST_F(archive_crawl, RotatedFilesEachGetAnIndex) {
    output_config outputs;
    outputs.warc.path = (dir.path / "crawl-{serial}.warc.gz").string();
    outputs.warc.max_file_bytes = 4096;
    outputs.cdxj = true;
    crawl(outputs);
    const auto files = existing_warc_files(outputs.warc.path);
    ASSERT_GE(files.size(), 3u);
    for (const auto& file : files) {
        SCOPED_TRACE(file);
        const auto lines = lines_of(read_file(cdxj_path_for(file)));
        EXPECT_TRUE(std::is_sorted(lines.begin(), lines.end()));
        EXPECT_EQ(lines.size(), count_records(file, "response") + count_records(file, "revisit"));
        check_cdxj_against_warcs(lines, dir.path);
    }
}

std::string zip_entry(zip_t* zip, const std::string& name, zip_stat_t* stat = nullptr) {
    zip_stat_t st;
    zip_stat_init(&st);
    EXPECT_EQ(zip_stat(zip, name.c_str(), 0, &st), 0) << name;
    if (stat)
        *stat = st;
    zip_file_t* f = zip_fopen(zip, name.c_str(), 0);
    if (!f) {
        ADD_FAILURE() << "cannot open " << name << " in the WACZ";
        return "";
    }
    std::string data(static_cast<std::size_t>(st.size), '\0');
    EXPECT_EQ(zip_fread(f, data.data(), data.size()), static_cast<zip_int64_t>(data.size()));
    zip_fclose(f);
    return data;
}

TEST_F(archive_crawl, WaczHoldsWarcsIndexPagesAndMatchingDigests) {
    output_config outputs;
    outputs.warc.path = (dir.path / "crawl-{serial}.warc.gz").string();
    outputs.warc.max_file_bytes = 8192;
    outputs.wacz = (dir.path / "site.wacz").string();
    crawl(outputs);
    const auto files = existing_warc_files(outputs.warc.path);
    ASSERT_GE(files.size(), 2u);

    int error = 0;
    zip_t* zip = zip_open(outputs.wacz.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &error);
    ASSERT_NE(zip, nullptr) << "libzip error " << error;
    std::set<std::string> names;
    for (zip_int64_t i = 0; i < zip_get_num_entries(zip, 0); ++i)
        names.insert(zip_get_name(zip, static_cast<zip_uint64_t>(i), 0));
    std::set<std::string> expected{"indexes/index.cdxj", "pages/pages.jsonl", "datapackage.json",
                                   "datapackage-digest.json"};
    for (const auto& file : files)
        expected.insert("archive/" + fs::path(file).filename().string());
    EXPECT_EQ(names, expected);

    // datapackage.json: every other file, with its sha256 and size.
    const std::string datapackage = zip_entry(zip, "datapackage.json");
    const auto package = boost::json::parse(datapackage).as_object();
    EXPECT_EQ(package.at("profile").as_string(), "data-package");
    EXPECT_EQ(package.at("wacz_version").as_string(), "1.1.1");
    EXPECT_THAT(std::string(package.at("software").as_string()), testing::StartsWith("asiocrawl "));
    EXPECT_EQ(package.at("mainPageUrl").as_string(), site.origin() + "/");
    EXPECT_TRUE(package.contains("mainPageDate"));
    EXPECT_TRUE(package.contains("created"));
    std::set<std::string> listed;
    for (const auto& value : package.at("resources").as_array()) {
        const auto& r = value.as_object();
        const std::string path(r.at("path").as_string());
        SCOPED_TRACE(path);
        listed.insert(path);
        zip_stat_t st;
        const std::string bytes = zip_entry(zip, path, &st);
        EXPECT_EQ(r.at("hash").as_string(), sha256_hex(bytes));
        EXPECT_EQ(r.at("bytes").to_number<std::uint64_t>(), bytes.size());
        EXPECT_EQ(r.at("name").as_string(), fs::path(path).filename().string());
        if (path.starts_with("archive/")) {
            // Stored as they are: a replay tool reads their byte ranges straight out of the ZIP.
            EXPECT_EQ(st.comp_method, ZIP_CM_STORE);
            EXPECT_EQ(bytes, read_file((dir.path / fs::path(path).filename()).string()));
        }
    }
    expected.erase("datapackage.json");
    expected.erase("datapackage-digest.json");
    EXPECT_EQ(listed, expected);
    const auto digest = boost::json::parse(zip_entry(zip, "datapackage-digest.json")).as_object();
    EXPECT_EQ(digest.at("path").as_string(), "datapackage.json");
    EXPECT_EQ(digest.at("hash").as_string(), sha256_hex(datapackage));

    // The index: every file's lines merged and sorted, each pointing into archive/'s files.
    const auto index = lines_of(zip_entry(zip, "indexes/index.cdxj"));
    EXPECT_TRUE(std::is_sorted(index.begin(), index.end()));
    std::size_t records = 0;
    for (const auto& file : files)
        records += count_records(file, "response") + count_records(file, "revisit");
    EXPECT_EQ(index.size(), records);
    check_cdxj_against_warcs(index, dir.path);

    // The page list: the header, then each HTML page that answered 200, once, with its title.
    const auto pages = lines_of(zip_entry(zip, "pages/pages.jsonl"));
    ASSERT_FALSE(pages.empty());
    const auto header = boost::json::parse(pages.front()).as_object();
    EXPECT_EQ(header.at("format").as_string(), "json-pages-1.0");
    EXPECT_EQ(header.at("id").as_string(), "pages");
    std::map<std::string, std::string> titles;
    for (std::size_t i = 1; i < pages.size(); ++i) {
        const auto page = boost::json::parse(pages[i]).as_object();
        EXPECT_THAT(std::string(page.at("ts").as_string()),
                    testing::MatchesRegex("....-..-..T..:..:..\\.[0-9]+Z"));
        EXPECT_TRUE(page.contains("id"));
        const std::string url(page.at("url").as_string());
        EXPECT_TRUE(
            titles.emplace(url, page.contains("title") ? page.at("title").as_string().c_str() : "").second)
            << url << " listed twice";
    }
    const std::string o = site.origin();
    EXPECT_EQ(titles[o + "/"], "Home & garden");
    EXPECT_EQ(titles.count(o + "/a.html") + titles.count(o + "/b.html"), 1u); // the other is a revisit
    EXPECT_EQ(titles.count(o + "/a.html") ? titles[o + "/a.html"] : titles[o + "/b.html"], "Same page");
    EXPECT_EQ(titles[o + "/p/7.html"], "Page 7");
    EXPECT_EQ(titles.count(o + "/img.png"), 0u);   // not HTML
    EXPECT_EQ(titles.count(o + "/gone.html"), 0u); // a 404
    EXPECT_EQ(titles.size(), 23u);                 // "/", a.html or b.html, q and 20 pages
    zip_close(zip);
}

// A resumed crawl (append mode) continues the WARC series in a new file: the indexes and the WACZ then cover
// the whole series, the earlier run's file included (a crawl killed before its end gets them this way).
TEST(ArchiveOutputs, AResumedCrawlIndexesTheWholeSeries) {
    test::temp_dir dir{"archive-append"};
    output_config outputs;
    outputs.warc.path = (dir.path / "crawl.warc.gz").string();
    outputs.wacz = (dir.path / "site.wacz").string();
    for (const auto& [mode, page] :
         {std::pair{open_mode::create_new, "/first.html"}, std::pair{open_mode::append, "/second.html"}}) {
        asio::io_context ctx;
        test::loopback_site site{ctx.get_executor()};
        site.add(page, "<title>" + std::string(page) + "</title>");
        crawler_config config = test::loopback_crawl_config();
        config.roots = {site.url(page)};
        crawler c{ctx.get_executor(), config};
        outputs.mode = mode;
        output_set out{ctx.get_executor(), outputs};
        out.attach(c);
        out.start();
        auto result = test::run_crawl(ctx, c, [&] {
            out.stop();
            site.stop();
        });
        ASSERT_TRUE(result.has_value());
        EXPECT_THAT(out.finish(*result), testing::IsEmpty());
    }
    const auto files = existing_warc_files(outputs.warc.path);
    ASSERT_EQ(files.size(), 2u);
    int error = 0;
    zip_t* zip = zip_open(outputs.wacz.c_str(), ZIP_RDONLY, &error);
    ASSERT_NE(zip, nullptr);
    EXPECT_GE(zip_name_locate(zip, "archive/crawl.warc.gz", 0), 0);
    EXPECT_GE(zip_name_locate(zip, "archive/crawl-00001.warc.gz", 0), 0);
    const auto index = lines_of(zip_entry(zip, "indexes/index.cdxj"));
    EXPECT_EQ(index.size(), 2u);
    check_cdxj_against_warcs(index, dir.path);
    const std::string pages = zip_entry(zip, "pages/pages.jsonl");
    EXPECT_THAT(pages, testing::HasSubstr("\"title\":\"/first.html\""));
    EXPECT_THAT(pages, testing::HasSubstr("\"title\":\"/second.html\""));
    zip_close(zip);
    for (const auto& file : files)
        EXPECT_TRUE(fs::exists(cdxj_path_for(file))) << file;
}

TEST(ArchiveOutputs, NeedAWarcPath) {
    asio::io_context ctx;
    test::temp_dir dir{"archive-nowarc"};
    output_config outputs;
    outputs.wacz = (dir.path / "x.wacz").string();
    try {
        output_set out{ctx.get_executor(), outputs};
        ADD_FAILURE() << "a WACZ without a WARC was accepted";
    } catch (const crawl_error& e) {
        EXPECT_EQ(e.code(), error::output_unavailable);
        EXPECT_THAT(e.what(), testing::HasSubstr("output.warc.path"));
    }
    outputs.wacz.clear();
    outputs.cdxj = true;
    EXPECT_THROW((output_set{ctx.get_executor(), outputs}), crawl_error);
    EXPECT_FALSE(fs::exists(dir.path / "x.wacz"));
}

TEST_F(archive_crawl, AnExistingWaczIsRefused) {
    output_config outputs;
    outputs.warc.path = (dir.path / "crawl.warc.gz").string();
    outputs.wacz = (dir.path / "site.wacz").string();
    std::ofstream(outputs.wacz) << "earlier";
    try {
        output_set out{ctx.get_executor(), outputs};
        ADD_FAILURE() << "an existing WACZ was accepted";
    } catch (const crawl_error& e) {
        EXPECT_EQ(e.code(), error::output_exists);
    }
    EXPECT_EQ(read_file(outputs.wacz), "earlier");
}

} // namespace
