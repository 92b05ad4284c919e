/* A Trainhook plugin written in plain C (compiled as C11 with -Wpedantic): it
 * proves abi.h is usable without C++ and exercises the raw ABI the C++ layer
 * hides. One stateful callback, "c_counter":
 *  - counts every event it receives (mask: all events);
 *  - sets should_save at on_step_end when global_step is even;
 *  - logs "config=<config_json>" at creation and "events=<n>" at on_train_end;
 *  - saves/loads {"args": {}, "attributes": {"events": n}} (two-call buffer protocol). */
#include <trainhook/abi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct c_counter {
  const th_host* host;
  long events;
} c_counter;

static void write_err(char* err, size_t err_size, const char* msg) {
  if (err == NULL || err_size == 0) return;
  strncpy(err, msg, err_size - 1);
  err[err_size - 1] = '\0';
}

static void host_log(const th_host* host, const char* msg) {
  if (host != NULL && host->log != NULL) host->log(host->ctx, TH_LOG_INFO, msg);
}

static th_status c_on_event(void* self, const th_event_args* args, char* err, size_t err_size) {
  c_counter* c = (c_counter*)self;
  if (args == NULL || args->state == NULL || args->control == NULL) {
    write_err(err, err_size, "c_counter: event without state or control");
    return TH_INVALID_ARGUMENT;
  }
  c->events++;
  if (args->event == TH_EVENT_STEP_END && args->state->global_step % 2 == 0) args->control->should_save = 1;
  if (args->event == TH_EVENT_TRAIN_END) {
    char line[64];
    snprintf(line, sizeof line, "events=%ld", c->events);
    host_log(c->host, line);
  }
  return TH_OK;
}

static th_status c_save_state(void* self, char* buf, size_t buf_size, size_t* needed, char* err,
                              size_t err_size) {
  c_counter* c = (c_counter*)self;
  char text[96];
  int n = snprintf(text, sizeof text, "{\"args\": {}, \"attributes\": {\"events\": %ld}}", c->events);
  (void)err;
  (void)err_size;
  if (needed != NULL) *needed = (size_t)n + 1;
  if (buf == NULL || buf_size < (size_t)n + 1) return TH_BUFFER_TOO_SMALL;
  memcpy(buf, text, (size_t)n + 1);
  return TH_OK;
}

static th_status c_load_state(void* self, const char* state_json, char* err, size_t err_size) {
  c_counter* c = (c_counter*)self;
  const char* p = state_json != NULL ? strstr(state_json, "\"events\":") : NULL;
  if (p == NULL) {
    write_err(err, err_size, "c_counter: saved state has no \"events\"");
    return TH_INVALID_ARGUMENT;
  }
  c->events = strtol(p + strlen("\"events\":"), NULL, 10);
  return TH_OK;
}

static void c_destroy(void* self) { free(self); }

static th_status c_create(const th_host* host, const char* config_json, void** out_self, char* err,
                          size_t err_size) {
  c_counter* c = (c_counter*)calloc(1, sizeof(c_counter));
  char line[256];
  if (c == NULL) {
    write_err(err, err_size, "c_counter: out of memory");
    return TH_ERROR;
  }
  /* A host of a newer minor has a larger table; read only what ABI 1.0 has. */
  if (!TH_HAS_FIELD(host, th_host, request_stop)) {
    free(c);
    write_err(err, err_size, "c_counter: host table too small");
    return TH_ABI_MISMATCH;
  }
  c->host = host;
  snprintf(line, sizeof line, "config=%s", config_json != NULL ? config_json : "(null)");
  host_log(host, line);
  *out_self = c;
  return TH_OK;
}

static const th_callback_vtable c_vtable = {TH_CALLBACK_VTABLE_STRUCT_SIZE, c_on_event, c_save_state,
                                            c_load_state, c_destroy};

static const th_callback_info c_callbacks[] = {
    {TH_CALLBACK_INFO_STRUCT_SIZE, "c_counter", "0.3.0", TH_KIND_INTEGRATION,
     "counts events (a plugin in plain C)", TH_EVENT_MASK_ALL, c_create, &c_vtable},
};

static const th_callback_info* const c_callback_ptrs[] = {&c_callbacks[0]};

static const th_plugin_info c_info = {TH_PLUGIN_INFO_STRUCT_SIZE,
                                      TRAINHOOK_ABI_VERSION_MAJOR,
                                      TRAINHOOK_ABI_VERSION_MINOR,
                                      "c_plugin",
                                      "0.3.0",
                                      1,
                                      c_callback_ptrs,
                                      0,
                                      NULL};

TRAINHOOK_EXPORT th_status TRAINHOOK_ENTRY_NAME(const th_host_info* host, const th_plugin_info** out,
                                                char* err, size_t err_size) {
  if (host == NULL || host->abi_major != TRAINHOOK_ABI_VERSION_MAJOR) {
    write_err(err, err_size, "c_plugin needs trainhook ABI 1");
    return TH_ABI_MISMATCH;
  }
  *out = &c_info;
  return TH_OK;
}
