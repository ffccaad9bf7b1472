# Install rules and the CMake package: `cmake --install` puts the headers, the static libraries, the CLI and
# asiocrawlConfig.cmake in place, so another project can `find_package(asiocrawl)` and link
# asiocrawl::asiocrawl (the crawler), asiocrawl::core (the sans-io part) and asiocrawl::outputs (records,
# WARC, saved pages, metrics, progress). Included at the end of the top-level CMakeLists.txt, once every
# target is complete.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(ASIOCRAWL_BOOST_MINIMUM 1.81)
set(ASIOCRAWL_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/asiocrawl
    CACHE STRING "Where asiocrawlConfig.cmake is installed, relative to the prefix")

# Static libraries carry their private dependencies in their link interface, so every internal target they
# link must be exported too (asiocrawl_warnings only adds compile options, and only inside this build).
set(asiocrawl_exported_targets asiocrawl asiocrawl_core asiocrawl_outputs asiocrawl_warnings)
set_target_properties(asiocrawl_core PROPERTIES EXPORT_NAME core)
set_target_properties(asiocrawl_outputs PROPERTIES EXPORT_NAME outputs)
set_target_properties(asiocrawl_warnings PROPERTIES EXPORT_NAME warnings)

install(TARGETS ${asiocrawl_exported_targets}
  EXPORT asiocrawlTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/asiocrawl DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT asiocrawlTargets NAMESPACE asiocrawl:: DESTINATION ${ASIOCRAWL_INSTALL_CMAKEDIR})

if(TARGET asiocrawl_cli)
  install(TARGETS asiocrawl_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

# The package config must find exactly the imported targets the exported link interfaces name: one missing
# and the consumer's configure fails ("target was not found"), one extra and it needs a -dev package it does
# not use. So the find_dependency calls are derived from the link interfaces themselves, and a dependency
# another change adds to the libraries (TLS, YAML, expat, zlib) is picked up without editing this file.
set(asiocrawl_link_interface "")
foreach(target IN LISTS asiocrawl_exported_targets)
  get_target_property(libs ${target} INTERFACE_LINK_LIBRARIES)
  if(libs)
    list(APPEND asiocrawl_link_interface ${libs})
  endif()
endforeach()
string(JOIN ";" asiocrawl_link_interface ${asiocrawl_link_interface})
# Build-tree-only entries never reach the installed package; LINK_ONLY/INSTALL_INTERFACE wrappers do.
string(REGEX REPLACE "\\$<BUILD_INTERFACE:[^>]*>" "" asiocrawl_link_interface "${asiocrawl_link_interface}")
string(REGEX MATCHALL "[A-Za-z0-9_.+-]+::[A-Za-z0-9_.+-]+|yaml-cpp" asiocrawl_imported
       "${asiocrawl_link_interface}")
list(REMOVE_DUPLICATES asiocrawl_imported)

set(asiocrawl_boost_components "")
set(asiocrawl_pkg_modules "")
set(ASIOCRAWL_FIND_DEPENDENCIES "")
foreach(dep IN LISTS asiocrawl_imported)
  if(dep MATCHES "^asiocrawl::" OR dep STREQUAL "Boost::headers" OR dep STREQUAL "Boost::boost")
    continue()
  elseif(dep MATCHES "^Boost::(.+)$")
    list(APPEND asiocrawl_boost_components ${CMAKE_MATCH_1})
  elseif(dep MATCHES "^PkgConfig::(.+)$")
    set(prefix ${CMAKE_MATCH_1})
    if(NOT ${prefix}_MODULE_NAME)
      message(FATAL_ERROR "asiocrawl packaging: PkgConfig::${prefix} has no ${prefix}_MODULE_NAME; "
                          "create it with pkg_check_modules(${prefix} REQUIRED IMPORTED_TARGET <one module>)")
    endif()
    string(APPEND asiocrawl_pkg_modules
           "pkg_check_modules(${prefix} REQUIRED QUIET IMPORTED_TARGET ${${prefix}_MODULE_NAME})\n")
  elseif(dep MATCHES "^OpenSSL::")
    string(APPEND ASIOCRAWL_FIND_DEPENDENCIES "find_dependency(OpenSSL)\n")
  elseif(dep STREQUAL "Threads::Threads")
    string(APPEND ASIOCRAWL_FIND_DEPENDENCIES "find_dependency(Threads)\n")
  elseif(dep MATCHES "^EXPAT::")
    string(APPEND ASIOCRAWL_FIND_DEPENDENCIES "find_dependency(EXPAT)\n")
  elseif(dep MATCHES "^ZLIB::")
    string(APPEND ASIOCRAWL_FIND_DEPENDENCIES "find_dependency(ZLIB)\n")
  elseif(dep STREQUAL "yaml-cpp" OR dep MATCHES "^yaml-cpp::")
    string(APPEND ASIOCRAWL_FIND_DEPENDENCIES "find_dependency(yaml-cpp CONFIG)\n")
  else()
    message(FATAL_ERROR "asiocrawl packaging: the installed libraries link ${dep}, which "
                        "cmake/asiocrawlInstall.cmake does not know how to find: add it there")
  endif()
endforeach()
# OpenSSL::SSL and OpenSSL::Crypto come from one find_dependency(OpenSSL): keep each call once.
string(REGEX MATCHALL "[^\n]+\n" asiocrawl_find_calls "${ASIOCRAWL_FIND_DEPENDENCIES}")
list(REMOVE_DUPLICATES asiocrawl_find_calls)
string(JOIN "" ASIOCRAWL_FIND_DEPENDENCIES ${asiocrawl_find_calls})
list(REMOVE_DUPLICATES asiocrawl_boost_components)
list(SORT asiocrawl_boost_components)
string(JOIN " " asiocrawl_boost_components ${asiocrawl_boost_components})
string(PREPEND ASIOCRAWL_FIND_DEPENDENCIES
       "find_dependency(Boost ${ASIOCRAWL_BOOST_MINIMUM} CONFIG COMPONENTS ${asiocrawl_boost_components})\n")
string(REPLACE ";" "" ASIOCRAWL_FIND_DEPENDENCIES "${ASIOCRAWL_FIND_DEPENDENCIES}")
if(asiocrawl_pkg_modules)
  string(APPEND ASIOCRAWL_FIND_DEPENDENCIES "find_dependency(PkgConfig)\n${asiocrawl_pkg_modules}")
endif()

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/asiocrawlConfig.cmake.in
  ${PROJECT_BINARY_DIR}/asiocrawlConfig.cmake
  INSTALL_DESTINATION ${ASIOCRAWL_INSTALL_CMAKEDIR})
# 0.x: a minor version may break the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/asiocrawlConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/asiocrawlConfig.cmake ${PROJECT_BINARY_DIR}/asiocrawlConfigVersion.cmake
  DESTINATION ${ASIOCRAWL_INSTALL_CMAKEDIR})
