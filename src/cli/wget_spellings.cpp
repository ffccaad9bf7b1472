#include "cli/wget_spellings.hpp"

#include "util/ascii.hpp"

#include <algorithm>
#include <array>

namespace asiocrawl::cli {

namespace {

/// The tokens an alias becomes for `value` (empty for an alias without value), or an error in `error`.
using expand_fn = std::vector<std::string> (*)(std::string_view value, std::string& error);

struct alias {
    /// Without dashes; "" for none.
    std::string_view long_name;
    /// Without the dash: one letter ("l"), or a whole token of several ("np" for -np).
    std::string_view short_name;
    /// The asiocrawl option it becomes ("max-depth"), "" when it is asiocrawl's default (--spider).
    std::string_view target;
    /// The value's placeholder ("N"); "" for an alias without value.
    std::string_view value_name;
    /// Null: --target=value (or --target without a value).
    expand_fn expand;
    std::string_view means;

    bool takes_value() const { return !value_name.empty(); }
};

bool is_unlimited(std::string_view value) {
    const std::string word = detail::ascii::to_lower(value);
    return word == "inf" || word == "0";
}

std::vector<std::string> level(std::string_view value, std::string&) {
    // wget's -l inf and -l 0 are no limit; asiocrawl's --max-depth 0 is the roots alone.
    return {"--max-depth=" + (is_unlimited(value) ? std::string("unlimited") : std::string(value))};
}

std::vector<std::string> tries(std::string_view value, std::string& error) {
    if (is_unlimited(value)) {
        error = "-t/--tries " + std::string(value) +
                ": unlimited attempts are not offered; give a number of attempts (--max-tries N)";
        return {};
    }
    return {"--max-tries=" + std::string(value)};
}

std::vector<std::string> execute(std::string_view value, std::string& error) {
    std::string command = detail::ascii::to_lower(value);
    std::erase(command, ' ');
    if (command == "robots=off" || command == "robots=0" || command == "robots=no")
        return {"--ignore-robots"};
    if (command == "robots=on" || command == "robots=1" || command == "robots=yes")
        return {"--obey-robots"};
    error =
        "wget's -e " + std::string(value) +
        " is not an asiocrawl option: only robots=on and robots=off are understood; other .wgetrc commands "
        "are keys of a --config YAML file (config/asiocrawl.yaml)";
    return {};
}

std::vector<std::string> warc_file(std::string_view value, std::string&) {
    // wget writes --warc-file=NAME to NAME.warc.gz.
    std::string path(value);
    if (!path.ends_with(".warc") && !path.ends_with(".warc.gz"))
        path += ".warc.gz";
    return {"--warc=" + path};
}

// clang-format off
const std::array<alias, 22> aliases{{
    {"level",                "l",  "max-depth",        "N",        level,     "--max-depth N (inf or 0: unlimited)"},
    {"wait",                 "w",  "delay",            "TIME",     nullptr,   "--delay TIME (per host)"},
    {"tries",                "t",  "max-tries",        "N",        tries,     "--max-tries N (inf or 0 refused)"},
    {"",                     "T",  "timeout",          "TIME",     nullptr,   "--timeout TIME"},
    {"",                     "U",  "user-agent",       "TEXT",     nullptr,   "--user-agent TEXT"},
    {"execute",              "e",  "",                 "CMD",  execute, "robots=off: --ignore-robots; robots=on: --obey-robots"},
    {"warc-file",            "",   "warc",             "NAME",     warc_file, "--warc NAME.warc.gz (wget's name)"},
    {"accept-regex",         "",   "include",          "REGEX",    nullptr,   "--include REGEX"},
    {"reject-regex",         "",   "exclude",          "REGEX",    nullptr,   "--exclude REGEX"},
    {"filter-mime-type",     "",   "accept-type",      "TYPE,...", nullptr,   "--accept-type TYPE,... (wget2)"},
    {"directory-prefix",     "P",  "save-dir",         "DIR",      nullptr,   "--save-dir DIR"},
    {"ca-certificate",       "",   "ca-file",          "FILE",     nullptr,   "--ca-file FILE"},
    {"no-check-certificate", "",   "insecure",         "",         nullptr,   "--insecure"},
    {"",                     "np", "no-parent",        "",         nullptr,   "--no-parent"},
    {"no-clobber",           "nc", "no-overwrite",     "",         nullptr,   "--no-overwrite (the default)"},
    {"debug",                "d",  "log-level=debug",  "",         nullptr,   "--log-level debug (-vv)"},
    {"",                     "nv", "",                 "",         nullptr,   "the default log level"},
    {"recursive",            "r",  "",                 "",         nullptr,   "always: a crawl is recursive"},
    {"spider",               "",   "",                 "",         nullptr,   "the default: nothing is stored unless asked"},
    {"delete-after",         "",   "",                 "",         nullptr,   "the default: nothing is stored unless asked"},
    {"force-directories",    "x",  "",                 "",         nullptr,   "always, in --save-dir"},
    {"compression",          "",   "",                 "TYPE",     nullptr,   "none: --no-compression; gzip: --compression"},
}};

struct hint {
    /// Spellings with their dashes, separated by spaces.
    std::string_view spellings;
    std::string_view instead;
};

const std::array<hint, 30> hints{{
    {"-H --span-hosts", "list the domains to span with --domains a.com,b.org (or --lenient for every host of the roots' registrable domains)"},
    {"-D", "--domains a.com,b.org"},
    {"-I --include-directories", "--include '^https?://[^/]+/DIR/' (a regular expression)"},
    {"-X --exclude-directories", "--exclude '/DIR/' (a regular expression)"},
    {"--regex-type", "patterns are always Perl syntax (Boost.Regex): drop it"},
    {"--ignore-case", "not supported: write (?i) at the start of a pattern"},
    {"-L --relative", "not supported: relative and absolute links are the same URL once resolved"},
    {"--follow-ftp --follow-tags --ignore-tags", "not supported: http and https only, links from every element that carries one"},
    {"--waitretry", "retry.initial_backoff and retry.max_backoff in a --config file"},
    {"--retry-on-http-error", "--retry-statuses 429,503,500 (the whole list)"},
    {"--dns-timeout", "--connect-timeout (DNS, TCP connect and TLS handshake)"},
    {"--read-timeout", "--timeout (the whole request and response)"},
    {"--user --password --http-user --http-password", "credentials in the root URL, https://USER:PASS@host/ (or fetch.credentials in a --config file)"},
    {"--ask-password", "not supported: credentials in the root URL or fetch.credentials in a --config file"},
    {"--referer", "--header 'Referer: URL'"},
    {"--certificate --private-key --secure-protocol", "not supported: no client certificates or protocol pinning"},
    {"--https-only", "--include '^https://'"},
    {"--no-http-keep-alive --no-cache", "not supported"},
    {"--post-data --method", "not supported: a crawler fetches with GET"},
    {"-N --timestamping -c --continue", "not supported: --state-dir DIR resumes an interrupted crawl"},
    {"-nd -nH --no-directories --no-host-directories --cut-dirs --protocol-directories --default-page", "not supported: --save-dir's layout is fixed (DIR/host/path)"},
    {"-E --adjust-extension --restrict-file-names", "not supported: saved names are the URL's, sanitized (docs/OUTPUTS.md)"},
    {"-k --convert-links -K --backup-converted", "not supported: --warc FILE replays with pywb or ReplayWeb.page"},
    {"-m --mirror", "--save-dir DIR (a crawl is always recursive, with no depth limit unless --max-depth)"},
    {"--content-on-error", "--warc FILE (it keeps every response, error pages included)"},
    {"-O --output-document", "--warc FILE (one file for the whole crawl); -o is asiocrawl's records file"},
    {"-a --append-output --output-file", "logs go to stderr: 2>LOG or 2>>LOG"},
    {"-S --server-response", "-vv, or --warc FILE (it keeps the exact response heads)"},
    {"-b --background", "not supported: use the shell (&, nohup), systemd or the container image"},
    {"-4 -6 --inet4-only --inet6-only --bind-address --local-encoding --remote-encoding --no-iri --content-disposition --trust-server-names -F --force-html -B --base", "not supported (docs/WGET.md)"},
}};
// clang-format on

bool in_spellings(std::string_view spellings, std::string_view option) {
    std::size_t at = 0;
    while (at < spellings.size()) {
        const auto end = std::min(spellings.find(' ', at), spellings.size());
        if (spellings.substr(at, end - at) == option)
            return true;
        at = end + 1;
    }
    return false;
}

std::string dashed(const alias& a) {
    const std::string value(a.value_name);
    std::string text;
    if (!a.short_name.empty())
        text += "-" + std::string(a.short_name) + (value.empty() ? "" : " " + value);
    if (!a.long_name.empty())
        text +=
            (text.empty() ? "--" : ", --") + std::string(a.long_name) + (value.empty() ? "" : "=" + value);
    return text;
}

} // namespace

std::vector<wget_alias_doc> wget_aliases() {
    std::vector<wget_alias_doc> docs;
    for (const auto& a : aliases)
        docs.push_back({dashed(a), a.means});
    return docs;
}

std::string wget_hint(std::string_view option) {
    option = option.substr(0, option.find('='));
    // The whole option, then a one-letter option with its value attached (-Dexample.com).
    for (const std::string_view candidate :
         {option, option.size() > 2 && option[1] != '-' ? option.substr(0, 2) : std::string_view{}}) {
        for (const auto& h : hints)
            if (!candidate.empty() && in_spellings(h.spellings, candidate))
                return "wget's " + std::string(candidate) +
                       " is not an asiocrawl option: " + std::string(h.instead) + " (docs/WGET.md)";
    }
    return {};
}

std::string rewrite_wget_spellings(std::vector<std::string>& args,
                                   const std::function<bool(std::string_view)>& takes_value) {
    std::vector<std::string> out;
    out.reserve(args.size());
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        if (arg == "--") {
            out.insert(out.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
            break;
        }
        if (arg.size() < 2 || arg[0] != '-') {
            out.push_back(arg);
            continue;
        }
        const bool is_long = arg[1] == '-';
        const std::string_view body = std::string_view(arg).substr(is_long ? 2 : 1);
        const auto eq = body.find('=');
        const std::string_view name = is_long ? body.substr(0, eq) : body;
        const alias* found = nullptr;
        std::string value;
        bool has_value = false;
        for (const auto& a : aliases) {
            if (is_long && !a.long_name.empty() && name == a.long_name) {
                found = &a;
                if (eq != std::string_view::npos) {
                    value = body.substr(eq + 1);
                    has_value = true;
                }
            } else if (!is_long && !a.short_name.empty() &&
                       (body == a.short_name ||
                        (a.takes_value() && a.short_name.size() == 1 && body.starts_with(a.short_name)))) {
                found = &a;
                if (body.size() > a.short_name.size()) {
                    value = body.substr(a.short_name.size());
                    has_value = true;
                }
            }
            if (found)
                break;
        }
        // --compression is asiocrawl's switch; wget's --compression=TYPE takes a value.
        if (found && found->long_name == "compression") {
            if (!has_value) {
                out.push_back(arg);
                continue;
            }
            const std::string type = detail::ascii::to_lower(value);
            if (type == "none")
                out.emplace_back("--no-compression");
            else if (type == "auto" || type == "gzip")
                out.emplace_back("--compression");
            else
                return "--compression=" + value + ": wget's types are auto, gzip and none";
            continue;
        }
        if (!found) {
            if (auto instead = wget_hint(is_long ? "--" + std::string(name) : arg); !instead.empty())
                return instead;
            out.push_back(arg);
            // A value that starts with '-' is the option's, not an option.
            const bool separate_value = is_long ? eq == std::string_view::npos && takes_value(name)
                                                : body.size() == 1 && takes_value(body);
            if (separate_value && i + 1 < args.size())
                out.push_back(args[++i]);
            continue;
        }
        const std::string spelled =
            is_long ? "--" + std::string(found->long_name) : "-" + std::string(found->short_name);
        if (found->takes_value() && !has_value) {
            if (i + 1 >= args.size())
                return "option " + spelled + " (wget's) needs a value: " + std::string(found->means);
            value = args[++i];
        } else if (!found->takes_value() && has_value) {
            return "option " + spelled + " (wget's) takes no value";
        }
        if (found->expand) {
            std::string error;
            auto tokens = found->expand(value, error);
            if (!error.empty())
                return error;
            out.insert(out.end(), tokens.begin(), tokens.end());
        } else if (!found->target.empty()) {
            out.push_back("--" + std::string(found->target) + (found->takes_value() ? "=" + value : ""));
        }
    }
    args = std::move(out);
    return {};
}

} // namespace asiocrawl::cli
