# trainhook_add_plugin(<name> SOURCES <files...> [LIBRARIES <libs...>])
#
# Builds a Trainhook plugin: target trainhook_<name>, a shared library
# libtrainhook_<name> with hidden visibility (only the trainhook_plugin_v1
# entry is exported), linked against the SDK only. Used in tree and,
# installed, by out-of-tree plugins after find_package(Trainhook).
function(trainhook_add_plugin name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBRARIES" ${ARGN})
  set(target trainhook_${name})
  add_library(${target} MODULE ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE Trainhook::sdk ${ARG_LIBRARIES})
  set_target_properties(${target} PROPERTIES
    # libtrainhook_<name> + the platform's shared-library suffix: the pattern the
    # registry scans for (core/include/trainhook/plugin_host/plugin_file_name.hpp,
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
