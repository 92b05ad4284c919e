/* A third-party pack of two libraries in one folder, as packs ship them
 * (tests/plugins/origin_pack/): built with ORIGIN_DEP, libtrainhook_origin_dep.so,
 * a helper library that exports origin_dep_answer() and no entry symbol;
 * without it, the plugin libtrainhook_origin_pack.so, which links that library
 * and finds it beside itself through RUNPATH $ORIGIN (no absolute path in its
 * RUNPATH). Its callback "origin_pack" logs "origin_dep answers 42" at
 * create, so a test sees the code of both libraries run. */
#include <trainhook/abi.h>

#include <stddef.h>

__attribute__((visibility("default"))) int origin_dep_answer(void);

#if defined(ORIGIN_DEP)

int origin_dep_answer(void) { return 42; }

#else
#include <trainhook/plugin_entry.h>

#include <stdio.h>

static int g_instance;

static th_status on_event(void* self, const th_event_args* args, char* err, size_t err_size) {
  (void)self;
  (void)args;
  (void)err;
  (void)err_size;
  return TH_OK;
}

static void destroy(void* self) { (void)self; }

static th_status create(const th_host* host, const char* config_json, void** out_self, char* err,
                        size_t err_size) {
  char line[64];
  (void)config_json;
  (void)err;
  (void)err_size;
  snprintf(line, sizeof line, "origin_dep answers %d", origin_dep_answer());
  if (host != NULL && host->log != NULL) host->log(host->ctx, TH_LOG_INFO, line);
  *out_self = &g_instance;
  return TH_OK;
}

static const th_callback_vtable vtable = {TH_CALLBACK_VTABLE_STRUCT_SIZE, on_event, NULL, NULL, destroy};
static const th_callback_info callbacks[] = {
    {TH_CALLBACK_INFO_STRUCT_SIZE, "origin_pack", "1.0.0", TH_KIND_CALLBACK,
     "a pack whose plugin needs the library beside it ($ORIGIN)", TH_EVENT_MASK_ALL, create, &vtable},
};
static const th_callback_info* const callback_ptrs[] = {&callbacks[0]};
TH_PLUGIN_ENTRY("origin_pack", "1.0.0", callback_ptrs)
#endif
