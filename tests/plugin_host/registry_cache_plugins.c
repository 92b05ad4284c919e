/* Libraries for the registry cache and scan tests (test_registry_cache.cpp,
 * test_plugin_scan.cpp, cli_plugin_scan.sh), one per compile definition, each
 * exporting one harmless callback (CALLBACK_NAME):
 *   VARIANT=1,2,3  "replaceable", which the tests copy over one another in
 *                  place (same size, inode, mtime): 1 is version 1.0.0 and logs
 *                  "variant=1" when its callback is created; 2 is 2.0.0 and
 *                  logs "variant=2"; 3 is 1.0.0 as 1 and logs "variant=3": it
 *                  differs from 1 only in the code of variant_mark(), so only
 *                  its bytes (the SHA-256) tell the two apart. Every string has
 *                  one length in all three, so the files have one size (the
 *                  tests still pad the shorter one if not).
 *   DAEMON_CTOR    the constructor forks a child that sleeps forever with every
 *                  descriptor it inherited (the scanner's pipes included) and
 *                  writes the child's pid to $TRAINHOOK_TEST_DAEMON_PID_FILE;
 *                  the library then answers at once
 *   GATED_CTOR     the constructor waits until the file $TRAINHOOK_TEST_SCAN_GATE
 *                  exists (no wait when the variable is unset), so a test
 *                  decides whether a scan answers or times out */
#define _POSIX_C_SOURCE 200809L
#include <trainhook/abi.h>
#include <trainhook/plugin_entry.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#ifndef PLUGIN_NAME
#error "PLUGIN_NAME is the plugin's name, as in the library's file name"
#endif

#if defined(VARIANT) && VARIANT == 2
#define PLUGIN_VERSION "2.0.0"
#else
#define PLUGIN_VERSION "1.0.0"
#endif

#if defined(VARIANT)
static int variant_mark(void) { return VARIANT; }
#elif defined(DAEMON_CTOR)
__attribute__((constructor)) static void on_load(void) {
  const char* pid_file = getenv("TRAINHOOK_TEST_DAEMON_PID_FILE");
  const pid_t child = fork();
  if (child == 0) {
    for (;;) pause();
  }
  if (child > 0 && pid_file != NULL) {
    char text[32];
    const int n = snprintf(text, sizeof text, "%ld\n", (long)child);
    const int fd = open(pid_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
      if (write(fd, text, (size_t)n) != n) perror(pid_file);
      close(fd);
    }
  }
}
#elif defined(GATED_CTOR)
__attribute__((constructor)) static void on_load(void) {
  const char* gate = getenv("TRAINHOOK_TEST_SCAN_GATE");
  const struct timespec tick = {0, 1000000};
  if (gate == NULL) return;
  while (access(gate, F_OK) != 0) nanosleep(&tick, NULL);
}
#else
#error "define VARIANT, DAEMON_CTOR or GATED_CTOR"
#endif

static int g_instance;

static th_status on_event(void* self, const th_event_args* args, char* err, size_t err_size) {
  (void)self;
  (void)args;
  (void)err;
  (void)err_size;
  return TH_OK;
}

static void destroy(void* self) { (void)self; }

static th_status create(const th_host* host, const char* config_json, void** out_self, char* err,
                        size_t err_size) {
  (void)config_json;
  (void)err;
  (void)err_size;
#if defined(VARIANT)
  {
    char line[32];
    snprintf(line, sizeof line, "variant=%d", variant_mark());
    if (host != NULL && host->log != NULL) host->log(host->ctx, TH_LOG_INFO, line);
  }
#else
  (void)host;
#endif
  *out_self = &g_instance;
  return TH_OK;
}

static const th_callback_vtable vtable = {TH_CALLBACK_VTABLE_STRUCT_SIZE, on_event, NULL, NULL, destroy};
static const th_callback_info callbacks[] = {
    {TH_CALLBACK_INFO_STRUCT_SIZE, CALLBACK_NAME, PLUGIN_VERSION, TH_KIND_CALLBACK,
     "a library for the registry cache tests", TH_EVENT_MASK_ALL, create, &vtable},
};
static const th_callback_info* const callback_ptrs[] = {&callbacks[0]};
TH_PLUGIN_ENTRY(PLUGIN_NAME, PLUGIN_VERSION, callback_ptrs)
