#include <asiocrawl/outputs/progress.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <cstdio>

namespace asiocrawl::outputs {

namespace {

std::string fixed(double value, int decimals) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
    return buffer;
}

std::string clock_text(std::chrono::steady_clock::duration elapsed) {
    const auto total =
        std::max<long long>(0, std::chrono::duration_cast<std::chrono::seconds>(elapsed).count());
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%lld:%02lld:%02lld", total / 3600, total / 60 % 60, total % 60);
    return buffer;
}

struct rates {
    double pages_per_second = 0;
    double megabytes_per_second = 0;
};

rates measure(const crawl_progress& now, const crawl_progress* previous) {
    crawl_progress origin{};
    if (previous != nullptr && previous->elapsed < now.elapsed && previous->records <= now.records &&
        previous->bytes <= now.bytes)
        origin = *previous;
    const double seconds = std::chrono::duration<double>(now.elapsed - origin.elapsed).count();
    if (seconds <= 0)
        return {};
    return {static_cast<double>(now.records - origin.records) / seconds,
            static_cast<double>(now.bytes - origin.bytes) / 1e6 / seconds};
}

} // namespace

std::string progress_line(const crawl_progress& now, const crawl_progress* previous) {
    const rates r = measure(now, previous);
    std::string line = "pages " + std::to_string(now.records) + " | queued " + std::to_string(now.queued) +
                       " | in flight " + std::to_string(now.in_flight) + " | " +
                       fixed(r.pages_per_second, 1) + " pages/s | " + fixed(r.megabytes_per_second, 2) +
                       " MB/s | errors " + std::to_string(now.failures);
    if (now.robots_denied > 0)
        line += " | robots " + std::to_string(now.robots_denied);
    line += " | hosts " + std::to_string(now.hosts) + " | " + clock_text(now.elapsed);
    return line;
}

std::string progress_summary(const crawl_progress& final_snapshot) {
    const rates r = measure(final_snapshot, nullptr);
    std::string line =
        "done: " + std::to_string(final_snapshot.records) +
        (final_snapshot.records == 1 ? " page in " : " pages in ") + clock_text(final_snapshot.elapsed) +
        " (" + fixed(r.pages_per_second, 1) + " pages/s, " + fixed(r.megabytes_per_second, 2) + " MB/s), " +
        std::to_string(final_snapshot.failures) + (final_snapshot.failures == 1 ? " error, " : " errors, ");
    if (final_snapshot.robots_denied > 0)
        line += std::to_string(final_snapshot.robots_denied) + " denied by robots.txt, ";
    line += std::to_string(final_snapshot.hosts) + (final_snapshot.hosts == 1 ? " host" : " hosts");
    return line;
}

bool progress_enabled(progress_mode mode, bool stderr_is_tty, bool quiet) noexcept {
    switch (mode) {
    case progress_mode::always:
        return true;
    case progress_mode::never:
        return false;
    case progress_mode::automatic:
        break;
    }
    return stderr_is_tty && !quiet;
}

namespace {

// "\x1b[K" erases what a longer previous line left on the right.
constexpr std::string_view erase_to_end = "\x1b[K";

} // namespace

struct progress_reporter::state {
    state(boost::asio::any_io_executor ex, snapshot_fn s, writer_fn w, std::chrono::milliseconds i, bool tty)
        : timer(ex)
        , snapshot(std::move(s))
        , writer(std::move(w))
        , interval(std::max(i, tty ? std::chrono::milliseconds{500} : std::chrono::milliseconds{100}))
        , terminal(tty) {}

    // A line as the writer gets it: redrawn in place on a terminal, appended elsewhere.
    std::string framed(const std::string& line, bool last) const {
        if (!terminal)
            return (last ? "" : "progress: ") + line + "\n";
        return "\r" + line + std::string(erase_to_end) + (last ? "\n" : "");
    }

    boost::asio::steady_timer timer;
    snapshot_fn snapshot;
    writer_fn writer;
    std::chrono::milliseconds interval;
    bool terminal;
    bool running = false;
    bool stopped = false;
    crawl_progress previous{};
};

progress_reporter::progress_reporter(boost::asio::any_io_executor executor, snapshot_fn snapshot,
                                     writer_fn writer, std::chrono::milliseconds interval, bool terminal)
    : state_(std::make_shared<state>(std::move(executor), std::move(snapshot), std::move(writer), interval,
                                     terminal)) {}

progress_reporter::~progress_reporter() {
    state_->stopped = true;
    state_->timer.cancel();
}

void progress_reporter::start() {
    if (state_->running || state_->stopped)
        return;
    state_->running = true;
    state_->previous = state_->snapshot();
    boost::asio::co_spawn(state_->timer.get_executor(), redraw_loop(state_), boost::asio::detached);
}

void progress_reporter::stop() {
    if (state_->stopped)
        return;
    state_->stopped = true;
    state_->timer.cancel();
    state_->writer(state_->framed(progress_summary(state_->snapshot()), true));
}

boost::asio::awaitable<void> progress_reporter::redraw_loop(std::shared_ptr<state> s) {
    while (!s->stopped) {
        s->timer.expires_after(s->interval);
        boost::system::error_code ec;
        co_await s->timer.async_wait(boost::asio::redirect_error(boost::asio::use_awaitable, ec));
        if (s->stopped)
            co_return;
        const crawl_progress now = s->snapshot();
        s->writer(s->framed(progress_line(now, &s->previous), false));
        s->previous = now;
    }
}

} // namespace asiocrawl::outputs
