// The adaptive revisit schedule (the reasons for its rules are in the header).
#include "policy/revisit_schedule.hpp"

#include "state/varint.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace asiocrawl {
namespace {

using std::chrono::seconds;
using std::chrono::sys_seconds;

// How far from the epoch a stored time may be: far beyond any real date, far below overflow.
constexpr std::int64_t time_limit = std::int64_t{1} << 40;
// A sitemap date this far after the reading is wrong (a clock or a zone mistake), not news.
constexpr seconds lastmod_slack = std::chrono::hours(24);

// interval × factor, rounded, moving at least one second in the factor's direction.
seconds scaled(seconds interval, double factor) {
    const double product = std::round(static_cast<double>(interval.count()) * factor);
    // Anything beyond the limit is clamped by the caller; keep the conversion in range.
    const auto limited = std::min(product, static_cast<double>(revisit_interval_limit.count()));
    const seconds result{static_cast<seconds::rep>(std::max(limited, 0.0))};
    if (factor > 1)
        return std::max(result, interval + seconds(1));
    return std::min(result, interval - seconds(1));
}

} // namespace

revisit_settings settings_of(const revisit_config& config) {
    using std::chrono::duration_cast;
    using std::chrono::seconds;
    return {duration_cast<seconds>(config.min), duration_cast<seconds>(config.max),
            duration_cast<seconds>(config.initial), config.grow, config.shrink};
}

std::vector<config_problem> validate(const revisit_settings& settings) {
    std::vector<config_problem> problems;
    if (settings.min < seconds(1))
        problems.push_back(config_problem::about("revisit.min must be at least 1 second"));
    if (settings.max < settings.min)
        problems.push_back(config_problem::about("revisit.max must not be shorter than revisit.min"));
    else if (settings.max > revisit_interval_limit)
        problems.push_back(config_problem::about("revisit.max must not be longer than 3650 days"));
    if (!(settings.grow > 1 && settings.grow <= 2))
        problems.push_back(config_problem::about("revisit.grow must be above 1 and at most 2"));
    if (!(settings.shrink >= 0.5 && settings.shrink < 1))
        problems.push_back(config_problem::about("revisit.shrink must be at least 0.5 and below 1"));
    return problems;
}

revisit_schedule::revisit_schedule(const revisit_settings& settings)
    : settings_(settings) {
    const auto problems = validate(settings);
    if (!problems.empty())
        throw std::invalid_argument(problems.front().message);
}

seconds revisit_schedule::clamp(seconds interval) const noexcept {
    return std::clamp(interval, settings_.min, settings_.max);
}

seconds revisit_schedule::interval_for(sitemap_changefreq changefreq) const noexcept {
    using namespace std::chrono;
    switch (changefreq) {
    case sitemap_changefreq::always:
        return settings_.min;
    case sitemap_changefreq::hourly:
        return clamp(hours(1));
    case sitemap_changefreq::daily:
        return clamp(days(1));
    case sitemap_changefreq::weekly:
        return clamp(weeks(1));
    case sitemap_changefreq::monthly:
        return clamp(days(30));
    case sitemap_changefreq::yearly:
        return clamp(days(365));
    case sitemap_changefreq::never:
        break;
    }
    return settings_.max;
}

revisit_entry revisit_schedule::next_visit(const std::optional<revisit_entry>& previous,
                                           revisit_change change, const sitemap_hints& hints,
                                           sys_seconds now) const {
    revisit_entry next;
    next.fetched = now;
    if (change == revisit_change::gone) {
        next.interval = settings_.max;
        next.due = now + next.interval;
        return next;
    }
    if (!previous) {
        // The first interval, whatever the first visit found: there is nothing to compare it with yet.
        next.interval = hints.changefreq ? interval_for(*hints.changefreq) : clamp(settings_.initial);
        change = change == revisit_change::failed ? change : revisit_change::added;
    } else {
        // Clamped again: the settings may have changed since the entry was written.
        next.interval = clamp(previous->interval);
    }
    switch (change) {
    case revisit_change::changed:
        next.interval = clamp(scaled(next.interval, settings_.shrink));
        break;
    case revisit_change::unchanged:
        next.interval = clamp(scaled(next.interval, settings_.grow));
        break;
    case revisit_change::failed: {
        const std::uint32_t before = previous ? previous->failures : 0;
        next.failures = before == std::numeric_limits<std::uint32_t>::max() ? before : before + 1;
        // min × 2^(failures - 1), computed in floating point so that many failures saturate.
        const double wait = static_cast<double>(settings_.min.count()) *
                            std::exp2(static_cast<double>(std::min<std::uint32_t>(next.failures - 1, 64)));
        const auto capped = std::min(wait, static_cast<double>(next.interval.count()));
        next.due = now + seconds(static_cast<seconds::rep>(capped));
        return next;
    }
    case revisit_change::added:
    case revisit_change::gone:
        break;
    }
    next.due = now + next.interval;
    return next;
}

revisit_entry revisit_schedule::with_sitemap_hints(const revisit_entry& entry, const sitemap_hints& hints,
                                                   sys_seconds now) const {
    if (!hints.lastmod || *hints.lastmod <= entry.fetched || *hints.lastmod > now + lastmod_slack)
        return entry;
    revisit_entry next = entry;
    next.due = std::min(entry.due, std::max(now, entry.fetched + settings_.min));
    return next;
}

std::string encode_revisit_entry(const revisit_entry& entry) {
    std::string out;
    detail::put_varint(out, static_cast<std::uint64_t>(entry.interval.count()));
    detail::put_varint(out, detail::zigzag(entry.fetched.time_since_epoch().count()));
    detail::put_varint(out, static_cast<std::uint64_t>((entry.due - entry.fetched).count()));
    detail::put_varint(out, entry.failures);
    return out;
}

std::optional<revisit_entry> decode_revisit_entry(std::string_view bytes) {
    detail::varint_reader in(bytes);
    const auto interval = in.varint();
    const auto fetched = in.varint();
    const auto wait = in.varint();
    const auto failures = in.varint();
    const auto limit = static_cast<std::uint64_t>(revisit_interval_limit.count());
    if (!interval || !fetched || !wait || !failures || !in.at_end() || *interval > limit || *wait > limit ||
        *failures > std::numeric_limits<std::uint32_t>::max())
        return std::nullopt;
    const auto since_epoch = detail::unzigzag(*fetched);
    if (since_epoch > time_limit || since_epoch < -time_limit)
        return std::nullopt;
    revisit_entry entry;
    entry.interval = seconds(static_cast<seconds::rep>(*interval));
    entry.fetched = sys_seconds(seconds(since_epoch));
    entry.due = entry.fetched + seconds(static_cast<seconds::rep>(*wait));
    entry.failures = static_cast<std::uint32_t>(*failures);
    return entry;
}

} // namespace asiocrawl
