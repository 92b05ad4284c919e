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
 *   close_stdout_step   closes descriptor 1 in on_step_end at global_step 2
 *                       (a per-step event: checked at the step's end)
 *   close_stdout_log    closes descriptor 1 in on_log at global_step 2
 *                       (checked right after the call)
 *   umask_step          umask(0777) in on_step_end at global_step 2
 *   fsize_create        lowers the soft RLIMIT_FSIZE to 4096 bytes in create
 *   chdir_away          chdir($HOST_CONTAIN_DIR) in create
 * Every callback prints "<name>: step 3" at step 3 and waits 10 ms at each
 * step end from there on, so a test can wait for a line and signal the run
 * while it trains. No fixed sleeps in the tests: each says when it acts.
 * Each callback is a row of actions (struct behaviour) run by one create and
 * one on_event; the instance is its row. */
#define _GNU_SOURCE
#include <trainhook/abi.h>
#include <trainhook/plugin_entry.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void nap_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&t, &t) != 0 && errno == EINTR) {
  }
}

/* An action returns 0, or -1 with a message in err (the call then fails). */
typedef int (*action)(char* err, size_t err_size);

typedef struct behaviour {
  const char* name;
  action at_create;    /* in create() */
  action at_begin;     /* in on_train_begin */
  action at_step2;     /* in on_step_end at global_step 2 */
  action at_log2;      /* in on_log at global_step 2 */
  action at_step3;     /* in on_step_end at global_step 3, before the line */
  action at_train_end; /* in on_train_end */
} behaviour;

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
    char digits[24], text[24];
    long pid = (long)syscall(SYS_getpid);
    int len = 0;
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

static int started_daemon(long pid, const char* how, char* err, size_t err_size) {
  if (pid < 0) {
    snprintf(err, err_size, "%s failed: %s", how, strerror(errno));
    return -1;
  }
  if (pid == 0) daemon_body();
  fprintf(stderr, "%s: started daemon PID %ld\n", how, pid);
  fflush(stderr);
  return 0;
}

static int fork_a_daemon(char* err, size_t err_size) {
  return started_daemon((long)fork(), "fork", err, err_size);
}

/* clone(SIGCHLD) with no stack: a fork without glibc's atfork handlers. */
static int clone_daemon(char* err, size_t err_size) {
  return started_daemon(syscall(SYS_clone, (long)SIGCHLD, 0L, 0L, 0L, 0L), "clone", err, err_size);
}

static pid_t g_child = 0;

static int fork_and_return(char* err, size_t err_size) {
  fflush(stdout);
  fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) {
    snprintf(err, err_size, "fork_return: fork failed: %s", strerror(errno));
    return -1;
  }
  if (pid == 0) return 0; /* the bug: the child goes back into the trainer */
  g_child = pid;
  fprintf(stderr, "fork_return: forked child PID %ld\n", (long)pid);
  fflush(stderr);
  return 0;
}

static int reap_child(char* err, size_t err_size) {
  (void)err;
  (void)err_size;
  fprintf(stderr, "fork_return: on_train_end in PID %ld\n", (long)getpid());
  int status = 0;
  if (g_child > 0 && waitpid(g_child, &status, 0) == g_child) {
    if (WIFEXITED(status))
      fprintf(stderr, "fork_return: child PID %ld exited with status %d\n", (long)g_child,
              WEXITSTATUS(status));
    else
      fprintf(stderr, "fork_return: child PID %ld ended otherwise (wait status %d)\n", (long)g_child, status);
  }
  fflush(stderr);
  return 0;
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

static int ignore_both(char* err, size_t err_size) {
  (void)err;
  (void)err_size;
  set_both(SIG_IGN);
  return 0;
}

static int swallow_both(char* err, size_t err_size) {
  (void)err;
  (void)err_size;
  set_both(swallow);
  return 0;
}

/* term_ignore_thread's worker: started in create, woken at step 3, sets
 * SIG_IGN from its own thread. */
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

static int start_worker(char* err, size_t err_size) {
  pthread_t t;
  if (pthread_create(&t, NULL, ignore_worker, NULL) != 0) {
    snprintf(err, err_size, "term_ignore_thread: cannot start its thread");
    return -1;
  }
  pthread_detach(t);
  return 0;
}

static int wake_worker(char* err, size_t err_size) {
  (void)err;
  (void)err_size;
  pthread_mutex_lock(&g_mutex);
  g_woken = 1;
  pthread_cond_signal(&g_wake);
  pthread_mutex_unlock(&g_mutex);
  return 0;
}

static int close_stdout_stderr(char* err, size_t err_size) {
  (void)err;
  (void)err_size;
  fflush(stdout);
  fflush(stderr);
  close(1);
  close(2);
  return 0;
}

static int close_stdout(char* err, size_t err_size) {
  (void)err;
  (void)err_size;
  fflush(stdout);
  close(1);
  fprintf(stderr, "closed descriptor 1\n");
  fflush(stderr);
  return 0;
}

static int mask_everything(char* err, size_t err_size) {
  (void)err;
  (void)err_size;
  umask(0777);
  fprintf(stderr, "umask_step: set umask 0777\n");
  fflush(stderr);
  return 0;
}

static int limit_file_size(char* err, size_t err_size) {
  struct rlimit limit;
  if (getrlimit(RLIMIT_FSIZE, &limit) != 0) {
    snprintf(err, err_size, "fsize_create: getrlimit failed: %s", strerror(errno));
    return -1;
  }
  limit.rlim_cur = 4096;
  if (setrlimit(RLIMIT_FSIZE, &limit) != 0) {
    snprintf(err, err_size, "fsize_create: setrlimit failed: %s", strerror(errno));
    return -1;
  }
  return 0;
}

static int change_directory(char* err, size_t err_size) {
  const char* dir = getenv("HOST_CONTAIN_DIR");
  if (dir == NULL || chdir(dir) != 0) {
    snprintf(err, err_size, "chdir_away: cannot chdir to $HOST_CONTAIN_DIR (%s)", dir ? dir : "unset");
    return -1;
  }
  return 0;
}

static th_status run(action a, char* err, size_t err_size) {
  return a == NULL || a(err, err_size) == 0 ? TH_OK : TH_ERROR;
}

static th_status behaviour_on_event(void* self, const th_event_args* args, char* err, size_t err_size) {
  const behaviour* b = (const behaviour*)self;
  if (args->event == TH_EVENT_TRAIN_BEGIN) return run(b->at_begin, err, err_size);
  if (args->event == TH_EVENT_TRAIN_END) return run(b->at_train_end, err, err_size);
  const int64_t step = args->state->global_step;
  if (args->event == TH_EVENT_LOG) return step == 2 ? run(b->at_log2, err, err_size) : TH_OK;
  if (args->event != TH_EVENT_STEP_END) return TH_OK;
  if (step == 2 && run(b->at_step2, err, err_size) != TH_OK) return TH_ERROR;
  if (step == 3) {
    if (run(b->at_step3, err, err_size) != TH_OK) return TH_ERROR;
    fprintf(stderr, "%s: step 3\n", b->name);
    fflush(stderr);
  }
  if (step >= 3) nap_ms(10);
  return TH_OK;
}

static th_status behaviour_create(const behaviour* b, void** out_self, char* err, size_t err_size) {
  if (run(b->at_create, err, err_size) != TH_OK) return TH_ERROR;
  *out_self = (void*)b;
  return TH_OK;
}

static void behaviour_destroy(void* self) { (void)self; }

#define EVENTS                                                                                      \
  (TH_EVENT_BIT(TH_EVENT_TRAIN_BEGIN) | TH_EVENT_BIT(TH_EVENT_STEP_END) | TH_EVENT_BIT(TH_EVENT_LOG) | \
   TH_EVENT_BIT(TH_EVENT_TRAIN_END))
/* CONTAIN_CALLBACK(var, help, .at_... = action, ...): the behaviour's actions by name. */
#define CONTAIN_CALLBACK(var, help, ...)                                                                    \
  static const behaviour var##_behaviour = {.name = #var, __VA_ARGS__};                                     \
  static th_status var##_create(const th_host* host, const char* config_json, void** out_self, char* err,   \
                                size_t err_size) {                                                          \
    (void)host;                                                                                             \
    (void)config_json;                                                                                      \
    return behaviour_create(&var##_behaviour, out_self, err, err_size);                                     \
  }                                                                                                         \
  static const th_callback_vtable var##_vtable = {TH_CALLBACK_VTABLE_STRUCT_SIZE, behaviour_on_event, NULL, \
                                                  NULL, behaviour_destroy};                                 \
  static const th_callback_info var = {TH_CALLBACK_INFO_STRUCT_SIZE,                                        \
                                       #var,                                                                \
                                       "1.0.0",                                                             \
                                       TH_KIND_CALLBACK,                                                    \
                                       help,                                                                \
                                       EVENTS,                                                              \
                                       var##_create,                                                        \
                                       &var##_vtable};

CONTAIN_CALLBACK(fork_daemon, "forks a daemon that outlives the run", .at_begin = fork_a_daemon)
CONTAIN_CALLBACK(raw_fork_daemon, "clones a daemon past the atfork handlers", .at_begin = clone_daemon)
CONTAIN_CALLBACK(fork_return, "forks at step 3 and returns in the child too", .at_step3 = fork_and_return,
                 .at_train_end = reap_child)
CONTAIN_CALLBACK(term_ignore_create, "SIGTERM/SIGINT ignored in create", .at_create = ignore_both)
CONTAIN_CALLBACK(term_handler_create, "own SIGTERM/SIGINT handler in create", .at_create = swallow_both)
CONTAIN_CALLBACK(term_ignore_begin, "SIGTERM/SIGINT ignored in on_train_begin", .at_begin = ignore_both)
CONTAIN_CALLBACK(term_handler_begin, "own SIGTERM/SIGINT handler in on_train_begin", .at_begin = swallow_both)
CONTAIN_CALLBACK(term_ignore_thread, "SIGTERM/SIGINT ignored from its own thread", .at_create = start_worker,
                 .at_step3 = wake_worker)
CONTAIN_CALLBACK(close_stdio, "closes descriptors 1 and 2 in create", .at_create = close_stdout_stderr)
CONTAIN_CALLBACK(close_stdout_step, "closes descriptor 1 in on_step_end at step 2", .at_step2 = close_stdout)
CONTAIN_CALLBACK(close_stdout_log, "closes descriptor 1 in on_log at step 2", .at_log2 = close_stdout)
CONTAIN_CALLBACK(umask_step, "umask(0777) in on_step_end at step 2", .at_step2 = mask_everything)
CONTAIN_CALLBACK(fsize_create, "lowers RLIMIT_FSIZE to 4096 bytes in create", .at_create = limit_file_size)
CONTAIN_CALLBACK(chdir_away, "chdir($HOST_CONTAIN_DIR) in create", .at_create = change_directory)

static const th_callback_info* const contain_callback_ptrs[] = {
    &fork_daemon,        &raw_fork_daemon,    &fork_return,       &term_ignore_create, &term_handler_create,
    &term_ignore_begin,  &term_handler_begin, &term_ignore_thread, &close_stdio,       &close_stdout_step,
    &close_stdout_log,   &umask_step,         &fsize_create,      &chdir_away};
TH_PLUGIN_ENTRY("host_contain", "1.0.0", contain_callback_ptrs)
