/* The plugin description and the one exported entry of a C test plugin, written
 * once for the test plugins that need nothing more from the entry than to hand
 * out their callbacks. `callbacks` is a file-scope array of
 * `const th_callback_info* const`; the count is taken from it. test_abi_c.c
 * spells the entry out by hand on purpose: it is the proof that the ABI is C. */
#ifndef TRAINHOOK_TEST_PLUGIN_ENTRY_H
#define TRAINHOOK_TEST_PLUGIN_ENTRY_H

#include <trainhook/abi.h>

#define TH_TEST_PLUGIN_ENTRY(plugin_name, plugin_version, callbacks)                                       \
  static const th_plugin_info th_test_plugin_info = {TH_PLUGIN_INFO_STRUCT_SIZE,                           \
                                                     TRAINHOOK_ABI_VERSION_MAJOR,                          \
                                                     TRAINHOOK_ABI_VERSION_MINOR,                          \
                                                     plugin_name,                                          \
                                                     plugin_version,                                       \
                                                     sizeof(callbacks) / sizeof((callbacks)[0]),           \
                                                     callbacks,                                            \
                                                     0,                                                    \
                                                     NULL};                                                \
  TRAINHOOK_EXPORT th_status TRAINHOOK_ENTRY_NAME(const th_host_info* host, const th_plugin_info** out, \
                                                  char* err, size_t err_size) {                            \
    (void)host;                                                                                            \
    (void)err;                                                                                             \
    (void)err_size;                                                                                        \
    *out = &th_test_plugin_info;                                                                           \
    return TH_OK;                                                                                          \
  }

#endif
