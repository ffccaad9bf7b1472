#include <asiocrawl/outputs/warc.hpp>

#include <asiocrawl/error.hpp>
#include <asiocrawl/version.hpp>

#include "ascii.hpp"
#include "outputs/background_worker.hpp"

#include <openssl/evp.h>
#include <openssl/rand.h>
#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <mutex>
#include <stdexcept>
#include <unistd.h>
#include <unordered_map>

namespace asiocrawl::outputs {

namespace {

constexpr std::string_view crlf = "\r\n";

std::string_view trim(std::string_view text) {
    return asiocrawl::detail::ascii::trim(text, " \t\r");
}

using asiocrawl::detail::ascii::iequals;

using asiocrawl::detail::ascii::hex_value;

// RFC 9112 7.1: chunked is the final transfer coding when present; a head may carry several field lines.
bool is_chunked(std::string_view head) {
    bool chunked = false;
    std::size_t pos = head.find(crlf);
    while (pos != std::string_view::npos && pos + 2 < head.size()) {
        const std::size_t start = pos + 2;
        const std::size_t end = head.find(crlf, start);
        const std::string_view line = head.substr(start, end == std::string_view::npos ? end : end - start);
        const std::size_t colon = line.find(':');
        if (colon != std::string_view::npos && iequals(trim(line.substr(0, colon)), "transfer-encoding")) {
            std::string_view codings = trim(line.substr(colon + 1));
            const std::size_t comma = codings.rfind(',');
            if (comma != std::string_view::npos)
                codings = trim(codings.substr(comma + 1));
            chunked = iequals(codings, "chunked");
        }
        pos = end;
    }
    return chunked;
}

std::string dechunk(std::string_view body) {
    std::string out;
    for (;;) {
        const std::size_t line_end = body.find(crlf);
        if (line_end == std::string_view::npos)
            return out;
        std::string_view size_text = body.substr(0, line_end);
        if (const std::size_t semicolon = size_text.find(';'); semicolon != std::string_view::npos)
            size_text = size_text.substr(0, semicolon);
        size_text = trim(size_text);
        std::uint64_t size = 0;
        if (size_text.empty())
            return out;
        for (char c : size_text) {
            const int digit = hex_value(c);
            if (digit < 0 || size > (std::uint64_t{1} << 56))
                return out;
            size = size * 16 + static_cast<std::uint64_t>(digit);
        }
        if (size == 0)
            return out;
        body.remove_prefix(line_end + 2);
        const std::size_t available = static_cast<std::size_t>(std::min<std::uint64_t>(size, body.size()));
        out.append(body.substr(0, available));
        if (available < size || body.size() < available + 2)
            return out;
        body.remove_prefix(available + 2);
    }
}

// OpenSSL 3 deprecates SHA1_Init and friends: the EVP interface is the supported one.
class sha1 {
public:
    sha1()
        : context_(EVP_MD_CTX_new()) {
        if (context_ == nullptr || EVP_DigestInit_ex(context_, EVP_sha1(), nullptr) != 1)
            throw std::runtime_error("warc: SHA-1 unavailable");
    }
    ~sha1() { EVP_MD_CTX_free(context_); }
    sha1(const sha1&) = delete;
    sha1& operator=(const sha1&) = delete;

    void update(std::string_view data) { EVP_DigestUpdate(context_, data.data(), data.size()); }
    std::string finish() {
        unsigned char digest[EVP_MAX_MD_SIZE];
        unsigned int length = 0;
        EVP_DigestFinal_ex(context_, digest, &length);
        return "sha1:" + base32_encode({reinterpret_cast<const char*>(digest), length});
    }

private:
    EVP_MD_CTX* context_;
};

std::string truncation_reason(const http_exchange& exchange) {
    if (exchange.error == error::body_too_large)
        return "length";
    if (exchange.error == error::request_timeout)
        return "time";
    if (exchange.error)
        return "disconnect";
    return "unspecified";
}

void write_all(int fd, std::string_view data, const std::string& file) {
    while (!data.empty()) {
        const ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0) {
            if (errno == EINTR)
                continue;
            throw std::runtime_error("warc: cannot write " + file + ": " + std::strerror(errno));
        }
        data.remove_prefix(static_cast<std::size_t>(n));
    }
}

// What write() copies out of an exchange: its views die with the sink call.
struct exchange_copy {
    http_exchange::purpose kind;
    std::string url;
    std::string remote_ip;
    std::chrono::system_clock::time_point started;
    std::string request;
    std::string response;
    std::size_t response_head_bytes;
    bool complete;
    std::string truncated;
};

} // namespace

std::string base32_encode(std::string_view bytes) {
    static constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    std::string out;
    std::uint64_t buffer = 0;
    int bits = 0;
    for (unsigned char byte : bytes) {
        buffer = (buffer << 8) | byte;
        bits += 8;
        while (bits >= 5) {
            out += alphabet[(buffer >> (bits - 5)) & 31];
            bits -= 5;
        }
    }
    if (bits > 0)
        out += alphabet[(buffer << (5 - bits)) & 31];
    while (out.size() % 8 != 0)
        out += '=';
    return out;
}

std::string warc_sha1_digest(std::string_view data) {
    sha1 hash;
    hash.update(data);
    return hash.finish();
}

std::string warc_date(std::chrono::system_clock::time_point when) {
    using namespace std::chrono;
    const auto micros = duration_cast<microseconds>(when.time_since_epoch()).count();
    std::time_t seconds = static_cast<std::time_t>(micros / 1'000'000);
    long fraction = static_cast<long>(micros % 1'000'000);
    if (fraction < 0) {
        fraction += 1'000'000;
        --seconds;
    }
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    char buffer[64];
    const std::size_t length = std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%S", &utc);
    char sub[16];
    std::snprintf(sub, sizeof sub, ".%06ldZ", fraction);
    return std::string(buffer, length) + sub;
}

std::string warc_record_id() {
    unsigned char bytes[16];
    if (RAND_bytes(bytes, sizeof bytes) != 1)
        throw std::runtime_error("warc: no random bytes for a record id");
    bytes[6] = static_cast<unsigned char>((bytes[6] & 0x0f) | 0x40); // version 4
    bytes[8] = static_cast<unsigned char>((bytes[8] & 0x3f) | 0x80); // RFC 4122 variant
    char text[64];
    std::snprintf(text, sizeof text,
                  "<urn:uuid:%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x>", bytes[0],
                  bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9],
                  bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]);
    return text;
}

std::string http_payload(std::string_view response, std::size_t head_bytes) {
    head_bytes = std::min(head_bytes, response.size());
    const std::string_view head = response.substr(0, head_bytes);
    const std::string_view body = response.substr(head_bytes);
    return is_chunked(head) ? dechunk(body) : std::string(body);
}

std::string warc_record_bytes(const std::vector<std::pair<std::string, std::string>>& fields,
                              std::string_view block) {
    std::string out = "WARC/1.1\r\n";
    for (const auto& [name, value] : fields) {
        out.append(name).append(": ").append(value).append(crlf);
    }
    out.append("Content-Length: ").append(std::to_string(block.size())).append("\r\n\r\n");
    out.append(block);
    out.append("\r\n\r\n");
    return out;
}

std::string gzip_member(std::string_view data) {
    z_stream stream{};
    // 15 + 16: a gzip wrapper rather than zlib's.
    if (deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        throw std::runtime_error("warc: deflateInit2 failed");
    std::string out;
    out.resize(deflateBound(&stream, static_cast<uLong>(data.size())) + 32);
    stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    stream.avail_in = static_cast<uInt>(data.size());
    stream.next_out = reinterpret_cast<Bytef*>(out.data());
    stream.avail_out = static_cast<uInt>(out.size());
    const int result = deflate(&stream, Z_FINISH);
    const std::size_t written = stream.total_out;
    deflateEnd(&stream);
    if (result != Z_STREAM_END)
        throw std::runtime_error("warc: gzip compression failed");
    out.resize(written);
    return out;
}

std::string warc_file_name(const std::string& pattern, std::size_t serial) {
    char digits[32];
    std::snprintf(digits, sizeof digits, "%05zu", serial);
    if (const std::size_t at = pattern.find("{serial}"); at != std::string::npos) {
        std::string name = pattern;
        name.replace(at, 8, digits);
        return name;
    }
    if (serial == 0)
        return pattern;
    const std::size_t slash = pattern.rfind('/');
    const std::size_t base = slash == std::string::npos ? 0 : slash + 1;
    std::size_t insert_at = pattern.find(".warc", base);
    if (insert_at == std::string::npos || insert_at == base)
        insert_at = pattern.rfind('.');
    if (insert_at == std::string::npos || insert_at <= base)
        insert_at = pattern.size();
    return pattern.substr(0, insert_at) + "-" + digits + pattern.substr(insert_at);
}

struct warc_writer::state {
    struct previous_capture {
        std::string record_id;
        std::string url;
        std::string date;
    };

    explicit state(warc_config c, std::size_t queue_limit)
        : config(std::move(c))
        , gzip(config.path.size() >= 3 && config.path.compare(config.path.size() - 3, 3, ".gz") == 0)
        , worker(queue_limit) {}

    ~state() {
        if (fd >= 0)
            ::close(fd);
    }

    // Runs on the worker thread (and once in the constructor, before the thread has work).
    void open_next() {
        if (fd >= 0)
            ::close(fd);
        const std::string name = warc_file_name(config.path, serial++);
        fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
            throw std::runtime_error("warc: cannot create " + name + ": " + std::strerror(errno));
        {
            std::lock_guard lock{files_mutex};
            files.push_back(name);
        }
        current_name = name;
        const std::string block = std::string("software: asiocrawl/") + std::string(version()) +
                                  "\r\nformat: WARC File Format 1.1\r\nconformsTo: "
                                  "http://iipc.github.io/warc-specifications/specifications/warc-format/"
                                  "warc-1.1/\r\n";
        const std::size_t slash = name.rfind('/');
        const std::string info =
            encode(warc_record_bytes({{"WARC-Type", "warcinfo"},
                                      {"WARC-Record-ID", warc_record_id()},
                                      {"WARC-Date", warc_date(std::chrono::system_clock::now())},
                                      {"WARC-Filename", name.substr(slash + 1)},
                                      {"Content-Type", "application/warc-fields"}},
                                     block));
        write_all(fd, info, name);
        file_bytes = info.size();
        header_only_bytes = info.size();
    }

    std::string encode(std::string record) const { return gzip ? gzip_member(record) : record; }

    void archive(const exchange_copy& x) {
        const std::string target = x.url;
        const std::string date = warc_date(x.started);
        const std::string response_id = warc_record_id();
        const std::string_view head = std::string_view(x.response).substr(0, x.response_head_bytes);
        const std::string payload_digest = warc_sha1_digest(http_payload(x.response, x.response_head_bytes));
        const bool has_payload = x.response.size() > x.response_head_bytes;

        std::vector<std::pair<std::string, std::string>> fields;
        std::string pair;
        const previous_capture* earlier = nullptr;
        if (config.revisits && x.complete && has_payload) {
            if (auto found = captures.find(payload_digest); found != captures.end())
                earlier = &found->second;
        }
        if (earlier != nullptr) {
            fields = {{"WARC-Type", "revisit"},
                      {"WARC-Record-ID", response_id},
                      {"WARC-Date", date},
                      {"WARC-Target-URI", target}};
            if (!x.remote_ip.empty())
                fields.emplace_back("WARC-IP-Address", x.remote_ip);
            fields.insert(fields.end(), {{"WARC-Profile",
                                          "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"},
                                         {"WARC-Refers-To", earlier->record_id},
                                         {"WARC-Refers-To-Target-URI", earlier->url},
                                         {"WARC-Refers-To-Date", earlier->date},
                                         {"Content-Type", "application/http;msgtype=response"},
                                         {"WARC-Payload-Digest", payload_digest},
                                         {"WARC-Block-Digest", warc_sha1_digest(head)}});
            pair = encode(warc_record_bytes(fields, head));
        } else {
            fields = {{"WARC-Type", "response"},
                      {"WARC-Record-ID", response_id},
                      {"WARC-Date", date},
                      {"WARC-Target-URI", target}};
            if (!x.remote_ip.empty())
                fields.emplace_back("WARC-IP-Address", x.remote_ip);
            fields.insert(fields.end(), {{"Content-Type", "application/http;msgtype=response"},
                                         {"WARC-Payload-Digest", payload_digest},
                                         {"WARC-Block-Digest", warc_sha1_digest(x.response)}});
            if (!x.truncated.empty())
                fields.emplace_back("WARC-Truncated", x.truncated);
            pair = encode(warc_record_bytes(fields, x.response));
            if (config.revisits && x.complete && has_payload)
                captures.emplace(payload_digest, previous_capture{response_id, target, date});
        }

        fields = {{"WARC-Type", "request"},
                  {"WARC-Record-ID", warc_record_id()},
                  {"WARC-Date", date},
                  {"WARC-Target-URI", target}};
        if (!x.remote_ip.empty())
            fields.emplace_back("WARC-IP-Address", x.remote_ip);
        fields.insert(fields.end(), {{"WARC-Concurrent-To", response_id},
                                     {"Content-Type", "application/http;msgtype=request"},
                                     {"WARC-Block-Digest", warc_sha1_digest(x.request)}});
        pair += encode(warc_record_bytes(fields, x.request));

        if (file_bytes > header_only_bytes && file_bytes + pair.size() > config.max_file_bytes)
            open_next();
        // One call for the pair: a crash cannot leave half a record behind a whole one.
        write_all(fd, pair, current_name);
        file_bytes += pair.size();
    }

    warc_config config;
    const bool gzip;
    int fd = -1;
    std::size_t serial = 0;
    std::string current_name;
    std::uint64_t file_bytes = 0;
    std::uint64_t header_only_bytes = 0;
    std::unordered_map<std::string, previous_capture> captures;
    mutable std::mutex files_mutex;
    std::vector<std::string> files;
    bool closed = false;
    std::string close_error;
    detail::background_worker worker;
};

warc_writer::warc_writer(warc_config config, std::size_t queue_limit_bytes)
    : state_(std::make_shared<state>(std::move(config), queue_limit_bytes)) {
    // The thread has nothing queued yet, so opening here does not race with it.
    state_->open_next();
}

warc_writer::~warc_writer() {
    close();
}

void warc_writer::write(const http_exchange& exchange) {
    if (exchange.response.empty() || state_->closed)
        return;
    auto copy = std::make_shared<exchange_copy>(exchange_copy{
        exchange.kind, std::string(exchange.url), std::string(exchange.remote_ip), exchange.started,
        std::string(exchange.request), std::string(exchange.response), exchange.response_head_bytes,
        exchange.complete, exchange.complete ? std::string() : truncation_reason(exchange)});
    const std::size_t bytes = copy->request.size() + copy->response.size() + copy->url.size();
    state_->worker.post(bytes, [s = state_.get(), copy] { s->archive(*copy); });
}

bool warc_writer::busy() const noexcept {
    return state_->worker.busy();
}

std::string warc_writer::close() {
    if (!state_->closed) {
        state_->closed = true;
        state_->worker.finish();
        if (state_->fd >= 0 && ::close(state_->fd) != 0)
            state_->close_error = "warc: cannot close " + state_->current_name + ": " + std::strerror(errno);
        state_->fd = -1;
        state_->close_error = state_->worker.error().empty() ? state_->close_error : state_->worker.error();
    }
    return state_->close_error;
}

std::vector<std::string> warc_writer::files() const {
    std::lock_guard lock{state_->files_mutex};
    return state_->files;
}

} // namespace asiocrawl::outputs
