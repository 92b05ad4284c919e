/*
 * The plugin host's rules as plain C functions, exported by libtrainhook_base for
 * hosts written in other languages (the Python package in python/trainhook loads
 * them with ctypes), so that the search path, the file checks, the refusal
 * reasons, ABI negotiation and the "tensor views" rules of abi.h live once, in
 * the core. No LibTorch behind any of them.
 *
 * Every function that can fail returns a th_status and writes a NUL-terminated
 * message into (err, err_size); nothing throws.
 */
#ifndef TRAINHOOK_PLUGIN_HOST_BRIDGE_API_H
#define TRAINHOOK_PLUGIN_HOST_BRIDGE_API_H

#include <trainhook/abi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI this core speaks: (major << 16) | minor. */
TRAINHOOK_EXPORT uint32_t trainhook_bridge_abi_version(void);

/* The TH_*_STRUCT_SIZE constants of the abi.h this core was built with, in this
 * order: th_state, th_control, th_values, th_step_values, th_failure,
 * th_event_args, th_tensor_list, th_host, th_callback_vtable, th_callback_info.
 * Writes up to `capacity`; returns how many there are. A foreign host compares
 * them with its own mirror of the structs before it calls any plugin. */
TRAINHOOK_EXPORT uint32_t trainhook_bridge_struct_sizes(uint32_t* out, uint32_t capacity);

/* "on_log" for TH_EVENT_LOG, ...; NULL for an unknown id. */
TRAINHOOK_EXPORT const char* trainhook_bridge_event_name(int32_t event);

/* Scans the plugin search path as the trainer does (plugin_dirs in order, then
 * TRAINHOOK_PLUGIN_PATH, then the default folder next to this library; the
 * path-safety checks, TRAINHOOK_PLUGIN_LOCK and the registry cache; libraries
 * read by the scanner process) and resolves the names of a run.
 * request_json: {"plugin_dirs": [..], "callbacks": [..], "report_to": [..],
 *                "allow_unsafe_plugin_paths": bool, "plugin_config_sections": [..]}.
 * The sections are checked by the trainer's rule: one named after no installed
 * plugin is refused (with a did-you-mean), one of an installed plugin the run
 * does not enable is a warning in "warnings".
 * On TH_OK, `out` holds {"callbacks": [{"name", "kind", "file", "event_mask"}...],
 * "searched": [..]}: the integrations report_to enables first, then the callbacks
 * (the trainer's order; a name in both once).
 * TH_BUFFER_TOO_SMALL sets *needed (bytes with the NUL). An unknown name, a
 * missing plugin_dir or a clash is TH_INVALID_ARGUMENT with the trainer's message
 * (closest name, the folders searched, refused files with their reasons). */
TRAINHOOK_EXPORT th_status trainhook_bridge_resolve(const char* request_json, char* out, size_t out_size,
                                                    size_t* needed, char* err, size_t err_size);

/* Loads `file` into this process (the ELF pre-check, dlopen, ABI negotiation,
 * the host-owned copies of what the entry returned) and sets *out to the
 * callback `name` it exports. The library stays loaded for the life of the
 * process. A refusal is TH_INVALID_ARGUMENT with a message naming the file. */
TRAINHOOK_EXPORT th_status trainhook_bridge_load_callback(const char* file, const char* name,
                                                          const th_callback_info** out, char* err,
                                                          size_t err_size);

/* The checks of abi.h's host functions (model_access.hpp): TH_OK, or
 * TH_INVALID_ARGUMENT with the reason. */
TRAINHOOK_EXPORT th_status trainhook_bridge_check_tensors(int32_t event, int32_t kind, int32_t access,
                                                          char* err, size_t err_size);
TRAINHOOK_EXPORT th_status trainhook_bridge_check_metric(const char* name, double value, char* err,
                                                         size_t err_size);
TRAINHOOK_EXPORT th_status trainhook_bridge_check_factor(double factor, char* err, size_t err_size);
TRAINHOOK_EXPORT th_status trainhook_bridge_check_skip(int32_t event, char* err, size_t err_size);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TRAINHOOK_PLUGIN_HOST_BRIDGE_API_H */
