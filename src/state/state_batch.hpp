// What a durable crawl writes at one commit, and what it reads back when it resumes: plain data between the
// sans-io crawl_state and a state_store.
#pragma once

#include "state/due_index.hpp"
#include "state/frontier.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace asiocrawl::detail {

/// The changes since the previous commit, applied atomically: after a kill, either all of them or none are
/// in the store.
struct state_batch {
    struct waiting_item {
        host_id host;
        std::uint64_t seq;
        std::string item; // encode(work_item)
    };
    /// Hosts first seen since the previous commit, with their numbers.
    std::vector<std::pair<host_id, std::string>> new_hosts;
    /// Fingerprints of the URLs admitted since the previous commit.
    std::vector<std::uint64_t> fingerprints;
    /// URLs that now wait (admitted, or put back with a retry's attempt count).
    std::vector<waiting_item> waiting;
    /// URLs that finished: their record was made, they never wait again.
    std::vector<std::pair<host_id, std::uint64_t>> finished;
    /// Hosts whose line changed: how many of their URLs wait (in flight included) and the sequence their
    /// next URL gets. A resume reads these instead of every waiting URL.
    struct host_line {
        host_id host;
        std::uint64_t waiting;
        std::uint64_t next_seq;
    };
    std::vector<host_line> lines;
    /// Records kept for the classic per-URL report: normalized URL -> encode(record).
    std::vector<std::pair<std::string, std::string>> records;
    /// Fetch history (fetch_history.hpp) of the URLs finished since the last commit: URL -> encode(entry);
    /// empty bytes forget the URL (a re-crawl reported it gone).
    std::vector<std::pair<std::string, std::string>> history;
    /// History entries written only where the URL has none yet (the store looks): a URL a re-crawl over a
    /// state directory reached without an answer (robots.txt denied it, a budget kept it out) keeps its last
    /// answer when it has one (docs/RECRAWL.md, "Memory during a re-crawl"). A local state store only.
    std::vector<std::pair<std::string, std::string>> history_if_absent;
    /// Continuous mode with a state directory: changes to the due-time index (key `D`, due_index.hpp),
    /// applied in order after the history. `present`: the URL waits for its revisit then (written in the
    /// batch that writes its entry); false: it left the index (its revisit was queued, or it was scheduled
    /// again).
    struct due_change {
        due_key key;
        bool present = false;
    };
    std::vector<due_change> due;
    /// Continuous mode in a shared crawl: URLs scheduled for a revisit, each with what the lease script needs
    /// to queue it again when due without decoding its history entry (shared_store, keys `due`, `dueitem`).
    struct shared_revisit {
        std::string url;
        std::int64_t due_ms = 0; ///< since the epoch
        std::string host;
        std::string item; ///< encode(work_item), seq 0
    };
    std::vector<shared_revisit> shared_due;
    /// The crawl's counters as JSON (crawl_state::counters_json); empty when there is nothing to write.
    std::string counters;
    /// How far the seed file has been read (seed_position::to_text), with the seeds admitted in this batch;
    /// empty when it did not move.
    std::string seed_position;
    /// A shared crawl: hosts whose robots.txt set a Crawl-delay (up to robots.max_crawl_delay), for every
    /// instance's leases, where it is a floor under the host's delay.
    std::vector<std::pair<std::string, std::chrono::milliseconds>> host_delays;

    bool empty() const noexcept {
        return new_hosts.empty() && fingerprints.empty() && waiting.empty() && finished.empty() &&
               lines.empty() && records.empty() && history.empty() && history_if_absent.empty() &&
               due.empty() && shared_due.empty() && counters.empty() && seed_position.empty() &&
               host_delays.empty();
    }
};

/// A resumed crawl's state as the store hands it back (the fingerprints go straight into the seen set).
struct restored_state {
    /// Host names by number.
    std::vector<std::string> hosts;
    /// URLs waiting, per host number.
    std::vector<std::size_t> waiting;
    /// Per host number: past the largest sequence in use, where the host's next admitted URL goes.
    std::vector<std::uint64_t> next_seq;
    /// The counters of the runs so far (crawl_state::counters_json); empty for a new crawl.
    std::string counters;
    /// How far the seed file was read (seed_position::to_text); empty when it never was.
    std::string seed_position;
};

} // namespace asiocrawl::detail
