#include "http/hsts_transport.hpp"

#include "util/ascii.hpp"

#include <boost/url/parse.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>

namespace asiocrawl::detail {

hsts_transport::hsts_transport(std::unique_ptr<transport> inner, hsts_files files, bool trust_headers)
    : inner_(std::move(inner))
    , files_(std::move(files))
    , trust_headers_(trust_headers) {
    const auto now = hsts_store::clock::now();
    for (const auto& path : files_.load) {
        std::ifstream in(path, std::ios::binary);
        if (!in) {
            if (errno == ENOENT)
                continue; // nothing known yet
            throw std::invalid_argument("fetch.hsts.file: cannot read " + path + ": " + std::strerror(errno));
        }
        for (auto& problem : store_.load(in, now))
            load_problems_.push_back("fetch.hsts.file " + path + ": " + problem + ", skipped");
    }
}

boost::asio::awaitable<void> hsts_transport::fetch_into(std::string_view url, fetch_options options,
                                                        std::unique_ptr<fetch_result>& out) {
    const auto now = hsts_store::clock::now();
    if (auto https = store_.upgrade(url, now)) {
        // What a browser shows as "307 Internal Redirect": no request leaves, nothing is archived.
        out = std::make_unique<fetch_result>();
        out->status = 307;
        out->location = std::move(*https);
        out->started = now;
        co_return;
    }
    co_await inner_->fetch_into(url, options, out);
    // Only from a secure answer whose certificate verified, with a head (RFC 6797 8.1).
    if (!trust_headers_ || !out || out->status < 200 || !out->strict_transport_security || url.size() < 8 ||
        !ascii::iequals(url.substr(0, 8), "https://"))
        co_return;
    const auto parsed = boost::urls::parse_uri(url);
    if (!parsed)
        co_return;
    const auto port = parsed->has_port() ? parsed->port_number() : std::uint16_t{443};
    store_.observe(parsed->encoded_host(), port, *out->strict_transport_security, hsts_store::clock::now());
}

std::optional<std::string> hsts_transport::save(const std::string& path) const {
    return write_known_hosts(path, known_hosts_text());
}

std::string hsts_transport::known_hosts_text() const {
    std::ostringstream out;
    store_.save(out, hsts_store::clock::now());
    return std::move(out).str();
}

std::optional<std::string> hsts_transport::write_known_hosts(const std::string& path,
                                                             const std::string& text) {
    const std::string temporary = path + ".tmp";
    {
        std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
        out << text;
        out.flush();
        if (!out) {
            std::remove(temporary.c_str());
            return "HSTS known hosts: cannot write " + temporary;
        }
    }
    if (std::rename(temporary.c_str(), path.c_str()) != 0) {
        std::string problem = "HSTS known hosts: cannot write " + path + ": " + std::strerror(errno);
        std::remove(temporary.c_str());
        return problem;
    }
    return std::nullopt;
}

std::vector<std::string> hsts_transport::finish() {
    auto problems = inner_->finish();
    problems.insert(problems.end(), load_problems_.begin(), load_problems_.end());
    load_problems_.clear();
    for (const auto& path : files_.save)
        if (auto problem = save(path))
            problems.push_back(std::move(*problem));
    return problems;
}

} // namespace asiocrawl::detail
