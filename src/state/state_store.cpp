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
// A resume reads H, L and S only: O(hosts) keys and 8 bytes per URL in large values, never every waiting URL.
#include "state/state_store.hpp"

#include "state/varint.hpp"

#include <asiocrawl/crawler.hpp>

#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

#include <fstream>
#include <sstream>
#include <system_error>

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

[[noreturn]] void fail(const fs::path& dir, const std::string& what) {
    throw state_error("state directory " + dir.string() + ": " + what);
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
            fail(dir, "written by another version of asiocrawl (" + marker.string() + " says \"" +
                          text.str().substr(0, 60) + "\"); use --state-reset to start over");
        return;
    }
    if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
        fail(dir, "exists and is not a directory");
    const auto draft = dir / (std::string(marker_name) + ".tmp");
    fs::remove(draft, ec); // a claim cut short by a kill
    if (fs::exists(dir, ec) && !fs::is_empty(dir, ec))
        fail(dir, "is not empty and holds no crawl state (no " + std::string(marker_name) +
                      " file): refusing to write into it");
    fs::create_directories(dir, ec);
    if (ec)
        fail(dir, "cannot be created: " + ec.message());
    // Written aside and renamed: a kill never leaves a half-written marker.
    std::ofstream out(draft);
    out << marker_text;
    out.close();
    if (!out)
        fail(dir, "cannot be written");
    fs::rename(draft, marker, ec);
    if (ec)
        fail(dir, "cannot be written: " + ec.message());
}

} // namespace

struct state_store::impl {
    fs::path dir;
    std::unique_ptr<rocksdb::DB> db;
    std::uint64_t next_chunk = 0; // the key of the next fingerprint chunk

    void check(const rocksdb::Status& status, std::string_view doing) const {
        if (!status.ok())
            fail(dir, std::string(doing) + ": " + status.ToString());
    }

    std::optional<std::string> get(std::string_view key) const {
        std::string value;
        const auto status = db->Get(rocksdb::ReadOptions(), slice(key), &value);
        if (status.IsNotFound())
            return std::nullopt;
        check(status, "read");
        return value;
    }

    /// Calls `each` for every key with `prefix`, in order, until it returns false.
    template <class F>
    void scan(std::string_view prefix, F&& each) const {
        std::string upper(prefix);
        upper.back() = static_cast<char>(static_cast<unsigned char>(upper.back()) + 1);
        rocksdb::Slice upper_slice = slice(upper);
        rocksdb::ReadOptions options;
        options.iterate_upper_bound = &upper_slice;
        options.fill_cache = false;
        std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(options));
        for (it->Seek(slice(prefix)); it->Valid(); it->Next()) {
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
        // A clean close leaves no write-ahead log to replay: the next open is quick.
        impl_->db->Flush(rocksdb::FlushOptions());
        impl_->db->Close();
    }
}

std::unique_ptr<state_store> state_store::open(const fs::path& dir) {
    claim(dir);
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
    options.keep_log_file_num = 2;
    // Tables open at once: a bound, so that a crawl's descriptors are its connections plus a known few
    // (fetch_settings.hpp: state_dir_descriptors), whatever the state's size.
    options.max_open_files = 64;
    options.info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;
    rocksdb::BlockBasedTableOptions table;
    table.block_cache = rocksdb::NewLRUCache(32u << 20);
    table.cache_index_and_filter_blocks = true;
    options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
    rocksdb::DB* db = nullptr;
    const auto status = rocksdb::DB::Open(options, (dir / "db").string(), &db);
    if (!status.ok())
        fail(dir, "the database does not open (" + status.ToString() +
                      "); it may be damaged: use --state-reset to start over");
    self->db.reset(db);
    return std::unique_ptr<state_store>(new state_store(std::move(self)));
}

void state_store::reset(const fs::path& dir) {
    std::error_code ec;
    if (!fs::exists(dir, ec))
        return;
    if (!fs::exists(dir / marker_name, ec) && !fs::is_empty(dir, ec))
        fail(dir, "is not empty and holds no crawl state (no " + std::string(marker_name) +
                      " file): --state-reset will not delete it");
    for (const auto& entry : fs::directory_iterator(dir, ec))
        fs::remove_all(entry.path(), ec);
    if (ec)
        fail(dir, "cannot be emptied: " + ec.message());
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
        fail(impl_->dir, "the database is damaged (bad seed)");
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
    impl_->check(impl_->db->Write(options, &batch), "write");
}

restored_state state_store::load(fingerprint_set& seen) {
    restored_state out;
    out.counters = impl_->get(meta_key("counters")).value_or("");
    out.seed_position = impl_->get(meta_key("seed_position")).value_or("");
    impl_->scan("H", [&](std::string_view key, std::string_view value) {
        if (key.size() != 5 || get_be(key.substr(1), 4) != out.hosts.size())
            fail(impl_->dir, "the database is damaged (host numbers)");
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
            fail(impl_->dir, "the database is damaged (host lines)");
        out.waiting[static_cast<std::size_t>(host)] = static_cast<std::size_t>(*waiting);
        out.next_seq[static_cast<std::size_t>(host)] = *next_seq;
        return true;
    });
    impl_->scan("S", [&](std::string_view key, std::string_view value) {
        if (key.size() != 9 || value.size() % 8 != 0)
            fail(impl_->dir, "the database is damaged (fingerprints)");
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
    if (!b.counters.empty())
        batch.Put(slice(meta_key("counters")), slice(b.counters));
    if (!b.seed_position.empty())
        batch.Put(slice(meta_key("seed_position")), slice(b.seed_position));
    rocksdb::WriteOptions options;
    options.sync = sync;
    impl_->check(impl_->db->Write(options, &batch), "write");
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

std::uint64_t state_store::disk_bytes() const {
    std::uint64_t total = 0;
    std::error_code ec;
    for (const auto& entry : fs::recursive_directory_iterator(impl_->dir, ec))
        if (entry.is_regular_file(ec))
            total += entry.file_size(ec);
    return total;
}

} // namespace asiocrawl::detail
