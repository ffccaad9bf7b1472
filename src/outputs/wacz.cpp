// WACZ 1.1.1: the crawl's WARC files, their merged CDXJ index, the page list and datapackage.json in one
// ZIP file (libzip). The WARC files are stored, not deflated again (they are gzip already, and a replay tool
// reads byte ranges of them straight out of the ZIP).
#include <asiocrawl/outputs/archive.hpp>

#include "util/digest.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <zip.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <deque>
#include <fstream>
#include <functional>
#include <memory>
#include <queue>
#include <set>
#include <stdexcept>
#include <unordered_set>

namespace asiocrawl::outputs {

namespace {

std::string base_name(const std::string& path) {
    const auto slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

/// "sha256:<hex>" and the size of what it was given (a file's bytes fed in pieces).
class sha256_hasher {
public:
    void update(const char* data, std::size_t n) { hash_.update({data, n}); }
    std::string finish() { return "sha256:" + asiocrawl::detail::hex_encode(hash_.finish()); }
    std::uint64_t bytes() const noexcept { return hash_.bytes(); }

private:
    asiocrawl::detail::message_digest hash_{asiocrawl::detail::message_digest::algorithm::sha256};
};

struct resource {
    std::string name;
    std::string path; // in the ZIP
    std::string hash;
    std::uint64_t bytes = 0;
};

resource describe_file(const std::string& file, std::string zip_path) {
    std::FILE* f = std::fopen(file.c_str(), "rb");
    if (!f)
        throw std::runtime_error("output.wacz: cannot read " + file + ": " + std::strerror(errno));
    sha256_hasher hash;
    std::string buffer(1 << 16, '\0');
    std::size_t n = 0;
    while ((n = std::fread(buffer.data(), 1, buffer.size(), f)) > 0)
        hash.update(buffer.data(), n);
    const bool failed = std::ferror(f) != 0;
    std::fclose(f);
    if (failed)
        throw std::runtime_error("output.wacz: cannot read " + file);
    resource r;
    r.name = base_name(zip_path);
    r.path = std::move(zip_path);
    r.hash = hash.finish();
    r.bytes = hash.bytes();
    return r;
}

resource describe_text(const std::string& text, std::string zip_path) {
    sha256_hasher hash;
    hash.update(text.data(), text.size());
    resource r;
    r.name = base_name(zip_path);
    r.path = std::move(zip_path);
    r.hash = hash.finish();
    r.bytes = hash.bytes();
    return r;
}

/// Removes the files it holds when it goes out of scope.
struct temporary_files {
    std::vector<std::string> paths;
    ~temporary_files() {
        for (const auto& p : paths)
            std::remove(p.c_str());
    }
};

/// Merges sorted CDXJ files into one sorted file, a line of each in memory at a time.
void merge_sorted(const std::vector<std::string>& inputs, const std::string& output) {
    std::vector<std::unique_ptr<std::ifstream>> streams;
    using entry = std::pair<std::string, std::size_t>;
    std::priority_queue<entry, std::vector<entry>, std::greater<>> heads;
    for (const auto& path : inputs) {
        auto in = std::make_unique<std::ifstream>(path, std::ios::binary);
        if (!*in)
            throw std::runtime_error("output.wacz: cannot read " + path);
        std::string line;
        if (std::getline(*in, line))
            heads.emplace(std::move(line), streams.size());
        streams.push_back(std::move(in));
    }
    std::ofstream out(output, std::ios::binary | std::ios::trunc);
    while (!heads.empty()) {
        auto [line, from] = heads.top();
        heads.pop();
        out << line << '\n';
        std::string next;
        if (std::getline(*streams[from], next))
            heads.emplace(std::move(next), from);
    }
    out.close();
    if (!out)
        throw std::runtime_error("output.wacz: cannot write " + output);
}

std::string utc_now() {
    const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm tm{};
    gmtime_r(&now, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return text;
}

struct zip_closer {
    void operator()(zip_t* z) const noexcept { zip_discard(z); }
};

} // namespace

bool is_archived_page(const warc_capture& c) {
    return c.type == "response" && c.status == "200" &&
           (c.mime == "text/html" || c.mime == "application/xhtml+xml");
}

void write_wacz(const wacz_options& options) {
    if (options.captures.size() != options.warc_files.size())
        throw std::invalid_argument("write_wacz: one capture list per WARC file");
    std::set<std::string> names;
    for (const auto& file : options.warc_files)
        if (!names.insert(base_name(file)).second)
            throw std::runtime_error("output.wacz: two WARC files are named " + base_name(file) +
                                     "; archive/ can hold only one");

    temporary_files temporaries;
    const std::string index_file = options.path + ".index.asiocrawl-tmp";
    temporaries.paths.push_back(index_file);
    std::vector<std::string> cdxj_files;
    for (const auto& file : options.warc_files)
        cdxj_files.push_back(cdxj_path_for(file));
    merge_sorted(cdxj_files, index_file);

    // The page list: every HTML page archived with a 200, once per URL (the first capture).
    boost::json::object header{{"format", "json-pages-1.0"}, {"id", "pages"}, {"title", options.title}};
    std::string pages = boost::json::serialize(header) + "\n";
    std::unordered_set<std::string> seen;
    const warc_capture* main_page = nullptr;
    const warc_capture* first_page = nullptr;
    std::size_t page_number = 0;
    for (const auto& list : options.captures) {
        for (const auto& c : list) {
            if (!is_archived_page(c) || !seen.insert(c.url).second)
                continue;
            boost::json::object line{
                {"id", "page-" + std::to_string(++page_number)}, {"url", c.url}, {"ts", c.date}};
            if (!c.title.empty())
                line["title"] = c.title;
            pages += boost::json::serialize(line) + "\n";
            if (!first_page)
                first_page = &c;
            if (!main_page && (c.url == options.main_page_url || c.url == options.main_page_url + "/"))
                main_page = &c;
        }
    }
    if (!main_page)
        main_page = first_page;

    std::vector<resource> resources;
    for (const auto& file : options.warc_files)
        resources.push_back(describe_file(file, "archive/" + base_name(file)));
    resources.push_back(describe_file(index_file, "indexes/index.cdxj"));
    resources.push_back(describe_text(pages, "pages/pages.jsonl"));

    boost::json::object package;
    package["profile"] = "data-package";
    boost::json::array listed;
    for (const auto& r : resources)
        listed.push_back(
            boost::json::object{{"name", r.name}, {"path", r.path}, {"hash", r.hash}, {"bytes", r.bytes}});
    package["resources"] = std::move(listed);
    package["wacz_version"] = "1.1.1";
    package["title"] = options.title;
    package["created"] = utc_now();
    package["software"] = options.software;
    if (main_page) {
        package["mainPageUrl"] = main_page->url;
        package["mainPageDate"] = main_page->date;
    }
    const std::string datapackage = boost::json::serialize(package);
    const resource package_digest = describe_text(datapackage, "datapackage.json");
    const std::string digest = boost::json::serialize(
        boost::json::object{{"path", "datapackage.json"}, {"hash", package_digest.hash}});

    const std::string temporary = options.path + ".asiocrawl-tmp";
    int error = 0;
    std::unique_ptr<zip_t, zip_closer> zip{zip_open(temporary.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error)};
    if (!zip) {
        zip_error_t e;
        zip_error_init_with_code(&e, error);
        const std::string why = zip_error_strerror(&e);
        zip_error_fini(&e);
        throw std::runtime_error("output.wacz: cannot create " + temporary + ": " + why);
    }
    auto zip_failure = [&](const std::string& what) {
        return std::runtime_error("output.wacz: " + what + ": " + zip_strerror(zip.get()));
    };
    auto add = [&](zip_source_t* source, const std::string& name, bool store) {
        if (!source)
            throw zip_failure("cannot read what goes to " + name);
        const zip_int64_t index = zip_file_add(zip.get(), name.c_str(), source, ZIP_FL_ENC_UTF_8);
        if (index < 0) {
            zip_source_free(source);
            throw zip_failure("cannot add " + name);
        }
        if (store &&
            zip_set_file_compression(zip.get(), static_cast<zip_uint64_t>(index), ZIP_CM_STORE, 0) != 0)
            throw zip_failure("cannot store " + name);
    };
    // zip_close reads the sources: these buffers live until then.
    std::deque<std::string> texts{pages, datapackage, digest};
    for (const auto& file : options.warc_files)
        add(zip_source_file(zip.get(), file.c_str(), 0, -1), "archive/" + base_name(file), true);
    add(zip_source_file(zip.get(), index_file.c_str(), 0, -1), "indexes/index.cdxj", false);
    add(zip_source_buffer(zip.get(), texts[0].data(), texts[0].size(), 0), "pages/pages.jsonl", false);
    add(zip_source_buffer(zip.get(), texts[1].data(), texts[1].size(), 0), "datapackage.json", false);
    add(zip_source_buffer(zip.get(), texts[2].data(), texts[2].size(), 0), "datapackage-digest.json", false);
    if (zip_close(zip.get()) != 0) {
        const std::string why = zip_strerror(zip.get());
        std::remove(temporary.c_str());
        throw std::runtime_error("output.wacz: cannot write " + temporary + ": " + why);
    }
    (void)zip.release(); // zip_close freed it
    if (std::rename(temporary.c_str(), options.path.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        std::remove(temporary.c_str());
        throw std::runtime_error("output.wacz: cannot replace " + options.path + ": " + why);
    }
}

} // namespace asiocrawl::outputs
