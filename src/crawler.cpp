#include <asiocrawl/crawler.hpp>

#include "content_type.hpp"
#include "decoder.hpp"
#include "fetch_settings.hpp"
#include "fetcher.hpp"
#include "frontier.hpp"
#include "page_links.hpp"
#include "seen_set.hpp"
#include "work_queue.hpp"

#include <asiocrawl/backoff.hpp>
#include <asiocrawl/charset.hpp>
#include <asiocrawl/error.hpp>
#include <asiocrawl/links.hpp>
#include <asiocrawl/redirect.hpp>
#include <asiocrawl/robots.hpp>
#include <asiocrawl/scope.hpp>
#include <asiocrawl/sitemap.hpp>
#include <asiocrawl/url.hpp>
#include <asiocrawl/version.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/url/parse.hpp>

#include <list>
#include <random>
#include <sstream>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

namespace asiocrawl {

namespace asio = boost::asio;
using clock_type = std::chrono::steady_clock;

namespace {

enum class item_kind : std::uint8_t { page, robots, sitemap };

/// One unit of work: the queue's (url, max_redirect) pair, plus what the crawler needs to carry along.
struct work_item {
    std::string url;    // normalized: the dedup key
    int redirects_left; // the chain's remaining max_redirect budget
    int depth;
    item_kind kind = item_kind::page;
    bool from_sitemap = false;
    int tries = 0; // attempts made so far
    std::chrono::microseconds first_started{-1};
};

/// The host of a normalized URL string ("http://user@Host:80/x" -> "host" is already lowercased by
/// normalization): the politeness key. Sliced, not parsed: it runs for every admitted URL.
std::string_view host_of(std::string_view url) noexcept {
    auto start = url.find("://");
    if (start == std::string_view::npos)
        return {};
    start += 3;
    const auto end = url.find_first_of("/?#", start);
    std::string_view authority = url.substr(start, end == std::string_view::npos ? url.npos : end - start);
    if (const auto at = authority.rfind('@'); at != std::string_view::npos)
        authority.remove_prefix(at + 1);
    if (!authority.empty() && authority.front() == '[') {
        const auto close = authority.find(']');
        return authority.substr(0, close == std::string_view::npos ? authority.size() : close + 1);
    }
    return authority.substr(0, authority.find(':'));
}

/// scheme://host[:port] of a normalized URL string: the robots.txt key (RFC 9309 2.3: per origin).
std::string_view origin_of(std::string_view url) noexcept {
    auto start = url.find("://");
    if (start == std::string_view::npos)
        return url;
    const auto end = url.find_first_of("/?#", start + 3);
    return url.substr(0, end);
}

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

asio::awaitable<detail::resolved_links> resolve_links_task(std::string page_url, std::string body,
                                                           std::size_t max_links) {
    co_return detail::resolve_links(boost::urls::parse_uri(page_url).value(), std::move(body), max_links);
}

} // namespace

struct crawler::impl : std::enable_shared_from_this<crawler::impl> {
    impl(asio::any_io_executor ex, crawler_config cfg)
        : executor(std::move(ex))
        , config(detail::with_root_credentials(checked(std::move(cfg)))) // before parse_root drops them
        , roots(parse_roots(config))
        , url_scope(roots, config.scope, config.include, config.exclude, config.traps)
        , queue(executor)
        , frontier(config.politeness.max_per_host, config.politeness.delay)
        , fetch(executor, config.fetch, config.max_tasks)
        , frontier_timer(executor)
        , workers_exited(executor, clock_type::time_point::max())
        , agent(config.fetch.user_agent.empty() ? default_user_agent(config.fetch.contact_url)
                                                : config.fetch.user_agent)
        , random(std::random_device{}()) {
        if (config.parse_threads > 0)
            parse_pool.emplace(config.parse_threads);
        for (const auto& root : roots)
            root_origins.emplace(origin_of(root.buffer()));
    }

    ~impl() {
        if (parse_pool)
            parse_pool->join();
    }

    /// robots.txt of one origin: unknown until fetched; URLs of the origin wait for it.
    struct origin_robots {
        enum class state { unknown, fetching, known } status = state::unknown;
        robots_rules rules = robots_rules::allow_all();
        bool unavailable = false; // 5xx or unreachable: everything disallowed until retry_at
        clock_type::time_point retry_at{};
        std::vector<work_item> waiting; // counted by queue.hold()
    };

    asio::any_io_executor executor;
    crawler_config config;
    std::vector<boost::urls::url> roots;
    std::unordered_set<std::string> root_origins;
    scope url_scope;
    detail::work_queue<work_item> queue;
    detail::host_frontier<work_item> frontier;
    detail::fetcher fetch;
    detail::seen_set seen;
    std::unordered_map<std::string, origin_robots> robots;
    std::optional<asio::thread_pool> parse_pool;
    asio::steady_timer frontier_timer;
    clock_type::time_point frontier_timer_at = clock_type::time_point::max();
    record_sink sink;
    body_sink bodies;
    exchange_sink exchanges;
    std::function<bool()> busy;
    logger log;
    report result;
    clock_type::time_point started{};
    std::size_t live_workers = 0;
    std::size_t in_flight = 0;
    std::size_t retries = 0;
    std::size_t failures = 0;
    std::size_t robots_denied = 0;
    std::uint64_t bytes = 0;
    asio::steady_timer workers_exited;
    // One per worker: a terminal cancellation reaches whatever operation the worker awaits.
    std::list<asio::cancellation_signal> worker_signals;
    const std::string agent;
    std::mt19937_64 random;
    bool running = false;
    bool stopping = false;
    bool aborting = false;

    template <class... Parts>
    void say(log_level level, const Parts&... parts) {
        if (!log.enabled(level))
            return;
        std::ostringstream message;
        (message << ... << parts);
        log.write(level, message.str());
    }

    void skip(std::string_view reason) { ++result.stats["skipped_" + std::string(reason)]; }

    // ---- admission: seen set, robots gate, frontier ----

    /// Queues a URL unless it was seen before or the page budget is spent. True when newly queued.
    bool admit(const boost::urls::url& url, int redirects_left, int depth, item_kind kind = item_kind::page,
               bool from_sitemap = false) {
        std::string key(url.buffer());
        if (seen.contains(key))
            return false;
        if (kind == item_kind::page && config.max_pages && seen.size() >= *config.max_pages) {
            skip("max_pages");
            return false;
        }
        if (!queue.hold())
            return false;
        seen.insert(key);
        work_item item{std::move(key), redirects_left, depth, kind, from_sitemap};
        route(std::move(item));
        return true;
    }

    /// Sends a held item on: to the frontier when robots.txt allows it, to a denial record when it does not,
    /// or to its origin's waiting list while robots.txt is being fetched.
    void route(work_item item) {
        if (!config.robots.obey || item.kind == item_kind::robots) {
            to_frontier(std::move(item));
            return;
        }
        const std::string origin(origin_of(item.url));
        auto& state = robots[origin];
        const auto now = clock_type::now();
        if (state.status == origin_robots::state::known && state.unavailable && now >= state.retry_at)
            state.status = origin_robots::state::unknown; // RFC 9309 2.3.1.4: try again later
        switch (state.status) {
        case origin_robots::state::unknown:
            state.status = origin_robots::state::fetching;
            state.waiting.push_back(std::move(item));
            if (queue.hold())
                to_frontier(
                    work_item{origin + "/robots.txt", config.robots.max_redirects, 0, item_kind::robots});
            return;
        case origin_robots::state::fetching:
            state.waiting.push_back(std::move(item));
            return;
        case origin_robots::state::known:
            break;
        }
        if (state.unavailable) {
            deny(std::move(item), error::robots_unavailable);
            return;
        }
        const auto path = item.url.substr(origin.size());
        if (!state.rules.allowed(path.empty() ? std::string_view("/") : std::string_view(path))) {
            deny(std::move(item), error::robots_denied);
            return;
        }
        to_frontier(std::move(item));
    }

    void to_frontier(work_item item) {
        const std::string host(host_of(item.url));
        frontier.push(host, std::move(item), clock_type::now());
        pump();
    }

    void deny(work_item item, error why) {
        record r;
        r.url = std::move(item.url);
        r.depth = item.depth;
        r.from_sitemap = item.from_sitemap;
        r.error = why;
        if (why == error::robots_denied)
            ++robots_denied;
        say(log_level::debug, r.url, ": ", error_kind(r.error));
        emit(std::move(r));
        queue.release();
    }

    /// Moves every item whose host may take it now into the work queue, and wakes up again when the next
    /// delay or backoff ends.
    void pump() {
        if (queue.closed())
            return;
        const auto now = clock_type::now();
        while (auto next = frontier.pop(now))
            queue.put_held(std::move(next->second));
        const auto wake = frontier.next_wakeup(now);
        if (!wake || *wake >= frontier_timer_at)
            return;
        frontier_timer_at = *wake;
        frontier_timer.expires_at(*wake);
        frontier_timer.async_wait([self = shared_from_this()](boost::system::error_code ec) {
            if (ec == asio::error::operation_aborted)
                return; // re-armed earlier, or the crawl is over
            self->frontier_timer_at = clock_type::time_point::max();
            self->pump();
        });
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
        if (r.failed() && r.error != error::robots_denied)
            ++failures;
        count_record(result.stats, r);
        if (sink)
            sink(r);
        if (r.failed())
            say(r.error == error::robots_denied ? log_level::debug : log_level::warning, r.url, ": ",
                error_kind(r.error), " (", r.error.message(), r.error_detail.empty() ? "" : ": ",
                r.error_detail, ")");
        else
            say(log_level::debug, r.url, " ", r.status, " ", r.size, " bytes");
        if (config.keep_records)
            result.records.push_back(std::move(r));
    }

    void report_exchange(const work_item& item, const detail::fetch_result& response, std::string_view url) {
        if (!exchanges || (response.raw_request.empty() && response.raw_response.empty()))
            return;
        http_exchange x;
        x.kind = item.kind == item_kind::robots    ? http_exchange::purpose::robots
                 : item.kind == item_kind::sitemap ? http_exchange::purpose::sitemap
                                                   : http_exchange::purpose::page;
        x.url = url;
        x.remote_ip = response.remote_ip;
        x.started = response.started;
        x.request = response.raw_request;
        x.response = response.raw_response;
        x.response_head_bytes = response.raw_head_bytes;
        x.complete = !response.error;
        x.error = response.error;
        exchanges(x);
    }

    // ---- one attempt of one item ----

    /// A host slot held by one fetch, given back however the fetch ends.
    struct slot_guard {
        impl& self;
        const work_item& item;
        ~slot_guard() {
            --self.in_flight;
            self.frontier.finished(std::string(host_of(item.url)), clock_type::now());
            self.pump();
        }
    };

    /// An output that fell behind holds new fetches back; the slot stays reserved meanwhile.
    asio::awaitable<void> wait_for_outputs() {
        while (busy && busy() && !aborting) {
            asio::steady_timer pause{executor, std::chrono::milliseconds(5)};
            co_await pause.async_wait(asio::as_tuple(asio::use_awaitable));
        }
    }

    /// True when the attempt should be repeated later; the item then went back to the frontier with a
    /// backoff.
    bool retry_later(work_item& item, const detail::fetch_result& response) {
        const bool retryable =
            response.error ? detail::is_retryable(response.error) : is_retryable_status(response.status);
        if (!retryable || item.tries >= config.max_tries || stopping)
            return false;
        std::optional<std::string_view> retry_after;
        if (response.retry_after)
            retry_after = *response.retry_after;
        const double random01 = std::uniform_real_distribution<double>(0.0, 1.0)(random);
        const auto wait =
            retry_wait(config.retry, item.tries, retry_after, std::chrono::system_clock::now(), random01);
        if (!queue.hold())
            return false;
        ++retries;
        ++result.stats["retries"];
        say(log_level::info, item.url, ": attempt ", item.tries, " ",
            response.error ? std::string(error_kind(response.error)) : std::to_string(response.status),
            ", retrying in ", wait.count(), " ms");
        // A copy: the worker still names the item until it is done with it.
        frontier.push_later(std::string(host_of(item.url)), work_item(item), clock_type::now() + wait);
        pump();
        return true;
    }

    /// Starts an attempt of `item`: false (and a record) when its URL does not even parse.
    bool begin_attempt(work_item& item) {
        if (!boost::urls::parse_uri(item.url)) {
            record r;
            r.url = item.url;
            r.depth = item.depth;
            r.error = error::invalid_url;
            emit(std::move(r));
            return false;
        }
        if (item.first_started.count() < 0)
            item.first_started = micros(clock_type::now() - started);
        ++item.tries;
        return true;
    }

    detail::fetch_options options_for(const work_item& item) const {
        detail::fetch_options options;
        options.capture = static_cast<bool>(exchanges);
        if (item.kind == item_kind::robots)
            options.truncate_body_at = config.robots.max_bytes;
        return options;
    }

    /// What comes of one attempt's answer (or failure).
    asio::awaitable<void> handle(work_item& item, detail::fetch_result& response) {
        report_exchange(item, response, item.url);
        bytes += response.body_bytes;

        if (retry_later(item, response))
            co_return;

        const boost::urls::url_view url =
            boost::urls::parse_uri(item.url).value(); // checked by begin_attempt
        if (item.kind == item_kind::robots) {
            co_await robots_fetched(url, std::move(response), item);
            co_return;
        }

        record r;
        r.url = item.url;
        r.depth = item.depth;
        r.from_sitemap = item.from_sitemap;
        r.started = item.first_started;
        r.elapsed = micros(clock_type::now() - started) - item.first_started;
        r.tries = item.tries;
        r.status = response.status;
        r.size = response.body_bytes;
        auto media = detail::parse_content_type(response.content_type);
        r.content_type = std::move(media.type);
        const bool html = is_html_media_type(r.content_type);
        auto charset = detect_charset(media.charset, response.body, html);
        r.charset = std::move(charset.charset);
        r.charset_source = std::move(charset.source);
        if (response.error) {
            r.error = response.error;
            r.error_detail = response.error_detail;
            emit(std::move(r));
            co_return;
        }
        if (is_retryable_status(r.status)) {
            r.error = error::retry_limit; // still 429/503 after max_tries attempts
            emit(std::move(r));
            co_return;
        }

        if (is_redirect_status(r.status)) {
            follow_redirect(url, response, item, r);
            emit(std::move(r));
            co_return;
        }

        const bool success = r.status >= 200 && r.status < 300;
        if (item.kind == item_kind::sitemap) {
            if (success)
                queue_sitemap(url, response.body, item, r);
        } else if (html && success) {
            co_await queue_links(url, response.body, item, r);
        }
        if (bodies && success && !response.body.empty())
            bodies(r, response.body);
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
        if (admit(*decision.target, item.redirects_left - 1, item.depth, item.kind, item.from_sitemap))
            r.num_new_urls = 1;
    }

    asio::awaitable<void> queue_links(boost::urls::url_view page_url, std::string& body,
                                      const work_item& item, record& r) {
        detail::resolved_links links;
        if (parse_pool) {
            // The body travels to the pool and back by move: no copy, and no crawl state leaves this thread.
            links =
                co_await asio::co_spawn(parse_pool->get_executor(),
                                        resolve_links_task(std::string(page_url.buffer()), std::move(body),
                                                           config.traps.max_links_per_page),
                                        asio::use_awaitable);
        } else {
            links = detail::resolve_links(page_url, std::move(body), config.traps.max_links_per_page);
        }
        body = std::move(links.body);
        for (std::size_t i = 0; i < links.not_http; ++i)
            skip("not_http");
        for (std::size_t i = 0; i < links.invalid; ++i)
            skip("invalid_url");
        if (links.parser_gave_up) {
            ++result.stats["html_parser_gave_up"];
            say(log_level::warning, page_url.buffer(),
                ": the HTML parser gave up on this page (no links taken)");
        }
        if (links.over_page_cap > 0) {
            result.stats["skipped_links_over_page_cap"] += links.over_page_cap;
            say(log_level::info, page_url.buffer(), ": ", links.over_page_cap, " links past the first ",
                config.traps.max_links_per_page, " ignored (traps.max_links_per_page)");
        }
        admit_links(links.urls, item.depth + 1, false, r);
    }

    void admit_links(const std::vector<boost::urls::url>& urls, int depth, bool from_sitemap, record& r) {
        std::unordered_set<std::string_view> on_page;
        for (const auto& link : urls) {
            if (on_page.contains(link.buffer()))
                continue;
            if (!in_scope(link))
                continue;
            if (config.max_depth && depth > *config.max_depth) {
                skip("max_depth");
                continue;
            }
            on_page.emplace(link.buffer());
            if (admit(link, config.max_redirect, depth, item_kind::page, from_sitemap))
                ++r.num_new_urls;
        }
        r.num_urls = on_page.size();
    }

    // ---- robots.txt and sitemaps ----

    asio::awaitable<void> robots_fetched(boost::urls::url_view robots_url, detail::fetch_result response,
                                         work_item& item) {
        ++result.stats["robots_fetched"];
        const std::string origin(origin_of(item.url));
        // Redirects of robots.txt are followed here, in this worker (RFC 9309 2.3.1.2: at least five hops).
        boost::urls::url current{robots_url};
        for (int hop = 0; !response.error && is_redirect_status(response.status); ++hop) {
            auto decision = decide_redirect(current, response.location, config.robots.max_redirects - hop);
            if (!decision.target || decision.error)
                break;
            current = std::move(*decision.target);
            detail::fetch_options options;
            options.capture = static_cast<bool>(exchanges);
            options.truncate_body_at = config.robots.max_bytes;
            response = co_await fetch_politely_untracked(current, options);
            if (aborting)
                co_return;
            report_exchange(item, response, current.buffer());
        }

        auto& state = robots[origin];
        state.unavailable = false;
        std::string outcome;
        if (response.error) {
            state.unavailable = true;
            outcome = std::string(error_kind(response.error));
        } else if (is_redirect_status(response.status)) {
            state.rules = robots_rules::allow_all(); // too many redirects: RFC 9309 treats it as unavailable
            outcome = "too many redirects";
        } else {
            outcome = std::to_string(response.status);
            switch (robots_verdict_for_status(response.status)) {
            case robots_fetch_verdict::parse:
                state.rules = robots_rules::parse(response.body, product_token(agent));
                break;
            case robots_fetch_verdict::allow_all:
                state.rules = robots_rules::allow_all();
                break;
            case robots_fetch_verdict::disallow_all:
                state.unavailable = true;
                break;
            }
        }
        if (state.unavailable) {
            state.rules = robots_rules::disallow_all();
            state.retry_at = clock_type::now() + config.robots.unavailable_retry;
            ++result.stats["robots_unavailable"];
            say(log_level::warning, item.url, ": ", outcome, ": the origin is off limits for ",
                config.robots.unavailable_retry.count(), " ms (RFC 9309)");
        } else {
            say(log_level::info, item.url, ": ", outcome);
        }
        state.status = origin_robots::state::known;

        if (const auto delay = state.rules.crawl_delay(); delay && !state.unavailable) {
            const auto effective = std::max<clock_type::duration>(
                config.politeness.delay,
                std::min<clock_type::duration>(*delay, config.robots.max_crawl_delay));
            frontier.set_delay(std::string(host_of(item.url)), effective, clock_type::now());
            say(log_level::info, origin, ": Crawl-delay ", delay->count(), " ms");
        }

        if (config.sitemaps && root_origins.contains(origin) && !state.unavailable)
            queue_sitemaps_of(origin, state.rules.sitemaps());

        auto waiting = std::move(state.waiting);
        state.waiting.clear();
        for (auto& w : waiting)
            route(std::move(w)); // each was counted by hold(): route() passes it on or releases it
    }

    /// A robots.txt redirect hop goes to another URL outside the frontier's bookkeeping; it still counts as
    /// a request in flight for progress.
    asio::awaitable<detail::fetch_result> fetch_politely_untracked(boost::urls::url_view url,
                                                                   detail::fetch_options options) {
        ++in_flight;
        auto response = co_await fetch.fetch(url, options);
        --in_flight;
        co_return response;
    }

    void queue_sitemaps_of(const std::string& origin, const std::vector<std::string>& declared) {
        std::vector<std::string> candidates = declared;
        if (candidates.empty())
            candidates.push_back(origin + "/sitemap.xml");
        const auto base = boost::urls::parse_uri(origin + "/").value();
        for (const auto& location : candidates) {
            auto url = normalize_reference(base, location);
            if (!url) {
                skip("invalid_url");
                continue;
            }
            if (!in_scope(*url))
                continue;
            admit(*url, config.max_redirect, 0, item_kind::sitemap);
        }
    }

    void queue_sitemap(boost::urls::url_view sitemap_url, const std::string& body, const work_item& item,
                       record& r) {
        std::string inflated;
        std::string_view xml = body;
        if (looks_gzipped(body)) {
            // A .xml.gz served as a file, not with Content-Encoding: the fetcher left it compressed.
            auto plain = detail::gunzip(body, config.fetch.max_body_bytes);
            if (!plain) {
                r.error = error::decoding_failed;
                return;
            }
            inflated = std::move(*plain);
            xml = inflated;
        }
        auto document = parse_sitemap(xml);
        if (!document) {
            r.error = document.error();
            return;
        }
        if (document->truncated)
            skip("sitemap_truncated");
        const boost::urls::url base{sitemap_url};
        std::vector<boost::urls::url> urls;
        urls.reserve(document->locations.size());
        for (const auto& location : document->locations) {
            auto url = normalize_reference(base, location);
            if (url)
                urls.push_back(std::move(*url));
            else
                skip(url.error() == error::unsupported_scheme ? "not_http" : "invalid_url");
        }
        if (document->is_index) {
            // An index lists sitemaps; an index inside an index is not allowed by the protocol (depth 1).
            if (item.depth >= 1)
                return;
            for (const auto& url : urls) {
                if (!in_scope(url))
                    continue;
                ++r.num_urls;
                if (admit(url, config.max_redirect, item.depth + 1, item_kind::sitemap))
                    ++r.num_new_urls;
            }
            return;
        }
        admit_links(urls, 1, true, r);
    }

    // ---- workers and stopping ----

    /// A worker: one item at a time, each to exactly one task_done. This frame is what waits for the server,
    /// thousands at once, so it holds the item and a pointer to the result and nothing sized by the response
    /// (see fetcher::fetch_into); the work on the answer happens in handle(), whose frame exists only then.
    asio::awaitable<void> work() {
        std::optional<work_item> item;
        while (co_await queue.get(item)) {
            try {
                if (begin_attempt(*item)) {
                    std::unique_ptr<detail::fetch_result> response;
                    if (busy && busy() && !aborting)
                        co_await wait_for_outputs();
                    {
                        ++in_flight;
                        slot_guard guard{*this, *item};
                        frontier.started(std::string(host_of(item->url)), clock_type::now());
                        pump();
                        co_await fetch.fetch_into(item->url, options_for(*item), response);
                    }
                    // After an abort the URL stays unfinished: part of the todo.
                    if (!aborting)
                        co_await handle(*item, *response);
                }
            } catch (const std::exception& e) {
                internal_error(*item, e.what());
            } catch (...) {
                internal_error(*item, "unknown exception");
            }
            if (!aborting)
                queue.task_done();
        }
    }

    /// A bug, not the URL's fault: it gets a record and the crawl goes on.
    void internal_error(const work_item& item, std::string_view failure) noexcept {
        if (failure.empty() || aborting)
            return;
        try {
            say(log_level::error, item.url, ": internal error: ", failure);
            record r;
            r.url = item.url;
            r.error = error::internal_error;
            emit(std::move(r));
        } catch (...) {
        }
    }

    void request_stop() {
        if (stopping)
            return;
        stopping = true;
        say(log_level::info, "stopping: ", queue.unfinished(), " URLs unfinished");
        queue.close();
        frontier.clear();
        frontier_timer.cancel();
    }

    void request_abort() {
        request_stop();
        if (aborting)
            return;
        aborting = true;
        say(log_level::info, "aborting: ", in_flight, " fetches in flight cancelled");
        for (auto& signal : worker_signals)
            signal.emit(asio::cancellation_type::terminal);
    }

    crawl_progress snapshot() const {
        crawl_progress p;
        p.records = result.done;
        p.in_flight = in_flight;
        p.queued = queue.unfinished() > in_flight ? queue.unfinished() - in_flight : 0;
        p.hosts = frontier.hosts();
        p.failures = failures;
        p.robots_denied = robots_denied;
        p.retries = retries;
        p.bytes = bytes;
        p.elapsed = running ? clock_type::now() - started : clock_type::duration{};
        return p;
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

crawler::executor_type crawler::self_executor(const impl& self) noexcept {
    return self.executor;
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
    return impl_->snapshot();
}

void crawler::stop() {
    asio::dispatch(impl_->executor, [self = impl_] { self->request_stop(); });
}

void crawler::abort() {
    asio::dispatch(impl_->executor, [self = impl_] { self->request_abort(); });
}

void crawler::on_cancellation(const std::shared_ptr<impl>& self, asio::cancellation_type type) {
    // Any cancellation drains gracefully; a terminal one (the strongest) also cancels what is in flight.
    if ((type & asio::cancellation_type::terminal) != asio::cancellation_type::none)
        asio::dispatch(self->executor, [self] { self->request_abort(); });
    else
        asio::dispatch(self->executor, [self] { self->request_stop(); });
}

asio::awaitable<report> crawler::run(std::shared_ptr<impl> self) {
    if (self->running)
        throw std::logic_error("crawler::async_run called twice");
    self->running = true;
    self->started = clock_type::now();
    self->result.started_at = std::chrono::system_clock::now();
    self->result.max_tasks = self->config.max_tasks;
    if (self->config.fetch.tls.insecure) {
        self->result.stats["tls_insecure"] = 1;
        self->say(log_level::warning,
                  "TLS certificate verification is OFF (insecure): https pages are not authenticated");
    }

    for (const auto& root : self->roots)
        self->admit(root, self->config.max_redirect, 0);
    if (self->config.sitemaps && !self->config.robots.obey) {
        for (const auto& origin : self->root_origins)
            self->queue_sitemaps_of(origin, {});
    }
    self->say(log_level::info, "crawling ", self->roots.size(), " root(s) with ", self->config.max_tasks,
              " workers as \"", self->agent, "\"");

    for (std::size_t i = 0; i < self->config.max_tasks; ++i) {
        ++self->live_workers;
        auto& signal = self->worker_signals.emplace_back();
        asio::co_spawn(
            self->executor, [self]() { return self->work(); },
            asio::bind_cancellation_slot(signal.slot(), [self](std::exception_ptr) {
                if (--self->live_workers == 0)
                    self->workers_exited.cancel();
            }));
    }

    co_await self->queue.join();
    self->queue.close();
    self->frontier_timer.cancel();
    while (self->live_workers > 0)
        co_await self->workers_exited.async_wait(asio::as_tuple(asio::use_awaitable));
    // Only now: fetches that were in flight when a stop came have finished and are no longer "todo".
    self->result.todo = self->queue.unfinished();
    for (const auto& problem : self->fetch.finish()) // idle connections, DNS, the cookie jar's file
        self->say(log_level::error, problem);

    self->result.elapsed = clock_type::now() - self->started;
    self->say(log_level::info, "finished: ", self->result.done, " records, ", self->result.todo, " left");
    co_return std::move(self->result);
}

} // namespace asiocrawl
