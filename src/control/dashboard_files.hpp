// The dashboard's static files (dashboard/ in the source tree), compiled into the binary by CMake
// (cmake/embed_files.cmake writes the table at build time: no file is read at run time).
#pragma once

#include <cstddef>
#include <string_view>

namespace asiocrawl::outputs::detail {

struct embedded_file {
    std::string_view name;         ///< its name in dashboard/ ("index.html")
    std::string_view content_type; ///< from its extension
    std::string_view etag;         ///< a quoted prefix of its SHA-256
    std::string_view bytes;
};

/// Every file of dashboard/, sorted by name.
extern const embedded_file dashboard_files[];
extern const std::size_t dashboard_file_count;

} // namespace asiocrawl::outputs::detail
