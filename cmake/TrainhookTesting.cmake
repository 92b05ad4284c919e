# trainhook_add_unit_test(<name> SOURCES <files...> [LIBRARIES <libs...>] [TORCH])
#
# A doctest executable whose cases are registered with CTest one by one. A case
# selected by name that runs nothing fails (a ';' in a case name splits it into
# two CTest names that match no case, and would otherwise pass without running).
# TORCH marks tests that need LibTorch; they are skipped when TRAINHOOK_WITH_TORCH is OFF.
function(trainhook_add_unit_test name)
  cmake_parse_arguments(ARG "TORCH" "" "SOURCES;LIBRARIES" ${ARGN})
  if(ARG_TORCH AND NOT TRAINHOOK_WITH_TORCH)
    return()
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE doctest::doctest trainhook_test_main ${ARG_LIBRARIES})
  trainhook_warnings(${name})
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  doctest_discover_tests(${name} TEST_PREFIX "${name}: "
    PROPERTIES LABELS unit FAIL_REGULAR_EXPRESSION "test cases: 0 [|]"
               ENVIRONMENT "TRAINHOOK_BUILD_DIR=${CMAKE_BINARY_DIR};TRAINHOOK_SOURCE_DIR=${CMAKE_SOURCE_DIR}")
endfunction()

# trainhook_hf_venv_python(<out-var>)
#
# The python of the HF test venv (scripts/venv hf: Debian python3-torch 1.13,
# transformers, safetensors): -DTRAINHOOK_HF_VENV, else $TRAINHOOK_HF_VENV at
# configure time, else build/hf-venv. The LibTorch 2.x build is given
# build/hf2-venv (scripts/venv hf2: the torch of its LibTorch, the newest
# transformers) by scripts/test-torch2. Tests that run it fail with a clear
# message when it is absent.
function(trainhook_hf_venv_python out)
  if(TRAINHOOK_HF_VENV)
    set(venv "${TRAINHOOK_HF_VENV}")
  else()
    set(venv "$ENV{TRAINHOOK_HF_VENV}")
  endif()
  if(NOT venv)
    set(venv "${PROJECT_SOURCE_DIR}/build/hf-venv")
  endif()
  set(${out} "${venv}/bin/python" PARENT_SCOPE)
endfunction()

# `ctest -j` orders tests by their COST when it has no timing history of its own
# (Testing/Temporary/CTestCostData.txt, absent on a fresh clone, where it would
# start them in the order they were added and a long one added late would run
# alone at the end). A test that takes minutes states its seconds, measured on
# two cores, where it is added, so it starts first; later runs use ctest's timings.
function(trainhook_long_test name seconds)
  if(TEST ${name})
    set_tests_properties(${name} PROPERTIES COST ${seconds})
  endif()
endfunction()
