# ctest driver for the embedding example: run it without arguments (it crawls the site its own server serves)
# and check that the crawl, the application's server and the application's exit all add up. The demo site
# has broken redirects on purpose: the crawler's warnings about them on stderr are expected.
# Usage: cmake -DEXAMPLE=<path> -P check_example.cmake
execute_process(COMMAND ${EXAMPLE} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc TIMEOUT 100)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the example exited with ${rc}")
endif()
if(NOT out MATCHES "-resource site at [^ ]+ \\(a complete crawl makes ([0-9]+) records and ([0-9]+) requests\\)")
  message(FATAL_ERROR "the application did not serve its site")
endif()
set(expected ${CMAKE_MATCH_1})
set(expected_requests ${CMAKE_MATCH_2})
if(NOT out MATCHES "crawl finished: ([0-9]+) records, ([0-9]+) failed, 0 left to do")
  message(FATAL_ERROR "no complete \"crawl finished\" line")
endif()
set(records ${CMAKE_MATCH_1})
# The site's one broken link (/missing, 404) and nothing else.
if(NOT CMAKE_MATCH_2 EQUAL 1)
  message(FATAL_ERROR "${CMAKE_MATCH_2} failed records; the site has exactly one broken link")
endif()
if(NOT out MATCHES "my server answered ([0-9]+) requests")
  message(FATAL_ERROR "the application's server did not report")
endif()
set(requests ${CMAKE_MATCH_1})
# The site is generated with its ground truth: one record per request a correct crawler makes, each served by
# the application's own server on the same io_context (robots.txt may add requests without records).
if(NOT records EQUAL expected OR NOT requests EQUAL expected_requests)
  message(FATAL_ERROR "${records} records and ${requests} requests served; the site needs ${expected}")
endif()
if(NOT out MATCHES "heartbeat ticked [0-9]+ times alongside the crawl")
  message(FATAL_ERROR "no heartbeat summary")
endif()
