// Archive-grade outputs built on finished WARC files: a CDXJ index per WARC file (what pywb and
// replayweb.page look captures up in) and a WACZ 1.1.1 package of the whole crawl (WARCs, index, page list,
// datapackage.json). Both read the WARC files back from disk once they are closed, so they index exactly what
// is there, whatever wrote it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace asiocrawl::outputs {

// ---- sans-io pieces ----

/// The SURT sort key of `url` as pywb's (the `surt` package's) defaults make it: no scheme, the host lower
/// case without a leading "www." (or "www2." ...) and with its labels reversed and joined by commas, the port
/// when it is not the scheme's default, then ")" and the path and query lower case, the path without a
/// trailing slash (but "/" for an empty one), the query's parameters sorted and an empty query dropped; no
/// user info, no fragment. "http://www.Example.com:8080/A/?b=2&a=1#x" gives "com,example:8080)/a?a=1&b=2".
/// A URL without "//" authority (dns:, mailto:) is returned as it is.
std::string surt_key(std::string_view url);

/// "20240501123456" from a WARC-Date "2024-05-01T12:34:56.123456Z" (its digits, the first 14). Empty when
/// the date has fewer than 14 digits.
std::string cdx_timestamp(std::string_view warc_date);

/// One indexed WARC record: a response, revisit or resource record (warcinfo, request and metadata records
/// are not indexed).
struct warc_capture {
    /// "response", "revisit" or "resource".
    std::string type;
    /// WARC-Target-URI.
    std::string url;
    /// WARC-Date as written.
    std::string date;
    /// The HTTP Content-Type's media type, lower case and without parameters ("warc/revisit" for revisit
    /// records, as pywb writes them; a resource record's own Content-Type). Empty when there is none.
    std::string mime;
    /// The HTTP status code ("200"); empty when the block has no status line.
    std::string status;
    /// WARC-Payload-Digest as written ("sha1:BASE32"); empty when the record has none.
    std::string digest;
    /// Where the record starts in the file and how many bytes it takes there: the gzip member's for a
    /// compressed file, the record's (headers, block and the two CRLFs) for a plain one.
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
    /// The text of an HTML page's <title> when it is in the first 64 KiB of an uncompressed body (content
    /// coding identity), entity references &amp; &lt; &gt; &quot; &#39; decoded and blanks collapsed; empty
    /// otherwise.
    std::string title;
};

/// Reads the WARC file at `path` (".gz": one gzip member per record, as WARC writers do and warc_writer
/// writes) and returns its response, revisit and resource records in file order. Memory holds one record's
/// first bytes (at most 64 KiB of headers and body) and the captures. Throws std::runtime_error naming the
/// file and the offset when it cannot be read or is not WARC (a damaged gzip member, a record without
/// Content-Length, a file cut inside a record).
std::vector<warc_capture> index_warc_file(const std::string& path);

/// One CDXJ line (without the newline): "SURTKEY TIMESTAMP14 {json}", the JSON with url, mime, status,
/// digest, length, offset and filename (strings, as cdxj-indexer writes them; keys with an empty value are
/// left out).
std::string cdxj_line(const warc_capture& capture, std::string_view filename);

/// The CDXJ index's file name for a WARC file: the path without ".warc.gz", ".warc" or ".gz" and with
/// ".cdxj" ("a/crawl-00001.warc.gz" -> "a/crawl-00001.cdxj").
std::string cdxj_path_for(const std::string& warc_path);

/// Indexes `warc_path` and writes its CDXJ lines, sorted in byte order (as `LC_ALL=C sort` and pywb's
/// indexer do), to cdxj_path_for(warc_path): written beside as a temporary file and renamed over it, so a
/// reader never sees half an index. The filename field is the WARC file's name without its directory.
/// Returns the captures (for the WACZ page list). Throws std::runtime_error when the WARC cannot be read or
/// the index cannot be written.
std::vector<warc_capture> write_cdxj(const std::string& warc_path);

// ---- WACZ ----

/// True for what the WACZ page list holds: a response record of an HTML page (text/html or
/// application/xhtml+xml) that answered 200.
bool is_archived_page(const warc_capture& capture);

struct wacz_options {
    /// The .wacz file to write (written aside and renamed over it when complete).
    std::string path;
    /// The crawl's WARC files, each with its CDXJ beside it (write_cdxj), in order.
    std::vector<std::string> warc_files;
    /// The captures of each WARC file (what write_cdxj returned, or only those is_archived_page accepts),
    /// same order: the page list's source.
    std::vector<std::vector<warc_capture>> captures;
    /// datapackage.json's mainPageUrl: the page list's page with this URL (the crawl's first root), else
    /// the first page.
    std::string main_page_url;
    /// datapackage.json's title and pages.jsonl's header title.
    std::string title = "asiocrawl crawl";
    /// datapackage.json's software.
    std::string software;
};

/// Packages a crawl as WACZ 1.1.1 (a ZIP file): archive/<each WARC file> stored as it is (not compressed
/// again), indexes/index.cdxj (every CDXJ file merged, sorted, filename fields naming archive/'s files),
/// pages/pages.jsonl (a json-pages-1.0 header, then one line per archived HTML page that answered 200: id,
/// url, ts, title), datapackage.json (profile data-package, wacz_version 1.1.1, every file's name, path,
/// sha256 hash and size, created, software, mainPageUrl, mainPageDate) and datapackage-digest.json (the
/// sha256 of datapackage.json). Two WARC files with the same name (from different directories) are refused.
/// Throws std::runtime_error naming what failed; nothing is left at `path` then.
void write_wacz(const wacz_options& options);

} // namespace asiocrawl::outputs
