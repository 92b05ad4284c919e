/* Plugins whose structs do not have this SDK's sizes, one per compile definition
 * (tests/sdk/CMakeLists.txt builds each into its own folder):
 *   LAYOUT_SMALLER  a plugin built against an OLDER header (simulates a 1.0
 *                   plugin under a 1.x host): its th_plugin_info ends at
 *                   `callbacks` (no commands fields) and its callback infos sit
 *                   in larger blocks of memory. Every byte past each struct's
 *                   struct_size is poison (0xA5), so a host that reads past
 *                   struct_size, or strides over the callbacks with its own
 *                   sizeof, sees garbage command tables and callback names.
 *                   Must load, and its two callbacks must work.
 *   LAYOUT_LARGER   a plugin built against a NEWER header (minor + 1) whose
 *                   th_plugin_info has an extra field: must be refused.
 * Strict C11, like test_abi_c.c. */
#include <trainhook/abi.h>

#include <stdio.h>
#include <string.h>

#define POISON 0xA5

typedef struct counter {
  int events;
  int saves_requested;
} counter;

static counter g_instances[4];
static int g_next;
static const th_host* g_hosts[4];

static th_status on_event(void* self, const th_event_args* args, char* err, size_t err_size) {
  counter* c = (counter*)self;
  (void)err;
  (void)err_size;
  c->events += 1;
  /* Request a save on every second STEP_END, through the host's th_control. */
  if (args->event == TH_EVENT_STEP_END && args->state->global_step % 2 == 0) {
    args->control->should_save = 1;
    c->saves_requested += 1;
  }
  if (args->event == TH_EVENT_TRAIN_END) {
    const th_host* host = g_hosts[c - g_instances];
    char line[64];
    snprintf(line, sizeof line, "events=%d saves=%d", c->events, c->saves_requested);
    if (host != NULL && host->struct_size >= TH_STRUCT_SIZE(th_host, log) && host->log != NULL)
      host->log(host->ctx, TH_LOG_INFO, line);
  }
  return TH_OK;
}
static void destroy(void* self) { (void)self; }
static th_status create(const th_host* host, const char* config_json, void** out_self, char* err,
                        size_t err_size) {
  (void)config_json;
  if (g_next >= 4) {
    snprintf(err, err_size, "layout plugin: at most 4 instances");
    return TH_ERROR;
  }
  memset(&g_instances[g_next], 0, sizeof g_instances[g_next]);
  g_hosts[g_next] = host;
  *out_self = &g_instances[g_next++];
  return TH_OK;
}
static const th_callback_vtable g_vtable = {TH_CALLBACK_VTABLE_STRUCT_SIZE, on_event, NULL, NULL, destroy};

#if defined(LAYOUT_SMALLER)

/* th_plugin_info as an older header declares it: no command_count/commands. */
typedef struct old_plugin_info {
  uint32_t struct_size;
  uint32_t abi_major;
  uint32_t abi_minor;
  const char* name;
  const char* version;
  uint32_t callback_count;
  const th_callback_info* const* callbacks;
} old_plugin_info;

/* The old struct followed by poison where a newer header has more fields. */
static struct {
  old_plugin_info info;
  unsigned char poison[64];
} g_plugin;

/* Each callback info in a block larger than the host's th_callback_info. */
typedef struct padded_callback {
  th_callback_info info;
  unsigned char poison[40];
} padded_callback;
static padded_callback g_callbacks[2];
static const th_callback_info* g_callback_ptrs[2];

static void fill_callback(padded_callback* p, const char* name) {
  memset(p, POISON, sizeof *p);
  p->info.struct_size = TH_CALLBACK_INFO_STRUCT_SIZE;
  p->info.name = name;
  p->info.version = "1.0.0";
  p->info.kind = TH_KIND_CALLBACK;
  p->info.description = "counts events (built against an older, smaller header)";
  p->info.event_mask = TH_EVENT_MASK_ALL;
  p->info.create = create;
  p->info.vtable = &g_vtable;
}

TRAINHOOK_EXPORT th_status TRAINHOOK_ENTRY_NAME(const th_host_info* host, const th_plugin_info** out,
                                                char* err, size_t err_size) {
  if (host == NULL || host->abi_major != TRAINHOOK_ABI_VERSION_MAJOR) {
    snprintf(err, err_size, "layout plugin needs ABI major 1");
    return TH_ABI_MISMATCH;
  }
  fill_callback(&g_callbacks[0], "small_a");
  fill_callback(&g_callbacks[1], "small_b");
  g_callback_ptrs[0] = &g_callbacks[0].info;
  g_callback_ptrs[1] = &g_callbacks[1].info;
  memset(&g_plugin, POISON, sizeof g_plugin);
  g_plugin.info.struct_size = (uint32_t)TH_STRUCT_SIZE(old_plugin_info, callbacks);
  g_plugin.info.abi_major = TRAINHOOK_ABI_VERSION_MAJOR;
  g_plugin.info.abi_minor = 0;
  g_plugin.info.name = "small_layout";
  g_plugin.info.version = "1.0.0";
  g_plugin.info.callback_count = 2;
  g_plugin.info.callbacks = g_callback_ptrs;
  *out = (const th_plugin_info*)(const void*)&g_plugin.info;
  return TH_OK;
}

#elif defined(LAYOUT_LARGER)

/* th_plugin_info as a newer header (minor + 1) might declare it. */
typedef struct new_plugin_info {
  th_plugin_info base;
  const char* homepage; /* a field this host does not know */
} new_plugin_info;

static th_callback_info g_callback;
static const th_callback_info* g_callback_ptrs[1];
static new_plugin_info g_plugin;

TRAINHOOK_EXPORT th_status TRAINHOOK_ENTRY_NAME(const th_host_info* host, const th_plugin_info** out,
                                                char* err, size_t err_size) {
  (void)host;
  (void)err;
  (void)err_size;
  g_callback.struct_size = TH_CALLBACK_INFO_STRUCT_SIZE;
  g_callback.name = "large_cb";
  g_callback.version = "1.1.0";
  g_callback.kind = TH_KIND_CALLBACK;
  g_callback.description = "built against a newer header";
  g_callback.event_mask = TH_EVENT_MASK_ALL;
  g_callback.create = create;
  g_callback.vtable = &g_vtable;
  g_callback_ptrs[0] = &g_callback;
  g_plugin.base.struct_size = (uint32_t)TH_STRUCT_SIZE(new_plugin_info, homepage);
  g_plugin.base.abi_major = TRAINHOOK_ABI_VERSION_MAJOR;
  g_plugin.base.abi_minor = TRAINHOOK_ABI_VERSION_MINOR + 1;
  g_plugin.base.name = "large_layout";
  g_plugin.base.version = "1.1.0";
  g_plugin.base.callback_count = 1;
  g_plugin.base.callbacks = g_callback_ptrs;
  g_plugin.homepage = "https://example.invalid";
  *out = &g_plugin.base;
  return TH_OK;
}

#else
#error "define LAYOUT_SMALLER or LAYOUT_LARGER"
#endif
