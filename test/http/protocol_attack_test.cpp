// The protocol-attack suite: HTTP/1.1 framing and connection-level attacks on the client (RFC 9112 §6.3,
// §7.1, §2.2, §5, §9 and the request-smuggling / response-splitting literature as it applies to a client), as
// a table. Each row is the exact bytes a server on 127.0.0.1 writes for /h (or a small coroutine for late
// bytes, streams and resets) and what the crawler must make of them. For every row the harness crawls a root
// that links to /h, /ok1 and /ok2 with one worker (so that the connection /h was answered on is the one the
// next request would reuse) and asserts:
// - /h's record has the row's error kind (and status, body, content type, tries where the row says);
// - /ok1 and /ok2 are fetched with 200 and their exact bodies, once each, at the first try;
// - the server saw exactly /, /h (as many times as the row's tries), /ok1 and /ok2: nothing from a fake or
//   smuggled response was followed, and no request carried a cookie (no honest answer here sets one);
// - the number of connections the server accepted, where the row says (reuse or not after /h's answer);
// - no record is over the body limit; every run is bounded.
#include "support/compress.hpp"
#include "support/hostile_server.hpp"
#include "support/loopback_crawl.hpp"
#include "support/records.hpp"

#include <asiocrawl/crawler.hpp>
#include <asiocrawl/error.hpp>

#include <boost/asio/io_context.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace asio = boost::asio;
using namespace asiocrawl;
using namespace std::chrono_literals;
using asiocrawl::test::head_fields;
using asiocrawl::test::hostile_server;
using asiocrawl::test::links_to;
using exchange = hostile_server::exchange;
using handler = hostile_server::handler;
using task = asio::awaitable<void>;

namespace {

constexpr std::uint64_t body_limit = 64 * 1024;

/// The hostile page's honest content, and the well-behaved pages beside it.
const std::string page = "hello page";
const std::string ok1_body = "<p>fine</p>";
const std::string ok2_body = "<p>also fine</p>";

/// A complete keep-alive 200 answer with a Content-Length, and `fields` (each ending in CRLF) added.
std::string answer(const std::string& body, const std::string& fields = {}) {
    return "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: " + std::to_string(body.size()) +
           "\r\n" + fields + "\r\n" + body;
}

/// One chunk of the chunked coding.
std::string chunk(const std::string& data) {
    char size[32];
    std::snprintf(size, sizeof size, "%zx", data.size());
    return std::string(size) + "\r\n" + data + "\r\n";
}

/// `data` as a whole chunked body: one chunk, the last chunk, no trailer.
std::string chunked(const std::string& data) {
    return chunk(data) + "0\r\n\r\n";
}

std::string gzip(const std::string& data) {
    return asiocrawl::test::compress(data, asiocrawl::test::wrapper::gzip);
}

/// A whole response that nobody asked for, whose page links to /never: if it is ever read as the answer to
/// a request, /never is fetched and that request's body is wrong.
std::string fake_response() {
    const std::string body = "<a href=\"/never\">smuggled</a>";
    return "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: " + std::to_string(body.size()) +
           "\r\n\r\n" + body;
}

// ---- What the server does for /h ----

/// Writes `bytes` and, like a keep-alive server, answers the next request on the same connection if the
/// client sends one: a client that reuses a connection it should have dropped shows in the connection count.
handler send(std::string bytes) {
    return [bytes](exchange& ex) -> task {
        ex.keep_open = true;
        co_await ex.write(bytes);
    };
}

/// Writes `bytes`, then closes the connection.
handler send_then_close(std::string bytes) {
    return [bytes](exchange& ex) -> task { co_await ex.write(bytes); };
}

/// Writes `first`, then `piece` up to `times` times as fast as the client reads (bounded, so that a client
/// without a limit does not buffer gigabytes before its deadline), then holds the connection open.
handler stream(std::string first, std::string piece, std::size_t times) {
    return [first, piece, times](exchange& ex) -> task {
        const bool sent = co_await ex.write(first);
        if (!sent)
            co_return;
        co_await ex.repeat(piece, 0ms, times);
        co_await ex.stall();
    };
}

/// Writes `bytes` one byte at a time, `interval` apart, so that every line and chunk is split across reads;
/// then answers the next request on the connection if the client sends one.
handler trickle(std::string bytes, std::chrono::milliseconds interval) {
    return [bytes, interval](exchange& ex) -> task {
        ex.keep_open = true;
        for (const char c : bytes) {
            const bool sent = co_await ex.write(std::string(1, c));
            if (!sent)
                co_return;
            const bool running = co_await ex.pause(interval);
            if (!running)
                co_return;
        }
    };
}

/// Writes `bytes` (a complete keep-alive answer), waits `after`, then writes `late` on the same connection
/// while the client holds it idle, and answers the next request if the client sends one.
handler late_bytes(std::string bytes, std::chrono::milliseconds after, std::string late) {
    return [bytes, after, late](exchange& ex) -> task {
        ex.keep_open = true;
        const bool sent = co_await ex.write(bytes);
        if (!sent)
            co_return;
        const bool running = co_await ex.pause(after);
        if (running)
            co_await ex.write(late);
    };
}

enum class hang_up { close, reset };

/// Writes `bytes` (a complete keep-alive answer), waits `after`, then closes or resets the connection.
handler then_hang_up(std::string bytes, std::chrono::milliseconds after, hang_up how) {
    return [bytes, after, how](exchange& ex) -> task {
        const bool sent = co_await ex.write(bytes);
        if (!sent)
            co_return;
        const bool running = co_await ex.pause(after);
        if (running && how == hang_up::reset)
            ex.reset();
    };
}

// ---- The table ----

struct attack {
    std::string name{};
    handler serve{};
    /// error_kind of /h's record; "" when /h must succeed.
    std::string kind{};
    /// /h's status; 0: not checked.
    int status = 0;
    /// /h's decoded body (what the body sink got; "" when it got nothing); unset: not checked.
    std::optional<std::string> body{};
    /// Attempts at /h: its record's tries, and how many times the server saw /h.
    int tries = 1;
    /// Connections the server accepted in the whole crawl; 0: not checked. With one worker, 1 means the
    /// connection /h was answered on served /ok1 and /ok2 too, 2 that a fresh one was opened after /h.
    std::size_t connections = 0;
    /// /h's record's content type; unset: not checked.
    std::optional<std::string> content_type{};
    /// politeness.delay: the least time between two request starts, so that late bytes and hang-ups reach a
    /// connection while it idles in the pool.
    std::chrono::milliseconds delay{0};
};

void PrintTo(const attack& a, std::ostream* os) {
    *os << a.name;
}

std::vector<attack> attacks() {
    std::vector<attack> t;
    const auto add = [&t](attack a) { t.push_back(std::move(a)); };
    const std::string head_chunked = head_fields("Transfer-Encoding: chunked\r\n");
    const std::string fake = fake_response();

    // ---- Message length (RFC 9112 §6.3) ----

    // §6.3 (3): the pair "might indicate an attempt to perform request smuggling or response splitting and
    // ought to be handled as an error": it is (Beast's parser refuses it), and the connection goes.
    add({.name = "te_then_content_length",
         .serve = send(head_fields("Transfer-Encoding: chunked\r\nContent-Length: 3\r\n") + chunked(page)),
         .kind = "bad_response",
         .connections = 2});
    // The same in the other order of fields.
    add({.name = "content_length_then_te",
         .serve = send(head_fields("Content-Length: 3\r\nTransfer-Encoding: chunked\r\n") + chunked(page)),
         .kind = "bad_response",
         .connections = 2});
    // §6.3 (5): differing Content-Length values are invalid framing, an unrecoverable error.
    add({.name = "two_different_content_lengths",
         .serve = send(head_fields("Content-Length: 10\r\nContent-Length: 11\r\n") + page + "!"),
         .kind = "bad_response",
         .connections = 2});
    // RFC 9110 §8.6: a list of identical values may be taken as that one value.
    add({.name = "content_length_list_of_same_values",
         .serve = send(head_fields("Content-Length: 10, 10\r\n") + page),
         .kind = "",
         .status = 200,
         .body = page});
    // RFC 9110 §8.6: the same value in two fields, likewise.
    add({.name = "content_length_twice_same_value",
         .serve = send(head_fields("Content-Length: 10\r\nContent-Length: 10\r\n") + page),
         .kind = "",
         .status = 200,
         .body = page});
    // Content-Length = 1*DIGIT: leading zeros are digits.
    add({.name = "content_length_leading_zeros",
         .serve = send(head_fields("Content-Length: 0010\r\n") + page),
         .kind = "",
         .status = 200,
         .body = page});
    // 1*DIGIT has no sign: invalid, §6.3 (5).
    add({.name = "content_length_plus_sign",
         .serve = send(head_fields("Content-Length: +10\r\n") + page),
         .kind = "bad_response",
         .connections = 2});
    add({.name = "content_length_negative",
         .serve = send(head_fields("Content-Length: -10\r\n") + page),
         .kind = "bad_response",
         .connections = 2});
    // Two numbers in one value with a space between: not a number, not a list.
    add({.name = "content_length_space_separated",
         .serve = send(head_fields("Content-Length:  5 5\r\n") + page),
         .kind = "bad_response",
         .connections = 2});
    add({.name = "content_length_hex",
         .serve = send(head_fields("Content-Length: 0x10\r\n") + page),
         .kind = "bad_response",
         .connections = 2});
    // 2^64 overflows any 64-bit length: invalid, not wrapped to 0.
    add({.name = "content_length_2_pow_64",
         .serve = send(head_fields("Content-Length: 18446744073709551616\r\n") + page),
         .kind = "bad_response",
         .connections = 2});
    // §8: a message cut short by a close is incomplete; a network failure, tried again.
    add({.name = "content_length_larger_than_body_then_close",
         .serve = send_then_close(head_fields("Content-Length: 100\r\n") + page),
         .kind = "partial_response",
         .tries = 2});
    // The bytes past Content-Length are not an answer to anything: the connection goes, and the next URL
    // gets its own answer on a fresh one.
    add({.name = "content_length_smaller_than_body",
         .serve = send(head_fields("Content-Length: 10\r\n") + page + "<a href=\"/never\">x</a>" + fake),
         .kind = "",
         .status = 200,
         .body = page,
         .connections = 2});
    // §7: chunked is applied at most once; a sender that says it twice frames nothing we can trust.
    add({.name = "te_chunked_chunked",
         .serve = send(head_fields("Transfer-Encoding: chunked, chunked\r\n") + chunked(chunked(page))),
         .kind = "bad_response",
         .connections = 2});
    // §5.3: two Transfer-Encoding fields combine into "chunked, chunked": the same.
    add({.name = "te_chunked_in_two_fields",
         .serve = send(head_fields("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n") +
                       chunked(chunked(page))),
         .kind = "bad_response",
         .connections = 2});
    // §6.1: "A sender MUST NOT apply the chunked transfer coding more than once" and chunked not last leaves
    // the body to the close with chunk framing inside it: refused, as curl does.
    add({.name = "te_chunked_not_last",
         .serve = send_then_close(head_fields("Transfer-Encoding: chunked, gzip\r\n") + gzip(chunked(page))),
         .kind = "bad_response",
         .connections = 2});
    // §6.3 (4): a transfer coding other than chunked ends at the close; gzip is one we can undo.
    add({.name = "te_gzip_alone",
         .serve = send_then_close(head_fields("Transfer-Encoding: gzip\r\n") + gzip(page)),
         .kind = "",
         .status = 200,
         .body = page,
         .connections = 2});
    // §7: coding names are case-insensitive.
    add({.name = "te_chunked_in_capitals",
         .serve = send(head_fields("Transfer-Encoding: CHUNKED\r\n") + chunked(page)),
         .kind = "",
         .status = 200,
         .body = page,
         .connections = 1});
    // §5.1: whitespace between name and colon makes the field (and so the framing) invalid: rejected.
    add({.name = "te_space_before_colon",
         .serve = send(head_fields("Transfer-Encoding : chunked\r\n") + chunked(page)),
         .kind = "bad_response",
         .connections = 2});
    // An unknown transfer coding cannot be undone: the content cannot be had (refused, as for TE gzip the
    // alternative to decoding), and it must never be taken for chunked.
    add({.name = "te_unknown_xchunked",
         .serve = send_then_close(head_fields("Transfer-Encoding: xchunked\r\n") + chunked(page)),
         .kind = "bad_response",
         .connections = 2});
    // §5.2: a user agent replaces obs-fold with SP: the value is " chunked", the framing chunked.
    add({.name = "te_obs_fold",
         .serve = send(head_fields("Transfer-Encoding:\r\n chunked\r\n") + chunked(page)),
         .kind = "",
         .status = 200,
         .body = page});
    // §6.1: an HTTP/1.0 message with Transfer-Encoding has faulty framing: processed, then the connection is
    // closed, whatever Connection says.
    add({.name = "te_in_http_1_0_response",
         .serve = send("HTTP/1.0 200 OK\r\nContent-Type: text/html\r\nConnection: keep-alive\r\n"
                       "Transfer-Encoding: chunked\r\n\r\n" +
                       chunked(page)),
         .kind = "",
         .status = 200,
         .body = page,
         .connections = 2});
    // §6.3 (1): a 204 ends at its blank line; the bytes after it answer nothing, so the connection goes.
    add({.name = "status_204_with_a_body",
         .serve = send("HTTP/1.1 204 No Content\r\nContent-Length: " + std::to_string(fake.size()) +
                       "\r\n\r\n" + fake),
         .kind = "",
         .status = 204,
         .body = "",
         .connections = 2});
    // §6.3 (1): the same for 304.
    add({.name = "status_304_with_a_body",
         .serve = send("HTTP/1.1 304 Not Modified\r\nContent-Length: " + std::to_string(fake.size()) +
                       "\r\n\r\n" + fake),
         .kind = "",
         .status = 304,
         .body = "",
         .connections = 2});

    // ---- Interim responses and status lines (RFC 9110 §15, RFC 9112 §4) ----

    // RFC 9110 §15.2: a client must be able to take interim answers it did not ask for; the final one counts,
    // and nothing of the interim ones (a 103's Link) is followed.
    add({.name = "interim_responses_then_final",
         .serve = send(
             "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </never>; rel=preload\r\n\r\n" +
             answer(page)),
         .kind = "",
         .status = 200,
         .body = page,
         .connections = 1});
    // RFC 9110 §15.2.2: 101 only answers an Upgrade we never send.
    add({.name = "switching_protocols_unasked",
         .serve = send(
             "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n" + fake),
         .kind = "bad_response",
         .connections = 2});
    {
        // More interim answers than any server sends (the fetcher takes 8): a server that never answers.
        std::string interim;
        for (int i = 0; i < 10; ++i)
            interim += "HTTP/1.1 100 Continue\r\n\r\n";
        add({.name = "ten_interim_responses",
             .serve = send(interim + answer(page)),
             .kind = "bad_response",
             .connections = 2});
    }
    // RFC 9110 §15: a status code is 100 to 599; 000 is no status.
    add({.name = "status_000",
         .serve = send("HTTP/1.1 000 X\r\nContent-Length: 10\r\n\r\n" + page),
         .kind = "bad_response",
         .connections = 2});
    // RFC 9112 §4: status-code = 3DIGIT.
    add({.name = "status_two_digits",
         .serve = send("HTTP/1.1 99 X\r\nContent-Length: 10\r\n\r\n" + page),
         .kind = "bad_response",
         .connections = 2});
    add({.name = "status_four_digits",
         .serve = send("HTTP/1.1 1000 X\r\nContent-Length: 10\r\n\r\n" + page),
         .kind = "bad_response",
         .connections = 2});
    // RFC 9112 §2.3: an HTTP/1.1 client reads HTTP/1.x; "HTTP/2" as text is not HTTP/2 (that is binary).
    add({.name = "status_line_http_2",
         .serve = send("HTTP/2 200 OK\r\nContent-Length: 10\r\n\r\n" + page),
         .kind = "bad_response",
         .connections = 2});
    // RFC 9112 §4: reason-phrase may be empty (the SP before it stays).
    add({.name = "status_line_empty_reason",
         .serve = send("HTTP/1.1 200 \r\nContent-Type: text/html\r\nContent-Length: 10\r\n\r\n" + page),
         .kind = "",
         .status = 200,
         .body = page,
         .connections = 1});
    // No SP after the code: the grammar wants one, but curl and browsers accept it, and nothing is ambiguous.
    add({.name = "status_line_without_reason",
         .serve = send("HTTP/1.1 200\r\nContent-Type: text/html\r\nContent-Length: 10\r\n\r\n" + page),
         .kind = "",
         .status = 200,
         .body = page,
         .connections = 1});
    // RFC 9112 §2.3: HTTP-name is "HTTP", case-sensitive.
    add({.name = "status_line_lowercase_http",
         .serve = send("http/1.1 200 OK\r\nContent-Length: 10\r\n\r\n" + page),
         .kind = "bad_response",
         .connections = 2});
    // RFC 9112 §2.2 lets a recipient accept a bare LF as line terminator; Beast does not. Refusing it at once
    // is sane (a clear error, one try, no wait for a CRLF that never comes).
    add({.name = "lf_only_line_endings",
         .serve = send("HTTP/1.1 200 OK\nContent-Type: text/html\nContent-Length: 10\n\n" + page),
         .kind = "bad_response",
         .connections = 2});

    // ---- Header fields (RFC 9112 §2.2, §5; RFC 9110 §5.5) ----

    // §2.2: a bare CR makes the element invalid (or is replaced by SP): rejected here.
    add({.name = "bare_cr_in_a_field",
         .serve = send(head_fields("X-Note: a\rb\r\nContent-Length: 10\r\n") + page),
         .kind = "bad_response",
         .connections = 2});
    // §5.2: a user agent replaces obs-fold with SP: "text/html; charset=utf-8".
    add({.name = "obs_fold_in_a_field",
         .serve = send(
             "HTTP/1.1 200 OK\r\nContent-Type: text/html;\r\n charset=utf-8\r\nContent-Length: 10\r\n\r\n" +
             page),
         .kind = "",
         .status = 200,
         .body = page,
         .content_type = "text/html"});
    // RFC 9110 §5.5: a NUL in a value: reject the message or replace it with SP. Rejected here.
    add({.name = "nul_in_a_field_value",
         .serve = send(head_fields(std::string("X-Note: a\0b\r\n", 13) + "Content-Length: 10\r\n") + page),
         .kind = "bad_response",
         .connections = 2});
    // §5.1: no whitespace between field name and colon.
    add({.name = "space_before_colon",
         .serve = send("HTTP/1.1 200 OK\r\nContent-Type : text/html\r\nContent-Length: 10\r\n\r\n" + page),
         .kind = "bad_response",
         .connections = 2});
    // RFC 9110 §5.1: field-name = token; brackets are delimiters.
    add({.name = "field_name_with_invalid_characters",
         .serve = send(head_fields("X-Bad[1]: v\r\nContent-Length: 10\r\n") + page),
         .kind = "bad_response",
         .connections = 2});

    // ---- Chunked coding (RFC 9112 §7.1) ----

    add({.name = "chunk_size_not_hex",
         .serve = send(head_chunked + "5g\r\nhello\r\n0\r\n\r\n"),
         .kind = "bad_response",
         .connections = 2});
    // 17 hex digits: more than 64 bits; an overflow must not wrap to a small size.
    add({.name = "chunk_size_17_hex_digits",
         .serve = send(head_chunked + "10000000000000005\r\nhello\r\n0\r\n\r\n"),
         .kind = "bad_response",
         .connections = 2});
    add({.name = "chunk_size_negative",
         .serve = send(head_chunked + "-5\r\nhello\r\n0\r\n\r\n"),
         .kind = "bad_response",
         .connections = 2});
    // "0x5" is "0" (the last chunk) followed by junk, not 5.
    add({.name = "chunk_size_0x_prefix",
         .serve = send(head_chunked + "0x5\r\nhello\r\n0\r\n\r\n"),
         .kind = "bad_response",
         .connections = 2});
    add({.name = "chunk_data_without_crlf",
         .serve = send(head_chunked + "5\r\nhello0\r\n\r\n"),
         .kind = "bad_response",
         .connections = 2});
    add({.name = "chunk_data_longer_than_its_size",
         .serve = send(head_chunked + "3\r\nhello\r\n0\r\n\r\n"),
         .kind = "bad_response",
         .connections = 2});
    {
        // A chunk-size line is bounded by a small fixed limit: 1 MiB of chunk extension is refused, not
        // buffered.
        const std::string piece(16 * 1024, 'a');
        add({.name = "chunk_extension_of_1_mib",
             .serve = [head_chunked, piece](exchange& ex) -> task {
                 const bool sent = co_await ex.write(head_chunked + "5;ext=");
                 if (!sent)
                     co_return;
                 co_await ex.repeat(piece, 0ms, 64);
                 ex.keep_open = true; // a client that took all that would reuse the connection next
                 co_await ex.write("\r\nhello\r\n0\r\n\r\n");
             },
             .kind = "bad_response",
             .connections = 2});
        // A chunk size of endless zeros: the same line limit.
        add({.name = "chunk_size_of_endless_zeros",
             .serve = stream(head_chunked, std::string(16 * 1024, '0'), 256),
             .kind = "bad_response",
             .connections = 2});
    }
    // A trailer field is allowed and read; the body is the chunks.
    add({.name = "normal_trailer",
         .serve = send(head_chunked + chunk(page) + "0\r\nX-Checksum: abc\r\n\r\n"),
         .kind = "",
         .status = 200,
         .body = page,
         .connections = 1});
    {
        // The trailer section is bounded by max_header_bytes, like the head.
        std::string fields;
        while (fields.size() < 16 * 1024)
            fields += "X-T: v\r\n";
        add({.name = "endless_trailer_section",
             .serve = stream(head_chunked + chunk(page) + "0\r\n", fields, 256),
             .kind = "header_too_large",
             .connections = 2});
    }
    // One trailer value of 70 KiB: over max_header_bytes (64 KiB), and never an internal error.
    add({.name = "trailer_value_of_70_kib",
         .serve =
             send(head_chunked + chunk(page) + "0\r\nX-Big: " + std::string(70 * 1024, 'b') + "\r\n\r\n"),
         .kind = "header_too_large",
         .connections = 2});
    // RFC 9110 §6.5.1: trailer fields are not merged into the head: no cookie set, no Location, and the
    // head's Content-Type stands.
    add({.name = "trailer_injects_head_fields",
         .serve = send(
             head_chunked + chunk(page) +
             "0\r\nSet-Cookie: injected=1; Path=/\r\nLocation: /never\r\nContent-Type: image/png\r\n\r\n"),
         .kind = "",
         .status = 200,
         .body = page,
         .content_type = "text/html"});
    // The same, with no Content-Type in the head: a trailer's must not make the body HTML (its link is not
    // followed).
    add({.name = "trailer_content_type_for_a_head_without_one",
         .serve = send("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
                       chunk("<a href=\"/never\">x</a>") + "0\r\nContent-Type: text/html\r\n\r\n"),
         .kind = "",
         .status = 200,
         .body = "<a href=\"/never\">x</a>",
         .content_type = ""});
    // A chunked answer with a chunk extension and a trailer, one byte per read: the parser's state survives
    // every split point, and the whole answer leaves the connection reusable.
    add({.name = "chunked_answer_one_byte_at_a_time",
         .serve =
             trickle(head_chunked + "5;name=\"va;lue\"\r\nhello\r\n5\r\n page\r\n0\r\nX-Sum: 1\r\n\r\n", 1ms),
         .kind = "",
         .status = 200,
         .body = page,
         .connections = 1});
    // The chunked body ends with the CRLF after the trailer section; cut before it, it is incomplete.
    add({.name = "last_chunk_without_final_crlf_then_close",
         .serve = send_then_close(head_chunked + chunk(page) + "0\r\n"),
         .kind = "partial_response",
         .tries = 2});

    // ---- Connection reuse and desynchronisation (response splitting, response queue poisoning) ----

    // A whole fake response arrives on the keep-alive connection while it idles in the pool: it answers no
    // request, so the connection is dropped and the next URL gets its own answer on a fresh one.
    add({.name = "fake_response_while_idle_in_the_pool",
         .serve = late_bytes(answer(page), 50ms, fake),
         .kind = "",
         .status = 200,
         .body = page,
         .connections = 2,
         .delay = 300ms});
    // A fake response right after a chunked body, in the same write.
    add({.name = "fake_response_after_chunked_body",
         .serve = send(head_chunked + chunked(page) + fake),
         .kind = "",
         .status = 200,
         .body = page,
         .connections = 2});
    // A fake response right after a Content-Length body, in the same write.
    add({.name = "fake_response_after_content_length_body",
         .serve = send(answer(page) + fake),
         .kind = "",
         .status = 200,
         .body = page,
         .connections = 2});
    // §6.3 (8): no Content-Length, no Transfer-Encoding: the body runs to the close, whatever Connection
    // says; it arrives in two parts to show that reading goes on to the close.
    add({.name = "close_delimited_body_on_keep_alive",
         .serve = [](exchange& ex) -> task {
             const bool sent = co_await ex.write(head_fields("Connection: keep-alive\r\n") + "hello ");
             if (!sent)
                 co_return;
             const bool running = co_await ex.pause(50ms);
             if (running)
                 co_await ex.write("page");
         },
         .kind = "",
         .status = 200,
         .body = page,
         .connections = 2});
    // RFC 9112 §9.6: after "Connection: close" the client must not send another request on the connection
    // (this server would answer it).
    add({.name = "connection_close_honoured",
         .serve = send(answer(page, "Connection: close\r\n")),
         .kind = "",
         .status = 200,
         .body = page,
         .connections = 2});
    // Keep-Alive: timeout=1 (RFC 2068 §19.7.1.1, as browsers read it): a connection idle longer than the
    // server said it keeps connections is not reused (this server would answer on it).
    add({.name = "keep_alive_timeout_honoured",
         .serve = send(answer(page, "Keep-Alive: timeout=1\r\n")),
         .kind = "",
         .status = 200,
         .body = page,
         .connections = 2,
         .delay = 1500ms});
    // A keep-alive answer and an immediate close: the next request meets a stale connection and is sent
    // again on a fresh one, without a try counted (/ok1's tries stay 1).
    add({.name = "closes_right_after_a_keep_alive_answer",
         .serve = send_then_close(answer(page)),
         .kind = "",
         .status = 200,
         .body = page,
         .connections = 2});
    // The close comes while the connection idles in the pool.
    add({.name = "eof_while_idle_in_the_pool",
         .serve = then_hang_up(answer(page), 50ms, hang_up::close),
         .kind = "",
         .status = 200,
         .body = page,
         .connections = 2,
         .delay = 300ms});
    // A reset while the connection idles in the pool.
    add({.name = "reset_while_idle_in_the_pool",
         .serve = then_hang_up(answer(page), 50ms, hang_up::reset),
         .kind = "",
         .status = 200,
         .body = page,
         .connections = 2,
         .delay = 300ms});

    // ---- Head limits (fetch.max_header_bytes, 64 KiB by default) ----

    add({.name = "header_value_of_70_kib",
         .serve =
             send(head_fields("X-Big: " + std::string(70 * 1024, 'b') + "\r\nContent-Length: 10\r\n") + page),
         .kind = "header_too_large",
         .connections = 2});
    {
        std::string fields;
        for (int i = 0; i < 100'000; ++i)
            fields += "a: b\r\n";
        add({.name = "hundred_thousand_header_fields",
             .serve = send(head_fields(fields + "Content-Length: 10\r\n") + page),
             .kind = "header_too_large",
             .connections = 2});
    }
    add({.name = "endless_header_line",
         .serve = stream("HTTP/1.1 200 OK\r\nX-Endless: ", std::string(16 * 1024, 'e'), 256),
         .kind = "header_too_large",
         .connections = 2});

    // ---- Content-Encoding (RFC 9110 §8.4) ----

    // We ask for gzip and deflate only; undecodable bytes are an error, never handed to the parser.
    add({.name = "unknown_content_coding",
         .serve = send(answer(page, "Content-Encoding: x-unknown\r\n")),
         .kind = "decoding_failed",
         .connections = 2});
    // Two stacked codings: beyond what the decoder takes (src/http/decoder.hpp), refused like an unknown one
    // (curl and browsers undo stacks; refusing is also within RFC 9110 §8.4).
    add({.name = "double_gzip",
         .serve = [body = gzip(gzip(page))](exchange& ex) -> task {
             ex.keep_open = true;
             co_await ex.write(answer(body, "Content-Encoding: gzip, gzip\r\n"));
         },
         .kind = "decoding_failed",
         .connections = 2});
    // A gzip stream cut before its end (and its CRC), framed correctly.
    add({.name = "truncated_gzip",
         .serve = [body = gzip(std::string(4096, 'x')).substr(0, 20)](exchange& ex) -> task {
             ex.keep_open = true;
             co_await ex.write(answer(body, "Content-Encoding: gzip\r\n"));
         },
         .kind = "decoding_failed",
         .connections = 2});
    return t;
}

// ---- The harness ----

class protocol_attack : public ::testing::TestWithParam<attack> {};

std::string describe(const record& r) {
    return "status " + std::to_string(r.status) + ", error_kind \"" + std::string(error_kind(r.error)) +
           "\" (" + r.error.message() + "), tries " + std::to_string(r.tries) + ", size " +
           std::to_string(r.size) + ", content_type \"" + r.content_type + "\"";
}

std::string joined(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& item : items)
        out += (out.empty() ? "" : " ") + item;
    return out;
}

TEST_P(protocol_attack, row) {
    const attack& a = GetParam();
    asio::io_context ctx;
    hostile_server server{ctx.get_executor()};
    server.route("/", send(answer(links_to({"/h", "/ok1", "/ok2"}))));
    server.route("/ok1", send(answer(ok1_body)));
    server.route("/ok2", send(answer(ok2_body)));
    server.route("/h", a.serve);

    crawler_config config;
    config.roots = {server.url("/")};
    // One worker: /, /h, /ok1 and /ok2 in turn, each on the connection the previous one left in the pool.
    config.max_tasks = 1;
    config.max_tries = 2;
    config.robots.obey = false;
    config.retry.initial_backoff = 10ms;
    config.fetch.request_timeout = 1500ms;
    config.fetch.max_body_bytes = body_limit; // max_header_bytes stays at its default, 64 KiB
    config.politeness.delay = a.delay;
    crawler c{ctx.get_executor(), config};
    std::map<std::string, std::string> bodies;
    c.set_body_sink([&](const record& r, std::string_view body) { bodies[r.url] = std::string(body); });
    const auto result = asiocrawl::test::run_crawl(
        ctx, c, [&] { server.stop(); }, 60s);
    ASSERT_TRUE(result.has_value()) << "the crawl did not complete";
    const report& r = *result;
    const auto body_of = [&](const std::string& target) {
        const auto it = bodies.find(server.url(target));
        return it == bodies.end() ? std::string() : it->second;
    };
    const std::string seen = "server saw: " + joined(server.requests()) + "; " +
                             std::to_string(server.connections()) + " connection(s)";

    // The hostile URL.
    const record* h = asiocrawl::test::find(r, server.url("/h"));
    ASSERT_NE(h, nullptr) << seen;
    EXPECT_EQ(error_kind(h->error), a.kind) << describe(*h);
    if (a.status != 0) {
        EXPECT_EQ(h->status, a.status) << describe(*h);
    }
    if (a.body) {
        EXPECT_EQ(body_of("/h"), *a.body) << describe(*h);
    }
    if (a.content_type) {
        EXPECT_EQ(h->content_type, *a.content_type) << describe(*h);
    }
    EXPECT_EQ(h->tries, a.tries) << describe(*h);
    EXPECT_EQ(h->depth, 1);

    // The well-behaved pages beside it: their own answers, at the first try.
    for (const auto& [target, body] : {std::pair{"/ok1", ok1_body}, std::pair{"/ok2", ok2_body}}) {
        const record* ok = asiocrawl::test::find(r, server.url(target));
        ASSERT_NE(ok, nullptr) << target << "; " << seen;
        EXPECT_EQ(ok->status, 200) << target << ": " << describe(*ok);
        EXPECT_FALSE(ok->failed()) << target << ": " << describe(*ok);
        EXPECT_EQ(body_of(target), body) << target << ": " << describe(*ok);
        EXPECT_EQ(ok->tries, 1) << target << ": " << describe(*ok);
    }

    // Nothing else was fetched: no link of a fake, smuggled or interim response followed.
    std::vector<std::string> expected = {"/", "/ok1", "/ok2"};
    expected.insert(expected.end(), static_cast<std::size_t>(a.tries), "/h");
    std::vector<std::string> requested = server.requests();
    std::sort(expected.begin(), expected.end());
    std::sort(requested.begin(), requested.end());
    EXPECT_EQ(requested, expected) << seen;
    std::vector<std::string> urls;
    for (const auto& rec : r.records)
        urls.push_back(rec.url);
    std::sort(urls.begin(), urls.end());
    EXPECT_EQ(urls, (std::vector<std::string>{server.url("/"), server.url("/h"), server.url("/ok1"),
                                              server.url("/ok2")}));
    // No honest answer here sets a cookie: one in a request came from a smuggled or trailer field.
    for (const auto& head : server.heads())
        EXPECT_EQ(head.find("\r\nCookie:"), std::string::npos) << head;

    if (a.connections != 0) {
        EXPECT_EQ(server.connections(), a.connections) << seen;
    }
    for (const auto& rec : r.records)
        EXPECT_LE(rec.size, body_limit) << rec.url;
}

INSTANTIATE_TEST_SUITE_P(table, protocol_attack, ::testing::ValuesIn(attacks()),
                         [](const ::testing::TestParamInfo<attack>& info) { return info.param.name; });

} // namespace
