#include "http/decoder.hpp"

#include "support/compress.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace asiocrawl::detail;
using asiocrawl::test::brotli;
using asiocrawl::test::brotli_bomb;
using asiocrawl::test::compress;
using asiocrawl::test::gzip_bomb;
using asiocrawl::test::wrapper;
using asiocrawl::test::zstd;
using asiocrawl::test::zstd_bomb;
using asiocrawl::test::zstd_raw_frame;
using status = content_decoder::status;

namespace {

const std::string text = [] {
    std::string s;
    for (int i = 0; i < 5000; ++i)
        s += "<p>line " + std::to_string(i) + "</p>\n";
    return s;
}();

/// Feeds `input` in pieces of `piece` bytes (0: all at once) and finishes.
std::pair<status, std::string> decode(content_coding coding, const std::string& input, std::size_t piece,
                                      std::uint64_t limit = 1 << 30) {
    content_decoder decoder{coding, limit};
    std::string out;
    const std::size_t step = piece == 0 ? input.size() + 1 : piece;
    for (std::size_t at = 0; at < input.size(); at += step) {
        const auto s = decoder.feed(std::string_view(input).substr(at, step), out);
        if (s != status::ok)
            return {s, out};
    }
    EXPECT_EQ(decoder.decoded_bytes(), out.size());
    return {decoder.finish(), out};
}

} // namespace

TEST(parse_content_coding, reads_the_field) {
    const std::vector<std::pair<std::string, content_coding>> table{
        {"", content_coding::identity},
        {"identity", content_coding::identity},
        {"gzip", content_coding::gzip},
        {" GZip ", content_coding::gzip},
        {"x-gzip", content_coding::gzip},
        {"deflate", content_coding::deflate},
        {"identity, gzip", content_coding::gzip},
        {"br", content_coding::br},
        {" BR ", content_coding::br},
        {"zstd", content_coding::zstd},
        {"identity, zstd", content_coding::zstd},
        {"compress", content_coding::unsupported},
        {"x-br", content_coding::unsupported},
        {"gzip, gzip", content_coding::unsupported},
        {"deflate, br", content_coding::unsupported},
        {"zstd, br", content_coding::unsupported},
    };
    for (const auto& [value, expected] : table)
        EXPECT_EQ(parse_content_coding(value), expected) << value;
}

struct round_trip_case {
    const char* name;
    content_coding coding;
    std::string (*encode)(const std::string&);
};

class decoder_round_trip : public ::testing::TestWithParam<round_trip_case> {};

TEST_P(decoder_round_trip, decodes_whole_and_in_every_piece_size) {
    const auto& c = GetParam();
    const std::string compressed = c.encode(text);
    ASSERT_LT(compressed.size(), text.size());
    for (std::size_t piece : {0, 1, 2, 3, 7, 100, 4096}) {
        auto [s, out] = decode(c.coding, compressed, piece);
        EXPECT_EQ(s, status::ok) << "piece " << piece;
        EXPECT_EQ(out, text) << "piece " << piece;
    }
}

INSTANTIATE_TEST_SUITE_P(
    codings, decoder_round_trip,
    ::testing::Values(
        round_trip_case{"gzip", content_coding::gzip,
                        [](const std::string& t) { return compress(t, wrapper::gzip); }},
        round_trip_case{"deflate_zlib", content_coding::deflate,
                        [](const std::string& t) { return compress(t, wrapper::zlib); }},
        round_trip_case{"deflate_raw", content_coding::deflate,
                        [](const std::string& t) { return compress(t, wrapper::raw); }},
        round_trip_case{"br", content_coding::br, [](const std::string& t) { return brotli(t); }},
        round_trip_case{"zstd", content_coding::zstd, [](const std::string& t) { return zstd(t); }}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(content_decoder, identity_passes_bytes_through) {
    auto [s, out] = decode(content_coding::identity, text, 10);
    EXPECT_EQ(s, status::ok);
    EXPECT_EQ(out, text);
}

TEST(content_decoder, an_empty_body_is_fine_for_every_coding) {
    for (auto coding : {content_coding::identity, content_coding::gzip, content_coding::deflate,
                        content_coding::br, content_coding::zstd, content_coding::unsupported}) {
        auto [s, out] = decode(coding, "", 0);
        EXPECT_EQ(s, status::ok);
        EXPECT_TRUE(out.empty());
    }
}

TEST(content_decoder, an_unsupported_coding_with_a_body_is_corrupt) {
    EXPECT_EQ(decode(content_coding::unsupported, "\x1b\x2f", 0).first, status::corrupt);
}

TEST(content_decoder, concatenated_gzip_members_are_one_body) {
    const std::string two = compress("first ", wrapper::gzip) + compress("second", wrapper::gzip);
    for (std::size_t piece : {0, 1, 5}) {
        auto [s, out] = decode(content_coding::gzip, two, piece);
        EXPECT_EQ(s, status::ok);
        EXPECT_EQ(out, "first second");
    }
}

TEST(content_decoder, bytes_after_the_end_are_ignored) {
    auto [s, out] = decode(content_coding::gzip, compress("body", wrapper::gzip) + "\0\0\n junk", 3);
    EXPECT_EQ(s, status::ok);
    EXPECT_EQ(out, "body");
    auto [s2, out2] = decode(content_coding::deflate, compress("body", wrapper::raw) + "junk", 0);
    EXPECT_EQ(s2, status::ok);
    EXPECT_EQ(out2, "body");
}

TEST(content_decoder, corrupt_input_is_corrupt) {
    std::string damaged = compress(text, wrapper::gzip);
    for (std::size_t i = 20; i < 60; ++i)
        damaged[i] = static_cast<char>(damaged[i] ^ 0x5a);
    EXPECT_EQ(decode(content_coding::gzip, damaged, 0).first, status::corrupt);
    EXPECT_EQ(decode(content_coding::gzip, "this is not gzip at all", 0).first, status::corrupt);
    EXPECT_EQ(decode(content_coding::deflate, std::string("\xff\xff\xff\xff", 4), 0).first, status::corrupt);
}

TEST(content_decoder, a_stream_cut_short_is_corrupt_at_finish) {
    const std::string whole = compress(text, wrapper::gzip);
    EXPECT_EQ(decode(content_coding::gzip, whole.substr(0, whole.size() / 2), 0).first, status::corrupt);
    EXPECT_EQ(decode(content_coding::gzip, whole.substr(0, whole.size() - 4), 0).first, status::corrupt)
        << "trailer incomplete";
    EXPECT_EQ(decode(content_coding::deflate, "x", 0).first, status::corrupt) << "one byte of deflate";
}

TEST(content_decoder, a_body_over_the_limit_stops_exactly_at_the_limit) {
    for (auto [coding, input] : {std::pair{content_coding::identity, text},
                                 std::pair{content_coding::gzip, compress(text, wrapper::gzip)}}) {
        auto [s, out] = decode(coding, input, 1000, 777);
        EXPECT_EQ(s, status::limit_exceeded);
        EXPECT_EQ(out, text.substr(0, 777));
    }
    auto [s, out] = decode(content_coding::gzip, compress(text, wrapper::gzip), 0, text.size());
    EXPECT_EQ(s, status::ok) << "exactly the limit is allowed";
}

TEST(content_decoder, a_gzip_bomb_stops_at_the_limit_with_bounded_output) {
    const std::string bomb = gzip_bomb(1024); // 1 GiB of zeros in about 1 MiB
    ASSERT_LT(bomb.size(), 2u << 20);
    content_decoder decoder{content_coding::gzip, 1 << 20};
    std::string out;
    EXPECT_EQ(decoder.feed(bomb, out), status::limit_exceeded);
    EXPECT_EQ(out.size(), 1u << 20);
    EXPECT_EQ(decoder.feed("more", out), status::limit_exceeded) << "a decoder that failed stays failed";
    EXPECT_EQ(out.size(), 1u << 20);
}

TEST(gunzip, decompresses_a_document_or_says_no) {
    EXPECT_EQ(gunzip(compress(text, wrapper::gzip), 1 << 20), text);
    EXPECT_FALSE(gunzip(compress(text, wrapper::gzip), 100).has_value()) << "over the limit";
    EXPECT_FALSE(gunzip("<urlset/>", 1 << 20).has_value()) << "not compressed";
    EXPECT_FALSE(gunzip(gzip_bomb(64), 1 << 20).has_value());
}

TEST(content_decoder, a_body_at_its_limit_holds_the_limit_not_the_next_power_of_two) {
    constexpr std::uint64_t limit = 3'000'000; // 1.43 times 2 MiB: doubling would reach 4 MiB
    for (const auto coding : {content_coding::identity, content_coding::gzip}) {
        const std::string piece(10'000, 'x');
        const std::string input = coding == content_coding::gzip
                                      ? compress(std::string(limit + 50'000, 'x'), wrapper::gzip)
                                      : std::string();
        content_decoder decoder(coding, limit);
        std::string out;
        status s = status::ok;
        if (coding == content_coding::identity) {
            while (s == status::ok)
                s = decoder.feed(piece, out);
        } else {
            for (std::size_t at = 0; at < input.size() && s == status::ok; at += 1000)
                s = decoder.feed(std::string_view(input).substr(at, 1000), out);
        }
        EXPECT_EQ(s, status::limit_exceeded);
        EXPECT_EQ(out.size(), limit);
        EXPECT_LE(out.capacity(), limit) << "capacity grew past what the limit lets in";
    }
}

// ---- br and zstd ----

TEST(content_decoder, brotli_and_zstd_bombs_stop_at_the_limit) {
    const std::string br = brotli_bomb(64); // 64 MiB of zeros
    const std::string zs = zstd_bomb(1024); // 1 GiB of zeros in 32 KiB
    ASSERT_LT(br.size(), 64u << 10);
    ASSERT_LT(zs.size(), 64u << 10);
    for (const auto& [coding, bomb] :
         {std::pair{content_coding::br, br}, std::pair{content_coding::zstd, zs}}) {
        for (std::size_t piece : {std::size_t{0}, std::size_t{4096}}) {
            auto [s, out] = decode(coding, bomb, piece, 1 << 20);
            EXPECT_EQ(s, status::limit_exceeded) << bomb.size();
            EXPECT_EQ(out.size(), 1u << 20);
            EXPECT_LE(out.capacity(), 1u << 20);
        }
    }
}

TEST(content_decoder, a_zstd_window_over_8_mib_is_refused_and_named) {
    auto [ok, hello] = decode(content_coding::zstd, zstd_raw_frame(23, "hello"), 0);
    EXPECT_EQ(ok, status::ok) << "an 8 MiB window is fine";
    EXPECT_EQ(hello, "hello");
    for (const auto& [log, name] :
         {std::pair{24, "16 MiB"}, std::pair{30, "1 GiB"}, std::pair{41, "2048 GiB"}}) {
        content_decoder decoder{content_coding::zstd, 1 << 30};
        std::string out;
        EXPECT_EQ(decoder.feed(zstd_raw_frame(log, "hello"), out), status::corrupt) << log;
        EXPECT_TRUE(out.empty());
        EXPECT_EQ(decoder.problem(), std::string("zstd frame window ") + name + " is over the 8 MiB bound");
    }
    // Refused in a second frame: the first one's window is not named instead.
    content_decoder decoder{content_coding::zstd, 1 << 30};
    std::string out;
    EXPECT_EQ(decoder.feed(zstd_raw_frame(20, "a") + zstd_raw_frame(30, "b"), out), status::corrupt);
    EXPECT_EQ(out, "a");
    EXPECT_EQ(decoder.problem(), "zstd frame window is over the 8 MiB bound");
}

TEST(content_decoder, zstd_frames_concatenate_and_junk_after_them_is_corrupt) {
    const std::string two = zstd("first ") + zstd_raw_frame(20, "second");
    for (std::size_t piece : {0, 1, 5}) {
        auto [s, out] = decode(content_coding::zstd, two, piece);
        EXPECT_EQ(s, status::ok);
        EXPECT_EQ(out, "first second");
    }
    EXPECT_EQ(decode(content_coding::zstd, zstd("body") + "junk!", 0).first, status::corrupt);
}

TEST(content_decoder, bytes_after_a_brotli_stream_are_ignored) {
    auto [s, out] = decode(content_coding::br, brotli("body") + "junk", 2);
    EXPECT_EQ(s, status::ok);
    EXPECT_EQ(out, "body");
}

TEST(content_decoder, corrupt_or_cut_brotli_and_zstd_are_corrupt_with_a_reason) {
    for (const auto& [coding, whole] :
         {std::pair{content_coding::br, brotli(text)}, std::pair{content_coding::zstd, zstd(text)}}) {
        std::string damaged = whole;
        for (std::size_t i = 10; i < 40; ++i)
            damaged[i] = static_cast<char>(damaged[i] ^ 0x5a);
        content_decoder decoder{coding, 1 << 30};
        std::string out;
        auto s = decoder.feed(damaged, out);
        if (s == status::ok)
            s = decoder.finish();
        EXPECT_EQ(s, status::corrupt);
        EXPECT_FALSE(decoder.problem().empty());

        content_decoder cut{coding, 1 << 30};
        out.clear();
        EXPECT_EQ(cut.feed(std::string_view(whole).substr(0, whole.size() / 2), out), status::ok);
        EXPECT_EQ(cut.finish(), status::corrupt) << "cut short";
        EXPECT_EQ(cut.problem(), "the compressed stream ends early");
    }
    EXPECT_EQ(decode(content_coding::zstd, "this is not zstd at all", 0).first, status::corrupt);
    EXPECT_EQ(decode(content_coding::br, std::string(32, '\xff'), 0).first, status::corrupt);
}
