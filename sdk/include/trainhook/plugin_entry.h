/* The library description and the one exported entry of a plugin written in C,
 * spelled once (C11 or C++; abi.h only). Package 0.8.
 *
 *   static const th_callback_info* const callbacks[] = {&my_callback};
 *   TH_PLUGIN_ENTRY("my_pack", "1.0.0", callbacks)
 *
 * defines the library's th_plugin_info (this ABI major; TRAINHOOK_ABI_MIN_MINOR,
 * the oldest host minor the plugin needs; the name and version; the callbacks,
 * their count taken from the array; no commands) and exports
 * TRAINHOOK_ENTRY_NAME, which refuses a host of another ABI major with
 * TH_ABI_MISMATCH and "<name> needs trainhook ABI <major>" in err, and hands
 * the description out otherwise. `callbacks` is a file-scope array of
 * `const th_callback_info* const`; each th_callback_info, its vtable and its
 * create/destroy stay the plugin's own.
 *
 * A plugin whose entry must do more (commands, a description computed at load
 * time) writes TRAINHOOK_ENTRY_NAME itself, as abi.h describes. C++ plugins use
 * TRAINHOOK_PLUGIN of plugin.hpp instead. */
#ifndef TRAINHOOK_PLUGIN_ENTRY_H
#define TRAINHOOK_PLUGIN_ENTRY_H

#include <trainhook/abi.h>

#ifdef __cplusplus
#define TH_PLUGIN_ENTRY_LINKAGE_ extern "C"
#else
#define TH_PLUGIN_ENTRY_LINKAGE_
#endif

/* Writes "<name> needs trainhook ABI <major>" into err (cut to err_size). */
static inline void th_plugin_entry_refuse_(const char* name, char* err, size_t err_size) {
  const char* const parts[2] = {name, " needs trainhook ABI " TH_STRINGIFY(TRAINHOOK_ABI_VERSION_MAJOR)};
  size_t n = 0;
  int p;
  if (err == NULL || err_size == 0) return;
  for (p = 0; p < 2; ++p) {
    const char* s = parts[p];
    while (s != NULL && *s != '\0' && n + 1 < err_size) err[n++] = *s++;
  }
  err[n] = '\0';
}

#define TH_PLUGIN_ENTRY(plugin_name, plugin_version, callbacks)                           \
  static const th_plugin_info th_plugin_entry_info_ = {                                   \
      TH_PLUGIN_INFO_STRUCT_SIZE,                                                         \
      TRAINHOOK_ABI_VERSION_MAJOR,                                                        \
      TRAINHOOK_ABI_MIN_MINOR,                                                            \
      plugin_name,                                                                        \
      plugin_version,                                                                     \
      (uint32_t)(sizeof(callbacks) / sizeof((callbacks)[0])),                             \
      callbacks,                                                                          \
      0,                                                                                  \
      NULL};                                                                              \
  TH_PLUGIN_ENTRY_LINKAGE_ TRAINHOOK_EXPORT th_status TRAINHOOK_ENTRY_NAME(               \
      const th_host_info* host, const th_plugin_info** out, char* err, size_t err_size) { \
    if (host == NULL || host->abi_major != TRAINHOOK_ABI_VERSION_MAJOR) {                 \
      th_plugin_entry_refuse_(th_plugin_entry_info_.name, err, err_size);                 \
      return TH_ABI_MISMATCH;                                                             \
    }                                                                                     \
    *out = &th_plugin_entry_info_;                                                        \
    return TH_OK;                                                                         \
  }

#endif /* TRAINHOOK_PLUGIN_ENTRY_H */
