/* Test plugin for failure_event.sh: what a run that ends by an error tells its
 * callbacks (ABI 1.3 on_exception), read from C behind TH_HAS_FIELD.
 *   "failure_probe"  prints one line per on_exception ("failure_probe:
 *                    on_exception kind=<name> step=<n> message=<text>") and
 *                    per on_train_end, and "failure_probe: step <n>" at each
 *                    step end; FAILURE_PROBE_STEP_MS (milliseconds) slows each
 *                    step end, so a test can signal a run that is still training;
 *                    with FAILURE_PROBE_HOLD=1, once th_host.stop_signal says a
 *                    first signal arrived, the step end says "failure_probe:
 *                    holding" and waits (60 s at most) until th_host.end_requested
 *                    (a second signal), so the second signal lands mid-training.
 *   "step_fail"      fails on_step_end at step FAILURE_PROBE_FAIL_AT.
 *   "exception_hang" never returns from on_exception.
 * The lines go to stderr, which an isolated callback's runner shares. */
#define _POSIX_C_SOURCE 200809L
#include <trainhook/abi.h>
#include <trainhook/plugin_entry.h>

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long env_long(const char* name, long fallback) {
  const char* v = getenv(name);
  return v != NULL && *v != '\0' ? strtol(v, NULL, 10) : fallback;
}

static const char* kind_name(int32_t kind) {
  switch (kind) {
    case TH_FAILURE_OUT_OF_MEMORY:
      return "out_of_memory";
    case TH_FAILURE_PLUGIN:
      return "plugin";
    case TH_FAILURE_SIGNAL:
      return "signal";
    case TH_FAILURE_NON_FINITE:
      return "non_finite";
    default:
      return "error";
  }
}

/* The whole time, even when a signal interrupts it. */
static void sleep_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&t, &t) != 0) {
  }
}

static const th_host* g_host;

static th_status probe_on_event(void* self, const th_event_args* args, char* err, size_t err_size) {
  (void)self;
  (void)err;
  (void)err_size;
  if (args->event == TH_EVENT_STEP_END) {
    fprintf(stderr, "failure_probe: step %lld\n", (long long)args->state->global_step);
    fflush(stderr);
    sleep_ms(env_long("FAILURE_PROBE_STEP_MS", 0));
    if (env_long("FAILURE_PROBE_HOLD", 0) == 1 && TH_HAS_FIELD(g_host, th_host, stop_signal) &&
        g_host->stop_signal(g_host->ctx) != 0) {
      fprintf(stderr, "failure_probe: holding\n");
      fflush(stderr);
      for (int i = 0; i < 1200 && g_host->end_requested(g_host->ctx) == 0; ++i) sleep_ms(50);
    }
  } else if (args->event == TH_EVENT_TRAIN_END) {
    fprintf(stderr, "failure_probe: on_train_end\n");
  } else if (args->event == TH_EVENT_EXCEPTION) {
    /* A host before 1.3 never sends EXCEPTION; the check is what a plugin that
     * reads a newer field does. */
    const th_failure* f = TH_HAS_FIELD(args, th_event_args, failure) ? args->failure : NULL;
    if (f == NULL) {
      fprintf(stderr, "failure_probe: on_exception without a failure\n");
    } else {
      fprintf(stderr, "failure_probe: on_exception kind=%s step=%lld message=%s\n",
              kind_name(TH_HAS_FIELD(f, th_failure, kind) ? f->kind : TH_FAILURE_ERROR),
              (long long)(TH_HAS_FIELD(f, th_failure, step) ? f->step : -1),
              TH_HAS_FIELD(f, th_failure, message) && f->message != NULL ? f->message : "(none)");
    }
  }
  fflush(stderr);
  return TH_OK;
}

static th_status fail_on_event(void* self, const th_event_args* args, char* err, size_t err_size) {
  (void)self;
  if (args->event == TH_EVENT_STEP_END && args->state->global_step == env_long("FAILURE_PROBE_FAIL_AT", -1)) {
    snprintf(err, err_size, "step_fail: failing at step %lld as asked", (long long)args->state->global_step);
    return TH_ERROR;
  }
  return TH_OK;
}

static th_status hang_on_event(void* self, const th_event_args* args, char* err, size_t err_size) {
  (void)self;
  (void)err;
  (void)err_size;
  if (args->event != TH_EVENT_EXCEPTION) return TH_OK;
  fprintf(stderr, "exception_hang: in on_exception, never returning\n");
  fflush(stderr);
  for (;;) sleep_ms(1000000);
}

static void probe_destroy(void* self) { (void)self; }
static int probe_instance;
static th_status probe_create(const th_host* host, const char* config_json, void** out_self, char* err,
                              size_t err_size) {
  (void)config_json;
  (void)err;
  (void)err_size;
  g_host = host;
  *out_self = &probe_instance;
  return TH_OK;
}

static const th_callback_vtable probe_vtable = {TH_CALLBACK_VTABLE_STRUCT_SIZE, probe_on_event, NULL, NULL,
                                                probe_destroy};
static const th_callback_vtable fail_vtable = {TH_CALLBACK_VTABLE_STRUCT_SIZE, fail_on_event, NULL, NULL,
                                               probe_destroy};
static const th_callback_vtable hang_vtable = {TH_CALLBACK_VTABLE_STRUCT_SIZE, hang_on_event, NULL, NULL,
                                               probe_destroy};
static const th_callback_info probe_callback = {
    TH_CALLBACK_INFO_STRUCT_SIZE,
    "failure_probe",
    "1.0.0",
    TH_KIND_CALLBACK,
    "prints what on_exception and on_train_end carry",
    TH_EVENT_BIT(TH_EVENT_EXCEPTION) | TH_EVENT_BIT(TH_EVENT_TRAIN_END) | TH_EVENT_BIT(TH_EVENT_STEP_END),
    probe_create,
    &probe_vtable};
static const th_callback_info fail_callback = {TH_CALLBACK_INFO_STRUCT_SIZE,
                                               "step_fail",
                                               "1.0.0",
                                               TH_KIND_CALLBACK,
                                               "fails on_step_end at step FAILURE_PROBE_FAIL_AT",
                                               TH_EVENT_BIT(TH_EVENT_STEP_END),
                                               probe_create,
                                               &fail_vtable};
static const th_callback_info hang_callback = {TH_CALLBACK_INFO_STRUCT_SIZE,
                                               "exception_hang",
                                               "1.0.0",
                                               TH_KIND_CALLBACK,
                                               "never returns from on_exception",
                                               TH_EVENT_BIT(TH_EVENT_EXCEPTION),
                                               probe_create,
                                               &hang_vtable};
static const th_callback_info* const probe_callback_ptrs[] = {&probe_callback, &fail_callback,
                                                              &hang_callback};
TH_PLUGIN_ENTRY("failure_probe", "1.0.0", probe_callback_ptrs)
