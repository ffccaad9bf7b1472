// `asiocrawl index FILE.warc[.gz]...`: the CDXJ index of WARC files on stdout.
#pragma once

namespace asiocrawl::cli {

/// argv[0] is "index"; the rest are WARC files. Prints their response, revisit and resource records as CDXJ
/// lines, all files' lines sorted together in byte order (as pywb's cdxj-indexer --sort). Returns 0, 1 when
/// a file cannot be read or is not WARC (its error on stderr), 2 for a usage error.
int index_command(int argc, char* argv[]);

} // namespace asiocrawl::cli
