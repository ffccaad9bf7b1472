// The key registry: one entry per configuration key, from which the YAML loader, the ASIOCRAWL_* environment
// variables, the command-line flags, `--help` and `--print-config` are all derived. Adding a key is one line
// in config_keys.cpp (plus its documented line in config/asiocrawl.yaml, which a test checks).
#pragma once

#include "cli/app_config.hpp"

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace asiocrawl::cli {

/// The shape of a key's value in YAML: `max_tasks: 10`, `roots: [a, b]`, `host_overrides: {name: ip}`.
enum class value_shape { scalar, list, map };

/// A key's value as text, in the shape of the key. Loading and printing both go through it, so that what
/// `--print-config` writes is exactly what the loader reads back.
struct raw_value {
    /// A scalar key with no value (YAML null, `max_depth:`); printed as `null`.
    bool null = false;
    std::string scalar;
    std::vector<std::string> items;
    std::vector<std::pair<std::string, std::string>> entries;
};

/// How one key reads and prints its field.
struct key_codec {
    value_shape shape = value_shape::scalar;
    /// The accepted form, for error messages ("a duration such as 500ms, 10s or 2m").
    std::string expected;
    /// Placeholder in --help ("N", "TIME", "SIZE").
    std::string value_name;
    /// Printed in double quotes (free text, which YAML might otherwise read as a number, bool or null).
    bool quoted = false;
    /// Boolean: its flag is a switch (`--sitemaps`), with an opposite (`--no-sitemaps`; `--parent` for
    /// `--no-parent`).
    bool is_switch = false;
    /// Lists and maps: what separates items in an environment variable or a flag value. A list flag may
    /// also repeat, each occurrence adding its items. Patterns split on line breaks only, since a regular
    /// expression may hold commas and spaces.
    std::string_view separators = ", \t\n\r";
    /// Sets the field. False when the value does not have the expected form (the field is then unchanged).
    std::function<bool(app_config&, const raw_value&)> set;
    /// The field's value in canonical form: `set(c, get(c))` leaves c unchanged.
    std::function<raw_value(const app_config&)> get;
    /// A list whose items may be YAML maps (`hosts:`): the loader turns each into its one-line form
    /// (host_rule_text), which is also what --print-config writes, a flag takes and an environment variable
    /// holds (one per line).
    bool item_maps = false;
    /// Keys that may hold a secret (a password in a URL, credentials, a Cookie header): the value with each
    /// secret replaced by "***", for --print-config and error messages. Empty for keys that hold none.
    std::function<raw_value(raw_value)> mask;
};

struct config_key {
    /// Dotted path in the YAML tree: crawl options at the top, then `output.*` and `run.*`. Also the name
    /// validate() uses for the field, and the environment variable's name (see env_name).
    std::string_view path;
    /// Long command-line flag without "--" ("" for none); ",x" adds a short one ("output,o").
    std::string_view flag;
    /// --help section.
    std::string_view group;
    key_codec codec;
    /// One line for --help.
    std::string_view help;
};

/// A flag that sets a key to a fixed value (`--ignore-robots` is `robots.obey: false`).
struct switch_flag {
    std::string_view flag;
    std::string_view path;
    std::string_view value;
    std::string_view group;
    std::string_view help;
};

/// Every key, in the order --print-config and config/asiocrawl.yaml list them.
const std::vector<config_key>& config_keys();
const std::vector<switch_flag>& switch_flags();
/// --help sections, in order.
const std::vector<std::string_view>& flag_groups();

const config_key* find_key(std::string_view path);
/// True for a path that holds keys ("fetch", "fetch.tls", "output.warc").
bool is_section(std::string_view path);

/// "fetch.connect_timeout" -> "ASIOCRAWL_FETCH_CONNECT_TIMEOUT".
std::string env_name(std::string_view path);

/// Splits an environment variable or flag value into the key's shape: lists on `separators` (commas and
/// white space unless the key says otherwise), maps as NAME=VALUE pairs separated the same way.
raw_value raw_from_text(value_shape shape, std::string_view text, std::string_view separators = ", \t\n\r");

/// The --no-X opposite of a switch flag X ("sitemaps" -> "no-sitemaps", "no-parent" -> "parent").
std::string opposite_flag(std::string_view flag);
/// The value as one line of text (for --help defaults and error messages).
std::string raw_to_text(const raw_value& value);

/// What --print-config shows of the keys that hold secrets.
enum class secrets { masked, shown };
/// The key's value in `config`, its secrets replaced by "***" unless `shown`.
raw_value printable_value(const config_key& key, const app_config& config, secrets show = secrets::masked);

/// The shown form of a secret.
inline constexpr std::string_view masked_secret = "***";
/// `url` with the password of its userinfo replaced by ***, the user name kept: "http://u:pw@h/" gives
/// "http://u:***@h/", "u:pw@h" (a root without scheme) "u:***@h". The authority ends at the first of
/// `authority_end`. A userinfo without ':' is a user name, kept, unless `lone_userinfo_is_password` (Redis
/// reads redis://secret@host as a password, as redis-cli does).
std::string mask_url_password(std::string_view url, std::string_view authority_end = "/?#",
                              bool lone_userinfo_is_password = false);
/// A header field "Name: value" whose name carries credentials (Cookie, Authorization, Proxy-Authorization,
/// or a name with token, secret, password, api-key or auth in it) with its value masked; an Authorization
/// field keeps its scheme ("Authorization: Bearer ***"). Other fields are returned unchanged.
std::string mask_header_field(std::string_view field);

/// A per-host rule (crawler_config::hosts) in one line: "match=*.example.com; delay=2s; max_per_host=1;
/// max_pages=100; obey_robots=false; header=X-A: b", a ';' inside a value written "\;". Parsing names the
/// problem ("" when there is none).
std::string host_rule_text(const host_rule& rule);
/// A value as a --host-rule field holds it: ';' and '\\' escaped with a '\\'.
std::string escape_rule_value(std::string_view value);
std::optional<host_rule> parse_host_rule(std::string_view text, std::string& problem);
/// The fields a rule's YAML map may have, in their one-line names.
inline constexpr std::string_view host_rule_fields =
    "match, delay, max_per_host, max_pages, obey_robots, headers";

/// Levenshtein distance, for "did you mean" suggestions.
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The valid key or section nearest to `unknown` (edit distance, or the same last segment under another
/// section), or "" when nothing is close.
std::string closest_key(std::string_view unknown);

/// Parsers shared by the codecs, exposed for their tests. Durations: a number with a unit ms, s, m or h; a
/// plain number is seconds. Sizes: bytes, or a number with B, kB, MB, GB, TB (powers of 1000) or KiB, MiB,
/// GiB, TiB (powers of 1024), or wget's one-letter k, m, g, t (powers of 1024 too: wget's 200k is 200 KiB).
std::optional<std::chrono::milliseconds> parse_duration(std::string_view text);
std::string format_duration(std::chrono::milliseconds value);
std::optional<std::uint64_t> parse_size(std::string_view text);
std::string format_size(std::uint64_t value);

} // namespace asiocrawl::cli
