// Where a durable crawl keeps its state: one directory, an embedded RocksDB database inside it. Every call
// blocks on disk, so the crawler makes them on its storage thread, never on its executor.
#pragma once

#include "state/due_index.hpp"
#include "state/fetch_history.hpp"
#include "state/fingerprint_set.hpp"
#include "state/state_batch.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace asiocrawl::detail {

/// What a state directory holds besides the crawl's progress.
struct state_meta {
    /// The fingerprint seed drawn when the crawl began.
    std::uint64_t seed = 0;
    /// The crawl's definition (crawl_definition_json) as it began: a resume must match it.
    std::string definition;
};

/// Holds a state directory for one crawl: an exclusive flock(2) on the directory itself, taken before
/// anything reads, resets or writes it, and released when the object goes (or its process dies, however).
/// Locking the directory, not a file in it, leaves its contents as they were: --state-reset empties it
/// under the lock, and a foreign directory gets no file of ours.
class state_lock {
public:
    /// Creates `dir` when it is absent, then locks it without waiting. Throws crawl_error (state_locked,
    /// state_unusable) when another crawl holds it (naming that process's pid when /proc/locks tells it), or
    /// when it cannot be created or opened.
    explicit state_lock(const std::filesystem::path& dir);
    ~state_lock();
    state_lock(const state_lock&) = delete;
    state_lock& operator=(const state_lock&) = delete;

private:
    int fd_ = -1;
};

class state_store {
public:
    /// Opens (creating when absent) the state in `dir`; hold its state_lock first. Throws crawl_error with a
    /// message meant for a user: a directory that holds something else, a newer or older format, a damaged
    /// database (its code says which); store_write_failed when it cannot be written (no space left).
    static std::unique_ptr<state_store> open(const std::filesystem::path& dir);
    /// Removes a state directory's contents (--state-reset). Refuses, with crawl_error (state_unusable), a
    /// non-empty directory that is not a crawl state.
    static void reset(const std::filesystem::path& dir);
    /// True when `dir` carries the marker of a crawl state (without opening the database).
    static bool holds_state(const std::filesystem::path& dir);

    ~state_store();
    state_store(const state_store&) = delete;
    state_store& operator=(const state_store&) = delete;

    /// nullopt for a new state (nothing was ever committed).
    std::optional<state_meta> meta() const;
    /// Written once, when the crawl begins.
    void write_meta(const state_meta& meta);

    /// Reads everything a resume needs: fingerprints straight into `seen`, hosts, waiting counts, counters.
    restored_state load(fingerprint_set& seen);

    /// Applies a batch atomically. `sync`: fsync before returning (survives a power loss, not only a kill).
    /// Throws crawl_error (store_write_failed) when the write fails (no space left, an I/O error): the batch
    /// is not applied, what was written before stays, and this store takes no more writes.
    void write(const state_batch& batch, bool sync);

    /// Up to `count` waiting URLs of `host` from sequence `from_seq` on, in order: (seq, encoded item).
    std::vector<std::pair<std::uint64_t, std::string>> read_waiting(host_id host, std::uint64_t from_seq,
                                                                    std::size_t count);

    /// Every kept record, ordered by URL: (url, encode(record)).
    void for_each_record(const std::function<void(std::string_view url, std::string_view bytes)>& each) const;

    /// The generation of the crawl kept here: 1 until a re-crawl begins another (docs/RECRAWL.md).
    std::uint32_t generation() const;
    /// True when no URL of the crawl waits (it finished, or never admitted any).
    bool nothing_waiting() const;
    /// True when the crawl kept here has finished: nothing waits and its seed file (if any) was read to its
    /// end. A re-crawl begins a new generation only then; otherwise it resumes.
    bool finished() const;
    /// Begins generation `generation` (a re-crawl): the previous one's progress goes — seen set, frontier,
    /// host lines, kept records, counters, seed position — and the hosts, the definition and the fetch
    /// history stay. One atomic, synced write: a kill leaves either generation whole.
    void begin_generation(std::uint32_t generation);
    /// Every fetch history entry (key `F`), ordered by URL: (url, encode(fetch_history)).
    void
    for_each_history(const std::function<void(std::string_view url, std::string_view bytes)>& each) const;

    /// What a re-crawl over this state begins with (docs/RECRAWL.md, "Memory during a re-crawl"), read in
    /// one pass over the history.
    struct recrawl_history {
        /// Entries of an earlier generation (not fetched in `generation` yet); not counted in continuous
        /// mode.
        std::size_t known = 0;
        /// Set when the history stays in the store (a one-shot re-crawl whose history has outlinks): the
        /// outlink fingerprints of the known URLs not in `seen` (not admitted yet). The outlink index (key
        /// `O`) is built again for them.
        std::optional<fingerprint_set> not_admitted;
        /// Otherwise, those entries themselves (a history written without outlinks admits every known URL
        /// at once).
        history_map whole;
        /// Continuous mode: the schedule stays in the store, in its due-time index (key `D`, built first
        /// when the state has none); nothing else is read.
        bool due_indexed = false;
    };
    /// `seed`: the crawl's fingerprint seed, for `seen`. Throws crawl_error (store_damaged) for an entry
    /// that does not decode.
    recrawl_history load_history(std::uint32_t generation, bool continuous, std::uint64_t seed,
                                 const fingerprint_set& seen);
    /// Continuous mode's due-time index from `from` on: up to `count` keys in order, each with the URL's
    /// entry without its outlinks (nullopt when it has none any more).
    std::vector<std::pair<due_key, std::optional<fetch_history>>> read_due(const due_key& from,
                                                                           std::size_t count) const;
    /// The entries of `urls` (key `F`) in the same order; nullopt for a URL without one.
    std::vector<std::optional<fetch_history>> read_history(const std::vector<std::string>& urls) const;
    /// The entries of the URLs the outlink index names by `fps`, in the same order, without their own
    /// outlinks: (url, entry), or nullopt for a fingerprint the index does not know or whose URL has no
    /// entry any more.
    std::vector<std::optional<std::pair<std::string, fetch_history>>>
    read_indexed_history(const std::vector<std::uint64_t>& fps) const;
    /// The entries of an earlier generation than `generation` (not fetched in it), robots.txt's left out,
    /// without their outlinks, in URL order: those among the `limit` entries after the URL `after` (empty:
    /// from the first), a chunk at a time so that a wrap-up holds only what it keeps.
    struct history_chunk {
        std::vector<std::pair<std::string, fetch_history>> entries;
        /// Where the next chunk starts (after this URL); nullopt: the history is read to its end.
        std::optional<std::string> next_after;
    };
    history_chunk history_before(std::uint32_t generation, std::string_view after = {},
                                 std::size_t limit = std::numeric_limits<std::size_t>::max()) const;

    /// Bytes the directory holds (a benchmark figure).
    std::uint64_t disk_bytes() const;

private:
    void build_due_index();
    struct impl;
    explicit state_store(std::unique_ptr<impl> impl);
    std::unique_ptr<impl> impl_;
};

} // namespace asiocrawl::detail
