#include <asiocrawl/outputs/output_set.hpp>

#include "outputs/text_writer.hpp"

#include "policy/scope.hpp"
#include <asiocrawl/error.hpp>
#include <asiocrawl/outputs/archive.hpp>
#include <asiocrawl/outputs/control_api.hpp>
#include <asiocrawl/outputs/metrics.hpp>
#include <asiocrawl/outputs/progress.hpp>
#include <asiocrawl/outputs/save_dir.hpp>
#include <asiocrawl/outputs/warc.hpp>
#include <asiocrawl/version.hpp>

#include <boost/asio/post.hpp>
#include <boost/system/system_error.hpp>
#include <boost/url/parse.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <new>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace asiocrawl::outputs {

namespace {

// A link checker's report, not an inventory of a dead web: beyond this, broken links are only counted.
constexpr std::size_t max_broken_links = 100'000;

bool is_regular_file(const std::string& path) {
    struct stat info {};
    return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

bool exists(const std::string& path) {
    struct stat info {};
    return ::stat(path.c_str(), &info) == 0;
}

void write_all(int fd, std::string_view data, const std::string& what) {
    while (!data.empty()) {
        const ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            throw std::runtime_error(what + ": " + std::strerror(errno));
        data.remove_prefix(static_cast<std::size_t>(n));
    }
}

// What the record sink needs, shared with it: the crawler may call its sink after this object is gone only
// if the embedder breaks the documented order, and a shared_ptr makes that harmless.
struct record_outputs {
    std::shared_ptr<detail::text_writer> records;
    std::shared_ptr<metrics_registry> metrics;
    bool collect_broken = false;
    broken_links broken;
    // Anything handed to an output (a record, an exchange, a body): then discard() removes nothing.
    bool handed_over = false;
};

} // namespace

struct output_set::impl {
    boost::asio::any_io_executor executor;
    output_config config;
    logger log;
    std::function<void(std::string)> progress_writer;
    bool progress_on_terminal = true;

    std::shared_ptr<record_outputs> sink_state = std::make_shared<record_outputs>();
    std::unique_ptr<warc_writer> warc;
    std::unique_ptr<save_dir_writer> saved_pages;
    std::unique_ptr<metrics_server> server;
    std::unique_ptr<progress_reporter> progress;
    crawler* attached = nullptr;
    // The attached crawl's first root: the WACZ's main page.
    std::string first_root;
    bool stopped = false;
    bool finished = false;
    std::vector<std::string> notes;
    // Files this constructor created, removed again when a later output fails to open or the crawl is
    // refused before it wrote anything (discard()).
    std::vector<std::string> created;
    bool created_save_dir = false;

    std::mutex drained_mutex;
    std::function<void()> on_drained;
    // The attached crawler while it may be told (drained, or stop on a failed output); cleared under the
    // mutex when the crawl is over.
    crawler* drained_crawler = nullptr;

    bool busy() const noexcept {
        return (sink_state->records && sink_state->records->busy()) || (warc && warc->busy()) ||
               (saved_pages && saved_pages->busy());
    }

    // Installed on every writer: one writer catching up does not make the set idle while another lags.
    std::function<void()> drained_hook() {
        return [this] {
            if (busy())
                return;
            std::function<void()> callback;
            crawler* waiting = nullptr;
            {
                std::lock_guard lock{drained_mutex};
                callback = on_drained;
                waiting = drained_crawler;
            }
            if (waiting)
                waiting->notify_drained(); // safe from any thread
            if (callback)
                callback();
        };
    }

    // Installed on every file output: one that cannot be written stops the crawl (gracefully: fetches in
    // flight end, nothing new starts) rather than let it fetch everything into a dead output. The writer
    // reports the error itself; the log says why the crawl stops.
    std::function<void(const std::string&)> failed_hook() {
        return [this](const std::string& error) {
            std::lock_guard lock{drained_mutex};
            if (drained_crawler == nullptr)
                return;
            drained_crawler->stop(); // safe from any thread
            if (log.enabled(log_level::error))
                boost::asio::post(executor, [log = log, error] {
                    log.write(log_level::error, error + ": an output that cannot be written stops the crawl");
                });
        };
    }

    std::size_t queue_limit() const {
        return static_cast<std::size_t>(std::min<std::uint64_t>(config.queue_limit_bytes, SIZE_MAX));
    }

    void note(std::string text) {
        if (log.enabled(log_level::warning))
            log.write(log_level::warning, text);
        notes.push_back(std::move(text));
    }

    // Every conflict at once, before anything is created: a refused run leaves no trace behind.
    void refuse_existing_outputs() const {
        std::vector<std::string> conflicts;
        if (!config.records.empty() && config.records != "-" && is_regular_file(config.records))
            conflicts.push_back("output.records: " + config.records);
        if (!config.report_json.empty() && config.report_json != "-" && is_regular_file(config.report_json))
            conflicts.push_back("output.report_json: " + config.report_json);
        if (!config.warc.path.empty()) {
            const auto series = existing_warc_files(config.warc.path);
            if (!series.empty())
                conflicts.push_back(
                    "output.warc.path: " + series.front() +
                    (series.size() > 1 ? " (and " + std::to_string(series.size() - 1) + " more)" : ""));
        }
        std::error_code ec;
        if (!config.wacz.empty() && is_regular_file(config.wacz))
            conflicts.push_back("output.wacz: " + config.wacz);
        if (!config.save_dir.empty() && std::filesystem::is_directory(config.save_dir, ec) &&
            !std::filesystem::is_empty(config.save_dir, ec))
            conflicts.push_back("output.save_dir: " + config.save_dir + " (not empty)");
        if (conflicts.empty())
            return;
        std::string message = "outputs exist already, and are never silently replaced (--overwrite or "
                              "output.overwrite: true replaces them): ";
        for (std::size_t i = 0; i < conflicts.size(); ++i)
            message += (i ? "; " : "") + conflicts[i];
        throw output_exists(message);
    }

    void open_all() {
        if ((config.cdxj || !config.wacz.empty()) && config.warc.path.empty())
            throw std::invalid_argument(std::string(config.cdxj ? "output.cdxj" : "output.wacz") +
                                        " needs output.warc.path: it indexes the WARC files");
        if (config.mode == open_mode::create_new)
            refuse_existing_outputs();
        // The port first: binding creates no file, and a busy port is the likeliest failure.
        if (!config.metrics_listen.empty()) {
            (void)parse_listen_address(config.metrics_listen); // its own message for an address that is none
            if (config.listen_token.empty() && needs_token(config.metrics_listen))
                throw std::invalid_argument("output.metrics_listen: " + config.metrics_listen +
                                            " is not a loopback address: the control API there needs a token "
                                            "(output.listen_token, docs/CONTROL.md)");
            sink_state->metrics = std::make_shared<metrics_registry>();
            try {
                // Rendered on the executor at scrape time, so the gauges are live without any lock.
                server = std::make_unique<metrics_server>(executor, config.metrics_listen, [this] {
                    if (attached == nullptr)
                        return sink_state->metrics->render(nullptr);
                    const crawl_progress live = attached->progress();
                    return sink_state->metrics->render(&live);
                });
            } catch (const boost::system::system_error& e) {
                // what() would carry Boost's source location and function signature.
                throw std::runtime_error("output.metrics_listen: cannot listen on " + config.metrics_listen +
                                         ": " + e.code().message());
            }
        }
        if (!config.save_dir.empty()) {
            created_save_dir = !exists(config.save_dir);
            saved_pages = std::make_unique<save_dir_writer>(config.save_dir, config.mode, queue_limit());
        }
        if (!config.warc.path.empty()) {
            // Under overwrite the first file may be an earlier one, truncated; otherwise it is new.
            const bool first_existed =
                config.mode == open_mode::overwrite && exists(warc_file_name(config.warc.path, 0));
            warc = std::make_unique<warc_writer>(config.warc, config.mode, queue_limit());
            if (!first_existed)
                created.push_back(warc->files().front());
            for (auto& line : warc->notes())
                note(std::move(line));
        }
        if (!config.report_json.empty() && config.report_json != "-") {
            // Claimed now (and a location that cannot be written fails now), written whole at the end. A
            // resumed crawl keeps the earlier summary until it has the whole crawl's to put in its place.
            const bool existed = exists(config.report_json);
            if (existed && config.mode == open_mode::append) {
                const int fd = ::open(config.report_json.c_str(), O_WRONLY | O_CLOEXEC);
                if (fd < 0)
                    throw std::system_error(errno, std::generic_category(),
                                            "output.report_json: cannot open " + config.report_json);
                ::close(fd);
            } else {
                ::close(open_output_file(config.report_json,
                                         config.mode == open_mode::create_new ? open_mode::create_new
                                                                              : open_mode::overwrite,
                                         "output.report_json"));
            }
            if (!existed)
                created.push_back(config.report_json);
        }
        if (!config.records.empty()) {
            int fd = STDOUT_FILENO;
            if (config.records != "-") {
                const bool existed = exists(config.records);
                tail_repair repair;
                fd = open_output_file(config.records, config.mode, "output.records", &repair);
                if (!existed)
                    created.push_back(config.records);
                if (repair.cut_bytes > 0)
                    note("output.records: " + config.records + " ended in a torn line: cut " +
                         std::to_string(repair.cut_bytes) + " bytes");
            }
            sink_state->records = std::make_shared<detail::text_writer>(
                fd, config.records != "-", "output.records: cannot write " + config.records, queue_limit());
        }
        sink_state->collect_broken = !config.report_json.empty();
        if (sink_state->records) {
            sink_state->records->set_on_drained(drained_hook());
            sink_state->records->set_on_error(failed_hook());
        }
        if (warc) {
            warc->set_on_drained(drained_hook());
            warc->set_on_error(failed_hook());
        }
        if (saved_pages) {
            saved_pages->set_on_drained(drained_hook());
            saved_pages->set_on_error(failed_hook());
        }
    }

    void remove_created() {
        sink_state->records.reset();
        warc.reset();
        saved_pages.reset();
        for (const auto& path : created)
            std::remove(path.c_str());
        std::error_code ec;
        if (created_save_dir && std::filesystem::is_empty(config.save_dir, ec))
            std::filesystem::remove(config.save_dir, ec);
    }

    // CDXJ beside each WARC file, then the WACZ, from the closed files read back. A resumed crawl's series
    // (append) is indexed whole, earlier runs' files included.
    void write_archive_outputs(std::vector<std::string>& problems) {
        if (!config.cdxj && config.wacz.empty())
            return;
        const std::vector<std::string> files =
            config.mode == open_mode::append ? existing_warc_files(config.warc.path) : warc->files();
        wacz_options package;
        package.path = config.wacz;
        package.main_page_url = first_root;
        package.software = "asiocrawl " + std::string(version());
        try {
            for (const auto& file : files) {
                std::vector<warc_capture> captures = write_cdxj(file);
                std::erase_if(captures, [](const warc_capture& c) { return !is_archived_page(c); });
                package.warc_files.push_back(file);
                package.captures.push_back(std::move(captures));
            }
            if (!config.wacz.empty())
                write_wacz(package);
        } catch (const std::exception& e) {
            problems.emplace_back(e.what());
        }
    }

    void write_report_json(const report& final_report, std::vector<std::string>& problems) {
        std::ostringstream text;
        asiocrawl::write_report_json(text, final_report,
                                     sink_state->collect_broken ? &sink_state->broken : nullptr);
        const std::string& path = config.report_json;
        try {
            if (path == "-") {
                write_all(STDOUT_FILENO, text.str(), "output.report_json: cannot write to stdout");
                return;
            }
            if (!is_regular_file(path)) {
                // A device or a FIFO: written as it is.
                const int fd = open_output_file(path, open_mode::overwrite, "output.report_json");
                std::string error;
                try {
                    write_all(fd, text.str(), "output.report_json: cannot write " + path);
                } catch (const std::exception& e) {
                    error = e.what();
                }
                ::close(fd);
                if (!error.empty())
                    throw std::runtime_error(error);
                return;
            }
            // A reader never sees half a summary: written aside, then renamed over the file.
            const std::string temporary = path + ".asiocrawl-tmp";
            const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
            if (fd < 0)
                throw std::runtime_error("output.report_json: cannot write " + temporary + ": " +
                                         std::strerror(errno));
            std::string error;
            try {
                write_all(fd, text.str(), "output.report_json: cannot write " + temporary);
            } catch (const std::exception& e) {
                error = e.what();
            }
            if (::close(fd) != 0 && error.empty())
                error = "output.report_json: cannot write " + temporary + ": " + std::strerror(errno);
            if (error.empty() && std::rename(temporary.c_str(), path.c_str()) != 0)
                error = "output.report_json: cannot replace " + path + ": " + std::strerror(errno);
            if (!error.empty()) {
                std::remove(temporary.c_str());
                throw std::runtime_error(error);
            }
        } catch (const std::exception& e) {
            problems.emplace_back(e.what());
        }
    }
};

output_set::output_set(boost::asio::any_io_executor executor, const output_config& config, logger log,
                       std::function<void(std::string)> progress_writer, bool progress_on_terminal)
    : impl_(std::make_unique<impl>()) {
    impl_->executor = std::move(executor);
    impl_->config = config;
    impl_->log = std::move(log);
    impl_->progress_writer = std::move(progress_writer);
    impl_->progress_on_terminal = progress_on_terminal;
    // The writers refuse an existing output with outputs::output_exists and anything else with a standard
    // exception; what leaves here is one value of asiocrawl's error category with the text that names the
    // output (as crawler's constructor does it).
    try {
        impl_->open_all();
    } catch (const output_exists& e) {
        impl_->remove_created();
        throw crawl_error(error::output_exists, e.what());
    } catch (const std::bad_alloc&) {
        impl_->remove_created();
        throw;
    } catch (const std::exception& e) {
        impl_->remove_created();
        throw crawl_error(error::output_unavailable, e.what());
    } catch (...) {
        impl_->remove_created();
        throw;
    }
}

output_set::~output_set() {
    {
        std::lock_guard lock{impl_->drained_mutex};
        impl_->drained_crawler = nullptr;
    }
    // No summary line from here: the embedder's progress writer may already be gone.
    if (impl_->server)
        impl_->server->stop();
    impl_->progress.reset();
}

void output_set::attach(crawler& crawl, record_sink also, std::function<bool()> also_busy) {
    impl& self = *impl_;
    self.attached = &crawl;
    std::shared_ptr<control_api> api;
    if (self.server) { // the control API and the dashboard on the same listener (docs/CONTROL.md)
        api = std::make_shared<control_api>(crawl, self.config.listen_token, self.log);
        self.server->set_handler([api](const listener_request& request) { return api->handle(request); },
                                 64 * 1024);
    }
    if (!crawl.config().roots.empty())
        self.first_root = crawl.config().roots.front();
    const std::shared_ptr<record_outputs> state = self.sink_state;
    if (state->records || state->metrics || state->collect_broken) {
        crawl.set_record_sink([state, api, also = std::move(also)](const record& r) {
            state->handed_over = true;
            if (also)
                also(r);
            if (state->records)
                state->records->write(to_json_line(r));
            if (state->metrics)
                state->metrics->observe(r);
            if (api)
                api->observe(r); // the dashboard's history
            if (state->collect_broken) {
                if (auto link = broken_link_of(r)) {
                    if (state->broken.links.size() < max_broken_links)
                        state->broken.links.push_back(std::move(*link));
                    else
                        ++state->broken.omitted;
                }
            }
        });
    } else if (also) {
        crawl.set_record_sink(std::move(also));
    }
    if (self.warc) {
        crawl.set_exchange_sink([state, w = self.warc.get()](const http_exchange& x) {
            state->handed_over = true;
            w->write(x);
        });
    }
    if (self.saved_pages) {
        const crawler_config& rules = crawl.config();
        crawl.set_body_sink([state, s = self.saved_pages.get(), accept = rules.accept,
                             reject = rules.reject](const record& r, std::string_view body) {
            state->handed_over = true;
            if (!accept.empty() || !reject.empty()) {
                // wget deletes what it fetched only to traverse it; here it is never stored.
                const auto url = boost::urls::parse_uri(r.url);
                if (url && !file_name_kept(*url, accept, reject))
                    return;
            }
            s->write(r, body);
        });
    }
    if (self.sink_state->records || self.warc || self.saved_pages || also_busy) {
        crawl.set_backpressure(
            [this, also_busy = std::move(also_busy)] { return busy() || (also_busy && also_busy()); });
        std::lock_guard lock{self.drained_mutex};
        self.drained_crawler = &crawl;
    }
    if (self.sink_state->records || self.warc || self.saved_pages) {
        // Before the crawl commits its state, what it handed over is written (write(2): a kill -9 loses none
        // of it; flush(done, true) is there for machine crashes too).
        crawl.set_output_flush(
            [this](bool sync, crawler::output_flush_done done) { flush_impl(std::move(done), sync, true); });
    }
    if (self.progress_writer) {
        self.progress = std::make_unique<progress_reporter>(
            self.executor, [c = &crawl] { return c->progress(); }, self.progress_writer,
            self.progress_on_terminal ? std::chrono::milliseconds{500} : self.config.progress_interval,
            self.progress_on_terminal);
    }
}

void output_set::start() {
    if (impl_->server) {
        impl_->server->start();
        if (impl_->log.enabled(log_level::info)) {
            const auto where = impl_->server->local_endpoint();
            impl_->log.write(log_level::info, "metrics on http://" + where.address().to_string() + ":" +
                                                  std::to_string(where.port()) + "/metrics");
        }
    }
    if (impl_->progress)
        impl_->progress->start();
}

void output_set::stop() {
    if (impl_->stopped)
        return;
    impl_->stopped = true;
    if (impl_->server)
        impl_->server->stop();
    if (impl_->progress)
        impl_->progress->stop();
}

std::vector<std::string> output_set::finish(const report& final_report) {
    std::vector<std::string> problems;
    if (impl_->finished)
        return problems;
    impl_->finished = true;
    stop();
    {
        // The crawl is over; the crawler may be destroyed while the writers drain.
        std::lock_guard lock{impl_->drained_mutex};
        impl_->drained_crawler = nullptr;
    }
    if (impl_->sink_state->records) {
        if (std::string e = impl_->sink_state->records->close(); !e.empty())
            problems.push_back(std::move(e));
    }
    if (impl_->warc) {
        if (std::string e = impl_->warc->close(); !e.empty())
            problems.push_back(std::move(e));
        else
            impl_->write_archive_outputs(problems);
    }
    if (impl_->saved_pages) {
        if (std::string e = impl_->saved_pages->close(); !e.empty())
            problems.push_back(std::move(e));
    }
    if (!impl_->config.report_json.empty())
        impl_->write_report_json(final_report, problems);
    return problems;
}

bool output_set::discard() {
    if (impl_->finished || impl_->sink_state->handed_over)
        return false;
    impl_->finished = true;
    stop();
    {
        std::lock_guard lock{impl_->drained_mutex};
        impl_->drained_crawler = nullptr;
    }
    impl_->remove_created();
    return true;
}

void output_set::flush(std::function<void(const std::string& error)> done, bool sync) {
    // The captures' places stay with the writer for the crawl's next flush: its fetch history keeps them.
    flush_impl(
        [done = std::move(done)](const std::string& error, std::vector<archived_capture>) { done(error); },
        sync, false);
}

void output_set::flush_impl(crawler::output_flush_done done, bool sync, bool take_archived) {
    struct barrier_state {
        std::atomic<int> remaining{0};
        crawler::output_flush_done done;
        std::vector<std::function<std::string()>> errors;
        std::vector<archived_capture> archived; // written by the WARC writer's barrier, read by the last one
    };
    auto shared = std::make_shared<barrier_state>();
    shared->done = std::move(done);
    impl& self = *impl_;
    std::vector<std::function<void(std::function<void()>)>> barriers;
    if (auto records = self.sink_state->records) {
        barriers.emplace_back(
            [records, sync](std::function<void()> arrived) { records->barrier(sync, std::move(arrived)); });
        shared->errors.emplace_back([records] { return records->error(); });
    }
    if (auto* w = self.warc.get()) {
        barriers.emplace_back([w, sync, shared, take_archived](std::function<void()> arrived) {
            w->barrier(sync, [w, shared, take_archived, arrived = std::move(arrived)] {
                if (take_archived)
                    shared->archived = w->take_archived();
                arrived(); // the decrement that follows orders this write before the last barrier's read
            });
        });
        shared->errors.emplace_back([w] { return w->error(); });
    }
    if (auto* s = self.saved_pages.get()) {
        barriers.emplace_back(
            [s, sync](std::function<void()> arrived) { s->barrier(sync, std::move(arrived)); });
        shared->errors.emplace_back([s] { return s->error(); });
    }
    if (barriers.empty()) {
        shared->done("", {});
        return;
    }
    shared->remaining = static_cast<int>(barriers.size());
    for (auto& barrier : barriers) {
        barrier([shared] {
            if (shared->remaining.fetch_sub(1, std::memory_order_acq_rel) != 1)
                return;
            std::string first_error;
            for (const auto& error : shared->errors)
                if (first_error.empty())
                    first_error = error();
            shared->done(first_error, std::move(shared->archived));
        });
    }
}

bool output_set::busy() const noexcept {
    return impl_->busy();
}

void output_set::set_on_drained(std::function<void()> on_drained) {
    std::lock_guard lock{impl_->drained_mutex};
    impl_->on_drained = std::move(on_drained);
}

std::vector<std::string> output_set::notes() const {
    return impl_->notes;
}

std::optional<boost::asio::ip::tcp::endpoint> output_set::metrics_endpoint() const {
    if (!impl_->server)
        return std::nullopt;
    return impl_->server->local_endpoint();
}

std::vector<std::string> output_set::warc_files() const {
    return impl_->warc ? impl_->warc->files() : std::vector<std::string>{};
}

} // namespace asiocrawl::outputs
