// Loading an app_config from its layers — YAML file, ASIOCRAWL_* environment, command-line values — with
// errors a user can act on, and printing it back as YAML. Sans-io except load_config_file; never prints.
#pragma once

#include "cli/app_config.hpp"
#include "cli/config_keys.hpp"

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace asiocrawl::cli {

/// One problem, located where the user can fix it.
struct config_error {
    /// "crawl.yaml", "environment variable ASIOCRAWL_MAX_TASKS", "option --max-tasks", or "config" when
    /// the value is a default.
    std::string source;
    /// 1-based position in a file; 0 when the source is not a file.
    int line = 0;
    int column = 0;
    /// The key concerned ("fetch.connect_timeout"); empty for problems of the file as a whole.
    std::string key;
    /// Names the key itself: `fetch.connect_timeout: expected a duration ..., got "fast"`.
    std::string message;
    /// Not fatal (an unknown ASIOCRAWL_* variable that looks like a typo).
    bool warning = false;
};

/// "crawl.yaml:3:5: unknown key ..." or "environment variable X: ...".
std::string to_string(const config_error& error);

/// Where each key got its current value: the last layer that set it.
struct config_origin {
    std::string source;
    int line = 0;
    int column = 0;
};
using config_origins = std::map<std::string, config_origin, std::less<>>;

/// Applies a YAML document to `config`. Keys absent from the document keep their value. Every problem found
/// is returned (unknown key with the nearest valid one, wrong type with the expected form and the value
/// seen, invalid YAML); keys without problems are still applied. Ranges and cross-field rules are checked
/// later, on the merged result, by check_config.
std::vector<config_error> load_config_text(std::string_view yaml, std::string_view source_name,
                                           app_config& config, config_origins* origins = nullptr);

/// Reads and applies a YAML file. A missing file, an unreadable one and invalid YAML give different
/// messages ("config file not found", "cannot read config file", "invalid YAML").
std::vector<config_error> load_config_file(const std::string& path, app_config& config,
                                           config_origins* origins = nullptr);

/// Applies the ASIOCRAWL_<KEY> variables among `environment` (NAME=VALUE strings, as in environ). Lists and
/// maps are separated by commas or spaces; maps as NAME=VALUE. An unknown ASIOCRAWL_ variable close to a
/// valid name is a warning; other unknown ones are ignored (scripts use ASIOCRAWL_JOBS and the like).
std::vector<config_error> apply_environment(const std::vector<std::string>& environment, app_config& config,
                                            config_origins* origins = nullptr);

/// Sets one key from text (a command-line flag), shaped as for the environment. `source` names the flag.
std::vector<config_error> apply_text(std::string_view key, std::string_view text, std::string_view source,
                                     app_config& config, config_origins* origins = nullptr);

/// Sets a list key from the values of a repeated flag: each value is split on the key's separators and the
/// items of all of them make the list, in order.
std::vector<config_error> apply_items(std::string_view key, const std::vector<std::string>& texts,
                                      std::string_view source, app_config& config,
                                      config_origins* origins = nullptr);

/// validate(config), each problem located at the layer that set the key concerned.
std::vector<config_error> check_config(const app_config& config, const config_origins& origins);

/// The whole config as YAML that load_config_text reads back to the same config when `show` is
/// secrets::shown. Masked (the default), every secret reads "***" (config_key::codec.mask), and a comment at
/// the top says so and how to see them.
std::string to_yaml(const app_config& config, secrets show = secrets::masked);

} // namespace asiocrawl::cli
