/* Fake plugins that the registry must refuse, or that misbehave once loaded,
 * one per compile definition (tests/sdk/CMakeLists.txt builds each into its own
 * folder; tests/reliability builds FAKE_SEGV_ON_LOG):
 *   FAKE_NO_ENTRY      exports a function, but not trainhook_plugin_v1
 *   FAKE_ABI_MAJOR_2   answers with abi_major 2
 *   FAKE_NEWER_MINOR   answers with abi_minor one above the host's
 *   FAKE_ABI_REFUSE    the entry itself refuses the host (TH_ABI_MISMATCH)
 *   FAKE_ENTRY_ERROR   the entry returns TH_ERROR with a message
 *   FAKE_DUPLICATE     a valid plugin exporting callback "dup_cb" (built twice)
 *   FAKE_UNRESOLVED    a valid entry that calls a function no library defines, so
 *                      the loader (RTLD_NOW) refuses it naming that symbol
 *   FAKE_SEGV_ON_LOG   a valid plugin whose callback "evil_segv" dereferences a
 *                      null pointer in on_log, as a buggy plugin would: the host
 *                      must name the plugin file, the callback and the event
 *                      before the process dies of SIGSEGV */
#include <trainhook/abi.h>

#include <string.h>

#ifndef FAKE_LIB_NAME
#define FAKE_LIB_NAME "fake"
#endif
#if defined(FAKE_SEGV_ON_LOG)
#define FAKE_CALLBACK_NAME "evil_segv"
#define FAKE_CALLBACK_DESCRIPTION "segfaults in on_log"
#define FAKE_EVENT_MASK TH_EVENT_BIT(TH_EVENT_LOG)
static int* volatile g_nowhere = NULL;
#else
#define FAKE_CALLBACK_NAME "dup_cb"
#define FAKE_CALLBACK_DESCRIPTION "a fake callback"
#define FAKE_EVENT_MASK TH_EVENT_MASK_ALL
#endif

static inline void write_err(char* err, size_t err_size, const char* msg) {
  if (err == NULL || err_size == 0) return;
  strncpy(err, msg, err_size - 1);
  err[err_size - 1] = '\0';
}

static th_status fake_on_event(void* self, const th_event_args* args, char* err, size_t err_size) {
  (void)self;
  (void)args;
  (void)err;
  (void)err_size;
#if defined(FAKE_SEGV_ON_LOG)
  if (args->event == TH_EVENT_LOG) *g_nowhere = 42; /* the crash */
#endif
  return TH_OK;
}
static void fake_destroy(void* self) { (void)self; }
static int fake_instance;
static th_status fake_create(const th_host* host, const char* config_json, void** out_self, char* err,
                             size_t err_size) {
  (void)host;
  (void)config_json;
  (void)err;
  (void)err_size;
  *out_self = &fake_instance;
  return TH_OK;
}
static const th_callback_vtable fake_vtable = {TH_CALLBACK_VTABLE_STRUCT_SIZE, fake_on_event, NULL, NULL,
                                               fake_destroy};
static const th_callback_info fake_callbacks[] = {
    {TH_CALLBACK_INFO_STRUCT_SIZE, FAKE_CALLBACK_NAME, "1.0.0", TH_KIND_CALLBACK, FAKE_CALLBACK_DESCRIPTION,
     FAKE_EVENT_MASK, fake_create, &fake_vtable},
};

#if defined(FAKE_ABI_MAJOR_2)
#define FAKE_MAJOR 2
#else
#define FAKE_MAJOR TRAINHOOK_ABI_VERSION_MAJOR
#endif
#if defined(FAKE_NEWER_MINOR)
#define FAKE_MINOR (TRAINHOOK_ABI_VERSION_MINOR + 1)
#else
#define FAKE_MINOR TRAINHOOK_ABI_VERSION_MINOR
#endif

static const th_callback_info* const fake_callback_ptrs[] = {&fake_callbacks[0]};

static const th_plugin_info fake_info = {
    TH_PLUGIN_INFO_STRUCT_SIZE, FAKE_MAJOR, FAKE_MINOR, FAKE_LIB_NAME, "1.0.0", 1,
    fake_callback_ptrs,         0,          NULL};

#if defined(FAKE_UNRESOLVED)
/* Declared, never defined anywhere: the link of a shared library allows it. */
extern int trainhook_test_symbol_nobody_defines(void);
#endif

#if defined(FAKE_NO_ENTRY)
TRAINHOOK_EXPORT int trainhook_not_the_entry(void) { return fake_info.callback_count == 1; }
#else
TRAINHOOK_EXPORT th_status TRAINHOOK_ENTRY_NAME(const th_host_info* host, const th_plugin_info** out,
                                                char* err, size_t err_size) {
#if defined(FAKE_ABI_REFUSE)
  (void)host;
  (void)out;
  (void)fake_info;
  write_err(err, err_size, "fake plugin insists on trainhook ABI 7.3");
  return TH_ABI_MISMATCH;
#elif defined(FAKE_ENTRY_ERROR)
  (void)host;
  (void)out;
  (void)fake_info;
  write_err(err, err_size, "license file /nonexistent/license.key not found");
  return TH_ERROR;
#elif defined(FAKE_UNRESOLVED)
  (void)host;
  write_err(err, err_size, "unreachable: the loader refuses this library");
  *out = &fake_info;
  return trainhook_test_symbol_nobody_defines() == 0 ? TH_OK : TH_ERROR;
#else
  (void)host;
  (void)err;
  (void)err_size;
  *out = &fake_info;
  return TH_OK;
#endif
}
#endif
