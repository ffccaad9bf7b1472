#include "cli/config_keys.hpp"

#include "util/ascii.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <type_traits>

namespace asiocrawl::cli {

namespace {

using namespace std::chrono_literals;

// ---- text helpers
// ------------------------------------------------------------------------------------------

/// `text` without the blanks YAML scalars and header lines may carry around them (C's isspace set).
std::string_view trim(std::string_view text) noexcept {
    return detail::ascii::trim(text, detail::ascii::c_whitespace);
}

using detail::ascii::to_lower;

/// Header names that carry credentials when they hold one of these (X-Api-Key, X-Auth-Token, ...).
constexpr std::string_view secret_header_words[] = {"token",  "secret", "password", "api-key",
                                                    "apikey", "auth",   "session"};

/// A decimal number without sign or exponent ("10", "1.5") at the start of `text`, and the rest after
/// optional spaces: the unit.
std::optional<std::pair<double, std::string>> number_and_unit(std::string_view text) {
    text = trim(text);
    const auto end = text.find_first_not_of("0123456789.");
    const std::string_view digits = text.substr(0, end);
    if (digits.empty() || digits.front() == '.' || std::count(digits.begin(), digits.end(), '.') > 1)
        return std::nullopt;
    double value = 0;
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ec != std::errc{} || ptr != digits.data() + digits.size() || !std::isfinite(value))
        return std::nullopt;
    const std::string_view unit = end == std::string_view::npos ? std::string_view{} : trim(text.substr(end));
    return std::pair{value, to_lower(unit)};
}

// ---- codecs: one builder per field type
// ----------------------------------------------------------------------

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

/// The type of the field an accessor `[](auto& c) -> auto& { return c.x; }` reaches.
template <class Access>
using field_t = std::remove_cvref_t<std::invoke_result_t<Access, app_config&>>;

/// A scalar key: `parse(text) -> optional<T>` and `print(T) -> string` for the field type T. Optional fields
/// take null (YAML null, or "null"/"unlimited" as text) for unset.
template <class Access, class Parse, class Print>
key_codec scalar_codec(Access access, std::string expected, std::string value_name, Parse parse,
                       Print print) {
    using T = field_t<Access>;
    key_codec codec;
    codec.expected = std::move(expected);
    codec.value_name = std::move(value_name);
    if constexpr (is_optional<T>::value)
        codec.expected += ", or null for unlimited";
    codec.set = [access, parse](app_config& config, const raw_value& value) {
        if constexpr (is_optional<T>::value) {
            const std::string text = to_lower(trim(value.scalar));
            if (value.null || text == "null" || text == "~" || text == "unlimited") {
                access(config).reset();
                return true;
            }
        }
        if (value.null)
            return false;
        auto parsed = parse(trim(value.scalar));
        if (!parsed)
            return false;
        access(config) = *parsed;
        return true;
    };
    codec.get = [access, print](const app_config& config) {
        raw_value value;
        const auto& field = access(config);
        if constexpr (is_optional<T>::value) {
            if (!field)
                value.null = true;
            else
                value.scalar = print(*field);
        } else {
            value.scalar = print(field);
        }
        return value;
    };
    return codec;
}

template <class T>
struct unwrap_optional {
    using type = T;
};
template <class T>
struct unwrap_optional<std::optional<T>> {
    using type = T;
};

/// A whole number; `least` and `most` only describe the range in messages (validate() checks it, so that
/// a value out of range is reported with the range, not as a wrong type).
template <class Access>
key_codec whole(Access access, long long least = 0, std::optional<long long> most = std::nullopt) {
    using T = typename unwrap_optional<field_t<Access>>::type;
    static_assert(std::is_integral_v<T>);
    const std::string expected =
        most ? "a whole number from " + std::to_string(least) + " to " + std::to_string(*most)
             : "a whole number, " + std::to_string(least) + " or more";
    return scalar_codec(
        access, expected, "N",
        [](std::string_view text) -> std::optional<T> {
            T value{};
            const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
            if (ec != std::errc{} || ptr != text.data() + text.size())
                return std::nullopt;
            return value;
        },
        [](T value) { return std::to_string(value); });
}

template <class Access>
key_codec real(Access access) {
    return scalar_codec(
        access, "a number such as 0.5 or 2", "X",
        [](std::string_view text) -> std::optional<double> {
            double value = 0;
            const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
            if (ec != std::errc{} || ptr != text.data() + text.size() || !std::isfinite(value))
                return std::nullopt;
            return value;
        },
        [](double value) {
            std::array<char, 32> buffer{};
            const auto [ptr, ec] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
            return std::string(buffer.data(), ptr);
        });
}

template <class Access>
key_codec boolean(Access access) {
    auto codec = scalar_codec(
        access, "true or false (also yes/no, on/off, 1/0)", "BOOL",
        [](std::string_view text) -> std::optional<bool> {
            const std::string word = to_lower(text);
            if (word == "true" || word == "yes" || word == "on" || word == "1")
                return true;
            if (word == "false" || word == "no" || word == "off" || word == "0")
                return false;
            return std::nullopt;
        },
        [](bool value) { return std::string(value ? "true" : "false"); });
    codec.is_switch = true;
    return codec;
}

template <class Access>
key_codec duration(Access access) {
    return scalar_codec(
        access, "a duration such as 500ms, 10s, 2m or 1h (a plain number is seconds)", "TIME",
        [](std::string_view text) { return parse_duration(text); },
        [](std::chrono::milliseconds value) { return format_duration(value); });
}

template <class Access>
key_codec bytes(Access access) {
    using T = field_t<Access>;
    return scalar_codec(
        access, "a size such as 16MiB, 500KiB, 1GB, 200k (wget's k: KiB) or a number of bytes", "SIZE",
        [](std::string_view text) -> std::optional<T> {
            auto value = parse_size(text);
            if (!value || *value > std::numeric_limits<T>::max())
                return std::nullopt;
            return static_cast<T>(*value);
        },
        [](T value) { return format_size(value); });
}

template <class Access>
key_codec text(Access access) {
    auto codec = scalar_codec(
        access, "text", "TEXT", [](std::string_view) -> std::optional<std::string> { return std::nullopt; },
        [](const std::string& value) { return value; });
    // Text keeps its spaces, and an empty YAML value means the empty string.
    codec.set = [access](app_config& config, const raw_value& value) {
        access(config) = value.null ? std::string{} : value.scalar;
        return true;
    };
    codec.quoted = true;
    return codec;
}

template <class E>
using choice_names = std::vector<std::pair<std::string_view, E>>;

template <class Access, class E = field_t<Access>>
key_codec choice(Access access, choice_names<E> names) {
    std::string expected = "one of ";
    std::string value_name;
    for (const auto& [name, _] : names) {
        expected += (value_name.empty() ? "" : ", ") + std::string(name);
        value_name += (value_name.empty() ? "" : "|") + std::string(name);
    }
    return scalar_codec(
        access, expected, value_name,
        [names](std::string_view text) -> std::optional<E> {
            const std::string word = to_lower(text);
            for (const auto& [name, value] : names)
                if (word == name)
                    return value;
            return std::nullopt;
        },
        [names](E value) {
            for (const auto& [name, v] : names)
                if (v == value)
                    return std::string(name);
            return std::string("?");
        });
}

template <class Access>
key_codec strings(Access access) {
    key_codec codec;
    codec.shape = value_shape::list;
    codec.expected = "a list of text items";
    codec.value_name = "ITEM";
    codec.quoted = true;
    codec.set = [access](app_config& config, const raw_value& value) {
        access(config) = value.items;
        return true;
    };
    codec.get = [access](const app_config& config) {
        raw_value value;
        value.items = access(config);
        return value;
    };
    return codec;
}

/// Header fields ("Name: value"), which hold commas and spaces: one per flag occurrence or per line of an
/// environment variable.
template <class Access>
key_codec lines(Access access) {
    key_codec codec = strings(access);
    codec.expected = "a list of text items (one per line in an environment variable)";
    codec.value_name = "TEXT";
    codec.separators = "\n\r";
    return codec;
}

/// Per-host rules: YAML maps, or their one-line form (host_rule_text).
template <class Access>
key_codec host_rules_codec(Access access) {
    key_codec codec;
    codec.shape = value_shape::list;
    codec.expected =
        "a list of rules such as {match: \"*.example.com\", delay: 2s, max_per_host: 1} (fields: " +
        std::string(host_rule_fields) + ")";
    codec.value_name = "RULE";
    codec.quoted = true;
    codec.item_maps = true;
    codec.separators = "\n\r";
    codec.set = [access](app_config& config, const raw_value& value) {
        std::vector<host_rule> rules;
        for (const auto& item : value.items) {
            std::string problem;
            auto rule = parse_host_rule(item, problem);
            if (!rule)
                return false;
            rules.push_back(std::move(*rule));
        }
        access(config) = std::move(rules);
        return true;
    };
    codec.get = [access](const app_config& config) {
        raw_value value;
        for (const auto& rule : access(config))
            value.items.push_back(host_rule_text(rule));
        return value;
    };
    return codec;
}

/// HTTP statuses: a list of whole numbers (range checked by validate()).
template <class Access>
key_codec statuses(Access access) {
    key_codec codec;
    codec.shape = value_shape::list;
    codec.expected = "a list of HTTP statuses such as 429, 503";
    codec.value_name = "STATUS,...";
    codec.set = [access](app_config& config, const raw_value& value) {
        std::vector<int> parsed;
        for (const auto& item : value.items) {
            const std::string_view text = trim(item);
            int status = 0;
            const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), status);
            if (text.empty() || ec != std::errc{} || ptr != text.data() + text.size())
                return false;
            parsed.push_back(status);
        }
        access(config) = std::move(parsed);
        return true;
    };
    codec.get = [access](const app_config& config) {
        raw_value value;
        for (const int status : access(config))
            value.items.push_back(std::to_string(status));
        return value;
    };
    return codec;
}

/// The same codec with another placeholder in --help ("DOMAIN,...").
key_codec named(key_codec codec, std::string value_name) {
    codec.value_name = std::move(value_name);
    return codec;
}

/// Regular expressions: one per flag occurrence or per line of an environment variable.
template <class Access>
key_codec patterns(Access access) {
    key_codec codec = strings(access);
    codec.expected = "a list of regular expressions";
    codec.value_name = "REGEX";
    codec.separators = "\n\r";
    return codec;
}

/// output.overwrite: a switch over output_config::mode (create_new or overwrite; append is set by code).
key_codec overwrite_switch() {
    key_codec codec = boolean([](auto& c) -> auto& { return c.output.report; });
    codec.set = [](app_config& config, const raw_value& value) {
        const std::string word = to_lower(trim(value.scalar));
        if (value.null)
            return false;
        if (word == "true" || word == "yes" || word == "on" || word == "1")
            config.output.mode = open_mode::overwrite;
        else if (word == "false" || word == "no" || word == "off" || word == "0")
            config.output.mode = open_mode::create_new;
        else
            return false;
        return true;
    };
    codec.get = [](const app_config& config) {
        raw_value value;
        value.scalar = config.output.mode == open_mode::overwrite ? "true" : "false";
        return value;
    };
    return codec;
}

template <class Access>
key_codec pairs(Access access) {
    key_codec codec;
    codec.shape = value_shape::map;
    codec.expected = "a map of names to values";
    codec.value_name = "NAME=VALUE";
    codec.set = [access](app_config& config, const raw_value& value) {
        std::map<std::string, std::string> map;
        for (const auto& [name, v] : value.entries)
            map[name] = v;
        access(config) = std::move(map);
        return true;
    };
    codec.get = [access](const app_config& config) {
        raw_value value;
        for (const auto& entry : access(config))
            value.entries.emplace_back(entry);
        return value;
    };
    return codec;
}

// ---- secrets: what --print-config and error messages show of keys that hold passwords
// ------------------------------------------------------

/// The same codec, its values masked by `mask_one` (applied to the scalar, each item, or each map value).
key_codec secret(key_codec codec, std::function<std::string(std::string_view)> mask_one) {
    codec.mask = [mask_one](raw_value value) {
        if (!value.null && !value.scalar.empty())
            value.scalar = mask_one(value.scalar);
        for (auto& item : value.items)
            item = mask_one(item);
        for (auto& entry : value.entries)
            entry.second = mask_one(entry.second);
        return value;
    };
    return codec;
}

std::string mask_redis_url(std::string_view url) {
    // src/store/redis_client.cpp: the authority ends at the first '/', and a lone userinfo is the password.
    return mask_url_password(url, "/", true);
}

std::string mask_link_url(std::string_view url) {
    return mask_url_password(url);
}

} // namespace

std::string escape_rule_value(std::string_view value) {
    std::string out;
    for (const char c : value) {
        if (c == ';' || c == '\\')
            out += '\\';
        out += c;
    }
    return out;
}

std::string host_rule_text(const host_rule& rule) {
    std::string text = "match=" + escape_rule_value(rule.match);
    if (rule.delay)
        text += "; delay=" + format_duration(*rule.delay);
    if (rule.max_per_host)
        text += "; max_per_host=" + std::to_string(*rule.max_per_host);
    if (rule.max_pages)
        text += "; max_pages=" + std::to_string(*rule.max_pages);
    if (rule.obey_robots)
        text += std::string("; obey_robots=") + (*rule.obey_robots ? "true" : "false");
    for (const auto& header : rule.headers)
        text += "; header=" + escape_rule_value(header);
    return text;
}

std::optional<host_rule> parse_host_rule(std::string_view text, std::string& problem) {
    host_rule rule;
    bool has_match = false;
    std::size_t at = 0;
    while (at <= text.size()) {
        // One field up to an unescaped ';'.
        std::string field;
        for (; at < text.size() && text[at] != ';'; ++at) {
            if (text[at] == '\\' && at + 1 < text.size())
                ++at;
            field += text[at];
        }
        ++at;
        const std::string_view trimmed = trim(field);
        if (trimmed.empty())
            continue;
        const auto eq = trimmed.find('=');
        if (eq == std::string_view::npos) {
            problem = "\"" + std::string(trimmed) + "\" is not NAME=VALUE";
            return std::nullopt;
        }
        const std::string_view name = trim(trimmed.substr(0, eq));
        const std::string_view value = trim(trimmed.substr(eq + 1));
        const auto number = [&](std::optional<std::size_t>& out) {
            std::size_t n = 0;
            const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
            if (value.empty() || ec != std::errc{} || end != value.data() + value.size()) {
                problem = std::string(name) + ": expected a whole number, got \"" + std::string(value) + "\"";
                return false;
            }
            out = n;
            return true;
        };
        if (name == "match") {
            rule.match = std::string(value);
            has_match = true;
        } else if (name == "delay") {
            rule.delay = parse_duration(value);
            if (!rule.delay) {
                problem =
                    "delay: expected a duration such as 500ms, 10s or 2m, got \"" + std::string(value) + "\"";
                return std::nullopt;
            }
        } else if (name == "max_per_host") {
            if (!number(rule.max_per_host))
                return std::nullopt;
        } else if (name == "max_pages") {
            if (!number(rule.max_pages))
                return std::nullopt;
        } else if (name == "obey_robots") {
            if (value == "true" || value == "yes" || value == "on" || value == "1")
                rule.obey_robots = true;
            else if (value == "false" || value == "no" || value == "off" || value == "0")
                rule.obey_robots = false;
            else {
                problem = "obey_robots: expected true or false, got \"" + std::string(value) + "\"";
                return std::nullopt;
            }
        } else if (name == "header" || name == "headers") {
            rule.headers.emplace_back(value);
        } else {
            problem = "unknown field \"" + std::string(name) + "\" (" + std::string(host_rule_fields) + ")";
            return std::nullopt;
        }
    }
    if (!has_match) {
        problem = "a rule needs match=HOST, *.DOMAIN or an http(s) URL prefix";
        return std::nullopt;
    }
    return rule;
}

namespace {

/// A value that is all secret (the control API's token).
std::string mask_all(std::string_view) {
    return std::string(masked_secret);
}

/// fetch.credentials values: "user:password" -> "user:***".
std::string mask_user_password(std::string_view userinfo) {
    const auto colon = userinfo.find(':');
    if (colon == std::string_view::npos)
        return std::string(masked_secret);
    return std::string(userinfo.substr(0, colon + 1)) + std::string(masked_secret);
}

// The field a key sets; works on const and non-const configs.
#define FIELD(member)                                                                                        \
    [](auto& c) -> auto& {                                                                                   \
        return c.member;                                                                                     \
    }

const choice_names<host_scope> scope_names{{"strict", host_scope::strict}, {"lenient", host_scope::lenient}};
const choice_names<html_parser> html_parser_names{{"fast", html_parser::fast}, {"gumbo", html_parser::gumbo}};
const choice_names<http2_mode> http2_names{
    {"auto", http2_mode::automatic}, {"off", http2_mode::off}, {"only", http2_mode::only}};
const choice_names<progress_mode> progress_names{
    {"auto", progress_mode::automatic}, {"always", progress_mode::always}, {"never", progress_mode::never}};
const choice_names<log_level> log_level_names{{"debug", log_level::debug},
                                              {"info", log_level::info},
                                              {"warning", log_level::warning},
                                              {"error", log_level::error},
                                              {"off", log_level::off}};

constexpr std::string_view crawl = "Crawl";
constexpr std::string_view scope = "Scope";
constexpr std::string_view fetching = "Fetching";
constexpr std::string_view polite = "Politeness and robots.txt";
constexpr std::string_view output = "Output";
constexpr std::string_view run = "Run";
constexpr std::string_view state = "Durable state";
constexpr std::string_view none = "";

} // namespace

const std::vector<config_key>& config_keys() {
    // clang-format off
    static const std::vector<config_key> keys{
        // path                                flag                        group     codec                                              help
        {"roots",                              none,                       crawl,    secret(strings(FIELD(crawl.roots)), mask_link_url), "start URLs (ROOT arguments replace them)"},
        {"max_tasks",                          "max-tasks",                crawl,    whole(FIELD(crawl.max_tasks), 1, 100'000),          "worker coroutines: the most requests in flight at once"},
        {"max_redirect",                       "max-redirect",             crawl,    whole(FIELD(crawl.max_redirect)),                  "redirects followed in one chain"},
        {"max_tries",                          "max-tries",                crawl,    whole(FIELD(crawl.max_tries), 1),                  "attempts per URL when the network fails or the server answers 429/503"},
        {"max_depth",                          "max-depth",                crawl,    whole(FIELD(crawl.max_depth)),                     "deepest link level crawled; roots are 0 (default: unlimited)"},
        {"max_pages",                          "max-pages",                crawl,    whole(FIELD(crawl.max_pages), 1),                  "most distinct URLs queued (default: unlimited)"},
        {"sitemaps",                           "sitemaps",                 crawl,    boolean(FIELD(crawl.sitemaps)),                    "also queue the URLs listed in sitemaps"},
        {"input_file",                         "input-file,i",             crawl,    named(text(FIELD(crawl.input_file)), "FILE"),     "read more start URLs from this file, one a line (-: stdin; # comments)"},
        {"quota",                              "quota,Q",                  crawl,    bytes(FIELD(crawl.quota)),                         "stop gracefully after fetching this many body bytes; 0: no limit (wget -Q)"},
        {"max_time",                           "max-time",                 crawl,    duration(FIELD(crawl.max_time)),                   "stop gracefully after running this long; 0: no limit"},
        {"parse_threads",                      "parse-threads",            crawl,    whole(FIELD(crawl.parse_threads), 0, 256),         "threads parsing HTML; 0 parses on the crawl thread"},
        {"scope",                              none,                       scope,    choice(FIELD(crawl.scope), scope_names),           "how a link's host is compared with the roots' hosts"},
        {"exclude",                            "exclude",                  scope,    patterns(FIELD(crawl.exclude)),                    "skip URLs in which this regular expression is found (repeatable)"},
        {"include",                            "include",                  scope,    patterns(FIELD(crawl.include)),                    "crawl only URLs in which one of these regular expressions is found (repeatable)"},
        {"no_parent",                          "no-parent",                scope,    boolean(FIELD(crawl.no_parent)),                   "stay below each root's directory on the roots' hosts (wget -np)"},
        {"domains",                            "domains",                  scope,    named(strings(FIELD(crawl.domains)), "DOMAIN,..."),                     "also crawl these domains and their subdomains (a.com,b.org; wget -H -D)"},
        {"exclude_domains",                    "exclude-domains",          scope,    named(strings(FIELD(crawl.exclude_domains)), "DOMAIN,..."),             "never crawl these domains or their subdomains"},
        {"accept",                             "accept,A",                 scope,    named(strings(FIELD(crawl.accept)), "SUFFIX|PATTERN,..."),                      "fetch only files whose name ends in one of these suffixes or matches a pattern (pdf,*.jpg; HTML pages are still fetched to traverse; wget -A)"},
        {"reject",                             "reject,R",                 scope,    named(strings(FIELD(crawl.reject)), "SUFFIX|PATTERN,..."),                      "do not fetch files whose name ends in one of these suffixes or matches a pattern (wget -R)"},
        {"accept_types",                       "accept-type",              scope,    named(strings(FIELD(crawl.accept_types)), "TYPE,..."),                 "read only answers of these media types (image/*,application/pdf); HTML is still read to traverse"},
        {"html.parser",                        "html-parser",              crawl,    choice(FIELD(crawl.html.parser), html_parser_names), "HTML parser for links: fast (streaming, the default) or gumbo (full tree)"},
        {"requisites.enabled",                 "page-requisites,p",        crawl,    boolean(FIELD(crawl.requisites.enabled)),          "also fetch what each page needs to display: images, scripts, stylesheets and what they import (wget -p)"},
        {"requisites.span_hosts",              "requisites-span-hosts",    crawl,    boolean(FIELD(crawl.requisites.span_hosts)),       "page requisites may come from any host, not only the page's (wget -p -H)"},
        {"fetch.connect_timeout",              "connect-timeout",          fetching, duration(FIELD(crawl.fetch.connect_timeout)),      "DNS, TCP connect and TLS handshake to one endpoint"},
        {"fetch.request_timeout",              "timeout,T",                fetching, duration(FIELD(crawl.fetch.request_timeout)),      "one request and its whole response"},
        {"fetch.max_body_bytes",               "max-body-size",            fetching, bytes(FIELD(crawl.fetch.max_body_bytes)),          "largest response body accepted"},
        {"fetch.max_header_bytes",             none,                       fetching, bytes(FIELD(crawl.fetch.max_header_bytes)),        "largest response head, and largest trailer section"},
        {"fetch.idle_timeout",                 none,                       fetching, duration(FIELD(crawl.fetch.idle_timeout)),         "idle keep-alive connections older than this are not reused"},
        {"fetch.limit_rate",                   "limit-rate",               fetching, bytes(FIELD(crawl.fetch.limit_rate)),              "most bytes per second read, the whole crawl together; 0: no limit"},
        {"fetch.user_agent",                   "user-agent,U",             fetching, text(FIELD(crawl.fetch.user_agent)),               "User-Agent header (default: asiocrawl/VERSION (+CONTACT-URL))"},
        {"fetch.contact_url",                  "contact-url",              fetching, named(text(FIELD(crawl.fetch.contact_url)), "URL"),              "your page about this crawl, put in the default User-Agent"},
        {"fetch.compression",                  "compression",                      fetching, boolean(FIELD(crawl.fetch.compression)),           "ask for gzip, deflate, br and zstd bodies"},
        {"fetch.refuse_private_addresses",     "refuse-private-addresses", fetching, boolean(FIELD(crawl.fetch.refuse_private_addresses)), "never connect to loopback, private, link-local or multicast addresses"},
        {"fetch.tls.insecure",                 "insecure",                 fetching, boolean(FIELD(crawl.fetch.tls.insecure)),          "skip TLS certificate and host name verification"},
        {"fetch.tls.ca_file",                  "ca-file",                  fetching, named(text(FIELD(crawl.fetch.tls.ca_file)), "FILE"),              "PEM file of extra trusted CA certificates"},
        {"fetch.tls.max_handshakes",           none,                       fetching, whole(FIELD(crawl.fetch.tls.max_handshakes)),      "most TLS handshakes in progress at once; 0: no limit"},
        {"fetch.host_overrides",               "host-override",            fetching, pairs(FIELD(crawl.fetch.host_overrides)),          "connect to this IP address for this host name (repeatable)"},
        {"fetch.dns.servers",                  "dns-server",               fetching, strings(FIELD(crawl.fetch.dns.servers)),           "name server IP[:PORT] to ask instead of /etc/resolv.conf's (repeatable)"},
        {"fetch.dns.min_ttl",                  none,                       fetching, duration(FIELD(crawl.fetch.dns.min_ttl)),          "shortest time a DNS answer is kept"},
        {"fetch.dns.max_ttl",                  none,                       fetching, duration(FIELD(crawl.fetch.dns.max_ttl)),          "longest time a DNS answer is kept"},
        {"fetch.dns.negative_ttl",             none,                       fetching, duration(FIELD(crawl.fetch.dns.negative_ttl)),     "how long a name that does not exist is remembered"},
        {"fetch.proxy",                        "proxy",                    fetching, secret(named(text(FIELD(crawl.fetch.proxy)), "URL"), mask_link_url), "proxy for http and https URLs: http://[USER:PASSWORD@]HOST[:PORT] (default: the http_proxy, https_proxy, all_proxy variables)"},
        {"fetch.http_proxy",                   none,                       fetching, secret(text(FIELD(crawl.fetch.http_proxy)), mask_link_url), "proxy for http URLs only"},
        {"fetch.https_proxy",                  none,                       fetching, secret(text(FIELD(crawl.fetch.https_proxy)), mask_link_url), "proxy for https URLs only"},
        {"fetch.no_proxy",                     "no-proxy-for",             fetching, strings(FIELD(crawl.fetch.no_proxy)),              "hosts, domains or IP blocks reached without the proxy (default: the no_proxy variable)"},
        {"fetch.cookies.enabled",              "cookies",                  fetching, boolean(FIELD(crawl.fetch.cookies.enabled)),       "keep the cookies servers set and send them back (--no-cookies: off)"},
        {"fetch.cookies.load_file",            "load-cookies",             fetching, named(text(FIELD(crawl.fetch.cookies.load_file)), "FILE"),        "read cookies from this cookies.txt file (Netscape format) before the crawl"},
        {"fetch.cookies.save_file",            "save-cookies",             fetching, named(text(FIELD(crawl.fetch.cookies.save_file)), "FILE"),        "write the cookies to this cookies.txt file when the crawl ends"},
        {"fetch.hsts.enabled",                 "hsts",                     fetching, boolean(FIELD(crawl.fetch.hsts.enabled)),          "remember Strict-Transport-Security and fetch http URLs of those hosts over https (--no-hsts: off)"},
        {"fetch.hsts.file",                    "hsts-file",                fetching, named(text(FIELD(crawl.fetch.hsts.file)), "FILE"),            "HSTS known hosts (wget2's format) read before the crawl and written when it ends"},
        {"fetch.http2",                        "http2",                    fetching, choice(FIELD(crawl.fetch.http2), http2_names),     "HTTP/2: auto (offered to https servers, used when chosen), off (HTTP/1.1 only), only (h2, and h2c by prior knowledge for http URLs)"},
        {"fetch.headers",                      "header",                   fetching, secret(lines(FIELD(crawl.fetch.headers)), mask_header_field), "add this request header field \"Name: value\" (repeatable)"},
        {"fetch.credentials",                  none,                       fetching, secret(pairs(FIELD(crawl.fetch.credentials)), mask_user_password), "Basic credentials per origin: https://HOST=USER:PASSWORD (sent to that origin only)"},
        {"retry.initial_backoff",              none,                       crawl,    duration(FIELD(crawl.retry.initial_backoff)),      "wait before the second attempt"},
        {"retry.multiplier",                   none,                       crawl,    real(FIELD(crawl.retry.multiplier)),               "growth factor of the wait"},
        {"retry.jitter",                       none,                       crawl,    real(FIELD(crawl.retry.jitter)),                   "random spread of a wait, 0 to 1"},
        {"retry.max_backoff",                  none,                       crawl,    duration(FIELD(crawl.retry.max_backoff)),          "cap on one wait"},
        {"retry.statuses",                     "retry-statuses",           crawl,    statuses(FIELD(crawl.retry.statuses)),             "HTTP statuses retried like network failures (the whole list)"},
        {"robots.obey",                        "obey-robots",                      polite,   boolean(FIELD(crawl.robots.obey)),                 "fetch and obey robots.txt"},
        {"robots.max_bytes",                   none,                       polite,   bytes(FIELD(crawl.robots.max_bytes)),              "largest robots.txt read"},
        {"robots.max_redirects",               none,                       polite,   whole(FIELD(crawl.robots.max_redirects)),          "redirects followed for robots.txt"},
        {"robots.unavailable_retry",           none,                       polite,   duration(FIELD(crawl.robots.unavailable_retry)),   "how long an origin with an unreachable robots.txt stays disallowed"},
        {"robots.max_crawl_delay",             none,                       polite,   duration(FIELD(crawl.robots.max_crawl_delay)),     "largest Crawl-delay honored"},
        {"robots.obey_rel_nofollow",           "obey-rel-nofollow",        polite,   boolean(FIELD(crawl.robots.obey_rel_nofollow)),    "also leave out links marked rel=nofollow (a page's meta robots nofollow is obeyed with robots.obey)"},
        {"politeness.max_per_host",            "max-per-host",             polite,   whole(FIELD(crawl.politeness.max_per_host), 1),    "most requests in flight to one host"},
        {"politeness.delay",                   "delay",                    polite,   duration(FIELD(crawl.politeness.delay)),           "least time between two request starts to one host"},
        {"politeness.random_wait",             "random-wait",              polite,   boolean(FIELD(crawl.politeness.random_wait)),      "draw each per-host wait from 0.5 to 1.5 times the delay"},
        {"politeness.autothrottle.enabled",    "autothrottle",             polite,   boolean(FIELD(crawl.politeness.autothrottle.enabled)), "adapt each host's delay to its response time (Scrapy AutoThrottle)"},
        {"politeness.autothrottle.start_delay", none,                      polite,   duration(FIELD(crawl.politeness.autothrottle.start_delay)), "a host's delay before its first answer is measured"},
        {"politeness.autothrottle.max_delay",  none,                       polite,   duration(FIELD(crawl.politeness.autothrottle.max_delay)), "the largest delay autothrottle sets"},
        {"politeness.autothrottle.target_concurrency", none,               polite,   real(FIELD(crawl.politeness.autothrottle.target_concurrency)), "requests in flight to one host that autothrottle aims at"},
        {"hosts",                              "host-rule",                polite,   host_rules_codec(FIELD(crawl.hosts)),              "per-host rule, first match wins: 'match=HOST|*.DOMAIN|URL-PREFIX; delay=2s; max_per_host=1; max_pages=N; obey_robots=false; header=Name: value' (repeatable)"},
        {"traps.max_url_length",               none,                       scope,    whole(FIELD(crawl.traps.max_url_length)),          "longest discovered URL; 0: no limit"},
        {"traps.max_path_segments",            none,                       scope,    whole(FIELD(crawl.traps.max_path_segments)),       "most path segments; 0: no limit"},
        {"traps.max_segment_repetitions",      none,                       scope,    whole(FIELD(crawl.traps.max_segment_repetitions)), "most repeats of one path segment; 0: no limit"},
        {"traps.max_query_params",             none,                       scope,    whole(FIELD(crawl.traps.max_query_params)),        "most query parameters; 0: no limit"},
        {"traps.max_links_per_page",           none,                       scope,    whole(FIELD(crawl.traps.max_links_per_page)),      "most links taken from one page; 0: no limit"},
        {"traps.skip_query_permutations",      "skip-query-permutations",  scope,    boolean(FIELD(crawl.traps.skip_query_permutations)), "skip a URL whose query is a reordering of an admitted one's"},
        {"state.dir",                          "state-dir",                state,    named(text(FIELD(crawl.state.dir)), "DIR"),                      "keep the crawl's state in this directory: resumable after any kill"},
        {"state.fsync",                        "state-fsync",              state,    boolean(FIELD(crawl.state.fsync)),                 "fsync every state commit (survives power loss too)"},
        {"state.window",                       none,                       state,    whole(FIELD(crawl.state.window)),                  "waiting URLs of one host held in memory; the rest wait on disk"},
        {"state.reset",                        "state-reset",              state,    boolean(FIELD(crawl.state.reset)),                 "delete the state dir's previous crawl and start over"},
        {"continuous",                         "continuous",               state,    boolean(FIELD(crawl.continuous)),                  "keep crawling: fetch each URL again when due (revisit.*), until stopped"},
        {"revisit.min",                        "revisit-min",              state,    duration(FIELD(crawl.revisit.min)),                "continuous: the shortest interval between two visits of a URL"},
        {"revisit.max",                        "revisit-max",              state,    duration(FIELD(crawl.revisit.max)),                "continuous: the longest interval (also a gone page's)"},
        {"revisit.initial",                    none,                       state,    duration(FIELD(crawl.revisit.initial)),            "continuous: the interval after a URL's first fetch"},
        {"revisit.grow",                       none,                       state,    real(FIELD(crawl.revisit.grow)),                   "continuous: interval factor when a visit finds the page unchanged, in (1, 2]"},
        {"revisit.shrink",                     none,                       state,    real(FIELD(crawl.revisit.shrink)),                 "continuous: interval factor when a visit finds the page changed, in [0.5, 1)"},
        {"state.recrawl",                      "recrawl",                  state,    boolean(FIELD(crawl.state.recrawl)),               "re-crawl the finished crawl in --state-dir: conditional requests, records say what changed"},
        {"state.recrawl_from",                 "recrawl-from",             state,    named(text(FIELD(crawl.state.recrawl_from)), "FILE"), "re-crawl without a state dir: validators from a previous run's records (JSON Lines) or CDXJ"},
        {"state.redis",                        "redis",                    state,    secret(named(text(FIELD(crawl.state.redis)), "URL"), mask_redis_url), "share the crawl with other instances through this Redis: redis://host:port/db, rediss:// for TLS"},
        {"state.crawl_id",                     "crawl-id",                 state,    named(text(FIELD(crawl.state.crawl_id)), "ID"),                 "the shared crawl's name in Redis (default: a hash of the crawl definition)"},
        {"state.instance",                     "instance",                 state,    named(text(FIELD(crawl.state.instance)), "NAME"),                 "this worker's name in a shared crawl; {instance} in output paths (default: JOB_COMPLETION_INDEX, else host and pid)"},
        {"state.lease",                        "lease",                    state,    duration(FIELD(crawl.state.lease)),                "how long a leased URL of a shared crawl belongs to its worker"},
        {"state.redis_timeout",                "redis-timeout",            state,    duration(FIELD(crawl.state.redis_timeout)),        "how long a shared crawl's worker waits for an unreachable Redis before it exits (status 1)"},
        {"state.redis_tls.ca_file",            "redis-ca-file",            state,    named(text(FIELD(crawl.state.redis_tls.ca_file)), "FILE"),        "PEM file of CA certificates trusted for a rediss:// Redis, beside the system store"},
        {"state.redis_tls.cert_file",          "redis-cert",               state,    named(text(FIELD(crawl.state.redis_tls.cert_file)), "FILE"),      "PEM client certificate presented to a rediss:// Redis (tls-auth-clients)"},
        {"state.redis_tls.key_file",           "redis-key",                state,    named(text(FIELD(crawl.state.redis_tls.key_file)), "FILE"),       "PEM private key of --redis-cert (default: read from the --redis-cert file)"},
        {"state.redis_tls.insecure",           "redis-insecure",           state,    boolean(FIELD(crawl.state.redis_tls.insecure)),    "skip verifying a rediss:// Redis's certificate and host name"},
        {"output.records",                     "output,o",                 output,   named(text(FIELD(output.records)), "FILE"), "write every record to this file as JSON Lines (-: stdout)"},
        {"output.report_json",                 "report-json",              output,   named(text(FIELD(output.report_json)), "FILE"),                   "write the summary to this file as JSON (-: stdout)"},
        {"output.report",                      "report",                       output,   boolean(FIELD(output.report)),                     "print the text report on stdout at the end"},
        {"output.warc.path",                   "warc",                     output,   named(text(FIELD(output.warc.path)), "FILE"),                     "write a WARC archive (.gz: compressed; {serial}: rotation)"},
        {"output.warc.max_file_bytes",         none,                       output,   bytes(FIELD(output.warc.max_file_bytes)),          "start a new WARC file at this size"},
        {"output.warc.revisits",               "warc-revisits",                      output,   boolean(FIELD(output.warc.revisits)),              "write revisit records for repeated payloads"},
        {"output.cdxj",                        "cdxj",                     output,   boolean(FIELD(output.cdxj)),                       "write a CDXJ index beside each WARC file (needs --warc)"},
        {"output.wacz",                        "wacz",                     output,   named(text(FIELD(output.wacz)), "FILE"),                          "package the WARC files, CDXJ and page list as this WACZ file (needs --warc)"},
        {"output.save_dir",                    "save-dir",                 output,   named(text(FIELD(output.save_dir)), "DIR"),                      "store response bodies under DIR/host/path"},
        {"output.metrics_listen",              "listen",                   output,   named(text(FIELD(output.metrics_listen)), "HOST:PORT"),                "serve Prometheus /metrics, /healthz and the control API /api/ on HOST:PORT (--metrics-listen: the same)"},
        {"output.listen_token",                "listen-token",             output,   secret(named(text(FIELD(output.listen_token)), "TOKEN"), mask_all), "the control API's bearer token (needed off loopback; also ASIOCRAWL_LISTEN_TOKEN)"},
        {"output.listen_token_file",           "listen-token-file",        output,   named(text(FIELD(output.listen_token_file)), "FILE"),              "read the control API's bearer token from this file's first line"},
        {"output.progress",                    "progress",                 output,   choice(FIELD(output.progress), progress_names),    "progress line on stderr: on a terminal, else a line every --progress-interval (-q: none)"},
        {"output.progress_interval",           "progress-interval",        output,   duration(FIELD(output.progress_interval)),         "how often the progress line is logged when stderr is not a terminal"},
        {"output.queue_limit",                 none,                       output,   bytes(FIELD(output.queue_limit_bytes)),            "most bytes an output writer thread may hold waiting before the crawl pauses"},
        {"output.overwrite",                   "overwrite",                output,   overwrite_switch(),                                "replace output files that exist (default: refuse them, exit 2)"},
        {"run.log_level",                      "log-level",                run,      choice(FIELD(run.log_level), log_level_names),     "least severe messages logged on stderr (-v/-q move it)"},
        {"run.fail_on_errors",                 "fail-on-errors",           run,      boolean(FIELD(run.fail_on_errors)),                "exit with status 1 when a URL failed: a network failure, 5xx or 4xx"},
        {"run.fail_on",                        "fail-on",                  run,      named(strings(FIELD(run.fail_on)), "CLASS,..."),                       "exit with status 1 when a URL failed in one of these classes: 4xx,5xx,network,robots"},
        {"run.grace_period",                   "grace-period",             run,      duration(FIELD(run.grace_period)),                 "after SIGINT/SIGTERM, time left to fetches in flight"},
        {"run.unicode_hosts_in_logs",          "unicode-hosts",            run,      boolean(FIELD(run.unicode_hosts_in_logs)),         "show internationalized host names in logs in Unicode, not punycode"},
    };
    // clang-format on
    return keys;
}

#undef FIELD

const std::vector<switch_flag>& switch_flags() {
    static const std::vector<switch_flag> switches{
        {"strict", "scope", "strict", scope,
         "a link's host must equal a root's host, ignoring www. (default)"},
        {"lenient", "scope", "lenient", scope,
         "a link's host may be any host of a root's registrable domain"},
        {"ignore-robots", "robots.obey", "false", polite, "do not fetch or obey robots.txt"},
    };
    return switches;
}

const std::vector<std::string_view>& flag_groups() {
    static const std::vector<std::string_view> groups{crawl, scope, fetching, polite, state, output, run};
    return groups;
}

const config_key* find_key(std::string_view path) {
    for (const auto& key : config_keys())
        if (key.path == path)
            return &key;
    return nullptr;
}

bool is_section(std::string_view path) {
    for (const auto& key : config_keys())
        if (key.path.size() > path.size() && key.path.starts_with(path) && key.path[path.size()] == '.')
            return true;
    return false;
}

std::string env_name(std::string_view path) {
    std::string name = "ASIOCRAWL_";
    for (char c : path)
        name += c == '.' ? '_' : static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
    return name;
}

raw_value printable_value(const config_key& key, const app_config& config, secrets show) {
    raw_value value = key.codec.get(config);
    if (show == secrets::masked && key.codec.mask)
        value = key.codec.mask(std::move(value));
    return value;
}

std::string mask_url_password(std::string_view url, std::string_view authority_end,
                              bool lone_userinfo_is_password) {
    const auto scheme_end = url.find("://");
    const std::size_t authority_at = scheme_end == std::string_view::npos ? 0 : scheme_end + 3;
    const auto end = std::min(url.find_first_of(authority_end, authority_at), url.size());
    const auto at = url.substr(0, end).rfind('@');
    if (at == std::string_view::npos || at < authority_at)
        return std::string(url);
    const std::string_view userinfo = url.substr(authority_at, at - authority_at);
    const auto colon = userinfo.find(':');
    std::string out(url.substr(0, authority_at));
    if (colon != std::string_view::npos)
        out.append(userinfo.substr(0, colon + 1)).append(masked_secret);
    else if (lone_userinfo_is_password)
        out.append(masked_secret);
    else
        return std::string(url); // a user name alone: nothing secret
    out.append(url.substr(at));
    return out;
}

std::string mask_header_field(std::string_view field) {
    const auto colon = field.find(':');
    if (colon == std::string_view::npos)
        return std::string(field);
    const std::string name = to_lower(trim(field.substr(0, colon)));
    const bool authorization = name == "authorization" || name == "proxy-authorization";
    const bool secret =
        authorization || name == "cookie" ||
        std::any_of(std::begin(secret_header_words), std::end(secret_header_words),
                    [&](std::string_view word) { return name.find(word) != std::string::npos; });
    if (!secret)
        return std::string(field);
    std::string out(field.substr(0, colon + 1));
    const std::string_view value = trim(field.substr(colon + 1));
    // "Bearer abc", "Basic dXNlcjpwdw==": the scheme says what kind of credentials were given.
    if (const auto space = value.find(' '); authorization && space != std::string_view::npos)
        out.append(" ").append(value.substr(0, space));
    return out.append(" ").append(masked_secret);
}

std::string opposite_flag(std::string_view flag) {
    if (flag.starts_with("no-"))
        return std::string(flag.substr(3));
    return "no-" + std::string(flag);
}

raw_value raw_from_text(value_shape shape, std::string_view text, std::string_view separators) {
    raw_value value;
    if (shape == value_shape::scalar) {
        value.scalar = std::string(text);
        return value;
    }
    std::size_t at = 0;
    while (at < text.size()) {
        const auto end = std::min(text.find_first_of(separators, at), text.size());
        const std::string_view item = text.substr(at, end - at);
        at = end + 1;
        if (item.empty())
            continue;
        if (shape == value_shape::list) {
            value.items.emplace_back(item);
        } else {
            const auto eq = item.find('=');
            value.entries.emplace_back(std::string(item.substr(0, eq)),
                                       eq == std::string_view::npos ? std::string{}
                                                                    : std::string(item.substr(eq + 1)));
        }
    }
    return value;
}

std::string raw_to_text(const raw_value& value) {
    if (value.null)
        return "null";
    std::string text = value.scalar;
    for (const auto& item : value.items)
        text += (text.empty() ? "" : ",") + item;
    for (const auto& [name, v] : value.entries)
        text += (text.empty() ? "" : ",") + name + "=" + v;
    return text;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j)
        row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t above = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = above;
        }
    }
    return row[b.size()];
}

namespace {

std::string_view last_segment(std::string_view path) {
    const auto dot = path.rfind('.');
    return dot == std::string_view::npos ? path : path.substr(dot + 1);
}

} // namespace

std::string closest_key(std::string_view unknown) {
    std::vector<std::string> candidates;
    for (const auto& key : config_keys()) {
        candidates.emplace_back(key.path);
        for (auto dot = key.path.find('.'); dot != std::string_view::npos; dot = key.path.find('.', dot + 1))
            candidates.emplace_back(key.path.substr(0, dot));
    }
    // A known key name under the wrong section ("connect_timeout" at the top) is the likeliest mistake.
    for (const auto& key : config_keys())
        if (last_segment(key.path) == last_segment(unknown))
            return std::string(key.path);
    std::string best;
    std::size_t best_distance = std::max<std::size_t>(2, unknown.size() / 4) + 1;
    for (const auto& candidate : candidates) {
        // Compare like with like: a dotted name with full paths, a bare name with the last segments too.
        std::size_t distance = edit_distance(unknown, candidate);
        if (unknown.find('.') == std::string_view::npos)
            distance = std::min(distance, edit_distance(unknown, last_segment(candidate)));
        if (distance < best_distance) {
            best_distance = distance;
            best = candidate;
        }
    }
    return best;
}

std::optional<std::chrono::milliseconds> parse_duration(std::string_view text) {
    auto parsed = number_and_unit(text);
    if (!parsed)
        return std::nullopt;
    const auto& [number, unit] = *parsed;
    double factor = 0;
    if (unit.empty() || unit == "s")
        factor = 1000;
    else if (unit == "ms")
        factor = 1;
    else if (unit == "m" || unit == "min")
        factor = 60'000;
    else if (unit == "h")
        factor = 3'600'000;
    else
        return std::nullopt;
    const double ms = std::round(number * factor);
    // Ten years: far beyond any sensible timeout, and far from overflowing the clocks' arithmetic.
    if (ms > 315'360'000'000.0)
        return std::nullopt;
    return std::chrono::milliseconds{static_cast<long long>(ms)};
}

std::string format_duration(std::chrono::milliseconds value) {
    const long long ms = value.count();
    if (ms != 0 && ms % 3'600'000 == 0)
        return std::to_string(ms / 3'600'000) + "h";
    if (ms != 0 && ms % 60'000 == 0)
        return std::to_string(ms / 60'000) + "m";
    if (ms % 1000 == 0)
        return std::to_string(ms / 1000) + "s";
    return std::to_string(ms) + "ms";
}

namespace {

struct size_unit {
    std::string_view name;
    std::uint64_t factor;
};

// Largest first: format_size picks the first unit that divides the value.
constexpr std::array<size_unit, 8> size_units{{
    {"tib", 1ull << 40},
    {"gib", 1ull << 30},
    {"mib", 1ull << 20},
    {"kib", 1ull << 10},
    {"tb", 1'000'000'000'000ull},
    {"gb", 1'000'000'000ull},
    {"mb", 1'000'000ull},
    {"kb", 1'000ull},
}};

} // namespace

std::optional<std::uint64_t> parse_size(std::string_view text) {
    auto parsed = number_and_unit(text);
    if (!parsed)
        return std::nullopt;
    const auto& [number, unit] = *parsed;
    if (unit.empty() || unit == "b") {
        if (number != std::floor(number) || number >= 18446744073709551615.0)
            return std::nullopt;
        return static_cast<std::uint64_t>(number);
    }
    // wget's and curl's one-letter suffixes: 200k, 1m, 2g are powers of 1024, as those tools read them.
    constexpr std::array<size_unit, 4> letters{
        {{"t", 1ull << 40}, {"g", 1ull << 30}, {"m", 1ull << 20}, {"k", 1ull << 10}}};
    for (const auto& u : size_units) {
        if (unit == u.name) {
            const double bytes = std::round(number * static_cast<double>(u.factor));
            if (bytes >= 18446744073709551615.0)
                return std::nullopt;
            return static_cast<std::uint64_t>(bytes);
        }
    }
    for (const auto& u : letters) {
        if (unit == u.name) {
            const double bytes = std::round(number * static_cast<double>(u.factor));
            if (bytes >= 18446744073709551615.0)
                return std::nullopt;
            return static_cast<std::uint64_t>(bytes);
        }
    }
    return std::nullopt;
}

std::string format_size(std::uint64_t value) {
    static constexpr std::array<std::string_view, 8> printed{"TiB", "GiB", "MiB", "KiB",
                                                             "TB",  "GB",  "MB",  "kB"};
    for (std::size_t i = 0; i < size_units.size(); ++i)
        if (value != 0 && value % size_units[i].factor == 0)
            return std::to_string(value / size_units[i].factor) + std::string(printed[i]);
    return std::to_string(value);
}

} // namespace asiocrawl::cli
