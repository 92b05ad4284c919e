/* A vendor library a plugin brings into the process, for process_end.sh:
 * built twice, as libprocess_end_vendor.so (the plugin library's DT_NEEDED
 * dependency) and as libprocess_end_lazy.so (dlopen'ed by the plugin in
 * create). Each starts its own worker thread (as an SDK's uploader does);
 * woken, the worker writes through a null pointer, so the faulting
 * instruction is in this library and no plugin frame is on its stack. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>

#ifndef VENDOR_PREFIX
#error "VENDOR_PREFIX names the library's functions"
#endif
#define VENDOR_JOIN_(a, b) a##b
#define VENDOR_JOIN(a, b) VENDOR_JOIN_(a, b)
#define VENDOR_FN(name) VENDOR_JOIN(VENDOR_PREFIX, name)

static int* volatile g_nowhere = NULL;
static pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_wake = PTHREAD_COND_INITIALIZER;
static int g_woken = 0;

static void* vendor_worker(void* arg) {
  (void)arg;
  pthread_mutex_lock(&g_mutex);
  while (!g_woken) pthread_cond_wait(&g_wake, &g_mutex);
  pthread_mutex_unlock(&g_mutex);
  fprintf(stderr, "vendor worker: writing through a null pointer\n");
  fflush(stderr);
  *g_nowhere = 42;
  return NULL;
}

/* Starts the worker; 0 on success. */
__attribute__((visibility("default"))) int VENDOR_FN(start)(void) {
  pthread_t t;
  if (pthread_create(&t, NULL, vendor_worker, NULL) != 0) return -1;
  pthread_detach(t);
  return 0;
}

/* Wakes the worker, which then crashes. */
__attribute__((visibility("default"))) void VENDOR_FN(crash_soon)(void) {
  pthread_mutex_lock(&g_mutex);
  g_woken = 1;
  pthread_cond_signal(&g_wake);
  pthread_mutex_unlock(&g_mutex);
}
