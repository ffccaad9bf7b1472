// YAML configuration loading on arbitrary text: every problem comes back as a located error, never a crash or
// an escaping exception.
#include "cli/config_file.hpp"

#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view yaml(reinterpret_cast<const char*>(data), size);
    asiocrawl::cli::app_config config;
    asiocrawl::cli::config_origins origins;
    const auto errors = asiocrawl::cli::load_config_text(yaml, "fuzz.yaml", config, &origins);
    for (const auto& error : errors)
        (void)asiocrawl::cli::to_string(error);
    (void)asiocrawl::cli::check_config(config, origins);
    return 0;
}
