// The CLI's exit statuses, and how a crawl's failure code maps to one (docs/DEPLOY.md, "Exit status").
#pragma once

#include <boost/system/error_code.hpp>

#include <string_view>

namespace asiocrawl::cli {

/// Exit status of a crawl in which no URL got an HTTP answer: nothing was fetched at all (wget's 4,
/// "network failure", is the closest meaning a shell script already knows).
constexpr int nothing_fetched_status = 4;
/// Exit status when a write failed — an output's or the state directory's (no space left on device, an I/O
/// error) — or a shared crawl's Redis failed (unreachable, out of memory, lost): the one store-failure rule:
/// every file ends at its last whole record, and with a state store the same command resumes the crawl once
/// the cause is gone. Also a run with failures of the --fail-on classes, and a crawl that failed otherwise.
constexpr int failed_status = 1;
/// Exit status of a usage or config error, an output that exists already or cannot be opened, or a state
/// store that refuses this crawl (a state directory of another crawl, in use or damaged; a Redis that
/// refuses the password or holds another definition): refused before anything is fetched.
constexpr int refused_status = 2;

/// What the CLI does with a failure code: the exit status, and how the message line starts after
/// "asiocrawl: " ("" for a refusal, which reads as a usage error; "error: " for a failed write; "error:
/// crawl failed: " for anything unforeseen).
struct exit_rule {
    int status;
    std::string_view prefix;
};

/// The one table from codes (asiocrawl::error's crawl failures, or anything else async_run completes with)
/// to exit statuses.
exit_rule exit_rule_for(const boost::system::error_code& ec) noexcept;

} // namespace asiocrawl::cli
