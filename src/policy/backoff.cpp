// Retry policy: Retry-After parsing and the backoff schedule.
#include "policy/backoff.hpp"

#include "util/ascii.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>

namespace asiocrawl {
namespace {

namespace ascii = detail::ascii;
using std::chrono::milliseconds;

constexpr std::array<std::string_view, 7> short_days{"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
constexpr std::array<std::string_view, 7> long_days{"Monday", "Tuesday",  "Wednesday", "Thursday",
                                                    "Friday", "Saturday", "Sunday"};
constexpr std::array<std::string_view, 12> months{"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                  "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

// A left-to-right reader over the fixed-format date grammars; every step fails softly.
class cursor {
public:
    explicit cursor(std::string_view text)
        : text_(text) {}

    bool literal(std::string_view expected) {
        if (!text_.starts_with(expected))
            return false;
        text_.remove_prefix(expected.size());
        return true;
    }

    std::optional<int> digits(std::size_t count) {
        if (text_.size() < count)
            return std::nullopt;
        int value = 0;
        for (std::size_t i = 0; i < count; ++i) {
            if (!ascii::is_digit(text_[i]))
                return std::nullopt;
            value = value * 10 + (text_[i] - '0');
        }
        text_.remove_prefix(count);
        return value;
    }

    template <std::size_t N>
    std::optional<unsigned> one_of(const std::array<std::string_view, N>& names) {
        for (std::size_t i = 0; i < N; ++i) {
            if (literal(names[i]))
                return static_cast<unsigned>(i);
        }
        return std::nullopt;
    }

    bool at_end() const noexcept { return text_.empty(); }

private:
    std::string_view text_;
};

struct clock_time {
    int hour = 0;
    int minute = 0;
    int second = 0;
};

// time-of-day = hour ":" minute ":" second, second 60 allowed for a leap second.
std::optional<clock_time> read_time(cursor& in) {
    const auto hour = in.digits(2);
    if (!hour || !in.literal(":"))
        return std::nullopt;
    const auto minute = in.digits(2);
    if (!minute || !in.literal(":"))
        return std::nullopt;
    const auto second = in.digits(2);
    if (!second || *hour > 23 || *minute > 59 || *second > 60)
        return std::nullopt;
    return clock_time{*hour, *minute, *second};
}

std::optional<milliseconds> to_epoch(int year, unsigned month_index, int day, const clock_time& time) {
    const std::chrono::year_month_day date{std::chrono::year{year}, std::chrono::month{month_index + 1},
                                           std::chrono::day{static_cast<unsigned>(day)}};
    if (!date.ok())
        return std::nullopt;
    const auto midnight = std::chrono::sys_days{date}.time_since_epoch();
    return std::chrono::duration_cast<milliseconds>(midnight) + std::chrono::hours(time.hour) +
           std::chrono::minutes(time.minute) + std::chrono::seconds(time.second);
}

// "Sun, 06 Nov 1994 08:49:37 GMT"
std::optional<milliseconds> imf_fixdate(cursor in) {
    if (!in.one_of(short_days) || !in.literal(", "))
        return std::nullopt;
    const auto day = in.digits(2);
    if (!day || !in.literal(" "))
        return std::nullopt;
    const auto month = in.one_of(months);
    if (!month || !in.literal(" "))
        return std::nullopt;
    const auto year = in.digits(4);
    if (!year || !in.literal(" "))
        return std::nullopt;
    const auto time = read_time(in);
    if (!time || !in.literal(" GMT") || !in.at_end())
        return std::nullopt;
    return to_epoch(*year, *month, *day, *time);
}

// "Sunday, 06-Nov-94 08:49:37 GMT"
std::optional<milliseconds> rfc850_date(cursor in, int current_year) {
    if (!in.one_of(long_days) || !in.literal(", "))
        return std::nullopt;
    const auto day = in.digits(2);
    if (!day || !in.literal("-"))
        return std::nullopt;
    const auto month = in.one_of(months);
    if (!month || !in.literal("-"))
        return std::nullopt;
    const auto two_digit_year = in.digits(2);
    if (!two_digit_year || !in.literal(" "))
        return std::nullopt;
    const auto time = read_time(in);
    if (!time || !in.literal(" GMT") || !in.at_end())
        return std::nullopt;
    // RFC 9110 §5.6.7: a year that looks more than 50 years ahead is the most recent past one instead.
    int year = current_year - current_year % 100 + *two_digit_year;
    if (year > current_year + 50)
        year -= 100;
    return to_epoch(year, *month, *day, *time);
}

// "Sun Nov  6 08:49:37 1994"
std::optional<milliseconds> asctime_date(cursor in) {
    if (!in.one_of(short_days) || !in.literal(" "))
        return std::nullopt;
    const auto month = in.one_of(months);
    if (!month || !in.literal(" "))
        return std::nullopt;
    std::optional<int> day = in.literal(" ") ? in.digits(1) : in.digits(2);
    if (!day || !in.literal(" "))
        return std::nullopt;
    const auto time = read_time(in);
    if (!time || !in.literal(" "))
        return std::nullopt;
    const auto year = in.digits(4);
    if (!year || !in.at_end())
        return std::nullopt;
    return to_epoch(*year, *month, *day, *time);
}

std::optional<milliseconds> delta_seconds(std::string_view value) {
    constexpr std::int64_t most_seconds = std::numeric_limits<milliseconds::rep>::max() / 1000;
    std::int64_t seconds = 0;
    for (char c : value) {
        if (!ascii::is_digit(c))
            return std::nullopt;
        seconds = seconds * 10 + (c - '0');
        if (seconds > most_seconds)
            seconds = most_seconds;
    }
    return milliseconds(seconds * 1000);
}

} // namespace

bool is_retryable_status(int status) noexcept {
    return status == 429 || status == 503;
}

std::optional<milliseconds> parse_retry_after(std::string_view value,
                                              std::chrono::system_clock::time_point now) {
    value = ascii::trim(value, ascii::http_whitespace);
    if (value.empty())
        return std::nullopt;
    if (ascii::is_digit(value.front()))
        return delta_seconds(value);

    const auto now_ms = std::chrono::floor<milliseconds>(now.time_since_epoch());
    const std::chrono::year_month_day today{std::chrono::floor<std::chrono::days>(now)};
    auto date = imf_fixdate(cursor(value));
    if (!date)
        date = rfc850_date(cursor(value), static_cast<int>(today.year()));
    if (!date)
        date = asctime_date(cursor(value));
    if (!date)
        return std::nullopt;
    return std::max(*date - now_ms, milliseconds(0));
}

milliseconds retry_wait(const retry_config& config, int attempts_made,
                        std::optional<std::string_view> retry_after,
                        std::chrono::system_clock::time_point now, double random01) {
    const auto cap = std::max(config.max_backoff, milliseconds(0));
    const double initial = std::max<double>(static_cast<double>(config.initial_backoff.count()), 0.0);
    const double multiplier = config.multiplier >= 1.0 ? config.multiplier : 1.0; // also catches NaN
    const int exponent = std::max(attempts_made, 1) - 1;

    // pow() saturates at infinity where integer arithmetic would overflow; the cap then applies.
    double backoff = initial == 0.0 ? 0.0 : initial * std::pow(multiplier, exponent);
    const double cap_ms = static_cast<double>(cap.count());
    if (!(backoff < cap_ms))
        backoff = cap_ms;
    const double jitter = config.jitter > 0.0 ? std::min(config.jitter, 1.0) : 0.0;
    const double random = random01 > 0.0 ? std::min(random01, 1.0) : 0.0;
    const double spread = backoff * (1.0 - jitter * (1.0 - random));

    auto wait = spread >= cap_ms ? cap : milliseconds(static_cast<milliseconds::rep>(spread));
    if (retry_after) {
        if (const auto asked = parse_retry_after(*retry_after, now); asked && *asked > wait)
            wait = *asked;
    }
    return std::min(wait, cap);
}

} // namespace asiocrawl
