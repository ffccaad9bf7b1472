// One attempt over HTTP/2: the origin's session (or a new connection, which may turn out HTTP/1.1), a stream
// on it, and the answer read through response_reader in HTTP/1.1 form. See http2_transport.hpp.

#include "http/http2_transport.hpp"

#include <asiocrawl/error.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http/error.hpp>

#include <nghttp2/nghttp2.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

namespace asiocrawl::detail {

namespace asio = boost::asio;
using boost::system::error_code;
using clock_type = std::chrono::steady_clock;

namespace {

/// Sends again on a new connection at most this often: a server that keeps refusing or dropping streams
/// costs the URL an error, not a loop.
constexpr int max_h2_retries = 2;
/// Our receive window per stream (SETTINGS_INITIAL_WINDOW_SIZE) and for the connection: what a server may
/// send ahead of our reading.
constexpr std::int32_t stream_window = 64 * 1024;
constexpr std::int32_t connection_window = 1024 * 1024;
/// nghttp2's output gathered before a write.
constexpr std::size_t write_batch = 64 * 1024;

/// Header fields of an HTTP/1.1 request that HTTP/2 does not carry (RFC 9113 8.2.2) or carries as a
/// pseudo-header (Host becomes :authority).
bool dropped_in_h2(std::string_view lower_name) {
    return lower_name == "host" || lower_name == "connection" || lower_name == "keep-alive" ||
           lower_name == "proxy-connection" || lower_name == "transfer-encoding" || lower_name == "upgrade" ||
           lower_name == "te";
}

} // namespace

// ---- the parts ----

struct http2_transport::stream {
    stream(const asio::any_io_executor& executor, std::size_t& live, std::string_view u,
           const fetch_options& o, std::unique_ptr<fetch_result>& result, clock_type::time_point until)
        : url(u)
        , options(o)
        , out(result)
        , shadow(executor, live)
        , wake(executor, until)
        , deadline(until) {}

    std::int32_t id = 0;
    std::string_view url;
    const fetch_options& options;
    std::unique_ptr<fetch_result>& out;
    /// Holds the answer's bytes in HTTP/1.1 form for response_reader, and the peer's address and the time
    /// sent for the result; never opened.
    connection shadow;
    reading r;
    /// The head being received, in HTTP/1.1 form; its size as HTTP/2 counts it (RFC 9113 6.5.2).
    std::string head;
    std::size_t header_bytes = 0;
    /// A final (not 1xx) head has been read: HEADERS after it are trailers, ignored.
    bool final_head = false;
    bool answered = false;
    bool finished = false;
    /// Never answered on a connection that went away: to be sent again on a new one.
    bool retry = false;
    /// How the stream ended, when the stream itself failed (reset, timeout, a lost connection).
    error_code ec;
    std::string detail;
    /// Ends at the deadline; cancelled to wake the fetch (its stream finished, or it is the reader now).
    asio::steady_timer wake;
    clock_type::time_point deadline;
};

struct http2_transport::session {
    session(http2_transport& t, std::unique_ptr<connection> c)
        : owner(t)
        , conn(std::move(c))
        , input(std::make_unique<char[]>(read_chunk)) {}
    ~session() {
        if (ng)
            nghttp2_session_del(ng);
        if (conn && conn->socket.is_open() && !dead)
            retire(std::move(conn));
    }
    session(const session&) = delete;
    session& operator=(const session&) = delete;

    bool start(std::uint32_t max_header_bytes);
    /// Writes what nghttp2 has to send, as far as the socket takes it now. False when the connection failed.
    bool flush();
    /// The connection is lost: every stream still open ends (one never answered is to be sent again).
    void fail(error_code ec, std::string detail);
    /// A stream is over: its fetch is woken; `reset` sends RST_STREAM (CANCEL) when it is still open.
    void finish(stream& st, bool reset);
    /// Hands response bytes (HTTP/1.1 form) to the stream's reader; finishes the stream when that is over.
    void feed(stream& st, std::string_view bytes, bool end_of_stream);
    const fetch_config& owner_config() const noexcept;
    /// fetch_config::limit_rate asks for `wait` before the next read: the connection pauses, and its
    /// streams' deadlines move by the pause (the wait is ours, not the server's).
    void pause(clock_type::duration wait);
    stream* find(std::int32_t id) {
        const auto it = streams.find(id);
        return it == streams.end() ? nullptr : it->second;
    }

    http2_transport& owner;
    std::unique_ptr<connection> conn;
    nghttp2_session* ng = nullptr;
    std::unordered_map<std::int32_t, stream*> streams;
    /// The stream whose fetch reads the socket; null when none is waiting.
    stream* reader = nullptr;
    bool dead = false;
    /// GOAWAY received (or a stream timed out on it): no new streams.
    bool going_away = false;
    /// Output nghttp2 made that the socket has not taken yet (a TLS write is retried with the same bytes).
    std::string output;
    std::unique_ptr<char[]> input;
    clock_type::time_point idle_since = clock_type::now();
    /// The shadow connections of the streams count themselves here.
    std::size_t shadows = 0;
    /// Streams whose answer was over before the server ended them (a complete Content-Length body, a limit
    /// met): reset after the read that finished them unless the same read also brought their END_STREAM (as
    /// it almost always does: the DATA frame's bytes come before its END_STREAM flag is seen). Resetting at
    /// once would send RST_STREAM for nearly every answer, which costs a write a page and looks like a rapid
    /// reset to a server.
    std::vector<std::int32_t> resets;
    /// What nghttp2 last found wrong with the peer (for the record of a connection it ends).
    std::string last_error;
    /// fetch_config::limit_rate: the connection is not read before this (nor, so, are WINDOW_UPDATEs sent
    /// for what the server sends meanwhile: it stops at its windows and the socket's buffers).
    clock_type::time_point paused_until{};
};

namespace {

using session = http2_transport::session;
using stream = http2_transport::stream;

int on_begin_headers(nghttp2_session*, const nghttp2_frame* frame, void* user) {
    auto& s = *static_cast<session*>(user);
    if (frame->hd.type != NGHTTP2_HEADERS)
        return 0;
    if (stream* st = s.find(frame->hd.stream_id)) {
        st->answered = true;
        st->header_bytes = 0;
        st->head.clear();
        if (!st->final_head)
            st->head = "HTTP/1.1 ";
    }
    return 0;
}

int on_header(nghttp2_session*, const nghttp2_frame* frame, const std::uint8_t* name, std::size_t name_size,
              const std::uint8_t* value, std::size_t value_size, std::uint8_t, void* user) {
    auto& s = *static_cast<session*>(user);
    stream* st = s.find(frame->hd.stream_id);
    if (!st || st->finished)
        return 0;
    // RFC 9113 6.5.2's size: the field's name and value and 32 bytes; the whole list is bounded by
    // max_header_bytes like an HTTP/1.1 head (a huge list, or an HPACK bomb that expands small references).
    st->header_bytes += name_size + value_size + 32;
    const auto limit = s.owner_config().max_header_bytes;
    if (st->header_bytes > limit) {
        st->ec = error::header_too_large;
        st->detail = "HTTP/2 header list over " + std::to_string(limit) + " bytes (fetch.max_header_bytes)";
        s.finish(*st, false); // nghttp2 resets the stream on the failure below
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    }
    if (st->final_head)
        return 0; // trailers: not merged into the head (RFC 9110 6.5.1)
    const std::string_view n(reinterpret_cast<const char*>(name), name_size);
    const std::string_view v(reinterpret_cast<const char*>(value), value_size);
    if (n == ":status")
        st->head.append(v).append(" \r\n");
    else if (!n.starts_with(':'))
        st->head.append(n).append(": ").append(v).append("\r\n");
    return 0;
}

int on_frame_recv(nghttp2_session*, const nghttp2_frame* frame, void* user) {
    auto& s = *static_cast<session*>(user);
    if (frame->hd.type == NGHTTP2_GOAWAY) {
        // Streams above last-stream-id were not processed (RFC 9113 6.8): sent again on a new connection.
        s.going_away = true;
        const std::int32_t last = frame->goaway.last_stream_id;
        std::vector<stream*> refused;
        for (auto& [id, st] : s.streams)
            if (id > last && !st->finished)
                refused.push_back(st);
        for (stream* st : refused) {
            st->retry = !st->answered;
            st->ec = boost::asio::error::connection_aborted;
            st->detail = "the server sent GOAWAY";
            s.finish(*st, false);
        }
        return 0;
    }
    stream* st = s.find(frame->hd.stream_id);
    if (!st || st->finished)
        return 0;
    const bool end = (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0;
    if (frame->hd.type == NGHTTP2_HEADERS) {
        if (!st->final_head) {
            st->head.append("\r\n");
            const std::string_view status = std::string_view(st->head).substr(9, 3);
            st->final_head = !(status.size() == 3 && status[0] == '1');
            const std::string head = std::exchange(st->head, {});
            s.feed(*st, head, end);
        } else if (end) {
            s.feed(*st, {}, true); // the end of the body, with trailers
        }
    } else if (frame->hd.type == NGHTTP2_DATA && end) {
        s.feed(*st, {}, true);
    }
    return 0;
}

int on_data_chunk(nghttp2_session*, std::uint8_t, std::int32_t stream_id, const std::uint8_t* data,
                  std::size_t size, void* user) {
    auto& s = *static_cast<session*>(user);
    stream* st = s.find(stream_id);
    if (st && !st->finished)
        s.feed(*st, {reinterpret_cast<const char*>(data), size}, false);
    return 0;
}

int on_error(nghttp2_session*, int, const char* message, std::size_t size, void* user) {
    auto& s = *static_cast<session*>(user);
    s.last_error.assign(message, std::min<std::size_t>(size, 200));
    return 0;
}

int on_stream_close(nghttp2_session*, std::int32_t stream_id, std::uint32_t code, void* user) {
    auto& s = *static_cast<session*>(user);
    stream* st = s.find(stream_id);
    if (!st || st->finished)
        return 0;
    if (code == NGHTTP2_NO_ERROR) {
        s.feed(*st, {}, true);
        return 0;
    }
    if (code == NGHTTP2_REFUSED_STREAM && !st->answered) {
        st->retry = true; // not processed (RFC 9113 8.7)
        st->ec = boost::asio::error::connection_aborted;
        st->detail = "the server refused the stream (REFUSED_STREAM)";
    } else {
        st->ec = error::bad_response;
        st->detail =
            std::string("the server reset the stream (RST_STREAM ") + nghttp2_http2_strerror(code) + ")";
    }
    s.finish(*st, false);
    return 0;
}

} // namespace

const fetch_config& http2_transport::session::owner_config() const noexcept {
    return owner.http1_.config();
}

bool http2_transport::session::start(std::uint32_t max_header_bytes) {
    nghttp2_session_callbacks* callbacks = nullptr;
    if (nghttp2_session_callbacks_new(&callbacks) != 0)
        return false;
    nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks, on_begin_headers);
    nghttp2_session_callbacks_set_on_header_callback(callbacks, on_header);
    nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, on_frame_recv);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, on_data_chunk);
    nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, on_stream_close);
    nghttp2_session_callbacks_set_error_callback2(callbacks, on_error);
    nghttp2_option* option = nullptr;
    if (nghttp2_option_new(&option) != 0) {
        nghttp2_session_callbacks_del(callbacks);
        return false;
    }
    // Floods of SETTINGS (entries per frame) and of frames that ask for an answer (PING, SETTINGS) end the
    // connection: nghttp2 counts the answers it has not sent yet.
    nghttp2_option_set_max_settings(option, 32);
    nghttp2_option_set_max_outbound_ack(option, 1000);
    // No closed streams kept for the priority tree (RFC 9113 deprecated it): a storm of streams reset by the
    // server leaves nothing behind in nghttp2.
    nghttp2_option_set_no_closed_streams(option, 1);
    const int rc = nghttp2_session_client_new2(&ng, callbacks, this, option);
    nghttp2_option_del(option);
    nghttp2_session_callbacks_del(callbacks);
    if (rc != 0)
        return false;
    const std::array<nghttp2_settings_entry, 3> settings{{
        {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
        {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, static_cast<std::uint32_t>(stream_window)},
        {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, max_header_bytes},
    }};
    if (nghttp2_submit_settings(ng, NGHTTP2_FLAG_NONE, settings.data(), settings.size()) != 0)
        return false;
    return nghttp2_session_set_local_window_size(ng, NGHTTP2_FLAG_NONE, 0, connection_window) == 0;
}

bool http2_transport::session::flush() {
    if (dead)
        return false;
    for (;;) {
        if (output.empty()) {
            const std::uint8_t* data = nullptr;
            ssize_t n = 0;
            while (output.size() < write_batch && (n = nghttp2_session_mem_send(ng, &data)) > 0)
                output.append(reinterpret_cast<const char*>(data), static_cast<std::size_t>(n));
            if (n < 0) {
                fail(error::bad_response, std::string("HTTP/2: ") + nghttp2_strerror(static_cast<int>(n)));
                return false;
            }
            if (output.empty())
                return true;
        }
        error_code ec;
        bool wants_read = false;
        const std::size_t n = conn->write_now(asio::buffer(output), ec, wants_read);
        if (ec) {
            fail(ec, {});
            return false;
        }
        if (n == 0)
            return true; // the socket takes nothing now: the reader waits until it does
        output.erase(0, n);
    }
}

void http2_transport::session::fail(error_code ec, std::string detail) {
    if (dead)
        return;
    dead = true;
    std::vector<stream*> open;
    for (auto& [id, st] : streams)
        if (!st->finished)
            open.push_back(st);
    for (stream* st : open) {
        st->retry = !st->answered;
        st->ec = st->answered && (ec == asio::error::eof || ec == asio::error::connection_reset)
                     ? error_code(boost::beast::http::error::partial_message)
                     : ec;
        st->detail = detail;
        finish(*st, false);
    }
    error_code ignored;
    conn->socket.close(ignored);
}

void http2_transport::session::pause(clock_type::duration wait) {
    const auto now = clock_type::now();
    const auto until = now + wait;
    if (wait <= clock_type::duration::zero() || until <= paused_until)
        return;
    const auto added = until - std::max(paused_until, now);
    paused_until = until;
    for (auto& [id, st] : streams) {
        if (!st->finished) {
            st->deadline += added;
            st->wake.expires_at(st->deadline); // wakes a waiting fetch, which waits on to its new deadline
        }
    }
}

void http2_transport::session::finish(stream& st, bool reset) {
    st.finished = true;
    if (reset && !dead && nghttp2_session_find_stream(ng, st.id))
        nghttp2_submit_rst_stream(ng, NGHTTP2_FLAG_NONE, st.id, NGHTTP2_CANCEL);
    st.wake.cancel();
}

void http2_transport::session::feed(stream& st, std::string_view bytes, bool end_of_stream) {
    auto& buffer = st.shadow.buffer;
    if (!bytes.empty()) {
        const auto room = buffer.prepare(bytes.size());
        std::memcpy(room.data(), bytes.data(), bytes.size());
        buffer.commit(bytes.size());
    }
    st.r.at_eof = end_of_stream;
    if (owner.http1_.reader().parse(st.shadow, st.r, st.url, st.options, st.out)) {
        finish(st, false);
        if (!end_of_stream)
            resets.push_back(st.id);
    } else if (end_of_stream)
        finish(st, false); // parse() always concludes at the end of the stream; defensive
}

// ---- the transport ----

http2_transport::http2_transport(asio::any_io_executor executor, fetch_config config,
                                 std::size_t max_idle_per_origin)
    : executor_(executor)
    , http1_(std::move(executor), std::move(config), max_idle_per_origin) {}

http2_transport::~http2_transport() = default;

void http2_transport::close_idle() {
    for (auto& [key, o] : origins_) {
        if (o.current && o.current->streams.empty()) {
            auto& s = *o.current;
            if (!s.dead) {
                nghttp2_session_terminate_session(s.ng, NGHTTP2_NO_ERROR); // GOAWAY
                s.flush();
            }
            o.current.reset();
        }
    }
    http1_.close_idle();
}

std::vector<std::string> http2_transport::finish() {
    close_idle();
    return http1_.finish();
}

/// The reader's turn: waits on the socket (for writing while output is pending) or on its own timer (its
/// deadline, or a nudge from a fetch that added output), and feeds what arrives to nghttp2, until its own
/// stream is over.
asio::awaitable<void> http2_transport::read_turn(session& s, stream& st) {
    using namespace asio::experimental::awaitable_operators;
    auto& c = *s.conn;
    rate_limiter* const limiter = http1_.limiter();
    while (!st.finished && !s.dead) {
        if (!s.flush())
            break;
        if (limiter && clock_type::now() < s.paused_until) {
            // Over the rate: no reads until the debt is paid (a nudge or our stream's end wakes us sooner).
            asio::steady_timer pause{executor_, s.paused_until};
            co_await (pause.async_wait(asio::as_tuple(asio::use_awaitable)) ||
                      st.wake.async_wait(asio::as_tuple(asio::use_awaitable)));
            continue;
        }
        if (!c.has_pending()) {
            if (clock_type::now() >= st.deadline)
                co_return; // the caller ends the stream
            const bool writing = !s.output.empty();
            // An idle wait holds no TLS buffers (as HTTP/1.1's); a session with other streams in flight
            // keeps them (one connection's, whatever the number of streams), rather than free and allocate
            // them again at every wait.
            if (!writing && s.streams.size() <= 1)
                c.release_tls_buffers();
            const auto ready = co_await (c.socket.async_wait(writing ? asio::ip::tcp::socket::wait_write
                                                                     : asio::ip::tcp::socket::wait_read,
                                                             asio::as_tuple(asio::use_awaitable)) ||
                                         st.wake.async_wait(asio::as_tuple(asio::use_awaitable)));
            if (ready.index() == 1)
                continue; // the deadline (checked above), our stream finished, or a nudge
            if (const auto [ec] = std::get<0>(ready); ec) {
                s.fail(ec, {});
                break;
            }
            if (writing)
                continue;
        }
        for (int reads = 0; reads <= max_reads_on && !s.dead; ++reads) {
            error_code ec;
            const std::size_t n = c.read_now(asio::buffer(s.input.get(), read_chunk), ec);
            if (n > 0 && limiter)
                s.pause(limiter->charge(n, clock_type::now()));
            if (n > 0) {
                const auto used =
                    nghttp2_session_mem_recv(s.ng, reinterpret_cast<const std::uint8_t*>(s.input.get()), n);
                if (used < 0) {
                    s.fail(error::bad_response, std::string("HTTP/2 connection error: ") +
                                                    nghttp2_strerror(static_cast<int>(used)));
                    break;
                }
                for (const std::int32_t id : s.resets)
                    if (nghttp2_session_find_stream(s.ng, id) &&
                        nghttp2_session_get_stream_remote_close(s.ng, id) == 0)
                        nghttp2_submit_rst_stream(s.ng, NGHTTP2_FLAG_NONE, id, NGHTTP2_CANCEL);
                s.resets.clear();
                // What the frames ask for (PING and SETTINGS acknowledgements, WINDOW_UPDATE) goes out a read
                // at a time: a peer that reads its answers never sees more than a read's worth pile up.
                if (!s.flush())
                    break;
            }
            if (ec) {
                s.fail(ec, {});
                break;
            }
            if (n < read_chunk || clock_type::now() < s.paused_until)
                break;
        }
        // A connection error (a frame the peer must not send: a push we refused, a flood) makes nghttp2 send
        // GOAWAY and stop reading: once that is written, the streams still open end here.
        if (!s.dead && s.flush() && nghttp2_session_want_read(s.ng) == 0 &&
            nghttp2_session_want_write(s.ng) == 0)
            s.fail(error::bad_response,
                   "HTTP/2 connection error" + (s.last_error.empty() ? std::string() : ": " + s.last_error));
    }
}

/// One stream: the request (the HTTP/1.1 writer's fields, as HTTP/2 header fields), then the wait for its
/// answer, as the reader or woken by it.
asio::awaitable<void> http2_transport::fetch_on(std::shared_ptr<session> sp, std::string_view url,
                                                const fetch_options& options,
                                                std::unique_ptr<fetch_result>& out, bool& retry) {
    auto& s = *sp;
    const auto& config = http1_.config();
    stream st(executor_, s.shadows, url, options, out, clock_type::now() + config.request_timeout);
    st.shadow.remote_ip = s.conn->remote_ip;
    st.shadow.request_started = std::chrono::system_clock::now();

    // The request as HTTP/1.1 would send it (what a capture keeps), then its fields for HTTP/2.
    std::pair<std::size_t, std::size_t> proxy_fields;
    const std::string origin = pool_key(url);
    std::string request =
        http1_.writer().request(url, origin, nullptr, proxy_fields,
                                {options.if_none_match, options.if_modified_since, options.extra_fields});
    {
        const auto target = target_of(url);
        std::string_view text = request;
        const auto line_end = text.find("\r\n");
        const std::string_view line = text.substr(0, line_end);
        const auto first_space = line.find(' ');
        const auto last_space = line.rfind(' ');
        const std::string_view method = line.substr(0, first_space);
        const std::string_view path = line.substr(first_space + 1, last_space - first_space - 1);
        std::string_view authority;
        text.remove_prefix(line_end + 2);
        // The fields, names lowered (RFC 9113 8.2.1), in one copy of the head: one allocation, whatever the
        // number of fields, and nghttp2 copies them again when the request is submitted.
        std::string lowered(text);
        std::vector<std::pair<std::string_view, std::string_view>> others;
        others.reserve(16);
        std::size_t at = 0;
        while (at < lowered.size() && lowered.compare(at, 2, "\r\n") != 0) {
            auto end = lowered.find("\r\n", at);
            if (end == std::string::npos)
                end = lowered.size();
            const std::string_view field(lowered.data() + at, end - at);
            at = end + 2;
            const auto colon = field.find(':');
            if (colon == std::string_view::npos)
                continue;
            char* const name_start = lowered.data() + (field.data() - lowered.data());
            for (std::size_t i = 0; i < colon; ++i)
                if (name_start[i] >= 'A' && name_start[i] <= 'Z')
                    name_start[i] = char(name_start[i] - 'A' + 'a');
            const std::string_view name = field.substr(0, colon);
            std::string_view value = field.substr(colon + 1);
            while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
                value.remove_prefix(1);
            if (name == "host")
                authority = value;
            if (!dropped_in_h2(name))
                others.emplace_back(name, value);
        }
        const std::string_view scheme = target && target->https ? "https" : "http";
        std::vector<nghttp2_nv> nv;
        nv.reserve(4 + others.size());
        const auto add = [&nv](std::string_view n, std::string_view v) {
            nv.push_back({const_cast<std::uint8_t*>(reinterpret_cast<const std::uint8_t*>(n.data())),
                          const_cast<std::uint8_t*>(reinterpret_cast<const std::uint8_t*>(v.data())),
                          n.size(), v.size(), NGHTTP2_NV_FLAG_NONE});
        };
        add(":method", method);
        add(":scheme", scheme);
        add(":authority", authority);
        add(":path", path);
        for (const auto& [name, value] : others)
            add(name, value);
        if (s.dead || s.going_away) {
            retry = true;
            co_return;
        }
        st.id = nghttp2_submit_request(s.ng, nullptr, nv.data(), nv.size(), nullptr, nullptr);
    }
    if (st.id < 0) {
        // Stream identifiers exhausted: a new connection.
        s.going_away = true;
        retry = st.id == NGHTTP2_ERR_STREAM_ID_NOT_AVAILABLE;
        if (!retry)
            out = failed_fetch(error::internal_error, std::string("HTTP/2: ") + nghttp2_strerror(st.id));
        co_return;
    }
    ++http1_.counters().h2_streams;
    if (options.capture)
        result_of(out, st.shadow).raw_request = std::move(request);
    else
        std::string().swap(request);
    s.streams.emplace(st.id, &st);
    s.flush();
    // The reader waits to read; if the socket did not take all of our request, nudge it to wait for writing
    // (a nudge costs the reader a wake and its wait set up again: not for every request).
    if (s.reader && !s.output.empty())
        s.reader->wake.cancel();

    while (!st.finished) {
        if (!s.reader)
            s.reader = &st;
        if (s.reader == &st) {
            co_await read_turn(s, st);
            break;
        }
        co_await st.wake.async_wait(tuple_deferred);
        if (!st.finished && s.reader != &st && clock_type::now() >= st.deadline)
            break;
    }
    if (!st.finished) {
        // The deadline: this stream alone ends; a connection where a stream waited this long takes no more.
        st.ec = error::request_timeout;
        s.finish(st, true);
        s.going_away = true;
        s.flush();
    }
    s.streams.erase(st.id);
    if (s.reader == &st) {
        s.reader = nullptr;
        for (auto& [id, other] : s.streams) {
            if (!other->finished) {
                s.reader = other;
                other->wake.cancel();
                break;
            }
        }
    }
    if (s.streams.empty())
        s.idle_since = clock_type::now();

    if (st.retry) {
        retry = true;
        // What the record says when the retries run out (a capture may have made the result already).
        auto& result = result_of(out, st.shadow);
        result.error = st.ec ? st.ec : error_code(asio::error::connection_aborted);
        result.error_detail = std::move(st.detail);
        co_return;
    }
    auto& result = result_of(out, st.shadow);
    if (st.ec && !st.r.ec)
        st.r.ec = st.ec;
    bool retry_fresh = false;
    bool reusable = false;
    http1_.reader().conclude(st.r, options, result, retry_fresh, reusable);
    if (result.error_detail.empty())
        result.error_detail = std::move(st.detail);
    if (st.answered)
        result.protocol = "h2";
}

// g++ 12 sees this coroutine's frame allocated by Asio's aligned_new (aligned_alloc, for a frame this size)
// and released by Asio's matching operator delete, and warns, wrongly, that they do not match (as in
// src/engine/worker_pool.cpp).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
asio::awaitable<void> http2_transport::fetch_into(std::string_view url, fetch_options options,
                                                  std::unique_ptr<fetch_result>& out) {
    out.reset();
    const auto& config = http1_.config();
    const auto target = target_of(url);
    // http URLs are HTTP/1.1 unless h2c by prior knowledge was asked for, and never h2c through a proxy.
    if (!target ||
        (!target->https && (config.http2 != http2_mode::only || http1_.proxies().route_for(*target)))) {
        co_await http1_.fetch_into(url, options, out);
        co_return;
    }
    const std::string key = pool_key(url);
    auto& o = origins_[key]; // node-based: stays valid while others are added
    int retries = 0;
    for (;;) {
        if (o.http11) {
            co_await http1_.fetch_into(url, options, out);
            co_return;
        }
        auto s = o.current;
        if (s && (s->dead || s->going_away ||
                  (s->streams.empty() && clock_type::now() > s->idle_since + config.idle_timeout))) {
            o.current.reset();
            s.reset();
        }
        if (!s) {
            if (o.connecting) {
                // Another fetch is connecting to this origin: its connection (or its ALPN answer) serves us.
                asio::steady_timer timer{executor_, clock_type::now() + config.connect_timeout};
                const auto place = o.waiting.insert(o.waiting.end(), &timer);
                co_await timer.async_wait(tuple_deferred);
                o.waiting.erase(place);
                if (o.connecting && clock_type::now() >= timer.expiry()) {
                    out = failed_fetch(error::connect_timeout);
                    co_return;
                }
                continue;
            }
            o.connecting = true;
            const std::string_view alpn = !target->https
                                              ? std::string_view{}
                                              : (config.http2 == http2_mode::only ? alpn_h2 : alpn_h2_http11);
            auto c = co_await http1_.open_connection(url, out, alpn);
            o.connecting = false;
            for (auto* waiter : o.waiting)
                waiter->cancel();
            if (!c)
                co_return; // `out` says why
            if (target->https && !c->h2) {
                if (config.http2 == http2_mode::only) {
                    retire(std::move(c));
                    out = failed_fetch(error::tls_handshake_failed,
                                       "the server did not choose h2 in ALPN (fetch.http2: only)");
                    co_return;
                }
                o.http11 = true;
                co_await http1_.fetch_on(std::move(c), url, options, out);
                co_return;
            }
            s = std::make_shared<session>(*this, std::move(c));
            if (!s->start(config.max_header_bytes)) {
                out = failed_fetch(error::internal_error, "HTTP/2: nghttp2 could not start a session");
                co_return;
            }
            ++http1_.counters().h2_connections;
            o.current = s;
        }
        bool retry = false;
        co_await fetch_on(std::move(s), url, options, out, retry);
        if (!retry || retries == max_h2_retries)
            co_return;
        ++retries;
        ++http1_.counters().h2_retries;
        out.reset();
    }
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

} // namespace asiocrawl::detail
