#include "state/crawl_definition.hpp"

#include "url/url.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>

namespace asiocrawl::detail {

std::string crawl_definition_json(const crawler_config& config) {
    namespace json = boost::json;
    json::object doc;
    json::array roots;
    for (const auto& root : config.roots) {
        // Compared in normalized form: "example.com" and "http://example.com/" are the same root.
        auto parsed = parse_root(root);
        roots.emplace_back(parsed ? std::string_view(parsed->buffer()) : std::string_view(root));
    }
    doc["roots"] = std::move(roots);
    doc["scope"] = config.scope == host_scope::strict ? "strict" : "lenient";
    doc["include"] = json::value_from(config.include);
    doc["exclude"] = json::value_from(config.exclude);
    doc["no_parent"] = config.no_parent;
    doc["domains"] = json::value_from(config.domains);
    doc["exclude_domains"] = json::value_from(config.exclude_domains);
    doc["accept"] = json::value_from(config.accept);
    doc["reject"] = json::value_from(config.reject);
    // Keys added after state directories existed appear only when set, so those directories still match.
    if (!config.accept_types.empty())
        doc["accept_types"] = json::value_from(config.accept_types);
    if (!config.input_file.empty())
        doc["input_file"] = config.input_file; // by path: the file may grow or be a pipe
    doc["max_depth"] = config.max_depth ? json::value(*config.max_depth) : json::value(nullptr);
    doc["robots.obey"] = config.robots.obey;
    doc["sitemaps"] = config.sitemaps;
    doc["traps.max_url_length"] = config.traps.max_url_length;
    doc["traps.max_path_segments"] = config.traps.max_path_segments;
    doc["traps.max_segment_repetitions"] = config.traps.max_segment_repetitions;
    doc["traps.max_query_params"] = config.traps.max_query_params;
    doc["traps.max_links_per_page"] = config.traps.max_links_per_page;
    doc["traps.skip_query_permutations"] = config.traps.skip_query_permutations;
    // Per-host rules: their matches, in order, since a resumed crawl's per-rule counts (max_pages) follow
    // them; their settings may change between runs.
    if (!config.hosts.empty()) {
        json::array matches;
        for (const auto& rule : config.hosts)
            matches.emplace_back(rule.match);
        doc["hosts.match"] = std::move(matches);
    }
    // Written only when on, so that a state made before requisites existed still resumes unchanged.
    if (config.requisites.enabled) {
        doc["requisites.enabled"] = true;
        doc["requisites.span_hosts"] = config.requisites.span_hosts;
    }
    return json::serialize(doc);
}

std::optional<std::string> describe_definition_change(std::string_view before, std::string_view now) {
    namespace json = boost::json;
    if (before == now)
        return std::nullopt;
    json::object old_doc, new_doc;
    try {
        old_doc = json::parse(before).as_object();
        new_doc = json::parse(now).as_object();
    } catch (const std::exception&) {
        return std::string("the crawl definition is unreadable");
    }
    std::string changes;
    auto add = [&](std::string_view key, const json::value* was, const json::value* is) {
        if (!changes.empty())
            changes += "; ";
        changes += key;
        changes += " changed: was ";
        changes += was ? json::serialize(*was) : std::string("unset");
        changes += ", now ";
        changes += is ? json::serialize(*is) : std::string("unset");
    };
    for (const auto& [key, value] : new_doc) {
        const auto* was = old_doc.if_contains(key);
        if (!was || *was != value)
            add(key, was, &value);
    }
    for (const auto& [key, value] : old_doc) {
        if (!new_doc.if_contains(key))
            add(key, &value, nullptr);
    }
    if (changes.empty())
        return std::nullopt; // the same settings, serialized in another order
    return changes;
}

} // namespace asiocrawl::detail
