# The package_consumer test: install asiocrawl from its build tree into a fresh prefix, then configure, build
# and run two standalone projects against that prefix only: the minimal consumer (test/package) and the
# embedding example (examples/embed, checked by its check_example.cmake). Usage (see test/CMakeLists.txt):
#   cmake -DASIOCRAWL_BUILD_DIR=.. -DCONSUMER_SOURCE_DIR=.. -DEXAMPLE_SOURCE_DIR=.. -DWORK_DIR=.. -DGENERATOR=..
#         -DCXX_COMPILER=.. [-DCXX_LAUNCHER=ccache] [-DBUILD_TYPE=..] [-DSANITIZE_FLAGS=-fsanitize=..]
#         -P run_consumer.cmake
function(run)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    string(JOIN " " command ${ARGV})
    message(FATAL_ERROR "failed (${rc}): ${command}")
  endif()
endfunction()

set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${prefix})
run(${CMAKE_COMMAND} --install ${ASIOCRAWL_BUILD_DIR} --prefix ${prefix})

set(options -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
if(BUILD_TYPE)
  list(APPEND options -DCMAKE_BUILD_TYPE=${BUILD_TYPE})
endif()
if(SANITIZE_FLAGS)
  list(APPEND options -DCMAKE_CXX_FLAGS=${SANITIZE_FLAGS} -DCMAKE_EXE_LINKER_FLAGS=${SANITIZE_FLAGS})
endif()
if(CXX_LAUNCHER)
  list(APPEND options -DCMAKE_CXX_COMPILER_LAUNCHER=${CXX_LAUNCHER})
endif()
# A fresh prefix each run, so a header or library missing from the install rules cannot hide behind an old
# copy; the consumer's build tree is kept, and ccache (when configured) absorbs the rebuild.
run(${CMAKE_COMMAND} -S ${CONSUMER_SOURCE_DIR} -B ${WORK_DIR}/build -G ${GENERATOR} ${options})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${WORK_DIR}/build/consumer ${WORK_DIR}/consumer-outputs)

if(EXAMPLE_SOURCE_DIR)
  run(${CMAKE_COMMAND} -S ${EXAMPLE_SOURCE_DIR} -B ${WORK_DIR}/embed-build -G ${GENERATOR} ${options})
  run(${CMAKE_COMMAND} --build ${WORK_DIR}/embed-build)
  run(${CMAKE_COMMAND} -DEXAMPLE=${WORK_DIR}/embed-build/asiocrawl_embed_example
      -P ${EXAMPLE_SOURCE_DIR}/check_example.cmake)
endif()
