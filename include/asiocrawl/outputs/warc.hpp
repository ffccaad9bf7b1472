// WARC 1.1 archives of what crossed the wire: a warcinfo record at the start of every file, then for every
// exchange a response (or revisit) record and a request record pointing at it with WARC-Concurrent-To.
#pragma once

#include <asiocrawl/outputs/files.hpp>
#include <asiocrawl/outputs/output_config.hpp>
#include <asiocrawl/sink.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace asiocrawl::outputs {

// ---- sans-io pieces, each tested on its own ----

/// "sha1:" and the SHA-1 of `data` in RFC 4648 base32 (32 characters, no padding): WARC's digest form
/// (src/util/digest.hpp's sha1_base32, which the state's fetch history and CDXJ use too).
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

/// The files of `pattern`'s series that exist, in serial order (names as warc_file_name makes them, in the
/// pattern's directory).
std::vector<std::string> existing_warc_files(const std::string& pattern);

/// Checks a WARC file record by record — for a ".gz" file gzip member by gzip member, each decompressed in
/// full so zlib checks its CRC — and cuts the tail after the last whole record: what a kill in the middle of
/// a write leaves (a member or record that runs past the end of the file, or bytes that are not a record).
/// Reads the whole file once; keeps none of it in memory. Throws std::system_error when the file cannot be
/// read or cut.
tail_repair repair_warc_tail(const std::string& path);

// ---- the writer ----

/// Writes exchanges to WARC files from a thread of its own: write() copies the exchange and returns at once;
/// digests, gzip and file writes happen on the thread. Each record (request and response together) goes to
/// the file in one write(2) call, so a crash leaves whole records and at worst a missing last pair. A write
/// that fails (a full disk takes part of it) is cut off again, so the file ends at its last whole record,
/// and the writer writes nothing more.
/// write() and busy() are meant for one thread (the crawler's executor); close() for the owner.
class warc_writer {
public:
    /// Opens the first file and writes its warcinfo record before returning; the file's directories are
    /// created. `mode`: create_new refuses a series of which a file exists (output_exists); overwrite
    /// truncates each file of the series as it reaches it; append continues after the last existing file of
    /// the series, in a new one, after repairing that last file with repair_warc_tail (see notes()).
    /// Throws std::runtime_error when the file cannot be created. `queue_limit_bytes`: copied exchanges
    /// waiting for the thread beyond which busy() is true.
    explicit warc_writer(warc_config config, open_mode mode = open_mode::create_new,
                         std::size_t queue_limit_bytes = 64u << 20);
    /// Closes (see close()).
    ~warc_writer();
    warc_writer(const warc_writer&) = delete;
    warc_writer& operator=(const warc_writer&) = delete;

    /// Archives one exchange. An exchange without response bytes (nothing arrived) is not archived. One
    /// whose `revisit` names a capture of a previous crawl becomes a revisit record referring to it (the
    /// server-not-modified profile for a 304, identical-payload-digest for a repeated payload) when that
    /// loses nothing, and a response record otherwise (docs/OUTPUTS.md).
    void write(const http_exchange& exchange);

    /// True from when the thread fell behind by more than the queue limit until it is back under half of
    /// it: pass to crawler::set_backpressure.
    bool busy() const noexcept;
    /// Called on the writer thread whenever busy() turns false. Set before the first write().
    void set_on_drained(std::function<void()> on_drained);
    /// Called once, on the writer thread, with error() when the first write fails. Set before the first
    /// write().
    void set_on_error(std::function<void(const std::string& error)> on_error);
    /// `done` runs on the writer thread once every exchange written before is in the file (write(2)), and
    /// fsync'd when `sync`.
    void barrier(bool sync, std::function<void()> done);
    /// Where the response records of the exchanges that carried a record_id went (file, offset, length)
    /// since the last call. Call from a barrier's `done` (it runs on the writer thread, after those writes):
    /// what the crawl's fetch history keeps (crawler::set_output_flush).
    std::vector<archived_capture> take_archived();

    /// What the constructor repaired or removed when it continued a series ("" lines for a log).
    std::vector<std::string> notes() const;
    /// The first write failure so far ("" when none).
    std::string error() const;

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
