#include "cli/config_file.hpp"

#include "cli/config_keys.hpp"
#include "cli/options.hpp"
#include "support/command_line.hpp"
#include "support/files.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include <unistd.h>

using asiocrawl::test::read_file;

// Named, so that a unity build of cli_tests keeps this file's helpers apart from its neighbours'.
namespace config_file_test {
namespace {

using namespace asiocrawl;
using namespace asiocrawl::cli;
using namespace std::chrono_literals;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

const std::string source_dir = ASIOCRAWL_SOURCE_DIR;

std::string all_messages(const std::vector<config_error>& errors) {
    std::string text;
    for (const auto& e : errors)
        text += to_string(e) + "\n";
    return text;
}

/// A config whose every key differs from its default: printing and loading it exercises every codec.
app_config every_key_changed() {
    app_config c;
    c.crawl.roots = {"http://a.example/", "b.example: with colon, comma"};
    c.crawl.max_tasks = 7;
    c.crawl.max_redirect = 3;
    c.crawl.max_tries = 2;
    c.crawl.max_depth = 0;
    c.crawl.max_pages = 12345;
    c.crawl.sitemaps = true;
    c.crawl.parse_threads = 3;
    c.crawl.state.dir = "/data/state dir";
    c.crawl.state.fsync = true;
    c.crawl.state.window = 9;
    c.crawl.state.reset = true;
    c.crawl.state.recrawl = true;
    c.crawl.state.recrawl_from = "/data/previous run.jsonl";
    c.crawl.continuous = true;
    c.crawl.revisit.min = std::chrono::hours(2);
    c.crawl.revisit.max = std::chrono::hours(240);
    c.crawl.revisit.initial = std::chrono::hours(12);
    c.crawl.revisit.grow = 1.5;
    c.crawl.revisit.shrink = 0.75;
    c.crawl.state.redis = "redis://:pw@redis:6380/2";
    c.crawl.state.crawl_id = "crawl-7";
    c.crawl.state.instance = "worker-3";
    c.crawl.state.lease = 45s;
    c.crawl.state.redis_timeout = 90s;
    c.crawl.state.redis_tls.ca_file = "/etc/redis tls/ca.crt";
    c.crawl.state.redis_tls.cert_file = "/etc/redis-tls/client.crt";
    c.crawl.state.redis_tls.key_file = "/etc/redis-tls/client.key";
    c.crawl.state.redis_tls.insecure = true;
    c.crawl.scope = host_scope::lenient;
    c.crawl.exclude = {R"(\?(sort|page)=.*#"quoted")", "a{1,3}, b"};
    c.crawl.include = {"null"};
    c.crawl.no_parent = true;
    c.crawl.domains = {"a.example", "b.example"};
    c.crawl.exclude_domains = {"ads.example"};
    c.crawl.accept = {"pdf", "*.jpg"};
    c.crawl.reject = {"zip"};
    c.crawl.accept_types = {"image/*", "application/pdf"};
    c.crawl.input_file = "seeds list.txt";
    c.crawl.quota = 5'000'000;
    c.crawl.max_time = 90s;
    c.crawl.fetch.limit_rate = 256 * 1024;
    c.crawl.retry.statuses = {429, 503, 502};
    c.crawl.politeness.random_wait = true;
    c.crawl.politeness.autothrottle.enabled = true;
    c.crawl.politeness.autothrottle.start_delay = 2s;
    c.crawl.politeness.autothrottle.max_delay = 30s;
    c.crawl.politeness.autothrottle.target_concurrency = 2.5;
    c.crawl.traps.skip_query_permutations = false;
    c.crawl.fetch.connect_timeout = 1500ms;
    c.crawl.fetch.request_timeout = 2min;
    c.crawl.fetch.max_body_bytes = 1'000'001;
    c.crawl.fetch.max_header_bytes = 2048;
    c.crawl.fetch.idle_timeout = 0ms;
    c.crawl.fetch.user_agent = "true";
    c.crawl.fetch.contact_url = "https://me.example/bot";
    c.crawl.fetch.compression = false;
    c.crawl.fetch.refuse_private_addresses = true;
    c.crawl.fetch.tls.insecure = true;
    c.crawl.fetch.tls.ca_file = "/etc/ca file.pem";
    c.crawl.fetch.tls.max_handshakes = 0;
    c.crawl.fetch.host_overrides = {{"a.example", "127.0.0.1"}, {"b.example", "::1"}};
    c.crawl.fetch.dns.servers = {"127.0.0.1:5353", "[::1]:53"};
    c.crawl.fetch.dns.min_ttl = 0ms;
    c.crawl.fetch.dns.max_ttl = 10min;
    c.crawl.fetch.dns.negative_ttl = 5s;
    c.crawl.fetch.proxy = "http://user:pw@proxy.example:3128";
    c.crawl.fetch.http_proxy = "http://plain-proxy.example:8080";
    c.crawl.fetch.https_proxy = "http://tls-proxy.example:8080";
    c.crawl.fetch.no_proxy = {"localhost", ".internal.example", "10.0.0.0/8"};
    c.crawl.fetch.cookies.enabled = false;
    c.crawl.fetch.cookies.load_file = "in cookies.txt";
    c.crawl.fetch.cookies.save_file = "out/cookies.txt";
    c.crawl.fetch.hsts.enabled = false;
    c.crawl.fetch.hsts.file = "known hosts";
    c.crawl.fetch.http2 = http2_mode::only;
    c.crawl.fetch.headers = {"Accept-Language: fr, en;q=0.5", "X-Note: a \"quoted\" value"};
    c.crawl.fetch.credentials = {{"https://intranet.example", "alice:s3cret: with colon"}};
    c.crawl.retry.initial_backoff = 250ms;
    c.crawl.retry.multiplier = 1.5;
    c.crawl.retry.jitter = 0.1;
    c.crawl.retry.max_backoff = 2h;
    c.crawl.robots.obey = false;
    c.crawl.robots.max_bytes = 1000;
    c.crawl.robots.max_redirects = 0;
    c.crawl.robots.unavailable_retry = 5s;
    c.crawl.robots.max_crawl_delay = 1s;
    c.crawl.robots.obey_rel_nofollow = true;
    c.crawl.politeness.max_per_host = 9;
    c.crawl.politeness.delay = 100ms;
    c.crawl.hosts.resize(2);
    c.crawl.hosts[0].match = "*.example.com";
    c.crawl.hosts[0].delay = 2s;
    c.crawl.hosts[0].max_per_host = 1;
    c.crawl.hosts[0].obey_robots = false;
    c.crawl.hosts[0].headers = {"X-Team: crawl; night shift", "X-Path: a\\b"};
    c.crawl.hosts[1].match = "https://docs.example.org/api/";
    c.crawl.hosts[1].max_pages = 50;
    c.crawl.traps.max_url_length = 0;
    c.crawl.traps.max_path_segments = 5;
    c.crawl.traps.max_segment_repetitions = 0;
    c.crawl.traps.max_query_params = 1;
    c.crawl.traps.max_links_per_page = 7;
    c.crawl.html.parser = html_parser::gumbo;
    c.crawl.requisites.enabled = true;
    c.crawl.requisites.span_hosts = true;
    c.output.records = "-";
    c.output.report_json = "out/report.json";
    c.output.report = false;
    c.output.warc.path = "crawl-{serial}.warc.gz";
    c.output.warc.max_file_bytes = 3u << 20;
    c.output.warc.revisits = false;
    c.output.cdxj = true;
    c.output.wacz = "out/site.wacz";
    c.output.save_dir = "~";
    c.output.metrics_listen = "[::1]:9100";
    c.output.listen_token = "t0ken";
    c.output.listen_token_file = "secrets/token";
    c.output.progress = progress_mode::never;
    c.output.progress_interval = 30s;
    c.output.mode = open_mode::overwrite;
    c.output.queue_limit_bytes = 2u << 20;
    c.run.log_level = log_level::debug;
    c.run.fail_on_errors = true;
    c.run.fail_on = {"5xx", "robots"};
    c.run.grace_period = 0ms;
    c.run.unicode_hosts_in_logs = true;
    return c;
}

// ---- durations and sizes
// -------------------------------------------------------------------------------------

TEST(config_values, durations_take_units_and_plain_seconds) {
    const std::pair<const char*, long long> valid[] = {
        {"500ms", 500}, {"10s", 10'000}, {"2m", 120'000},  {"1h", 3'600'000}, {"10", 10'000},    {"0.5", 500},
        {"1.5s", 1500}, {" 3s ", 3000},  {"10 s", 10'000}, {"0", 0},          {"2min", 120'000}, {"1MS", 1}};
    for (const auto& [text, ms] : valid) {
        SCOPED_TRACE(text);
        auto parsed = parse_duration(text);
        ASSERT_TRUE(parsed.has_value());
        EXPECT_EQ(parsed->count(), ms);
        EXPECT_EQ(parse_duration(format_duration(*parsed)), parsed) << format_duration(*parsed);
    }
    for (const char* text : {"", "fast", "-1s", "1e3", "10sec", "1.2.3", ".5", "5d", "s", "99999999999h"}) {
        SCOPED_TRACE(text);
        EXPECT_FALSE(parse_duration(text).has_value());
    }
    EXPECT_EQ(format_duration(10s), "10s");
    EXPECT_EQ(format_duration(1500ms), "1500ms");
    EXPECT_EQ(format_duration(90s), "90s");
    EXPECT_EQ(format_duration(2min), "2m");
    EXPECT_EQ(format_duration(0ms), "0s");
}

TEST(config_values, sizes_take_decimal_and_binary_units) {
    const std::pair<const char*, std::uint64_t> valid[] = {{"16MiB", 16u << 20},
                                                           {"500KiB", 500u << 10},
                                                           {"1GB", 1'000'000'000},
                                                           {"1024", 1024},
                                                           {"2kB", 2000},
                                                           {"1.5KiB", 1536},
                                                           {"10 MB", 10'000'000},
                                                           {"7b", 7},
                                                           {"0", 0},
                                                           {"1TiB", 1ull << 40},
                                                           {"200k", 200u << 10},
                                                           {"1m", 1u << 20},
                                                           {"1.5M", 3u << 19},
                                                           {"2g", 2ull << 30}};
    for (const auto& [text, bytes] : valid) {
        SCOPED_TRACE(text);
        auto parsed = parse_size(text);
        ASSERT_TRUE(parsed.has_value());
        EXPECT_EQ(*parsed, bytes);
        EXPECT_EQ(parse_size(format_size(*parsed)), parsed) << format_size(*parsed);
    }
    for (const char* text : {"", "1.5", "-1", "1XB", "MiB", "12 34", "99999999TiB"}) {
        SCOPED_TRACE(text);
        EXPECT_FALSE(parse_size(text).has_value());
    }
    EXPECT_EQ(format_size(16u << 20), "16MiB");
    EXPECT_EQ(format_size(1'000'000'000), "1GB");
    EXPECT_EQ(format_size(1023), "1023");
}

// ---- the registry
// ------------------------------------------------------------------------------------------

TEST(config_keys, environment_names_are_the_paths_in_capitals) {
    EXPECT_EQ(env_name("max_tasks"), "ASIOCRAWL_MAX_TASKS");
    EXPECT_EQ(env_name("fetch.connect_timeout"), "ASIOCRAWL_FETCH_CONNECT_TIMEOUT");
    EXPECT_EQ(env_name("fetch.tls.ca_file"), "ASIOCRAWL_FETCH_TLS_CA_FILE");
    // Two keys must never share a variable, nor a flag.
    std::set<std::string> names, flags;
    for (const auto& key : config_keys()) {
        EXPECT_TRUE(names.insert(env_name(key.path)).second) << key.path;
        if (!key.flag.empty()) {
            EXPECT_TRUE(flags.insert(std::string(key.flag)).second) << key.flag;
        }
    }
    for (const auto& flag : switch_flags()) {
        EXPECT_TRUE(flags.insert(std::string(flag.flag)).second) << flag.flag;
        EXPECT_NE(find_key(flag.path), nullptr) << flag.path;
    }
    // Every boolean key has a flag, and its opposite is free: a file's `robots.obey: false` can always be
    // undone on the command line.
    for (const auto& key : config_keys()) {
        if (!key.codec.is_switch)
            continue;
        EXPECT_FALSE(key.flag.empty()) << key.path << " has no flag";
        const std::string name(key.flag.substr(0, key.flag.find(',')));
        EXPECT_TRUE(flags.insert(opposite_flag(name)).second) << opposite_flag(name);
    }
    EXPECT_EQ(opposite_flag("sitemaps"), "no-sitemaps");
    EXPECT_EQ(opposite_flag("no-parent"), "parent");
}

TEST(config_keys, every_key_is_covered_by_the_round_trip_config) {
    const app_config defaults, changed = every_key_changed();
    for (const auto& key : config_keys())
        EXPECT_NE(raw_to_text(key.codec.get(changed)), raw_to_text(key.codec.get(defaults)))
            << key.path << ": set it to a non-default value in every_key_changed()";
}

TEST(config_keys, printed_config_loads_back_to_the_same_config) {
    for (const app_config& original : {app_config{}, every_key_changed()}) {
        const std::string yaml = to_yaml(original, secrets::shown);
        app_config loaded;
        // Start from a different config: every key must be overwritten by the file.
        if (original.crawl.max_tasks == app_config{}.crawl.max_tasks)
            loaded = every_key_changed();
        auto errors = load_config_text(yaml, "printed", loaded);
        ASSERT_THAT(errors, IsEmpty()) << all_messages(errors) << yaml;
        EXPECT_EQ(to_yaml(loaded, secrets::shown), yaml);
        for (const auto& key : config_keys())
            EXPECT_EQ(raw_to_text(key.codec.get(loaded)), raw_to_text(key.codec.get(original))) << key.path;
    }
    // A few fields checked directly, not through the codecs that printed them.
    app_config loaded;
    ASSERT_THAT(load_config_text(to_yaml(every_key_changed(), secrets::shown), "printed", loaded), IsEmpty());
    EXPECT_EQ(loaded.crawl.exclude, every_key_changed().crawl.exclude);
    EXPECT_EQ(loaded.crawl.include, std::vector<std::string>{"null"});
    EXPECT_EQ(loaded.crawl.accept, every_key_changed().crawl.accept);
    EXPECT_EQ(loaded.output.mode, open_mode::overwrite);
    EXPECT_EQ(loaded.crawl.fetch.user_agent, "true");
    EXPECT_EQ(loaded.crawl.roots, every_key_changed().crawl.roots);
    EXPECT_EQ(loaded.crawl.fetch.host_overrides, every_key_changed().crawl.fetch.host_overrides);
    EXPECT_EQ(loaded.crawl.fetch.connect_timeout, 1500ms);
    EXPECT_EQ(loaded.crawl.max_depth, 0);
    EXPECT_DOUBLE_EQ(loaded.crawl.retry.multiplier, 1.5);
    EXPECT_EQ(loaded.run.log_level, log_level::debug);
}

// ---- the files in config/
// ------------------------------------------------------------------------------------

std::set<std::string> paths_in(const std::string& yaml_text) {
    // Every scalar key path of a loaded file, read back through the printer: a key the file lists with its
    // default value still appears, so compare the file's own text instead.
    std::set<std::string> paths;
    std::istringstream in{yaml_text};
    std::vector<std::pair<std::size_t, std::string>> stack; // indentation, section name
    for (std::string line; std::getline(in, line);) {
        const auto indent = line.find_first_not_of(' ');
        if (indent == std::string::npos || line[indent] == '#' || line[indent] == '-')
            continue;
        const auto colon = line.find(':', indent);
        if (colon == std::string::npos)
            continue;
        while (!stack.empty() && stack.back().first >= indent)
            stack.pop_back();
        std::string path;
        for (const auto& [_, name] : stack)
            path += name + ".";
        path += line.substr(indent, colon - indent);
        if (line.find_first_not_of(' ', colon + 1) == std::string::npos)
            stack.emplace_back(indent, line.substr(indent, colon - indent));
        else
            paths.insert(path);
    }
    return paths;
}

TEST(config_files, the_reference_file_lists_every_key_with_its_default) {
    const std::string path = source_dir + "/config/asiocrawl.yaml";
    app_config loaded = every_key_changed();
    auto errors = load_config_file(path, loaded);
    ASSERT_THAT(errors, IsEmpty()) << all_messages(errors);
    EXPECT_EQ(to_yaml(loaded), to_yaml(app_config{})) << "config/asiocrawl.yaml must show the defaults";

    std::set<std::string> expected;
    for (const auto& key : config_keys())
        expected.insert(std::string(key.path));
    EXPECT_EQ(paths_in(read_file(path)), expected) << "config/asiocrawl.yaml must list every key, once";
}

TEST(config_files, the_examples_load_and_validate) {
    for (const char* name : {"demo.yaml", "internal-check.yaml", "polite-archive.yaml"}) {
        SCOPED_TRACE(name);
        app_config config;
        config_origins origins;
        auto errors = load_config_file(source_dir + "/config/" + name, config, &origins);
        ASSERT_THAT(errors, IsEmpty()) << all_messages(errors);
        config.crawl.roots = {"http://example.com/"};
        EXPECT_THAT(check_config(config, origins), IsEmpty()) << all_messages(check_config(config, origins));
    }
    app_config demo;
    ASSERT_THAT(load_config_file(source_dir + "/config/demo.yaml", demo), IsEmpty());
    EXPECT_TRUE(demo.crawl.sitemaps);
}

// ---- errors
// --------------------------------------------------------------------------------------------------

struct error_case {
    const char* yaml;
    int line;
    int column;
    std::vector<std::string> says;
};

void expect_one_error(const error_case& c, const std::vector<config_error>& errors) {
    SCOPED_TRACE(c.yaml);
    ASSERT_EQ(errors.size(), 1u) << all_messages(errors);
    EXPECT_EQ(errors[0].source, "test.yaml");
    EXPECT_EQ(errors[0].line, c.line);
    EXPECT_EQ(errors[0].column, c.column);
    for (const auto& part : c.says)
        EXPECT_THAT(errors[0].message, HasSubstr(part));
    EXPECT_THAT(to_string(errors[0]),
                HasSubstr("test.yaml:" + std::to_string(c.line) + ":" + std::to_string(c.column) + ": "));
}

TEST(config_errors, an_unknown_key_names_itself_its_place_and_the_closest_key) {
    const error_case cases[] = {
        {"fetch:\n  conect_timeout: 5s\n",
         2,
         3,
         {"\"fetch.conect_timeout\"", "did you mean \"fetch.connect_timeout\""}},
        {"max_task: 5", 1, 1, {"\"max_task\"", "\"max_tasks\""}},
        {"max_tasks: 5\nconnect_timeout: 5s", 2, 1, {"\"connect_timeout\"", "\"fetch.connect_timeout\""}},
        {"output:\n  warc:\n    pth: x\n", 3, 5, {"\"output.warc.pth\"", "\"output.warc.path\""}},
        {"fetsh:\n  connect_timeout: 5s\n", 1, 1, {"\"fetsh\"", "\"fetch\""}},
        {"zzzzzzzzzz: 1", 1, 1, {"unknown key \"zzzzzzzzzz\""}},
    };
    for (const auto& c : cases) {
        app_config config;
        expect_one_error(c, load_config_text(c.yaml, "test.yaml", config));
    }
    app_config config;
    auto errors = load_config_text("zzzzzzzzzz: 1", "test.yaml", config);
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_THAT(errors[0].message, ::testing::Not(HasSubstr("did you mean")));
}

TEST(config_errors, a_wrong_value_names_the_key_the_expected_form_and_what_was_seen) {
    const error_case cases[] = {
        {"max_tasks: many", 1, 12, {"max_tasks: expected a whole number", "got \"many\""}},
        {"max_tasks: -3", 1, 12, {"max_tasks:", "a whole number from 1 to 100000", "got \"-3\""}},
        {"max_tries: x", 1, 12, {"max_tries:", "a whole number, 1 or more", "got \"x\""}},
        {"exclude: {a: b}", 1, 10, {"exclude: expected a list of regular expressions", "got a map"}},
        {"fetch:\n  connect_timeout: [1]\n",
         2,
         20,
         {"fetch.connect_timeout: expected a duration", "got a list"}},
        {"fetch:\n  connect_timeout: fast\n", 2, 20, {"500ms, 10s", "got \"fast\""}},
        {"sitemaps: maybe", 1, 11, {"sitemaps: expected true or false", "got \"maybe\""}},
        {"scope: loose", 1, 8, {"scope: expected one of strict, lenient", "got \"loose\""}},
        {"roots: {a: b}", 1, 8, {"roots: expected a list", "got a map"}},
        {"roots:\n  - [nested]\n", 2, 5, {"roots:", "a list as an item"}},
        {"max_depth: deep", 1, 12, {"max_depth:", "or null for unlimited", "got \"deep\""}},
        {"fetch:\n  max_body_bytes: 5XB\n", 2, 19, {"16MiB", "got \"5XB\""}},
        {"output:\n  progress: sometimes\n", 2, 13, {"output.progress: expected one of auto, always, never"}},
        {"run:\n  log_level: loud\n", 2, 14, {"debug, info, warning, error, off", "got \"loud\""}},
        {"fetch: 5", 1, 8, {"fetch: expected a map of keys", "got \"5\""}},
        {"fetch:\n  host_overrides: [a]\n", 2, 19, {"fetch.host_overrides: expected a map", "got a list"}},
        {"max_tasks:", 1, 1, {"max_tasks:", "got nothing"}},
        {"max_tasks: 1\nmax_tasks: 2\n", 2, 1, {"max_tasks is given twice (first on line 1)"}},
        {"- a\n- b\n", 1, 1, {"expected a map of keys", "got a list"}},
        // Per-host rules: the problem at the rule's field, or at the rule.
        {"hosts:\n  - {match: a.example, dealy: 2s}\n",
         2,
         24,
         {"hosts[0]: unknown field \"dealy\" (match, delay, max_per_host, max_pages, obey_robots, headers)"}},
        {"hosts:\n  - match: a.example\n  - match: b.example\n    delay: soon\n",
         4,
         12,
         {"hosts[1].delay: expected a duration", "got \"soon\""}},
        {"hosts:\n  - {match: a.example, headers: [{a: b}]}\n",
         2,
         34,
         {"hosts[0].headers: each is \"Name: value\""}},
        {"hosts:\n  - delay=2s\n", 2, 5, {"hosts[0]: a rule needs match="}},
    };
    for (const auto& c : cases) {
        app_config config;
        expect_one_error(c, load_config_text(c.yaml, "test.yaml", config));
    }
}

TEST(config_errors, out_of_range_values_are_located_at_their_key) {
    const error_case cases[] = {
        {"max_tasks: 0", 1, 1, {"max_tasks must be at least 1", "got \"0\""}},
        {"roots: [a]\npoliteness:\n  max_per_host: 0\n",
         3,
         3,
         {"politeness.max_per_host must be at least 1"}},
        {"retry:\n  jitter: 2\n", 2, 3, {"retry.jitter must be between 0 and 1", "got \"2\""}},
        {"fetch:\n  request_timeout: 0s\n", 2, 3, {"fetch.request_timeout must be positive"}},
        {"output:\n  metrics_listen: localhost\n", 2, 3, {"output.metrics_listen must be HOST:PORT"}},
        {"fetch:\n  user_agent: \"bot\\r\\nX-Evil: 1\"\n",
         2,
         3,
         {"fetch.user_agent must not contain control"}},
        {"hosts:\n  - {match: a.example, delay: 1s}\n  - {match: \"a b\", max_pages: 3}\n",
         3,
         5,
         {"hosts[1].match: \"a b\" is not a host name"}},
        {"run:\n  grace_period: 0\n  log_level: off\nmax_redirect: -1\n",
         4,
         1,
         {"max_redirect must be at least 0"}},
    };
    for (const auto& c : cases) {
        app_config config;
        config.crawl.roots = {"http://example.com/"};
        config_origins origins;
        auto load_errors = load_config_text(c.yaml, "test.yaml", config, &origins);
        ASSERT_THAT(load_errors, IsEmpty()) << all_messages(load_errors);
        expect_one_error(c, check_config(config, origins));
    }
}

TEST(config_errors, output_and_run_keys_are_validated) {
    struct output_case {
        const char* yaml;
        const char* says; // "" when valid
    };
    const output_case cases[] = {
        {"output:\n  metrics_listen: 127.0.0.1:9100", ""},
        {"output:\n  metrics_listen: \"[::1]:0\"", ""},
        {"output:\n  metrics_listen: metrics.internal:65535", ""},
        {"output:\n  metrics_listen: :9100", "output.metrics_listen must be HOST:PORT"},
        {"output:\n  metrics_listen: host:65536", "output.metrics_listen must be HOST:PORT"},
        {"output:\n  metrics_listen: \"::1:9100\"", "output.metrics_listen must be HOST:PORT"},
        {"output:\n  metrics_listen: \"[::1]\"", "output.metrics_listen must be HOST:PORT"},
        {"output:\n  records: \"-\"", "output.records cannot be stdout"},
        {"output:\n  records: \"-\"\n  report: false", ""},
        {"output:\n  records: \"-\"\n  report: false\n  report_json: \"-\"",
         "output.records cannot be stdout"},
        {"output:\n  report_json: \"-\"", "output.report_json cannot be stdout"},
        {"output:\n  records: a.jsonl\n  report_json: a.jsonl",
         "output.report_json must not be the same file"},
        {"output:\n  warc:\n    max_file_bytes: 1000", "output.warc.max_file_bytes must be at least 1024"},
        {"parse_threads: 1000", "parse_threads must be at most 256"},
        {"retry:\n  multiplier: 0.5", "retry.multiplier must be at least 1"},
        {"robots:\n  max_bytes: 0", "robots.max_bytes must be at least 1"},
        {"robots:\n  max_redirects: -1", "robots.max_redirects must be at least 0"},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.yaml);
        app_config config;
        config.crawl.roots = {"http://example.com/"};
        config_origins origins;
        ASSERT_THAT(load_config_text(c.yaml, "test.yaml", config, &origins), IsEmpty());
        auto errors = check_config(config, origins);
        if (std::string_view(c.says).empty()) {
            EXPECT_THAT(errors, IsEmpty()) << all_messages(errors);
        } else {
            ASSERT_EQ(errors.size(), 1u) << all_messages(errors);
            EXPECT_THAT(errors[0].message, HasSubstr(c.says));
            EXPECT_GE(errors[0].line, 1) << "located in the file";
        }
    }
}

TEST(config_errors, invalid_yaml_is_told_apart_and_located) {
    const error_case cases[] = {
        {"roots: [a,\n b", 2, 1, {"invalid YAML", "end of sequence"}},
        {"max_tasks: 1\n  fetch: x\n", 2, 8, {"invalid YAML"}},
        {"max_tasks: b: c\n", 1, 13, {"invalid YAML"}},
    };
    for (const auto& c : cases) {
        app_config config;
        auto errors = load_config_text(c.yaml, "test.yaml", config);
        ASSERT_EQ(errors.size(), 1u) << c.yaml << all_messages(errors);
        expect_one_error(c, errors);
    }
}

TEST(config_errors, odd_documents_are_values_not_crashes) {
    // Things a fuzzer finds first: each is either accepted or reported, never thrown.
    for (const char* yaml :
         {"", "---", "# only a comment", "~", "!!binary aGVsbG8=", "a: &x [*x]", "{", "[[[[", "? [a]\n: b",
          "max_tasks: !!int 5", "<<: {max_tasks: 5}", "\t", "max_tasks: 5\n---\nmax_tasks: 6"}) {
        app_config config;
        EXPECT_NO_THROW(load_config_text(yaml, "fuzz.yaml", config)) << yaml;
    }
    app_config config;
    EXPECT_THAT(load_config_text("", "empty.yaml", config), IsEmpty());
    EXPECT_THAT(load_config_text("# nothing\n", "empty.yaml", config), IsEmpty());
}

TEST(config_errors, null_clears_optional_and_text_keys) {
    app_config config;
    config.crawl.max_depth = 3;
    config.crawl.fetch.user_agent = "x";
    ASSERT_THAT(load_config_text("max_depth: null\nfetch:\n  user_agent:\n", "t.yaml", config), IsEmpty());
    EXPECT_FALSE(config.crawl.max_depth.has_value());
    EXPECT_EQ(config.crawl.fetch.user_agent, "");
}

// ---- files
// ---------------------------------------------------------------------------------------------------

struct temp_file {
    explicit temp_file(const std::string& text) {
        char name[] = "/tmp/asiocrawl-config-test-XXXXXX";
        const int fd = ::mkstemp(name);
        path = name;
        if (fd >= 0) {
            [[maybe_unused]] auto written = ::write(fd, text.data(), text.size());
            ::close(fd);
        }
    }
    ~temp_file() { std::remove(path.c_str()); }
    std::string path;
};

TEST(config_files, missing_unreadable_and_invalid_files_are_told_apart) {
    app_config config;
    auto missing = load_config_file("/nonexistent/asiocrawl.yaml", config);
    ASSERT_EQ(missing.size(), 1u);
    EXPECT_EQ(to_string(missing[0]), "/nonexistent/asiocrawl.yaml: config file not found");

    // A directory cannot be read as a file, even by root (for whom permission bits mean nothing).
    auto unreadable = load_config_file("/tmp", config);
    ASSERT_EQ(unreadable.size(), 1u);
    EXPECT_THAT(to_string(unreadable[0]), HasSubstr("/tmp: cannot read config file: Is a directory"));

    temp_file invalid{"max_tasks: 5\nroots: [a,\n"};
    auto bad = load_config_file(invalid.path, config);
    ASSERT_EQ(bad.size(), 1u);
    EXPECT_THAT(to_string(bad[0]), HasSubstr(invalid.path + ":3:1: invalid YAML"));

    temp_file good{"max_tasks: 5\n"};
    EXPECT_THAT(load_config_file(good.path, config), IsEmpty());
    EXPECT_EQ(config.crawl.max_tasks, 5u);
}

// ---- environment
// ---------------------------------------------------------------------------------------------

TEST(config_environment, variables_set_keys_of_every_shape) {
    app_config config;
    config_origins origins;
    auto errors = apply_environment(
        {"PATH=/bin", "ASIOCRAWL_MAX_TASKS=7", "ASIOCRAWL_FETCH_CONNECT_TIMEOUT=750ms",
         "ASIOCRAWL_ROOTS=http://a.example/ http://b.example/,c.example",
         "ASIOCRAWL_FETCH_HOST_OVERRIDES=a.example=127.0.0.1 b.example=::1", "ASIOCRAWL_MAX_DEPTH=unlimited",
         "ASIOCRAWL_RUN_LOG_LEVEL=debug", "ASIOCRAWL_SITEMAPS=yes", "ASIOCRAWL_JOBS=4"},
        config, &origins);
    EXPECT_THAT(errors, IsEmpty()) << all_messages(errors);
    EXPECT_EQ(config.crawl.max_tasks, 7u);
    EXPECT_EQ(config.crawl.fetch.connect_timeout, 750ms);
    EXPECT_EQ(config.crawl.roots,
              (std::vector<std::string>{"http://a.example/", "http://b.example/", "c.example"}));
    EXPECT_EQ(config.crawl.fetch.host_overrides.at("b.example"), "::1");
    EXPECT_FALSE(config.crawl.max_depth.has_value());
    EXPECT_EQ(config.run.log_level, log_level::debug);
    EXPECT_TRUE(config.crawl.sitemaps);
    EXPECT_EQ(origins.at("max_tasks").source, "environment variable ASIOCRAWL_MAX_TASKS");
}

TEST(config_environment, a_bad_value_is_an_error_and_a_near_miss_a_warning) {
    app_config config;
    auto errors = apply_environment({"ASIOCRAWL_MAX_TASKS=lots", "ASIOCRAWL_MAX_TAKS=3"}, config);
    ASSERT_EQ(errors.size(), 2u) << all_messages(errors);
    const auto& warning = errors[0].warning ? errors[0] : errors[1];
    const auto& error = errors[0].warning ? errors[1] : errors[0];
    EXPECT_FALSE(error.warning);
    EXPECT_EQ(to_string(error),
              "environment variable ASIOCRAWL_MAX_TASKS: max_tasks: expected a whole number from 1 to "
              "100000, got \"lots\"");
    EXPECT_TRUE(warning.warning);
    EXPECT_THAT(to_string(warning), HasSubstr("ASIOCRAWL_MAX_TAKS: warning: unknown variable"));
    EXPECT_THAT(to_string(warning), HasSubstr("did you mean ASIOCRAWL_MAX_TASKS?"));
}

// ---- the command line: precedence and flags
// ----------------------------------------------------------------

using asiocrawl::test::parse_arguments;

app_config parsed_config(std::vector<std::string> args, const std::vector<std::string>& environment = {}) {
    auto outcome = parse_arguments(std::move(args), environment);
    if (auto* error = std::get_if<usage_error>(&outcome))
        ADD_FAILURE() << error->message;
    auto* options = std::get_if<cli_options>(&outcome);
    return options ? options->config : app_config{};
}

TEST(config_precedence, defaults_then_file_then_environment_then_flags) {
    temp_file file{"roots: [http://file.example/]\nmax_tasks: 3\nmax_tries: 3\nmax_redirect: 3\n"};
    const std::vector<std::string> env{"ASIOCRAWL_MAX_TASKS=4", "ASIOCRAWL_MAX_TRIES=4"};

    const app_config c = parsed_config({"--config", file.path, "--max-tasks", "5"}, env);
    EXPECT_EQ(c.crawl.max_tasks, 5u) << "a flag beats the environment";
    EXPECT_EQ(c.crawl.max_tries, 4) << "the environment beats the file";
    EXPECT_EQ(c.crawl.max_redirect, 3) << "the file beats the default";
    EXPECT_EQ(c.crawl.max_pages, std::nullopt) << "the default stays";
    EXPECT_EQ(c.crawl.roots, std::vector<std::string>{"http://file.example/"});

    const app_config replaced = parsed_config({"--config", file.path, "http://arg.example/"}, env);
    EXPECT_EQ(replaced.crawl.roots, std::vector<std::string>{"http://arg.example/"})
        << "ROOTs replace the list";
}

TEST(config_precedence, the_html_parser_is_fast_unless_gumbo_is_asked_for) {
    EXPECT_EQ(parsed_config({"http://a.example/"}).crawl.html.parser, html_parser::fast);
    EXPECT_EQ(parsed_config({"--html-parser", "gumbo", "http://a.example/"}).crawl.html.parser,
              html_parser::gumbo);
    EXPECT_EQ(parsed_config({"http://a.example/"}, {"ASIOCRAWL_HTML_PARSER=gumbo"}).crawl.html.parser,
              html_parser::gumbo);
    temp_file file{"html:\n  parser: gumbo\n"};
    EXPECT_EQ(parsed_config({"--config", file.path, "http://a.example/"}).crawl.html.parser,
              html_parser::gumbo);
    EXPECT_EQ(parsed_config({"--config", file.path, "--html-parser", "fast", "http://a.example/"})
                  .crawl.html.parser,
              html_parser::fast);
    const auto outcome = parse_arguments({"--html-parser", "lexbor", "http://a.example/"});
    const auto* error = std::get_if<usage_error>(&outcome);
    ASSERT_NE(error, nullptr);
    EXPECT_THAT(error->message, HasSubstr("fast"));
}

TEST(config_precedence, page_requisites_are_off_unless_asked_for) {
    const auto off = parsed_config({"http://a.example/"}).crawl.requisites;
    EXPECT_FALSE(off.enabled);
    EXPECT_FALSE(off.span_hosts);
    EXPECT_TRUE(parsed_config({"-p", "http://a.example/"}).crawl.requisites.enabled);
    const auto spanning =
        parsed_config({"--page-requisites", "--requisites-span-hosts", "http://a.example/"}).crawl.requisites;
    EXPECT_TRUE(spanning.enabled);
    EXPECT_TRUE(spanning.span_hosts);
    EXPECT_TRUE(
        parsed_config({"http://a.example/"}, {"ASIOCRAWL_REQUISITES_ENABLED=true"}).crawl.requisites.enabled);
    EXPECT_FALSE(
        parsed_config({"--no-page-requisites", "http://a.example/"}, {"ASIOCRAWL_REQUISITES_ENABLED=true"})
            .crawl.requisites.enabled);
    crawler_config alone;
    alone.roots = {"http://a.example/"};
    alone.requisites.span_hosts = true;
    const auto problems = validate(alone);
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_EQ(problems[0].key, "requisites.span_hosts");
    EXPECT_THAT(problems[0].message, HasSubstr("requisites.span_hosts needs requisites.enabled"));
}

TEST(config_precedence, flags_cover_the_important_keys) {
    const app_config c = parsed_config({"--fail-on-errors",
                                        "--ignore-robots",
                                        "--insecure",
                                        "--ca-file",
                                        "/ca.pem",
                                        "--sitemaps",
                                        "--max-per-host",
                                        "4",
                                        "--delay",
                                        "250ms",
                                        "--parse-threads",
                                        "2",
                                        "--warc",
                                        "a.warc.gz",
                                        "--save-dir",
                                        "pages",
                                        "--metrics-listen",
                                        "127.0.0.1:9100",
                                        "--report-json",
                                        "r.json",
                                        "--progress",
                                        "never",
                                        "--output",
                                        "o.jsonl",
                                        "--grace-period",
                                        "3s",
                                        "--refuse-private-addresses",
                                        "--user-agent",
                                        "bot/1",
                                        "--contact-url",
                                        "https://me/",
                                        "--host-override",
                                        "a.example=127.0.0.1",
                                        "--host-override",
                                        "b.example=::1",
                                        "--connect-timeout",
                                        "2.5",
                                        "--max-body-size",
                                        "1MiB",
                                        "--lenient",
                                        "-v",
                                        "http://a.example/"});
    EXPECT_TRUE(c.run.fail_on_errors);
    EXPECT_FALSE(c.crawl.robots.obey);
    EXPECT_TRUE(c.crawl.fetch.tls.insecure);
    EXPECT_EQ(c.crawl.fetch.tls.ca_file, "/ca.pem");
    EXPECT_TRUE(c.crawl.sitemaps);
    EXPECT_EQ(c.crawl.politeness.max_per_host, 4u);
    EXPECT_EQ(c.crawl.politeness.delay, 250ms);
    EXPECT_EQ(c.crawl.parse_threads, 2u);
    EXPECT_EQ(c.output.warc.path, "a.warc.gz");
    EXPECT_EQ(c.output.save_dir, "pages");
    EXPECT_EQ(c.output.metrics_listen, "127.0.0.1:9100");
    EXPECT_EQ(c.output.report_json, "r.json");
    EXPECT_EQ(c.output.progress, progress_mode::never);
    EXPECT_EQ(c.output.records, "o.jsonl");
    EXPECT_EQ(c.run.grace_period, 3s);
    EXPECT_TRUE(c.crawl.fetch.refuse_private_addresses);
    EXPECT_EQ(c.crawl.fetch.user_agent, "bot/1");
    EXPECT_EQ(c.crawl.fetch.contact_url, "https://me/");
    EXPECT_EQ(c.crawl.fetch.host_overrides.size(), 2u);
    EXPECT_EQ(c.crawl.fetch.connect_timeout, 2500ms) << "a plain number of seconds, as before";
    EXPECT_EQ(c.crawl.fetch.max_body_bytes, 1u << 20);
    EXPECT_EQ(c.crawl.scope, host_scope::lenient);
    EXPECT_EQ(c.run.log_level, log_level::info);
}

TEST(config_precedence, switches_have_opposites_and_quiet_flags_move_the_level) {
    const std::vector<std::string> env{"ASIOCRAWL_SITEMAPS=true", "ASIOCRAWL_RUN_LOG_LEVEL=info"};
    const app_config c = parsed_config({"--no-sitemaps", "-q", "a.example"}, env);
    EXPECT_FALSE(c.crawl.sitemaps);
    EXPECT_EQ(c.run.log_level, log_level::warning) << "-q moves the configured level one step";
    EXPECT_TRUE(c.output.report);
    const app_config silent = parsed_config({"-qq", "a.example"});
    EXPECT_EQ(silent.run.log_level, log_level::off);
    EXPECT_FALSE(silent.output.report) << "-qq silences the report too";
    EXPECT_EQ(parsed_config({"-vvvvv", "a.example"}).run.log_level, log_level::debug);
}

TEST(config_precedence, every_boolean_can_be_undone_on_the_command_line) {
    temp_file file{
        "roots: [a.example]\nrobots:\n  obey: false\nfetch:\n  compression: false\noutput:\n  report: "
        "false\n  warc:\n    revisits: false\nno_parent: true\n"};
    const app_config c = parsed_config(
        {"--config", file.path, "--obey-robots", "--compression", "--report", "--warc-revisits", "--parent"});
    EXPECT_TRUE(c.crawl.robots.obey);
    EXPECT_TRUE(c.crawl.fetch.compression);
    EXPECT_TRUE(c.output.report);
    EXPECT_TRUE(c.output.warc.revisits);
    EXPECT_FALSE(c.crawl.no_parent);
    const app_config off = parsed_config(
        {"--no-obey-robots", "--no-compression", "--no-report", "--no-parent", "--overwrite", "a.example"});
    EXPECT_FALSE(off.crawl.robots.obey);
    EXPECT_FALSE(off.crawl.fetch.compression);
    EXPECT_FALSE(off.output.report);
    EXPECT_TRUE(off.crawl.no_parent);
    EXPECT_EQ(off.output.mode, open_mode::overwrite);
    for (const auto& clash : std::vector<std::vector<std::string>>{{"--ignore-robots", "--obey-robots"},
                                                                   {"--report", "--no-report"},
                                                                   {"--no-parent", "--parent"}}) {
        auto args = clash;
        args.push_back("a.example");
        auto outcome = parse_arguments(args);
        ASSERT_TRUE(std::holds_alternative<usage_error>(outcome)) << clash[0];
        EXPECT_THAT(std::get<usage_error>(outcome).message, HasSubstr("exclude each other"));
    }
    // Saying the same thing twice is not a clash.
    EXPECT_FALSE(parsed_config({"--ignore-robots", "--no-obey-robots", "a.example"}).crawl.robots.obey);
}

TEST(config_precedence, list_flags_repeat_and_patterns_keep_their_commas) {
    const app_config c =
        parsed_config({"--exclude", "a{1,3}", "--exclude", "x y", "--include", "/docs/", "--domains",
                       "a.example,b.example", "--domains", "c.example", "--exclude-domains", "ads.example",
                       "-A", "pdf,*.jpg", "-R", "zip", "--fail-on", "4xx,network", "a.example"});
    EXPECT_EQ(c.crawl.exclude, (std::vector<std::string>{"a{1,3}", "x y"}));
    EXPECT_EQ(c.crawl.include, std::vector<std::string>{"/docs/"});
    EXPECT_EQ(c.crawl.domains, (std::vector<std::string>{"a.example", "b.example", "c.example"}));
    EXPECT_EQ(c.crawl.exclude_domains, std::vector<std::string>{"ads.example"});
    EXPECT_EQ(c.crawl.accept, (std::vector<std::string>{"pdf", "*.jpg"}));
    EXPECT_EQ(c.crawl.reject, std::vector<std::string>{"zip"});
    EXPECT_EQ(c.run.fail_on, (std::vector<std::string>{"4xx", "network"}));
    // The environment: one pattern a line; other lists split on commas and spaces.
    const app_config env = parsed_config(
        {"a.example"}, {"ASIOCRAWL_EXCLUDE=a{1,3}\nb c", "ASIOCRAWL_DOMAINS=a.example b.example"});
    EXPECT_EQ(env.crawl.exclude, (std::vector<std::string>{"a{1,3}", "b c"}));
    EXPECT_EQ(env.crawl.domains, (std::vector<std::string>{"a.example", "b.example"}));
    // YAML: a list, or one scalar for a one-item list (the older form of include/exclude).
    temp_file file{"roots: [a.example]\nexclude: \"\\\\?sort=\"\ninclude:\n  - /docs/\n  - /blog/\n"};
    const app_config yaml = parsed_config({"--config", file.path});
    EXPECT_EQ(yaml.crawl.exclude, std::vector<std::string>{"\\?sort="});
    EXPECT_EQ(yaml.crawl.include, (std::vector<std::string>{"/docs/", "/blog/"}));
}

TEST(config_precedence, host_rules_come_from_yaml_maps_flags_and_the_environment_alike) {
    temp_file file{
        "roots: [a.example]\nhosts:\n  - {match: \"*.a.example\", delay: 2s, max_per_host: 1}\n"
        "  - match: https://b.example/docs/\n    max_pages: 10\n    headers: [\"X-A: 1; 2\", \"X-B: c\"]\n"
        "  - \"match=c.example; obey_robots=false\"\n"};
    const app_config yaml = parsed_config({"--config", file.path});
    ASSERT_EQ(yaml.crawl.hosts.size(), 3u);
    EXPECT_EQ(yaml.crawl.hosts[0].match, "*.a.example");
    EXPECT_EQ(yaml.crawl.hosts[0].delay, 2s);
    EXPECT_EQ(yaml.crawl.hosts[0].max_per_host, 1u);
    EXPECT_EQ(yaml.crawl.hosts[1].max_pages, 10u);
    EXPECT_EQ(yaml.crawl.hosts[1].headers, (std::vector<std::string>{"X-A: 1; 2", "X-B: c"}));
    EXPECT_EQ(yaml.crawl.hosts[2].obey_robots, false);
    // The flag takes the one-line form, repeated; the environment one rule a line.
    const app_config flags =
        parsed_config({"--host-rule", "match=*.a.example; delay=2s; max_per_host=1", "--host-rule",
                       "match=c.example; header=X-A: 1\\; 2", "a.example"});
    ASSERT_EQ(flags.crawl.hosts.size(), 2u);
    EXPECT_EQ(flags.crawl.hosts[0].delay, 2s);
    EXPECT_EQ(flags.crawl.hosts[1].headers, std::vector<std::string>{"X-A: 1; 2"});
    const app_config env = parsed_config(
        {"a.example"}, {"ASIOCRAWL_HOSTS=match=a.example; delay=1s\nmatch=b.example; max_pages=3"});
    ASSERT_EQ(env.crawl.hosts.size(), 2u);
    EXPECT_EQ(env.crawl.hosts[1].max_pages, 3u);
    // A rule that does not parse names itself and what is wrong.
    const auto refused = parse_arguments({"--host-rule", "match=a.example; delay=soon", "a.example"});
    ASSERT_TRUE(std::holds_alternative<usage_error>(refused));
    EXPECT_THAT(std::get<usage_error>(refused).message, HasSubstr("hosts[0]: delay: expected a duration"));
}

TEST(config_precedence, bad_patterns_roots_and_classes_name_their_source) {
    temp_file file{"roots: [a.example]\nexclude:\n  - ok\n  - \"(unclosed\"\n"};
    const struct {
        std::vector<std::string> args;
        std::vector<std::string> env;
        std::string says;
    } cases[] = {
        {{"--exclude", "(unclosed", "a.example"},
         {},
         "option --exclude: exclude[0] must be a regular expression"},
        {{"a.example"},
         {"ASIOCRAWL_INCLUDE=[x"},
         "environment variable ASIOCRAWL_INCLUDE: include[0] must be"},
        {{"--config", file.path}, {}, file.path + ":4:5: exclude[1] must be a regular expression"},
        {{"--print-config", "--exclude", "("}, {}, "exclude[0] must be a regular expression"},
        {{"not a url"},
         {},
         "ROOT arguments: roots[0] must be an http or https URL (invalid URL), got \"not a url\""},
        {{"mailto:a@b.c"}, {}, "roots[0] must be an http or https URL (unsupported URL scheme)"},
        {{"--fail-on", "404", "a.example"},
         {},
         "option --fail-on: run.fail_on[0] must be one of 4xx, 5xx, network, robots"},
        {{"--domains", "http://x.example/", "a.example"},
         {},
         "option --domains: domains[0] must be a domain name"},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(testing::PrintToString(c.args));
        auto outcome = parse_arguments(c.args, c.env);
        ASSERT_TRUE(std::holds_alternative<usage_error>(outcome));
        EXPECT_THAT(std::get<usage_error>(outcome).message, HasSubstr(c.says));
    }
}

TEST(config_precedence, errors_name_the_layer_that_set_the_value) {
    temp_file file{"roots: [a.example]\nmax_tasks: 0\n"};
    auto from_file = parse_arguments({"--config", file.path});
    ASSERT_TRUE(std::holds_alternative<usage_error>(from_file));
    EXPECT_EQ(std::get<usage_error>(from_file).message,
              file.path + ":2:1: max_tasks must be at least 1, got \"0\"");

    auto from_env = parse_arguments({"a.example"}, {"ASIOCRAWL_POLITENESS_MAX_PER_HOST=0"});
    ASSERT_TRUE(std::holds_alternative<usage_error>(from_env));
    EXPECT_THAT(std::get<usage_error>(from_env).message,
                HasSubstr("environment variable ASIOCRAWL_POLITENESS_MAX_PER_HOST: politeness.max_per_host"));

    auto from_flag = parse_arguments({"--config", file.path, "--grace-period", "soon"});
    ASSERT_TRUE(std::holds_alternative<usage_error>(from_flag));
    EXPECT_THAT(std::get<usage_error>(from_flag).message,
                HasSubstr("option --grace-period: run.grace_period: expected a duration"));
}

TEST(config_precedence, print_config_shows_the_merged_result_and_needs_no_root) {
    auto outcome =
        parse_arguments({"--print-config", "--max-tasks", "9"}, {"ASIOCRAWL_FETCH_CONNECT_TIMEOUT=2m"});
    ASSERT_TRUE(std::holds_alternative<print_and_exit>(outcome));
    const std::string yaml = std::get<print_and_exit>(outcome).text;
    app_config loaded;
    ASSERT_THAT(load_config_text(yaml, "printed", loaded), IsEmpty());
    EXPECT_EQ(loaded.crawl.max_tasks, 9u);
    EXPECT_EQ(loaded.crawl.fetch.connect_timeout, 2min);
}

// ---- secrets in --print-config and in error messages
// -----------------------------------------------------------------

TEST(config_keys, masking_keeps_users_and_hides_passwords) {
    EXPECT_EQ(mask_url_password("http://u:pw@h:1/p?q=a@b"), "http://u:***@h:1/p?q=a@b");
    EXPECT_EQ(mask_url_password("u:pw@example.com/x"), "u:***@example.com/x"); // a root without scheme
    EXPECT_EQ(mask_url_password("http://user@h/"), "http://user@h/");          // no password
    EXPECT_EQ(mask_url_password("http://h/a@b"), "http://h/a@b");              // '@' in the path
    EXPECT_EQ(mask_url_password("http://u:p@ss:w@rd@h/"), "http://u:***@h/");  // the last '@' ends it
    EXPECT_EQ(mask_url_password("redis://secret@h:6379/0", "/", true), "redis://***@h:6379/0");
    EXPECT_EQ(mask_url_password("redis://:p?w#d@h/0", "/", true), "redis://:***@h/0");
    EXPECT_EQ(mask_header_field("Cookie: a=1; b=2"), "Cookie: ***");
    EXPECT_EQ(mask_header_field("authorization: Bearer abc.def"), "authorization: Bearer ***");
    EXPECT_EQ(mask_header_field("X-Api-Key: k"), "X-Api-Key: ***");
    EXPECT_EQ(mask_header_field("X-Auth-Token:t"), "X-Auth-Token: ***");
    EXPECT_EQ(mask_header_field("Accept-Language: fr, en"), "Accept-Language: fr, en");
}

struct secret_setup {
    // Every place a secret can be given, each secret a distinct string.
    temp_file file{"fetch:\n"
                   "  http_proxy: \"http://bob:http-proxy-pw@proxy.example:3128\"\n"
                   "  credentials:\n"
                   "    \"https://intranet.example\": \"erin:credentials-pw\"\n"
                   "  headers:\n"
                   "    - \"Cookie: session=cookie-secret\"\n"
                   "    - \"X-Api-Key: api-key-secret\"\n"
                   "    - \"Accept-Language: fr\"\n"};
    std::vector<std::string> args{"--config",
                                  file.path,
                                  "--redis",
                                  "redis://alice:redis-url-pw@redis.example:6380/2",
                                  "--proxy",
                                  "http://carol:proxy-pw@proxy.example:3128",
                                  "https://dave:root-pw@intranet.example/"};
    std::vector<std::string> environment{
        "ASIOCRAWL_FETCH_HTTPS_PROXY=http://frank:https-proxy-pw@tls-proxy.example:8080",
        "ASIOCRAWL_REDIS_PASSWORD=environment-redis-pw"};
    std::vector<std::string> secrets{"http-proxy-pw", "credentials-pw", "cookie-secret", "api-key-secret",
                                     "redis-url-pw",  "proxy-pw",       "root-pw",       "https-proxy-pw"};

    std::string print(bool show) const {
        auto argv = args;
        argv.insert(argv.begin(), "--print-config");
        if (show)
            argv.insert(argv.begin(), "--show-secrets");
        auto outcome = parse_arguments(argv, environment);
        if (auto* usage = std::get_if<usage_error>(&outcome))
            ADD_FAILURE() << usage->message;
        return std::holds_alternative<print_and_exit>(outcome) ? std::get<print_and_exit>(outcome).text : "";
    }
};

TEST(print_config, secrets_are_masked_and_the_output_says_how_to_see_them) {
    const secret_setup setup;
    const std::string masked = setup.print(false);
    for (const auto& secret : setup.secrets)
        EXPECT_THAT(masked, Not(HasSubstr(secret))) << masked;
    EXPECT_THAT(masked, Not(HasSubstr("environment-redis-pw")));
    EXPECT_THAT(masked, HasSubstr("\"redis://alice:***@redis.example:6380/2\""));
    EXPECT_THAT(masked, HasSubstr("\"http://carol:***@proxy.example:3128\""));
    EXPECT_THAT(masked, HasSubstr("\"https://dave:***@intranet.example/\""));
    EXPECT_THAT(masked, HasSubstr("\"erin:***\""));
    EXPECT_THAT(masked, HasSubstr("\"Cookie: ***\""));
    EXPECT_THAT(masked, HasSubstr("\"Accept-Language: fr\""));
    EXPECT_THAT(masked, HasSubstr("--print-config --show-secrets"));
    EXPECT_THAT(masked, HasSubstr("from ASIOCRAWL_REDIS_PASSWORD (never printed)"));
    app_config loaded;
    EXPECT_THAT(load_config_text(masked, "masked", loaded), IsEmpty()) << "still a valid config file";
}

TEST(print_config, show_secrets_prints_them_and_round_trips) {
    const secret_setup setup;
    const std::string shown = setup.print(true);
    for (const auto& secret : setup.secrets)
        EXPECT_THAT(shown, HasSubstr(secret)) << shown;
    EXPECT_THAT(shown, Not(HasSubstr("environment-redis-pw"))) << "never: it is in no key";
    app_config loaded;
    ASSERT_THAT(load_config_text(shown, "shown", loaded), IsEmpty()) << shown;
    auto outcome = parse_arguments(setup.args, setup.environment);
    ASSERT_TRUE(std::holds_alternative<cli_options>(outcome));
    const app_config& original = std::get<cli_options>(outcome).config;
    for (const auto& key : config_keys())
        EXPECT_EQ(raw_to_text(key.codec.get(loaded)), raw_to_text(key.codec.get(original))) << key.path;
    EXPECT_EQ(to_yaml(loaded, secrets::shown), to_yaml(original, secrets::shown));

    auto alone = parse_arguments({"--show-secrets", "http://a.example/"});
    ASSERT_TRUE(std::holds_alternative<usage_error>(alone));
    EXPECT_THAT(std::get<usage_error>(alone).message,
                HasSubstr("--show-secrets only goes with --print-config"));
}

TEST(print_config, a_rejected_value_is_quoted_without_its_password) {
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"--redis", "http://u:quoted-pw@redis.example/0"},
             {"--proxy", "ftp://u:quoted-pw@proxy.example/"},
         }) {
        auto argv = args;
        argv.push_back("http://a.example/");
        auto outcome = parse_arguments(argv);
        ASSERT_TRUE(std::holds_alternative<usage_error>(outcome)) << args.front();
        const auto& message = std::get<usage_error>(outcome).message;
        EXPECT_THAT(message, Not(HasSubstr("quoted-pw"))) << message;
    }
    temp_file file{"fetch:\n  credentials:\n    \"not an origin\": \"u:quoted-pw\"\n"};
    auto outcome = parse_arguments({"--config", file.path, "http://a.example/"});
    ASSERT_TRUE(std::holds_alternative<usage_error>(outcome));
    const auto& message = std::get<usage_error>(outcome).message;
    EXPECT_THAT(message, HasSubstr("fetch.credentials"));
    EXPECT_THAT(message, Not(HasSubstr("quoted-pw"))) << message;
}

} // namespace

} // namespace config_file_test
