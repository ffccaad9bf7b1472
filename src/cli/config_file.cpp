#include "cli/config_file.hpp"

#include "cli/config_keys.hpp"

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace asiocrawl::cli {

std::string to_string(const config_error& error) {
    std::string text = error.source;
    if (error.line > 0)
        text += ":" + std::to_string(error.line) + ":" + std::to_string(error.column);
    text += error.warning ? ": warning: " : ": ";
    text += error.message;
    return text;
}

namespace {

std::string quote(std::string_view text) {
    std::string quoted = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\')
            quoted += '\\';
        if (static_cast<unsigned char>(c) < 0x20)
            quoted += "\\x" + std::string(1, "0123456789abcdef"[(c >> 4) & 0xf]) +
                      std::string(1, "0123456789abcdef"[c & 0xf]);
        else
            quoted += c;
    }
    return quoted + "\"";
}

/// What a YAML node holds, for "got ..." in messages.
std::string describe(const YAML::Node& node) {
    switch (node.Type()) {
    case YAML::NodeType::Scalar:
        return quote(node.Scalar());
    case YAML::NodeType::Sequence:
        return "a list";
    case YAML::NodeType::Map:
        return "a map";
    default:
        return "nothing";
    }
}

std::string type_error(const config_key& key, std::string_view seen) {
    return std::string(key.path) + ": expected " + key.codec.expected + ", got " + std::string(seen);
}

void note_origin(config_origins* origins, std::string_view key, config_origin origin) {
    if (!origins)
        return;
    // The items' own places ("exclude[1]") belong to the value replaced.
    const std::string items = std::string(key) + "[";
    for (auto it = origins->lower_bound(items); it != origins->end() && it->first.starts_with(items);)
        it = origins->erase(it);
    (*origins)[std::string(key)] = std::move(origin);
}

class yaml_loader {
public:
    yaml_loader(std::string_view source, app_config& config, config_origins* origins)
        : source_(source)
        , config_(config)
        , origins_(origins) {}

    std::vector<config_error> load(std::string_view text) {
        YAML::Node root;
        try {
            root = YAML::Load(std::string(text));
        } catch (const YAML::Exception& e) {
            fail(e.mark, "", "invalid YAML: " + e.msg);
            return std::move(errors_);
        }
        if (root.IsMap())
            walk(root, "");
        else if (!root.IsNull())
            fail(root.Mark(), "", "expected a map of keys (key: value) at the top, got " + describe(root));
        return std::move(errors_);
    }

private:
    void fail(const YAML::Mark& mark, std::string key, std::string message) {
        config_error error;
        error.source = source_;
        // yaml-cpp counts from 0, editors from 1. A null mark (-1) becomes position 0: "no position".
        error.line = mark.line + 1;
        error.column = mark.column + 1;
        error.key = std::move(key);
        error.message = std::move(message);
        errors_.push_back(std::move(error));
    }

    void walk(const YAML::Node& map, const std::string& prefix) {
        for (const auto& entry : map) {
            const YAML::Node& name = entry.first;
            const YAML::Node& value = entry.second;
            if (!name.IsScalar()) {
                fail(name.Mark(), "", "a key must be a plain name, got " + describe(name));
                continue;
            }
            const std::string path = prefix.empty() ? name.Scalar() : prefix + "." + name.Scalar();
            if (auto [at, first] = seen_.emplace(path, name.Mark().line + 1); !first) {
                fail(name.Mark(), path,
                     path + " is given twice (first on line " + std::to_string(at->second) + ")");
                continue;
            }
            if (const config_key* key = find_key(path)) {
                apply(*key, name.Mark(), value);
            } else if (is_section(path)) {
                if (value.IsMap())
                    walk(value, path);
                else if (!value.IsNull())
                    fail(value.Mark(), path, path + ": expected a map of keys, got " + describe(value));
            } else {
                std::string message = "unknown key \"" + path + "\"";
                if (auto near = closest_key(path); !near.empty())
                    message += " (did you mean \"" + near + "\"?)";
                fail(name.Mark(), path, std::move(message));
            }
        }
    }

    void apply(const config_key& key, const YAML::Mark& key_mark, const YAML::Node& node) {
        // A missing value ("key:") has no position of its own: point at the key.
        const YAML::Mark& mark = node.Mark().line >= 0 ? node.Mark() : key_mark;
        raw_value value;
        std::vector<YAML::Mark> item_marks;
        const value_shape shape = key.codec.shape;
        if (node.IsNull()) {
            value.null = shape == value_shape::scalar;
        } else if (node.IsScalar() && shape != value_shape::map) {
            (shape == value_shape::scalar ? value.scalar : value.items.emplace_back()) = node.Scalar();
        } else if (node.IsSequence() && shape == value_shape::list) {
            for (const auto& item : node) {
                if (item.IsMap() && key.codec.item_maps) {
                    std::string line;
                    if (!item_map_text(key, value.items.size(), item, line))
                        return;
                    value.items.push_back(std::move(line));
                    item_marks.push_back(item.Mark());
                    continue;
                }
                if (!item.IsScalar()) {
                    fail(item.Mark(), std::string(key.path), type_error(key, describe(item) + " as an item"));
                    return;
                }
                value.items.push_back(item.Scalar());
                item_marks.push_back(item.Mark());
            }
        } else if (node.IsMap() && shape == value_shape::map) {
            for (const auto& entry : node) {
                if (!entry.first.IsScalar() || !entry.second.IsScalar()) {
                    fail(entry.first.Mark(), std::string(key.path),
                         type_error(key, "an entry that is not name: value"));
                    return;
                }
                value.entries.emplace_back(entry.first.Scalar(), entry.second.Scalar());
            }
        } else {
            fail(mark, std::string(key.path), type_error(key, describe(node)));
            return;
        }
        if (key.codec.item_maps) {
            // Each rule on its own: the problem named at the rule that has it.
            for (std::size_t i = 0; i < value.items.size(); ++i) {
                std::string problem;
                if (!parse_host_rule(value.items[i], problem)) {
                    fail(i < item_marks.size() ? item_marks[i] : mark, std::string(key.path),
                         std::string(key.path) + "[" + std::to_string(i) + "]: " + problem);
                    return;
                }
            }
        }
        if (!key.codec.set(config_, value)) {
            fail(mark, std::string(key.path), type_error(key, describe(node)));
            return;
        }
        note_origin(origins_, key.path, {std::string(source_), key_mark.line + 1, key_mark.column + 1});
        // A problem with one item ("exclude[1] must be a regular expression") is placed at the item.
        if (origins_)
            for (std::size_t i = 0; i < item_marks.size(); ++i)
                (*origins_)[std::string(key.path) + "[" + std::to_string(i) + "]"] = {
                    std::string(source_), item_marks[i].line + 1, item_marks[i].column + 1};
    }

    /// One rule's YAML map as its one-line form; false (and the problem, placed at its field) when a field is
    /// unknown or not a scalar (headers: a list of them).
    bool item_map_text(const config_key& key, std::size_t index, const YAML::Node& item, std::string& line) {
        const std::string where = std::string(key.path) + "[" + std::to_string(index) + "]";
        for (const auto& entry : item) {
            if (!entry.first.IsScalar()) {
                fail(entry.first.Mark(), std::string(key.path), where + ": a field must be a plain name");
                return false;
            }
            const std::string name = entry.first.Scalar();
            const std::string fields(host_rule_fields);
            if (name != "match" && name != "delay" && name != "max_per_host" && name != "max_pages" &&
                name != "obey_robots" && name != "headers") {
                fail(entry.first.Mark(), std::string(key.path),
                     where + ": unknown field \"" + name + "\" (" + fields + ")");
                return false;
            }
            std::vector<std::string> values;
            if (name == "headers" && entry.second.IsSequence()) {
                for (const auto& h : entry.second) {
                    if (!h.IsScalar()) {
                        fail(h.Mark(), std::string(key.path), where + ".headers: each is \"Name: value\"");
                        return false;
                    }
                    values.push_back(h.Scalar());
                }
            } else if (entry.second.IsScalar()) {
                values.push_back(entry.second.Scalar());
            } else {
                fail(entry.second.Mark(), std::string(key.path),
                     where + "." + name + ": expected a value, got " + describe(entry.second));
                return false;
            }
            for (const auto& v : values) {
                std::string problem;
                const std::string field = (name == "headers" ? "header" : name) + "=" + escape_rule_value(v);
                // A field alone parses as a rule once it has a match: the problem is then this field's.
                if (name != "match" && !parse_host_rule("match=x; " + field, problem)) {
                    fail(entry.second.Mark(), std::string(key.path), where + "." + problem);
                    return false;
                }
                line += (line.empty() ? "" : "; ") + field;
            }
        }
        return true;
    }

    std::string_view source_;
    app_config& config_;
    config_origins* origins_;
    std::vector<config_error> errors_;
    std::map<std::string, int> seen_;
};

/// For a key of rules (hosts): the first rule that does not parse, "hosts[1]: ..." ("" when all do).
std::string rule_problem(const config_key& key, const raw_value& value) {
    if (!key.codec.item_maps)
        return {};
    for (std::size_t i = 0; i < value.items.size(); ++i) {
        std::string problem;
        if (!parse_host_rule(value.items[i], problem))
            return std::string(key.path) + "[" + std::to_string(i) + "]: " + problem;
    }
    return {};
}

config_error file_error(const std::string& path, std::string message) {
    config_error error;
    error.source = path;
    error.message = std::move(message);
    return error;
}

} // namespace

std::vector<config_error> load_config_text(std::string_view yaml, std::string_view source_name,
                                           app_config& config, config_origins* origins) {
    return yaml_loader{source_name, config, origins}.load(yaml);
}

std::vector<config_error> load_config_file(const std::string& path, app_config& config,
                                           config_origins* origins) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return {file_error(path, "config file not found")};
        return {file_error(path, std::string("cannot read config file: ") + std::strerror(errno))};
    }
    std::string text;
    struct stat info {};
    int read_errno = 0;
    if (::fstat(fd, &info) == 0 && S_ISDIR(info.st_mode)) {
        read_errno = EISDIR;
    } else {
        char buffer[16384];
        for (;;) {
            const ssize_t n = ::read(fd, buffer, sizeof buffer);
            if (n > 0) {
                text.append(buffer, static_cast<std::size_t>(n));
            } else if (n == 0) {
                break;
            } else if (errno != EINTR) {
                read_errno = errno;
                break;
            }
        }
    }
    ::close(fd);
    if (read_errno != 0)
        return {file_error(path, std::string("cannot read config file: ") + std::strerror(read_errno))};
    return load_config_text(text, path, config, origins);
}

std::vector<config_error> apply_text(std::string_view key_path, std::string_view text,
                                     std::string_view source, app_config& config, config_origins* origins) {
    config_error error;
    error.source = source;
    error.key = key_path;
    const config_key* key = find_key(key_path);
    if (!key) {
        error.message = "unknown key \"" + std::string(key_path) + "\"";
        return {error};
    }
    const raw_value value = raw_from_text(key->codec.shape, text, key->codec.separators);
    if (auto problem = rule_problem(*key, value); !problem.empty()) {
        error.message = std::move(problem);
        return {error};
    }
    if (!key->codec.set(config, value)) {
        error.message = type_error(*key, quote(text));
        return {error};
    }
    note_origin(origins, key_path, {std::string(source), 0, 0});
    return {};
}

std::vector<config_error> apply_items(std::string_view key_path, const std::vector<std::string>& texts,
                                      std::string_view source, app_config& config, config_origins* origins) {
    const config_key* key = find_key(key_path);
    if (!key || key->codec.shape != value_shape::list) {
        config_error error;
        error.source = source;
        error.key = key_path;
        error.message = "\"" + std::string(key_path) + "\" is not a list key";
        return {error};
    }
    raw_value value;
    for (const auto& text : texts) {
        auto items = raw_from_text(value_shape::list, text, key->codec.separators).items;
        value.items.insert(value.items.end(), items.begin(), items.end());
    }
    if (auto problem = rule_problem(*key, value); !problem.empty()) {
        config_error error;
        error.source = source;
        error.key = key_path;
        error.message = std::move(problem);
        return {error};
    }
    if (!key->codec.set(config, value)) {
        config_error error;
        error.source = source;
        error.key = key_path;
        error.message = type_error(*key, "an unusable list");
        return {error};
    }
    note_origin(origins, key_path, {std::string(source), 0, 0});
    return {};
}

std::vector<config_error> apply_environment(const std::vector<std::string>& environment, app_config& config,
                                            config_origins* origins) {
    constexpr std::string_view prefix = "ASIOCRAWL_";
    std::map<std::string, const config_key*> by_name;
    for (const auto& key : config_keys())
        by_name.emplace(env_name(key.path), &key);

    std::vector<config_error> errors;
    // Table order, not environment order: the result must not depend on how the shell sorted variables.
    std::map<const config_key*, std::pair<std::string, std::string>> found;
    for (const std::string& variable : environment) {
        const auto eq = variable.find('=');
        const std::string name = variable.substr(0, eq);
        if (!name.starts_with(prefix) || eq == std::string::npos)
            continue;
        const std::string value = variable.substr(eq + 1);
        if (auto it = by_name.find(name); it != by_name.end()) {
            found[it->second] = {name, value};
            continue;
        }
        // ASIOCRAWL_MAX_TAKS is a typo worth a word; ASIOCRAWL_JOBS belongs to the build script.
        std::string near;
        std::size_t near_distance = 3;
        for (const auto& [known, _] : by_name) {
            if (const std::size_t distance = edit_distance(name, known); distance < near_distance) {
                near_distance = distance;
                near = known;
            }
        }
        if (!near.empty()) {
            config_error warning;
            warning.source = "environment variable " + name;
            warning.warning = true;
            warning.message = "unknown variable, ignored (did you mean " + near + "?)";
            errors.push_back(std::move(warning));
        }
    }
    for (const auto& key : config_keys()) {
        auto it = found.find(&key);
        if (it == found.end())
            continue;
        auto more = apply_text(key.path, it->second.second, "environment variable " + it->second.first,
                               config, origins);
        errors.insert(errors.end(), more.begin(), more.end());
    }
    return errors;
}

std::vector<config_error> check_config(const app_config& config, const config_origins& origins) {
    std::vector<config_error> errors;
    for (config_problem& found : validate(config)) {
        config_error error;
        error.key = std::move(found.key);
        std::string& problem = found.message;
        // "exclude[1] must be ...": the item's own place when the file gave it one.
        auto it = origins.end();
        if (problem.starts_with(error.key + "[")) {
            const auto close = problem.find(']');
            if (close != std::string::npos)
                it = origins.find(problem.substr(0, close + 1));
        }
        if (it == origins.end())
            it = origins.find(error.key);
        if (it != origins.end()) {
            error.source = it->second.source;
            error.line = it->second.line;
            error.column = it->second.column;
        } else {
            error.source = "config";
        }
        if (const config_key* key = find_key(error.key); key && problem.find(", got ") == std::string::npos)
            problem += ", got " + quote(raw_to_text(printable_value(*key, config))); // no password
        error.message = std::move(problem);
        errors.push_back(std::move(error));
    }
    return errors;
}

namespace {

/// Keys grouped under their sections, in table order.
struct key_tree {
    std::string name;
    const config_key* key = nullptr;
    std::vector<key_tree> children;

    key_tree& child(std::string_view child_name) {
        for (auto& c : children)
            if (c.name == child_name)
                return c;
        return children.emplace_back(key_tree{std::string(child_name), nullptr, {}});
    }
};

void emit_value(YAML::Emitter& out, const key_codec& codec, const raw_value& value) {
    switch (codec.shape) {
    case value_shape::scalar:
        if (value.null)
            out << YAML::Null;
        else if (codec.quoted)
            out << YAML::DoubleQuoted << value.scalar;
        else
            out << value.scalar;
        break;
    case value_shape::list:
        if (value.items.empty())
            out << YAML::Flow;
        out << YAML::BeginSeq;
        for (const auto& item : value.items)
            out << YAML::DoubleQuoted << item;
        out << YAML::EndSeq;
        break;
    case value_shape::map:
        if (value.entries.empty())
            out << YAML::Flow;
        out << YAML::BeginMap;
        for (const auto& [name, v] : value.entries)
            out << YAML::Key << YAML::DoubleQuoted << name << YAML::Value << YAML::DoubleQuoted << v;
        out << YAML::EndMap;
        break;
    }
}

void emit_tree(YAML::Emitter& out, const key_tree& tree, const app_config& config, secrets show) {
    out << YAML::BeginMap;
    for (const auto& node : tree.children) {
        out << YAML::Key << node.name << YAML::Value;
        if (node.key)
            emit_value(out, node.key->codec, printable_value(*node.key, config, show));
        else
            emit_tree(out, node, config, show);
    }
    out << YAML::EndMap;
}

} // namespace

std::string to_yaml(const app_config& config, secrets show) {
    key_tree root;
    for (const auto& key : config_keys()) {
        key_tree* node = &root;
        std::string_view rest = key.path;
        for (auto dot = rest.find('.'); dot != std::string_view::npos; dot = rest.find('.')) {
            node = &node->child(rest.substr(0, dot));
            rest.remove_prefix(dot + 1);
        }
        node->child(rest).key = &key;
    }
    YAML::Emitter out;
    out.SetNullFormat(YAML::LowerNull);
    emit_tree(out, root, config, show);
    std::string text = "# asiocrawl configuration (every key: config/asiocrawl.yaml)\n";
    if (show == secrets::masked)
        text +=
            "# Secrets (passwords in URLs, fetch.credentials, Cookie and other credential headers) are shown "
            "as ***;\n# --print-config --show-secrets prints them.\n";
    else
        text += "# Secrets are shown in clear (--show-secrets): keep this text private.\n";
    return text + out.c_str() + "\n";
}

} // namespace asiocrawl::cli
