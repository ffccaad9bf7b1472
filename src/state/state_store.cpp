// The state directory: a marker file naming the format, and a RocksDB database (docs/STATE.md says why
// RocksDB: it was measured against LMDB, SQLite and a plain journal on the crawl's own write pattern).
//
// Keys, all in the default column family (big-endian numbers, so that byte order is key order):
//   "M" name                 meta: "seed", "definition", "counters"
//   "H" host(4)              host name
//   "S" fingerprint(8)       an admitted URL (empty value)
//   "W" host(4) seq(8)       a waiting URL: encode(work_item)
//   "R" url                  a kept record as JSON
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

std::string fingerprint_key(std::uint64_t fp) {
    std::string k = "S";
    put_be(k, fp, 8);
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
    if (fs::exists(dir, ec) && !fs::is_empty(dir, ec))
        fail(dir, "is not empty and holds no crawl state (no " + std::string(marker_name) +
                      " file): refusing to write into it");
    fs::create_directories(dir, ec);
    if (ec)
        fail(dir, "cannot be created: " + ec.message());
    std::ofstream out(marker);
    out << marker_text;
    out.close();
    if (!out)
        fail(dir, "cannot be written");
}

} // namespace

struct state_store::impl {
    fs::path dir;
    std::unique_ptr<rocksdb::DB> db;

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
    impl_->scan("H", [&](std::string_view key, std::string_view value) {
        if (key.size() != 5 || get_be(key.substr(1), 4) != out.hosts.size())
            fail(impl_->dir, "the database is damaged (host numbers)");
        out.hosts.emplace_back(value);
        return true;
    });
    out.waiting.assign(out.hosts.size(), 0);
    impl_->scan("W", [&](std::string_view key, std::string_view) {
        const auto host = key.size() == 13 ? get_be(key.substr(1), 4) : out.hosts.size();
        if (host >= out.hosts.size())
            fail(impl_->dir, "the database is damaged (a waiting URL of an unknown host)");
        ++out.waiting[static_cast<std::size_t>(host)];
        return true;
    });
    impl_->scan("S", [&](std::string_view key, std::string_view) {
        if (key.size() != 9)
            fail(impl_->dir, "the database is damaged (fingerprints)");
        seen.insert(get_be(key.substr(1), 8));
        return true;
    });
    return out;
}

void state_store::write(const state_batch& b, bool sync) {
    rocksdb::WriteBatch batch;
    for (const auto& [host, name] : b.new_hosts)
        batch.Put(slice(host_key(host)), slice(name));
    for (const auto fp : b.fingerprints)
        batch.Put(slice(fingerprint_key(fp)), rocksdb::Slice());
    for (const auto& w : b.waiting)
        batch.Put(slice(waiting_key(w.host, w.seq)), slice(w.item));
    for (const auto& [host, seq] : b.finished)
        batch.Delete(slice(waiting_key(host, seq)));
    for (const auto& [url, json] : b.records)
        batch.Put(slice("R" + url), slice(json));
    if (!b.counters.empty())
        batch.Put(slice(meta_key("counters")), slice(b.counters));
    rocksdb::WriteOptions options;
    options.sync = sync;
    impl_->check(impl_->db->Write(options, &batch), "write");
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
