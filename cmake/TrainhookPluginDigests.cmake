# Writes the trainer's own plugin digests: <DIGEST_DIR>/trainhook-plugins.sha256,
# one sha256sum line ("<sha256>  <file name>") per library in DIGEST_FILES (file
# names in DIGEST_DIR, separated by commas). With TRAINHOOK_PLUGIN_LOCK set, the registry checks the
# trainer's plugins in its default folder against this file, so a site's lock
# lists only third-party packs (core/include/trainhook/plugin_host/registry/plugin_lock.hpp).
# Run twice, on the bytes each place holds:
#   - in the build tree by the trainhook_plugins target (plugins/CMakeLists.txt):
#       cmake -DDIGEST_DIR=... -DDIGEST_FILES=a.so,b.so -P TrainhookPluginDigests.cmake
#   - by `cmake --install`, after the plugins are installed (their RPATH is
#     rewritten then, so the build tree's digests would not match): an
#     install(CODE) sets the two variables and includes this file.
if(NOT DIGEST_DIR OR NOT DIGEST_FILES)
  message(FATAL_ERROR "TrainhookPluginDigests.cmake: DIGEST_DIR and DIGEST_FILES must be set")
endif()
string(REPLACE "," ";" _th_files "${DIGEST_FILES}")
set(_th_lines "# The trainer's own plugins and their SHA-256, written when they were built or installed.\n")
string(APPEND _th_lines "# TRAINHOOK_PLUGIN_LOCK checks them against this file; do not list them in a site's lock.\n")
foreach(_th_file IN LISTS _th_files)
  if(NOT EXISTS "${DIGEST_DIR}/${_th_file}")
    message(FATAL_ERROR "TrainhookPluginDigests.cmake: ${DIGEST_DIR}/${_th_file} does not exist")
  endif()
  file(SHA256 "${DIGEST_DIR}/${_th_file}" _th_hash)
  string(APPEND _th_lines "${_th_hash}  ${_th_file}\n")
endforeach()
# Rewritten only when it changes, so that an unchanged build touches nothing.
set(_th_out "${DIGEST_DIR}/trainhook-plugins.sha256")
set(_th_old "")
if(EXISTS "${_th_out}")
  file(READ "${_th_out}" _th_old)
endif()
if(NOT _th_old STREQUAL _th_lines)
  file(WRITE "${_th_out}.tmp" "${_th_lines}")
  file(RENAME "${_th_out}.tmp" "${_th_out}")
endif()
unset(_th_files)
unset(_th_lines)
unset(_th_hash)
unset(_th_out)
unset(_th_old)
