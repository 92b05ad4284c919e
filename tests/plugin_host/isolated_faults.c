/* A plugin for isolation.sh, run in its own process (--plugin_isolation):
 * callback "isolated_faults", its behaviour chosen by its plugin_config
 * (dumped without spaces by the host, so plain strstr reads it):
 *   "fault":"segv"|"hang"|"exit"  at on_step_end of step "fault_step" (5)
 *   "fault":"shrink_ring"         there, tries to shrink the event ring's memory
 *                                 (descriptor 4 in the helper) to nothing
 *   "fault":"stray_answer"        there, writes a forged answer to the call onto
 *                                 the helper's socket (descriptor 3) before the
 *                                 real one: the call answered twice
 *   "fault":"daemon_segv"         there, forks a child that lives on for 20 s
 *                                 (holding what the helper holds), then raises SIGSEGV
 *   "write_tensors":1             at on_step_end of step 1, asks for the parameters
 *                                 writable instead of readable
 *   "steer_call":"NAME"           in an observed on_log, calls the host's NAME
 *                                 (request_stop, add_metric, set_lr_factor)
 *   "save_step":N                 sets should_save at on_step_end of step N
 *   "observe":1                   declares on_step_begin and on_log observe-only
 *                                 (ABI 1.6) and logs each as "observed <event> <step>"
 *   "stall_ms":N                  sleeps N ms at the first observed event (a
 *                                 helper that falls behind)
 *   "steer_observed":1            sets should_training_stop in an observed on_log
 *   "side_by_side":1              declares on_save side by side (ABI 1.8)
 *   "mark":"PATH"                 at on_save, creates the file PATH
 *   "meet":"PATH"                 at on_save, waits up to 5 s for the file PATH
 *                                 (an error if it never comes)
 *   "steer_save":1                at on_save, sets should_training_stop
 *                                 (a plugin breaking its own declaration)
 * Callback "isolated_partner" is "isolated_faults" under another name.
 * Callback "isolated_budget" has only on_train_begin and on_train_end; its
 * create starts a thread that, 50 ms after on_train_begin returned, asks the
 * trainer to stop (a wall-clock budget spent), from outside any event.
 * Callback "isolated_observer" is the same with "observe":1 always and a mask
 * of on_step_begin, on_log and on_train_end only: nothing it gets between
 * train begin and end is waited for.
 * Every step it adds the metric isolated_metric = step / 2; at on_step_end of
 * step 1 it asks for the model's tensors and logs the refusal; it logs its pid
 * at create, each on_log and on_train_end (with th_host.stop_signal), and what
 * on_exception carries (ABI 1.3); it keeps a stateful call count.
 * The host's keys (isolation, isolation_timeout) must not reach it: create()
 * refuses them as unknown keys, as a plugin's own config reader would. */
#define _POSIX_C_SOURCE 200809L
#include <trainhook/abi.h>
#include <trainhook/plugin_entry.h>

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct faults {
  const th_host* host;
  char fault[16];
  long fault_step;
  long save_step;
  long calls;
  long observe;
  long stall_ms;
  long steer_observed;
  long side_by_side;
  long steer_save;
  long write_tensors;
  char mark[256];
  char meet[256];
  char steer_call[32];
} faults;

/* isolated_budget's thread waits for on_train_begin (one callback per helper). */
static volatile sig_atomic_t g_train_began;

static void say(const faults* f, const char* text) { f->host->log(f->host->ctx, TH_LOG_INFO, text); }

static long number_after(const char* config, const char* key, long fallback) {
  const char* p = strstr(config, key);
  if (p == NULL) return fallback;
  p += strlen(key);
  if (*p == '"') ++p; /* the value may cross as a string */
  return strtol(p, NULL, 10);
}

static void string_after(const char* config, const char* key, char* out, size_t size) {
  const char* p = strstr(config, key);
  if (p == NULL) return;
  p += strlen(key);
  size_t n = 0;
  while (p[n] != '\0' && p[n] != '"' && n + 1 < size) {
    out[n] = p[n];
    ++n;
  }
  out[n] = '\0';
}

static th_status on_save(faults* f, const th_event_args* args, char* err, size_t err_size) {
  if (f->mark[0] != '\0') {
    FILE* m = fopen(f->mark, "w");
    if (m == NULL) {
      snprintf(err, err_size, "isolated_faults: cannot create %s", f->mark);
      return TH_ERROR;
    }
    fclose(m);
  }
  if (f->meet[0] != '\0') {
    int met = 0;
    for (int i = 0; i < 5000 && !met; ++i) {
      FILE* m = fopen(f->meet, "r");
      if (m != NULL) {
        fclose(m);
        met = 1;
      } else {
        struct timespec t = {0, 1000000L};
        nanosleep(&t, NULL);
      }
    }
    if (!met) {
      snprintf(err, err_size, "isolated_faults: %s did not appear within 5 s of on_save", f->meet);
      return TH_ERROR;
    }
  }
  if (f->steer_save) args->control->should_training_stop = 1;
  return TH_OK;
}

static th_status on_event(void* self, const th_event_args* args, char* err, size_t err_size) {
  faults* f = (faults*)self;
  char line[512];
  ++f->calls;
  const long step = (long)args->state->global_step;
  if (f->observe && (args->event == TH_EVENT_STEP_BEGIN || args->event == TH_EVENT_LOG)) {
    if (f->stall_ms > 0) {
      struct timespec t = {f->stall_ms / 1000, (f->stall_ms % 1000) * 1000000L};
      f->stall_ms = 0;
      nanosleep(&t, NULL);
    }
    snprintf(line, sizeof line, "isolated_faults: observed %s %ld",
             args->event == TH_EVENT_LOG ? "on_log" : "on_step_begin", step);
    say(f, line);
    if (f->steer_observed && args->event == TH_EVENT_LOG) args->control->should_training_stop = 1;
    if (args->event == TH_EVENT_LOG && f->steer_call[0] != '\0') {
      th_status st = TH_OK;
      if (strcmp(f->steer_call, "request_stop") == 0)
        f->host->request_stop(f->host->ctx, "isolated_faults stops from an observed event");
      else if (strcmp(f->steer_call, "add_metric") == 0)
        st = f->host->add_metric(f->host->ctx, "observed_metric", 1.0, err, err_size);
      else if (strcmp(f->steer_call, "set_lr_factor") == 0)
        st = f->host->set_lr_factor(f->host->ctx, 0.5, err, err_size);
      snprintf(line, sizeof line, "isolated_faults: %s from an observed event -> status %d", f->steer_call,
               (int)st);
      say(f, line);
    }
    return TH_OK;
  }
  if (args->event == TH_EVENT_SAVE) return on_save(f, args, err, err_size);
  if (args->event == TH_EVENT_STEP_END) {
    char name[] = "isolated_metric";
    if (f->host->add_metric(f->host->ctx, name, (double)step / 2.0, err, err_size) != TH_OK) return TH_ERROR;
    if (step == 1) {
      th_tensor_list list;
      char why[512];
      memset(&list, 0, sizeof list);
      list.struct_size = TH_TENSOR_LIST_STRUCT_SIZE;
      why[0] = '\0';
      const th_status st =
          f->host->tensors(f->host->ctx, TH_TENSORS_PARAMETERS, f->write_tensors ? TH_ACCESS_WRITE : TH_ACCESS_READ,
                           &list, why, sizeof why);
      snprintf(line, sizeof line, "isolated_faults: tensors -> status %d: %.400s", (int)st, why);
      say(f, line);
    }
    if (step == f->save_step) {
      args->control->should_save = 1;
      snprintf(line, sizeof line, "isolated_faults: asked for a save at step %ld", step);
      say(f, line);
    }
    if (step == f->fault_step) {
      if (strcmp(f->fault, "segv") == 0) {
        fprintf(stderr, "isolated_faults: raising SIGSEGV at step %ld\n", step);
        fflush(stderr);
        raise(SIGSEGV);
      } else if (strcmp(f->fault, "hang") == 0) {
        fprintf(stderr, "isolated_faults: hanging at step %ld\n", step);
        fflush(stderr);
        for (;;) {
          struct timespec t = {1000, 0};
          nanosleep(&t, NULL);
        }
      } else if (strcmp(f->fault, "exit") == 0) {
        fprintf(stderr, "isolated_faults: exit(0) at step %ld\n", step);
        fflush(stderr);
        exit(0);
      } else if (strcmp(f->fault, "shrink_ring") == 0) {
        const int rc = ftruncate(4, 0);
        snprintf(line, sizeof line, "isolated_faults: shrinking the ring at step %ld -> %d", step, rc);
        say(f, line);
      } else if (strcmp(f->fault, "stray_answer") == 0) {
        /* A Done for this call (create was call 1, each call since one more),
         * status OK, no message, a should_save flag: the protocol's bytes. */
        unsigned char frame[5 + 8 + 4 + 4 + 1 + sizeof(th_control)];
        const unsigned int length = (unsigned int)(sizeof frame - 5);
        const unsigned long long call = (unsigned long long)f->calls + 1;
        const int status = TH_OK;
        const unsigned int text = 0;
        th_control control = *args->control;
        control.should_save = 1;
        memcpy(frame, &length, 4);
        frame[4] = 21;
        memcpy(frame + 5, &call, 8);
        memcpy(frame + 13, &status, 4);
        memcpy(frame + 17, &text, 4);
        frame[21] = 0;
        memcpy(frame + 22, &control, sizeof control);
        if (write(3, frame, sizeof frame) != (ssize_t)sizeof frame) return TH_ERROR;
      } else if (strcmp(f->fault, "daemon_segv") == 0) {
        if (fork() == 0) {
          struct timespec t = {20, 0};
          nanosleep(&t, NULL);
          _exit(0);
        }
        fprintf(stderr, "isolated_faults: a daemon forked, raising SIGSEGV at step %ld\n", step);
        fflush(stderr);
        raise(SIGSEGV);
      }
    }
  } else if (args->event == TH_EVENT_LOG) {
    snprintf(line, sizeof line, "isolated_faults: on_log at step %ld (pid %ld)", step, (long)getpid());
    say(f, line);
  } else if (args->event == TH_EVENT_TRAIN_BEGIN) {
    g_train_began = 1;
  } else if (args->event == TH_EVENT_TRAIN_END) {
    snprintf(line, sizeof line, "isolated_faults: on_train_end at step %ld (pid %ld)", step, (long)getpid());
    say(f, line);
    /* ABI 1.3: the runner answers what the trainer told it. */
    if (TH_HAS_FIELD(f->host, th_host, stop_signal) && f->host->stop_signal != NULL) {
      snprintf(line, sizeof line, "isolated_faults: stop_signal %d", (int)f->host->stop_signal(f->host->ctx));
      say(f, line);
    }
  } else if (args->event == TH_EVENT_EXCEPTION) {
    const th_failure* fl = TH_HAS_FIELD(args, th_event_args, failure) ? args->failure : NULL;
    if (fl == NULL) {
      say(f, "isolated_faults: on_exception without a failure");
    } else {
      snprintf(line, sizeof line, "isolated_faults: on_exception kind %d step %lld: %.400s", (int)fl->kind,
               (long long)fl->step, fl->message);
      say(f, line);
    }
  }
  return TH_OK;
}

static th_status save_state(void* self, char* buf, size_t buf_size, size_t* needed, char* err,
                            size_t err_size) {
  const faults* f = (const faults*)self;
  (void)err;
  (void)err_size;
  const int n = snprintf(buf, buf_size, "{\"args\":{},\"attributes\":{\"calls\":%ld}}", f->calls);
  if (n < 0 || (size_t)n >= buf_size) {
    *needed = (size_t)(n < 0 ? 64 : n + 1);
    return TH_BUFFER_TOO_SMALL;
  }
  return TH_OK;
}

static th_status load_state(void* self, const char* state_json, char* err, size_t err_size) {
  (void)self;
  (void)state_json;
  (void)err;
  (void)err_size;
  return TH_OK;
}

static void destroy(void* self) { free(self); }

static th_status create(const th_host* host, const char* config_json, void** out_self, char* err,
                        size_t err_size) {
  if (strstr(config_json, "\"isolation") != NULL) {
    snprintf(err, err_size, "isolated_faults: unknown key in %s", config_json);
    return TH_INVALID_ARGUMENT;
  }
  faults* f = (faults*)calloc(1, sizeof(faults));
  if (f == NULL) return TH_ERROR;
  f->host = host;
  f->fault_step = number_after(config_json, "\"fault_step\":", 5);
  f->save_step = number_after(config_json, "\"save_step\":", -1);
  f->observe = number_after(config_json, "\"observe\":", 0);
  f->stall_ms = number_after(config_json, "\"stall_ms\":", 0);
  f->steer_observed = number_after(config_json, "\"steer_observed\":", 0);
  f->side_by_side = number_after(config_json, "\"side_by_side\":", 0);
  f->steer_save = number_after(config_json, "\"steer_save\":", 0);
  f->write_tensors = number_after(config_json, "\"write_tensors\":", 0);
  string_after(config_json, "\"mark\":\"", f->mark, sizeof f->mark);
  string_after(config_json, "\"meet\":\"", f->meet, sizeof f->meet);
  string_after(config_json, "\"steer_call\":\"", f->steer_call, sizeof f->steer_call);
  if (f->side_by_side && TH_HAS_FIELD(host, th_host, set_side_by_side) && host->set_side_by_side != NULL)
    host->set_side_by_side(host->ctx, TH_EVENT_BIT(TH_EVENT_SAVE));
  if (f->observe && TH_HAS_FIELD(host, th_host, set_observe_only) && host->set_observe_only != NULL)
    host->set_observe_only(host->ctx, TH_EVENT_BIT(TH_EVENT_STEP_BEGIN) | TH_EVENT_BIT(TH_EVENT_LOG));
  const char* fault = strstr(config_json, "\"fault\":\"");
  if (fault != NULL) {
    fault += strlen("\"fault\":\"");
    size_t n = 0;
    while (fault[n] != '\0' && fault[n] != '"' && n + 1 < sizeof f->fault) {
      f->fault[n] = fault[n];
      ++n;
    }
  }
  char line[128];
  snprintf(line, sizeof line, "isolated_faults: created in pid %ld", (long)getpid());
  say(f, line);
  /* In its helper, what it inherited must not reach a program it would run. */
  if (fcntl(3, F_GETFD) >= 0) {
    snprintf(line, sizeof line, "isolated_faults: descriptors 3 and 4 close-on-exec: %s",
             (fcntl(3, F_GETFD) & FD_CLOEXEC) && (fcntl(4, F_GETFD) < 0 || (fcntl(4, F_GETFD) & FD_CLOEXEC))
                 ? "yes" : "no");
    say(f, line);
  }
  *out_self = f;
  return TH_OK;
}

static const th_callback_vtable vtable = {TH_CALLBACK_VTABLE_STRUCT_SIZE, on_event, save_state, load_state,
                                          destroy};
static const th_callback_info callback = {TH_CALLBACK_INFO_STRUCT_SIZE,
                                          "isolated_faults",
                                          "1.0.0",
                                          TH_KIND_CALLBACK,
                                          "crashes, hangs or exits on request (isolation tests)",
                                          TH_EVENT_MASK_ALL,
                                          create,
                                          &vtable};
static th_status create_observer(const th_host* host, const char* config_json, void** out_self, char* err,
                                 size_t err_size) {
  const th_status st = create(host, config_json, out_self, err, err_size);
  if (st != TH_OK) return st;
  ((faults*)*out_self)->observe = 1;
  if (TH_HAS_FIELD(host, th_host, set_observe_only) && host->set_observe_only != NULL)
    host->set_observe_only(host->ctx, TH_EVENT_BIT(TH_EVENT_STEP_BEGIN) | TH_EVENT_BIT(TH_EVENT_LOG));
  return TH_OK;
}
static const th_callback_info observer = {
    TH_CALLBACK_INFO_STRUCT_SIZE,
    "isolated_observer",
    "1.0.0",
    TH_KIND_CALLBACK,
    "observes steps and logs, sleeping on request (isolation tests)",
    TH_EVENT_BIT(TH_EVENT_STEP_BEGIN) | TH_EVENT_BIT(TH_EVENT_LOG) | TH_EVENT_BIT(TH_EVENT_TRAIN_END),
    create_observer,
    &vtable};
/* The same again under another name: two of them in one handler. */
static const th_callback_info partner = {TH_CALLBACK_INFO_STRUCT_SIZE,
                                         "isolated_partner",
                                         "1.0.0",
                                         TH_KIND_CALLBACK,
                                         "isolated_faults under a second name (isolation tests)",
                                         TH_EVENT_MASK_ALL,
                                         create,
                                         &vtable};
static void* spend_budget(void* arg) {
  const th_host* host = (const th_host*)arg;
  while (!g_train_began) {
    struct timespec t = {0, 1000000L};
    nanosleep(&t, NULL);
  }
  struct timespec after = {0, 50000000L}; /* well after the trainer took on_train_begin's answer */
  nanosleep(&after, NULL);
  host->request_stop(host->ctx, "isolated_budget: the time budget is spent");
  return NULL;
}
static th_status create_budget(const th_host* host, const char* config_json, void** out_self, char* err,
                               size_t err_size) {
  const th_status st = create(host, config_json, out_self, err, err_size);
  if (st != TH_OK) return st;
  pthread_t thread;
  if (pthread_create(&thread, NULL, spend_budget, (void*)host) != 0) return TH_ERROR;
  pthread_detach(thread);
  return TH_OK;
}
static const th_callback_info budget = {TH_CALLBACK_INFO_STRUCT_SIZE,
                                        "isolated_budget",
                                        "1.0.0",
                                        TH_KIND_CALLBACK,
                                        "asks for a stop from its own thread (isolation tests)",
                                        TH_EVENT_BIT(TH_EVENT_TRAIN_BEGIN) | TH_EVENT_BIT(TH_EVENT_TRAIN_END),
                                        create_budget,
                                        &vtable};
static const th_callback_info* const callback_ptrs[] = {&callback, &observer, &partner, &budget};
TH_PLUGIN_ENTRY("isolated_faults", "1.0.0", callback_ptrs)
