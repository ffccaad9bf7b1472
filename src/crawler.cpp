#include <asiocrawl/crawler.hpp>

#include "content_type.hpp"
#include "fetcher.hpp"
#include "work_queue.hpp"

#include <asiocrawl/error.hpp>
#include <asiocrawl/links.hpp>
#include <asiocrawl/redirect.hpp>
#include <asiocrawl/scope.hpp>
#include <asiocrawl/url.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/url/parse.hpp>

#include <sstream>
#include <stdexcept>
#include <unordered_set>

#include "seen_set.hpp"

namespace asiocrawl {

namespace asio = boost::asio;
using clock_type = std::chrono::steady_clock;

namespace {

/// One unit of work: the queue's (url, max_redirect) pair, plus the link depth.
struct work_item {
    std::string url;    // normalized: the dedup key
    int redirects_left; // the chain's remaining max_redirect budget
    int depth;
};

std::vector<boost::urls::url> parse_roots(const crawler_config& config) {
    std::vector<boost::urls::url> roots;
    for (const auto& root : config.roots) {
        auto parsed = parse_root(root);
        if (!parsed)
            throw std::invalid_argument("root \"" + root + "\": " + parsed.error().message());
        roots.push_back(std::move(*parsed));
    }
    return roots;
}

crawler_config checked(crawler_config config) {
    const auto problems = validate(config);
    if (!problems.empty()) {
        std::string message = "invalid crawler config:";
        for (const auto& p : problems)
            message += "\n  " + p;
        throw std::invalid_argument(message);
    }
    return config;
}

std::chrono::microseconds micros(clock_type::duration d) {
    return std::chrono::duration_cast<std::chrono::microseconds>(d);
}

} // namespace

struct crawler::impl {
    impl(asio::any_io_executor ex, crawler_config cfg)
        : executor(std::move(ex))
        , config(checked(std::move(cfg)))
        , roots(parse_roots(config))
        , url_scope(roots, config.scope, config.include, config.exclude)
        , queue(executor)
        , fetch(executor, config.fetch, config.max_tasks)
        , workers_exited(executor, clock_type::time_point::max()) {}

    asio::any_io_executor executor;
    crawler_config config;
    std::vector<boost::urls::url> roots;
    scope url_scope;
    detail::work_queue<work_item> queue;
    detail::fetcher fetch;
    detail::seen_set seen;
    record_sink sink;
    body_sink bodies;
    exchange_sink exchanges;
    std::function<bool()> busy;
    logger log;
    bool stopping = false;
    report result;
    clock_type::time_point started{};
    std::size_t live_workers = 0;
    asio::steady_timer workers_exited;
    bool running = false;

    template <class... Parts>
    void say(log_level level, const Parts&... parts) {
        if (!log.enabled(level))
            return;
        std::ostringstream message;
        (message << ... << parts);
        log.write(level, message.str());
    }

    void skip(std::string_view reason) { ++result.stats["skipped_" + std::string(reason)]; }

    /// Queues a URL unless it was seen before or the page budget is spent. True when newly queued.
    bool admit(const boost::urls::url& url, int redirects_left, int depth) {
        std::string key(url.buffer());
        if (seen.contains(key))
            return false;
        if (config.max_pages && seen.size() >= *config.max_pages) {
            skip("max_pages");
            return false;
        }
        seen.insert(key);
        queue.put(work_item{std::move(key), redirects_left, depth});
        return true;
    }

    /// The checks every discovered URL passes, links and redirect targets alike.
    bool in_scope(const boost::urls::url& url) {
        const auto verdict = url_scope.check(url);
        if (verdict == scope_verdict::in_scope)
            return true;
        skip(to_string(verdict));
        say(log_level::debug, "skip ", url.buffer(), ": ", to_string(verdict));
        return false;
    }

    void emit(record r) {
        ++result.done;
        count_record(result.stats, r);
        if (sink)
            sink(r);
        if (r.failed())
            say(log_level::warning, r.url, ": ", error_kind(r.error), " (", r.error.message(), ")");
        else
            say(log_level::debug, r.url, " ", r.status, " ", r.size, " bytes");
        if (config.keep_records)
            result.records.push_back(std::move(r));
    }

    asio::awaitable<void> process(work_item item) {
        record r;
        r.url = item.url;
        r.depth = item.depth;
        auto parsed = boost::urls::parse_uri(item.url);
        if (!parsed) {
            r.error = error::invalid_url;
            emit(std::move(r));
            co_return;
        }
        const boost::urls::url_view url = *parsed;

        const auto start = clock_type::now();
        r.started = micros(start - started);
        detail::fetch_result response;
        int attempts = 0;
        // Placeholder until the politeness scheduler lands: retries happen at once, in this worker.
        do {
            ++attempts;
            response = co_await fetch.fetch(url);
        } while (attempts < config.max_tries && !stopping && response.error &&
                 detail::is_retryable(response.error));
        r.elapsed = micros(clock_type::now() - start);
        r.tries = attempts;
        r.status = response.status;
        r.size = response.body_bytes;
        auto media = detail::parse_content_type(response.content_type);
        r.content_type = std::move(media.type);
        r.charset = std::move(media.charset);
        const bool html = is_html_media_type(r.content_type);
        if (html && r.charset.empty())
            r.charset = "utf-8";
        if (response.error) {
            r.error = response.error;
            emit(std::move(r));
            co_return;
        }

        if (is_redirect_status(r.status)) {
            follow_redirect(url, response, item, r);
            emit(std::move(r));
            co_return;
        }

        if (html && r.status >= 200 && r.status < 300)
            queue_links(url, response.body, item, r);
        emit(std::move(r));
    }

    void follow_redirect(boost::urls::url_view url, const detail::fetch_result& response,
                         const work_item& item, record& r) {
        auto decision = decide_redirect(url, response.location, item.redirects_left);
        if (decision.target)
            r.next_url = decision.target->buffer();
        if (decision.error) {
            r.error = decision.error;
            return;
        }
        // A redirect is not a link hop: the target keeps the depth of the URL that redirected.
        if (!in_scope(*decision.target))
            return;
        r.num_urls = 1;
        if (admit(*decision.target, item.redirects_left - 1, item.depth))
            r.num_new_urls = 1;
    }

    void queue_links(boost::urls::url_view page_url, const std::string& body, const work_item& item,
                     record& r) {
        const page_links links = extract_links(body);
        boost::urls::url base{page_url};
        if (links.base_href) {
            if (auto resolved = normalize_reference(page_url, *links.base_href))
                base = std::move(*resolved);
        }
        const int depth = item.depth + 1;
        std::unordered_set<std::string> on_page;
        for (const auto& reference : links.references) {
            auto link = normalize_reference(base, reference);
            if (!link) {
                skip(link.error() == error::unsupported_scheme ? "not_http" : "invalid_url");
                continue;
            }
            if (on_page.contains(std::string(link->buffer())))
                continue;
            if (!in_scope(*link))
                continue;
            if (config.max_depth && depth > *config.max_depth) {
                skip("max_depth");
                continue;
            }
            on_page.emplace(link->buffer());
            if (admit(*link, config.max_redirect, depth))
                ++r.num_new_urls;
        }
        r.num_urls = on_page.size();
    }

    asio::awaitable<void> work() {
        while (auto item = co_await queue.get()) {
            const std::string url = item->url;
            std::string failure;
            try {
                co_await process(std::move(*item));
            } catch (const std::exception& e) {
                failure = e.what();
            } catch (...) {
                failure = "unknown exception";
            }
            if (!failure.empty()) {
                // A bug, not the URL's fault: it gets a record and the crawl goes on.
                try {
                    say(log_level::error, url, ": internal error: ", failure);
                    record r;
                    r.url = url;
                    r.error = error::internal_error;
                    emit(std::move(r));
                } catch (...) {
                }
            }
            queue.task_done();
        }
    }

    void request_stop() {
        if (queue.closed())
            return;
        say(log_level::info, "stopping: ", queue.unfinished(), " URLs unfinished");
        queue.close();
        stopping = true;
    }
};

crawler::crawler(executor_type executor, crawler_config config)
    : impl_(std::make_shared<impl>(std::move(executor), std::move(config))) {}

crawler::~crawler() {
    if (impl_)
        stop();
}

crawler::executor_type crawler::get_executor() const noexcept {
    return impl_->executor;
}

const crawler_config& crawler::config() const noexcept {
    return impl_->config;
}

void crawler::set_record_sink(record_sink sink) {
    impl_->sink = std::move(sink);
}

void crawler::set_logger(logger log) {
    impl_->log = std::move(log);
}

void crawler::set_body_sink(body_sink sink) {
    impl_->bodies = std::move(sink);
}

void crawler::set_exchange_sink(exchange_sink sink) {
    impl_->exchanges = std::move(sink);
}

void crawler::set_backpressure(std::function<bool()> busy) {
    impl_->busy = std::move(busy);
}

crawl_progress crawler::progress() const {
    crawl_progress p;
    p.records = impl_->result.done;
    p.queued = impl_->queue.unfinished();
    p.elapsed = clock_type::now() - impl_->started;
    return p;
}

void crawler::stop() {
    asio::dispatch(impl_->executor, [self = impl_] { self->request_stop(); });
}

asio::awaitable<report> crawler::run(std::shared_ptr<impl> self) {
    if (self->running)
        throw std::logic_error("crawler::async_run called twice");
    self->running = true;
    self->started = clock_type::now();
    self->result.started_at = std::chrono::system_clock::now();
    self->result.max_tasks = self->config.max_tasks;

    for (const auto& root : self->roots)
        self->admit(root, self->config.max_redirect, 0);
    self->say(log_level::info, "crawling ", self->roots.size(), " root(s) with ", self->config.max_tasks,
              " workers");

    for (std::size_t i = 0; i < self->config.max_tasks; ++i) {
        ++self->live_workers;
        asio::co_spawn(
            self->executor, [self]() { return self->work(); },
            [self](std::exception_ptr) {
                if (--self->live_workers == 0)
                    self->workers_exited.cancel();
            });
    }

    co_await self->queue.join();
    self->queue.close();
    while (self->live_workers > 0)
        co_await self->workers_exited.async_wait(asio::as_tuple(asio::use_awaitable));
    // Only now: fetches that were in flight when a stop came have finished and are no longer "todo".
    self->result.todo = self->queue.unfinished();
    self->fetch.close_idle();

    self->result.elapsed = clock_type::now() - self->started;
    self->say(log_level::info, "finished: ", self->result.done, " records, ", self->result.todo, " left");
    co_return std::move(self->result);
}

} // namespace asiocrawl
