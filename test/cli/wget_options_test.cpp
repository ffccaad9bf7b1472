// The command line as the docs describe it: every option README.md and docs/*.md name is run through the
// parser (with --print-config, so nothing is fetched), wget's spellings set the same keys as asiocrawl's own
// options, and a wget option asiocrawl lacks is refused with what to use instead.

#include "cli/config_keys.hpp"
#include "cli/options.hpp"
#include "cli/wget_spellings.hpp"
#include "support/command_line.hpp"
#include "support/files.hpp"
#include "util/human_units.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>

// Named, so that a unity build of cli_tests keeps this file's helpers apart from its neighbours'.
namespace wget_options_test {
namespace {

using namespace asiocrawl;
using namespace asiocrawl::cli;
using namespace std::chrono_literals;
using asiocrawl::test::read_file;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string source_dir = ASIOCRAWL_SOURCE_DIR;

using asiocrawl::test::parse_arguments;

std::string error_of(const parse_outcome& outcome) {
    if (const auto* error = std::get_if<usage_error>(&outcome))
        return error->message;
    return {};
}

app_config config_of(std::vector<std::string> args, const std::vector<std::string>& environment = {}) {
    auto outcome = parse_arguments(std::move(args), environment);
    if (auto* error = std::get_if<usage_error>(&outcome))
        ADD_FAILURE() << error->message;
    auto* options = std::get_if<cli_options>(&outcome);
    return options ? options->config : app_config{};
}

/// The effective configuration --print-config shows for `args`, or the usage error.
std::string printed(std::vector<std::string> args) {
    args.insert(args.begin(), "--print-config");
    auto outcome = parse_arguments(std::move(args));
    if (const auto* print = std::get_if<print_and_exit>(&outcome))
        return print->text;
    return "error: " + error_of(outcome);
}

std::vector<std::string> documents() {
    std::vector<std::string> paths{source_dir + "/README.md"};
    for (const auto& entry : std::filesystem::directory_iterator(source_dir + "/docs"))
        if (entry.path().extension() == ".md")
            paths.push_back(entry.path().string());
    std::sort(paths.begin(), paths.end());
    return paths;
}

// ---- wget's spellings
// ----------------------------------------------------------------------------------------

TEST(wget_spellings, set_the_same_keys_as_asiocrawls_options) {
    const std::pair<std::vector<std::string>, std::vector<std::string>> same[] = {
        {{"-l", "3"}, {"--max-depth", "3"}},
        {{"-l3"}, {"--max-depth", "3"}},
        {{"--level=3"}, {"--max-depth", "3"}},
        {{"--level", "inf"}, {"--max-depth", "unlimited"}},
        {{"-l", "0", "--max-depth", "2"}, {"--max-depth", "2"}},
        {{"-w", "2"}, {"--delay", "2s"}},
        {{"--wait=1.5"}, {"--delay", "1500ms"}},
        {{"-t", "7"}, {"--max-tries", "7"}},
        {{"--tries=2"}, {"--max-tries", "2"}},
        {{"-T", "5"}, {"--timeout", "5s"}},
        {{"-T5"}, {"--timeout", "5s"}},
        {{"-U", "bot/1"}, {"--user-agent", "bot/1"}},
        {{"-e", "robots=off"}, {"--ignore-robots"}},
        {{"-erobots=off"}, {"--ignore-robots"}},
        {{"--execute=robots = on"}, {"--obey-robots"}},
        {{"--warc-file=crawl"}, {"--warc", "crawl.warc.gz"}},
        {{"--warc-file", "x.warc"}, {"--warc", "x.warc"}},
        {{"--accept-regex", "a,b", "--reject-regex=c"}, {"--include", "a,b", "--exclude", "c"}},
        {{"--filter-mime-type=image/*"}, {"--accept-type", "image/*"}},
        {{"-P", "pages"}, {"--save-dir", "pages"}},
        {{"--directory-prefix=pages"}, {"--save-dir", "pages"}},
        {{"--ca-certificate=/ca.pem"}, {"--ca-file", "/ca.pem"}},
        {{"--no-check-certificate"}, {"--insecure"}},
        {{"-np"}, {"--no-parent"}},
        {{"-nc", "--no-clobber"}, {"--no-overwrite"}},
        {{"-d"}, {"-vv"}},
        {{"--compression=none"}, {"--no-compression"}},
        {{"--compression=gzip"}, {"--compression"}},
        {{"-r", "--recursive", "--spider", "--delete-after", "-x", "--force-directories", "-nv"}, {}},
        {{"-Q", "10m", "--limit-rate", "200k"}, {"-Q", "10MiB", "--limit-rate", "200KiB"}},
    };
    for (const auto& [wget, own] : same) {
        SCOPED_TRACE(testing::PrintToString(wget));
        auto with_root = [](std::vector<std::string> args) {
            args.push_back("a.example");
            return args;
        };
        const std::string from_wget = printed(with_root(wget));
        EXPECT_THAT(from_wget, Not(HasSubstr("error:")));
        EXPECT_EQ(from_wget, printed(with_root(own)));
    }
    // A value that looks like an option stays the value of the option before it.
    EXPECT_EQ(config_of({"--header", "-np: x", "a.example"}).crawl.fetch.headers,
              std::vector<std::string>{"-np: x"});
    EXPECT_FALSE(config_of({"--header", "-np: x", "a.example"}).crawl.no_parent);
    // After "--" nothing is rewritten.
    EXPECT_EQ(config_of({"a.example", "--", "-np"}).crawl.roots,
              (std::vector<std::string>{"a.example", "-np"}));
}

TEST(wget_spellings, what_they_cannot_mean_is_refused_with_the_reason) {
    EXPECT_THAT(error_of(parse_arguments({"-t", "inf", "a.example"})),
                HasSubstr("give a number of attempts"));
    EXPECT_THAT(error_of(parse_arguments({"-e", "use_proxy=off", "a.example"})),
                HasSubstr("only robots=on and robots=off"));
    EXPECT_THAT(error_of(parse_arguments({"--compression=brotli", "a.example"})),
                HasSubstr("auto, gzip and none"));
    EXPECT_THAT(error_of(parse_arguments({"a.example", "-l"})), HasSubstr("needs a value"));
    EXPECT_THAT(error_of(parse_arguments({"--spider=yes", "a.example"})), HasSubstr("takes no value"));
}

TEST(wget_spellings, an_unsupported_wget_option_names_what_to_use_instead) {
    const std::pair<std::vector<std::string>, std::string> cases[] = {
        {{"-H"}, "--domains"},
        {{"--span-hosts"}, "--domains"},
        {{"--mirror"}, "--save-dir"},
        {{"-m"}, "--save-dir"},
        {{"-nd"}, "not supported"},
        {{"-k"}, "--warc"},
        {{"--read-timeout=5"}, "--timeout"},
        {{"--dns-timeout", "5"}, "--connect-timeout"},
        {{"--referer=http://x/"}, "--header 'Referer: URL'"},
        {{"--user=u"}, "https://USER:PASS@host/"},
        {{"-N"}, "--state-dir"},
        {{"--retry-on-http-error=500"}, "--retry-statuses"},
        {{"-Dexample.com"}, "--domains"},
    };
    for (const auto& [args, says] : cases) {
        SCOPED_TRACE(args[0]);
        auto all = args;
        all.push_back("a.example");
        const std::string error = error_of(parse_arguments(all));
        EXPECT_THAT(error, HasSubstr("wget's"));
        EXPECT_THAT(error, HasSubstr(says));
        EXPECT_THAT(error, HasSubstr("docs/WGET.md"));
    }
    // A misspelt asiocrawl option still gets its nearest flag.
    EXPECT_THAT(error_of(parse_arguments({"--max-taks", "3", "a.example"})),
                HasSubstr("did you mean --max-tasks?"));
}

TEST(wget_spellings, no_asiocrawl_option_is_taken_for_a_wget_one) {
    for (const auto& key : config_keys()) {
        if (key.flag.empty())
            continue;
        const std::string name(key.flag.substr(0, key.flag.find(',')));
        EXPECT_EQ(wget_hint("--" + name), "") << name;
        EXPECT_EQ(wget_hint("--" + opposite_flag(name)), "") << name;
        if (const auto comma = key.flag.find(','); comma != std::string_view::npos) {
            EXPECT_EQ(wget_hint("-" + std::string(key.flag.substr(comma + 1))), "") << name;
        }
    }
    for (const auto& flag : switch_flags())
        EXPECT_EQ(wget_hint("--" + std::string(flag.flag)), "") << flag.flag;
}

TEST(wget_spellings, readme_and_the_wget_page_show_every_alias) {
    const std::string readme = read_file(source_dir + "/README.md");
    const std::string wget_page = read_file(source_dir + "/docs/WGET.md");
    for (const auto& alias : wget_aliases()) {
        // "-l N, --level=N": each spelling without its value.
        for (std::string spelling : {alias.spellings.substr(0, alias.spellings.find(',')),
                                     alias.spellings.find(", ") == std::string::npos
                                         ? std::string{}
                                         : alias.spellings.substr(alias.spellings.find(", ") + 2)}) {
            spelling = spelling.substr(0, spelling.find_first_of(" ="));
            if (spelling.empty())
                continue;
            SCOPED_TRACE(spelling);
            EXPECT_NE(readme.find("`" + spelling), std::string::npos) << "README.md";
            EXPECT_NE(wget_page.find("`" + spelling), std::string::npos) << "docs/WGET.md";
        }
    }
}

// ---- the option walk
// -----------------------------------------------------------------------------------------

// Options that README.md and docs/*.md give to other programs (docker, kubectl, redis-server, ctest, the
// demo server, scripts), and the misspelling docs/CONFIG.md shows on purpose.
const std::set<std::string> other_programs{
    "--appendfsync",   "--appendonly",   "--build",        "--build-arg",
    "--etag-save",     "--from-file",    "--from-literal", "--gtest",
    "--install",       "--isolation",    "--layers",       "--max-taks",
    "--pattern",       "--port",         "--prefix",       "--redefine-sym",
    "--replay",        "--requirepass",  "--rm",           "--scan",
    "--target",        "--test-dir",     "--time",         "--tls-ca-cert-file",
    "--tls-cert-file", "--tls-key-file", "--tls-port",     "--variant",
    "--volume",        "--pages",        "--check",        "--browser",
    "--build-dir",
};

/// Files the samples name.
struct sample_files {
    sample_files() {
        std::ofstream{yaml} << "max_tasks: 3\n";
        std::ofstream{records} << "";
    }
    ~sample_files() {
        std::filesystem::remove(yaml);
        std::filesystem::remove(records);
    }
    const std::string yaml = "/tmp/asiocrawl-walk-" + std::to_string(::getpid()) + ".yaml";
    const std::string records = "/tmp/asiocrawl-walk-" + std::to_string(::getpid()) + ".jsonl";
};

const sample_files& files() {
    static const sample_files made;
    return made;
}

/// Values to try for an option that needs one, in order (the first the option takes is used).
std::vector<std::string> sample_values() {
    return {"2",
            "2s",
            "240h",
            "1MiB",
            "a.example",
            "x=127.0.0.1",
            "auto",
            "debug",
            "gumbo",
            "127.0.0.1:9100",
            "500",
            "image/*",
            "robots=off",
            "4xx",
            "X-A: b",
            "match=a.example; delay=2s",
            "redis://127.0.0.1:6379/0",
            files().yaml,
            files().records,
            "/tmp/asiocrawl-walk.warc.gz"};
}

/// Options that only go with others: what each needs beside it.
std::map<std::string, std::vector<std::string>> companions() {
    return {
        {"--cdxj", {"--warc", "/tmp/a.warc.gz"}},
        {"--wacz", {"--warc", "/tmp/a.warc.gz"}},
        {"--no-cdxj", {}},
        {"--requisites-span-hosts", {"-p"}},
        {"--recrawl", {"--state-dir", "/tmp/asiocrawl-walk-state"}},
        {"--continuous", {"--state-dir", "/tmp/asiocrawl-walk-state"}},
        {"--revisit-min", {"--state-dir", "/tmp/asiocrawl-walk-state", "--continuous"}},
        {"--revisit-max", {"--state-dir", "/tmp/asiocrawl-walk-state", "--continuous"}},
        {"--state-reset", {"--state-dir", "/tmp/asiocrawl-walk-state"}},
        {"--state-fsync", {"--state-dir", "/tmp/asiocrawl-walk-state"}},
        {"--crawl-id", {"--redis", "redis://127.0.0.1:6379/0"}},
        {"--instance", {"--redis", "redis://127.0.0.1:6379/0"}},
        {"--lease", {"--redis", "redis://127.0.0.1:6379/0"}},
        {"--redis-timeout", {"--redis", "redis://127.0.0.1:6379/0"}},
        {"--redis-ca-file", {"--redis", "rediss://127.0.0.1:6379/0"}},
        {"--redis-cert", {"--redis", "rediss://127.0.0.1:6379/0"}},
        {"--redis-key", {"--redis", "rediss://127.0.0.1:6379/0", "--redis-cert", "/tmp/c.pem"}},
        {"--redis-insecure", {"--redis", "rediss://127.0.0.1:6379/0"}},
        {"--random-wait", {"--delay", "1s"}},
        {"--show-secrets", {}},
    };
}

/// Runs `option` as the docs name it: alone, else with the first sample value it takes. Returns "" when the
/// parser took it, else what it said.
std::string run_option_uncached(const std::string& option);

/// The same, each option run once per process: both walks meet most options (the parser builds every
/// option's description for each run, which costs under a sanitizer).
std::string run_option(const std::string& option) {
    static std::map<std::string, std::string> ran;
    if (auto it = ran.find(option); it != ran.end())
        return it->second;
    return ran[option] = run_option_uncached(option);
}

std::string run_option_uncached(const std::string& option) {
    if (option == "--print-config")
        return printed({"a.example"}).starts_with("error:") ? "error: --print-config" : "";
    std::vector<std::string> base{option};
    const auto extra = companions();
    if (auto it = extra.find(option); it != extra.end())
        base.insert(base.end(), it->second.begin(), it->second.end());
    base.push_back("a.example");
    std::string said = printed(base);
    if (!said.starts_with("error:"))
        return {};
    const std::string alone = said;
    for (const auto& value : sample_values()) {
        auto args = base;
        args.insert(args.begin() + 1, value);
        said = printed(args);
        if (!said.starts_with("error:"))
            return {};
    }
    return alone;
}

TEST(option_walk, every_long_option_the_docs_name_runs_or_points_to_its_equivalent) {
    const std::regex long_option{R"((?:^|[^A-Za-z0-9_-])(--[a-z][a-z0-9-]*))"};
    std::map<std::string, std::string> where;
    for (const auto& path : documents()) {
        const std::string text = read_file(path);
        for (auto it = std::sregex_iterator(text.begin(), text.end(), long_option);
             it != std::sregex_iterator(); ++it)
            where.emplace((*it)[1].str(), path.substr(source_dir.size() + 1));
    }
    ASSERT_GT(where.size(), 150u) << "the docs name far more options than this";
    std::size_t own = 0;
    std::size_t pointed = 0;
    for (const auto& [option, path] : where) {
        if (other_programs.contains(option))
            continue;
        SCOPED_TRACE(option + " (" + path + ")");
        const std::string said = run_option(option);
        if (said.empty()) {
            ++own;
            continue;
        }
        // A wget option asiocrawl does not have: refused with what to use instead.
        EXPECT_THAT(said, HasSubstr("wget's " + option + " is not an asiocrawl option"));
        ++pointed;
    }
    EXPECT_GT(own, 100u);
    EXPECT_GT(pointed, 30u);
}

/// The backticked spans of a Markdown table cell that start with '-': "-l N", "--level=N".
std::vector<std::string> option_spans(const std::string& cell) {
    std::vector<std::string> spans;
    for (std::size_t at = cell.find('`'); at != std::string::npos; at = cell.find('`', at)) {
        const auto end = cell.find('`', at + 1);
        if (end == std::string::npos)
            break;
        const std::string span = cell.substr(at + 1, end - at - 1);
        if (span.starts_with('-'))
            spans.push_back(span);
        at = end + 1;
    }
    return spans;
}

/// A span as arguments: split on blanks, quotes grouping ('N: v'), placeholders given sample values.
std::vector<std::string> span_arguments(const std::string& span) {
    static const std::map<std::string, std::string> samples{{"N", "3"},
                                                            {"S", "2"},
                                                            {"R", "200k"},
                                                            {"RE", "x"},
                                                            {"LIST", "pdf"},
                                                            {"DIR", "/tmp/walk"},
                                                            {"DIRS", "/a"},
                                                            {"FILE", "/tmp/walk.warc.gz"},
                                                            {"AGENT", "bot/1"},
                                                            {"LOG", "walk.jsonl"},
                                                            {"NAME", "walk"},
                                                            {"TIME", "2s"},
                                                            {"TEXT", "bot/1"},
                                                            {"REGEX", "x"},
                                                            {"URL", "http://a.example/"},
                                                            {"TYPE,...", "image/*"}};
    std::vector<std::string> args;
    std::string word;
    bool quoted = false;
    for (const char c : span + " ") {
        if (c == '\'') {
            quoted = !quoted;
        } else if (c == ' ' && !quoted) {
            if (!word.empty())
                args.push_back(word);
            word.clear();
        } else {
            word += c;
        }
    }
    for (auto& arg : args) {
        // Markdown's escaped bar, and alternatives (auto|always|never): the first.
        for (auto at = arg.find("\\|"); at != std::string::npos; at = arg.find("\\|"))
            arg.erase(at, 1);
        if (!arg.starts_with('-') || arg.find('=') != std::string::npos)
            arg = arg.substr(0, arg.find('|'));
        const auto eq = arg.find('=');
        if (auto it = samples.find(arg); it != samples.end())
            arg = it->second;
        else if (eq != std::string::npos && samples.contains(arg.substr(eq + 1)))
            arg = arg.substr(0, eq + 1) + samples.at(arg.substr(eq + 1));
    }
    return args;
}

TEST(option_walk, every_option_of_the_wget_tables_runs_or_points_to_its_equivalent) {
    const std::string page = read_file(source_dir + "/docs/WGET.md");
    std::istringstream lines{page};
    std::size_t rows = 0;
    std::size_t spans = 0;
    for (std::string line; std::getline(lines, line);) {
        if (!line.starts_with("| ") || line.starts_with("|---"))
            continue;
        std::vector<std::string> cells;
        for (std::size_t at = 1; at < line.size();) {
            const auto end = line.find(" | ", at);
            cells.push_back(line.substr(at, end == std::string::npos ? std::string::npos : end - at));
            if (end == std::string::npos)
                break;
            at = end + 3;
        }
        if (cells.size() < 2)
            continue;
        ++rows;
        for (std::size_t column = 0; column < 2; ++column) {
            for (const auto& span : option_spans(cells[column])) {
                ++spans;
                SCOPED_TRACE(line.substr(0, 60) + " / `" + span + "`");
                auto args = span_arguments(span);
                // "--level=N" as "--level N": a span of one option and its value.
                if (const auto eq = args[0].find('='); args[0].starts_with("--") && eq != std::string::npos) {
                    args.insert(args.begin() + 1, args[0].substr(eq + 1));
                    args[0].resize(eq);
                }
                // A span without its value ("`-T`, `--timeout`") runs as the walk above runs it.
                std::string said = args.size() == 1 ? run_option(args[0]) : std::string{};
                if (args.size() != 1) {
                    args.push_back("a.example");
                    said = printed(args);
                    // A placeholder the samples do not fit (wget's LIST, FILE): the option as the walk runs
                    // it.
                    if (said.starts_with("error:") &&
                        said.find("is not an asiocrawl option") == std::string::npos &&
                        !run_option(args[0]).starts_with("error:"))
                        said.clear();
                }
                if (!said.starts_with("error:"))
                    continue;
                // The first column is wget's: an option asiocrawl lacks points to its equivalent.
                EXPECT_EQ(column, 0u) << "asiocrawl's own column names an option it refuses: " << said;
                EXPECT_THAT(said, HasSubstr("is not an asiocrawl option")) << said;
            }
        }
    }
    EXPECT_GT(rows, 60u);
    EXPECT_GT(spans, 100u);
}

// ---- the command line's habits
// -----------------------------------------------------------------------------------------

TEST(command_line, a_repeated_scalar_option_takes_the_last_value_as_in_wget_and_curl) {
    EXPECT_EQ(config_of({"--max-tasks", "3", "--max-tasks", "4", "a.example"}).crawl.max_tasks, 4u);
    EXPECT_EQ(config_of({"--delay=1s", "--delay", "2s", "a.example"}).crawl.politeness.delay, 2s);
    EXPECT_TRUE(config_of({"--sitemaps", "--sitemaps", "a.example"}).crawl.sitemaps);
    // A script's --config, then the user's: the user's is read.
    std::ofstream{"/tmp/asiocrawl-walk-first.yaml"} << "max_tasks: 5\n";
    std::ofstream{"/tmp/asiocrawl-walk-second.yaml"} << "max_tasks: 6\n";
    EXPECT_EQ(config_of({"--config", "/tmp/asiocrawl-walk-first.yaml", "--config",
                         "/tmp/asiocrawl-walk-second.yaml", "a.example"})
                  .crawl.max_tasks,
              6u);
    std::filesystem::remove("/tmp/asiocrawl-walk-first.yaml");
    std::filesystem::remove("/tmp/asiocrawl-walk-second.yaml");
}

TEST(command_line, records_on_stdout_alone_mean_no_text_report) {
    EXPECT_FALSE(config_of({"-o", "-", "a.example"}).output.report);
    EXPECT_FALSE(config_of({"--report-json", "-", "a.example"}).output.report);
    EXPECT_TRUE(config_of({"-o", "out.jsonl", "a.example"}).output.report);
    // Asked for both, stdout cannot hold both.
    EXPECT_THAT(error_of(parse_arguments({"-o", "-", "--report", "a.example"})),
                HasSubstr("cannot be stdout"));
}

TEST(command_line, a_records_file_named_for_another_format_is_refused) {
    for (const char* name : {"x.csv", "x.json", "out/x.xml", "x.jsonl.gz"}) {
        SCOPED_TRACE(name);
        const std::string error = error_of(parse_arguments({"-o", name, "a.example"}));
        EXPECT_THAT(error, HasSubstr("option --output: output.records is written as JSON Lines only"));
    }
    for (const char* name : {"x.jsonl", "x.ndjson", "records", "-"})
        EXPECT_THAT(error_of(parse_arguments({"-o", name, "--no-report", "a.example"})),
                    Not(HasSubstr("JSON Lines")));
}

TEST(command_line, help_says_defaults_value_names_subcommands_and_fits_the_terminal) {
    for (const int width : {60, 80, 132}) {
        SCOPED_TRACE(width);
        auto outcome = parse_arguments({"--help"}, {"COLUMNS=" + std::to_string(width)});
        ASSERT_TRUE(std::holds_alternative<print_and_exit>(outcome));
        const std::string help = std::get<print_and_exit>(outcome).text;
        std::istringstream lines{help};
        for (std::string line; std::getline(lines, line);) {
            // Program_options breaks a word longer than the column; nothing else is wider than the terminal.
            EXPECT_LE(line.size(), static_cast<std::size_t>(width)) << line;
            EXPECT_FALSE(line.ends_with(' ')) << line;
        }
        EXPECT_THAT(help, HasSubstr("asiocrawl report --redis URL --crawl-id ID"));
        EXPECT_THAT(help, HasSubstr("asiocrawl index FILE.warc"));
        EXPECT_THAT(help, HasSubstr("-l N, --level=N"));
    }
    const std::string help = std::get<print_and_exit>(parse_arguments({"--help"}, {"COLUMNS=200"})).text;
    EXPECT_THAT(help,
                HasSubstr("ask for gzip, deflate, br and zstd bodies (default: on; --no-compression: off)"));
    EXPECT_THAT(help, HasSubstr("(default: off)"));
    EXPECT_THAT(help, HasSubstr("--save-dir DIR"));
    EXPECT_THAT(help, HasSubstr("-o [ --output ] FILE"));
    EXPECT_THAT(help, HasSubstr("--listen HOST:PORT"));
    EXPECT_THAT(help, Not(HasSubstr("--warc TEXT")));
}

// ---- messages a person can read
// ----------------------------------------------------------------------------------------

TEST(messages, durations_and_sizes_in_human_units) {
    using asiocrawl::detail::human_bytes;
    using asiocrawl::detail::human_duration;
    EXPECT_EQ(human_duration(250ms), "250ms");
    EXPECT_EQ(human_duration(1500ms), "1.5s");
    EXPECT_EQ(human_duration(60'000ms), "1m");
    EXPECT_EQ(human_duration(90'000ms), "1m30s");
    EXPECT_EQ(human_duration(3'900'000ms), "1h5m");
    EXPECT_EQ(human_bytes(900), "900 bytes");
    EXPECT_EQ(human_bytes(1u << 20), "1 MiB");
    EXPECT_EQ(human_bytes(20'000), "19.5 KiB");
}

TEST(messages, switches_take_1_and_0_like_true_and_false) {
    EXPECT_TRUE(config_of({"a.example"}, {"ASIOCRAWL_NO_PARENT=1"}).crawl.no_parent);
    EXPECT_FALSE(config_of({"a.example"}, {"ASIOCRAWL_SITEMAPS=0", "ASIOCRAWL_NO_PARENT=0"}).crawl.no_parent);
    EXPECT_FALSE(config_of({"a.example"}, {"ASIOCRAWL_SITEMAPS=0"}).crawl.sitemaps);
    EXPECT_EQ(config_of({"a.example"}, {"ASIOCRAWL_OUTPUT_OVERWRITE=1"}).output.mode, open_mode::overwrite);
    EXPECT_THAT(error_of(parse_arguments({"a.example"}, {"ASIOCRAWL_NO_PARENT=2"})),
                HasSubstr("expected true or false (also yes/no, on/off, 1/0), got \"2\""));
}

} // namespace
} // namespace wget_options_test
