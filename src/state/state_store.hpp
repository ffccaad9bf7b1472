// Where a durable crawl keeps its state: one directory, an embedded RocksDB database inside it. Every call
// blocks on disk, so the crawler makes them on its storage thread, never on its executor.
#pragma once

#include "state/fingerprint_set.hpp"
#include "state/state_batch.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
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

class state_store {
public:
    /// Opens (creating when absent) the state in `dir`. Throws state_error with a message meant for a user:
    /// a directory that holds something else, a newer or older format, or a damaged database.
    static std::unique_ptr<state_store> open(const std::filesystem::path& dir);
    /// Removes a state directory's contents (--state-reset). Refuses, with state_error, a non-empty
    /// directory that is not a crawl state.
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
    void write(const state_batch& batch, bool sync);

    /// Up to `count` waiting URLs of `host` from sequence `from_seq` on, in order: (seq, encoded item).
    std::vector<std::pair<std::uint64_t, std::string>> read_waiting(host_id host, std::uint64_t from_seq,
                                                                    std::size_t count);

    /// Every kept record, ordered by URL: (url, encode(record)).
    void for_each_record(const std::function<void(std::string_view url, std::string_view bytes)>& each) const;

    /// Bytes the directory holds (a benchmark figure).
    std::uint64_t disk_bytes() const;

private:
    struct impl;
    explicit state_store(std::unique_ptr<impl> impl);
    std::unique_ptr<impl> impl_;
};

} // namespace asiocrawl::detail
