/* A callback that costs a known time: slow_step sleeps 5 ms in every
 * on_step_end, so a profile of 20 steps must show about 100 ms for it. What
 * it really spent (a loaded machine oversleeps) it measures itself and, when
 * destroyed, writes in nanoseconds to the file SLOW_STEP_REPORT names. */
#define _POSIX_C_SOURCE 200809L
#include <trainhook/abi.h>
#include <trainhook/plugin_entry.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int64_t g_spent_ns;

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static th_status slow_on_event(void* self, const th_event_args* args, char* err, size_t err_size) {
  (void)self;
  (void)args;
  (void)err;
  (void)err_size;
  const int64_t start = now_ns();
  struct timespec t = {0, 5000000};
  while (nanosleep(&t, &t) != 0) {
  }
  g_spent_ns += now_ns() - start;
  return TH_OK;
}

static int instance;
static th_status slow_create(const th_host* host, const char* config_json, void** out_self, char* err,
                             size_t err_size) {
  (void)host;
  (void)config_json;
  (void)err;
  (void)err_size;
  *out_self = &instance;
  return TH_OK;
}
static void slow_destroy(void* self) {
  (void)self;
  const char* report = getenv("SLOW_STEP_REPORT");
  if (report == NULL || *report == '\0') return;
  FILE* f = fopen(report, "w");
  if (f == NULL) return;
  fprintf(f, "%lld\n", (long long)g_spent_ns);
  fclose(f);
}

static const th_callback_vtable slow_vtable = {TH_CALLBACK_VTABLE_STRUCT_SIZE, slow_on_event, NULL, NULL,
                                               slow_destroy};
static const th_callback_info slow_step = {TH_CALLBACK_INFO_STRUCT_SIZE,
                                           "slow_step",
                                           "1.0.0",
                                           TH_KIND_CALLBACK,
                                           "sleeps 5 ms in every on_step_end",
                                           TH_EVENT_BIT(TH_EVENT_STEP_END),
                                           slow_create,
                                           &slow_vtable};
static const th_callback_info* const slow_callbacks[] = {&slow_step};
TH_PLUGIN_ENTRY("slow_step", "1.0.0", slow_callbacks)
