// When continuous mode (--continuous) fetches a URL again: an adaptive revisit schedule. Sans-io and pure:
// the caller passes the clock reading and what the last fetch found, and keeps the returned entry in its
// state (encode_revisit_entry); test/policy/revisit_schedule_test.cpp drives it on a manual clock.
// docs/RECRAWL.md.
//
// The idea is Nutch's AdaptiveFetchSchedule and StormCrawler's AdaptiveScheduler: a page found changed is
// visited sooner next time, one found unchanged later, within [min, max]. What asiocrawl chooses, and why:
// - The interval is multiplied by `shrink` (changed) or `grow` (unchanged), both multiplicative as in Nutch.
//   StormCrawler's shrink, (1 - rate) × interval + rate × min, only approaches min and crawls there slowly.
// - The defaults are symmetric, grow = 1 / shrink (1.25 and 0.8): one visit that finds a change and one that
//   does not cancel out. Nutch's defaults (inc_rate 0.4, dec_rate 0.2: × 1.4 and × 0.8) drift upwards by 12%
//   for every such pair, so a page that changes on every second visit ends at max; with symmetric factors the
//   interval of a page that changes every T settles where about half the visits find a change, near T / 2
//   (it wanders within a few steps of that: each visit moves it by one factor).
// - Factors are kept within [1/2, 2] per visit: Nutch warns that rates above 0.4 destabilize the schedule
//   (one visit's result, which says nothing about how long ago the page changed, then swings the interval
//   more than it is evidence for).
// - min 1 hour (StormCrawler's; Nutch's 1 minute is a polling rate, not a crawl's), max 30 days (between
//   StormCrawler's 14 days and Nutch's 365: every known URL is looked at at least monthly), first interval
//   1 day (StormCrawler's default fetch interval).
// - A sitemap's <changefreq> gives a new page its first interval instead of `initial`; after that the page's
//   own behaviour is the better evidence (many sites write the same changefreq for every page). A <lastmod>
//   later than the last fetch (Nutch's sync_delta idea: the site tells us when the page changed) makes the
//   page due now, but never sooner than min after its last fetch, so a sitemap that lies cannot make a site
//   be fetched in a loop.
// - A failed fetch (5xx, network) says nothing about the page's content: its interval is kept, and it is
//   tried again after min, 2 × min, 4 × min... (the retries within one visit, retry_wait, have already
//   happened), but never later than its interval would have brought it back. A gone page (404, 410) is
//   looked at again after max: pages come back, and the caller decides when to forget one.
#pragma once

#include <asiocrawl/config.hpp>

#include "policy/sitemap.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace asiocrawl {

/// The longest interval (and revisit.max) accepted: ten years. It keeps every sum of times far from overflow.
inline constexpr std::chrono::seconds revisit_interval_limit = std::chrono::days(3650);

/// The config keys `revisit.*` (config/asiocrawl.yaml). Durations in whole seconds.
struct revisit_settings {
    /// The shortest interval between two visits of a URL. Default 1 hour; at least 1 second.
    std::chrono::seconds min = std::chrono::hours(1);
    /// The longest; also the interval of a gone page. Default 30 days; at least min, at most 10 years.
    std::chrono::seconds max = std::chrono::days(30);
    /// The interval after a URL's first fetch (when its sitemap gives no <changefreq>). Default 1 day;
    /// clamped into [min, max].
    std::chrono::seconds initial = std::chrono::days(1);
    /// The interval is multiplied by this when a visit finds the page unchanged. Default 1.25; in (1, 2].
    double grow = 1.25;
    /// And by this when it finds it changed. Default 0.8; in [0.5, 1).
    double shrink = 0.8;
};

/// The schedule's settings from crawler_config::revisit (whole seconds; fractions of a second dropped).
revisit_settings settings_of(const revisit_config& config);

/// One problem per mistake (key "revisit.min", "revisit.max", "revisit.grow", "revisit.shrink"), in field
/// order; empty when usable. revisit_schedule's constructor throws std::invalid_argument with the first one.
std::vector<config_problem> validate(const revisit_settings& settings);

/// What a visit found, as the caller learned it from the fetch (record::change, record::not_modified, error).
enum class revisit_change : std::uint8_t {
    added,     ///< the URL's first fetch (or the first the schedule hears of)
    changed,   ///< another status, redirect target or payload than last time
    unchanged, ///< 304 Not Modified, or the same status and payload digest
    gone,      ///< 404 or 410
    failed,    ///< no answer to compare: a 5xx, a network error, a timeout
};

/// What the state keeps per URL.
struct revisit_entry {
    /// The page's current interval, adapted by what the visits found; within [min, max].
    std::chrono::seconds interval{0};
    /// When the last visit (successful or not) happened.
    std::chrono::sys_seconds fetched{};
    /// When the URL is due again; never before `fetched`.
    std::chrono::sys_seconds due{};
    /// Failed visits in a row; 0 after any answer.
    std::uint32_t failures = 0;

    friend bool operator==(const revisit_entry&, const revisit_entry&) = default;
};

class revisit_schedule {
public:
    /// Throws std::invalid_argument with the first problem validate() names.
    explicit revisit_schedule(const revisit_settings& settings);

    const revisit_settings& settings() const noexcept { return settings_; }

    /// The entry after a visit at `now` that found `change`. `previous` is the URL's entry (nullopt when the
    /// schedule has none yet: then every kind but gone starts from the first interval). `hints` are what the
    /// URL's sitemap says; only its changefreq is read here, and only to seed a URL without an entry.
    revisit_entry next_visit(const std::optional<revisit_entry>& previous, revisit_change change,
                             const sitemap_hints& hints, std::chrono::sys_seconds now) const;

    /// The entry after reading a sitemap at `now` that says `hints` about the URL: when its lastmod is later
    /// than the last visit (and not more than a day after `now`: a date further ahead is taken as wrong),
    /// the URL is due at once, or at `fetched + min` if that is later; an entry already due sooner is kept.
    /// Otherwise the entry as it was.
    revisit_entry with_sitemap_hints(const revisit_entry& entry, const sitemap_hints& hints,
                                     std::chrono::sys_seconds now) const;

    /// The interval a changefreq stands for, clamped into [min, max]: always → min, hourly, daily, weekly,
    /// monthly (30 days), yearly (365 days), never → max.
    std::chrono::seconds interval_for(sitemap_changefreq changefreq) const noexcept;

private:
    std::chrono::seconds clamp(std::chrono::seconds interval) const noexcept;

    revisit_settings settings_;
};

/// The byte form of an entry in the state: four LEB128 varints, the interval in seconds, the visit time
/// (zigzag-encoded seconds since the Unix epoch), due − visit time in seconds, failures. With today's
/// dates 10 bytes (1-hour interval) to 14 bytes (30 days).
std::string encode_revisit_entry(const revisit_entry& entry);

/// Reads what encode_revisit_entry wrote. nullopt for anything else: truncated or trailing bytes, a
/// malformed varint, an interval above revisit_interval_limit, a time more than 2^40 seconds (about 34,800
/// years) from the epoch, a due time more than revisit_interval_limit after the visit.
std::optional<revisit_entry> decode_revisit_entry(std::string_view bytes);

} // namespace asiocrawl
