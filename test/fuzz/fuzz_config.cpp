// YAML configuration loading on arbitrary text: either a config or an error, never a crash.
#include ASIOCRAWL_FUZZ_CONFIG_HEADER

#include <cstdint>
#include <exception>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        (void)asiocrawl::load_config_text(text);
    } catch (const std::exception&) {
        // Rejecting a bad file with an exception is the documented way; anything else would escape here.
    }
    return 0;
}
