# gumbo 0.10.1 has assertions that malformed markup can fail (fuzz_links finds them), and Debian builds it with
# assertions on: one hostile page would abort the whole crawler. So asiocrawl_core links gumbo's own objects,
# taken from Debian's static archive, with __assert_fail renamed to asiocrawl_gumbo_assert_fail: src/html/links.cpp
# turns a failed assertion into the end of that one parse (its memory is all in the parse arena). The rename
# touches gumbo alone; the rest of the process keeps glibc's assert. Consumers of the installed library then
# need no gumbo at all.
# Sets ASIOCRAWL_GUMBO_OBJECTS (object files to add to a target's sources) and ASIOCRAWL_GUMBO_INCLUDE_DIRS.

pkg_check_modules(GUMBO REQUIRED gumbo)
find_library(ASIOCRAWL_GUMBO_ARCHIVE NAMES libgumbo.a HINTS ${GUMBO_LIBRARY_DIRS} ${GUMBO_LIBDIR} REQUIRED)
if(NOT CMAKE_AR OR NOT CMAKE_OBJCOPY)
  message(FATAL_ERROR "asiocrawl: ar and objcopy (binutils) are needed to link gumbo")
endif()

set(gumbo_object_dir ${CMAKE_BINARY_DIR}/gumbo-objects)
file(REMOVE_RECURSE ${gumbo_object_dir})
file(MAKE_DIRECTORY ${gumbo_object_dir})
execute_process(COMMAND ${CMAKE_AR} x ${ASIOCRAWL_GUMBO_ARCHIVE}
                WORKING_DIRECTORY ${gumbo_object_dir} RESULT_VARIABLE gumbo_rc)
if(NOT gumbo_rc EQUAL 0)
  message(FATAL_ERROR "asiocrawl: cannot extract ${ASIOCRAWL_GUMBO_ARCHIVE}")
endif()
file(GLOB ASIOCRAWL_GUMBO_OBJECTS ${gumbo_object_dir}/*.o)
if(NOT ASIOCRAWL_GUMBO_OBJECTS)
  message(FATAL_ERROR "asiocrawl: ${ASIOCRAWL_GUMBO_ARCHIVE} holds no objects")
endif()
foreach(object IN LISTS ASIOCRAWL_GUMBO_OBJECTS)
  execute_process(COMMAND ${CMAKE_OBJCOPY} --redefine-sym __assert_fail=asiocrawl_gumbo_assert_fail ${object}
                  RESULT_VARIABLE gumbo_rc)
  if(NOT gumbo_rc EQUAL 0)
    message(FATAL_ERROR "asiocrawl: objcopy failed on ${object}")
  endif()
endforeach()
# Reconfigure when Debian's archive changes (a gumbo upgrade).
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${ASIOCRAWL_GUMBO_ARCHIVE})
set(ASIOCRAWL_GUMBO_INCLUDE_DIRS ${GUMBO_INCLUDE_DIRS})
