// The state directory: a marker file naming the format, and a RocksDB database (docs/STATE.md says why
// RocksDB: it was measured against LMDB, SQLite and a plain journal on the crawl's own write pattern).
//
// Keys, all in the default column family (big-endian numbers, so that byte order is key order):
//   "M" name                 meta: "seed", "definition", "counters", "seed_position"
//   "H" host(4)              host name
//   "L" host(4)              the host's line: varint(URLs waiting) varint(next sequence)
//   "S" chunk(8)             the fingerprints (8 bytes each) of the URLs admitted between two commits
//   "W" host(4) seq(8)       a waiting URL: encode(work_item)
//   "R" url                  a kept record: encode(record)
//   "F" url                  the URL's fetch history: encode(fetch_history)
//   "O" fingerprint(8)       the outlink index of a re-crawl that follows links: outlink_fingerprint -> url
//   "D" due(8) url           continuous mode's due-time index: the URLs waiting for their revisit (empty
//   values)
// A resume reads H, L and S only: O(hosts) keys and 8 bytes per URL in large values, never every waiting URL.
#include "store/state_store.hpp"

#include "state/seed_lines.hpp"
#include "state/varint.hpp"

#include <asiocrawl/error.hpp>

#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <system_error>
#include <unordered_set>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

namespace asiocrawl::detail {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view marker_name = "ASIOCRAWL_STATE";
constexpr std::string_view marker_text = "asiocrawl crawl state, format 1\n";

std::string meta_key(std::string_view name) {
    return "M" + std::string(name);
}

std::string host_key(host_id host) {
    std::string k = "H";
    put_be(k, host, 4);
    return k;
}

std::string waiting_key(host_id host, std::uint64_t seq) {
    std::string k = "W";
    put_be(k, host, 4);
    put_be(k, seq, 8);
    return k;
}

std::string line_key(host_id host) {
    std::string k = "L";
    put_be(k, host, 4);
    return k;
}

std::string chunk_key(std::uint64_t chunk) {
    std::string k = "S";
    put_be(k, chunk, 8);
    return k;
}

rocksdb::Slice slice(std::string_view s) {
    return {s.data(), s.size()};
}

std::string_view view(const rocksdb::Slice& s) {
    return {s.data(), s.size()};
}

[[noreturn]] void fail(const fs::path& dir, asiocrawl::error code, const std::string& what) {
    throw crawl_error(code, "state directory " + dir.string() + ": " + what);
}

/// What a user can do about a write that failed: the state is whole up to the last commit either way.
[[noreturn]] void fail_write(const fs::path& dir, bool no_space, const std::string& detail) {
    if (no_space)
        throw crawl_error(asiocrawl::error::store_write_failed,
                          "state directory " + dir.string() + ": no space left on device (" + detail +
                              "); the state is kept as of its last commit: free some space, then the same "
                              "command resumes the crawl");
    throw crawl_error(asiocrawl::error::store_write_failed,
                      "state directory " + dir.string() + ": cannot write (" + detail +
                          "); the state is kept as of its last commit: the same command resumes the crawl "
                          "once the cause is mended");
}

/// The pid of the process holding a flock(2) on the file `info` describes, read from /proc/locks
/// ("1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF"; device numbers in hex, the inode in decimal).
std::optional<long> flock_holder(const struct stat& info) {
    std::ifstream locks{"/proc/locks"};
    std::string line;
    while (std::getline(locks, line)) {
        std::istringstream fields{line};
        std::string field, kind, pid, where;
        fields >> field >> kind;
        if (kind == "->") // a process waiting for the lock, not holding it
            continue;
        if (kind != "FLOCK")
            continue;
        fields >> field >> field >> pid >> where;
        unsigned major_number = 0, minor_number = 0;
        unsigned long long inode = 0;
        if (std::sscanf(where.c_str(), "%x:%x:%llu", &major_number, &minor_number, &inode) != 3)
            continue;
        if (major_number == major(info.st_dev) && minor_number == minor(info.st_dev) && inode == info.st_ino)
            return std::strtol(pid.c_str(), nullptr, 10);
    }
    return std::nullopt;
}

/// A directory is ours when it carries the marker; an empty or absent one becomes ours.
void claim(const fs::path& dir) {
    std::error_code ec;
    const auto marker = dir / marker_name;
    if (fs::exists(marker, ec)) {
        std::ifstream in(marker);
        std::stringstream text;
        text << in.rdbuf();
        if (text.str() != marker_text)
            fail(dir, asiocrawl::error::state_mismatch,
                 "written by another version of asiocrawl (" + marker.string() + " says \"" +
                     text.str().substr(0, 60) + "\"); use --state-reset to start over");
        return;
    }
    if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
        fail(dir, asiocrawl::error::state_unusable, "exists and is not a directory");
    const auto draft = dir / (std::string(marker_name) + ".tmp");
    fs::remove(draft, ec); // a claim cut short by a kill
    if (fs::exists(dir, ec) && !fs::is_empty(dir, ec))
        fail(dir, asiocrawl::error::state_unusable,
             "is not empty and holds no crawl state (no " + std::string(marker_name) +
                 " file): refusing to write into it");
    fs::create_directories(dir, ec);
    if (ec)
        fail(dir, asiocrawl::error::state_unusable, "cannot be created: " + ec.message());
    // Written aside and renamed: a kill never leaves a half-written marker.
    const int fd = ::open(draft.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int error = fd < 0 ? errno : 0;
    if (fd >= 0) {
        if (const ssize_t n = ::write(fd, marker_text.data(), marker_text.size()); n < 0)
            error = errno;
        else if (static_cast<std::size_t>(n) != marker_text.size())
            error = ENOSPC; // a short write: the disk is full
        if (::close(fd) != 0 && error == 0)
            error = errno;
    }
    if (error == 0 && ::rename(draft.c_str(), marker.c_str()) != 0)
        error = errno;
    if (error != 0) {
        fs::remove(draft, ec);
        const std::string detail = "cannot write " + marker.string() + ": " + std::strerror(error);
        if (error == ENOSPC || error == EDQUOT || error == EIO)
            fail_write(dir, error != EIO, detail);
        fail(dir, asiocrawl::error::state_unusable, detail);
    }
}

/// RocksDB's LOG file (warnings and errors only), written with plain write(2) and its failures ignored.
/// RocksDB's own logger writes that file through its file writer, which asserts (Debian's build keeps
/// assertions on) when asked to write again after a write failed: on a full disk its no-space recovery
/// thread logs a second message, and the process aborted.
class log_file : public rocksdb::Logger {
public:
    explicit log_file(const fs::path& path)
        : rocksdb::Logger(rocksdb::InfoLogLevel::WARN_LEVEL)
        , fd_(::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) {
        // Bounded over every run too: a file grown past the cap starts again.
        struct stat info {};
        const bool too_long =
            fd_ >= 0 && ::fstat(fd_, &info) == 0 && static_cast<std::uint64_t>(info.st_size) > max_bytes;
        if (too_long && ::ftruncate(fd_, 0) != 0)
            written_ = max_bytes; // it cannot start again: this run adds nothing to it
    }
    ~log_file() override {
        if (fd_ >= 0)
            ::close(fd_);
    }

    using rocksdb::Logger::Logv;
    void Logv(const char* format, va_list ap) override {
        char line[1024];
        const int n = std::vsnprintf(line, sizeof line - 1, format, ap);
        if (fd_ < 0 || n <= 0)
            return;
        std::size_t length = std::min<std::size_t>(static_cast<std::size_t>(n), sizeof line - 2);
        line[length++] = '\n';
        std::lock_guard lock{mutex_};
        if (written_ + length > max_bytes)
            return;
        if (const ssize_t w = ::write(fd_, line, length); w > 0)
            written_ += static_cast<std::size_t>(w);
    }

private:
    static constexpr std::size_t max_bytes = 4u << 20; // a run that warns this much says it early
    int fd_;
    std::mutex mutex_;
    std::size_t written_ = 0;
};

} // namespace

state_lock::state_lock(const fs::path& dir) {
    std::error_code ec;
    if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
        fail(dir, asiocrawl::error::state_unusable, "exists and is not a directory");
    fs::create_directories(dir, ec);
    if (ec)
        fail(dir, asiocrawl::error::state_unusable, "cannot be created: " + ec.message());
    fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd_ < 0)
        fail(dir, asiocrawl::error::state_unusable, std::string("cannot be opened: ") + std::strerror(errno));
    if (::flock(fd_, LOCK_EX | LOCK_NB) == 0)
        return;
    const int error = errno;
    struct stat info {};
    const auto holder = ::fstat(fd_, &info) == 0 ? flock_holder(info) : std::nullopt;
    ::close(fd_);
    fd_ = -1;
    if (error != EWOULDBLOCK)
        fail(dir, asiocrawl::error::state_unusable, std::string("cannot be locked: ") + std::strerror(error));
    // Nothing to reset or repair here: the other crawl is running. Two crawls in one directory would
    // corrupt each other, so this one does not start.
    fail(dir, asiocrawl::error::state_locked,
         "is in use by another crawl (" +
             (holder ? "pid " + std::to_string(*holder) : std::string("another process")) +
             "): one directory serves one running crawl at a time; wait for that one to end, or give "
             "this crawl another state directory");
}

state_lock::~state_lock() {
    if (fd_ >= 0)
        ::close(fd_); // releases the lock
}

struct state_store::impl {
    fs::path dir;
    std::unique_ptr<rocksdb::DB> db;
    std::uint64_t next_chunk = 0; // the key of the next fingerprint chunk
    std::shared_ptr<log_file> log;
    // Set by the first write that failed: after it RocksDB holds a background error, and its file writers
    // must not be asked for anything more than closing.
    bool write_failed = false;

    void check(const rocksdb::Status& status, std::string_view doing) const {
        if (!status.ok())
            fail(dir, asiocrawl::error::store_damaged, std::string(doing) + ": " + status.ToString());
    }

    void check_write(const rocksdb::Status& status) {
        if (status.ok())
            return;
        write_failed = true;
        fail_write(dir, status.IsNoSpace() || is_no_space(status), status.ToString());
    }

    /// A full disk that RocksDB reports without its NoSpace code (a quota, a full disk met by a background
    /// flush and returned as the DB's background error).
    static bool is_no_space(const rocksdb::Status& status) {
        const std::string text = status.ToString();
        return text.find(std::strerror(ENOSPC)) != std::string::npos ||
               text.find(std::strerror(EDQUOT)) != std::string::npos;
    }

    std::optional<std::string> get(std::string_view key) const {
        std::string value;
        const auto status = db->Get(rocksdb::ReadOptions(), slice(key), &value);
        if (status.IsNotFound())
            return std::nullopt;
        check(status, "read");
        return value;
    }

    /// Calls `each` for every key with `prefix` (from the key `from` on, when given), in order, until it
    /// returns false.
    template <class F>
    void scan(std::string_view prefix, F&& each, std::string_view from = {}) const {
        std::string upper(prefix);
        upper.back() = static_cast<char>(static_cast<unsigned char>(upper.back()) + 1);
        rocksdb::Slice upper_slice = slice(upper);
        rocksdb::ReadOptions options;
        options.iterate_upper_bound = &upper_slice;
        options.fill_cache = false;
        std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(options));
        for (it->Seek(slice(from.empty() ? prefix : from)); it->Valid(); it->Next()) {
            if (!each(view(it->key()), view(it->value())))
                break;
        }
        check(it->status(), "scan");
    }
};

state_store::state_store(std::unique_ptr<impl> impl)
    : impl_(std::move(impl)) {}

state_store::~state_store() {
    if (impl_ && impl_->db) {
        // A clean close leaves no write-ahead log to replay: the next open is quick. After a failed write
        // there is nothing to gain: the log holds every commit, and the next open replays it.
        if (!impl_->write_failed)
            impl_->db->Flush(rocksdb::FlushOptions());
        impl_->db->Close();
    }
}

std::unique_ptr<state_store> state_store::open(const fs::path& dir) {
    claim(dir);
    std::error_code ec;
    auto self = std::make_unique<impl>();
    self->dir = dir;
    rocksdb::Options options;
    options.create_if_missing = true;
    options.compression = rocksdb::kLZ4Compression;
    options.bottommost_compression = rocksdb::kZSTD;
    // Memory stays flat: two 32 MB write buffers and a 32 MB block cache, whatever the crawl's size.
    options.write_buffer_size = 32u << 20;
    options.max_write_buffer_number = 2;
    options.max_background_jobs = 2;
    // Tables open at once: a bound, so that a crawl's descriptors are its connections plus a known few
    // (fetch_settings.hpp: state_dir_descriptors), whatever the state's size.
    options.max_open_files = 64;
    options.info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;
    fs::create_directories(dir / "db", ec);
    self->log = std::make_shared<log_file>(dir / "db" / "LOG");
    options.info_log = self->log;
    // The write-ahead log holds every commit: closing never needs to write the memtables out.
    options.avoid_flush_during_shutdown = true;
    rocksdb::BlockBasedTableOptions table;
    table.block_cache = rocksdb::NewLRUCache(32u << 20);
    table.cache_index_and_filter_blocks = true;
    options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
    rocksdb::DB* db = nullptr;
    const auto status = rocksdb::DB::Open(options, (dir / "db").string(), &db);
    if (!status.ok() && (status.IsNoSpace() || impl::is_no_space(status)))
        fail_write(dir, true, "the database does not open: " + status.ToString());
    if (!status.ok() && status.IsIOError() && status.ToString().find("lock") != std::string::npos)
        fail(dir, asiocrawl::error::state_locked,
             "its database is in use by another process (" + status.ToString() + ")");
    if (!status.ok())
        fail(dir, asiocrawl::error::store_damaged,
             "the database does not open (" + status.ToString() +
                 "); it may be damaged: use --state-reset to start over");
    self->db.reset(db);
    return std::unique_ptr<state_store>(new state_store(std::move(self)));
}

void state_store::reset(const fs::path& dir) {
    std::error_code ec;
    if (!fs::exists(dir, ec))
        return;
    if (!fs::exists(dir / marker_name, ec) && !fs::is_empty(dir, ec))
        fail(dir, asiocrawl::error::state_unusable,
             "is not empty and holds no crawl state (no " + std::string(marker_name) +
                 " file): --state-reset will not delete it");
    for (const auto& entry : fs::directory_iterator(dir, ec))
        fs::remove_all(entry.path(), ec);
    if (ec)
        fail(dir, asiocrawl::error::state_unusable, "cannot be emptied: " + ec.message());
}

bool state_store::holds_state(const fs::path& dir) {
    std::error_code ec;
    return fs::exists(dir / marker_name, ec);
}

std::optional<state_meta> state_store::meta() const {
    auto seed = impl_->get(meta_key("seed"));
    if (!seed)
        return std::nullopt;
    state_meta meta;
    if (seed->size() != 8)
        fail(impl_->dir, asiocrawl::error::store_damaged, "the database is damaged (bad seed)");
    meta.seed = get_be(*seed, 8);
    meta.definition = impl_->get(meta_key("definition")).value_or("");
    return meta;
}

void state_store::write_meta(const state_meta& meta) {
    rocksdb::WriteBatch batch;
    std::string seed;
    put_be(seed, meta.seed, 8);
    batch.Put(slice(meta_key("seed")), slice(seed));
    batch.Put(slice(meta_key("definition")), slice(meta.definition));
    rocksdb::WriteOptions options;
    options.sync = true;
    impl_->check_write(impl_->db->Write(options, &batch));
}

restored_state state_store::load(fingerprint_set& seen) {
    restored_state out;
    out.counters = impl_->get(meta_key("counters")).value_or("");
    out.seed_position = impl_->get(meta_key("seed_position")).value_or("");
    impl_->scan("H", [&](std::string_view key, std::string_view value) {
        if (key.size() != 5 || get_be(key.substr(1), 4) != out.hosts.size())
            fail(impl_->dir, asiocrawl::error::store_damaged, "the database is damaged (host numbers)");
        out.hosts.emplace_back(value);
        return true;
    });
    out.waiting.assign(out.hosts.size(), 0);
    out.next_seq.assign(out.hosts.size(), 1);
    impl_->scan("L", [&](std::string_view key, std::string_view value) {
        const auto host = key.size() == 5 ? get_be(key.substr(1), 4) : out.hosts.size();
        varint_reader in{value};
        const auto waiting = in.varint();
        const auto next_seq = in.varint();
        if (host >= out.hosts.size() || !waiting || !next_seq || !in.at_end())
            fail(impl_->dir, asiocrawl::error::store_damaged, "the database is damaged (host lines)");
        out.waiting[static_cast<std::size_t>(host)] = static_cast<std::size_t>(*waiting);
        out.next_seq[static_cast<std::size_t>(host)] = *next_seq;
        return true;
    });
    impl_->scan("S", [&](std::string_view key, std::string_view value) {
        if (key.size() != 9 || value.size() % 8 != 0)
            fail(impl_->dir, asiocrawl::error::store_damaged, "the database is damaged (fingerprints)");
        for (std::size_t i = 0; i < value.size(); i += 8)
            seen.insert(get_be(value.substr(i), 8));
        impl_->next_chunk = get_be(key.substr(1), 8) + 1;
        return true;
    });
    return out;
}

void state_store::write(const state_batch& b, bool sync) {
    rocksdb::WriteBatch batch;
    for (const auto& [host, name] : b.new_hosts)
        batch.Put(slice(host_key(host)), slice(name));
    std::string chunk;
    if (!b.fingerprints.empty()) {
        chunk.reserve(8 * b.fingerprints.size());
        for (const auto fp : b.fingerprints)
            put_be(chunk, fp, 8);
        batch.Put(slice(chunk_key(impl_->next_chunk)), slice(chunk));
    }
    for (const auto& line : b.lines) {
        std::string value;
        put_varint(value, line.waiting);
        put_varint(value, line.next_seq);
        batch.Put(slice(line_key(line.host)), slice(value));
    }
    for (const auto& w : b.waiting)
        batch.Put(slice(waiting_key(w.host, w.seq)), slice(w.item));
    for (const auto& [host, seq] : b.finished)
        batch.Delete(slice(waiting_key(host, seq)));
    for (const auto& [url, json] : b.records)
        batch.Put(slice("R" + url), slice(json));
    for (const auto& [url, bytes] : b.history) {
        if (bytes.empty())
            batch.Delete(slice("F" + url)); // a URL the re-crawl reported gone: forgotten
        else
            batch.Put(slice("F" + url), slice(bytes));
    }
    if (!b.history_if_absent.empty()) {
        // Only where the URL has no entry: neither in the database nor earlier in this batch.
        std::unordered_set<std::string_view> in_batch;
        for (const auto& [url, bytes] : b.history)
            in_batch.insert(url);
        for (const auto& [url, bytes] : b.history_if_absent)
            if (in_batch.insert(url).second && !impl_->get("F" + url))
                batch.Put(slice("F" + url), slice(bytes));
    }
    for (const auto& change : b.due) {
        const auto key = encode_due_key(change.key);
        if (change.present)
            batch.Put(slice(key), rocksdb::Slice());
        else
            batch.Delete(slice(key));
    }
    if (!b.counters.empty())
        batch.Put(slice(meta_key("counters")), slice(b.counters));
    if (!b.seed_position.empty())
        batch.Put(slice(meta_key("seed_position")), slice(b.seed_position));
    if (impl_->write_failed)
        fail_write(impl_->dir, false, "an earlier write failed");
    rocksdb::WriteOptions options;
    options.sync = sync;
    impl_->check_write(impl_->db->Write(options, &batch));
    if (!b.fingerprints.empty())
        ++impl_->next_chunk;
}

std::vector<std::pair<std::uint64_t, std::string>>
state_store::read_waiting(host_id host, std::uint64_t from_seq, std::size_t count) {
    std::vector<std::pair<std::uint64_t, std::string>> out;
    std::string prefix = "W";
    put_be(prefix, host, 4);
    std::string upper = "W";
    put_be(upper, std::uint64_t{host} + 1, 4);
    const auto upper_slice = slice(upper);
    rocksdb::ReadOptions options;
    options.iterate_upper_bound = &upper_slice;
    std::unique_ptr<rocksdb::Iterator> it(impl_->db->NewIterator(options));
    for (it->Seek(slice(waiting_key(host, from_seq))); it->Valid() && out.size() < count; it->Next()) {
        const auto key = view(it->key());
        if (key.size() != 13 || key.substr(0, 5) != prefix)
            break;
        out.emplace_back(get_be(key.substr(5), 8), std::string(view(it->value())));
    }
    impl_->check(it->status(), "read");
    return out;
}

void state_store::for_each_record(
    const std::function<void(std::string_view url, std::string_view json)>& each) const {
    impl_->scan("R", [&](std::string_view key, std::string_view value) {
        each(key.substr(1), value);
        return true;
    });
}

std::uint32_t state_store::generation() const {
    const auto value = impl_->get(meta_key("generation"));
    if (!value)
        return 1;
    if (value->size() != 4)
        fail(impl_->dir, asiocrawl::error::store_damaged, "the database is damaged (generation)");
    return static_cast<std::uint32_t>(get_be(*value, 4));
}

bool state_store::nothing_waiting() const {
    bool none = true;
    impl_->scan("L", [&](std::string_view, std::string_view value) {
        varint_reader in{value};
        const auto waiting = in.varint();
        none = waiting && *waiting == 0;
        return none;
    });
    return none;
}

bool state_store::finished() const {
    const auto seeds = impl_->get(meta_key("seed_position"));
    return nothing_waiting() && (!seeds || seed_position::from_text(*seeds).end);
}

void state_store::begin_generation(std::uint32_t generation) {
    rocksdb::WriteBatch batch;
    // [prefix, prefix + 1): every key of that kind.
    for (const char* kind : {"S", "W", "L", "R"}) {
        const std::string from(kind);
        const std::string to(1, static_cast<char>(kind[0] + 1));
        batch.DeleteRange(slice(from), slice(to));
    }
    batch.Delete(slice(meta_key("counters")));
    batch.Delete(slice(meta_key("seed_position")));
    std::string value;
    put_be(value, generation, 4);
    batch.Put(slice(meta_key("generation")), slice(value));
    if (impl_->write_failed)
        fail_write(impl_->dir, false, "an earlier write failed");
    rocksdb::WriteOptions options;
    options.sync = true;
    impl_->check_write(impl_->db->Write(options, &batch));
    impl_->next_chunk = 0;
}

void state_store::for_each_history(
    const std::function<void(std::string_view url, std::string_view bytes)>& each) const {
    impl_->scan("F", [&](std::string_view key, std::string_view value) {
        each(key.substr(1), value);
        return true;
    });
}

namespace {
std::string outlink_key(std::uint64_t fp) {
    std::string k = "O";
    put_be(k, fp, 8);
    return k;
}

fetch_history decoded_history(const fs::path& dir, std::string_view url, std::string_view bytes) {
    auto h = decode_fetch_history(bytes);
    if (!h)
        fail(dir, asiocrawl::error::store_damaged,
             "the fetch history of " + std::string(url) + " does not decode (damaged)");
    return std::move(*h);
}
} // namespace

state_store::recrawl_history state_store::load_history(std::uint32_t generation, bool continuous,
                                                       std::uint64_t seed, const fingerprint_set& seen) {
    recrawl_history out;
    if (continuous) {
        out.due_indexed = true;
        build_due_index();
        return out;
    }
    bool follows = false;
    fingerprint_set not_admitted;
    rocksdb::WriteBatch index;
    auto write_index = [&] {
        if (impl_->write_failed)
            fail_write(impl_->dir, false, "an earlier write failed");
        impl_->check_write(impl_->db->Write(rocksdb::WriteOptions(), &index)); // built again at every open
        index.Clear();
    };
    index.DeleteRange(slice("O"), slice("P"));
    write_index();
    std::size_t indexed = 0;
    impl_->scan("F", [&](std::string_view key, std::string_view value) {
        const auto url = key.substr(1);
        auto h = decoded_history(impl_->dir, url, value);
        if (h.generation >= generation)
            return true; // fetched in this generation already
        ++out.known;
        if (h.kind != item_kind::robots) {
            follows = follows || h.outlinks_known;
            const auto fp = outlink_fingerprint(url);
            index.Put(slice(outlink_key(fp)), slice(url));
            if (!seen.contains(url_fingerprint(url, seed)))
                not_admitted.insert(fp);
            if (++indexed % 10'000 == 0)
                write_index();
        }
        // Kept whole until an entry shows that links can be followed from the history.
        if (!follows)
            out.whole.emplace(url, std::move(h));
        return true;
    });
    if (follows) {
        write_index();
        out.whole = history_map{};
        out.not_admitted = std::move(not_admitted);
    }
    return out;
}

void state_store::build_due_index() {
    // A state written before the index has none: one pass over the history puts every URL that waits for its
    // revisit (not queued in the frontier) in it. The marker goes with the last chunk, so that an index cut
    // by a kill is built again, and one that is whole is never built again (from then on a queued revisit
    // is told by its missing key, not by its entry's flag).
    if (impl_->get(meta_key("due_index")))
        return;
    rocksdb::WriteBatch index;
    auto write_index = [&] {
        if (impl_->write_failed)
            fail_write(impl_->dir, false, "an earlier write failed");
        impl_->check_write(impl_->db->Write(rocksdb::WriteOptions(), &index));
        index.Clear();
    };
    std::size_t indexed = 0;
    impl_->scan("F", [&](std::string_view key, std::string_view value) {
        const auto url = key.substr(1);
        const auto h = decoded_history(impl_->dir, url, value);
        if (!h.revisit || h.revisit_queued)
            return true;
        index.Put(slice(encode_due_key({h.revisit->due.time_since_epoch().count(), std::string(url)})),
                  rocksdb::Slice());
        if (++indexed % 10'000 == 0)
            write_index();
        return true;
    });
    index.Put(slice(meta_key("due_index")), slice(std::string("1")));
    write_index();
}

std::vector<std::pair<due_key, std::optional<fetch_history>>> state_store::read_due(const due_key& from,
                                                                                    std::size_t count) const {
    std::vector<std::pair<due_key, std::optional<fetch_history>>> out;
    const std::string upper = "E";
    const auto upper_slice = slice(upper);
    rocksdb::ReadOptions options;
    options.iterate_upper_bound = &upper_slice;
    std::unique_ptr<rocksdb::Iterator> it(impl_->db->NewIterator(options));
    for (it->Seek(slice(encode_due_key(from))); it->Valid() && out.size() < count; it->Next()) {
        auto key = decode_due_key(view(it->key()));
        if (!key)
            fail(impl_->dir, asiocrawl::error::store_damaged, "the database is damaged (a due-time key)");
        std::optional<fetch_history> entry;
        if (const auto bytes = impl_->get("F" + key->url)) {
            entry = decoded_history(impl_->dir, key->url, *bytes);
            entry->outlinks = {}; // read again with the entry when the URL is fetched
        }
        out.emplace_back(std::move(*key), std::move(entry));
    }
    impl_->check(it->status(), "read");
    return out;
}

std::vector<std::optional<fetch_history>>
state_store::read_history(const std::vector<std::string>& urls) const {
    std::vector<std::optional<fetch_history>> out;
    out.reserve(urls.size());
    for (const auto& url : urls) {
        const auto bytes = impl_->get("F" + url);
        if (bytes)
            out.emplace_back(decoded_history(impl_->dir, url, *bytes));
        else
            out.emplace_back();
    }
    return out;
}

std::vector<std::optional<std::pair<std::string, fetch_history>>>
state_store::read_indexed_history(const std::vector<std::uint64_t>& fps) const {
    std::vector<std::optional<std::pair<std::string, fetch_history>>> out;
    out.reserve(fps.size());
    for (const auto fp : fps) {
        auto url = impl_->get(outlink_key(fp));
        const auto bytes = url ? impl_->get("F" + *url) : std::nullopt;
        if (!bytes) {
            out.emplace_back();
            continue;
        }
        auto h = decoded_history(impl_->dir, *url, *bytes);
        h.outlinks = {};
        out.emplace_back(std::in_place, std::move(*url), std::move(h));
    }
    return out;
}

state_store::history_chunk state_store::history_before(std::uint32_t generation, std::string_view after,
                                                       std::size_t limit) const {
    history_chunk out;
    std::size_t scanned = 0;
    const std::string from = after.empty() ? std::string() : "F" + std::string(after);
    impl_->scan(
        "F",
        [&](std::string_view key, std::string_view value) {
            const auto url = key.substr(1);
            if (!after.empty() && url == after)
                return true; // the previous chunk's last
            auto h = decoded_history(impl_->dir, url, value);
            if (h.generation < generation && h.kind != item_kind::robots) {
                h.outlinks = {};
                out.entries.emplace_back(std::string(url), std::move(h));
            }
            if (++scanned < limit)
                return true;
            out.next_after = std::string(url);
            return false;
        },
        from);
    return out;
}

std::uint64_t state_store::disk_bytes() const {
    std::uint64_t total = 0;
    std::error_code ec;
    for (const auto& entry : fs::recursive_directory_iterator(impl_->dir, ec))
        if (entry.is_regular_file(ec))
            total += entry.file_size(ec);
    return total;
}

} // namespace asiocrawl::detail
