/* Plugins that end or hold a run in the middle of training, for
 * plugin_exit.sh and output_dir_lock.sh:
 *   step_exit        calls exit(0) in on_step_end at global_step 5
 *   step_quick_exit  calls quick_exit(0) there
 *   thread_exit      at global_step 3 wakes its own pthread, which calls
 *                    exit(0) while the training thread waits in on_step_end
 *   hold_run         at global_step 3 (after checkpoint-2 with --save_steps 2)
 *                    waits in on_step_end for up to 120 s, so the test can
 *                    start a second run while this one holds output_dir
 *   kill_worker      SIGKILLs its own process in on_step_end at global_step
 *                    TRAINHOOK_TEST_KILL_STEP on the rank TRAINHOOK_TEST_KILL_RANK
 *                    of torchrun's first attempt (TORCHELASTIC_RESTART_COUNT 0),
 *                    so a test kills a worker after a given checkpoint, exactly
 *                    once, whatever the speed of the machine (ddp_torchrun.sh)
 * Each says on stderr when it acts, so the tests wait for a line, never a delay. */
#define _POSIX_C_SOURCE 200809L
#include <trainhook/abi.h>
#include <trainhook/plugin_entry.h>

#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void wait_seconds(int seconds) {
  for (int i = 0; i < seconds * 10; ++i) {
    struct timespec t = {0, 100000000};
    nanosleep(&t, NULL);
  }
}

static int64_t step_of(const th_event_args* args) {
  return args->event == TH_EVENT_STEP_END ? args->state->global_step : -1;
}

static th_status step_exit_on_event(void* self, const th_event_args* args, char* err, size_t err_size) {
  (void)self;
  (void)err;
  (void)err_size;
  if (step_of(args) != 5) return TH_OK;
  fprintf(stderr, "step_exit: calling exit(0) at step 5\n");
  fflush(stderr);
  exit(0);
}

static th_status step_quick_exit_on_event(void* self, const th_event_args* args, char* err, size_t err_size) {
  (void)self;
  (void)err;
  (void)err_size;
  if (step_of(args) != 5) return TH_OK;
  fprintf(stderr, "step_quick_exit: calling quick_exit(0) at step 5\n");
  fflush(stderr);
  quick_exit(0);
}

/* The worker of thread_exit: started in create(), woken at step 3. */
static pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_wake = PTHREAD_COND_INITIALIZER;
static int g_woken = 0;

static void* worker(void* arg) {
  (void)arg;
  pthread_mutex_lock(&g_mutex);
  while (!g_woken) pthread_cond_wait(&g_wake, &g_mutex);
  pthread_mutex_unlock(&g_mutex);
  fprintf(stderr, "thread_exit: calling exit(0) from the plugin's own thread\n");
  fflush(stderr);
  exit(0);
}

static th_status thread_exit_on_event(void* self, const th_event_args* args, char* err, size_t err_size) {
  (void)self;
  (void)err;
  (void)err_size;
  if (step_of(args) != 3) return TH_OK;
  pthread_mutex_lock(&g_mutex);
  g_woken = 1;
  pthread_cond_signal(&g_wake);
  pthread_mutex_unlock(&g_mutex);
  wait_seconds(60); /* the worker's exit() ends the process long before */
  return TH_OK;
}

static th_status hold_on_event(void* self, const th_event_args* args, char* err, size_t err_size) {
  (void)self;
  (void)err;
  (void)err_size;
  if (step_of(args) != 3) return TH_OK;
  fprintf(stderr, "hold_run: holding at step 3\n");
  fflush(stderr);
  wait_seconds(120);
  return TH_OK;
}

static int env_is(const char* name, const char* want) {
  const char* v = getenv(name);
  return v != NULL && strcmp(v, want) == 0;
}

static th_status kill_worker_on_event(void* self, const th_event_args* args, char* err, size_t err_size) {
  (void)self;
  (void)err;
  (void)err_size;
  const char* step = getenv("TRAINHOOK_TEST_KILL_STEP");
  const char* rank = getenv("TRAINHOOK_TEST_KILL_RANK");
  if (step == NULL || rank == NULL || step_of(args) != atoll(step) || !env_is("RANK", rank) ||
      !env_is("TORCHELASTIC_RESTART_COUNT", "0"))
    return TH_OK;
  fprintf(stderr, "kill_worker: SIGKILL to rank %s at step %s\n", rank, step);
  fflush(stderr);
  raise(SIGKILL);
  return TH_OK;
}

static int instance;
static th_status plain_create(const th_host* host, const char* config_json, void** out_self, char* err,
                              size_t err_size) {
  (void)host;
  (void)config_json;
  (void)err;
  (void)err_size;
  *out_self = &instance;
  return TH_OK;
}
static th_status thread_create(const th_host* host, const char* config_json, void** out_self, char* err,
                               size_t err_size) {
  pthread_t t;
  if (pthread_create(&t, NULL, worker, NULL) != 0) {
    snprintf(err, err_size, "thread_exit: cannot start its thread");
    return TH_ERROR;
  }
  pthread_detach(t);
  return plain_create(host, config_json, out_self, err, err_size);
}
static void plain_destroy(void* self) { (void)self; }

#define FAULT_CALLBACK(var, name, help, create, on_event)                                               \
  static const th_callback_vtable var##_vtable = {TH_CALLBACK_VTABLE_STRUCT_SIZE, on_event, NULL, NULL, \
                                                  plain_destroy};                                       \
  static const th_callback_info var = {                                                                 \
      TH_CALLBACK_INFO_STRUCT_SIZE,    name,   "1.0.0",      TH_KIND_CALLBACK, help,                    \
      TH_EVENT_BIT(TH_EVENT_STEP_END), create, &var##_vtable};

FAULT_CALLBACK(step_exit, "step_exit", "calls exit(0) at step 5", plain_create, step_exit_on_event)
FAULT_CALLBACK(step_quick_exit, "step_quick_exit", "calls quick_exit(0) at step 5", plain_create,
               step_quick_exit_on_event)
FAULT_CALLBACK(thread_exit, "thread_exit", "its own thread calls exit(0) at step 3", thread_create,
               thread_exit_on_event)
FAULT_CALLBACK(hold_run, "hold_run", "waits in on_step_end at step 3", plain_create, hold_on_event)
FAULT_CALLBACK(kill_worker, "kill_worker", "SIGKILLs one rank of torchrun's first attempt at a step",
               plain_create, kill_worker_on_event)

static const th_callback_info* const fault_callback_ptrs[] = {&step_exit, &step_quick_exit, &thread_exit,
                                                              &hold_run, &kill_worker};
TH_PLUGIN_ENTRY("run_faults", "1.0.0", fault_callback_ptrs)
