/* An evil plugin for the reliability suite: callback "evil_segv" dereferences
 * a null pointer in on_log, as a buggy plugin would. The host must name the
 * plugin file, the callback and the event before the process dies of SIGSEGV
 * (issue 22: rc 139 with no word of which plugin). */
#include <trainhook/abi.h>

#include <stddef.h>

static int* volatile g_nowhere = NULL;

static th_status evil_on_event(void* self, const th_event_args* args, char* err, size_t err_size) {
  (void)self;
  (void)err;
  (void)err_size;
  if (args->event == TH_EVENT_LOG) *g_nowhere = 42; /* the crash */
  return TH_OK;
}
static void evil_destroy(void* self) { (void)self; }
static int evil_instance;
static th_status evil_create(const th_host* host, const char* config_json, void** out_self, char* err,
                             size_t err_size) {
  (void)host;
  (void)config_json;
  (void)err;
  (void)err_size;
  *out_self = &evil_instance;
  return TH_OK;
}
static const th_callback_vtable evil_vtable = {TH_CALLBACK_VTABLE_STRUCT_SIZE, evil_on_event, NULL, NULL,
                                               evil_destroy};
static const th_callback_info evil_callback = {TH_CALLBACK_INFO_STRUCT_SIZE, "evil_segv", "1.0.0",
                                               TH_KIND_CALLBACK, "segfaults in on_log",
                                               TH_EVENT_BIT(TH_EVENT_LOG), evil_create, &evil_vtable};
static const th_callback_info* const evil_callback_ptrs[] = {&evil_callback};
static const th_plugin_info evil_info = {TH_PLUGIN_INFO_STRUCT_SIZE,
                                         TRAINHOOK_ABI_VERSION_MAJOR,
                                         TRAINHOOK_ABI_VERSION_MINOR,
                                         "evil",
                                         "1.0.0",
                                         1,
                                         evil_callback_ptrs,
                                         0,
                                         NULL};

TRAINHOOK_EXPORT th_status TRAINHOOK_ENTRY_NAME(const th_host_info* host, const th_plugin_info** out, char* err,
                                                size_t err_size) {
  (void)host;
  (void)err;
  (void)err_size;
  *out = &evil_info;
  return TH_OK;
}
