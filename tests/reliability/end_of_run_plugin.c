/* Plugins that misbehave at the end of a run, for end_of_run.sh ("the
 * final model lost"): callback "end_hang" never returns from
 * on_train_end (an integration flushing to a dead server), "end_exit" calls
 * exit(3) there. Each says on stderr when it is in on_train_end, so the test
 * can send a signal at that moment without guessing a delay. */
#define _POSIX_C_SOURCE 200809L
#include <trainhook/abi.h>
#include <trainhook/plugin_entry.h>

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static th_status hang_on_event(void* self, const th_event_args* args, char* err, size_t err_size) {
  (void)self;
  (void)err;
  (void)err_size;
  if (args->event != TH_EVENT_TRAIN_END) return TH_OK;
  fprintf(stderr, "end_hang: in on_train_end, never returning\n");
  fflush(stderr);
  for (;;) {
    struct timespec t = {1000, 0};
    nanosleep(&t, NULL);
  }
}
static th_status exit_on_event(void* self, const th_event_args* args, char* err, size_t err_size) {
  (void)self;
  (void)err;
  (void)err_size;
  if (args->event != TH_EVENT_TRAIN_END) return TH_OK;
  fprintf(stderr, "end_exit: in on_train_end, calling exit(3)\n");
  fflush(stderr);
  exit(3);
}
static void end_destroy(void* self) { (void)self; }
static int end_instance;
static th_status end_create(const th_host* host, const char* config_json, void** out_self, char* err,
                            size_t err_size) {
  (void)host;
  (void)config_json;
  (void)err;
  (void)err_size;
  *out_self = &end_instance;
  return TH_OK;
}
static const th_callback_vtable hang_vtable = {TH_CALLBACK_VTABLE_STRUCT_SIZE, hang_on_event, NULL, NULL,
                                               end_destroy};
static const th_callback_vtable exit_vtable = {TH_CALLBACK_VTABLE_STRUCT_SIZE, exit_on_event, NULL, NULL,
                                               end_destroy};
static const th_callback_info hang_callback = {TH_CALLBACK_INFO_STRUCT_SIZE,
                                               "end_hang",
                                               "1.0.0",
                                               TH_KIND_CALLBACK,
                                               "never returns from on_train_end",
                                               TH_EVENT_BIT(TH_EVENT_TRAIN_END),
                                               end_create,
                                               &hang_vtable};
static const th_callback_info exit_callback = {TH_CALLBACK_INFO_STRUCT_SIZE,
                                               "end_exit",
                                               "1.0.0",
                                               TH_KIND_CALLBACK,
                                               "calls exit(3) in on_train_end",
                                               TH_EVENT_BIT(TH_EVENT_TRAIN_END),
                                               end_create,
                                               &exit_vtable};
static const th_callback_info* const end_callback_ptrs[] = {&hang_callback, &exit_callback};
TH_PLUGIN_ENTRY("end_of_run", "1.0.0", end_callback_ptrs)
