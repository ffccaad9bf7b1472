#include "cli/options.hpp"

#include "cli/config_file.hpp"
#include "cli/config_keys.hpp"
#include "cli/wget_spellings.hpp"
#include "http/fetch_settings.hpp"
#include "util/ascii.hpp"

#include <asiocrawl/version.hpp>

#include <boost/program_options.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace asiocrawl::cli {

namespace po = boost::program_options;

namespace {

constexpr const char* usage_lines[] = {
    "Usage: asiocrawl [options] ROOT...",
    "       asiocrawl report --redis URL --crawl-id ID",
    "       asiocrawl index FILE.warc[.gz]...",
};

constexpr const char* summary =
    "Crawl the websites at ROOT (a URL; \"example.com\" means http://example.com/) and print a report of "
    "every URL fetched. The report subcommand prints a shared crawl's report from its Redis state, index the "
    "CDXJ index of WARC files (asiocrawl report --help, asiocrawl index --help).";

// Paragraphs of the help's end, wrapped to the terminal's width.
constexpr const char* help_footer[] = {
    "Durations: 500ms, 10s, 2m, 1h (a plain number is seconds). Sizes: 16MiB, 500KiB, 1GB, or wget's "
    "200k, 1m (powers of 1024; plain: bytes).",
    "Each switch has an opposite that overrides the file and the environment: --no-sitemaps, "
    "--no-obey-robots, --no-report, --parent (of --no-parent)... A scalar option given twice takes the "
    "last value, as in wget and curl. List options repeat, or take comma-separated items (--domains "
    "a.com,b.org); --include/--exclude take one regular expression each time.",
    "Every option, and more, can be set in a YAML file (--config; all keys: config/asiocrawl.yaml) and as "
    "an environment variable ASIOCRAWL_<KEY>: the key's path in capitals with '.' as '_', e.g. "
    "ASIOCRAWL_MAX_TASKS=50, ASIOCRAWL_FETCH_CONNECT_TIMEOUT=5s, ASIOCRAWL_ROOTS=\"a.example b.example\". "
    "Precedence, lowest first: defaults, --config file, environment, command line.",
    "Logs go to stderr; the report and results to stdout or the files named above.",
    "Exit status: 0 crawl completed, 1 crawl completed with failed URLs under --fail-on-errors/--fail-on, "
    "or a write failed (an output, the state directory: no space left...), or Redis failed (unreachable, "
    "out of memory): the same command continues once the cause is gone; 2 usage or configuration error, "
    "or a state store that refuses the crawl (another crawl's state directory, a wrong Redis password...; "
    "nothing fetched); 4 nothing could be fetched (no URL got an HTTP answer); 130/143 interrupted by "
    "SIGINT/SIGTERM (report still printed; a second signal aborts the fetches in flight).",
    "--print-config shows passwords, credentials and Cookie headers as ***; add --show-secrets to see "
    "them.",
};

/// `text` wrapped at spaces into lines of at most `width` characters (a longer word stands alone), each
/// after `indent`, the first after `first` instead when it is given.
std::string wrap(std::string_view text, std::size_t width, std::string_view indent = "",
                 std::string_view first = "") {
    std::string out;
    std::string line(first.empty() ? indent : first);
    bool words = false;
    std::size_t at = 0;
    while (at < text.size()) {
        const auto end = std::min(text.find(' ', at), text.size());
        const std::string_view word = text.substr(at, end - at);
        at = end + 1;
        if (word.empty())
            continue;
        if (words && line.size() + 1 + word.size() > width) {
            out += line + "\n";
            line = indent;
            words = false;
        }
        line += (words ? " " : "") + std::string(word);
        words = true;
    }
    if (words)
        out += line + "\n";
    return out;
}

/// The help's width: COLUMNS (main sets it from the terminal), 80 without it, within 60..200.
std::size_t help_width(const std::vector<std::string>& environment) {
    std::size_t width = 80;
    for (const auto& variable : environment) {
        if (!variable.starts_with("COLUMNS="))
            continue;
        std::size_t columns = 0;
        const char* first = variable.data() + 8;
        const char* last = variable.data() + variable.size();
        if (const auto [ptr, ec] = std::from_chars(first, last, columns); ec == std::errc{} && ptr == last)
            width = columns;
    }
    return std::clamp<std::size_t>(width, 60, 200);
}

/// -v, -vv, -q, --verbose and --quiet may repeat, which Program_options does not count: take them out first.
/// Returns the net count, -v negative (towards debug), -q positive.
int take_verbosity(std::vector<std::string>& args) {
    int shift = 0;
    std::vector<std::string> rest;
    bool after_double_dash = false;
    for (auto& arg : args) {
        if (!after_double_dash && arg == "--") {
            after_double_dash = true;
        } else if (!after_double_dash && arg == "--verbose") {
            --shift;
            continue;
        } else if (!after_double_dash && arg == "--quiet") {
            ++shift;
            continue;
        } else if (!after_double_dash && arg.size() >= 2 && arg[0] == '-' &&
                   arg.find_first_not_of(arg[1], 1) == std::string::npos &&
                   (arg[1] == 'v' || arg[1] == 'q')) {
            const int count = static_cast<int>(arg.size() - 1);
            shift += arg[1] == 'v' ? -count : count;
            continue;
        }
        rest.push_back(std::move(arg));
    }
    args = std::move(rest);
    return shift;
}

/// A switch that may repeat (--sitemaps --sitemaps), as a value-less composing list.
po::typed_value<std::vector<std::string>>* repeatable_switch() {
    return po::value<std::vector<std::string>>()->zero_tokens()->composing();
}

/// Whether an asiocrawl option takes a value: "max-tasks", "config", or a short name ("o").
bool takes_value(std::string_view name) {
    if (name == "config")
        return true;
    for (const auto& key : config_keys()) {
        if (key.flag.empty() || key.codec.is_switch)
            continue;
        const auto comma = key.flag.find(',');
        if (key.flag.substr(0, comma) == name ||
            (comma != std::string_view::npos && key.flag.substr(comma + 1) == name))
            return true;
    }
    return false;
}

std::string long_name(std::string_view flag) {
    return std::string(flag.substr(0, flag.find(',')));
}

std::string describe_flag(const config_key& key, const app_config& defaults) {
    std::string text(key.help);
    const raw_value value = key.codec.get(defaults);
    const std::string shown = raw_to_text(value);
    if (text.find("(default") != std::string::npos)
        return text;
    // A switch says whether it is on already: --compression is not an opt-in.
    if (key.codec.is_switch)
        text += shown == "true" ? " (default: on; --" + opposite_flag(long_name(key.flag)) + ": off)"
                                : std::string(" (default: off)");
    else if (!shown.empty() && !value.null)
        text += " (default: " + shown + ")";
    return text;
}

std::string closest_flag(const std::string& unknown, const std::vector<std::string>& flags) {
    std::string best;
    std::size_t best_distance = 3;
    for (const auto& flag : flags) {
        if (const std::size_t distance = edit_distance(unknown, flag); distance < best_distance) {
            best_distance = distance;
            best = flag;
        }
    }
    return best;
}

std::string join_errors(const std::vector<config_error>& errors) {
    std::string text;
    for (const auto& error : errors) {
        if (error.warning)
            continue;
        text += (text.empty() ? "" : "\n") + to_string(error);
    }
    return text;
}

} // namespace

std::string check_seed_file(const std::string& path, bool needs_a_seed) {
    const std::string named = "input_file (-i) " + path;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return named + ": cannot open: " + std::strerror(errno);
    struct stat status {};
    std::string problem;
    if (::fstat(fd, &status) != 0)
        problem = named + ": " + std::strerror(errno);
    else if (S_ISDIR(status.st_mode))
        problem = named + " is a directory, not a file of URLs";
    // Only a regular file is read ahead: a pipe's lines are the crawl's.
    if (!problem.empty() || !needs_a_seed || !S_ISREG(status.st_mode)) {
        ::close(fd);
        return problem;
    }
    bool line_start = true;
    bool in_comment = false;
    char buffer[16384];
    for (;;) {
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            problem = named + ": cannot read: " + std::strerror(errno);
            break;
        }
        if (n == 0) {
            problem = "no seeds: " + named +
                      " holds no URL (only blank lines and # comments) and no ROOT was given";
            break;
        }
        bool found = false;
        for (ssize_t i = 0; i < n && !found; ++i) {
            const char c = buffer[i];
            if (c == '\n') {
                line_start = true;
                in_comment = false;
            } else if (in_comment || c == ' ' || c == '\t' || c == '\r') {
                continue;
            } else if (line_start && c == '#') {
                in_comment = true;
            } else {
                found = true;
            }
        }
        if (found)
            break;
    }
    ::close(fd);
    return problem;
}

log_level shifted_level(log_level level, int shift) noexcept {
    const int shifted = std::clamp(static_cast<int>(level) + shift, static_cast<int>(log_level::debug),
                                   static_cast<int>(log_level::off));
    return static_cast<log_level>(shifted);
}

parse_outcome parse_command_line(int argc, const char* const argv[],
                                 const std::vector<std::string>& environment) {
    std::vector<std::string> args(argv + (argc > 0 ? 1 : 0), argv + argc);
    const int verbosity_shift = take_verbosity(args);
    // --metrics-listen, the listener's name before it served the control API too, is --listen.
    for (auto& arg : args) {
        if (arg == "--")
            break;
        if (arg == "--metrics-listen" || arg.starts_with("--metrics-listen="))
            arg.replace(0, 16, "--listen");
    }
    const app_config defaults;
    if (auto error = rewrite_wget_spellings(args, takes_value); !error.empty())
        return usage_error{error};

    const std::size_t width = help_width(environment);
    const auto line_length = static_cast<unsigned>(width);
    std::string config_path;
    std::vector<std::string> roots;
    std::vector<std::string> all_flags{"config",  "print-config", "show-secrets", "help",
                                       "version", "verbose",      "quiet"};

    po::options_description general{"General", line_length, line_length / 2};
    general.add_options()("config", po::value<std::vector<std::string>>()->composing()->value_name("FILE"),
                          "read options from this YAML file (see config/asiocrawl.yaml; the last --config "
                          "wins)")(
        "print-config",
        "print the effective configuration as YAML and exit (passwords, credentials and Cookie headers as "
        "***)")("show-secrets", "with --print-config: print passwords and credentials in clear")(
        "verbose,v", "more logging on stderr, and a detailed report (repeatable: -vv for debug)")(
        "quiet,q", "less logging on stderr (repeatable: -qq silences logs and the report)")(
        "help,h", "print this help and exit")("version", "print the version and exit");

    // One section per topic, every flag generated from the key registry.
    std::map<std::string_view, po::options_description> groups;
    for (auto group : flag_groups())
        groups.emplace(group, po::options_description{std::string(group), line_length, line_length / 2});
    for (const auto& key : config_keys()) {
        if (key.flag.empty())
            continue;
        all_flags.push_back(long_name(key.flag));
        const std::string name(key.flag);
        const std::string help = describe_flag(key, defaults);
        auto& group = groups.at(key.group);
        if (key.codec.shape != value_shape::scalar)
            group.add_options()(
                name.c_str(),
                po::value<std::vector<std::string>>()->composing()->value_name(key.codec.value_name),
                help.c_str());
        else if (key.codec.is_switch)
            group.add_options()(name.c_str(), repeatable_switch(), help.c_str());
        else
            // Repeatable, the last one winning, as in wget and curl (a script's options, then the user's).
            group.add_options()(
                name.c_str(),
                po::value<std::vector<std::string>>()->composing()->value_name(key.codec.value_name),
                help.c_str());
    }
    for (const auto& flag : switch_flags()) {
        all_flags.emplace_back(flag.flag);
        groups.at(flag.group)
            .add_options()(std::string(flag.flag).c_str(), repeatable_switch(),
                           std::string(flag.help).c_str());
    }

    po::options_description hidden;
    hidden.add_options()("root", po::value(&roots));
    // Every switch has its opposite, to override a YAML file or the environment: --no-sitemaps, --parent.
    for (const auto& key : config_keys()) {
        if (key.flag.empty() || !key.codec.is_switch)
            continue;
        all_flags.push_back(opposite_flag(long_name(key.flag)));
        hidden.add_options()(all_flags.back().c_str(), repeatable_switch(), "");
    }
    po::positional_options_description positional;
    positional.add("root", -1);

    po::options_description visible{line_length, line_length / 2};
    visible.add(general);
    for (auto group : flag_groups())
        visible.add(groups.at(group));
    po::options_description all;
    all.add(visible).add(hidden);

    po::variables_map vm;
    try {
        const int style = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
        po::store(po::command_line_parser(args).options(all).positional(positional).style(style).run(), vm);
        po::notify(vm);
    } catch (const po::unknown_option& e) {
        if (auto instead = wget_hint(e.get_option_name()); !instead.empty())
            return usage_error{instead};
        std::string message = e.what();
        std::string name = e.get_option_name();
        name.erase(0, name.find_first_not_of('-'));
        if (auto near = closest_flag(name, all_flags); !near.empty())
            message += " (did you mean --" + near + "?)";
        return usage_error{message};
    } catch (const po::error& e) {
        return usage_error{e.what()};
    }

    if (vm.count("help")) {
        std::ostringstream text;
        for (const char* line : usage_lines)
            text << line << "\n";
        text << wrap(summary, width) << visible << "\nwget's spellings (docs/WGET.md):\n";
        for (const auto& alias : wget_aliases()) {
            std::string first = "  " + alias.spellings;
            first.resize(std::max<std::size_t>(first.size() + 2, 32), ' ');
            text << wrap(alias.means, width, std::string(32, ' '), first);
        }
        for (const char* paragraph : help_footer)
            text << "\n" << wrap(paragraph, width);
        // Program_options leaves a space at the end of the lines it wraps.
        std::string help = text.str();
        for (auto at = help.find(" \n"); at != std::string::npos; at = help.find(" \n", at)) {
            const auto start = help.find_last_not_of(' ', at) + 1;
            help.erase(start, at + 1 - start);
            at = start;
        }
        return print_and_exit{std::move(help)};
    }
    if (vm.count("version"))
        return print_and_exit{"asiocrawl " + std::string(version()) + "\n"};

    if (vm.count("config"))
        config_path = vm["config"].as<std::vector<std::string>>().back();

    cli_options options;
    app_config& config = options.config;
    config_origins origins;

    if (!config_path.empty()) {
        auto errors = load_config_file(config_path, config, &origins);
        if (auto text = join_errors(errors); !text.empty())
            return usage_error{text};
    }

    // From here on, a usage error also shows the warnings: a misspelt variable may be its cause.
    auto fail = [&](std::string text) {
        for (const auto& warning : options.warnings)
            text += "\n" + warning;
        return usage_error{std::move(text)};
    };
    auto env_errors = apply_environment(environment, config, &origins);
    for (const auto& error : env_errors)
        if (error.warning)
            options.warnings.push_back(to_string(error));
    if (auto text = join_errors(env_errors); !text.empty())
        return fail(text);

    std::vector<config_error> flag_errors;
    // Which switch set which key to what: two switches that disagree (--ignore-robots --obey-robots) are an
    // error rather than a silent last-one-wins.
    std::map<std::string_view, std::pair<std::string, std::string_view>> switched;
    auto set_switch = [&](std::string_view path, std::string_view value, const std::string& flag) {
        if (auto [at, first] = switched.emplace(path, std::pair{flag, value});
            !first && at->second.second != value)
            return false;
        auto errors = apply_text(path, value, "option --" + flag, config, &origins);
        flag_errors.insert(flag_errors.end(), errors.begin(), errors.end());
        return true;
    };
    for (const auto& key : config_keys()) {
        if (key.flag.empty())
            continue;
        const std::string name = long_name(key.flag);
        if (key.codec.is_switch) {
            const std::string opposite = opposite_flag(name);
            if (vm.count(name) && vm.count(opposite))
                return fail("--" + name + " and --" + opposite + " exclude each other");
            if (vm.count(name) || vm.count(opposite)) {
                const std::string& used = vm.count(name) ? name : opposite;
                set_switch(key.path, vm.count(name) ? "true" : "false", used);
            }
            continue;
        }
        if (!vm.count(name))
            continue;
        if (key.codec.shape == value_shape::scalar) {
            auto errors = apply_text(key.path, vm[name].as<std::vector<std::string>>().back(),
                                     "option --" + name, config, &origins);
            flag_errors.insert(flag_errors.end(), errors.begin(), errors.end());
        } else if (key.codec.shape == value_shape::list) {
            auto errors = apply_items(key.path, vm[name].as<std::vector<std::string>>(), "option --" + name,
                                      config, &origins);
            flag_errors.insert(flag_errors.end(), errors.begin(), errors.end());
        } else {
            std::string text;
            for (const auto& item : vm[name].as<std::vector<std::string>>())
                text += (text.empty() ? "" : ",") + item;
            auto errors = apply_text(key.path, text, "option --" + name, config, &origins);
            flag_errors.insert(flag_errors.end(), errors.begin(), errors.end());
        }
    }
    for (const auto& flag : switch_flags()) {
        const std::string name(flag.flag);
        if (!vm.count(name))
            continue;
        if (!set_switch(flag.path, flag.value, name))
            return fail("--" + switched.at(flag.path).first + " and --" + name + " exclude each other");
    }
    if (auto text = join_errors(flag_errors); !text.empty())
        return fail(text);
    // http_proxy, https_proxy, all_proxy and no_proxy as curl reads them, unless the file, an ASIOCRAWL_
    // variable or a flag set a proxy key (src/http/fetch_settings.cpp).
    const bool proxies_set = origins.contains("fetch.proxy") || origins.contains("fetch.http_proxy") ||
                             origins.contains("fetch.https_proxy");
    for (const auto& name : detail::apply_proxy_environment(config.crawl.fetch, environment, proxies_set,
                                                            origins.contains("fetch.no_proxy"))) {
        const std::string lower = detail::ascii::to_lower(name);
        const std::string key = lower == "all_proxy" ? "fetch.proxy" : "fetch." + lower;
        origins[key] = {"environment variable " + name, 0, 0};
    }

    if (verbosity_shift != 0) {
        config.run.log_level = shifted_level(config.run.log_level, verbosity_shift);
        origins["run.log_level"] = {"option -v/-q", 0, 0};
        // -qq means silence: no report either.
        if (verbosity_shift >= 2)
            config.output.report = false;
    }
    if (!roots.empty()) {
        config.crawl.roots = std::move(roots);
        origins["roots"] = {"ROOT arguments", 0, 0};
    }

    // -o - (or --report-json -) alone gives stdout to them: no text report there, unless a layer asked for
    // it.
    if ((config.output.records == "-" || config.output.report_json == "-") &&
        !origins.contains("output.report"))
        config.output.report = false;

    const bool print_config = vm.count("print-config") > 0;
    if (vm.count("show-secrets") && !print_config)
        return fail("--show-secrets only goes with --print-config");
    if (config.crawl.roots.empty() && config.crawl.input_file.empty() && !print_config)
        return fail("no ROOT given (on the command line, as roots: in the --config file, or in a file given "
                    "with -i)");

    auto problems = check_config(config, origins);
    if (print_config && config.crawl.roots.empty())
        std::erase_if(problems, [](const config_error& e) { return e.key == "roots"; });
    if (auto text = join_errors(problems); !text.empty())
        return fail(text);

    if (print_config) {
        std::string text = to_yaml(config, vm.count("show-secrets") ? secrets::shown : secrets::masked);
        // It is in no key (state.redis_password, filled below), and never printed.
        const bool redis_password = std::any_of(environment.begin(), environment.end(), [](const auto& v) {
            return v.starts_with("ASIOCRAWL_REDIS_PASSWORD=") && v.size() > 25;
        });
        if (redis_password)
            text.insert(text.find('\n') + 1,
                        "# The Redis password comes from ASIOCRAWL_REDIS_PASSWORD (never printed).\n");
        return print_and_exit{std::move(text), options.warnings};
    }
    // The library reads no environment: the Redis password comes to it in the config.
    constexpr std::string_view password_variable = "ASIOCRAWL_REDIS_PASSWORD=";
    for (const auto& variable : environment)
        if (variable.starts_with(password_variable))
            config.crawl.state.redis_password = variable.substr(password_variable.size());
    // The control API's token: the key, else the first line of the key's file, else the environment.
    auto& token = config.output.listen_token;
    if (token.empty() && !config.output.listen_token_file.empty()) {
        std::ifstream in(config.output.listen_token_file);
        if (!in || !std::getline(in, token))
            return fail("output.listen_token_file: cannot read a token from " +
                        config.output.listen_token_file);
        while (!token.empty() && (token.back() == '\r' || token.back() == ' '))
            token.pop_back();
        if (token.empty())
            return fail("output.listen_token_file: the first line of " + config.output.listen_token_file +
                        " is empty");
    }
    constexpr std::string_view token_variable = "ASIOCRAWL_LISTEN_TOKEN=";
    if (token.empty())
        for (const auto& variable : environment)
            if (variable.starts_with(token_variable))
                token = variable.substr(token_variable.size());
    return options;
}

} // namespace asiocrawl::cli
