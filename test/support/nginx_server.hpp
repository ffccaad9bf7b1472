// A real nginx serving a directory of static files on a free loopback port, for tests where what a real web
// server does matters (ETag and Last-Modified from the files, 304 answers to conditional requests). One
// process (`master_process off`), in the foreground, its configuration, logs and pid in a temporary
// directory; stopped with SIGKILL by pid when the test ends, every wait bounded. Each request is logged as
// one line: method, URI, status, If-None-Match, If-Modified-Since (requests()).
#pragma once

#include "support/process.hpp"
#include "support/redis_server.hpp"
#include "support/temp_dir.hpp"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace asiocrawl::test {

/// One logged request.
struct nginx_request {
    std::string method;
    std::string uri;
    int status = 0;
    std::string if_none_match;     ///< "" when not sent
    std::string if_modified_since; ///< "" when not sent
    std::string protocol;          ///< "HTTP/1.1", "HTTP/2.0"
};

/// A certificate and key (PEM files) for an nginx that serves https, with http2 on.
struct nginx_tls {
    std::string certificate_file;
    std::string key_file;
};

class nginx_server {
public:
    /// Serves `root` (over https with HTTP/2 offered in ALPN when `tls` is set). Throws when nginx is not
    /// installed (scripts/install-deps.sh installs it) or does not start within 10 s.
    explicit nginx_server(std::filesystem::path root, std::optional<nginx_tls> tls = std::nullopt)
        : program_(find_nginx())
        , port_(free_loopback_port()) {
        if (program_.empty())
            throw std::runtime_error("nginx is not installed (scripts/install-deps.sh installs it)");
        std::filesystem::create_directories(dir_.path / "logs");
        std::ofstream conf(dir_.path / "nginx.conf");
        // The log fields are separated by tabs and quoted by nothing: none of them holds a tab.
        conf << "daemon off;\nmaster_process off;\nworker_processes 1;\npid "
             << (dir_.path / "nginx.pid").string() << ";\nerror_log "
             << (dir_.path / "logs/error.log").string()
             << " warn;\nevents { worker_connections 256; }\nhttp {\n"
             << "  types { text/html html; text/plain txt; }\n  default_type application/octet-stream;\n"
             << "  log_format test '$request_method\\t$uri\\t$status\\t$http_if_none_match\\t"
                "$http_if_modified_since\t$server_protocol';\n"
             << "  access_log " << access_log().string() << " test;\n"
             << "  client_body_temp_path " << (dir_.path / "tmp").string() << ";\n"
             << "  proxy_temp_path " << (dir_.path / "tmp").string() << ";\n"
             << "  fastcgi_temp_path " << (dir_.path / "tmp").string() << ";\n"
             << "  uwsgi_temp_path " << (dir_.path / "tmp").string() << ";\n"
             << "  scgi_temp_path " << (dir_.path / "tmp").string() << ";\n"
             << "  server {\n    listen 127.0.0.1:" << port_ << (tls ? " ssl http2" : "") << ";\n";
        if (tls)
            conf << "    ssl_certificate " << tls->certificate_file << ";\n    ssl_certificate_key "
                 << tls->key_file << ";\n";
        conf << "    root " << root.string() << ";\n  }\n}\n";
        conf.close();
        process_ = std::make_unique<child_process>(std::vector<std::string>{
            program_, "-p", dir_.path.string(), "-c", (dir_.path / "nginx.conf").string(), "-e",
            (dir_.path / "logs/error.log").string()});
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (!accepts()) {
            if (std::chrono::steady_clock::now() > deadline)
                throw std::runtime_error("nginx did not start: " + process_->stderr_so_far());
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    }

    ~nginx_server() {
        if (process_) {
            process_->signal(SIGKILL);
            process_->wait(std::chrono::seconds(10));
        }
    }

    nginx_server(const nginx_server&) = delete;
    nginx_server& operator=(const nginx_server&) = delete;

    std::string origin() const { return "http://127.0.0.1:" + std::to_string(port_); }

    /// Every request logged so far, in order. nginx writes a line as each request ends.
    std::vector<nginx_request> requests() const {
        std::vector<nginx_request> out;
        std::ifstream in(access_log());
        for (std::string line; std::getline(in, line);) {
            std::vector<std::string> fields;
            std::stringstream split(line);
            for (std::string field; std::getline(split, field, '\t');)
                fields.push_back(field == "-" ? "" : field);
            fields.resize(6);
            out.push_back(
                {fields[0], fields[1], std::atoi(fields[2].c_str()), fields[3], fields[4], fields[5]});
        }
        return out;
    }

private:
    static std::string find_nginx() {
        if (auto found = find_program("nginx"); !found.empty())
            return found;
        return ::access("/usr/sbin/nginx", X_OK) == 0 ? "/usr/sbin/nginx" : "";
    }

    std::filesystem::path access_log() const { return dir_.path / "logs/access.log"; }

    bool accepts() const {
        const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        address.sin_port = htons(port_);
        const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
        ::close(fd);
        return ok;
    }

    std::string program_;
    std::uint16_t port_;
    temp_dir dir_{"nginx"};
    std::unique_ptr<child_process> process_;
};

} // namespace asiocrawl::test
