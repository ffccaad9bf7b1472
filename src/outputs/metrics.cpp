#include <asiocrawl/outputs/metrics.hpp>

#include <asiocrawl/error.hpp>

#include <charconv>
#include <cstdio>
#include <stdexcept>

namespace asiocrawl::outputs {

namespace {

// The shortest text that reads back as the same double ("0.005", not "0.0050000000000000001"), as
// Prometheus' own clients write bucket bounds.
std::string number(double value) {
    char buffer[64];
    const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
    return ec == std::errc{} ? std::string(buffer, end) : std::string("NaN");
}

void header(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
    out.append("# HELP ").append(name).append(" ").append(help).append("\n");
    out.append("# TYPE ").append(name).append(" ").append(type).append("\n");
}

void sample(std::string& out, std::string_view name, std::uint64_t value, std::string_view labels = {}) {
    out.append(name);
    if (!labels.empty())
        out.append("{").append(labels).append("}");
    out.append(" ").append(std::to_string(value)).append("\n");
}

// Label values from error_kind are lower_snake_case already; escaping keeps the format valid regardless.
std::string label_value(std::string_view text) {
    std::string out;
    for (char c : text) {
        if (c == '\\' || c == '"')
            out += '\\';
        if (c == '\n') {
            out += "\\n";
            continue;
        }
        out += c;
    }
    return out;
}

} // namespace

void metrics_registry::observe(const record& r) {
    ++records_;
    body_bytes_ += r.size;
    if (r.tries > 1)
        retries_ += static_cast<std::uint64_t>(r.tries - 1);
    if (r.status != 0)
        ++responses_by_class_[std::to_string(r.status / 100) + "xx"];
    if (r.error == error::robots_denied) {
        ++robots_denied_;
    } else if (r.error == error::type_rejected) {
        ++type_rejected_; // an answer the crawl asked not to read (--accept-type), not a failure
    } else if (r.failed()) {
        ++failures_by_kind_[std::string(error_kind(r.error))];
    } else if (r.is_redirect()) {
        ++redirects_;
    } else {
        ++pages_;
    }
    // Denials never reach the network: their zero latency would only pull the histogram down.
    if (r.error != error::robots_denied) {
        const double seconds = std::chrono::duration<double>(r.elapsed).count();
        ++latency_count_;
        latency_sum_seconds_ += seconds;
        for (std::size_t i = 0; i < latency_buckets.size(); ++i) {
            if (seconds <= latency_buckets[i])
                ++latency_counts_[i];
        }
    }
}

std::string metrics_registry::render(const crawl_progress* live) const {
    std::string out;
    header(out, "asiocrawl_records_total", "counter", "Records made: pages, redirect hops and failures.");
    sample(out, "asiocrawl_records_total", records_);
    header(out, "asiocrawl_pages_total", "counter",
           "Records with a final answer (not a redirect, no error).");
    sample(out, "asiocrawl_pages_total", pages_);
    header(out, "asiocrawl_redirects_total", "counter", "Redirect hops followed or recorded.");
    sample(out, "asiocrawl_redirects_total", redirects_);
    header(out, "asiocrawl_body_bytes_total", "counter", "Response body bytes received.");
    sample(out, "asiocrawl_body_bytes_total", body_bytes_);
    header(out, "asiocrawl_responses_total", "counter", "HTTP responses by status class.");
    for (const auto& [status_class, count] : responses_by_class_)
        sample(out, "asiocrawl_responses_total", count, "class=\"" + status_class + "\"");
    header(out, "asiocrawl_failures_total", "counter",
           "Failed URLs by error kind (robots denials and rejected types excluded).");
    for (const auto& [kind, count] : failures_by_kind_)
        sample(out, "asiocrawl_failures_total", count, "kind=\"" + label_value(kind) + "\"");
    header(out, "asiocrawl_robots_denied_total", "counter", "URLs refused by robots.txt.");
    sample(out, "asiocrawl_robots_denied_total", robots_denied_);
    header(out, "asiocrawl_type_rejected_total", "counter",
           "Answers whose Content-Type accept_types refused (the head read, the body not).");
    sample(out, "asiocrawl_type_rejected_total", type_rejected_);
    header(out, "asiocrawl_retries_total", "counter", "Attempts beyond the first, for finished URLs.");
    sample(out, "asiocrawl_retries_total", retries_);
    if (live != nullptr) {
        header(out, "asiocrawl_queued_urls", "gauge", "URLs waiting to be fetched.");
        sample(out, "asiocrawl_queued_urls", live->queued);
        header(out, "asiocrawl_in_flight_fetches", "gauge", "Fetches under way.");
        sample(out, "asiocrawl_in_flight_fetches", live->in_flight);
        header(out, "asiocrawl_known_hosts", "gauge", "Distinct hosts seen.");
        sample(out, "asiocrawl_known_hosts", live->hosts);
    }
    header(out, "asiocrawl_fetch_duration_seconds", "histogram",
           "Time from the first attempt to the end of the last one, per record.");
    for (std::size_t i = 0; i < latency_buckets.size(); ++i) {
        sample(out, "asiocrawl_fetch_duration_seconds_bucket", latency_counts_[i],
               "le=\"" + number(latency_buckets[i]) + "\"");
    }
    sample(out, "asiocrawl_fetch_duration_seconds_bucket", latency_count_, "le=\"+Inf\"");
    out.append("asiocrawl_fetch_duration_seconds_sum ").append(number(latency_sum_seconds_)).append("\n");
    sample(out, "asiocrawl_fetch_duration_seconds_count", latency_count_);
    return out;
}

boost::asio::ip::tcp::endpoint parse_listen_address(std::string_view host_port) {
    std::string_view host;
    std::string_view port;
    if (!host_port.empty() && host_port.front() == '[') {
        const std::size_t close = host_port.find(']');
        if (close == std::string_view::npos || close + 1 >= host_port.size() || host_port[close + 1] != ':')
            throw std::invalid_argument("metrics_listen: expected [address]:port, got \"" +
                                        std::string(host_port) + "\"");
        host = host_port.substr(1, close - 1);
        port = host_port.substr(close + 2);
    } else {
        const std::size_t colon = host_port.rfind(':');
        if (colon == std::string_view::npos)
            throw std::invalid_argument("metrics_listen: expected host:port, got \"" +
                                        std::string(host_port) + "\"");
        host = host_port.substr(0, colon);
        port = host_port.substr(colon + 1);
    }
    unsigned long port_number = 0;
    if (port.empty() || port.size() > 5)
        throw std::invalid_argument("metrics_listen: bad port in \"" + std::string(host_port) + "\"");
    for (char c : port) {
        if (c < '0' || c > '9')
            throw std::invalid_argument("metrics_listen: bad port in \"" + std::string(host_port) + "\"");
        port_number = port_number * 10 + static_cast<unsigned long>(c - '0');
    }
    if (port_number > 65535)
        throw std::invalid_argument("metrics_listen: port out of range in \"" + std::string(host_port) +
                                    "\"");
    if (host == "localhost")
        host = "127.0.0.1";
    boost::system::error_code ec;
    const auto address = boost::asio::ip::make_address(host.empty() ? "0.0.0.0" : std::string(host), ec);
    if (ec)
        throw std::invalid_argument("metrics_listen: \"" + std::string(host) +
                                    "\" is not an IP address (a name would need a blocking lookup)");
    return {address, static_cast<unsigned short>(port_number)};
}

} // namespace asiocrawl::outputs
