/* Plugins that run in process and misbehave outside any callback call, for
 * process_end.sh:
 *   thread_crash   starts its own thread in on_train_begin; at step 2 (after
 *                  on_train_begin returned long ago) it wakes the thread,
 *                  which writes through a null pointer while training goes on
 *   unload_crash   its create() arms the library's destructor
 *                  (__attribute__((destructor)), run when the library is
 *                  unloaded: at exit), which then writes through a null pointer
 *   destroy_crash  writes through a null pointer in its destroy()
 *   destroy_hang   its destroy() never returns (as one joining a worker stuck
 *                  on a dead server)
 *   exit_at_unload its create() arms the library destructor, which calls
 *                  exit(3) after the run (a vendor library's cleanup)
 *   vendor_crash   starts a worker thread of libprocess_end_vendor.so (this
 *                  library's DT_NEEDED dependency) in on_train_begin and
 *                  wakes it at step 2; the worker crashes in the vendor library
 *   lazy_crash     the same with libprocess_end_lazy.so, which its create()
 *                  dlopen()s from this library's folder
 * The library destructor does nothing unless unload_crash was created: the
 * scanner process loads this library too. Each case says on stderr when it
 * acts, so the test checks that the plugin got there. */
#define _GNU_SOURCE
#include <trainhook/abi.h>
#include <trainhook/plugin_entry.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* libprocess_end_vendor.so, linked (DT_NEEDED). */
int process_end_vendor_start(void);
void process_end_vendor_crash_soon(void);

static int* volatile g_nowhere = NULL;

static void crash_now(const char* who, const char* where) {
  fprintf(stderr, "%s: writing through a null pointer %s\n", who, where);
  fflush(stderr);
  *g_nowhere = 42;
}

/* thread_crash's thread: waits for step 2, then crashes. */
static pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_wake = PTHREAD_COND_INITIALIZER;
static int g_woken = 0;

static void* crashing_thread(void* arg) {
  (void)arg;
  pthread_mutex_lock(&g_mutex);
  while (!g_woken) pthread_cond_wait(&g_wake, &g_mutex);
  pthread_mutex_unlock(&g_mutex);
  crash_now("thread_crash", "from its own thread");
  return NULL;
}

static th_status thread_crash_on_event(void* self, const th_event_args* args, char* err, size_t err_size) {
  (void)self;
  if (args->event == TH_EVENT_TRAIN_BEGIN) {
    pthread_t t;
    if (pthread_create(&t, NULL, crashing_thread, NULL) != 0) {
      snprintf(err, err_size, "thread_crash: cannot start its thread");
      return TH_ERROR;
    }
    pthread_detach(t);
    return TH_OK;
  }
  if (args->event == TH_EVENT_STEP_END && args->state->global_step == 2) {
    pthread_mutex_lock(&g_mutex);
    g_woken = 1;
    pthread_cond_signal(&g_wake);
    pthread_mutex_unlock(&g_mutex);
  }
  return TH_OK;
}

/* unload_crash and exit_at_unload: set by create(), read by the library destructor. */
static volatile int g_crash_at_unload = 0;
static volatile int g_exit_at_unload = 0;

__attribute__((destructor)) static void on_unload(void) {
  if (g_crash_at_unload) crash_now("unload_crash", "in the library destructor");
  if (g_exit_at_unload) {
    fprintf(stderr, "exit_at_unload: calling exit(3) in the library destructor\n");
    fflush(stderr);
    exit(3);
  }
}

/* vendor_crash and lazy_crash: the vendor library's entry points in use. */
typedef int (*vendor_start_fn)(void);
typedef void (*vendor_crash_fn)(void);
static vendor_start_fn g_vendor_start = process_end_vendor_start;
static vendor_crash_fn g_vendor_crash = process_end_vendor_crash_soon;

static th_status vendor_on_event(void* self, const th_event_args* args, char* err, size_t err_size) {
  (void)self;
  if (args->event == TH_EVENT_TRAIN_BEGIN && g_vendor_start() != 0) {
    snprintf(err, err_size, "vendor: cannot start the vendor library's worker");
    return TH_ERROR;
  }
  if (args->event == TH_EVENT_STEP_END && args->state->global_step == 2) g_vendor_crash();
  return TH_OK;
}

static th_status quiet_on_event(void* self, const th_event_args* args, char* err, size_t err_size) {
  (void)self;
  (void)args;
  (void)err;
  (void)err_size;
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
static th_status unload_crash_create(const th_host* host, const char* config_json, void** out_self, char* err,
                                     size_t err_size) {
  g_crash_at_unload = 1;
  return plain_create(host, config_json, out_self, err, err_size);
}

static th_status exit_at_unload_create(const th_host* host, const char* config_json, void** out_self,
                                       char* err, size_t err_size) {
  g_exit_at_unload = 1;
  return plain_create(host, config_json, out_self, err, err_size);
}

/* lazy_crash: dlopen()s libprocess_end_lazy.so from this library's folder. */
static th_status lazy_crash_create(const th_host* host, const char* config_json, void** out_self, char* err,
                                   size_t err_size) {
  Dl_info self;
  if (dladdr(&instance, &self) == 0 || self.dli_fname == NULL) { /* a datum of this library */
    snprintf(err, err_size, "lazy_crash: cannot find its own file");
    return TH_ERROR;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s", self.dli_fname);
  char* slash = strrchr(path, '/');
  snprintf(slash != NULL ? slash + 1 : path, sizeof path - (size_t)(slash != NULL ? slash + 1 - path : 0),
           "libprocess_end_lazy.so");
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    snprintf(err, err_size, "lazy_crash: cannot load %s: %s", path, dlerror());
    return TH_ERROR;
  }
  /* POSIX's way to a function pointer from dlsym in strict C. */
  *(void**)(&g_vendor_start) = dlsym(lib, "process_end_lazy_start");
  *(void**)(&g_vendor_crash) = dlsym(lib, "process_end_lazy_crash_soon");
  if (g_vendor_start == NULL || g_vendor_crash == NULL) {
    snprintf(err, err_size, "lazy_crash: %s lacks its functions", path);
    return TH_ERROR;
  }
  return plain_create(host, config_json, out_self, err, err_size);
}

static void plain_destroy(void* self) { (void)self; }
static void crash_destroy(void* self) {
  (void)self;
  crash_now("destroy_crash", "in destroy()");
}
static void hang_destroy(void* self) {
  (void)self;
  fprintf(stderr, "destroy_hang: in destroy(), never returning\n");
  fflush(stderr);
  for (;;) pause();
}

#define END_CALLBACK(var, name, help, mask, create, on_event, destroy)                                  \
  static const th_callback_vtable var##_vtable = {TH_CALLBACK_VTABLE_STRUCT_SIZE, on_event, NULL, NULL, \
                                                  destroy};                                             \
  static const th_callback_info var = {                                                                 \
      TH_CALLBACK_INFO_STRUCT_SIZE, name, "1.0.0", TH_KIND_CALLBACK, help, mask, create, &var##_vtable};

END_CALLBACK(thread_crash, "thread_crash", "its own thread crashes at step 2",
             TH_EVENT_BIT(TH_EVENT_TRAIN_BEGIN) | TH_EVENT_BIT(TH_EVENT_STEP_END), plain_create,
             thread_crash_on_event, plain_destroy)
END_CALLBACK(unload_crash, "unload_crash", "its library destructor crashes", TH_EVENT_BIT(TH_EVENT_TRAIN_END),
             unload_crash_create, quiet_on_event, plain_destroy)
END_CALLBACK(destroy_crash, "destroy_crash", "crashes in destroy()", TH_EVENT_BIT(TH_EVENT_TRAIN_END),
             plain_create, quiet_on_event, crash_destroy)
END_CALLBACK(destroy_hang, "destroy_hang", "never returns from destroy()", TH_EVENT_BIT(TH_EVENT_TRAIN_END),
             plain_create, quiet_on_event, hang_destroy)

END_CALLBACK(exit_at_unload, "exit_at_unload", "its library destructor calls exit(3)",
             TH_EVENT_BIT(TH_EVENT_TRAIN_END), exit_at_unload_create, quiet_on_event, plain_destroy)
END_CALLBACK(vendor_crash, "vendor_crash", "a worker of the vendor library it links crashes at step 2",
             TH_EVENT_BIT(TH_EVENT_TRAIN_BEGIN) | TH_EVENT_BIT(TH_EVENT_STEP_END), plain_create,
             vendor_on_event, plain_destroy)
END_CALLBACK(lazy_crash, "lazy_crash", "a worker of a library it dlopen()s in create crashes at step 2",
             TH_EVENT_BIT(TH_EVENT_TRAIN_BEGIN) | TH_EVENT_BIT(TH_EVENT_STEP_END), lazy_crash_create,
             vendor_on_event, plain_destroy)

static const th_callback_info* const end_callback_ptrs[] = {
    &thread_crash, &unload_crash, &destroy_crash, &destroy_hang, &exit_at_unload, &vendor_crash, &lazy_crash};
TH_PLUGIN_ENTRY("process_end", "1.0.0", end_callback_ptrs)
