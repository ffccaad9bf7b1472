// asiocrawl-bench-site: writes a generated site (demo/site.hpp) as static files plus an nginx configuration
// that serves them exactly as the in-process demo server would: the same statuses, Locations and media types.
// nginx cannot expand "{{origin}}" per request, so the port is fixed at export time.
//
// Layout under --out: root/ (the documents), nginx.conf, expected.txt (the ground truth, one request target
// per line), logs/ and tmp/ (nginx's own files). nginx finds a file by the percent-decoded path ($uri), so
// files are written under decoded names; a target with a query is stored under /__q/<path>/<query>.html.

#include "url/percent.hpp"

#include <asiocrawl_demo/site.hpp>

#include <boost/program_options.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>

namespace {

namespace fs = std::filesystem;
namespace po = boost::program_options;
using asiocrawl::demo::resource;

constexpr std::string_view program = "asiocrawl-bench-site";

/// A port nobody listens on right now (nginx binds it a moment later; a race is possible but harmless here).
unsigned short free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
        throw std::runtime_error("cannot find a free port");
    }
    ::close(fd);
    return ntohs(addr.sin_port);
}

std::string media_type(std::string_view content_type) {
    return std::string(content_type.substr(0, content_type.find(';')));
}

/// The media type nginx gives a file by its extension (the `types` block written below).
const std::map<std::string, std::string, std::less<>> types_by_extension{
    {"html", "text/html"}, {"xhtml", "application/xhtml+xml"}, {"txt", "text/plain"},
    {"png", "image/png"},  {"json", "application/json"},
};

std::string type_of_file(std::string_view path) {
    const auto slash = path.rfind('/');
    const auto dot = path.rfind('.');
    if (dot == std::string_view::npos || (slash != std::string_view::npos && dot < slash))
        return "application/octet-stream";
    const auto found = types_by_extension.find(path.substr(dot + 1));
    return found == types_by_extension.end() ? "application/octet-stream" : found->second;
}

/// A double-quoted nginx string.
std::string nginx_string(std::string_view s) {
    std::string out = "\"";
    for (const char c : s) {
        if (c == '$')
            throw std::logic_error("nginx would expand '$' in " + std::string(s));
        if (c == '"' || c == '\\')
            out += std::string("\\") + c;
        else
            out += c;
    }
    return out + "\"";
}

bool is_followed_redirect(int status) {
    return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

struct exporter {
    fs::path out;
    std::string host; // "127.0.0.1:port"
    std::set<fs::path> written;
    std::string locations; // exact-match location blocks
    std::uint64_t bytes = 0;
    std::size_t files = 0;

    void write_file(const fs::path& relative, std::string_view body) {
        const fs::path path = out / "root" / relative;
        if (!written.insert(path).second)
            throw std::logic_error("two resources map to the file " + path.string());
        fs::create_directories(path.parent_path());
        std::ofstream f(path, std::ios::binary | std::ios::trunc);
        f.write(body.data(), static_cast<std::streamsize>(body.size()));
        if (!f)
            throw std::runtime_error("cannot write " + path.string());
        bytes += body.size();
        ++files;
    }

    void add(const std::string& target, const resource& r) {
        const auto question = target.find('?');
        // nginx's $uri: every %XX decoded ("%2F" included), as the project's one decoder does it.
        const std::string path =
            asiocrawl::detail::percent_decode(std::string_view(target).substr(0, question));
        const std::string body = asiocrawl::demo::expand_placeholders(r.body, host);
        if (r.status != 200) {
            if (question != std::string::npos)
                throw std::logic_error("cannot export a non-200 resource with a query: " + target);
            std::string block = "        location = " + nginx_string(path) + " {\n";
            const std::string location = asiocrawl::demo::expand_placeholders(r.location, host);
            if (is_followed_redirect(r.status) && !location.empty()) {
                block +=
                    "            return " + std::to_string(r.status) + " " + nginx_string(location) + ";\n";
            } else {
                // nginx's own body for the status: the generator's error bodies hold no links.
                if (!location.empty())
                    block += "            add_header Location " + nginx_string(location) + " always;\n";
                block += "            return " + std::to_string(r.status) + ";\n";
            }
            locations += block + "        }\n";
            return;
        }
        if (question != std::string::npos) {
            if (media_type(r.content_type) != "text/html")
                throw std::logic_error("cannot export a non-HTML resource with a query: " + target);
            write_file("__q" + path + "/" + target.substr(question + 1) + ".html", body);
            return;
        }
        const std::string file = path.back() == '/' ? path + "index.html" : path;
        write_file(file.substr(1), body);
        if (path.back() == '/') {
            // try_files on a directory does not reach the index module; name the index file.
            locations += "        location = " + nginx_string(path) + " {\n            try_files " +
                         nginx_string(file) + " =404;\n        }\n";
        }
        if (const auto type = media_type(r.content_type); type != type_of_file(file)) {
            locations += "        location = " + nginx_string(path) + " {\n            types { }\n" +
                         "            default_type " + nginx_string(type) + ";\n        }\n";
        }
    }

    void write_config(unsigned short port) const {
        const std::string dir = fs::absolute(out).string();
        std::string types;
        for (const auto& [extension, type] : types_by_extension)
            types += "        " + type + " " + extension + ";\n";
        std::ofstream conf(out / "nginx.conf", std::ios::trunc);
        conf << "# Written by " << program << ". Run: nginx -p " << dir << " -c " << dir << "/nginx.conf -e "
             << dir << "/logs/error.log\n"
             << "daemon off;\nworker_processes 1;\npid " << dir << "/nginx.pid;\n"
             << "error_log " << dir << "/logs/error.log warn;\n"
             << "events {\n    worker_connections 4096;\n}\n"
             << "http {\n    types {\n"
             << types << "    }\n"
             << "    default_type application/octet-stream;\n"
             << "    log_format bench '$host $request_uri $status';\n"
             << "    access_log " << dir << "/logs/access.log bench;\n"
             << "    client_body_temp_path " << dir << "/tmp/body;\n"
             << "    proxy_temp_path " << dir << "/tmp/proxy;\n"
             << "    fastcgi_temp_path " << dir << "/tmp/fastcgi;\n"
             << "    uwsgi_temp_path " << dir << "/tmp/uwsgi;\n"
             << "    scgi_temp_path " << dir << "/tmp/scgi;\n"
             << "    sendfile on;\n    tcp_nopush on;\n    server_tokens off;\n"
             << "    keepalive_timeout 65;\n    keepalive_requests 1000000;\n"
             << "    # Locations exactly as the generator wrote them, relative ones included.\n"
             << "    absolute_redirect off;\n"
             << "    # A target with a query is a file of its own (see " << program << ").\n"
             << "    map $args $bench_file {\n        \"\" $uri;\n        default /__q$uri/$args.html;\n    "
                "}\n"
             << "    server {\n        listen 127.0.0.1:" << port << ";\n"
             << "        root " << dir << "/root;\n        index index.html;\n"
             << "        location / {\n            try_files $bench_file =404;\n        }\n"
             << locations << "    }\n}\n";
        if (!conf)
            throw std::runtime_error("cannot write nginx.conf");
    }
};

int usage_error(std::string_view message) {
    std::cerr << program << ": " << message << "\nTry '" << program << " --help'.\n";
    return 2;
}

} // namespace

int main(int argc, char** argv) {
    std::string out;
    std::int64_t port = 0;
    std::int64_t pages = 20'000;
    std::int64_t seed = 1;
    std::int64_t links = 12;
    std::int64_t min_bytes = 10'000;
    std::int64_t max_bytes = 60'000;
    std::string mix;

    po::options_description options("Options");
    options.add_options()                                                                       //
        ("help,h", "print this help and exit")                                                  //
        ("out", po::value(&out)->required()->value_name("DIR"), "directory to write (created)") //
        ("port", po::value(&port)->default_value(0), "nginx port on 127.0.0.1 (0: a free one)") //
        ("pages", po::value(&pages)->default_value(20'000), "content pages")                    //
        ("seed", po::value(&seed)->default_value(1), "generator seed")                          //
        ("links", po::value(&links)->default_value(12), "links per content page")               //
        ("min-bytes", po::value(&min_bytes)->default_value(10'000), "smallest page in bytes")   //
        ("max-bytes", po::value(&max_bytes)->default_value(60'000), "largest page in bytes")    //
        ("mix", po::value(&mix)->value_name("KIND=W,..."), "link mix (see asiocrawl-demo-server)");
    po::variables_map vm;
    try {
        po::store(po::command_line_parser(argc, argv)
                      .options(options)
                      .positional(po::positional_options_description{})
                      .run(),
                  vm);
        if (vm.count("help") != 0) {
            std::cout << "Usage: " << program << " --out DIR [options]\n\n"
                      << "Writes a generated site, its ground truth and an nginx config serving it.\n"
                      << "Prints 'port N' and the site's size.\n\n"
                      << options;
            return 0;
        }
        po::notify(vm);
    } catch (const po::error& e) {
        return usage_error(e.what());
    }
    if (port < 0 || port > 65535 || pages < 1 || pages > 10'000'000 || seed < 0 || seed > 4294967295LL ||
        links < 1 || links > 10'000 || min_bytes < 0 || min_bytes > max_bytes || max_bytes > 100'000'000)
        return usage_error("an option is out of range");

    try {
        asiocrawl::demo::site_options site_options;
        site_options.pages = static_cast<std::uint32_t>(pages);
        site_options.seed = static_cast<std::uint32_t>(seed);
        site_options.links_per_page = static_cast<std::uint32_t>(links);
        site_options.min_page_bytes = static_cast<std::uint32_t>(min_bytes);
        site_options.max_page_bytes = static_cast<std::uint32_t>(max_bytes);
        site_options.links = asiocrawl::demo::parse_link_mix(mix);
        const auto site = asiocrawl::demo::generate_site(site_options);

        const auto chosen = port == 0 ? free_port() : static_cast<unsigned short>(port);
        exporter e{fs::path(out), "127.0.0.1:" + std::to_string(chosen), {}, {}, 0, 0};
        fs::remove_all(e.out / "root");
        for (const auto* dir : {"root", "logs", "tmp"})
            fs::create_directories(e.out / dir);
        for (const auto& [target, r] : site.resources)
            e.add(target, r);
        e.write_config(chosen);
        std::ofstream expected(e.out / "expected.txt", std::ios::trunc);
        for (const auto& target : site.expected_requests)
            expected << target << '\n';
        if (!expected.flush())
            throw std::runtime_error("cannot write expected.txt");
        std::cout << "port " << chosen << "\nfiles " << e.files << "\nbytes " << e.bytes << "\nexpected "
                  << site.expected_requests.size() << "\n";
        return 0;
    } catch (const std::exception& ex) {
        std::cerr << program << ": " << ex.what() << "\n";
        return 1;
    }
}
