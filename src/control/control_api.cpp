// The control API's routing and JSON (docs/CONTROL.md). No sockets here: the listener
// (src/outputs/metrics_server.cpp) reads a bounded request and writes back what handle() answers.
#include <asiocrawl/outputs/control_api.hpp>

#include <asiocrawl/error.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace asiocrawl::outputs {

namespace {

namespace json = boost::json;

/// A caller's mistake: answered with `status` and the message as {"error": ...}.
struct refused : std::runtime_error {
    refused(unsigned s, const std::string& what)
        : std::runtime_error(what)
        , status(s) {}
    unsigned status;
};

listener_response reply(unsigned status, const json::value& body) {
    listener_response r;
    r.status = status;
    r.body = json::serialize(body) + "\n";
    return r;
}

listener_response error_reply(unsigned status, std::string_view message) {
    return reply(status, json::object{{"error", message}});
}

/// "2s", "500ms", "1.5m", "1h" or a number of seconds.
std::chrono::milliseconds parse_delay(const json::value& v) {
    double seconds = 0;
    if (v.is_number()) {
        seconds = v.to_number<double>();
    } else if (v.is_string()) {
        const std::string_view text = v.as_string();
        double number = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
        if (ec != std::errc{} || end == text.data())
            throw refused(400, "delay: expected a duration such as \"2s\" or \"500ms\", got \"" +
                                   std::string(text) + "\"");
        const std::string_view unit(end, static_cast<std::size_t>(text.data() + text.size() - end));
        if (unit == "ms")
            seconds = number / 1000;
        else if (unit == "s" || unit.empty())
            seconds = number;
        else if (unit == "m")
            seconds = number * 60;
        else if (unit == "h")
            seconds = number * 3600;
        else
            throw refused(400, "delay: unknown unit \"" + std::string(unit) + "\" (ms, s, m, h)");
    } else {
        throw refused(400, "delay: expected a duration such as \"2s\" or a number of seconds");
    }
    if (!std::isfinite(seconds) || seconds < 0 || seconds > 86400)
        throw refused(400, "delay: must be between 0 and 24h");
    return std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(seconds * 1000)));
}

json::object host_json(const host_status& h) {
    return json::object{{"host", h.host},
                        {"waiting", h.waiting},
                        {"in_flight", h.in_flight},
                        {"delay_ms", h.delay.count()},
                        {"max_per_host", h.max_per_host},
                        {"done", h.done},
                        {"failures", h.failures},
                        {"paused", h.paused}};
}

json::value parse_body(std::string_view body) {
    boost::system::error_code ec;
    auto value = json::parse(body, ec);
    if (ec)
        throw refused(400, "the body is not JSON: " + ec.message());
    return value;
}

/// A host as a path segment names it: a host name or an IP address (v6 in brackets), at most 255 bytes.
std::string host_segment(std::string_view segment) {
    if (segment.empty() || segment.size() > 255)
        throw refused(400, "a host name is 1 to 255 characters");
    for (const char c : segment)
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
              c == '-' || c == '_' || c == '[' || c == ']' || c == ':'))
            throw refused(400, "not a host name: \"" + std::string(segment) + "\"");
    return std::string(segment);
}

std::size_t number_param(std::string_view name, std::string_view text, std::size_t max) {
    std::size_t n = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc{} || end != text.data() + text.size() || n > max)
        throw refused(400, std::string(name) + ": expected a number up to " + std::to_string(max));
    return n;
}

std::string cut(std::string_view text) {
    return std::string(text.substr(0, crawl_history::max_text_bytes));
}

double seconds_of(std::chrono::steady_clock::duration d) {
    return std::chrono::duration<double>(d).count();
}

json::object latency_json(const crawl_history::host_latency& h) {
    const auto requests = std::max<std::uint64_t>(h.requests, 1);
    return json::object{{"host", h.host},
                        {"requests", h.requests},
                        {"mean_ms", static_cast<double>(h.total_us) / 1000.0 / static_cast<double>(requests)},
                        {"max_ms", static_cast<double>(h.max_us) / 1000.0}};
}

} // namespace

void crawl_history::observe(const record& r) {
    const double at =
        std::chrono::duration<double>(r.started + r.elapsed).count(); // crawl time of its last attempt's end
    latest_ = std::max(latest_, at);
    if (r.status >= 200 && r.status < 600)
        ++classes_[static_cast<std::size_t>(r.status / 100 - 2)];
    else
        ++classes_[class_none];
    if (r.failed() && r.error != error::robots_denied && r.error != error::type_rejected) {
        ++errors_seen_;
        std::string kind(error_kind(r.error));
        if (!kinds_.contains(kind) && kinds_.size() >= max_error_kinds - 1) // room for "other"
            kind = "other";
        ++kinds_[kind];
        if (errors_.size() >= max_errors)
            errors_.pop_front();
        errors_.push_back({cut(r.url), std::move(kind), r.status, cut(r.error_detail), at});
    }
    if (r.tries > 0) {
        const auto parsed = boost::urls::parse_uri(r.url);
        if (!parsed)
            return;
        std::string host = parsed->host_address();
        for (auto& c : host)
            if (c >= 'A' && c <= 'Z')
                c = static_cast<char>(c - 'A' + 'a');
        auto found = hosts_.find(host);
        if (found == hosts_.end()) {
            if (hosts_.size() >= max_latency_hosts) {
                ++untracked_records_;
                return;
            }
            found = hosts_.emplace(host, host_latency{host, 0, 0, 0}).first;
        }
        const auto us = static_cast<std::uint64_t>(std::max<std::int64_t>(r.elapsed.count(), 0));
        ++found->second.requests;
        found->second.total_us += us;
        found->second.max_us = std::max(found->second.max_us, us);
    }
}

bool crawl_history::sample(double t, const crawl_progress& p, double interval) {
    if (!samples_.empty() && t < samples_.back().t + interval)
        return false;
    if (samples_.size() >= max_samples)
        samples_.pop_front();
    samples_.push_back({t, p.records, p.bytes, p.failures, classes_});
    return true;
}

std::vector<crawl_history::host_latency> crawl_history::slowest(std::size_t n) const {
    std::vector<const host_latency*> all;
    all.reserve(hosts_.size());
    for (const auto& [name, h] : hosts_)
        all.push_back(&h);
    // mean a > mean b, compared as total_a * requests_b > total_b * requests_a (no division, no rounding).
    const auto slower = [](const host_latency* a, const host_latency* b) {
        const auto left = static_cast<long double>(a->total_us) * static_cast<long double>(b->requests);
        const auto right = static_cast<long double>(b->total_us) * static_cast<long double>(a->requests);
        if (left != right)
            return left > right;
        if (a->requests != b->requests)
            return a->requests > b->requests;
        return a->host < b->host;
    };
    n = std::min(n, all.size());
    std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n), all.end(), slower);
    std::vector<host_latency> out;
    out.reserve(n);
    for (std::size_t i = 0; i < n; ++i)
        out.push_back(*all[i]);
    return out;
}

bool constant_time_equal(std::string_view a, std::string_view b) noexcept {
    unsigned char diff = a.size() == b.size() ? 0 : 1;
    const std::size_t n = std::max(a.size(), b.size());
    for (std::size_t i = 0; i < n; ++i) {
        const auto x = static_cast<unsigned char>(i < a.size() ? a[i] : 0);
        const auto y = static_cast<unsigned char>(i < b.size() ? b[i] : 0);
        diff = static_cast<unsigned char>(diff | (x ^ y));
    }
    return diff == 0;
}

bool needs_token(std::string_view host_port) {
    std::string_view host = host_port.substr(0, host_port.rfind(':'));
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
        host = host.substr(1, host.size() - 2);
    if (host == "localhost" || host == "::1")
        return false;
    boost::system::error_code ec;
    const auto address = boost::asio::ip::make_address(std::string(host), ec);
    return ec || !address.is_loopback();
}

control_api::control_api(crawler& crawl, std::string token, logger log)
    : crawl_(crawl)
    , token_(std::move(token))
    , log_(std::move(log)) {}

void control_api::observe(const record& r) {
    history_.observe(r);
    // progress() only when the record's time says a sample may be due: at most once a second.
    const auto& samples = history_.samples();
    if (samples.empty() || history_.latest_record_time() >= samples.back().t + 1.0)
        sample();
}

void control_api::sample() {
    const auto p = crawl_.progress();
    history_.sample(seconds_of(p.elapsed), p);
}

listener_response control_api::handle(const listener_request& request) {
    if (!request.target.starts_with("/api/") && request.target != "/api")
        return dashboard_file(request);
    if (!token_.empty()) {
        constexpr std::string_view scheme = "Bearer ";
        const std::string_view given = request.authorization.starts_with(scheme)
                                           ? request.authorization.substr(scheme.size())
                                           : std::string_view{};
        if (!constant_time_equal(given, token_)) {
            if (log_.enabled(log_level::warning))
                log_.write(log_level::warning,
                           "control API: " + std::string(request.method) + " " +
                               std::string(request.target.substr(0, 200)) + " from " + request.peer +
                               " refused: " + (given.empty() ? "no bearer token" : "wrong token"));
            auto r = error_reply(401, "a bearer token is required (Authorization: Bearer TOKEN)");
            r.www_authenticate = "Bearer realm=\"asiocrawl\"";
            return r;
        }
    }
    try {
        auto answer = route(request);
        if (request.method != "GET" && answer.status < 300 && log_.enabled(log_level::info)) {
            std::string line = "control API: " + std::string(request.method) + " " +
                               std::string(request.target.substr(0, 200)) + " from " + request.peer;
            if (!request.body.empty())
                line += " " + std::string(request.body.substr(0, 500));
            log_.write(log_level::info, line);
        }
        return answer;
    } catch (const refused& e) {
        auto r = error_reply(e.status, e.what());
        if (e.status == 405)
            r.allow = request.target.starts_with("/api/hosts/") ? "POST, PUT" : "GET";
        return r;
    } catch (const std::invalid_argument& e) {
        return error_reply(400, e.what());
    }
}

listener_response control_api::route(const listener_request& request) {
    const auto parsed = boost::urls::parse_origin_form(request.target);
    if (!parsed)
        throw refused(400, "not a request target");
    std::vector<std::string> segments;
    for (const auto segment : parsed->segments())
        segments.push_back(segment);
    if (segments.size() < 2 || segments[0] != "api")
        throw refused(404, "no such endpoint");
    const std::string_view method = request.method;
    const auto only = [&](std::string_view wanted) {
        if (method != wanted)
            throw refused(405, std::string(request.target.substr(0, request.target.find('?'))) + " takes " +
                                   std::string(wanted));
    };
    const std::string& what = segments[1];
    sample(); // a poll keeps the history's samples a second apart while nothing else happens

    if (what == "status" && segments.size() == 2) {
        only("GET");
        const auto p = crawl_.progress();
        const double seconds = std::chrono::duration<double>(p.elapsed).count();
        const auto hosts = crawl_.hosts();
        json::array paused;
        for (const auto& h : hosts)
            if (h.paused)
                paused.emplace_back(h.host);
        // The busiest hosts: most URLs waiting or in flight, at most 10, for a dashboard's table.
        std::vector<const host_status*> busiest;
        for (const auto& h : hosts)
            busiest.push_back(&h);
        const auto load = [](const host_status* h) { return h->waiting + h->in_flight; };
        std::stable_sort(busiest.begin(), busiest.end(),
                         [&](const host_status* a, const host_status* b) { return load(a) > load(b); });
        busiest.resize(std::min<std::size_t>(busiest.size(), 10));
        json::array busiest_json;
        for (const auto* h : busiest)
            busiest_json.emplace_back(host_json(*h));
        json::object classes;
        for (std::size_t i = 0; i < crawl_history::class_count; ++i)
            classes[crawl_history::class_names[i]] = history_.status_classes()[i];
        json::object kinds;
        for (const auto& [kind, n] : history_.failures_by_kind())
            kinds[kind] = n;
        json::array slowest;
        for (const auto& h : history_.slowest(10))
            slowest.emplace_back(latency_json(h));
        return reply(200,
                     json::object{
                         {"records", p.records},
                         {"waiting", p.queued},
                         {"in_flight", p.in_flight},
                         {"hosts", p.hosts},
                         {"failures", p.failures},
                         {"robots_denied", p.robots_denied},
                         {"retries", p.retries},
                         {"bytes", p.bytes},
                         {"elapsed_seconds", seconds},
                         {"records_per_second", seconds > 0 ? static_cast<double>(p.records) / seconds : 0.0},
                         {"bytes_per_second", seconds > 0 ? static_cast<double>(p.bytes) / seconds : 0.0},
                         {"paused_hosts", std::move(paused)},
                         {"busiest_hosts", std::move(busiest_json)},
                         {"status_classes", std::move(classes)},
                         {"failures_by_kind", std::move(kinds)},
                         {"slowest_hosts", std::move(slowest)},
                         {"errors_seen", history_.errors_seen()},
                     });
    }

    if (what == "history" && segments.size() == 2) {
        only("GET");
        double since = -1;
        for (const auto param : parsed->params()) {
            if (param.key != "since")
                throw refused(400, "unknown parameter \"" + std::string(param.key) + "\" (since)");
            const std::string_view text = param.value;
            const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), since);
            if (ec != std::errc{} || end != text.data() + text.size() || !std::isfinite(since))
                throw refused(400, "since: expected a number of seconds");
        }
        json::array fields{"t", "records", "bytes", "failures"};
        for (const auto name : crawl_history::class_names)
            fields.emplace_back(name);
        json::array samples;
        for (const auto& x : history_.samples()) {
            if (x.t <= since)
                continue;
            json::array row;
            row.emplace_back(x.t);
            row.emplace_back(x.records);
            row.emplace_back(x.bytes);
            row.emplace_back(x.failures);
            for (const auto n : x.classes)
                row.emplace_back(n);
            samples.emplace_back(std::move(row));
        }
        return reply(200, json::object{{"interval_seconds", 1},
                                       {"capacity", crawl_history::max_samples},
                                       {"fields", std::move(fields)},
                                       {"samples", std::move(samples)}});
    }

    if (what == "errors" && segments.size() == 2) {
        only("GET");
        std::size_t limit = crawl_history::max_errors;
        for (const auto param : parsed->params()) {
            if (param.key != "limit")
                throw refused(400, "unknown parameter \"" + std::string(param.key) + "\" (limit)");
            limit = number_param("limit", param.value, crawl_history::max_errors);
        }
        json::array errors;
        const auto& kept = history_.errors();
        for (auto e = kept.rbegin(); e != kept.rend() && errors.size() < limit; ++e) {
            json::object o{{"url", e->url}, {"kind", e->kind}, {"status", e->status}, {"at", e->at}};
            if (!e->detail.empty())
                o["detail"] = e->detail;
            errors.emplace_back(std::move(o));
        }
        return reply(200, json::object{{"total", history_.errors_seen()},
                                       {"capacity", crawl_history::max_errors},
                                       {"errors", std::move(errors)}});
    }

    if (what == "hosts" && segments.size() == 2) {
        only("GET");
        json::array out;
        for (const auto& h : crawl_.hosts())
            out.emplace_back(host_json(h));
        return reply(200, json::object{{"hosts", std::move(out)}});
    }

    if (what == "hosts" && segments.size() == 3) {
        only("PUT");
        const auto host = host_segment(segments[2]);
        const auto body = parse_body(request.body);
        if (!body.is_object())
            throw refused(400, "expected an object: {\"delay\": \"2s\", \"max_per_host\": 1}");
        host_limits limits;
        for (const auto& [key, value] : body.as_object()) {
            if (key == "delay") {
                limits.delay = parse_delay(value);
            } else if (key == "max_per_host") {
                if (!value.is_int64() || value.as_int64() < 1 || value.as_int64() > 10000)
                    throw refused(400, "max_per_host: expected a whole number from 1 to 10000");
                limits.max_per_host = static_cast<std::size_t>(value.as_int64());
            } else {
                throw refused(400, "unknown field \"" + std::string(key) + "\" (delay, max_per_host)");
            }
        }
        if (!limits.delay && !limits.max_per_host)
            throw refused(400, "nothing to change: give delay, max_per_host or both");
        crawl_.set_host_limits(host, limits);
        for (const auto& h : crawl_.hosts())
            if (h.host == host)
                return reply(200, host_json(h));
        throw refused(404, "no such host: " + host); // not reached: set_host_limits keeps it
    }

    if (what == "hosts" && segments.size() == 4 && (segments[3] == "pause" || segments[3] == "resume")) {
        only("POST");
        const auto host = host_segment(segments[2]);
        if (segments[3] == "pause") {
            crawl_.pause_host(host);
            return reply(200, json::object{{"host", host}, {"paused", true}});
        }
        const bool was = crawl_.resume_host(host);
        return reply(200, json::object{{"host", host}, {"paused", false}, {"was_paused", was}});
    }

    if (what == "urls" && segments.size() == 2) {
        only("GET");
        url_query query;
        for (const auto param : parsed->params()) {
            if (param.key == "state")
                query.state = param.value;
            else if (param.key == "host")
                query.host = host_segment(param.value);
            else if (param.key == "offset")
                query.offset = number_param("offset", param.value, 1u << 30);
            else if (param.key == "limit")
                query.limit = number_param("limit", param.value, 1000);
            else
                throw refused(400, "unknown parameter \"" + std::string(param.key) +
                                       "\" (state, host, offset, limit)");
        }
        if (query.state != "waiting" && query.state != "failed")
            throw refused(400, "state: \"waiting\" or \"failed\"");
        for (auto& c : query.host)
            if (c >= 'A' && c <= 'Z')
                c = static_cast<char>(c - 'A' + 'a');
        const auto page = crawl_.urls(query);
        json::array urls;
        for (const auto& u : page.urls) {
            json::object o{{"url", u.url}, {"host", u.host}, {"state", u.state}};
            if (u.state == "failed") {
                o["error_kind"] = u.error_kind;
                o["status"] = u.status;
                if (!u.detail.empty())
                    o["detail"] = u.detail;
            }
            urls.emplace_back(std::move(o));
        }
        return reply(200, json::object{{"total", page.total},
                                       {"offset", query.offset},
                                       {"limit", query.limit},
                                       {"urls", std::move(urls)}});
    }

    if (what == "seeds" && segments.size() == 2) {
        only("POST");
        const auto body = parse_body(request.body);
        const json::value* list = &body;
        if (body.is_object()) {
            list = body.as_object().if_contains("urls");
            if (list == nullptr)
                throw refused(400, "expected {\"urls\": [\"https://...\", ...]}");
        }
        if (!list->is_array())
            throw refused(400, "expected {\"urls\": [\"https://...\", ...]}");
        std::vector<std::string> urls;
        for (const auto& u : list->as_array()) {
            if (!u.is_string())
                throw refused(400, "every URL is a string");
            urls.emplace_back(u.as_string());
        }
        if (urls.empty() || urls.size() > 10000)
            throw refused(400, "give 1 to 10000 URLs");
        json::array verdicts;
        std::size_t admitted = 0;
        for (const auto& v : crawl_.add_seeds(urls)) {
            json::object o{{"url", v.url}, {"admitted", v.admitted}};
            if (!v.admitted)
                o["reason"] = v.reason;
            admitted += v.admitted ? 1 : 0;
            verdicts.emplace_back(std::move(o));
        }
        return reply(200, json::object{{"admitted", admitted}, {"seeds", std::move(verdicts)}});
    }

    if ((what == "stop" || what == "abort") && segments.size() == 2) {
        only("POST");
        if (what == "stop")
            crawl_.stop();
        else
            crawl_.abort();
        return reply(202, json::object{{"stopping", what == "stop" ? "graceful" : "abort"}});
    }

    throw refused(404, "no such endpoint");
}

} // namespace asiocrawl::outputs
