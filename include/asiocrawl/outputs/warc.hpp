// WARC 1.1 archives of what crossed the wire: a warcinfo record at the start of every file, then for every
// exchange a response (or revisit) record and a request record pointing at it with WARC-Concurrent-To.
#pragma once

#include <asiocrawl/config.hpp>
#include <asiocrawl/sink.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace asiocrawl::outputs {

// ---- sans-io pieces, each tested on its own ----

/// "sha1:" and the SHA-1 of `data` in RFC 4648 base32 (32 characters, no padding): WARC's digest form.
std::string warc_sha1_digest(std::string_view data);

/// RFC 4648 base32, upper case, with '=' padding only when `bytes` is not a multiple of 5.
std::string base32_encode(std::string_view bytes);

/// "2024-05-01T12:34:56.123456Z": UTC with microseconds (WARC 1.1 allows sub-second precision).
std::string warc_date(std::chrono::system_clock::time_point when);

/// "<urn:uuid:...>" with a random (version 4) UUID.
std::string warc_record_id();

/// The entity body of an HTTP response as WARC 1.1 defines the payload: the bytes after the head with the
/// transfer coding (chunked) removed and any content coding (gzip) kept. A truncated chunked body gives what
/// was complete of it.
std::string http_payload(std::string_view response, std::size_t head_bytes);

/// One WARC record: the version line, `fields` in order, Content-Length, a blank line, `block`, and the two
/// CRLFs that end a record.
std::string warc_record_bytes(const std::vector<std::pair<std::string, std::string>>& fields,
                              std::string_view block);

/// `data` as one complete gzip member (several members concatenated are one valid gzip file).
std::string gzip_member(std::string_view data);

/// The name of file number `serial` for a warc_config::path. A "{serial}" in the path becomes the serial on
/// 5 digits. Without one, file 0 is the path itself and later files get "-00001" inserted before ".warc"
/// (or before the extension when there is no ".warc").
std::string warc_file_name(const std::string& pattern, std::size_t serial);

// ---- the writer ----

/// Writes exchanges to WARC files from a thread of its own: write() copies the exchange and returns at once;
/// digests, gzip and file writes happen on the thread. Each record (request and response together) goes to
/// the file in one write(2) call, so a crash leaves whole records and at worst a missing last pair.
/// write() and busy() are meant for one thread (the crawler's executor); close() for the owner.
class warc_writer {
public:
    /// Opens the first file (truncating it) and writes its warcinfo record before returning.
    /// Throws std::runtime_error when the file cannot be created. `queue_limit_bytes`: copied exchanges
    /// waiting for the thread beyond which busy() is true.
    explicit warc_writer(warc_config config, std::size_t queue_limit_bytes = 64u << 20);
    /// Closes (see close()).
    ~warc_writer();
    warc_writer(const warc_writer&) = delete;
    warc_writer& operator=(const warc_writer&) = delete;

    /// Archives one exchange. An exchange without response bytes (nothing arrived) is not archived.
    void write(const http_exchange& exchange);

    /// True while the thread is behind by more than the queue limit: pass to crawler::set_backpressure.
    bool busy() const noexcept;

    /// Writes what is queued, closes the file and stops the thread. Idempotent. Returns "" or the first
    /// error.
    std::string close();

    /// Files written so far, in order (complete after close()).
    std::vector<std::string> files() const;

private:
    struct state;
    std::shared_ptr<state> state_;
};

} // namespace asiocrawl::outputs
