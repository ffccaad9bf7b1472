#include "policy/backoff.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

using asiocrawl::is_retryable_status;
using asiocrawl::parse_retry_after;
using asiocrawl::retry_config;
using asiocrawl::retry_wait;
using namespace std::chrono;
using namespace std::chrono_literals;

namespace {

// 1994-11-06 08:49:00 GMT, 37 s before the RFC 9110 example date.
const system_clock::time_point rfc_now = sys_days{1994y / November / 6} + 8h + 49min;
const system_clock::time_point recent_now = sys_days{2026y / November / 22} + 12h;

struct retry_after_case {
    std::string value;
    system_clock::time_point now;
    std::optional<milliseconds> expected;
};

const retry_after_case retry_after_cases[] = {
    {"120", rfc_now, 120s},
    {"0", rfc_now, 0s},
    {" \t7 ", rfc_now, 7s},
    {"0000000000000000000000000000042", rfc_now, 42s},
    {"99999999999999999999999999999", rfc_now,
     milliseconds(std::numeric_limits<milliseconds::rep>::max() / 1000 * 1000)},
    // The three HTTP-date forms of RFC 9110 §5.6.7.
    {"Sun, 06 Nov 1994 08:49:37 GMT", rfc_now, 37s},
    {"Sunday, 06-Nov-94 08:49:37 GMT", rfc_now, 37s},
    {"Sun Nov  6 08:49:37 1994", rfc_now, 37s},
    {"Wed Nov 16 08:49:37 1994", rfc_now, days(10) + 37s},
    {"Sun, 06 Nov 1994 08:49:00 GMT", rfc_now, 0s},
    {"Sat, 05 Nov 1994 08:49:37 GMT", rfc_now, 0s},
    {"Thu, 01 Jan 1970 00:00:00 GMT", recent_now, 0s},
    {"Sun, 31 Dec 1995 23:59:60 GMT", rfc_now,
     duration_cast<milliseconds>(sys_days{1996y / January / 1} - rfc_now)},
    {"Fri, 31 Dec 9999 23:59:59 GMT", recent_now,
     time_point_cast<milliseconds>(sys_days{9999y / December / 31}) + 23h + 59min + 59s -
         time_point_cast<milliseconds>(recent_now)},
    {"Tue, 29 Feb 2028 00:00:00 GMT", recent_now,
     duration_cast<milliseconds>(sys_days{2028y / February / 29} - recent_now)},
    // Two-digit years: more than 50 years ahead means the previous century.
    {"Friday, 01-Jan-27 00:00:00 GMT", recent_now,
     duration_cast<milliseconds>(sys_days{2027y / January / 1} - recent_now)},
    {"Monday, 01-Jan-76 00:00:00 GMT", recent_now,
     duration_cast<milliseconds>(sys_days{2076y / January / 1} - recent_now)},
    {"Monday, 01-Jan-77 00:00:00 GMT", recent_now, 0s},
    // Unparsable.
    {"", rfc_now, std::nullopt},
    {"   ", rfc_now, std::nullopt},
    {"soon", rfc_now, std::nullopt},
    {"-5", rfc_now, std::nullopt},
    {"1.5", rfc_now, std::nullopt},
    {"12abc", rfc_now, std::nullopt},
    {"Sun, 06 Nov 1994 08:49:37 PST", rfc_now, std::nullopt},
    {"Sun, 06 Nov 1994 08:49:37 GMT trailing", rfc_now, std::nullopt},
    {"sun, 06 Nov 1994 08:49:37 GMT", rfc_now, std::nullopt},
    {"Sun, 06 nov 1994 08:49:37 GMT", rfc_now, std::nullopt},
    {"Sun,06 Nov 1994 08:49:37 GMT", rfc_now, std::nullopt},
    {"Sun, 6 Nov 1994 08:49:37 GMT", rfc_now, std::nullopt},
    {"Sun, 06 Nov 94 08:49:37 GMT", rfc_now, std::nullopt},
    {"Sunday, 06 Nov 1994 08:49:37 GMT", rfc_now, std::nullopt},
    {"Sun, 06-Nov-94 08:49:37 GMT", rfc_now, std::nullopt},
    {"Sun Nov 6 08:49:37 1994", rfc_now, std::nullopt},
    {"Sun, 31 Feb 1994 08:49:37 GMT", rfc_now, std::nullopt},
    {"Sun, 29 Feb 2027 08:49:37 GMT", rfc_now, std::nullopt},
    {"Sun, 00 Nov 1994 08:49:37 GMT", rfc_now, std::nullopt},
    {"Sun, 06 Nov 1994 24:00:00 GMT", rfc_now, std::nullopt},
    {"Sun, 06 Nov 1994 08:60:00 GMT", rfc_now, std::nullopt},
    {"Sun, 06 Nov 1994 08:49:61 GMT", rfc_now, std::nullopt},
    {"Sun, 06 Nov 1994 8:49:37 GMT", rfc_now, std::nullopt},
    {"Sun, 06 Nov 1994 08:49:37", rfc_now, std::nullopt},
    {std::string("Sun, 06 Nov 1994 08:49:37 GMT\0", 30), rfc_now, std::nullopt},
    {"\xFF\xFE garbage", rfc_now, std::nullopt},
};

retry_config config(milliseconds initial, double multiplier, double jitter, milliseconds max) {
    retry_config c;
    c.initial_backoff = initial;
    c.multiplier = multiplier;
    c.jitter = jitter;
    c.max_backoff = max;
    return c;
}

struct wait_case {
    std::string name;
    retry_config config;
    int attempts_made;
    std::optional<std::string_view> retry_after;
    double random01;
    milliseconds expected;
};

const double nan = std::numeric_limits<double>::quiet_NaN();
const retry_config plain = config(500ms, 2.0, 0.0, 60s);
const retry_config jittered = config(500ms, 2.0, 0.5, 60s);

const wait_case wait_cases[] = {
    {"first retry", plain, 1, std::nullopt, 0.3, 500ms},
    {"second", plain, 2, std::nullopt, 0.3, 1000ms},
    {"third", plain, 3, std::nullopt, 0.3, 2000ms},
    {"seventh", plain, 7, std::nullopt, 0.3, 32000ms},
    {"eighth reaches the cap", plain, 8, std::nullopt, 0.3, 60s},
    {"attempts 0 counts as 1", plain, 0, std::nullopt, 0.3, 500ms},
    {"negative attempts count as 1", plain, -5, std::nullopt, 0.3, 500ms},
    {"overflow: 10^999", config(500ms, 10.0, 0.0, 60s), 1000, std::nullopt, 0.3, 60s},
    {"overflow: int max attempts", config(500ms, 10.0, 0.5, 60s), std::numeric_limits<int>::max(),
     std::nullopt, 0.99, 59'700ms},
    {"overflow: multiplier 1e308", config(500ms, 1e308, 0.0, 60s), 3, std::nullopt, 0.3, 60s},
    {"overflow: unbounded cap", config(500ms, 10.0, 0.0, milliseconds::max()), 1000, std::nullopt, 0.3,
     milliseconds::max()},
    {"zero initial stays zero", config(0ms, 10.0, 0.0, 60s), 1000, std::nullopt, 0.3, 0ms},
    {"negative initial is zero", config(-5ms, 2.0, 0.0, 60s), 3, std::nullopt, 0.3, 0ms},
    {"negative cap is zero", config(500ms, 2.0, 0.0, -1s), 3, std::nullopt, 0.3, 0ms},
    {"multiplier below 1 is 1", config(500ms, 0.5, 0.0, 60s), 5, std::nullopt, 0.3, 500ms},
    {"NaN multiplier is 1", config(500ms, nan, 0.0, 60s), 5, std::nullopt, 0.3, 500ms},
    // Jitter: uniform in [w (1 - jitter), w).
    {"jitter, random 0", jittered, 1, std::nullopt, 0.0, 250ms},
    {"jitter, random 0.5", jittered, 1, std::nullopt, 0.5, 375ms},
    {"jitter, random just below 1", jittered, 3, std::nullopt, 0.999999, 1999ms},
    {"jitter at the cap", jittered, 20, std::nullopt, 0.0, 30s},
    {"full jitter", config(500ms, 2.0, 1.0, 60s), 3, std::nullopt, 0.0, 0ms},
    {"jitter above 1 is 1", config(500ms, 2.0, 7.0, 60s), 3, std::nullopt, 0.0, 0ms},
    {"NaN jitter is 0", config(500ms, 2.0, nan, 60s), 3, std::nullopt, 0.0, 2000ms},
    {"random above 1 is 1", jittered, 3, std::nullopt, 1.5, 2000ms},
    {"negative random is 0", jittered, 3, std::nullopt, -1.0, 1000ms},
    {"NaN random is 0", jittered, 3, std::nullopt, nan, 1000ms},
    // Retry-After replaces a shorter backoff, never a longer one, and is capped too.
    {"Retry-After longer", plain, 1, "10", 0.3, 10s},
    {"Retry-After shorter", plain, 3, "1", 0.3, 2000ms},
    {"Retry-After zero", plain, 1, "0", 0.3, 500ms},
    {"Retry-After above the cap", plain, 1, "3600", 0.3, 60s},
    {"Retry-After huge", plain, 1, "99999999999999999999999", 0.3, 60s},
    {"Retry-After date", plain, 1, "Sun, 06 Nov 1994 08:49:37 GMT", 0.3, 37s},
    {"Retry-After date in the past", plain, 2, "Sun, 06 Nov 1994 08:00:00 GMT", 0.3, 1000ms},
    {"Retry-After unparsable", plain, 2, "later", 0.3, 1000ms},
    {"Retry-After empty", plain, 2, "", 0.3, 1000ms},
};

} // namespace

TEST(backoff, retryable_statuses) {
    EXPECT_TRUE(is_retryable_status(429));
    EXPECT_TRUE(is_retryable_status(503));
    for (int status : {0, 200, 301, 404, 408, 425, 500, 502, 504, 599})
        EXPECT_FALSE(is_retryable_status(status)) << status;
}

TEST(backoff, parse_retry_after) {
    for (const auto& c : retry_after_cases) {
        SCOPED_TRACE(c.value);
        EXPECT_EQ(parse_retry_after(c.value, c.now), c.expected);
    }
}

TEST(backoff, retry_after_date_rounds_up_to_milliseconds) {
    const auto now = rfc_now + 36s + 999'999us + 1ns;
    EXPECT_EQ(parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", now), 1ms);
}

TEST(backoff, retry_wait) {
    for (const auto& c : wait_cases) {
        SCOPED_TRACE(c.name);
        EXPECT_EQ(retry_wait(c.config, c.attempts_made, c.retry_after, rfc_now, c.random01), c.expected);
    }
}

TEST(backoff, jitter_stays_within_its_range) {
    for (int attempt = 1; attempt <= 10; ++attempt) {
        const auto full = retry_wait(plain, attempt, std::nullopt, rfc_now, 0.0);
        for (double r = 0.0; r < 1.0; r += 0.0625) {
            const auto wait = retry_wait(jittered, attempt, std::nullopt, rfc_now, r);
            EXPECT_GE(wait, full / 2) << attempt << " " << r;
            EXPECT_LE(wait, full) << attempt << " " << r;
        }
    }
}
