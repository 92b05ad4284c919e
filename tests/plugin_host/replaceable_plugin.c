/* One plugin, "replaceable", built in three variants that the registry cache
 * tests copy over one another in place (same size, same inode, mtime set back):
 *   VARIANT 1  version 1.0.0, logs "variant=1" when its callback is created
 *   VARIANT 2  version 2.0.0, logs "variant=2"
 *   VARIANT 3  version 1.0.0 as variant 1, logs "variant=3": it differs from
 *              variant 1 only in the code of variant_mark(), so only its bytes
 *              (the SHA-256) tell the two apart.
 * Every string has the same length in every variant, so the files have the
 * same size (the tests still check, and pad the shorter one if not). */
#include <trainhook/abi.h>

#include <stdio.h>
#include <stdlib.h>

#ifndef VARIANT
#error "VARIANT (1, 2 or 3) picks the variant"
#endif
#if VARIANT == 2
#define REPLACEABLE_VERSION "2.0.0"
#else
#define REPLACEABLE_VERSION "1.0.0"
#endif

static int variant_mark(void) { return VARIANT; }

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
  char line[32];
  (void)config_json;
  (void)err;
  (void)err_size;
  snprintf(line, sizeof line, "variant=%d", variant_mark());
  if (host != NULL && host->log != NULL) host->log(host->ctx, TH_LOG_INFO, line);
  *out_self = &g_instance;
  return TH_OK;
}

static const th_callback_vtable vtable = {TH_CALLBACK_VTABLE_STRUCT_SIZE, on_event, NULL, NULL, destroy};

static const th_callback_info callbacks[] = {
    {TH_CALLBACK_INFO_STRUCT_SIZE, "replaceable_cb", REPLACEABLE_VERSION, TH_KIND_CALLBACK,
     "logs which variant of the library it is", TH_EVENT_MASK_ALL, create, &vtable},
};
static const th_callback_info* const callback_ptrs[] = {&callbacks[0]};

static const th_plugin_info info = {TH_PLUGIN_INFO_STRUCT_SIZE,
                                    TRAINHOOK_ABI_VERSION_MAJOR,
                                    TRAINHOOK_ABI_VERSION_MINOR,
                                    "replaceable",
                                    REPLACEABLE_VERSION,
                                    1,
                                    callback_ptrs,
                                    0,
                                    NULL};

TRAINHOOK_EXPORT th_status TRAINHOOK_ENTRY_NAME(const th_host_info* host, const th_plugin_info** out,
                                                char* err, size_t err_size) {
  (void)host;
  (void)err;
  (void)err_size;
  *out = &info;
  return TH_OK;
}
