// `asiocrawl report --redis URL --crawl-id ID`: the combined report of a shared crawl (docs/DEPLOY.md),
// from the counters every instance keeps in Redis, printed while the crawl runs or after it ended.
#pragma once

namespace asiocrawl::cli {

/// argv[0] is "report". Returns the exit status: 0 printed, 2 a usage error or Redis unreachable.
int shared_report_command(int argc, char* argv[]);

} // namespace asiocrawl::cli
