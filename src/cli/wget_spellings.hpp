// wget's spellings on asiocrawl's command line (docs/WGET.md): the options whose meaning is the same become
// asiocrawl's own before the command line is parsed (`-l 3` is `--max-depth 3`, `-e robots=off` is
// `--ignore-robots`), and a wget option asiocrawl does not have is refused with what to use instead.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace asiocrawl::cli {

/// One wget spelling asiocrawl understands, for --help and the docs.
struct wget_alias_doc {
    /// "-l N, --level N".
    std::string spellings;
    /// "--max-depth N (inf or 0: unlimited)".
    std::string_view means;
};

/// Every alias, in the order --help lists them.
std::vector<wget_alias_doc> wget_aliases();

/// Rewrites wget's spellings in `args` (up to a "--") into asiocrawl's. `takes_value(name)` says whether an
/// asiocrawl option ("max-tasks", or "o" for -o) takes a value, so that a value is never read as an option.
/// Returns "" or the usage error ("-e use_proxy=off: ..." , "--tries inf: ...", a wget option asiocrawl does
/// not have and what to use instead).
std::string rewrite_wget_spellings(std::vector<std::string>& args,
                                   const std::function<bool(std::string_view)>& takes_value);

/// What to use instead of the wget option `option` ("--mirror", "-H", "--span-hosts=x"), or "" when it is no
/// wget option asiocrawl knows of.
std::string wget_hint(std::string_view option);

} // namespace asiocrawl::cli
