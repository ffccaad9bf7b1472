#include <asiocrawl/outputs/output_set.hpp>

#include <asiocrawl/outputs/metrics.hpp>
#include <asiocrawl/outputs/progress.hpp>
#include <asiocrawl/outputs/save_dir.hpp>
#include <asiocrawl/outputs/warc.hpp>

#include <fstream>
#include <stdexcept>

namespace asiocrawl::outputs {

struct output_set::impl {
    boost::asio::any_io_executor executor;
    output_config config;
    logger log;
    std::function<void(std::string)> progress_writer;

    std::unique_ptr<warc_writer> warc;
    std::unique_ptr<save_dir_writer> saved_pages;
    // Shared with the record sink, which the crawler may call after this object is gone only if the embedder
    // breaks the documented order; a shared_ptr makes that harmless.
    std::shared_ptr<metrics_registry> metrics;
    std::unique_ptr<metrics_server> server;
    std::unique_ptr<progress_reporter> progress;
    crawler* attached = nullptr;
    bool stopped = false;
    bool finished = false;
};

output_set::output_set(boost::asio::any_io_executor executor, const output_config& config, logger log,
                       std::function<void(std::string)> progress_writer)
    : impl_(std::make_unique<impl>()) {
    impl_->executor = std::move(executor);
    impl_->config = config;
    impl_->log = std::move(log);
    impl_->progress_writer = std::move(progress_writer);
    if (!config.warc.path.empty())
        impl_->warc = std::make_unique<warc_writer>(config.warc);
    if (!config.save_dir.empty())
        impl_->saved_pages = std::make_unique<save_dir_writer>(config.save_dir);
    if (!config.metrics_listen.empty()) {
        impl_->metrics = std::make_shared<metrics_registry>();
        // Rendered on the executor at scrape time, so the gauges are live without any lock.
        impl_->server = std::make_unique<metrics_server>(impl_->executor, config.metrics_listen, [this] {
            if (impl_->attached == nullptr)
                return impl_->metrics->render(nullptr);
            const crawl_progress live = impl_->attached->progress();
            return impl_->metrics->render(&live);
        });
    }
    if (!config.report_json.empty()) {
        // Fail before the crawl rather than lose its summary after it.
        std::ofstream probe{config.report_json, std::ios::app};
        if (!probe)
            throw std::runtime_error("report_json: cannot write " + config.report_json);
    }
}

output_set::~output_set() {
    // No summary line from here: the embedder's progress writer may already be gone.
    if (impl_->server)
        impl_->server->stop();
    impl_->progress.reset();
}

void output_set::attach(crawler& crawl, record_sink also, std::function<bool()> also_busy) {
    impl& self = *impl_;
    self.attached = &crawl;
    if (self.metrics) {
        crawl.set_record_sink([metrics = self.metrics, also = std::move(also)](const record& r) {
            if (also)
                also(r);
            metrics->observe(r);
        });
    } else if (also) {
        crawl.set_record_sink(std::move(also));
    }
    if (self.warc) {
        crawl.set_exchange_sink([w = self.warc.get()](const http_exchange& x) { w->write(x); });
    }
    if (self.saved_pages) {
        crawl.set_body_sink(
            [s = self.saved_pages.get()](const record& r, std::string_view body) { s->write(r, body); });
    }
    if (self.warc || self.saved_pages || also_busy) {
        crawl.set_backpressure(
            [this, also_busy = std::move(also_busy)] { return busy() || (also_busy && also_busy()); });
    }
    if (self.progress_writer) {
        self.progress = std::make_unique<progress_reporter>(
            self.executor, [c = &crawl] { return c->progress(); }, self.progress_writer);
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
    if (impl_->warc) {
        if (std::string e = impl_->warc->close(); !e.empty())
            problems.push_back(std::move(e));
    }
    if (impl_->saved_pages) {
        if (std::string e = impl_->saved_pages->close(); !e.empty())
            problems.push_back(std::move(e));
    }
    if (!impl_->config.report_json.empty()) {
        std::ofstream out{impl_->config.report_json, std::ios::trunc};
        write_report_json(out, final_report);
        out.close();
        if (!out)
            problems.push_back("report_json: cannot write " + impl_->config.report_json);
    }
    return problems;
}

bool output_set::busy() const noexcept {
    return (impl_->warc && impl_->warc->busy()) || (impl_->saved_pages && impl_->saved_pages->busy());
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
