/* The smallest useful plugin, for bench_plugin_load: one callback that accepts
 * every event and does nothing. Its callback name comes from its own file name
 * (libtrainhook_<name>.<suffix> -> "<name>"), so one build copied to 100 file names
 * gives 100 libraries with 100 distinct callbacks, as 100 real plugins would.
 * Plain C against abi.h only. */
#define _GNU_SOURCE
#include <trainhook/abi.h>

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

static char g_name[64];

static th_status on_event(void* self, const th_event_args* args, char* err, size_t err_size) {
  (void)self;
  (void)args;
  (void)err;
  (void)err_size;
  return TH_OK;
}

static void destroy(void* self) { (void)self; }

static const th_callback_vtable g_vtable = {TH_CALLBACK_VTABLE_STRUCT_SIZE, on_event, NULL, NULL, destroy};

static int g_instance; /* instances carry no state; any non-NULL handle will do */

static th_status create(const th_host* host, const char* config_json, void** out_self, char* err,
                        size_t err_size) {
  (void)host;
  (void)config_json;
  (void)err;
  (void)err_size;
  *out_self = &g_instance;
  return TH_OK;
}

static th_callback_info g_callback;
static const th_callback_info* g_callback_ptrs[1] = {&g_callback};
static th_plugin_info g_plugin;

/* "<dir>/libtrainhook_trivial_007.<suffix>" -> "trivial_007": what lies between
 * the prefix and the first dot, so the platform's suffix (which the host's
 * plugin_file_name() adds, a C plugin cannot call it) does not matter; 0 when
 * the file name does not have that shape or the name does not fit. */
static int name_from_file(const char* path) {
  const char* base = strrchr(path, '/');
  base = base ? base + 1 : path;
  const char* prefix = "libtrainhook_";
  const size_t plen = strlen(prefix);
  const char* dot = strchr(base, '.');
  if (strncmp(base, prefix, plen) != 0 || dot == NULL || dot <= base + plen) return 0;
  const size_t n = (size_t)(dot - base) - plen;
  if (n >= sizeof g_name) return 0;
  memcpy(g_name, base + plen, n);
  g_name[n] = '\0';
  return 1;
}

TRAINHOOK_EXPORT th_status TRAINHOOK_ENTRY_NAME(const th_host_info* host, const th_plugin_info** out,
                                                char* err, size_t err_size) {
  (void)host;
  Dl_info info = {0};
  if (!dladdr((const void*)g_name, &info) || !info.dli_fname || !name_from_file(info.dli_fname)) {
    snprintf(err, err_size, "trivial bench plugin: file name must be libtrainhook_<name>.<suffix>, got '%s'",
             info.dli_fname ? info.dli_fname : "?");
    return TH_ERROR;
  }
  g_callback.struct_size = TH_CALLBACK_INFO_STRUCT_SIZE;
  g_callback.name = g_name;
  g_callback.version = "1.0.0";
  g_callback.kind = TH_KIND_CALLBACK;
  g_callback.description = "does nothing (plugin load benchmark)";
  g_callback.event_mask = TH_EVENT_MASK_ALL;
  g_callback.create = create;
  g_callback.vtable = &g_vtable;
  g_plugin.struct_size = TH_PLUGIN_INFO_STRUCT_SIZE;
  g_plugin.abi_major = TRAINHOOK_ABI_VERSION_MAJOR;
  g_plugin.abi_minor = TRAINHOOK_ABI_VERSION_MINOR;
  g_plugin.name = g_name;
  g_plugin.version = "1.0.0";
  g_plugin.callback_count = 1;
  g_plugin.callbacks = g_callback_ptrs;
  g_plugin.command_count = 0;
  g_plugin.commands = NULL;
  *out = &g_plugin;
  return TH_OK;
}
