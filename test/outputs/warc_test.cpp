#include <asiocrawl/outputs/warc.hpp>

#include <asiocrawl/error.hpp>

#include "http/fetcher.hpp"
#include "support/compress.hpp"
#include "support/files.hpp"
#include "support/h2_servers.hpp"
#include "support/hostile_server.hpp"
#include "support/loopback.hpp"
#include "support/raw_server.hpp"
#include "support/temp_dir.hpp"
#include "support/tls_certs.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/json/serialize.hpp>
#include <boost/url/parse.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <optional>
#include <regex>
#include <sstream>

using asiocrawl::test::read_file;

namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using namespace asiocrawl;
using namespace asiocrawl::outputs;
using namespace std::chrono_literals;

// ---- sans-io ----

struct base32_case {
    const char* input;
    const char* output;
};

class Base32 : public testing::TestWithParam<base32_case> {};

TEST_P(Base32, MatchesRfc4648TestVectors) {
    EXPECT_EQ(base32_encode(GetParam().input), GetParam().output);
}

// RFC 4648 section 10.
INSTANTIATE_TEST_SUITE_P(Rfc4648, Base32,
                         testing::Values(base32_case{"", ""}, base32_case{"f", "MY======"},
                                         base32_case{"fo", "MZXQ===="}, base32_case{"foo", "MZXW6==="},
                                         base32_case{"foob", "MZXW6YQ="}, base32_case{"fooba", "MZXW6YTB"},
                                         base32_case{"foobar", "MZXW6YTBOI======"}));

TEST(WarcDigest, Sha1InBase32) {
    // SHA-1("") = da39a3ee5e6b4b0d3255bfef95601890afd80709, the digest every empty WARC payload carries.
    EXPECT_EQ(warc_sha1_digest(""), "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ");
    // SHA-1("abc") = a9993e364706816aba3e25717850c26c9cd0d89d
    EXPECT_EQ(warc_sha1_digest("abc"), "sha1:VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE5");
}

TEST(WarcDate, UtcWithMicroseconds) {
    const auto when = std::chrono::system_clock::time_point{1'700'000'000s + 123'456us};
    EXPECT_EQ(warc_date(when), "2023-11-14T22:13:20.123456Z");
    EXPECT_EQ(warc_date(std::chrono::system_clock::time_point{1'700'000'000s}),
              "2023-11-14T22:13:20.000000Z");
}

TEST(WarcRecordId, RandomVersion4Uuids) {
    const std::regex shape{"<urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}>"};
    std::set<std::string> seen;
    for (int i = 0; i < 100; ++i) {
        const std::string id = warc_record_id();
        EXPECT_TRUE(std::regex_match(id, shape)) << id;
        seen.insert(id);
    }
    EXPECT_EQ(seen.size(), 100u);
}

struct payload_case {
    const char* name;
    std::string response;
    std::string payload;
};

class HttpPayload : public testing::TestWithParam<payload_case> {};

TEST_P(HttpPayload, RemovesTheTransferCodingOnly) {
    const std::string& response = GetParam().response;
    const std::size_t head = response.find("\r\n\r\n") + 4;
    EXPECT_EQ(http_payload(response, head), GetParam().payload);
}

const std::string gzip_hello = gzip_member("hello");

INSTANTIATE_TEST_SUITE_P(
    Shapes, HttpPayload,
    testing::Values(
        payload_case{"content_length", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", "hello"},
        payload_case{"no_body", "HTTP/1.1 204 No Content\r\n\r\n", ""},
        payload_case{"chunked",
                     "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n1\r\n!\r\n0\r\n\r\n",
                     "hello!"},
        payload_case{
            "chunked_with_extension_and_trailer",
            "HTTP/1.1 200 OK\r\ntransfer-encoding:  Chunked \r\n\r\n5;name=v\r\nhello\r\n0\r\nX: y\r\n\r\n",
            "hello"},
        payload_case{"chunked_hex_sizes",
                     "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nA\r\n0123456789\r\n0\r\n\r\n",
                     "0123456789"},
        payload_case{"chunked_last_of_several_codings",
                     "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
                     "abc"},
        payload_case{"chunked_not_last_is_not_chunked",
                     "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n3\r\nabc", "3\r\nabc"},
        payload_case{"truncated_chunk_keeps_what_arrived",
                     "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nA\r\n01234",
                     "hello01234"},
        payload_case{"content_coding_is_kept",
                     "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 25\r\n\r\n" + gzip_hello,
                     gzip_hello},
        payload_case{"te_name_in_a_value_is_not_a_field",
                     "HTTP/1.1 200 OK\r\nX-Note: Transfer-Encoding: chunked\r\n\r\n1\r\nz", "1\r\nz"}),
    [](const testing::TestParamInfo<payload_case>& info) { return info.param.name; });

TEST(WarcRecordBytes, ExactLayout) {
    EXPECT_EQ(warc_record_bytes({{"WARC-Type", "request"}, {"WARC-Record-ID", "<urn:uuid:x>"}},
                                "GET / HTTP/1.1\r\n\r\n"),
              "WARC/1.1\r\nWARC-Type: request\r\nWARC-Record-ID: <urn:uuid:x>\r\nContent-Length: 18\r\n\r\n"
              "GET / HTTP/1.1\r\n\r\n\r\n\r\n");
}

// Inflates every gzip member in turn, as a WARC reader does; each must end.
std::string gunzip_all(std::string_view data, int* members = nullptr) {
    bool complete = false;
    auto out = test::gunzip_members(data, members, &complete);
    EXPECT_TRUE(complete);
    return out;
}

TEST(GzipMember, MembersConcatenateIntoOneStream) {
    const std::string big(100'000, 'x');
    int members = 0;
    EXPECT_EQ(gunzip_all(gzip_member("first ") + gzip_member(big) + gzip_member(""), &members),
              "first " + big);
    EXPECT_EQ(members, 3);
}

struct name_case {
    const char* pattern;
    std::size_t serial;
    const char* name;
};

class WarcFileName : public testing::TestWithParam<name_case> {};

TEST_P(WarcFileName, Rotation) {
    EXPECT_EQ(warc_file_name(GetParam().pattern, GetParam().serial), GetParam().name);
}

INSTANTIATE_TEST_SUITE_P(Patterns, WarcFileName,
                         testing::Values(name_case{"crawl-{serial}.warc.gz", 0, "crawl-00000.warc.gz"},
                                         name_case{"crawl-{serial}.warc.gz", 12, "crawl-00012.warc.gz"},
                                         name_case{"out/crawl.warc.gz", 0, "out/crawl.warc.gz"},
                                         name_case{"out/crawl.warc.gz", 1, "out/crawl-00001.warc.gz"},
                                         name_case{"crawl.warc", 2, "crawl-00002.warc"},
                                         name_case{"dump.gz", 1, "dump-00001.gz"},
                                         name_case{"archive", 3, "archive-00003"},
                                         name_case{"dir.v2/archive", 1, "dir.v2/archive-00001"},
                                         name_case{"./.warc", 1, "./.warc-00001"}));

// ---- the writer, fed with exchanges captured from real loopback servers ----

struct captured {
    std::string url;
    std::string request;
    std::string response;
    std::size_t head_bytes = 0;
    std::string remote_ip;
    std::chrono::system_clock::time_point started;
    boost::system::error_code error;
};

// Sends a GET with Connection: close and reads to EOF: the exact bytes of both directions.
asio::awaitable<captured> fetch_raw(unsigned short port, std::string path) {
    constexpr auto tuple = asio::as_tuple(asio::use_awaitable);
    captured c;
    c.url = "http://127.0.0.1:" + std::to_string(port) + path;
    c.request = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                "\r\nUser-Agent: warc-test\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n";
    c.started = std::chrono::system_clock::now();
    asio::ip::tcp::socket socket{co_await asio::this_coro::executor};
    co_await socket.async_connect({asio::ip::make_address("127.0.0.1"), port}, asio::use_awaitable);
    c.remote_ip = socket.remote_endpoint().address().to_string();
    co_await asio::async_write(socket, asio::buffer(c.request), asio::use_awaitable);
    // EOF ends the read; a reset after a truncated reply is fine too: the bytes are what was served.
    auto [ec, n] = co_await asio::async_read(socket, asio::dynamic_buffer(c.response), tuple);
    c.error = ec;
    c.head_bytes = c.response.find("\r\n\r\n") + 4;
    co_return c;
}

http_exchange as_exchange(const captured& c, bool complete,
                          http_exchange::purpose kind = http_exchange::purpose::page) {
    http_exchange x;
    x.kind = kind;
    x.url = c.url;
    x.remote_ip = c.remote_ip;
    x.started = c.started;
    x.request = c.request;
    x.response = c.response;
    x.response_head_bytes = c.head_bytes;
    x.complete = complete;
    if (!complete)
        x.error = boost::beast::http::error::partial_message;
    return x;
}

struct expectation {
    std::string url;
    std::string payload;
    std::string type;
    bool truncated = false;
    std::string profile{}; // a revisit's WARC-Profile, after ".../revisit/"; empty: not checked
    int status = 0;        // the archived HTTP status; 0: not checked
};

std::string base64(std::string_view bytes) {
    static constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    std::size_t i = 0;
    for (; i + 2 < bytes.size(); i += 3) {
        const unsigned v = (static_cast<unsigned char>(bytes[i]) << 16) |
                           (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                           static_cast<unsigned char>(bytes[i + 2]);
        out += {alphabet[v >> 18], alphabet[(v >> 12) & 63], alphabet[(v >> 6) & 63], alphabet[v & 63]};
    }
    if (i + 1 == bytes.size()) {
        const unsigned v = static_cast<unsigned char>(bytes[i]) << 16;
        out += {alphabet[v >> 18], alphabet[(v >> 12) & 63], '=', '='};
    } else if (i + 2 == bytes.size()) {
        const unsigned v =
            (static_cast<unsigned char>(bytes[i]) << 16) | (static_cast<unsigned char>(bytes[i + 1]) << 8);
        out += {alphabet[v >> 18], alphabet[(v >> 12) & 63], alphabet[(v >> 6) & 63], '='};
    }
    return out;
}

void write_expectations(const fs::path& file, const std::vector<expectation>& wanted) {
    boost::json::array exchanges;
    for (const auto& w : wanted) {
        exchanges.push_back(boost::json::object{{"url", w.url},
                                                {"payload_base64", base64(w.payload)},
                                                {"type", w.type},
                                                {"truncated", w.truncated}});
        if (!w.profile.empty())
            exchanges.back().as_object()["profile"] = w.profile;
        if (w.status != 0)
            exchanges.back().as_object()["status"] = w.status;
    }
    std::ofstream out{file};
    out << boost::json::serialize(boost::json::object{{"exchanges", exchanges}});
}

std::size_t count_of(std::string_view text, std::string_view needle) {
    std::size_t n = 0;
    for (std::size_t at = text.find(needle); at != std::string_view::npos; at = text.find(needle, at + 1))
        ++n;
    return n;
}

// Runs warcio.js (test/warc/check.mjs) over `files`. Skips the test when node or the npm packages are
// missing.
struct node_result {
    int status = -1;
    std::string output;
};

node_result run_warcio_check(const fs::path& expectations, const std::vector<std::string>& files) {
    std::string command = std::string("cd '") + ASIOCRAWL_WARC_CHECK_DIR + "' && '" + ASIOCRAWL_NODE_PROGRAM +
                          "' check.mjs '" + expectations.string() + "'";
    for (const auto& f : files)
        command += " '" + f + "'";
    command += " 2>&1";
    node_result result;
    FILE* pipe = ::popen(command.c_str(), "r");
    if (pipe == nullptr)
        return result;
    char buffer[4096];
    while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe))
        result.output.append(buffer, n);
    const int status = ::pclose(pipe);
    result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return result;
}

#define SKIP_WITHOUT_WARCIO()                                                                                \
    do {                                                                                                     \
        if (std::string_view(ASIOCRAWL_NODE_PROGRAM).empty())                                                \
            GTEST_SKIP()                                                                                     \
                << "node not found: the warcio.js check needs Node.js (apt-get install nodejs npm)";         \
        if (!fs::exists(fs::path(ASIOCRAWL_WARC_CHECK_DIR) / "node_modules" / "warcio" / "package.json"))    \
            GTEST_SKIP() << "warcio.js is not installed: run scripts/install-test-tools.sh";                 \
    } while (false)

class WarcWriterLoopback : public testing::Test {
protected:
    asio::io_context ctx;
    asiocrawl::test::temp_dir dir{"warc-test"};
    std::vector<std::pair<http_exchange, expectation>> cases;
    std::vector<captured> storage;

    // Serves a small site (HTML, a repeated body, a redirect, a 404, a gzip body, robots.txt) with the demo
    // server, a chunked and a truncated reply with the raw server, and captures one exchange per URL.
    void capture_site() {
        const std::string page = "<html><body><a href=\"/copy-a\">a</a></body></html>";
        const std::string same = "the same bytes served under two URLs\n";
        const std::string gzipped = gzip_member("compressed text, archived compressed\n");
        demo::http_server server{
            ctx.get_executor(),
            [&](const test::http_request& req) -> asio::awaitable<std::optional<test::http_response>> {
                const std::string target{req.target()};
                if (target == "/page")
                    co_return test::make_response(200, page);
                if (target == "/copy-a" || target == "/copy-b")
                    co_return test::make_response(200, same, "text/plain");
                if (target == "/moved")
                    co_return test::redirect_to(301, "/page");
                if (target == "/robots.txt")
                    co_return test::make_response(200, "User-agent: *\nDisallow:\n", "text/plain");
                if (target == "/gzip") {
                    auto res = test::make_response(200, gzipped, "text/plain");
                    res.set(boost::beast::http::field::content_encoding, "gzip");
                    co_return res;
                }
                co_return test::make_response(404, "not here");
            }};
        test::raw_server raw{
            ctx.get_executor(), [](std::size_t n) -> std::string {
                if (n == 0)
                    return "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: "
                           "chunked\r\n\r\n5;ext=1\r\nhello\r\n7\r\n, world\r\n0\r\n\r\n";
                return "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\n"
                       "only part of it";
            }};
        storage.resize(9);
        asio::co_spawn(
            ctx,
            [&]() -> asio::awaitable<void> {
                storage[0] = co_await fetch_raw(server.port(), "/robots.txt");
                storage[1] = co_await fetch_raw(server.port(), "/page");
                storage[2] = co_await fetch_raw(server.port(), "/copy-a");
                storage[3] = co_await fetch_raw(server.port(), "/copy-b");
                storage[4] = co_await fetch_raw(server.port(), "/moved");
                storage[5] = co_await fetch_raw(server.port(), "/missing");
                storage[6] = co_await fetch_raw(server.port(), "/gzip");
                storage[7] = co_await fetch_raw(raw.port(), "/chunked");
                storage[8] = co_await fetch_raw(raw.port(), "/truncated");
            },
            [&](std::exception_ptr e) {
                server.stop();
                raw.stop();
                if (e)
                    std::rethrow_exception(e);
            });
        test::run_bounded(ctx);

        auto add = [&](const captured& c, std::string payload, std::string type, bool complete = true,
                       http_exchange::purpose kind = http_exchange::purpose::page) {
            cases.push_back(
                {as_exchange(c, complete, kind), {c.url, std::move(payload), std::move(type), !complete}});
        };
        add(storage[0], "User-agent: *\nDisallow:\n", "response", true, http_exchange::purpose::robots);
        add(storage[1], page, "response");
        add(storage[2], same, "response");
        add(storage[3], same, "revisit");
        add(storage[4], "", "response");
        add(storage[5], "not here", "response");
        add(storage[6], gzipped, "response");
        add(storage[7], "hello, world", "response");
        add(storage[8], "only part of it", "response", false);
    }

    std::vector<std::string> archive(warc_config config) {
        warc_writer writer{config};
        for (const auto& [exchange, expected] : cases)
            writer.write(exchange);
        // Nothing arrived: nothing to archive, and no request without its response.
        http_exchange refused;
        refused.url = "http://127.0.0.1:1/";
        refused.request = "GET / HTTP/1.1\r\n\r\n";
        refused.error = boost::asio::error::connection_refused;
        writer.write(refused);
        EXPECT_EQ(writer.close(), "");
        return writer.files();
    }

    std::vector<expectation> expected(bool revisits = true) const {
        std::vector<expectation> out;
        for (const auto& [exchange, e] : cases) {
            out.push_back(e);
            if (!revisits && out.back().type == "revisit")
                out.back().type = "response";
        }
        return out;
    }
};

TEST_F(WarcWriterLoopback, PlainFileHasWarcinfoThenPairs) {
    capture_site();
    ASSERT_EQ(cases.size(), 9u);
    const auto files = archive({(dir.path / "crawl.warc").string(), 1'000'000'000, true});
    ASSERT_EQ(files.size(), 1u);
    const std::string text = read_file(files[0]);
    EXPECT_EQ(text.rfind("WARC/1.1\r\nWARC-Type: warcinfo\r\n", 0), 0u);
    EXPECT_EQ(count_of(text, "WARC-Type: warcinfo\r\n"), 1u);
    EXPECT_EQ(count_of(text, "WARC-Type: response\r\n"), 8u);
    EXPECT_EQ(count_of(text, "WARC-Type: revisit\r\n"), 1u);
    EXPECT_EQ(count_of(text, "WARC-Type: request\r\n"), 9u);
    EXPECT_EQ(count_of(text, "WARC-Truncated: disconnect\r\n"), 1u);
    EXPECT_EQ(count_of(text, "WARC-IP-Address: 127.0.0.1\r\n"), 18u);
    // The chunked reply is archived as it came, framing included.
    EXPECT_NE(text.find("5;ext=1\r\nhello\r\n7\r\n, world\r\n0\r\n\r\n"), std::string::npos);
    EXPECT_NE(text.find("WARC-Payload-Digest: " + warc_sha1_digest("hello, world") + "\r\n"),
              std::string::npos);
}

TEST_F(WarcWriterLoopback, WithoutRevisitsEveryPayloadIsStored) {
    capture_site();
    const auto files = archive({(dir.path / "crawl.warc").string(), 1'000'000'000, false});
    ASSERT_EQ(files.size(), 1u);
    const std::string text = read_file(files[0]);
    EXPECT_EQ(count_of(text, "WARC-Type: revisit\r\n"), 0u);
    EXPECT_EQ(count_of(text, "WARC-Type: response\r\n"), 9u);
}

TEST_F(WarcWriterLoopback, GzipMembersAndRotation) {
    capture_site();
    // A limit smaller than any pair: every pair opens a file of its own, each starting with warcinfo.
    const auto files = archive({(dir.path / "crawl-{serial}.warc.gz").string(), 1, true});
    ASSERT_EQ(files.size(), cases.size());
    for (std::size_t i = 0; i < files.size(); ++i) {
        EXPECT_EQ(fs::path(files[i]).filename(), warc_file_name("crawl-{serial}.warc.gz", i));
        int members = 0;
        const std::string text = gunzip_all(read_file(files[i]), &members);
        EXPECT_EQ(members, 3) << files[i]; // warcinfo, response or revisit, request
        EXPECT_EQ(text.rfind("WARC/1.1\r\nWARC-Type: warcinfo\r\n", 0), 0u);
    }
}

TEST_F(WarcWriterLoopback, RotationKeepsFilesNearTheLimit) {
    capture_site();
    const auto files = archive({(dir.path / "crawl.warc").string(), 2000, true});
    ASSERT_GT(files.size(), 1u);
    EXPECT_EQ(fs::path(files[0]).filename(), "crawl.warc");
    EXPECT_EQ(fs::path(files[1]).filename(), "crawl-00001.warc");
    std::size_t pairs = 0;
    for (const auto& f : files) {
        const std::string text = read_file(f);
        pairs += count_of(text, "WARC-Type: request\r\n");
        EXPECT_EQ(text.rfind("WARC/1.1\r\nWARC-Type: warcinfo\r\n", 0), 0u);
    }
    EXPECT_EQ(pairs, cases.size());
}

TEST(WarcWriter, UnwritablePathThrowsAtOnce) {
    asiocrawl::test::temp_dir dir{"warc-unwritable"};
    std::ofstream{dir.path / "a-file"} << "";
    // Below a regular file no directory can be made, even by root.
    EXPECT_THROW(warc_writer({(dir.path / "a-file" / "sub" / "crawl.warc").string(), 1000, true}),
                 std::exception);
}

TEST(WarcWriter, CreatesTheDirectoriesOfItsPath) {
    asiocrawl::test::temp_dir dir{"warc-dirs"};
    warc_writer writer{{(dir.path / "archive" / "2024" / "crawl-{serial}.warc.gz").string(), 1000, true}};
    EXPECT_EQ(writer.close(), "");
    EXPECT_TRUE(fs::exists(dir.path / "archive" / "2024" / "crawl-00000.warc.gz"));
}

TEST(ExistingWarcFiles, FindsTheSeriesInSerialOrder) {
    asiocrawl::test::temp_dir dir{"warc-series"};
    for (const char* name :
         {"crawl-00002.warc.gz", "crawl-00000.warc.gz", "crawl-0003.warc.gz", "crawl-00001.warc", "other.txt",
          "crawl.warc", "crawl-00011.warc", "crawl-1.warc"})
        std::ofstream{dir.path / name} << "";
    const std::string in = dir.path.string() + "/";
    EXPECT_EQ(existing_warc_files(in + "crawl-{serial}.warc.gz"),
              (std::vector<std::string>{in + "crawl-00000.warc.gz", in + "crawl-00002.warc.gz"}));
    EXPECT_EQ(
        existing_warc_files(in + "crawl.warc"),
        (std::vector<std::string>{in + "crawl.warc", in + "crawl-00001.warc", in + "crawl-00011.warc"}));
    EXPECT_THAT(existing_warc_files(in + "none-{serial}.warc"), testing::IsEmpty());
    EXPECT_THAT(existing_warc_files(in + "missing-dir/x.warc"), testing::IsEmpty());
}

// Where each gzip member ends, found independently of the code under test.
std::vector<std::size_t> member_ends(std::string_view data) {
    std::vector<std::size_t> ends;
    std::size_t at = 0;
    while (at < data.size()) {
        z_stream stream{};
        inflateInit2(&stream, 15 + 16);
        stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data() + at));
        stream.avail_in = static_cast<uInt>(data.size() - at);
        char buffer[4096];
        int result = Z_OK;
        while (result == Z_OK) {
            stream.next_out = reinterpret_cast<Bytef*>(buffer);
            stream.avail_out = sizeof buffer;
            result = inflate(&stream, Z_NO_FLUSH);
        }
        at += stream.total_in;
        inflateEnd(&stream);
        if (result != Z_STREAM_END)
            break;
        ends.push_back(at);
    }
    return ends;
}

// Where each plain record ends: the test payloads never hold "WARC/1.1\r\nWARC-Type".
std::vector<std::size_t> record_ends(const std::string& text) {
    std::vector<std::size_t> ends;
    for (auto at = text.find("WARC/1.1\r\nWARC-Type", 1); at != std::string::npos;
         at = text.find("WARC/1.1\r\nWARC-Type", at + 1))
        ends.push_back(at);
    ends.push_back(text.size());
    return ends;
}

TEST_F(WarcWriterLoopback, RepairCutsATornTailToTheLastWholeRecord) {
    capture_site();
    for (const char* name : {"crawl.warc", "crawl.warc.gz"}) {
        SCOPED_TRACE(name);
        const auto files = archive({(dir.path / name).string(), 1'000'000'000, true});
        ASSERT_EQ(files.size(), 1u);
        const std::string whole = read_file(files[0]);
        const bool gzip = std::string_view(name).ends_with(".gz");
        const std::vector<std::size_t> ends = gzip ? member_ends(whole) : record_ends(whole);
        ASSERT_EQ(ends.size(), 19u) << "warcinfo and 9 pairs";
        ASSERT_EQ(ends.back(), whole.size());

        const tail_repair intact = repair_warc_tail(files[0]);
        EXPECT_EQ(intact.cut_bytes, 0u);
        EXPECT_EQ(intact.whole_records, 19u);
        EXPECT_EQ(read_file(files[0]), whole);

        // Cut everywhere near a boundary and at steps through every record: a kill can strike anywhere.
        std::vector<std::size_t> cuts;
        for (std::size_t end : ends)
            for (std::size_t delta : {0, 1, 2, 5, 30})
                if (end > delta)
                    cuts.push_back(end - delta);
        for (std::size_t cut = 0; cut < whole.size(); cut += whole.size() / 97 + 1)
            cuts.push_back(cut);
        const fs::path torn = dir.path / (std::string("torn-") + name);
        for (std::size_t cut : cuts) {
            std::ofstream{torn, std::ios::binary | std::ios::trunc} << whole.substr(0, cut);
            const tail_repair repair = repair_warc_tail(torn.string());
            std::size_t expected_kept = 0, expected_records = 0;
            for (std::size_t end : ends) {
                if (end <= cut) {
                    expected_kept = end;
                    ++expected_records;
                }
            }
            ASSERT_EQ(repair.kept_bytes, expected_kept) << "cut at " << cut;
            EXPECT_EQ(repair.whole_records, expected_records) << "cut at " << cut;
            EXPECT_EQ(repair.cut_bytes, cut - expected_kept);
            EXPECT_EQ(read_file(torn), whole.substr(0, expected_kept));
        }
        // Garbage after whole records is cut as well.
        std::ofstream{torn, std::ios::binary | std::ios::trunc} << whole << "not a record at all";
        EXPECT_EQ(repair_warc_tail(torn.string()).cut_bytes, 19u);
        EXPECT_EQ(read_file(torn), whole);
    }
    EXPECT_THROW(repair_warc_tail((dir.path / "missing.warc").string()), std::system_error);
}

TEST_F(WarcWriterLoopback, ExistingSeriesIsRefusedReplacedOrContinued) {
    capture_site();
    const std::string pattern = (dir.path / "crawl-{serial}.warc.gz").string();
    const auto first = archive({pattern, 3000, true});
    ASSERT_GT(first.size(), 1u);
    EXPECT_THROW(warc_writer({pattern, 3000, true}), output_exists);

    // A kill in the middle of a write: the last file ends in half a gzip member.
    const std::string last = read_file(first.back());
    std::ofstream{first.back(), std::ios::binary | std::ios::trunc} << last.substr(0, last.size() - 10);
    {
        warc_writer resumed{{pattern, 3000, true}, open_mode::append};
        ASSERT_EQ(resumed.notes().size(), 1u);
        EXPECT_THAT(resumed.notes()[0], testing::HasSubstr(first.back() + " ended in a torn record: cut "));
        EXPECT_EQ(resumed.files(), std::vector<std::string>{warc_file_name(pattern, first.size())})
            << "a new file of the series, never the old one";
        EXPECT_EQ(resumed.close(), "");
    }
    EXPECT_EQ(repair_warc_tail(first.back()).cut_bytes, 0u) << "the old file was left whole";
    EXPECT_EQ(existing_warc_files(pattern).size(), first.size() + 1);

    // overwrite: the series starts again at 00000.
    warc_writer again{{pattern, 1'000'000'000, true}, open_mode::overwrite};
    EXPECT_EQ(again.files(), std::vector<std::string>{warc_file_name(pattern, 0)});
    EXPECT_EQ(again.close(), "");
    int members = 0;
    gunzip_all(read_file(warc_file_name(pattern, 0)), &members);
    EXPECT_EQ(members, 1) << "only the new warcinfo";
}

TEST_F(WarcWriterLoopback, ResumedArchivesReadBackWithWarcio) {
    SKIP_WITHOUT_WARCIO();
    capture_site();
    const std::string pattern = (dir.path / "resumed-{serial}.warc").string();
    auto files = archive({pattern, 1'000'000'000, true});
    ASSERT_EQ(files.size(), 1u);
    const std::string whole = read_file(files[0]);
    // Killed while writing the last pair: its response record is torn, its request never written.
    const std::size_t last_pair = whole.rfind("WARC/1.1\r\nWARC-Type: response");
    ASSERT_NE(last_pair, std::string::npos);
    std::ofstream{files[0], std::ios::binary | std::ios::trunc} << whole.substr(0, last_pair + 40);
    std::vector<std::string> more;
    {
        warc_writer resumed{{pattern, 1'000'000'000, true}, open_mode::append};
        EXPECT_EQ(resumed.close(), "");
        more = resumed.files();
    }
    files.insert(files.end(), more.begin(), more.end());
    ASSERT_EQ(files.size(), 2u);
    // Every record left is whole and paired: warcio reads both files, and only the torn capture is missing.
    const fs::path expectations = dir.path / "expected.json";
    auto without_last = expected();
    without_last.pop_back();
    write_expectations(expectations, without_last);
    const node_result result = run_warcio_check(expectations, files);
    EXPECT_EQ(result.status, 0) << result.output;
    EXPECT_THAT(result.output, testing::HasSubstr("ok 18 records in 2 file(s), 8 captures, 1 revisits"));
}

TEST_F(WarcWriterLoopback, WarcioReadsEveryRecordAndDigestsMatch) {
    SKIP_WITHOUT_WARCIO();
    capture_site();
    const fs::path expectations = dir.path / "expected.json";
    write_expectations(expectations, expected());

    const auto plain = archive({(dir.path / "plain.warc").string(), 1'000'000'000, true});
    node_result result = run_warcio_check(expectations, plain);
    EXPECT_EQ(result.status, 0) << result.output;
    EXPECT_THAT(result.output, testing::HasSubstr("ok 19 records in 1 file(s), 9 captures, 1 revisits"));

    const auto gzipped = archive({(dir.path / "rotated-{serial}.warc.gz").string(), 3000, true});
    ASSERT_GT(gzipped.size(), 1u);
    result = run_warcio_check(expectations, gzipped);
    EXPECT_EQ(result.status, 0) << result.output;
    EXPECT_THAT(result.output, testing::HasSubstr("9 captures, 1 revisits"));
}

TEST_F(WarcWriterLoopback, WarcioCheckCatchesACorruptedPayload) {
    SKIP_WITHOUT_WARCIO();
    capture_site();
    const fs::path expectations = dir.path / "expected.json";
    write_expectations(expectations, expected());
    const auto files = archive({(dir.path / "plain.warc").string(), 1'000'000'000, true});
    std::string text = read_file(files[0]);
    const std::size_t at = text.find("<a href=\"/copy-a\">");
    ASSERT_NE(at, std::string::npos);
    text[at + 1] = 'b'; // same length: only the digests can tell
    std::ofstream{files[0], std::ios::binary | std::ios::trunc} << text;
    const node_result result = run_warcio_check(expectations, files);
    EXPECT_EQ(result.status, 1) << result.output;
    EXPECT_THAT(result.output, testing::HasSubstr("block digest"));
    EXPECT_THAT(result.output, testing::HasSubstr("payload digest"));
}

// The exchanges exactly as the crawler's fetcher captures them (Beast's request bytes, its pooled
// keep-alive connections, gzip negotiation), archived and read back by warcio.js.
TEST(WarcFromFetcher, CapturedExchangesReadBackWithWarcio) {
    SKIP_WITHOUT_WARCIO();
    asiocrawl::test::temp_dir dir{"warc-test"};
    asio::io_context ctx;
    const std::string page = "<html><body>captured by the fetcher</body></html>";
    demo::http_server server{
        ctx.get_executor(),
        [&](const test::http_request& req) -> asio::awaitable<std::optional<test::http_response>> {
            if (req.target() == "/page")
                co_return test::make_response(200, page);
            co_return test::make_response(404, "no such page");
        }};
    test::raw_server raw{
        ctx.get_executor(), [](std::size_t) -> std::string {
            return "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n"
                   "Connection: close\r\n\r\n4\r\nwire\r\n6\r\n bytes\r\n0\r\n\r\n";
        }};
    std::vector<asiocrawl::detail::fetch_result> results;
    std::vector<std::string> urls{server.origin() + "/page", server.origin() + "/missing",
                                  raw.origin() + "/chunked"};
    // Outside the coroutine: g++ 12 mishandles a braced initializer holding a co_await (TOOLCHAIN.md).
    asiocrawl::detail::fetcher fetch{ctx.get_executor(), fetch_config{}, 2};
    asio::co_spawn(
        ctx,
        [&]() -> asio::awaitable<void> {
            asiocrawl::detail::fetch_options options;
            options.capture = true;
            for (const auto& u : urls)
                results.push_back(co_await fetch.fetch(boost::urls::parse_uri(u).value(), options));
            fetch.close_idle();
        },
        [&](std::exception_ptr e) {
            server.stop();
            raw.stop();
            if (e)
                std::rethrow_exception(e);
        });
    test::run_bounded(ctx);
    ASSERT_EQ(results.size(), 3u);

    const std::string path = (dir.path / "fetched.warc.gz").string();
    {
        warc_writer writer{{path, 1'000'000'000, true}};
        for (std::size_t i = 0; i < results.size(); ++i) {
            const auto& r = results[i];
            ASSERT_FALSE(r.error) << urls[i] << ": " << r.error.message();
            http_exchange x;
            x.url = urls[i];
            x.remote_ip = r.remote_ip;
            x.started = r.started;
            x.request = r.raw_request;
            x.response = r.raw_response;
            x.response_head_bytes = r.raw_head_bytes;
            x.complete = true;
            writer.write(x);
        }
        EXPECT_EQ(writer.close(), "");
    }
    const fs::path expectations = dir.path / "expected.json";
    write_expectations(expectations, {{urls[0], page, "response"},
                                      {urls[1], "no such page", "response"},
                                      {urls[2], "wire bytes", "response"}});
    const node_result result = run_warcio_check(expectations, {path});
    EXPECT_EQ(result.status, 0) << result.output;
    EXPECT_THAT(result.output, testing::HasSubstr("ok 7 records in 1 file(s), 3 captures, 0 revisits"));
}

// ---- revisits across crawls (a re-crawl tells the writer through http_exchange::revisit) ----

/// The records of a plain (not gzipped) WARC file: each record's header fields (from "WARC/1.1" to the blank
/// line) and its block.
std::vector<std::pair<std::string, std::string>> warc_records(const std::string& text) {
    std::vector<std::pair<std::string, std::string>> records;
    std::size_t at = 0;
    while (at < text.size()) {
        const std::size_t end = text.find("\r\n\r\n", at);
        if (end == std::string::npos)
            break;
        std::string fields = text.substr(at, end - at + 2);
        const std::size_t length_at = fields.find("\r\nContent-Length: ");
        if (length_at == std::string::npos)
            break;
        const std::size_t length = std::stoul(fields.substr(length_at + 18));
        records.emplace_back(std::move(fields), text.substr(end + 4, length));
        at = end + 4 + length + 4;
    }
    return records;
}

/// The value of field `name` in `fields`; nullopt when absent.
std::optional<std::string> field_of(const std::string& fields, const std::string& name) {
    const std::string marker = "\r\n" + name + ": ";
    const std::size_t at = fields.find(marker);
    if (at == std::string::npos)
        return std::nullopt;
    const std::size_t start = at + marker.size();
    return fields.substr(start, fields.find("\r\n", start) - start);
}

/// The records of `type` for `url`, in file order.
std::vector<std::pair<std::string, std::string>> records_of(const std::string& text, const std::string& type,
                                                            const std::string& url) {
    std::vector<std::pair<std::string, std::string>> found;
    for (auto& record : warc_records(text))
        if (field_of(record.first, "WARC-Type") == type && field_of(record.first, "WARC-Target-URI") == url)
            found.push_back(std::move(record));
    return found;
}

struct conditional_get {
    std::string path;
    std::string if_none_match{};
};

/// Fetches each request in turn with the crawler's fetcher, capturing the exchanges. The server keeps
/// listening (a second crawl follows): the context is stopped once the last answer is in.
std::vector<asiocrawl::detail::fetch_result> fetch_captured(asio::io_context& ctx,
                                                            test::hostile_server& server,
                                                            const std::vector<conditional_get>& gets) {
    std::vector<asiocrawl::detail::fetch_result> results;
    asiocrawl::detail::fetcher fetch{ctx.get_executor(), fetch_config{}, 2};
    asio::co_spawn(
        ctx,
        [&]() -> asio::awaitable<void> {
            for (const auto& get : gets) {
                asiocrawl::detail::fetch_options options;
                options.capture = true;
                options.if_none_match = get.if_none_match;
                results.push_back(
                    co_await fetch.fetch(boost::urls::parse_uri(server.url(get.path)).value(), options));
            }
            fetch.close_idle();
        },
        [&](std::exception_ptr e) {
            ctx.stop();
            if (e)
                std::rethrow_exception(e);
        });
    test::run_bounded(ctx);
    ctx.restart();
    return results;
}

http_exchange exchange_of(const std::string& url, const asiocrawl::detail::fetch_result& r,
                          http_exchange::earlier_capture revisit = {}) {
    http_exchange x;
    x.url = url;
    x.remote_ip = r.remote_ip;
    x.started = r.started;
    x.request = r.raw_request;
    x.response = r.raw_response;
    x.response_head_bytes = r.raw_head_bytes;
    x.complete = !r.error;
    x.revisit = revisit;
    return x;
}

// Two crawls of a site, each archived in a WARC of its own: the second crawl's 304 to a conditional request
// and its 200 with the payload of last time become revisits that point into the first crawl's file, and
// warcio.js resolves them there. What the writer would lose (a payload) is never replaced by a revisit.
TEST(WarcAcrossCrawls, RevisitsReferToTheCapturesOfThePreviousCrawl) {
    asiocrawl::test::temp_dir dir{"warc-test"};
    asio::io_context ctx;
    const std::string page = "<html><body>a page that did not change</body></html>";
    const std::string same = "the same bytes in both crawls\n";
    test::hostile_server server{ctx.get_executor()};
    // As nginx serves a static file: 304 when If-None-Match names the current ETag.
    server.route("/page", [&](test::hostile_server::exchange& ex) -> asio::awaitable<void> {
        if (ex.head().find("\r\nIf-None-Match: \"v1\"\r\n") != std::string::npos)
            co_await ex.write("HTTP/1.1 304 Not Modified\r\nETag: \"v1\"\r\nConnection: close\r\n\r\n");
        else
            co_await ex.write(test::hostile_server::response(200, page, "text/html", "ETag: \"v1\"\r\n"));
    });
    // A page generated anew each time, with no validators: only its digest tells it did not change.
    server.page("/same", same, "text/plain");
    server.route("/plain-304", [](test::hostile_server::exchange& ex) -> asio::awaitable<void> {
        co_await ex.write("HTTP/1.1 304 Not Modified\r\nETag: \"p\"\r\nConnection: close\r\n\r\n");
    });
    const std::string page_url = server.url("/page"), same_url = server.url("/same"),
                      plain_url = server.url("/plain-304");

    // The first crawl.
    const auto first = fetch_captured(ctx, server, {{"/page"}, {"/same"}});
    ASSERT_EQ(first.size(), 2u);
    const std::string first_path = (dir.path / "first.warc").string();
    {
        warc_writer writer{{first_path, 1'000'000'000, true}};
        writer.write(exchange_of(page_url, first[0]));
        writer.write(exchange_of(same_url, first[1]));
        ASSERT_EQ(writer.close(), "");
    }
    const std::string first_text = read_file(first_path);
    const auto page_capture = records_of(first_text, "response", page_url);
    const auto same_capture = records_of(first_text, "response", same_url);
    ASSERT_EQ(page_capture.size(), 1u);
    ASSERT_EQ(same_capture.size(), 1u);
    const std::string page_id = *field_of(page_capture[0].first, "WARC-Record-ID");
    const std::string same_id = *field_of(same_capture[0].first, "WARC-Record-ID");
    ASSERT_EQ(field_of(page_capture[0].first, "WARC-Date"), warc_date(first[0].started));

    // The second crawl, told by the crawl state what repeats an earlier capture.
    const auto second = fetch_captured(
        ctx, server, {{"/page", "\"v1\""}, {"/same"}, {"/plain-304", "\"p\""}, {"/same"}, {"/same"}});
    ASSERT_EQ(second.size(), 5u);
    EXPECT_EQ(second[0].status, 304);
    EXPECT_EQ(second[2].status, 304);
    using why = http_exchange::earlier_capture::profile;
    const std::string page_digest = warc_sha1_digest(page), same_digest = warc_sha1_digest(same);
    const std::string second_path = (dir.path / "second.warc").string();
    {
        warc_writer writer{{second_path, 1'000'000'000, true}};
        writer.write(
            exchange_of(page_url, second[0],
                        {why::server_not_modified, page_url, first[0].started, page_id, page_digest}));
        writer.write(
            exchange_of(same_url, second[1],
                        {why::identical_payload_digest, same_url, first[1].started, same_id, same_digest}));
        // A 304 the crawl does not call a revisit: archived as the response it is.
        writer.write(exchange_of(plain_url, second[2]));
        // An earlier payload digest that is not this one: a revisit would lose the payload.
        writer.write(exchange_of(same_url, second[3],
                                 {why::identical_payload_digest, same_url, first[1].started, same_id,
                                  "sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}));
        // "Not modified" for an answer with a payload: archived in full, here as the in-crawl revisit of the
        // response just before.
        writer.write(
            exchange_of(same_url, second[4],
                        {why::server_not_modified, same_url, first[1].started, same_id, same_digest}));
        ASSERT_EQ(writer.close(), "");
    }
    const std::string second_text = read_file(second_path);

    const auto not_modified = records_of(second_text, "revisit", page_url);
    ASSERT_EQ(not_modified.size(), 1u);
    const std::string& fields = not_modified[0].first;
    EXPECT_EQ(field_of(fields, "WARC-Profile"),
              "http://netpreserve.org/warc/1.1/revisit/server-not-modified");
    EXPECT_EQ(field_of(fields, "WARC-Refers-To"), page_id);
    EXPECT_EQ(field_of(fields, "WARC-Refers-To-Target-URI"), page_url);
    EXPECT_EQ(field_of(fields, "WARC-Refers-To-Date"), field_of(page_capture[0].first, "WARC-Date"));
    EXPECT_EQ(field_of(fields, "WARC-Payload-Digest"), std::nullopt)
        << "a 304 has no payload (section 6.7.3)";
    EXPECT_EQ(not_modified[0].second, second[0].raw_response) << "the block is the 304's head";
    EXPECT_EQ(field_of(fields, "WARC-Block-Digest"), warc_sha1_digest(second[0].raw_response));
    const auto conditional_request = records_of(second_text, "request", page_url);
    ASSERT_EQ(conditional_request.size(), 1u);
    EXPECT_EQ(conditional_request[0].second, second[0].raw_request);
    EXPECT_THAT(conditional_request[0].second, testing::HasSubstr("\r\nIf-None-Match: \"v1\"\r\n"));

    const auto identical = records_of(second_text, "revisit", same_url);
    ASSERT_EQ(identical.size(), 2u);
    EXPECT_EQ(field_of(identical[0].first, "WARC-Profile"),
              "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest");
    EXPECT_EQ(field_of(identical[0].first, "WARC-Refers-To"), same_id)
        << "the earlier capture of the exchange";
    EXPECT_EQ(field_of(identical[0].first, "WARC-Refers-To-Date"), warc_date(first[1].started));
    EXPECT_EQ(field_of(identical[0].first, "WARC-Payload-Digest"), same_digest);
    EXPECT_NE(field_of(identical[1].first, "WARC-Refers-To"), same_id)
        << "the in-crawl one refers to this crawl";
    EXPECT_EQ(records_of(second_text, "response", plain_url).size(), 1u);
    EXPECT_EQ(records_of(second_text, "response", same_url).size(), 1u);

    SKIP_WITHOUT_WARCIO();
    const fs::path expectations = dir.path / "expected.json";
    write_expectations(expectations, {{page_url, page, "response"},
                                      {same_url, same, "response"},
                                      {page_url, page, "revisit", false, "server-not-modified", 304},
                                      {same_url, same, "revisit", false, "identical-payload-digest", 200},
                                      {plain_url, "", "response", false, "", 304},
                                      {same_url, same, "response"},
                                      {same_url, same, "revisit", false, "identical-payload-digest"}});
    const node_result result = run_warcio_check(expectations, {first_path, second_path});
    EXPECT_EQ(result.status, 0) << result.output;
    EXPECT_THAT(result.output, testing::HasSubstr("ok 16 records in 2 file(s), 7 captures, 3 revisits"));
}

// With output.warc.revisits off, every payload is archived: a payload that repeats the previous crawl's too.
TEST(WarcAcrossCrawls, RevisitsOffArchiveARepeatedPayloadInFull) {
    asiocrawl::test::temp_dir dir{"warc-test"};
    asio::io_context ctx;
    test::hostile_server server{ctx.get_executor()};
    server.page("/same", "the same bytes\n", "text/plain");
    const auto fetched = fetch_captured(ctx, server, {{"/same"}});
    ASSERT_EQ(fetched.size(), 1u);
    const std::string path = (dir.path / "off.warc").string();
    {
        warc_writer writer{{path, 1'000'000'000, false}};
        writer.write(exchange_of(server.url("/same"), fetched[0],
                                 {http_exchange::earlier_capture::profile::identical_payload_digest,
                                  server.url("/same"), std::chrono::system_clock::now(), "<urn:uuid:x>",
                                  warc_sha1_digest("the same bytes\n")}));
        ASSERT_EQ(writer.close(), "");
    }
    const std::string text = read_file(path);
    EXPECT_EQ(records_of(text, "response", server.url("/same")).size(), 1u);
    EXPECT_EQ(records_of(text, "revisit", server.url("/same")).size(), 0u);
}

// An HTTP/2 exchange (nghttpd over TLS) as the fetcher captures it, in HTTP/1.1 form: both records of the
// pair carry WARC-Protocol: h2, and warcio.js reads the messages and finds the digests right
// (docs/OUTPUTS.md).
TEST(WarcFromFetcher, AnH2CaptureIsWrittenInHttp11FormWithWarcProtocol) {
    asiocrawl::test::temp_dir dir{"warc-h2"};
    const std::string page = "<html><body>carried by h2</body></html>";
    std::ofstream(dir.path / "page.html", std::ios::binary) << page;
    const auto pki = test::make_test_pki({"localhost", "127.0.0.1"});
    const test::temp_pem_file ca{pki.ca_pem};
    test::nghttpd_server server{dir.path, pki};
    const std::string url = "https://localhost:" + std::to_string(server.port()) + "/page.html";
    asio::io_context ctx;
    fetch_config config;
    config.tls.ca_file = ca.path().string();
    config.host_overrides["localhost"] = "127.0.0.1";
    asiocrawl::detail::fetcher fetch{ctx.get_executor(), config, 2};
    std::optional<asiocrawl::detail::fetch_result> result;
    asio::co_spawn(
        ctx,
        [&]() -> asio::awaitable<void> {
            asiocrawl::detail::fetch_options options;
            options.capture = true;
            result = co_await fetch.fetch(boost::urls::parse_uri(url).value(), options);
            fetch.close_idle();
        },
        [](std::exception_ptr e) {
            if (e)
                std::rethrow_exception(e);
        });
    test::run_bounded(ctx);
    ASSERT_TRUE(result);
    ASSERT_FALSE(result->error) << result->error.message() << " " << result->error_detail;
    EXPECT_EQ(result->protocol, "h2");
    EXPECT_TRUE(result->raw_request.starts_with("GET /page.html HTTP/1.1\r\nHost: localhost:"))
        << result->raw_request;
    EXPECT_TRUE(result->raw_response.starts_with("HTTP/1.1 200 \r\n")) << result->raw_response;

    const std::string path = (dir.path / "h2.warc").string();
    {
        warc_writer writer{{path, 1'000'000'000, false}};
        http_exchange x;
        x.url = url;
        x.remote_ip = result->remote_ip;
        x.started = result->started;
        x.protocol = result->protocol;
        x.request = result->raw_request;
        x.response = result->raw_response;
        x.response_head_bytes = result->raw_head_bytes;
        x.complete = true;
        writer.write(x);
        EXPECT_EQ(writer.close(), "");
    }
    const std::string text = read_file(path);
    const auto responses = records_of(text, "response", url);
    const auto requests = records_of(text, "request", url);
    ASSERT_EQ(responses.size(), 1u);
    ASSERT_EQ(requests.size(), 1u);
    EXPECT_EQ(field_of(responses[0].first, "WARC-Protocol"), "h2");
    EXPECT_EQ(field_of(requests[0].first, "WARC-Protocol"), "h2");

    SKIP_WITHOUT_WARCIO();
    const fs::path expectations = dir.path / "expected.json";
    write_expectations(expectations, {{url, page, "response"}});
    const node_result checked = run_warcio_check(expectations, {path});
    EXPECT_EQ(checked.status, 0) << checked.output;
    EXPECT_THAT(checked.output, testing::HasSubstr("1 captures, 0 revisits"));
}

} // namespace
