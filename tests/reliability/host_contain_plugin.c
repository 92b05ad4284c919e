/* Plugins that do to the process what an in-process plugin can (fork, signal
 * dispositions, descriptors 0-2, chdir), for host_contain.sh:
 *   fork_daemon         in on_train_begin forks a child that stays (a
 *                       telemetry daemon): it writes its PID to
 *                       $HOST_CONTAIN_PID_FILE and sleeps up to 300 s
 *   raw_fork_daemon     the same through a raw clone syscall, which runs no
 *                       pthread_atfork handlers (the lock stays held)
 *   fork_return         at global_step 3 forks and returns TH_OK in both
 *                       processes (a child that forgets _exit()); the parent
 *                       reaps it in on_train_end and prints its status
 *   term_ignore_create  SIGTERM and SIGINT to SIG_IGN in create
 *   term_handler_create its own non-chaining SIGTERM/SIGINT handler in create
 *   term_ignore_begin   SIG_IGN in on_train_begin
 *   term_handler_begin  its own handler in on_train_begin
 *   term_ignore_thread  SIG_IGN from its own thread, woken at step 3
 *   close_stdio         closes descriptors 1 and 2 in create
 *   chdir_away          chdir($HOST_CONTAIN_DIR) in create
 * Every callback prints "<name>: step 3" at step 3 and waits 10 ms at each
 * step end from there on, so a test can wait for a line and signal the run
 * while it trains. No fixed sleeps in the tests: each says when it acts. */
#define _GNU_SOURCE
#include <trainhook/abi.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void nap_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&t, &t) != 0 && errno == EINTR) {
  }
}

static int64_t step_of(const th_event_args* args) {
  return args->event == TH_EVENT_STEP_END ? args->state->global_step : -1;
}

/* Shared by every callback: the line the test waits for, then slow steps. */
static void pace(const char* name, const th_event_args* args) {
  const int64_t step = step_of(args);
  if (step == 3) {
    fprintf(stderr, "%s: step 3\n", name);
    fflush(stderr);
  }
  if (step >= 3) nap_ms(10);
}

/* The daemon's life, after fork or clone: only system calls (the child of a
 * threaded process). Writes its PID, then sleeps until killed (at most 300 s). */
static void daemon_body(void) {
  const int null_fd = open("/dev/null", O_RDWR);
  if (null_fd >= 0) {
    dup2(null_fd, 0);
    dup2(null_fd, 1);
    dup2(null_fd, 2);
  }
  setsid();
  const char* pid_file = getenv("HOST_CONTAIN_PID_FILE");
  if (pid_file != NULL) {
    char text[32];
    long pid = (long)syscall(SYS_getpid);
    int len = 0;
    char digits[24];
    do {
      digits[len++] = (char)('0' + pid % 10);
      pid /= 10;
    } while (pid > 0);
    for (int i = 0; i < len; ++i) text[i] = digits[len - 1 - i];
    text[len] = '\n';
    const int fd = open(pid_file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      if (write(fd, text, (size_t)len + 1) < 0) _exit(1);
      close(fd);
    }
  }
  for (int i = 0; i < 3000; ++i) nap_ms(100);
  _exit(0);
}

static th_status fork_daemon_on_event(void* self, const th_event_args* args, char* err, size_t err_size) {
  (void)self;
  if (args->event == TH_EVENT_TRAIN_BEGIN) {
    const pid_t pid = fork();
    if (pid < 0) {
      snprintf(err, err_size, "fork_daemon: fork failed: %s", strerror(errno));
      return TH_ERROR;
    }
    if (pid == 0) daemon_body();
    fprintf(stderr, "fork_daemon: started daemon PID %ld\n", (long)pid);
    fflush(stderr);
  }
  pace("fork_daemon", args);
  return TH_OK;
}

static th_status raw_fork_daemon_on_event(void* self, const th_event_args* args, char* err, size_t err_size) {
  (void)self;
  if (args->event == TH_EVENT_TRAIN_BEGIN) {
    /* clone(SIGCHLD) with no stack: fork without glibc's atfork handlers. */
    const long pid = syscall(SYS_clone, (long)SIGCHLD, 0L, 0L, 0L, 0L);
    if (pid < 0) {
      snprintf(err, err_size, "raw_fork_daemon: clone failed: %s", strerror(errno));
      return TH_ERROR;
    }
    if (pid == 0) daemon_body();
    fprintf(stderr, "raw_fork_daemon: started daemon PID %ld\n", pid);
    fflush(stderr);
  }
  pace("raw_fork_daemon", args);
  return TH_OK;
}

static pid_t g_child = 0;

static th_status fork_return_on_event(void* self, const th_event_args* args, char* err, size_t err_size) {
  (void)self;
  if (step_of(args) == 3) {
    fflush(stdout);
    fflush(stderr);
    const pid_t pid = fork();
    if (pid < 0) {
      snprintf(err, err_size, "fork_return: fork failed: %s", strerror(errno));
      return TH_ERROR;
    }
    if (pid == 0) return TH_OK; /* the bug: the child goes back into the trainer */
    g_child = pid;
    fprintf(stderr, "fork_return: forked child PID %ld\n", (long)pid);
    fflush(stderr);
  }
  if (args->event == TH_EVENT_TRAIN_END) {
    fprintf(stderr, "fork_return: on_train_end in PID %ld\n", (long)getpid());
    fflush(stderr);
    if (g_child > 0) {
      int status = 0;
      if (waitpid(g_child, &status, 0) == g_child) {
        if (WIFEXITED(status))
          fprintf(stderr, "fork_return: child PID %ld exited with status %d\n", (long)g_child,
                  WEXITSTATUS(status));
        else
          fprintf(stderr, "fork_return: child PID %ld ended otherwise (wait status %d)\n", (long)g_child,
                  status);
      } else {
        fprintf(stderr, "fork_return: waitpid failed: %s\n", strerror(errno));
      }
      fflush(stderr);
      g_child = 0;
    }
  }
  return TH_OK;
}

/* The non-chaining handler a plugin installs: it notes the signal and drops it. */
static void swallow(int sig) {
  (void)sig;
  static const char text[] = "term_handler: swallowed a signal\n";
  if (write(2, text, sizeof text - 1) < 0) return;
}

static void set_both(void (*handler)(int)) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
}

static th_status term_begin_ignore_on_event(void* self, const th_event_args* args, char* err,
                                            size_t err_size) {
  (void)self;
  (void)err;
  (void)err_size;
  if (args->event == TH_EVENT_TRAIN_BEGIN) set_both(SIG_IGN);
  pace("term_ignore_begin", args);
  return TH_OK;
}

static th_status term_begin_handler_on_event(void* self, const th_event_args* args, char* err,
                                             size_t err_size) {
  (void)self;
  (void)err;
  (void)err_size;
  if (args->event == TH_EVENT_TRAIN_BEGIN) set_both(swallow);
  pace("term_handler_begin", args);
  return TH_OK;
}

static th_status term_create_ignore_on_event(void* self, const th_event_args* args, char* err,
                                             size_t err_size) {
  (void)self;
  (void)err;
  (void)err_size;
  pace("term_ignore_create", args);
  return TH_OK;
}

static th_status term_create_handler_on_event(void* self, const th_event_args* args, char* err,
                                              size_t err_size) {
  (void)self;
  (void)err;
  (void)err_size;
  pace("term_handler_create", args);
  return TH_OK;
}

/* term_ignore_thread's worker: woken at step 3, sets SIG_IGN from its own thread. */
static pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_wake = PTHREAD_COND_INITIALIZER;
static int g_woken = 0;

static void* ignore_worker(void* arg) {
  (void)arg;
  pthread_mutex_lock(&g_mutex);
  while (!g_woken) pthread_cond_wait(&g_wake, &g_mutex);
  pthread_mutex_unlock(&g_mutex);
  set_both(SIG_IGN);
  fprintf(stderr, "term_ignore_thread: set SIG_IGN from its own thread\n");
  fflush(stderr);
  return NULL;
}

static th_status term_thread_on_event(void* self, const th_event_args* args, char* err, size_t err_size) {
  (void)self;
  (void)err;
  (void)err_size;
  if (step_of(args) == 3) {
    pthread_mutex_lock(&g_mutex);
    g_woken = 1;
    pthread_cond_signal(&g_wake);
    pthread_mutex_unlock(&g_mutex);
  }
  pace("term_ignore_thread", args);
  return TH_OK;
}

static th_status close_stdio_on_event(void* self, const th_event_args* args, char* err, size_t err_size) {
  (void)self;
  (void)err;
  (void)err_size;
  pace("close_stdio", args);
  return TH_OK;
}

static th_status chdir_on_event(void* self, const th_event_args* args, char* err, size_t err_size) {
  (void)self;
  (void)err;
  (void)err_size;
  pace("chdir_away", args);
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

static th_status ignore_create(const th_host* host, const char* config_json, void** out_self, char* err,
                               size_t err_size) {
  set_both(SIG_IGN);
  return plain_create(host, config_json, out_self, err, err_size);
}

static th_status handler_create(const th_host* host, const char* config_json, void** out_self, char* err,
                                size_t err_size) {
  set_both(swallow);
  return plain_create(host, config_json, out_self, err, err_size);
}

static th_status thread_create(const th_host* host, const char* config_json, void** out_self, char* err,
                               size_t err_size) {
  pthread_t t;
  if (pthread_create(&t, NULL, ignore_worker, NULL) != 0) {
    snprintf(err, err_size, "term_ignore_thread: cannot start its thread");
    return TH_ERROR;
  }
  pthread_detach(t);
  return plain_create(host, config_json, out_self, err, err_size);
}

static th_status close_stdio_create(const th_host* host, const char* config_json, void** out_self, char* err,
                                    size_t err_size) {
  fflush(stdout);
  fflush(stderr);
  close(1);
  close(2);
  return plain_create(host, config_json, out_self, err, err_size);
}

static th_status chdir_create(const th_host* host, const char* config_json, void** out_self, char* err,
                              size_t err_size) {
  const char* dir = getenv("HOST_CONTAIN_DIR");
  if (dir == NULL || chdir(dir) != 0) {
    snprintf(err, err_size, "chdir_away: cannot chdir to $HOST_CONTAIN_DIR (%s)", dir ? dir : "unset");
    return TH_ERROR;
  }
  return plain_create(host, config_json, out_self, err, err_size);
}

static void plain_destroy(void* self) { (void)self; }

#define STEPS (TH_EVENT_BIT(TH_EVENT_STEP_END))
#define BEGIN_AND_STEPS (TH_EVENT_BIT(TH_EVENT_TRAIN_BEGIN) | TH_EVENT_BIT(TH_EVENT_STEP_END))
#define CONTAIN_CALLBACK(var, name, help, mask, create, on_event)                                       \
  static const th_callback_vtable var##_vtable = {TH_CALLBACK_VTABLE_STRUCT_SIZE, on_event, NULL, NULL, \
                                                  plain_destroy};                                       \
  static const th_callback_info var = {                                                                 \
      TH_CALLBACK_INFO_STRUCT_SIZE, name, "1.0.0", TH_KIND_CALLBACK, help, mask, create, &var##_vtable};

CONTAIN_CALLBACK(fork_daemon, "fork_daemon", "forks a daemon that outlives the run", BEGIN_AND_STEPS,
                 plain_create, fork_daemon_on_event)
CONTAIN_CALLBACK(raw_fork_daemon, "raw_fork_daemon", "clones a daemon past the atfork handlers",
                 BEGIN_AND_STEPS, plain_create, raw_fork_daemon_on_event)
CONTAIN_CALLBACK(fork_return, "fork_return", "forks at step 3 and returns in the child too",
                 STEPS | TH_EVENT_BIT(TH_EVENT_TRAIN_END), plain_create, fork_return_on_event)
CONTAIN_CALLBACK(term_ignore_create, "term_ignore_create", "SIGTERM/SIGINT ignored in create", STEPS,
                 ignore_create, term_create_ignore_on_event)
CONTAIN_CALLBACK(term_handler_create, "term_handler_create", "own SIGTERM/SIGINT handler in create", STEPS,
                 handler_create, term_create_handler_on_event)
CONTAIN_CALLBACK(term_ignore_begin, "term_ignore_begin", "SIGTERM/SIGINT ignored in on_train_begin",
                 BEGIN_AND_STEPS, plain_create, term_begin_ignore_on_event)
CONTAIN_CALLBACK(term_handler_begin, "term_handler_begin", "own SIGTERM/SIGINT handler in on_train_begin",
                 BEGIN_AND_STEPS, plain_create, term_begin_handler_on_event)
CONTAIN_CALLBACK(term_ignore_thread, "term_ignore_thread", "SIGTERM/SIGINT ignored from its own thread",
                 STEPS, thread_create, term_thread_on_event)
CONTAIN_CALLBACK(close_stdio, "close_stdio", "closes descriptors 1 and 2 in create", STEPS,
                 close_stdio_create, close_stdio_on_event)
CONTAIN_CALLBACK(chdir_away, "chdir_away", "chdir($HOST_CONTAIN_DIR) in create", STEPS, chdir_create,
                 chdir_on_event)

static const th_callback_info* const contain_callback_ptrs[] = {
    &fork_daemon,       &raw_fork_daemon,    &fork_return,        &term_ignore_create, &term_handler_create,
    &term_ignore_begin, &term_handler_begin, &term_ignore_thread, &close_stdio,        &chdir_away};
static const th_plugin_info contain_info = {TH_PLUGIN_INFO_STRUCT_SIZE,
                                            TRAINHOOK_ABI_VERSION_MAJOR,
                                            TRAINHOOK_ABI_VERSION_MINOR,
                                            "host_contain",
                                            "1.0.0",
                                            sizeof contain_callback_ptrs / sizeof contain_callback_ptrs[0],
                                            contain_callback_ptrs,
                                            0,
                                            NULL};

TRAINHOOK_EXPORT th_status TRAINHOOK_ENTRY_NAME(const th_host_info* host, const th_plugin_info** out,
                                                char* err, size_t err_size) {
  (void)host;
  (void)err;
  (void)err_size;
  *out = &contain_info;
  return TH_OK;
}
