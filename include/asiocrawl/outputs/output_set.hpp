// Every output of output_config behind one object: the CLI (or any embedder) builds it, attaches it to the
// crawler, starts it, stops it when the crawl completes and finishes it after the io_context returns.
#pragma once

#include <asiocrawl/crawler.hpp>
#include <asiocrawl/error.hpp>
#include <asiocrawl/outputs/files.hpp>
#include <asiocrawl/outputs/output_config.hpp>
#include <asiocrawl/report.hpp>
#include <asiocrawl/sink.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace asiocrawl::outputs {

/// Opens what `config` asks for — JSON Lines records (records), WARC (warc.path), saved pages (save_dir), the
/// metrics endpoint (metrics_listen), the progress line (when a progress writer is given) and the JSON
/// summary (report_json) — and connects them to a crawler's sinks. The CDXJ indexes (cdxj) and the WACZ
/// package (wacz) are made by finish(), from the closed WARC files (asiocrawl/outputs/archive.hpp). `report`
/// (the text report) is the caller's business and is ignored. Every file output is written by a writer thread
/// of its own (one background-writer class for all), bounded and with back-pressure. An output whose write
/// fails (a full disk) ends at its last whole record, takes nothing more, and stops the attached crawl
/// (crawler::stop(), and an error in the log): finish() reports the failure.
///
/// Sequence, all on the crawler's executor except finish():
///   output_set out{ex, app.output, log, progress_writer};   // throws crawl_error if one cannot be opened
///   out.attach(crawl, my_record_sink, my_busy);             // before async_run
///   out.start();                                            // metrics server + progress timer
///   crawl.async_run([&](auto e, report r) { out.stop(); ... });   // stop() lets the io_context run dry
///   ctx.run();  out.finish(result);                         // drains writer threads, writes report_json
class output_set {
public:
    /// `progress_writer`: receives the progress line's bytes for stderr (see progress_reporter); empty: no
    /// progress line. Decide with progress_enabled(config.progress, isatty(2), quiet), and say with
    /// `progress_on_terminal` whether stderr is a terminal (else plain lines, no terminal codes).
    ///
    /// `config.mode` says what happens to outputs that exist (see open_mode); parent directories are
    /// created. Under create_new every existing output is checked before anything is created, and all of
    /// them are named in one failure. Throws crawl_error (asiocrawl/error.hpp), as crawler's constructor
    /// does: code() error::output_exists for outputs that exist under create_new, error::output_unavailable
    /// for an output that cannot be opened (a path that cannot be created or written, a listen address that
    /// does not parse or is in use); detail() names the outputs (the key and the path). What the
    /// constructor created before a failure is removed again.
    output_set(boost::asio::any_io_executor executor, const output_config& config, logger log = {},
               std::function<void(std::string)> progress_writer = {}, bool progress_on_terminal = true);
    /// Stops the server and the timer without a summary line; writer threads are drained and joined.
    /// Prefer finish(), which reports failures.
    ~output_set();
    output_set(const output_set&) = delete;
    output_set& operator=(const output_set&) = delete;

    /// Installs the record, body and exchange sinks and back-pressure on `crawl` (only those an output
    /// needs): crawl.notify_drained() is called, from a writer thread, whenever the set stops being busy,
    /// and crawl.set_output_flush() gets flush() (fsync only when the crawl's state.fsync asks; without it,
    /// written with write(2), which a killed process cannot lose).
    /// The crawler has one record sink: `also` is called first for every record, so the caller's own sink
    /// keeps working; `also_busy` is or-ed into the back-pressure (the caller then calls
    /// crawl.notify_drained() when it turns false). Call before async_run. Saved pages
    /// follow the crawl's accept/reject rules as wget does: a page fetched only to be traversed (an HTML
    /// page whose name they reject) is not stored.
    void attach(crawler& crawl, record_sink also = {}, std::function<bool()> also_busy = {});

    /// Starts the metrics server and the progress timer. Call on the executor after attach().
    void start();

    /// Stops the metrics server and the progress timer (writing the progress summary line), so the
    /// io_context can run out of work. Call on the executor when async_run completes. Idempotent.
    void stop();

    /// Drains and closes every writer (blocking until their threads are done) and writes the JSON summary,
    /// with the broken links seen. Call once, after the io_context has returned (or at least after stop()).
    /// Returns one message per output that failed (empty when everything was written).
    std::vector<std::string> finish(const report& final_report);

    /// The crawl was refused before it began (its state directory is another crawl's, or damaged, or
    /// full): closes every writer and removes what the constructor created — files, and a save directory
    /// it made that is still empty — so that a refused run leaves no output behind (files that existed
    /// are left as opening found or repaired them). Returns false, removing nothing, when anything was
    /// handed to an output already or finish() was called: call finish() then. Call instead of finish(),
    /// after the io_context has returned.
    bool discard();

    /// A durability barrier: `done` runs once everything handed to every output before this call has been
    /// written with write(2) — records, WARC records, saved pages — and, with `sync`, fsync'd (saved pages
    /// with their directories). `done` receives "" or the first write failure of any output. It runs on
    /// one of the writer threads (the last one to get there), or inline when no output has a writer
    /// thread: post to your executor from it. Call on the executor, before finish().
    void flush(std::function<void(const std::string& error)> done, bool sync = false);

    /// True from when a writer thread fell behind by more than its queue limit until every writer is back
    /// under half of its limit (what attach() installs as back-pressure).
    bool busy() const noexcept;

    /// `on_drained` is called, on a writer thread, each time busy() turns false (after the attached
    /// crawler's notify_drained()). Post to your executor from it; check busy() again there (another writer
    /// may be behind by then).
    void set_on_drained(std::function<void()> on_drained);

    /// What opening found and repaired (append mode: a torn JSON Lines line cut, a WARC file's torn tail
    /// cut), one line each; also logged as warnings.
    std::vector<std::string> notes() const;

    /// Where the metrics server listens (to print it, or for tests); nullopt without one.
    std::optional<boost::asio::ip::tcp::endpoint> metrics_endpoint() const;

    /// WARC files written so far.
    std::vector<std::string> warc_files() const;

private:
    // flush(), and with `take_archived` the crawl's flush, which hands on where the WARC put its captures.
    void flush_impl(crawler::output_flush_done done, bool sync, bool take_archived);

    struct impl;
    std::unique_ptr<impl> impl_;
};

} // namespace asiocrawl::outputs
