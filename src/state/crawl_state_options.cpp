// The parts of crawl_state that issue 16 added: budgets (quota, max_time) and seeds read from a file
// (input_file). Kept apart from crawl_state.cpp, which several rooms edit.
#include "state/crawl_state.hpp"

#include "url/url.hpp"
#include "util/human_units.hpp"

#include <algorithm>
#include <utility>

namespace asiocrawl::detail {

// ---- budgets ----

bool crawl_state::out_of_budget() {
    if (budget_spent_)
        return true;
    if (config_.quota > 0 && bytes_ >= config_.quota) {
        budget_spent_ = true;
        result_.stats["stopped_quota"] = 1;
        say(log_level::warning, "quota reached: ", human_bytes(bytes_), " fetched (quota ",
            human_bytes(config_.quota), "): stopping");
    } else if (deadline_ && now_() >= *deadline_) {
        budget_spent_ = true;
        result_.stats["stopped_max_time"] = 1;
        say(log_level::warning, "max_time reached (", human_duration(config_.max_time), "): stopping");
    }
    if (budget_spent_)
        counters_changed_ = true;
    return budget_spent_;
}

// ---- seeds ----

bool crawl_state::wants_seeds(std::size_t unfinished) const {
    // Enough waiting URLs to keep every worker busy for a while; the rest of the file waits in the file.
    const std::size_t low_water = std::max<std::size_t>(1024, 4 * config_.max_tasks);
    return seed_hold_ && !seeds_done_ && !stopping_ && unfinished < low_water;
}

void crawl_state::on_seeds(seed_chunk chunk) {
    // A million bad lines must not become a million log lines: the counter has them all.
    constexpr std::size_t max_seed_warnings = 100;
    const std::string_view file = config_.input_file == "-" ? std::string_view("stdin") : config_.input_file;
    const auto warn = [&](const auto&... parts) {
        if (++seed_warnings_ <= max_seed_warnings)
            say(log_level::warning, file, parts...);
        if (seed_warnings_ == max_seed_warnings)
            say(log_level::warning, file, ": more problems are only counted (skipped_invalid_seed)");
    };
    for (const auto& problem : chunk.problems) {
        skip("invalid_seed");
        warn(": ", problem);
    }
    for (const auto& line : chunk.lines) {
        auto url = parse_root(line.text);
        if (!url) {
            skip("invalid_seed");
            warn(":", line.line, ": not an http(s) URL (", url.error().message(), "), skipped: \"",
                 std::string_view(line.text).substr(0, 200), "\"");
            continue;
        }
        scope_.add_seed(*url);
        admit(*url, {}, config_.max_redirect, 0, item_kind::page, false);
    }
    seed_position_ = chunk.position;
    seed_position_.end = chunk.end;
    if (durable_)
        batch_.seed_position = seed_position_.to_text(); // in the same commit as the seeds it admitted
    if (chunk.end && !seeds_done_) {
        seeds_done_ = true;
        say(log_level::info, file, ": all seeds read (", seed_position_.line - 1, " lines)");
        if (std::exchange(seed_hold_, false))
            hooks_.release();
    }
}

} // namespace asiocrawl::detail
