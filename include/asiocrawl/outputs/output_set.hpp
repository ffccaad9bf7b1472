// Every output of output_config behind one object: the CLI (or any embedder) builds it, attaches it to the
// crawler, starts it, stops it when the crawl completes and finishes it after the io_context returns.
#pragma once

#include <asiocrawl/config.hpp>
#include <asiocrawl/crawler.hpp>
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

/// Opens what `config` asks for — WARC (warc.path), saved pages (save_dir), the metrics endpoint
/// (metrics_listen), the progress line (when a progress writer is given) and the JSON summary (report_json)
/// — and connects them to a crawler's sinks. records/report are the CLI's own business and are ignored.
///
/// Sequence, all on the crawler's executor except finish():
///   output_set out{ex, app.output, log, progress_writer};   // throws if a file or the port cannot be opened
///   out.attach(crawl, my_record_sink, my_busy);             // before async_run
///   out.start();                                            // metrics server + progress timer
///   crawl.async_run([&](auto e, report r) { out.stop(); ... });   // stop() lets the io_context run dry
///   ctx.run();  out.finish(result);                         // drains writer threads, writes report_json
class output_set {
public:
    /// `progress_writer`: receives terminal bytes for stderr (see progress_reporter); empty: no progress
    /// line. Decide with progress_enabled(config.progress, isatty(2), quiet). Throws std::runtime_error /
    /// std::filesystem::filesystem_error / boost::system::system_error / std::invalid_argument naming the
    /// output that cannot be opened.
    output_set(boost::asio::any_io_executor executor, const output_config& config, logger log = {},
               std::function<void(std::string)> progress_writer = {});
    /// Stops the server and the timer without a summary line; writer threads are drained and joined (their
    /// destructors close the files). Prefer finish(), which reports failures.
    ~output_set();
    output_set(const output_set&) = delete;
    output_set& operator=(const output_set&) = delete;

    /// Installs the record, body and exchange sinks and back-pressure on `crawl` (only those an output
    /// needs). The crawler has one record sink: `also` is called first for every record, so the CLI's own
    /// sink (JSON Lines) keeps working; `also_busy` is or-ed into the back-pressure. Call before async_run.
    void attach(crawler& crawl, record_sink also = {}, std::function<bool()> also_busy = {});

    /// Starts the metrics server and the progress timer. Call on the executor after attach().
    void start();

    /// Stops the metrics server and the progress timer (writing the progress summary line), so the
    /// io_context can run out of work. Call on the executor when async_run completes. Idempotent.
    void stop();

    /// Drains and closes the WARC and saved-page writers (blocking until their threads are done) and writes
    /// the JSON summary. Call once, after the io_context has returned (or at least after stop()). Returns one
    /// message per output that failed (empty when everything was written).
    std::vector<std::string> finish(const report& final_report);

    /// True while a writer thread is behind (what attach() installs as back-pressure).
    bool busy() const noexcept;

    /// Where the metrics server listens (to print it, or for tests); nullopt without one.
    std::optional<boost::asio::ip::tcp::endpoint> metrics_endpoint() const;

    /// WARC files written so far.
    std::vector<std::string> warc_files() const;

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

} // namespace asiocrawl::outputs
