// asiocrawl-bench-url-pipeline: CPU per link of the URL pipeline (issue 27), no network and no HTML parsing
// in the measurement. The links of every .html file under DIR are extracted first (untimed); then, page after
// page as a crawl meets them, the timed part does what the crawler does with them:
//   resolve: resolve_page_links() (src/html/page_links.hpp), the crawler's own code: <base href>, clean,
//            resolve against the base, normalize, IDNA, per link;
//   admit:   what crawl_state::admit_page_links() and admit() do with each resolved link: its fingerprint,
//            the page's duplicate check, scope::check_text() (the crawl's default rules, the root being
//            ORIGIN) unless it was seen in scope before, and the seen-set check and insert.
// Each round starts cold (a new seen set, scope and scope memo), as a crawl does; the best round is printed.
// Times are the thread's CPU time, so other work on a shared machine disturbs them less than wall time.
//
// Usage: asiocrawl-bench-url-pipeline DIR ORIGIN [ROUNDS] [--check]
//   e.g. asiocrawl-bench-url-pipeline /usr/share/doc/python3.11/html http://docs.python.test/3.11/ 5
// A page's URL is ORIGIN followed by its path under DIR. --check first compares, link by link, what
// reference_resolver gives with normalize_reference() (the plain pipeline), and what scope::check_text()
// says of each resolved link with what parse_uri and scope::check() say, and prints every difference.

#include "html/links.hpp"
#include "html/page_links.hpp"
#include "policy/scope.hpp"
#include "state/fingerprint_set.hpp"
#include "url/url.hpp"

#include <boost/url/parse.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <time.h>
#include <vector>

namespace fs = std::filesystem;
using namespace asiocrawl;

namespace {

double thread_cpu_seconds() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

struct page {
    boost::urls::url url;
    page_links links;
};

struct round_result {
    double resolve_seconds = 0;
    double admit_seconds = 0;
    std::size_t links = 0;    // references handed to the pipeline
    std::size_t resolved = 0; // normalized http(s) URLs
    std::size_t in_scope = 0;
    std::size_t new_urls = 0; // admitted: not seen before
    std::size_t over_cap = 0; // links past traps.max_links_per_page
};

round_result run(const std::vector<page>& pages, const boost::urls::url& root,
                 const detail::link_options& options) {
    round_result r;
    const crawler_config config;
    const asiocrawl::scope scope({root}, config);
    detail::fingerprint_set seen;
    detail::fingerprint_memo in_scope_memo{1u << 16}; // crawl_state's
    constexpr std::uint64_t seed = 0x9e3779b97f4a7c15ull;
    // The copies resolve_page_links may cut, made outside the timing; then two timed passes (a clock read a
    // page would cost more than a page's links): every page's links resolved, then every page's admitted.
    std::vector<page_links> copies;
    copies.reserve(pages.size());
    for (const auto& p : pages) {
        copies.push_back(p.links);
        r.links += p.links.references.size();
    }
    std::vector<detail::resolved_links> resolved(pages.size());
    const double t0 = thread_cpu_seconds();
    for (std::size_t i = 0; i < pages.size(); ++i)
        detail::resolve_page_links(pages[i].url, copies[i], options, resolved[i]);
    const double t1 = thread_cpu_seconds();
    for (const auto& out : resolved) {
        // crawl_state::admit_page_links and the start of admit().
        detail::fingerprint_set on_page;
        on_page.reserve(2 * out.urls.size());
        for (const auto& text : out.urls) {
            const auto fp = detail::url_fingerprint(text, seed);
            if (on_page.contains(fp))
                continue;
            if (!in_scope_memo.contains(fp)) {
                const auto verdict = scope.check_text(text);
                if (!verdict || *verdict != scope_verdict::in_scope)
                    continue;
                in_scope_memo.insert(fp);
            }
            ++r.in_scope;
            on_page.insert(fp);
            if (seen.contains(fp))
                continue;
            seen.insert(fp);
            ++r.new_urls;
        }
    }
    const double t2 = thread_cpu_seconds();
    r.resolve_seconds = t1 - t0;
    r.admit_seconds = t2 - t1;
    for (const auto& out : resolved) {
        r.resolved += out.urls.size();
        r.over_cap += out.over_page_cap;
    }
    return r;
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s DIR ORIGIN [ROUNDS] [--check]\n", argv[0]);
        return 2;
    }
    const fs::path dir = argv[1];
    const auto origin = parse_root(argv[2]);
    if (!origin) {
        std::fprintf(stderr, "not a URL: %s\n", argv[2]);
        return 2;
    }
    const int rounds = argc > 3 ? std::max(1, std::atoi(argv[3])) : 5;
    const bool check = argc > 4 && std::string_view(argv[4]) == "--check";

    // Files in a fixed order (sorted paths), so that every run meets the pages alike.
    std::vector<fs::path> files;
    for (const auto& entry : fs::recursive_directory_iterator(dir))
        if (entry.is_regular_file() && entry.path().extension() == ".html")
            files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    const detail::link_options options; // as a crawl's default: the page cap, no requisites
    detail::link_options crawl_options = options;
    crawl_options.max_links = trap_config{}.max_links_per_page;
    std::vector<page> pages;
    std::size_t references = 0;
    for (const auto& file : files) {
        std::ifstream in(file, std::ios::binary);
        const std::string html{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
        std::string target = std::string(origin->buffer());
        target += fs::relative(file, dir).generic_string();
        auto url = parse_root(target);
        if (!url)
            continue;
        extract_options extract;
        extract.max_links = crawl_options.max_links;
        pages.push_back({std::move(*url), extract_links(html, extract)});
        references += pages.back().links.references.size();
    }
    if (pages.empty()) {
        std::fprintf(stderr, "no .html files under %s\n", argv[1]);
        return 1;
    }
    if (check) {
        std::size_t compared = 0, differences = 0;
        // And scope::check_text() against parse_uri and scope::check(), on every resolved link.
        const crawler_config config;
        const asiocrawl::scope parsed_scope({*origin}, config);
        const asiocrawl::scope text_scope({*origin}, config);
        std::size_t scope_compared = 0, scope_differences = 0;
        for (const auto& p : pages) {
            boost::urls::url base = p.url;
            if (p.links.base_href)
                if (auto resolved = normalize_reference(p.url, *p.links.base_href))
                    base = *resolved;
            const reference_resolver resolver(base);
            for (const auto& reference : p.links.references) {
                const auto fast = resolver.resolve_text(reference);
                const auto plain = normalize_reference(base, reference);
                ++compared;
                if (fast.has_value() != plain.has_value() ||
                    (fast ? *fast != plain->buffer() : fast.error() != plain.error())) {
                    ++differences;
                    std::printf("DIFF base %s ref [%s]: %s / %s\n", std::string(base.buffer()).c_str(),
                                reference.c_str(), fast ? fast->c_str() : "error",
                                plain ? std::string(plain->buffer()).c_str() : "error");
                }
                if (!fast)
                    continue;
                const auto parsed = boost::urls::parse_uri(*fast);
                const auto by_parse = parsed ? std::optional<scope_verdict>(parsed_scope.check(*parsed))
                                             : std::optional<scope_verdict>();
                const auto by_text = text_scope.check_text(*fast);
                ++scope_compared;
                if (by_parse != by_text) {
                    ++scope_differences;
                    std::printf("SCOPE DIFF %s: %s / %s\n", fast->c_str(),
                                by_text ? std::string(to_string(*by_text)).c_str() : "invalid",
                                by_parse ? std::string(to_string(*by_parse)).c_str() : "invalid");
                }
            }
        }
        std::printf("check: %zu references compared, %zu differences\n", compared, differences);
        std::printf("check: %zu scope verdicts compared (check_text and check), %zu differences\n",
                    scope_compared, scope_differences);
    }
    round_result best;
    for (int round = 0; round < rounds; ++round) {
        const round_result r = run(pages, *origin, crawl_options);
        if (round == 0 || r.resolve_seconds + r.admit_seconds < best.resolve_seconds + best.admit_seconds)
            best = r;
    }
    const auto ns = [&](double seconds) { return seconds * 1e9 / static_cast<double>(best.links); };
    std::printf(
        "%s: pages %zu, links %zu (%zu resolved, %zu in scope, %zu new URLs, %zu past the page cap)\n",
        argv[1], pages.size(), best.links, best.resolved, best.in_scope, best.new_urls, best.over_cap);
    std::printf("best of %d, CPU ns per link: pipeline %.0f = resolve %.0f + admit %.0f\n", rounds,
                ns(best.resolve_seconds + best.admit_seconds), ns(best.resolve_seconds),
                ns(best.admit_seconds));
}
