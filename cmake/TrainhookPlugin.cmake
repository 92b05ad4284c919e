# trainhook_add_plugin(<name> SOURCES <files...> [LIBRARIES <libs...>]
#                      [ABI_MIN_MINOR <m>] [TARGET_VAR <var>])
#
# Builds a Trainhook plugin: a shared library libtrainhook_<name> with hidden
# visibility (only the trainhook_plugin_v1 entry is exported), linked against
# the SDK only. Used in tree and, installed, by out-of-tree plugins after
# find_package(Trainhook).
#
# The target's name (sdk/CHANGELOG.md, "CMake API"): package 0.1.0 created the
# target <name>, 0.2.0 creates trainhook_<name>. TRAINHOOK_PLUGIN_TARGET_NAMES
# says which: "0.2" (the default, and in tree) gives the real target
# trainhook_<name>; "0.1" gives the real target <name> and trainhook_<name> as
# an ALIAS of it, so a pack written against 0.1.0 keeps calling
# set_target_properties / install(TARGETS) on <name>. The package config sets
# "0.1" when the consumer asked for a version below 0.2
# (find_package(Trainhook 0.1)), unless the consumer set the variable itself.
# TARGET_VAR <var> returns the real target's name in <var> whatever the mode:
# the spelling that works with every package version from 0.2 on.
#
# ABI_MIN_MINOR <m>: the oldest plugin ABI minor (1.<m>) the plugin needs from a
# host; compiles the plugin with TRAINHOOK_ABI_MIN_MINOR=<m> (abi.h), so hosts
# of minor <m> and newer load it (docs/plugins.md, "One binary for several
# hosts"). Without it the plugin is stamped with the SDK's own minor.
function(trainhook_add_plugin name)
  cmake_parse_arguments(ARG "" "TARGET_VAR;ABI_MIN_MINOR" "SOURCES;LIBRARIES" ${ARGN})
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "trainhook_add_plugin(${name}): unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  set(target trainhook_${name})
  if(DEFINED TRAINHOOK_PLUGIN_TARGET_NAMES AND TRAINHOOK_PLUGIN_TARGET_NAMES VERSION_LESS 0.2)
    set(target ${name})
  elseif(DEFINED TRAINHOOK_PLUGIN_TARGET_NAMES AND NOT TRAINHOOK_PLUGIN_TARGET_NAMES VERSION_EQUAL 0.2)
    message(FATAL_ERROR "TRAINHOOK_PLUGIN_TARGET_NAMES is '${TRAINHOOK_PLUGIN_TARGET_NAMES}': "
      "use 0.1 (target <name>) or 0.2 (target trainhook_<name>)")
  endif()
  add_library(${target} MODULE ${ARG_SOURCES})
  if(NOT target STREQUAL "trainhook_${name}")
    add_library(trainhook_${name} ALIAS ${target})
  endif()
  target_link_libraries(${target} PRIVATE Trainhook::sdk ${ARG_LIBRARIES})
  if(DEFINED ARG_ABI_MIN_MINOR)
    target_compile_definitions(${target} PRIVATE TRAINHOOK_ABI_MIN_MINOR=${ARG_ABI_MIN_MINOR})
  endif()
  set_target_properties(${target} PROPERTIES
    # libtrainhook_<name> + the platform's shared-library suffix: the pattern the
    # registry scans for (core/include/trainhook/plugin_host/registry/plugin_file_name.hpp,
    # whose suffix is Boost.DLL's; a MODULE's default suffix differs on macOS).
    PREFIX "lib"
    OUTPUT_NAME "trainhook_${name}"
    SUFFIX "${CMAKE_SHARED_LIBRARY_SUFFIX}")
  trainhook_hide_symbols(${target})
  if(DEFINED TRAINHOOK_PLUGIN_OUTPUT_DIR)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${TRAINHOOK_PLUGIN_OUTPUT_DIR})
  endif()
  if(DEFINED TRAINHOOK_PLUGIN_INSTALL_DIR)
    install(TARGETS ${target} LIBRARY DESTINATION ${TRAINHOOK_PLUGIN_INSTALL_DIR})
  endif()
  if(ARG_TARGET_VAR)
    set(${ARG_TARGET_VAR} ${target} PARENT_SCOPE)
  endif()
endfunction()

# trainhook_add_plugin_library(<target> SOURCES <files...>)
#
# A plugin's static implementation library (trainhook_<name>_impl, or a shared
# piece such as trainhook_plugin_support): position independent, so it links
# into the plugin's MODULE; hidden visibility, so the plugin still exports only
# its entry; the plugin's include/ folder public, so the tests can link it.
function(trainhook_add_plugin_library target)
  cmake_parse_arguments(ARG "" "" "SOURCES" ${ARGN})
  add_library(${target} STATIC ${ARG_SOURCES})
  target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>)
  set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  trainhook_hide_symbols(${target})
endfunction()

# Hidden visibility (and the project's warnings, in tree): the one place the
# plugins' symbol rules are written.
function(trainhook_hide_symbols target)
  set_target_properties(${target} PROPERTIES
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  if(COMMAND trainhook_warnings)
    trainhook_warnings(${target})
  endif()
endfunction()
