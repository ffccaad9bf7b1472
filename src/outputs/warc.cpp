#include <asiocrawl/outputs/warc.hpp>

#include <asiocrawl/error.hpp>
#include <asiocrawl/version.hpp>

#include "outputs/background_writer.hpp"
#include "util/ascii.hpp"
#include "util/digest.hpp"
#include "util/time_text.hpp"

#include <asiocrawl/outputs/files.hpp>

#include <boost/uuid/random_generator.hpp>
#include <boost/uuid/uuid_io.hpp>

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <filesystem>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <sys/stat.h>
#include <system_error>
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

std::string truncation_reason(const http_exchange& exchange) {
    if (exchange.error == error::body_too_large)
        return "length";
    if (exchange.error == error::request_timeout)
        return "time";
    if (exchange.error)
        return "disconnect";
    return "unspecified";
}

/// Writes `data` at the end of `fd`, a file `file_bytes` long before the call. A failed write (a full disk
/// takes part of it) is cut off again: the file ends where it did, at its last whole record.
void write_all(int fd, std::string_view data, const std::string& file, std::uint64_t file_bytes) {
    while (!data.empty()) {
        const ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0) {
            if (errno == EINTR)
                continue;
            const int saved = errno;
            if (::ftruncate(fd, static_cast<off_t>(file_bytes)) == 0)
                ::lseek(fd, static_cast<off_t>(file_bytes), SEEK_SET);
            throw std::runtime_error("warc: cannot write " + file + ": " + std::strerror(saved));
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
    // http_exchange::revisit, owned.
    http_exchange::earlier_capture::profile revisit_why;
    std::string refers_to_target_uri;
    std::chrono::system_clock::time_point refers_to_date;
    std::string refers_to_record_id;
    std::string refers_to_payload_digest;
    std::string record_id;
    /// Carried by HTTP/2: written in HTTP/1.1 message form with `WARC-Protocol: h2` (docs/OUTPUTS.md).
    bool h2;
};

constexpr std::string_view identical_payload_digest_profile =
    "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest";
constexpr std::string_view server_not_modified_profile =
    "http://netpreserve.org/warc/1.1/revisit/server-not-modified";

} // namespace

std::string base32_encode(std::string_view bytes) {
    return asiocrawl::detail::base32_encode(bytes);
}

std::string warc_sha1_digest(std::string_view data) {
    return asiocrawl::detail::sha1_base32(data);
}

std::string warc_date(std::chrono::system_clock::time_point when) {
    return asiocrawl::detail::rfc3339_micros(when);
}

std::string warc_record_id() {
    // Boost.Uuid's random_generator draws each id from the operating system's entropy (getrandom) and marks
    // it version 4, variant RFC 4122. One generator a thread: the records are written on the output's worker
    // thread.
    thread_local boost::uuids::random_generator generate;
    return "<urn:uuid:" + boost::uuids::to_string(generate()) + ">";
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

namespace {

// The serial of `file_name` in the series of `pattern`'s file names, if it is one of them.
std::optional<std::size_t> warc_serial_of(const std::string& pattern, const std::string& file_name) {
    const std::string first = std::filesystem::path(warc_file_name(pattern, 0)).filename().string();
    if (file_name == first)
        return 0;
    // Every later name is the second one with other digits where "00001" stands.
    const std::string second = std::filesystem::path(warc_file_name(pattern, 1)).filename().string();
    const std::size_t digits_at = second.rfind("00001");
    if (digits_at == std::string::npos)
        return std::nullopt;
    const std::string prefix = second.substr(0, digits_at);
    const std::string suffix = second.substr(digits_at + 5);
    if (file_name.size() <= prefix.size() + suffix.size() || !file_name.starts_with(prefix) ||
        !file_name.ends_with(suffix))
        return std::nullopt;
    const std::string digits =
        file_name.substr(prefix.size(), file_name.size() - prefix.size() - suffix.size());
    if (digits.size() > 12 || digits.find_first_not_of("0123456789") != std::string::npos)
        return std::nullopt;
    const std::size_t serial = std::stoull(digits);
    if (std::filesystem::path(warc_file_name(pattern, serial)).filename().string() != file_name)
        return std::nullopt;
    return serial;
}

struct fd_guard {
    int fd;
    ~fd_guard() {
        if (fd >= 0)
            ::close(fd);
    }
};

[[noreturn]] void throw_errno(const std::string& what) {
    throw std::system_error(errno, std::generic_category(), what);
}

bool read_exactly(int fd, char* data, std::size_t size, std::uint64_t at) {
    while (size > 0) {
        const ssize_t n = ::pread(fd, data, size, static_cast<off_t>(at));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        data += n;
        size -= static_cast<std::size_t>(n);
        at += static_cast<std::uint64_t>(n);
    }
    return true;
}

// The length of the uncompressed WARC record starting at `at` (header, block and the two CRLFs), or nullopt
// when the file does not hold a whole, well-formed one there.
std::optional<std::uint64_t> plain_record_length(int fd, std::uint64_t at, std::uint64_t file_size) {
    // A record head is a few hundred bytes; 1 MiB without its end is not a head.
    constexpr std::size_t max_head = 1u << 20;
    std::string head;
    char buffer[8192];
    std::size_t head_end = std::string::npos;
    while (head_end == std::string::npos) {
        if (head.size() >= max_head || at + head.size() >= file_size)
            return std::nullopt;
        const std::size_t want =
            static_cast<std::size_t>(std::min<std::uint64_t>(sizeof buffer, file_size - at - head.size()));
        if (!read_exactly(fd, buffer, want, at + head.size()))
            return std::nullopt;
        const std::size_t searched_from = head.size() >= 3 ? head.size() - 3 : 0;
        head.append(buffer, want);
        head_end = head.find("\r\n\r\n", searched_from);
    }
    if (!head.starts_with("WARC/"))
        return std::nullopt;
    std::optional<std::uint64_t> content_length;
    std::size_t line = head.find("\r\n") + 2;
    while (line < head_end) {
        const std::size_t line_end = head.find("\r\n", line);
        const std::string_view field = std::string_view(head).substr(line, line_end - line);
        const std::size_t colon = field.find(':');
        if (colon != std::string_view::npos && iequals(trim(field.substr(0, colon)), "content-length")) {
            const std::string_view value = trim(field.substr(colon + 1));
            if (value.empty() || value.size() > 15 ||
                value.find_first_not_of("0123456789") != std::string_view::npos)
                return std::nullopt;
            content_length = std::stoull(std::string(value));
        }
        line = line_end + 2;
    }
    if (!content_length)
        return std::nullopt;
    const std::uint64_t length = head_end + 4 + *content_length + 4;
    if (at + length > file_size)
        return std::nullopt;
    char tail[4];
    if (!read_exactly(fd, tail, 4, at + length - 4) || std::string_view(tail, 4) != "\r\n\r\n")
        return std::nullopt;
    return length;
}

// The compressed length of the gzip member starting at `at` when it is whole (its CRC checked by zlib) and
// holds a WARC record, or nullopt.
std::optional<std::uint64_t> gzip_member_length(int fd, std::uint64_t at, std::uint64_t file_size) {
    z_stream stream{};
    if (inflateInit2(&stream, 15 + 16) != Z_OK)
        throw std::runtime_error("warc: inflateInit2 failed");
    struct stream_end {
        z_stream& s;
        ~stream_end() { inflateEnd(&s); }
    } ender{stream};
    std::vector<char> in(64 * 1024);
    std::vector<char> out(64 * 1024);
    std::string start; // the first bytes of the record, to check that it is one
    std::uint64_t offset = at;
    for (;;) {
        if (stream.avail_in == 0) {
            if (offset >= file_size)
                return std::nullopt; // the member goes on past the end of the file: torn
            const std::size_t want =
                static_cast<std::size_t>(std::min<std::uint64_t>(in.size(), file_size - offset));
            if (!read_exactly(fd, in.data(), want, offset))
                return std::nullopt;
            offset += want;
            stream.next_in = reinterpret_cast<Bytef*>(in.data());
            stream.avail_in = static_cast<uInt>(want);
        }
        stream.next_out = reinterpret_cast<Bytef*>(out.data());
        stream.avail_out = static_cast<uInt>(out.size());
        const int result = inflate(&stream, Z_NO_FLUSH);
        if (start.size() < 5)
            start.append(out.data(), std::min<std::size_t>(5 - start.size(), out.size() - stream.avail_out));
        if (result == Z_STREAM_END)
            return start.starts_with("WARC/") ? std::optional<std::uint64_t>(stream.total_in) : std::nullopt;
        if (result != Z_OK && result != Z_BUF_ERROR)
            return std::nullopt; // corrupt data or a bad checksum
    }
}

} // namespace

std::vector<std::string> existing_warc_files(const std::string& pattern) {
    std::filesystem::path directory = std::filesystem::path(pattern).parent_path();
    const std::string shown_directory = directory.empty() ? std::string() : directory.string() + "/";
    if (directory.empty())
        directory = ".";
    std::vector<std::pair<std::size_t, std::string>> found;
    std::error_code ec;
    for (std::filesystem::directory_iterator it{directory, ec}, end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (auto serial = warc_serial_of(pattern, name))
            found.emplace_back(*serial, shown_directory + name);
    }
    std::sort(found.begin(), found.end());
    std::vector<std::string> names;
    for (auto& [serial, name] : found)
        names.push_back(std::move(name));
    return names;
}

tail_repair repair_warc_tail(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0)
        throw_errno("warc: cannot open " + path);
    fd_guard guard{fd};
    struct stat info {};
    if (::fstat(fd, &info) != 0)
        throw_errno("warc: cannot stat " + path);
    const auto size = static_cast<std::uint64_t>(info.st_size);
    const bool gzip = path.size() >= 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
    tail_repair result;
    std::uint64_t at = 0;
    while (at < size) {
        const auto length = gzip ? gzip_member_length(fd, at, size) : plain_record_length(fd, at, size);
        if (!length || *length == 0)
            break;
        at += *length;
        ++result.whole_records;
    }
    result.kept_bytes = at;
    result.cut_bytes = size - at;
    if (result.cut_bytes > 0 && ::ftruncate(fd, static_cast<off_t>(at)) != 0)
        throw_errno("warc: cannot cut the torn tail of " + path);
    return result;
}

// Places of captures (archived_capture) kept for the crawl's next flush at most.
constexpr std::size_t max_untaken_places = 65'536;

struct warc_writer::state {
    struct previous_capture {
        std::string record_id;
        std::string url;
        std::string date;
    };

    state(warc_config c, open_mode m, std::size_t queue_limit)
        : config(std::move(c))
        , mode(m)
        , gzip(config.path.size() >= 3 && config.path.compare(config.path.size() - 3, 3, ".gz") == 0)
        , worker(queue_limit, [this](bool sync) { flush(sync); }) {}

    ~state() {
        worker.finish(); // its thread may still use the descriptor
        if (fd >= 0)
            ::close(fd);
    }

    // Where the series starts, before the thread has work: the rules of open_mode for a series of files.
    void prepare() {
        const auto existing = existing_warc_files(config.path);
        if (!existing.empty()) {
            switch (mode) {
            case open_mode::create_new:
                throw output_exists("output.warc.path: " + existing.front() +
                                    " exists already (--overwrite or output.overwrite: true replaces it)");
            case open_mode::overwrite:
                break; // each file is truncated when the series reaches it
            case open_mode::append: {
                // A resumed crawl never writes into an old file: it continues after the last one, which a
                // kill may have cut in the middle of a record.
                const std::string& last = existing.back();
                const tail_repair repair = repair_warc_tail(last);
                if (repair.whole_records == 0) {
                    std::filesystem::remove(last);
                    notes.push_back("warc: " + last + " held no whole record (" +
                                    std::to_string(repair.cut_bytes) + " bytes): removed");
                } else if (repair.cut_bytes > 0) {
                    notes.push_back("warc: " + last + " ended in a torn record: cut " +
                                    std::to_string(repair.cut_bytes) + " bytes, kept " +
                                    std::to_string(repair.whole_records) + " whole records");
                }
                serial = serial_after(existing.back());
                break;
            }
            }
        }
        create_parent_directories(warc_file_name(config.path, serial));
    }

    std::size_t serial_after(const std::string& name) const {
        const auto serial = warc_serial_of(config.path, std::filesystem::path(name).filename().string());
        return serial ? *serial + 1 : 1;
    }

    void flush(bool sync) {
        if (sync && fd >= 0 && ::fsync(fd) != 0)
            throw std::runtime_error("warc: cannot sync " + current_name + ": " + std::strerror(errno));
    }

    // Runs on the worker thread (and once in the constructor, before the thread has work).
    void open_next() {
        if (fd >= 0) {
            // A finished file is made durable once, so that a later sync barrier needs only the open one.
            const bool synced = ::fsync(fd) == 0;
            ::close(fd);
            fd = -1;
            if (!synced)
                throw std::runtime_error("warc: cannot sync " + current_name + ": " + std::strerror(errno));
        }
        const std::string name = warc_file_name(config.path, serial++);
        const int create = mode == open_mode::overwrite ? O_TRUNC : O_EXCL;
        fd = ::open(name.c_str(), O_WRONLY | O_CREAT | create | O_CLOEXEC, 0644);
        if (fd < 0 && errno == EEXIST)
            throw output_exists("output.warc.path: " + name +
                                " exists already (--overwrite or output.overwrite: true replaces it)");
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
        try {
            write_all(fd, info, name, 0);
        } catch (...) {
            // Not even its warcinfo record: the file holds nothing and goes.
            ::close(fd);
            fd = -1;
            ::unlink(name.c_str());
            std::lock_guard lock{files_mutex};
            files.pop_back();
            throw;
        }
        file_bytes = info.size();
        header_only_bytes = info.size();
    }

    std::string encode(std::string record) const { return gzip ? gzip_member(record) : record; }

    void archive(const exchange_copy& x) {
        if (failed)
            return; // the first failure is reported; records after a gap would hide it
        try {
            archive_pair(x);
        } catch (...) {
            failed = true;
            throw;
        }
    }

    /// What kind of record the response of `x` becomes. A revisit the crawl asked for (a re-crawl's
    /// http_exchange::revisit) is written only when it loses nothing: a server-not-modified revisit for a
    /// whole answer without a payload (a 304 carries none), an identical-payload-digest one (unless
    /// warc_config::revisits is off) for a whole answer whose payload digest is the earlier capture's.
    /// Otherwise the answer is archived in full.
    enum class record_kind { response, revisit_in_crawl, revisit_not_modified, revisit_identical };

    void archive_pair(const exchange_copy& x) {
        using why = http_exchange::earlier_capture::profile;
        const std::string target = x.url;
        const std::string date = warc_date(x.started);
        // The crawl's own id when its fetch history names this capture (a later revisit refers to it).
        const std::string response_id = x.record_id.empty() ? warc_record_id() : x.record_id;
        const std::string_view head = std::string_view(x.response).substr(0, x.response_head_bytes);
        const std::string payload_digest = warc_sha1_digest(http_payload(x.response, x.response_head_bytes));
        const bool has_payload = x.response.size() > x.response_head_bytes;

        record_kind kind = record_kind::response;
        const previous_capture* earlier = nullptr;
        if (x.revisit_why == why::server_not_modified && x.complete && !has_payload) {
            kind = record_kind::revisit_not_modified;
        } else if (config.revisits && x.revisit_why == why::identical_payload_digest && x.complete &&
                   has_payload &&
                   (x.refers_to_payload_digest.empty() || x.refers_to_payload_digest == payload_digest)) {
            kind = record_kind::revisit_identical;
        } else if (config.revisits && x.complete && has_payload) {
            if (auto found = captures.find(payload_digest); found != captures.end()) {
                earlier = &found->second;
                kind = record_kind::revisit_in_crawl;
            }
        }

        std::vector<std::pair<std::string, std::string>> fields{
            {"WARC-Type", kind == record_kind::response ? "response" : "revisit"},
            {"WARC-Record-ID", response_id},
            {"WARC-Date", date},
            {"WARC-Target-URI", target}};
        if (!x.remote_ip.empty())
            fields.emplace_back("WARC-IP-Address", x.remote_ip);
        if (x.h2)
            fields.emplace_back("WARC-Protocol", "h2");
        // WARC 1.1 section 6.7: the profile, then what the revisit refers to.
        const auto refers_to = [&](std::string_view profile, const std::string& record_id,
                                   const std::string& uri, std::string refers_date) {
            fields.emplace_back("WARC-Profile", std::string(profile));
            if (!record_id.empty())
                fields.emplace_back("WARC-Refers-To", record_id);
            fields.emplace_back("WARC-Refers-To-Target-URI", uri.empty() ? target : uri);
            if (!refers_date.empty())
                fields.emplace_back("WARC-Refers-To-Date", std::move(refers_date));
        };
        const auto earlier_date = [&]() {
            return x.refers_to_date == std::chrono::system_clock::time_point{} ? std::string()
                                                                               : warc_date(x.refers_to_date);
        };
        std::string pair;
        switch (kind) {
        case record_kind::revisit_in_crawl:
            refers_to(identical_payload_digest_profile, earlier->record_id, earlier->url, earlier->date);
            break;
        case record_kind::revisit_identical:
            refers_to(identical_payload_digest_profile, x.refers_to_record_id, x.refers_to_target_uri,
                      earlier_date());
            break;
        case record_kind::revisit_not_modified:
            refers_to(server_not_modified_profile, x.refers_to_record_id, x.refers_to_target_uri,
                      earlier_date());
            break;
        case record_kind::response:
            break;
        }
        fields.emplace_back("Content-Type", "application/http;msgtype=response");
        if (kind == record_kind::response) {
            fields.insert(fields.end(), {{"WARC-Payload-Digest", payload_digest},
                                         {"WARC-Block-Digest", warc_sha1_digest(x.response)}});
            if (!x.truncated.empty())
                fields.emplace_back("WARC-Truncated", x.truncated);
            pair = encode(warc_record_bytes(fields, x.response));
            if (config.revisits && x.complete && has_payload)
                captures.emplace(payload_digest, previous_capture{response_id, target, date});
        } else {
            // The block is the answer's head. A 304 has no payload of its own: its revisit carries no
            // WARC-Payload-Digest (the earlier capture's payload is the one meant, section 6.7.3).
            if (kind != record_kind::revisit_not_modified)
                fields.emplace_back("WARC-Payload-Digest", payload_digest);
            fields.emplace_back("WARC-Block-Digest", warc_sha1_digest(head));
            pair = encode(warc_record_bytes(fields, head));
        }
        const std::size_t response_record_bytes = pair.size();

        fields = {{"WARC-Type", "request"},
                  {"WARC-Record-ID", warc_record_id()},
                  {"WARC-Date", date},
                  {"WARC-Target-URI", target}};
        if (!x.remote_ip.empty())
            fields.emplace_back("WARC-IP-Address", x.remote_ip);
        if (x.h2)
            fields.emplace_back("WARC-Protocol", "h2");
        fields.insert(fields.end(), {{"WARC-Concurrent-To", response_id},
                                     {"Content-Type", "application/http;msgtype=request"},
                                     {"WARC-Block-Digest", warc_sha1_digest(x.request)}});
        pair += encode(warc_record_bytes(fields, x.request));

        if (file_bytes > header_only_bytes && file_bytes + pair.size() > config.max_file_bytes)
            open_next();
        // One call for the pair: a crash cannot leave half a record behind a whole one.
        write_all(fd, pair, current_name, file_bytes);
        // Bounded for a crawl that names captures without a state to take their places (continuous mode in
        // memory): the places past the bound are not kept anywhere.
        if (kind == record_kind::response && !x.record_id.empty() && archived.size() < max_untaken_places)
            archived.push_back({x.record_id, target, current_name.substr(current_name.rfind('/') + 1),
                                file_bytes, response_record_bytes, payload_digest});
        file_bytes += pair.size();
    }

    warc_config config;
    const open_mode mode;
    const bool gzip;
    std::vector<std::string> notes;
    int fd = -1;
    std::size_t serial = 0;
    std::string current_name;
    std::uint64_t file_bytes = 0;
    std::uint64_t header_only_bytes = 0;
    std::unordered_map<std::string, previous_capture> captures;
    // Where the captures the crawl named went since take_archived() (on the worker thread).
    std::vector<archived_capture> archived;
    mutable std::mutex files_mutex;
    std::vector<std::string> files;
    bool failed = false; // on the worker thread
    bool closed = false;
    std::string close_error;
    detail::background_writer worker; // last: its thread uses the members above
};

warc_writer::warc_writer(warc_config config, open_mode mode, std::size_t queue_limit_bytes)
    : state_(std::make_shared<state>(std::move(config), mode, queue_limit_bytes)) {
    // The thread has nothing queued yet, so preparing and opening here do not race with it.
    state_->prepare();
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
        exchange.complete, exchange.complete ? std::string() : truncation_reason(exchange),
        exchange.revisit.why, std::string(exchange.revisit.target_uri), exchange.revisit.date,
        std::string(exchange.revisit.record_id), std::string(exchange.revisit.payload_digest),
        std::string(exchange.record_id), exchange.protocol == "h2"});
    const std::size_t bytes = copy->request.size() + copy->response.size() + copy->url.size();
    state_->worker.post(bytes, [s = state_.get(), copy] { s->archive(*copy); });
}

bool warc_writer::busy() const noexcept {
    return state_->worker.busy();
}

void warc_writer::set_on_drained(std::function<void()> on_drained) {
    state_->worker.set_on_drained(std::move(on_drained));
}

void warc_writer::set_on_error(std::function<void(const std::string& error)> on_error) {
    state_->worker.set_on_error(std::move(on_error));
}

void warc_writer::barrier(bool sync, std::function<void()> done) {
    state_->worker.barrier(sync, std::move(done));
}

std::vector<archived_capture> warc_writer::take_archived() {
    return std::exchange(state_->archived, {});
}

std::vector<std::string> warc_writer::notes() const {
    return state_->notes;
}

std::string warc_writer::error() const {
    return state_->worker.error();
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
