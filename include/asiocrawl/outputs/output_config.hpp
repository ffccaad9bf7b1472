// What the outputs library writes, as plain aggregates with documented defaults: the `output:` section of the
// CLI's YAML file, and what an embedder hands to output_set. The crawler itself never reads this.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace asiocrawl::outputs {

/// How the CLI shows progress on stderr.
enum class progress_mode {
    /// A self-overwriting line when stderr is a terminal and the log level is not quiet.
    automatic,
    /// Always: on a terminal, a self-overwriting line; elsewhere (a file, a pipe, a container log), one plain
    /// line every few seconds, without carriage returns or terminal codes.
    always,
    never,
};

/// What happens to an output file (records, report_json, WARC files) or save directory that already exists.
enum class open_mode {
    /// Refuse it: output_set's constructor throws crawl_error (error::output_exists), and the CLI exits with
    /// status 2 before any request. A crawl never silently replaces an earlier crawl's results. Files that do
    /// not exist yet are
    /// created, with their parent directories.
    create_new,
    /// Replace files that exist (`--overwrite`); write into an existing save directory.
    overwrite,
    /// Continue an interrupted crawl's outputs (set by the embedder when it resumes a crawl; not a YAML key):
    /// JSON Lines records are appended to (a torn last line is cut first), the WARC series continues in a
    /// new file after the last existing one (which is repaired first when a kill cut it mid-record), the save
    /// directory is written into, and report_json is replaced at the end by the whole crawl's summary.
    append,
};

/// WARC 1.1 output.
struct warc_config {
    /// File name, or a pattern with "{serial}" (00000, 00001, ...) for rotation; ".gz" at the end writes one
    /// gzip member per record. Empty: no WARC. Default empty.
    std::string path;
    /// Start a new file when the current one reaches this size, in bytes. A "{serial}" is added before the
    /// extension when the path has none. Default 1 GB.
    std::uint64_t max_file_bytes = 1'000'000'000;
    /// Write a "revisit" record instead of a second copy when a payload digest repeats. Default true.
    bool revisits = true;
};

/// Where results go: everything the CLI and the container job write besides logs. Parent directories of
/// every path are created.
struct output_config {
    /// JSON Lines file, one record per line ("-": stdout). Empty: none. Default empty.
    std::string records;
    /// The summary (counters, per-status, per-error-kind, timings, broken links) as one JSON document ("-":
    /// stdout). Empty: none. Default empty.
    std::string report_json;
    /// Print the classic text report on stdout at the end (the CLI's business). Default true.
    bool report = true;
    /// WARC archive.
    warc_config warc;
    /// Write a CDXJ index beside each WARC file when the crawl ends (cdxj_path_for: "crawl.warc.gz" gets
    /// "crawl.cdxj"), read back from the finished file. Needs warc.path. Default false.
    bool cdxj = false;
    /// Package the crawl as this WACZ 1.1.1 file when it ends (write_wacz): the WARC files, their CDXJ
    /// indexes (written as with cdxj), the page list and datapackage.json. Needs warc.path. Empty: none.
    /// Default empty.
    std::string wacz;
    /// Store response bodies under DIR/host/path (wget's layout). Empty: none. Default empty.
    std::string save_dir;
    /// host:port for a Prometheus /metrics and /healthz HTTP endpoint. Empty: none. Default empty.
    std::string metrics_listen;
    /// The bearer token the control API on metrics_listen asks of every caller (docs/CONTROL.md). Empty: none
    /// is asked, which output_set refuses on an address other than loopback. Default empty.
    std::string listen_token;
    /// A file whose first line is listen_token (the CLI reads it). Default empty.
    std::string listen_token_file;
    /// Progress line on stderr. Default automatic.
    progress_mode progress = progress_mode::automatic;
    /// How often the progress line is written when stderr is not a terminal (a heartbeat in a log); a
    /// terminal's line is redrawn twice a second. At least 100 ms. Default 5 s.
    std::chrono::milliseconds progress_interval{5000};
    /// Most bytes each file output's writer thread (records, WARC, saved pages) may have waiting: past it
    /// the crawl starts no new fetch until that writer is back under half of it. Memory for outputs is
    /// bounded by this per writer, plus what the fetches in flight bring. At least 1 KiB. Default 64 MiB.
    std::uint64_t queue_limit_bytes = 64u << 20;
    /// What to do with outputs that exist already. YAML/CLI: `output.overwrite` / `--overwrite` choose
    /// between create_new and overwrite; append is for resumed crawls. Default create_new.
    open_mode mode = open_mode::create_new;
};

} // namespace asiocrawl::outputs
