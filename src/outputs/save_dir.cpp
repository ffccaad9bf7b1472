#include <asiocrawl/outputs/save_dir.hpp>

#include "outputs/background_writer.hpp"
#include "url/percent.hpp"
#include "util/ascii.hpp"
#include "util/digest.hpp"

#include <asiocrawl/outputs/files.hpp>

#include <boost/url/parse.hpp>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>

#include <fcntl.h>
#include <stdexcept>
#include <unistd.h>
#include <vector>

namespace asiocrawl::outputs {

namespace fs = std::filesystem;

namespace {

// ext4, xfs and btrfs refuse longer names.
constexpr std::size_t max_component_bytes = 255;
// Room left for "~" and the hash when a name is cut.
constexpr std::size_t kept_prefix_bytes = 200;

using asiocrawl::detail::percent_decode;

// The first 8 bytes of the SHA-1 of `text`, in hex.
std::string hash_hex(std::string_view text) {
    asiocrawl::detail::message_digest hash(asiocrawl::detail::message_digest::algorithm::sha1);
    hash.update(text);
    return asiocrawl::detail::hex_encode(hash.finish().substr(0, 8));
}

// One file-name component that cannot name anything but itself inside its directory.
std::string safe_component(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if (c == '/' || c == '\\' || byte < 0x20 || byte == 0x7f) {
            char escaped[4];
            std::snprintf(escaped, sizeof escaped, "%%%02X", byte);
            out += escaped;
        } else {
            out += c;
        }
    }
    if (out == ".")
        out = "%2E";
    else if (out == "..")
        out = "%2E%2E";
    if (out.size() > max_component_bytes) {
        std::size_t cut = kept_prefix_bytes;
        // Do not split a UTF-8 sequence: continuation bytes are 10xxxxxx.
        while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80)
            --cut;
        out = out.substr(0, cut) + "~" + hash_hex(out);
    }
    return out;
}

} // namespace

std::optional<fs::path> save_path_for(std::string_view url) {
    const auto parsed = boost::urls::parse_uri(url);
    if (!parsed)
        return std::nullopt;
    const std::string scheme = asiocrawl::detail::ascii::to_lower(parsed->scheme());
    if (scheme != "http" && scheme != "https")
        return std::nullopt;
    std::string host = asiocrawl::detail::ascii::to_lower(percent_decode(parsed->encoded_host()));
    if (host.empty())
        return std::nullopt;
    if (parsed->has_port() && !parsed->port().empty()) {
        const std::string_view port = parsed->port();
        if (!(scheme == "http" && port == "80") && !(scheme == "https" && port == "443"))
            host += ":" + std::string(port);
    }
    fs::path result = safe_component(host);

    std::vector<std::string_view> segments;
    std::string_view path = parsed->encoded_path();
    if (!path.empty() && path.front() == '/')
        path.remove_prefix(1);
    for (;;) {
        const std::size_t slash = path.find('/');
        segments.push_back(path.substr(0, slash));
        if (slash == std::string_view::npos)
            break;
        path.remove_prefix(slash + 1);
    }
    for (std::size_t i = 0; i + 1 < segments.size(); ++i) {
        if (segments[i].empty())
            continue;
        result /= safe_component(percent_decode(segments[i]));
    }
    std::string file = percent_decode(segments.back());
    if (file.empty())
        file = "index.html";
    if (parsed->has_query())
        file += "?" + std::string(parsed->encoded_query());
    result /= safe_component(file);
    return result;
}

struct save_dir_writer::state {
    state(fs::path dir, std::size_t limit)
        : root(std::move(dir))
        , worker(limit, [this](bool sync) { flush(sync); }) {}

    // Runs on the worker thread: files are whole when written; a sync barrier makes them and their
    // directories durable.
    void flush(bool sync) {
        if (!sync)
            return;
        std::set<fs::path> directories;
        for (const auto& path : unsynced) {
            sync_path(path, O_RDONLY);
            directories.insert(path.parent_path());
        }
        unsynced.clear();
        for (const auto& directory : directories)
            sync_path(directory, O_RDONLY | O_DIRECTORY);
    }

    static void sync_path(const fs::path& path, int flags) {
        const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
        if (fd < 0 || ::fsync(fd) != 0) {
            const int saved = errno;
            if (fd >= 0)
                ::close(fd);
            throw std::runtime_error("save_dir: cannot sync " + path.string() + ": " + std::strerror(saved));
        }
        ::close(fd);
    }

    // Runs on the worker thread.
    void save(const fs::path& relative, const std::string& body, bool keep_existing) {
        fs::path directory = root;
        for (const fs::path& component : relative.parent_path()) {
            const fs::path next = directory / component;
            const fs::file_status status = fs::symlink_status(next);
            if (status.type() == fs::file_type::not_found) {
                fs::create_directory(next);
            } else if (status.type() == fs::file_type::regular) {
                // A page saved for "/a" is in the way of "/a/b": it becomes "/a/"'s index.html.
                fs::path aside = next;
                aside += ".asiocrawl-move";
                fs::rename(next, aside);
                fs::create_directory(next);
                fs::rename(aside, next / "index.html");
            } else if (status.type() != fs::file_type::directory) {
                // Not ours (a symlink someone planted, a device): never follow it out of the tree.
                throw std::runtime_error("save_dir: refusing to write through " + next.string());
            }
            directory = next;
        }
        fs::path target = directory / relative.filename();
        const fs::file_status status = fs::symlink_status(target);
        if (status.type() == fs::file_type::directory)
            target /= "index.html";
        else if (status.type() != fs::file_type::not_found && status.type() != fs::file_type::regular)
            throw std::runtime_error("save_dir: refusing to write over " + target.string());
        // A re-crawl found the page unchanged: the copy on disk stays as it is (wget -N), mtime included.
        if (keep_existing && status.type() == fs::file_type::regular)
            return;
        fs::path temporary = target;
        temporary += ".asiocrawl-tmp";
        {
            std::ofstream out{temporary, std::ios::binary | std::ios::trunc};
            out.write(body.data(), static_cast<std::streamsize>(body.size()));
            out.close();
            if (!out) {
                const int saved = errno;
                std::error_code ignored;
                fs::remove(temporary, ignored); // a full disk leaves no half page behind
                throw std::runtime_error("save_dir: cannot write " + temporary.string() +
                                         (saved != 0 ? std::string(": ") + std::strerror(saved) : ""));
            }
        }
        fs::rename(temporary, target);
        unsynced.push_back(target);
        ++files;
    }

    fs::path root;
    std::vector<fs::path> unsynced;
    std::atomic<std::size_t> files{0};
    bool closed = false;
    std::string close_error;
    detail::background_writer worker; // last: its thread uses the members above
};

save_dir_writer::save_dir_writer(fs::path directory, open_mode mode, std::size_t queue_limit_bytes) {
    std::error_code ec;
    if (mode == open_mode::create_new && fs::is_directory(directory, ec) && !fs::is_empty(directory, ec))
        throw output_exists("output.save_dir: " + directory.string() +
                            " holds files already (--overwrite or output.overwrite: true writes into it)");
    // A file in the way, or no permission: said as the other outputs say it, naming the key and the path.
    if (fs::create_directories(directory, ec); ec || !fs::is_directory(directory))
        throw std::runtime_error("output.save_dir: cannot create directory " + directory.string() + ": " +
                                 (ec ? ec.message() : std::string("a file of that name exists")));
    state_ = std::make_shared<state>(fs::absolute(directory), queue_limit_bytes);
}

save_dir_writer::~save_dir_writer() {
    close();
}

void save_dir_writer::write(const record& r, std::string_view body) {
    if (state_->closed)
        return;
    auto relative = save_path_for(r.url);
    if (!relative)
        return;
    auto job = std::make_shared<std::pair<fs::path, std::string>>(std::move(*relative), std::string(body));
    const bool keep_existing = r.change == change_kind::unchanged;
    state_->worker.post(body.size(), [s = state_.get(), job, keep_existing] {
        s->save(job->first, job->second, keep_existing);
    });
}

bool save_dir_writer::busy() const noexcept {
    return state_->worker.busy();
}

void save_dir_writer::set_on_drained(std::function<void()> on_drained) {
    state_->worker.set_on_drained(std::move(on_drained));
}

void save_dir_writer::set_on_error(std::function<void(const std::string& error)> on_error) {
    state_->worker.set_on_error(std::move(on_error));
}

void save_dir_writer::barrier(bool sync, std::function<void()> done) {
    state_->worker.barrier(sync, std::move(done));
}

std::string save_dir_writer::error() const {
    return state_->worker.error();
}

std::string save_dir_writer::close() {
    if (!state_->closed) {
        state_->closed = true;
        state_->worker.finish();
        state_->close_error = state_->worker.error();
    }
    return state_->close_error;
}

std::size_t save_dir_writer::files_written() const noexcept {
    return state_->files.load();
}

} // namespace asiocrawl::outputs
