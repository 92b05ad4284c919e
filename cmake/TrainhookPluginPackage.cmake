# trainhook_package_plugins(MAINTAINER <"Name <email>">
#                           [NAME <package>] [DESCRIPTION <summary>]
#                           [GENERATORS <DEB|TGZ...>] [DEPENDS <extra Depends>])
#
# Packages a plugin pack: call it once, at the end of the pack's top-level
# CMakeLists.txt, after its trainhook_add_plugin() calls. `cpack` (or
# `cmake --build <build> --target package`) in the pack's build folder then writes
#   <package>_<version>_<arch>.deb   the pack's plugins in Trainhook's plugin folder
#                                    (<TRAINHOOK_DEB_PREFIX>/<TRAINHOOK_PLUGIN_INSTALL_DIR>,
#                                    where the trainhook package's program looks by
#                                    default) and whatever else the pack installs;
#                                    Depends: trainhook (>= the package version this
#                                    pack was built against), plus the libraries its
#                                    plugins link (dpkg-shlibdeps)
#   <package>-<version>-Linux.tar.gz the same tree, relative, for a trainer unpacked
#                                    elsewhere (tar -xzf ... --strip-components=1 -C
#                                    <trainhook prefix>)
# NAME defaults to the project's name with `_` made `-` (Debian's rule), the
# version is the project's, DESCRIPTION the project's DESCRIPTION or a line naming
# the plugins. Package 0.6.
function(_trainhook_package_plugins_vars)
  cmake_parse_arguments(ARG "" "NAME;MAINTAINER;DESCRIPTION" "GENERATORS;DEPENDS" ${ARGN})
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "trainhook_package_plugins: unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_MAINTAINER)
    message(FATAL_ERROR "trainhook_package_plugins: MAINTAINER \"Name <email>\" is required (a .deb's Maintainer)")
  endif()
  if(NOT ARG_NAME)
    string(TOLOWER "${PROJECT_NAME}" ARG_NAME)
    string(REPLACE "_" "-" ARG_NAME "${ARG_NAME}")
  endif()
  if(NOT ARG_GENERATORS)
    set(ARG_GENERATORS DEB TGZ)
  endif()
  if(NOT ARG_DESCRIPTION)
    set(ARG_DESCRIPTION "${PROJECT_DESCRIPTION}")
  endif()
  if(NOT ARG_DESCRIPTION)
    set(ARG_DESCRIPTION "Trainhook plugin pack ${PROJECT_NAME}")
  endif()
  set(_depends "trainhook (>= ${TRAINHOOK_PACKAGE_VERSION})")
  foreach(_dep IN LISTS ARG_DEPENDS)
    string(APPEND _depends ", ${_dep}")
  endforeach()

  set(CPACK_PACKAGE_NAME "${ARG_NAME}" PARENT_SCOPE)
  set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}" PARENT_SCOPE)
  set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${ARG_DESCRIPTION}" PARENT_SCOPE)
  set(CPACK_PACKAGE_CONTACT "${ARG_MAINTAINER}" PARENT_SCOPE)
  set(CPACK_GENERATOR "${ARG_GENERATORS}" PARENT_SCOPE)
  set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT PARENT_SCOPE)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "${_depends}" PARENT_SCOPE)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON PARENT_SCOPE)
  set(CPACK_DEBIAN_PACKAGE_SECTION science PARENT_SCOPE)
  # The .deb is rooted where the trainhook package is; the tarball is relative.
  set(_options "${CMAKE_CURRENT_BINARY_DIR}/TrainhookPackOptions.cmake")
  file(WRITE "${_options}" "if(CPACK_GENERATOR STREQUAL \"DEB\")\n"
    "  set(CPACK_PACKAGING_INSTALL_PREFIX \"${TRAINHOOK_DEB_PREFIX}\")\n"
    "else()\n  set(CPACK_PACKAGING_INSTALL_PREFIX \"/\")\nendif()\n")
  set(CPACK_PROJECT_CONFIG_FILE "${_options}" PARENT_SCOPE)
endfunction()

# include(CPack) must run in the caller's scope (it reads the CPACK_ variables
# set above): the macro does both.
macro(trainhook_package_plugins)
  _trainhook_package_plugins_vars(${ARGN})
  include(CPack)
endmacro()
