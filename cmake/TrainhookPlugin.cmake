# trainhook_add_plugin(<name> SOURCES <files...> [LIBRARIES <libs...>])
#
# Builds a Trainhook plugin: a shared library with hidden visibility (only the
# trainhook_plugin_v1 entry is exported), linked against the SDK only. Used in
# tree and, installed, by out-of-tree plugins after find_package(Trainhook).
function(trainhook_add_plugin name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBRARIES" ${ARGN})
  add_library(${name} MODULE ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE Trainhook::sdk ${ARG_LIBRARIES})
  set_target_properties(${name} PROPERTIES
    # libtrainhook_<name> + the platform's shared-library suffix: the pattern the
    # registry scans for (core/include/trainhook/plugin_host/plugin_file_name.hpp,
    # whose suffix is Boost.DLL's; a MODULE's default suffix differs on macOS).
    PREFIX "lib"
    OUTPUT_NAME "trainhook_${name}"
    SUFFIX "${CMAKE_SHARED_LIBRARY_SUFFIX}"
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  if(DEFINED TRAINHOOK_PLUGIN_OUTPUT_DIR)
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${TRAINHOOK_PLUGIN_OUTPUT_DIR})
  endif()
  if(COMMAND trainhook_warnings)
    trainhook_warnings(${name})
  endif()
  if(DEFINED TRAINHOOK_PLUGIN_INSTALL_DIR)
    install(TARGETS ${name} LIBRARY DESTINATION ${TRAINHOOK_PLUGIN_INSTALL_DIR})
  endif()
endfunction()
