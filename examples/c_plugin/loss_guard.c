/* An example Trainhook plugin in plain C (C11, the SDK's C headers only), for docs/plugins.md.
 *
 * "loss_guard" (kind callback, `--callbacks loss_guard`) stops training when a
 * logged "loss" is NaN, infinite, or above max_loss (plugin_config
 * loss_guard.max_loss, default 1e6), as a user would want before wasting the
 * rest of a run; it says why through the host's logger. Built and run by
 * tests/sdk (test_c_example.cpp), which drives it through the C ABI, and
 * built with its CMakeLists.txt against an installed SDK only
 * (tests/sdk/sdk_only_package_test.sh).
 *
 * Build it with CMake (CMakeLists.txt next to this file), or alone:
 *   cc -std=c11 -shared -fPIC -fvisibility=hidden -I<prefix>/include \
 *      -I<prefix>/include/trainhook/third_party loss_guard.c -o libtrainhook_loss_guard.so
 * (the second folder holds the DLPack header the SDK ships, which abi.h includes). */

/* It uses nothing newer than ABI 1.0 (th_host.log, th_values, th_control), so it
 * declares that a 1.0 host is enough: one binary loads on every 1.x host. */
#ifndef TRAINHOOK_ABI_MIN_MINOR
#define TRAINHOOK_ABI_MIN_MINOR 0
#endif
#include <trainhook/abi.h>
#include <trainhook/plugin_config.h>
#include <trainhook/plugin_entry.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct loss_guard {
  const th_host* host; /* outlives the instance */
  double max_loss;
} loss_guard;

static void write_err(char* err, size_t err_size, const char* msg) {
  if (err == NULL || err_size == 0) return;
  strncpy(err, msg, err_size - 1);
  err[err_size - 1] = '\0';
}

static void host_log(const th_host* host, int32_t level, const char* msg) {
  if (host != NULL && host->log != NULL) host->log(host->ctx, level, msg);
}

/* The one setting, read from this callback's plugin_config section (a JSON
 * object) with the SDK's C reader (trainhook/plugin_config.h), which C++
 * plugins parse through too: the same strict JSON, and a number may come as
 * JSON (--plugin_config loss_guard.max_loss=5 gives "max_loss": 5) or as text
 * ("5", from a config file). Any other key is an error, as in every plugin. */
static int read_max_loss(const char* config_json, double* out, char* err, size_t err_size) {
  char msg[256];
  size_t pos = 0;
  th_cfg_value key, value;
  if (!th_cfg_check(config_json, msg, sizeof msg)) {
    snprintf(err, err_size, "plugin_config loss_guard: not a valid JSON object: %s", msg);
    return 0;
  }
  while (th_cfg_next(config_json, &pos, &key, &value) == 1) {
    char name[64];
    if (th_cfg_key_is(&key, "max_loss")) {
      if (!th_cfg_number(&value, out) || !(*out > 0)) {
        snprintf(err, err_size, "plugin_config loss_guard.max_loss: expected a number > 0, got %.*s",
                 (int)(value.len < 80 ? value.len : 80), value.text);
        return 0;
      }
      continue;
    }
    th_cfg_string(&key, name, sizeof name);
    snprintf(err, err_size, "plugin_config loss_guard: unknown key '%s'; keys: max_loss", name);
    return 0;
  }
  return 1;
}

static th_status on_event(void* self, const th_event_args* args, char* err, size_t err_size) {
  loss_guard* g = (loss_guard*)self;
  const th_values* v = args->values;
  uint32_t i;
  (void)err;
  (void)err_size;
  if (args->event != TH_EVENT_LOG || v == NULL) return TH_OK;
  for (i = 0; i < v->count; ++i) {
    char line[160];
    double loss = v->values[i];
    if (strcmp(v->keys[i], "loss") != 0) continue;
    if (isfinite(loss) && loss <= g->max_loss) return TH_OK;
    snprintf(line, sizeof line, "loss %g at step %lld is %s; stopping training", loss,
             (long long)args->state->global_step, isfinite(loss) ? "above max_loss" : "not finite");
    host_log(g->host, TH_LOG_WARN, line);
    args->control->should_training_stop = 1; /* HF's rule: the loop ends after this step */
    return TH_OK;
  }
  return TH_OK;
}

static void destroy(void* self) { free(self); }

static th_status create(const th_host* host, const char* config_json, void** out_self, char* err,
                        size_t err_size) {
  loss_guard* g = (loss_guard*)calloc(1, sizeof(loss_guard));
  if (g == NULL) {
    write_err(err, err_size, "loss_guard: out of memory");
    return TH_ERROR;
  }
  g->host = host;
  g->max_loss = 1e6;
  if (!read_max_loss(config_json, &g->max_loss, err, err_size)) {
    free(g);
    return TH_INVALID_ARGUMENT; /* the host names the plugin and shows err */
  }
  *out_self = g;
  return TH_OK;
}

/* Stateless: no save_state / load_state. */
static const th_callback_vtable vtable = {TH_CALLBACK_VTABLE_STRUCT_SIZE, on_event, NULL, NULL, destroy};

static const th_callback_info callback = {
    TH_CALLBACK_INFO_STRUCT_SIZE,
    "loss_guard",
    "1.0.0",
    TH_KIND_CALLBACK,
    "stops training when the logged loss is not finite or above max_loss",
    TH_EVENT_BIT(TH_EVENT_LOG),
    create,
    &vtable};
static const th_callback_info* const callbacks[] = {&callback};

/* The library's description (TRAINHOOK_ABI_MIN_MINOR above: the oldest host
 * minor it needs) and its exported entry, which refuses a host of another ABI
 * major (trainhook/plugin_entry.h). */
TH_PLUGIN_ENTRY("loss_guard", "1.0.0", callbacks)
