/* A callback that fails the run, for the end-to-end failure case of the
 * integrations (run_scenarios.py --scenario cli_failed): "fail_at_step"
 * returns an error from on_log once global_step reaches 4, so with
 * plugin_error_policy=fail the trainer ends the run by EXCEPTION and the
 * wandb and tensorboard integrations must close their runs as failed. */
#include <trainhook/abi.h>
#include <trainhook/plugin_entry.h>

#include <stddef.h>
#include <stdio.h>

static th_status fail_on_event(void* self, const th_event_args* args, char* err, size_t err_size) {
  (void)self;
  if (args->event != TH_EVENT_LOG || args->state->global_step < 4) return TH_OK;
  snprintf(err, err_size, "fail_at_step: the test callback fails at step %lld",
           (long long)args->state->global_step);
  return TH_ERROR;
}
static void fail_destroy(void* self) { (void)self; }
static int fail_instance;
static th_status fail_create(const th_host* host, const char* config_json, void** out_self, char* err,
                             size_t err_size) {
  (void)host;
  (void)config_json;
  (void)err;
  (void)err_size;
  *out_self = &fail_instance;
  return TH_OK;
}
static const th_callback_vtable fail_vtable = {TH_CALLBACK_VTABLE_STRUCT_SIZE, fail_on_event, NULL, NULL,
                                               fail_destroy};
static const th_callback_info fail_callback = {TH_CALLBACK_INFO_STRUCT_SIZE,
                                               "fail_at_step",
                                               "1.0.0",
                                               TH_KIND_CALLBACK,
                                               "fails on_log from global_step 4 on",
                                               TH_EVENT_BIT(TH_EVENT_LOG),
                                               fail_create,
                                               &fail_vtable};
static const th_callback_info* const fail_callback_ptrs[] = {&fail_callback};
TH_PLUGIN_ENTRY("fail_at_step", "1.0.0", fail_callback_ptrs)
