# Packages of this build (cmake --build build --target package, or cpack in the
# build folder), from the install rules and their two components:
#   trainhook_<version>_<arch>.deb      runtime: bin/trainhook, libexec/trainhook/
#                                       (scanner, isolation runner), the core
#                                       libraries, lib/trainhook/plugins/
#   trainhook-dev_<version>_<arch>.deb  dev: the SDK's and the core's headers, the
#                                       CMake package (lib/cmake/Trainhook), the
#                                       static support and testkit libraries,
#                                       the worked examples
#   trainhook-<version>-Linux.tar.gz    both, under one top folder, to unpack anywhere
# The .debs install under /usr (TRAINHOOK_DEB_PREFIX); the program finds its
# libraries, helpers and plugins relative to its own file (RPATH $ORIGIN, the
# plugin folder and helpers beside it), so the tarball runs wherever it is
# unpacked. Each .deb's Depends is what dpkg-shlibdeps reads off the binaries it
# holds (LibTorch, Boost, spdlog, libcurl, ...).
set(CPACK_PACKAGE_NAME trainhook)
set(CPACK_PACKAGE_VENDOR "Trainhook")
set(CPACK_PACKAGE_CONTACT "Trainhook maintainers <trainhook@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "C++ training framework on LibTorch with callbacks in run-time plugins")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_GENERATOR "DEB;TGZ")
set(CPACK_SOURCE_GENERATOR "")
set(CPACK_PACKAGE_DIRECTORY ${CMAKE_BINARY_DIR}/packages)
# Not stripped: the plugins' digests (trainhook-plugins.sha256) are written at
# install time, before CPack would strip, and must match the packaged bytes.
set(CPACK_STRIP_FILES OFF)

# Per generator (cmake/TrainhookCPackOptions.cmake.in): the .debs are rooted at
# /usr and split by component; the tarball holds everything, relative.
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_ARCHIVE_COMPONENT_INSTALL OFF)
set(CPACK_COMPONENTS_ALL runtime dev)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME trainhook)
set(CPACK_DEBIAN_DEV_PACKAGE_NAME trainhook-dev)
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION "${CPACK_PACKAGE_DESCRIPTION_SUMMARY}
 The trainhook program, its plugin scanner and isolation helpers, the core
 libraries and the first-party plugins (integrations and callbacks).")
set(CPACK_COMPONENT_DEV_DESCRIPTION "Trainhook plugin SDK and core headers
 The plugin SDK (abi.h, plugin.hpp, options.hpp), the integration base and test
 host for plugin packs, the core's headers and the CMake package
 (find_package(Trainhook), trainhook_add_plugin, trainhook_package_plugins).")
# The dev package needs the runtime of the same version (its CMake package names
# the installed libraries); what its components look for is recommended.
set(CPACK_COMPONENT_DEV_DEPENDS runtime)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
set(CPACK_DEBIAN_DEV_PACKAGE_RECOMMENDS "libcurl4-openssl-dev, libssl-dev")
set(CPACK_DEBIAN_DEV_PACKAGE_SUGGESTS "libtorch-dev, nlohmann-json3-dev, libspdlog-dev")

configure_file(${CMAKE_CURRENT_LIST_DIR}/TrainhookCPackOptions.cmake.in
  ${CMAKE_BINARY_DIR}/TrainhookCPackOptions.cmake @ONLY)
set(CPACK_PROJECT_CONFIG_FILE ${CMAKE_BINARY_DIR}/TrainhookCPackOptions.cmake)
include(CPack)
