// Retry policy: which answers are retried and how long to wait before the next attempt. Sans-io and pure: the
// caller supplies the clock reading and the random number.
#pragma once

#include <asiocrawl/config.hpp>

#include <chrono>
#include <optional>
#include <string_view>

namespace asiocrawl {

/// 429 and 503: the statuses retried (others are answers).
bool is_retryable_status(int status) noexcept;

/// Parses a Retry-After value (RFC 9110 §10.2.3): delta-seconds (digits only; absurdly large values saturate
/// at the largest milliseconds count) or an HTTP-date in any of the three forms of RFC 9110 §5.6.7:
/// IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT"), obsolete RFC 850 ("Sunday, 06-Nov-94 08:49:37 GMT", the
/// two-digit year read as the nearest one not more than 50 years after `now`) and asctime ("Sun Nov  6
/// 08:49:37 1994"). Surrounding whitespace is ignored; names of days and months are case-sensitive as the
/// grammar says, and the day name is not checked against the date. A date not after `now` gives 0; the wait
/// until a later date is rounded up to whole milliseconds. nullopt when unparsable (negative or fractional
/// seconds, impossible dates like Feb 30, other zones than GMT).
std::optional<std::chrono::milliseconds> parse_retry_after(std::string_view value,
                                                           std::chrono::system_clock::time_point now);

/// How long to wait before the next attempt after `attempts_made` attempts (values below 1 count as 1):
/// - the backoff w = initial_backoff × multiplier^(attempts_made − 1), computed in floating point so that
/// huge
///   exponents saturate instead of overflowing, and capped at max_backoff;
/// - jitter: the wait is w × (1 − jitter × (1 − random01)), i.e. uniform in [w × (1 − jitter), w) for
///   random01 uniform in [0, 1); random01 and jitter are clamped into [0, 1];
/// - a parsable `retry_after` (see parse_retry_after) that is longer than that replaces it;
/// - the result is capped by max_backoff, and is never negative.
/// A multiplier below 1 (or NaN) is taken as 1; negative durations in the config as 0.
std::chrono::milliseconds retry_wait(const retry_config& config, int attempts_made,
                                     std::optional<std::string_view> retry_after,
                                     std::chrono::system_clock::time_point now, double random01);

} // namespace asiocrawl
