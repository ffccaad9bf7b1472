// Which embedded store should hold a crawl's durable state? Runs the crawl's own write pattern against each
// candidate Debian packages and keeps up, and prints what issue 12 asks to compare: inserts/s as the store
// grows to N URLs, bytes on disk per URL, resume time at N URLs, and the cost of an fsync'd commit per page.
//
// The workload is the one src/state/ performs (docs/STATE.md):
//   admit   a discovered URL: frontier entry (host id, sequence) -> url + fields, and its 8-byte fingerprint;
//           committed in batches, as the crawler's group commit does.
//   resume  reopen, read every fingerprint back into memory, find each host's first waiting entry.
//   finish  a page: read its host's next entry, delete it, store a compact done record; one commit per
//           `--commit-pages` pages, once without and once with fsync.
//
// Usage: asiocrawl-bench-state-store [--urls N] [--hosts H] [--dir D] [--stores rocksdb,lmdb,sqlite,journal]
#include <lmdb.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>
#include <sqlite3.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;

namespace {

double seconds_since(clock_type::time_point t) {
    return std::chrono::duration<double>(clock_type::now() - t).count();
}

std::uint64_t fingerprint(std::string_view s) {
    // FNV-1a 64: the bench needs a stable 64-bit key, not the crawler's hash.
    std::uint64_t h = 1469598103934665603ull;
    for (unsigned char c : s)
        h = (h ^ c) * 1099511628211ull;
    return h;
}

void put_be32(std::string& out, std::uint32_t v) {
    for (int i = 3; i >= 0; --i)
        out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void put_be64(std::string& out, std::uint64_t v) {
    for (int i = 7; i >= 0; --i)
        out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
std::uint64_t get_be64(const char* p) {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i)
        v = (v << 8) | static_cast<unsigned char>(p[i]);
    return v;
}

std::string frontier_key(std::uint32_t host, std::uint64_t seq) {
    std::string k = "f";
    put_be32(k, host);
    put_be64(k, seq);
    return k;
}
std::string seen_key(std::uint64_t fp) {
    std::string k = "s";
    put_be64(k, fp);
    return k;
}

/// A URL of the generated link space: ~70 bytes, like the bench site's.
std::string make_url(std::uint64_t i, std::uint32_t hosts) {
    std::ostringstream u;
    u << "http://host-" << (i % hosts) << ".example.com/section-" << (i / 7919 % 97) << "/page-" << i
      << ".html?ref=" << (i * 2654435761u % 100000);
    return u.str();
}

/// The fields a waiting URL carries besides its text: depth, redirects left, kind, tries, referrer id.
std::string entry_value(const std::string& url) {
    std::string v(12, '\0');
    v += url;
    return v;
}

std::uint64_t dir_bytes(const fs::path& dir) {
    std::uint64_t total = 0;
    for (const auto& e : fs::recursive_directory_iterator(dir))
        if (e.is_regular_file())
            total += e.file_size();
    return total;
}

long peak_rss_kb() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

/// One candidate, reduced to the operations the crawl state needs.
class store {
public:
    virtual ~store() = default;
    virtual std::string name() const = 0;
    virtual void begin() = 0;
    virtual void put(const std::string& key, const std::string& value) = 0;
    virtual void erase(const std::string& key) = 0;
    virtual void commit(bool sync) = 0;
    /// Calls `each` with every key starting with `prefix`, in order, until it returns false.
    virtual void scan(const std::string& prefix,
                      const std::function<bool(std::string_view, std::string_view)>& each) = 0;
    virtual void reopen() = 0;
};

class rocks_store final : public store {
public:
    explicit rocks_store(fs::path dir)
        : dir_(std::move(dir)) {
        open();
    }
    std::string name() const override { return "rocksdb"; }
    void begin() override { batch_.Clear(); }
    void put(const std::string& k, const std::string& v) override { batch_.Put(k, v); }
    void erase(const std::string& k) override { batch_.Delete(k); }
    void commit(bool sync) override {
        rocksdb::WriteOptions w;
        w.sync = sync;
        check(db_->Write(w, &batch_));
        batch_.Clear();
    }
    void scan(const std::string& prefix,
              const std::function<bool(std::string_view, std::string_view)>& each) override {
        rocksdb::ReadOptions r;
        std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(r));
        for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next())
            if (!each({it->key().data(), it->key().size()}, {it->value().data(), it->value().size()}))
                break;
    }
    void reopen() override {
        db_.reset();
        open();
    }

private:
    static void check(const rocksdb::Status& s) {
        if (!s.ok())
            throw std::runtime_error("rocksdb: " + s.ToString());
    }
    void open() {
        fs::create_directories(dir_.parent_path());
        rocksdb::Options o;
        o.create_if_missing = true;
        o.compression = rocksdb::kLZ4Compression;
        o.bottommost_compression = rocksdb::kZSTD;
        o.write_buffer_size = 32 << 20;
        o.max_write_buffer_number = 2;
        rocksdb::BlockBasedTableOptions t;
        t.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
        t.block_cache = rocksdb::NewLRUCache(32 << 20);
        o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(t));
        rocksdb::DB* db = nullptr;
        check(rocksdb::DB::Open(o, dir_.string(), &db));
        db_.reset(db);
    }
    fs::path dir_;
    std::unique_ptr<rocksdb::DB> db_;
    rocksdb::WriteBatch batch_;
};

class lmdb_store final : public store {
public:
    explicit lmdb_store(fs::path dir)
        : dir_(std::move(dir)) {
        open();
    }
    ~lmdb_store() override { close(); }
    std::string name() const override { return "lmdb"; }
    void begin() override { check(mdb_txn_begin(env_, nullptr, 0, &txn_)); }
    void put(const std::string& k, const std::string& v) override {
        MDB_val key{k.size(), const_cast<char*>(k.data())}, val{v.size(), const_cast<char*>(v.data())};
        check(mdb_put(txn_, dbi_, &key, &val, 0));
    }
    void erase(const std::string& k) override {
        MDB_val key{k.size(), const_cast<char*>(k.data())};
        const int rc = mdb_del(txn_, dbi_, &key, nullptr);
        if (rc != MDB_NOTFOUND)
            check(rc);
    }
    void commit(bool sync) override {
        check(mdb_txn_commit(txn_));
        txn_ = nullptr;
        if (sync)
            check(mdb_env_sync(env_, 1));
    }
    void scan(const std::string& prefix,
              const std::function<bool(std::string_view, std::string_view)>& each) override {
        MDB_txn* txn = nullptr;
        check(mdb_txn_begin(env_, nullptr, MDB_RDONLY, &txn));
        MDB_cursor* cur = nullptr;
        check(mdb_cursor_open(txn, dbi_, &cur));
        MDB_val key{prefix.size(), const_cast<char*>(prefix.data())}, val{};
        int rc = mdb_cursor_get(cur, &key, &val, MDB_SET_RANGE);
        while (rc == 0) {
            std::string_view k(static_cast<const char*>(key.mv_data), key.mv_size);
            if (!k.starts_with(prefix) ||
                !each(k, std::string_view(static_cast<const char*>(val.mv_data), val.mv_size)))
                break;
            rc = mdb_cursor_get(cur, &key, &val, MDB_NEXT);
        }
        mdb_cursor_close(cur);
        mdb_txn_abort(txn);
    }
    void reopen() override {
        close();
        open();
    }

private:
    static void check(int rc) {
        if (rc != 0)
            throw std::runtime_error(std::string("lmdb: ") + mdb_strerror(rc));
    }
    void open() {
        fs::create_directories(dir_);
        check(mdb_env_create(&env_));
        check(mdb_env_set_mapsize(env_, std::size_t{64} << 30));
        // NOSYNC: commits reach the page cache (enough for kill -9); commit(true) adds the fsync.
        check(mdb_env_open(env_, dir_.c_str(), MDB_NOSYNC | MDB_NORDAHEAD, 0644));
        MDB_txn* txn = nullptr;
        check(mdb_txn_begin(env_, nullptr, 0, &txn));
        check(mdb_dbi_open(txn, nullptr, 0, &dbi_));
        check(mdb_txn_commit(txn));
    }
    void close() {
        if (env_) {
            mdb_env_close(env_);
            env_ = nullptr;
        }
    }
    fs::path dir_;
    MDB_env* env_ = nullptr;
    MDB_dbi dbi_{};
    MDB_txn* txn_ = nullptr;
};

class sqlite_store final : public store {
public:
    explicit sqlite_store(fs::path dir)
        : dir_(std::move(dir)) {
        open();
    }
    ~sqlite_store() override { close(); }
    std::string name() const override { return "sqlite-wal"; }
    void begin() override { exec("BEGIN"); }
    void set_sync(bool sync) {
        if (sync != synchronous_)
            exec(sync ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=OFF");
        synchronous_ = sync;
    }
    void put(const std::string& k, const std::string& v) override {
        sqlite3_reset(put_);
        sqlite3_bind_blob(put_, 1, k.data(), static_cast<int>(k.size()), SQLITE_STATIC);
        sqlite3_bind_blob(put_, 2, v.data(), static_cast<int>(v.size()), SQLITE_STATIC);
        step(put_);
    }
    void erase(const std::string& k) override {
        sqlite3_reset(del_);
        sqlite3_bind_blob(del_, 1, k.data(), static_cast<int>(k.size()), SQLITE_STATIC);
        step(del_);
    }
    void commit(bool sync) override {
        exec("COMMIT");
        set_sync(sync);
    }
    void scan(const std::string& prefix,
              const std::function<bool(std::string_view, std::string_view)>& each) override {
        sqlite3_reset(scan_);
        sqlite3_bind_blob(scan_, 1, prefix.data(), static_cast<int>(prefix.size()), SQLITE_STATIC);
        while (sqlite3_step(scan_) == SQLITE_ROW) {
            std::string_view k(static_cast<const char*>(sqlite3_column_blob(scan_, 0)),
                               static_cast<std::size_t>(sqlite3_column_bytes(scan_, 0)));
            std::string_view v(static_cast<const char*>(sqlite3_column_blob(scan_, 1)),
                               static_cast<std::size_t>(sqlite3_column_bytes(scan_, 1)));
            if (!k.starts_with(prefix) || !each(k, v))
                break;
        }
    }
    void reopen() override {
        close();
        open();
    }

private:
    void exec(const char* sql) {
        char* err = nullptr;
        if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
            std::string m = err ? err : "?";
            sqlite3_free(err);
            throw std::runtime_error("sqlite: " + m);
        }
    }
    void step(sqlite3_stmt* s) {
        if (sqlite3_step(s) != SQLITE_DONE)
            throw std::runtime_error(std::string("sqlite: ") + sqlite3_errmsg(db_));
    }
    sqlite3_stmt* prepare(const char* sql) {
        sqlite3_stmt* s = nullptr;
        if (sqlite3_prepare_v2(db_, sql, -1, &s, nullptr) != SQLITE_OK)
            throw std::runtime_error(std::string("sqlite: ") + sqlite3_errmsg(db_));
        return s;
    }
    void open() {
        fs::create_directories(dir_);
        if (sqlite3_open((dir_ / "state.db").c_str(), &db_) != SQLITE_OK)
            throw std::runtime_error("sqlite: open");
        exec("PRAGMA journal_mode=WAL");
        exec("PRAGMA cache_size=-32768");
        exec("PRAGMA synchronous=OFF");
        synchronous_ = false;
        exec("CREATE TABLE IF NOT EXISTS kv (k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID");
        put_ = prepare("INSERT OR REPLACE INTO kv (k, v) VALUES (?1, ?2)");
        del_ = prepare("DELETE FROM kv WHERE k = ?1");
        scan_ = prepare("SELECT k, v FROM kv WHERE k >= ?1 ORDER BY k");
    }
    void close() {
        for (auto* s : {put_, del_, scan_})
            sqlite3_finalize(s);
        put_ = del_ = scan_ = nullptr;
        if (db_)
            sqlite3_close(db_);
        db_ = nullptr;
    }
    fs::path dir_;
    sqlite3* db_ = nullptr;
    sqlite3_stmt* put_ = nullptr;
    sqlite3_stmt* del_ = nullptr;
    sqlite3_stmt* scan_ = nullptr;
    bool synchronous_ = false;
};

/// The journal baseline: an append-only log of puts and erases, fsync'd on commit. It has no ordered index,
/// so a resume must replay the whole log, and taking a host's next URL needs an in-memory index of offsets
/// (the bench keeps one per waiting URL, 8 bytes each: memory that grows with the frontier).
class journal_store final : public store {
public:
    explicit journal_store(fs::path dir)
        : dir_(std::move(dir)) {
        open();
    }
    ~journal_store() override {
        ::close(fd_);
        ::close(read_fd_);
    }
    std::string name() const override { return "journal"; }
    void begin() override { buffer_.clear(); }
    void put(const std::string& k, const std::string& v) override {
        if (k.front() == 'f')
            index_[k] = {written_ + buffer_.size() + 9 + k.size(), static_cast<std::uint32_t>(v.size())};
        append('P', k, v);
    }
    void erase(const std::string& k) override {
        index_.erase(k);
        append('E', k, {});
    }
    void commit(bool sync) override {
        if (::write(fd_, buffer_.data(), buffer_.size()) != static_cast<ssize_t>(buffer_.size()))
            throw std::runtime_error("journal: write");
        if (sync)
            ::fdatasync(fd_);
        written_ += buffer_.size();
        buffer_.clear();
    }
    void scan(const std::string& prefix,
              const std::function<bool(std::string_view, std::string_view)>& each) override {
        if (prefix.front() == 'f') {
            // Frontier reads go through the in-memory index: the journal has no other way to find an entry.
            for (auto it = index_.lower_bound(prefix); it != index_.end() && it->first.starts_with(prefix);
                 ++it) {
                std::string value(it->second.second, '\0');
                if (::pread(read_fd_, value.data(), value.size(), static_cast<off_t>(it->second.first)) < 0)
                    throw std::runtime_error("journal: pread");
                if (!each(it->first, value))
                    break;
            }
            return;
        }
        // A full replay: what a resume costs without an index. It rebuilds the frontier index too.
        std::string log = read_all();
        std::size_t pos = 0;
        while (pos + 9 <= log.size()) {
            const char op = log[pos];
            std::uint32_t klen, vlen;
            std::memcpy(&klen, &log[pos + 1], 4);
            std::memcpy(&vlen, &log[pos + 5], 4);
            std::string_view k(&log[pos + 9], klen), v(&log[pos + 9 + klen], vlen);
            if (op == 'P' && k.front() == 'f')
                index_[std::string(k)] = {pos + 9 + klen, vlen};
            else if (op == 'E')
                index_.erase(std::string(k));
            pos += 9 + klen + vlen;
            if (op == 'P' && k.starts_with(prefix) && !each(k, v))
                return;
        }
    }
    void reopen() override {
        ::close(fd_);
        ::close(read_fd_);
        open();
    }

private:
    void append(char op, const std::string& k, std::string_view v) {
        buffer_.push_back(op);
        const std::uint32_t klen = static_cast<std::uint32_t>(k.size()),
                            vlen = static_cast<std::uint32_t>(v.size());
        buffer_.append(reinterpret_cast<const char*>(&klen), 4);
        buffer_.append(reinterpret_cast<const char*>(&vlen), 4);
        buffer_ += k;
        buffer_ += v;
    }
    std::string read_all() {
        std::string out(fs::file_size(dir_ / "journal"), '\0');
        const int fd = ::open((dir_ / "journal").c_str(), O_RDONLY);
        std::size_t got = 0;
        while (got < out.size()) {
            const auto n = ::read(fd, out.data() + got, out.size() - got);
            if (n <= 0)
                break;
            got += static_cast<std::size_t>(n);
        }
        ::close(fd);
        return out;
    }
    void open() {
        fs::create_directories(dir_);
        fd_ = ::open((dir_ / "journal").c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
        read_fd_ = ::open((dir_ / "journal").c_str(), O_RDONLY);
        written_ = fs::file_size(dir_ / "journal");
        index_.clear();
    }
    fs::path dir_;
    int fd_ = -1;
    int read_fd_ = -1;
    std::uint64_t written_ = 0;
    std::map<std::string, std::pair<std::uint64_t, std::uint32_t>> index_;
    std::string buffer_;
};

struct options {
    std::uint64_t urls = 10'000'000;
    std::uint32_t hosts = 1000;
    std::uint64_t batch = 1000;       // URLs admitted per commit
    std::uint64_t commit_pages = 100; // pages finished per commit
    std::uint64_t finish_pages = 200'000;
    std::uint64_t sync_commits = 200;
    fs::path dir = "/tmp/asiocrawl-state-bench";
    std::vector<std::string> stores{"rocksdb", "lmdb", "sqlite", "journal"};
};

std::unique_ptr<store> make_store(const std::string& name, const fs::path& dir) {
    if (name == "rocksdb")
        return std::make_unique<rocks_store>(dir);
    if (name == "lmdb")
        return std::make_unique<lmdb_store>(dir);
    if (name == "sqlite")
        return std::make_unique<sqlite_store>(dir);
    if (name == "journal")
        return std::make_unique<journal_store>(dir);
    throw std::invalid_argument("unknown store " + name);
}

void run(const std::string& which, const options& o) {
    const fs::path dir = o.dir / which;
    fs::remove_all(dir);
    auto s = make_store(which, dir);

    // 1. Admit: frontier entry + fingerprint per URL, one commit per batch (no fsync: page cache, which is
    //    what survives a kill -9). Rate per decile shows how the store slows as it grows.
    std::printf("| %s | admit |", s->name().c_str());
    std::vector<std::uint64_t> next_seq(o.hosts, 0);
    const auto admit_start = clock_type::now();
    auto decile_start = admit_start;
    const std::uint64_t decile = o.urls / 10;
    for (std::uint64_t i = 0; i < o.urls;) {
        s->begin();
        for (std::uint64_t j = 0; j < o.batch && i < o.urls; ++j, ++i) {
            const std::string url = make_url(i, o.hosts);
            const auto host = static_cast<std::uint32_t>(i % o.hosts);
            s->put(frontier_key(host, next_seq[host]++), entry_value(url));
            s->put(seen_key(fingerprint(url)), {});
        }
        s->commit(false);
        if (i % decile == 0 && (i / decile == 1 || i / decile == 10)) {
            std::printf(" %.0f k/s at %llu M;", decile / seconds_since(decile_start) / 1000.0,
                        static_cast<unsigned long long>(i / 1'000'000));
            decile_start = clock_type::now();
        } else if (i % decile == 0) {
            decile_start = clock_type::now();
        }
    }
    const double admit_s = seconds_since(admit_start);
    std::printf(" all %.0f k/s |\n", o.urls / admit_s / 1000.0);

    // 2. Resume: reopen, fingerprints back into memory, each host's first waiting sequence.
    s.reset();
    const auto disk_admitted = dir_bytes(dir);
    const auto resume_start = clock_type::now();
    s = make_store(which, dir);
    std::unordered_set<std::uint64_t> seen;
    seen.reserve(o.urls);
    s->scan("s", [&](std::string_view k, std::string_view) {
        seen.insert(get_be64(k.data() + 1));
        return true;
    });
    std::vector<std::uint64_t> head(o.hosts, 0);
    for (std::uint32_t h = 0; h < o.hosts; ++h) {
        std::string prefix = "f";
        put_be32(prefix, h);
        s->scan(prefix, [&](std::string_view k, std::string_view) {
            head[h] = get_be64(k.data() + 5);
            return false;
        });
    }
    const double resume_s = seconds_since(resume_start);
    std::printf("| %s | resume | %.2f s for %zu fingerprints + %u host heads; disk %.1f B/URL |\n",
                s->name().c_str(), resume_s, seen.size(), o.hosts,
                static_cast<double>(disk_admitted) / static_cast<double>(o.urls));

    // 3. Finish pages: per page, read the host's head entry, delete it, write a done record. Hosts in turn.
    auto finish = [&](std::uint64_t pages, bool sync) {
        std::uint32_t host = 0;
        const auto start = clock_type::now();
        std::uint64_t done = 0;
        while (done < pages) {
            s->begin();
            for (std::uint64_t j = 0; j < o.commit_pages; ++j, ++done) {
                std::string prefix = "f";
                put_be32(prefix, host);
                std::string key, value;
                s->scan(frontier_key(host, head[host]), [&](std::string_view k, std::string_view v) {
                    key = k;
                    value = v;
                    return false;
                });
                if (key.starts_with(prefix)) {
                    s->erase(key);
                    ++head[host];
                    std::string done_key = "d" + value.substr(12);
                    s->put(done_key, std::string(24, '\1'));
                }
                host = (host + 1) % o.hosts;
            }
            s->commit(sync);
        }
        return seconds_since(start);
    };
    const double finish_s = finish(o.finish_pages, false);
    const double sync_s = finish(o.sync_commits * o.commit_pages, true);
    std::printf("| %s | finish | %.0f pages/s without fsync; with fsync every %llu pages: %.2f ms a commit, "
                "%.1f us a page |\n",
                s->name().c_str(), o.finish_pages / finish_s / 1.0,
                static_cast<unsigned long long>(o.commit_pages),
                sync_s * 1000.0 / static_cast<double>(o.sync_commits),
                sync_s * 1e6 / static_cast<double>(o.sync_commits * o.commit_pages));
    s.reset();
    std::printf("| %s | peak RSS so far %ld MB |\n", which.c_str(), peak_rss_kb() / 1024);
    std::fflush(stdout);
    fs::remove_all(dir);
}

} // namespace

int main(int argc, char** argv) {
    options o;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string_view flag = argv[i];
        const std::string value = argv[i + 1];
        if (flag == "--urls")
            o.urls = std::stoull(value);
        else if (flag == "--hosts")
            o.hosts = static_cast<std::uint32_t>(std::stoul(value));
        else if (flag == "--dir")
            o.dir = value;
        else if (flag == "--finish-pages")
            o.finish_pages = std::stoull(value);
        else if (flag == "--stores") {
            o.stores.clear();
            std::stringstream list(value);
            for (std::string s; std::getline(list, s, ',');)
                o.stores.push_back(s);
        } else {
            std::fprintf(stderr,
                         "usage: %s [--urls N] [--hosts H] [--dir D] [--finish-pages N] "
                         "[--stores rocksdb,lmdb,sqlite,journal]\n",
                         argv[0]);
            return 2;
        }
    }
    std::printf("state store candidates: %llu URLs over %u hosts, admitted %llu per commit\n\n",
                static_cast<unsigned long long>(o.urls), o.hosts, static_cast<unsigned long long>(o.batch));
    std::printf("| store | phase | figures |\n|---|---|---|\n");
    for (const auto& which : o.stores) {
        try {
            run(which, o);
        } catch (const std::exception& e) {
            std::printf("| %s | failed | %s |\n", which.c_str(), e.what());
        }
    }
}
