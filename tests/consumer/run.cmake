# Installs Orrery from BUILD_DIR into a fresh prefix under WORK_DIR, builds
# tests/consumer against it with find_package(Orrery), runs the consumer,
# and runs the installed `orrery` with no $ORRERY_CONFIG_DIR and from another
# folder, so that it must find its presets relative to itself.
set(prefix "${WORK_DIR}/prefix")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                  WORKING_DIRECTORY "${WORK_DIR}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(step_out "${out}" PARENT_SCOPE)
endfunction()
step(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}")
step(${CMAKE_COMMAND} -S "${SOURCE_DIR}/tests/consumer" -B "${WORK_DIR}/build"
     -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release)
step(${CMAKE_COMMAND} --build "${WORK_DIR}/build")
step("${WORK_DIR}/build/orrery_consumer")
message(STATUS "${step_out}")
step(${CMAKE_COMMAND} -E env --unset=ORRERY_CONFIG_DIR "${prefix}/bin/orrery" estimate gpt3-175b-a100 --format json)
if(NOT step_out MATCHES "\"schema_version\": 1")
  message(FATAL_ERROR "installed orrery printed no estimate:\n${step_out}")
endif()
file(REMOVE_RECURSE "${WORK_DIR}")
