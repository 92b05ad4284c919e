# trainhook_require(<package> <Debian package> [find_package arguments...])
# trainhook_check_required()
#
# The libraries every build links (the CLI's, the Python wheel's). Each is looked
# for quietly; trainhook_check_required() then stops with one error naming every
# Debian -dev package that is missing (the list scripts/install-deps installs),
# rather than CMake's message about the first config file it could not find.
set(TRAINHOOK_MISSING_DEBIAN_PACKAGES "")

macro(trainhook_require package debian_package)
  find_package(${package} ${ARGN} QUIET)
  if(NOT ${package}_FOUND)
    list(APPEND TRAINHOOK_MISSING_DEBIAN_PACKAGES ${debian_package})
  endif()
endmacro()

function(trainhook_check_required)
  if(TRAINHOOK_MISSING_DEBIAN_PACKAGES)
    list(JOIN TRAINHOOK_MISSING_DEBIAN_PACKAGES " " _missing)
    message(FATAL_ERROR "Trainhook needs libraries that were not found. On Debian or Ubuntu:\n"
      "  sudo apt-get install ${_missing}\n"
      "(scripts/install-deps installs everything the build and the tests use.)")
  endif()
endfunction()
