/*
 * Trainhook plugin ABI. Its version is TRAINHOOK_ABI_VERSION_MAJOR/MINOR below
 * (what each minor added: marked where it was added, and sdk/CHANGELOG.md).
 *
 * Pure C (C11 and C++17). This header is the only contract between the trainer
 * (the host) and a plugin library. It depends on nothing but the C standard
 * library and DLPack's dlpack/dlpack.h (the standard C tensor struct, since 1.1;
 * the SDK ships it: trainhook/third_party/dlpack), so a plugin built once keeps
 * loading when the trainer is rebuilt against another LibTorch.
 *
 * Rules that keep the ABI stable for years:
 *  - Every struct that crosses starts with `uint32_t struct_size`, set by whoever
 *    fills it to the TH_*_STRUCT_SIZE constant of this header: the end of the
 *    struct's last field, NOT sizeof() (sizeof counts tail padding, which would
 *    make TH_HAS_FIELD claim a field appended later that was never written).
 *    Structs and tables only ever grow at the end; the reader uses TH_HAS_FIELD()
 *    before reading a field that a newer minor version added. The host copies
 *    what a plugin hands it into zeroed structs of its own, reading only the
 *    bytes the plugin's struct_size covers; fields a plugin does not know are 0.
 *  - Lists of structs cross as arrays of POINTERS (th_plugin_info.callbacks,
 *    .commands), never as arrays of structs, so an element struct can grow
 *    without the reader's stride (its own sizeof) going wrong.
 *  - Only C types cross: fixed-width integers, double, UTF-8 `const char*`, opaque
 *    pointers. Strings are borrowed for the duration of the call; keep a copy if
 *    you need it later. Enums cross as int32_t.
 *  - No exceptions cross. Every function returns a th_status and, on failure,
 *    writes a NUL-terminated message into the caller-owned buffer (err, err_size),
 *    truncating if needed (fmt-c.h style).
 *  - One exported symbol per library: TRAINHOOK_ENTRY_SYMBOL, whose name carries
 *    the ABI major version. A future ABI 2 uses a new symbol, so a library can
 *    export both and old hosts keep working.
 *  - Version negotiation: the host passes its version in th_host_info; the plugin
 *    answers with the version it was built for. A different major is refused; a
 *    plugin minor older than or equal to the host's is accepted; a plugin built
 *    for a newer minor is refused by the host with a message naming the file.
 */
#ifndef TRAINHOOK_ABI_H
#define TRAINHOOK_ABI_H

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TRAINHOOK_ABI_VERSION_MAJOR 1
#define TRAINHOOK_ABI_VERSION_MINOR 8

/* The oldest host minor a plugin needs (1.<TRAINHOOK_ABI_MIN_MINOR>), which is
 * what it answers in th_plugin_info.abi_minor: a host of that minor or newer
 * loads it. Not defined by the plugin: this header's own minor (a plugin is
 * stamped with the minor it was compiled against, as before the macro existed).
 * A plugin that targets older hosts defines it before including this header
 * (or with -DTRAINHOOK_ABI_MIN_MINOR=1; CMake: trainhook_add_plugin(...
 * ABI_MIN_MINOR 1)) and then reads every th_host / th_event_args field newer
 * than that minor only after TH_HAS_FIELD (plugin.hpp's C++ layer does). A
 * macro, not a struct field: no struct changes, so no minor bump. */
#ifndef TRAINHOOK_ABI_MIN_MINOR
#define TRAINHOOK_ABI_MIN_MINOR TRAINHOOK_ABI_VERSION_MINOR
#endif
#if TRAINHOOK_ABI_MIN_MINOR > TRAINHOOK_ABI_VERSION_MINOR || TRAINHOOK_ABI_MIN_MINOR < 0
#error "TRAINHOOK_ABI_MIN_MINOR must be between 0 and TRAINHOOK_ABI_VERSION_MINOR"
#endif

/* The one symbol a plugin library exports, spelled once: TRAINHOOK_ENTRY_NAME is
 * the identifier (used by the SDK's TRAINHOOK_PLUGIN and by C plugins to define
 * the function), TRAINHOOK_ENTRY_SYMBOL its name as a string (the host's lookup). */
#define TRAINHOOK_ENTRY_NAME trainhook_plugin_v1
#define TH_STRINGIFY_(x) #x
#define TH_STRINGIFY(x) TH_STRINGIFY_(x)
#define TRAINHOOK_ENTRY_SYMBOL TH_STRINGIFY(TRAINHOOK_ENTRY_NAME)

#if defined(_WIN32)
#define TRAINHOOK_EXPORT __declspec(dllexport)
#else
#define TRAINHOOK_EXPORT __attribute__((visibility("default")))
#endif

/* True when a struct filled by the other side is large enough to hold `field`. */
#define TH_HAS_FIELD(ptr, type, field) \
  ((ptr) != NULL && (size_t)(ptr)->struct_size >= offsetof(type, field) + sizeof(((type*)0)->field))

/* The size of `type` up to the end of its field `last` (no tail padding). */
#define TH_STRUCT_SIZE(type, last) (offsetof(type, last) + sizeof(((type*)0)->last))

/* ---- status codes --------------------------------------------------------- */

typedef int32_t th_status;
#define TH_OK 0
#define TH_ERROR 1            /* generic failure; message in err */
#define TH_ABI_MISMATCH 2     /* version negotiation failed */
#define TH_INVALID_ARGUMENT 3 /* bad configuration or argument */
#define TH_BUFFER_TOO_SMALL 4 /* retry with a buffer of *needed bytes */

/* ---- logging levels for th_host.log --------------------------------------- */

#define TH_LOG_TRACE 0
#define TH_LOG_DEBUG 1
#define TH_LOG_INFO 2
#define TH_LOG_WARN 3
#define TH_LOG_ERROR 4

/* ---- events (the Hugging Face TrainerCallback events) --------------------- */
/* Values are fixed forever; new events are appended. A callback must ignore an
 * event value it does not know. 1.1 adds EVALUATE_BEGIN (not in HF): before an
 * evaluation pass runs, so a callback can swap weights in for it (EMA) and back
 * at EVALUATE. 1.3 adds EXCEPTION (HF has no such event; Lightning's
 * Callback.on_exception is the model): the run is ending by an error, see
 * th_failure below. */

/* The one list of events (openxla's pjrt_c_api.h style): X(NAME, value, method)
 * generates the TH_EVENT_<NAME> ids here, and in plugin.hpp the C++ virtuals
 * (method), the dispatch and the event mask; the core's event names too. A new
 * event is one line at the end of this list. */
#define TH_EVENT_LIST(X)                          \
  X(INIT_END, 0, on_init_end)                     \
  X(TRAIN_BEGIN, 1, on_train_begin)               \
  X(TRAIN_END, 2, on_train_end)                   \
  X(EPOCH_BEGIN, 3, on_epoch_begin)               \
  X(EPOCH_END, 4, on_epoch_end)                   \
  X(STEP_BEGIN, 5, on_step_begin)                 \
  X(SUBSTEP_END, 6, on_substep_end)               \
  X(PRE_OPTIMIZER_STEP, 7, on_pre_optimizer_step) \
  X(OPTIMIZER_STEP, 8, on_optimizer_step)         \
  X(STEP_END, 9, on_step_end)                     \
  X(EVALUATE, 10, on_evaluate)                    \
  X(PREDICT, 11, on_predict)                      \
  X(PREDICTION_STEP, 12, on_prediction_step)      \
  X(LOG, 13, on_log)                              \
  X(SAVE, 14, on_save)                            \
  X(EVALUATE_BEGIN, 15, on_evaluate_begin)        \
  X(EXCEPTION, 16, on_exception)

#define TH_EVENT_ID_(name, value, method) TH_EVENT_##name = value,
#define TH_EVENT_ONE_(name, value, method) +1
enum th_event_id { TH_EVENT_LIST(TH_EVENT_ID_) TH_EVENT_COUNT = 0 TH_EVENT_LIST(TH_EVENT_ONE_) };

#define TH_EVENT_BIT(ev) (((uint64_t)1) << (ev))
#define TH_EVENT_MASK_ALL ((((uint64_t)1) << TH_EVENT_COUNT) - 1)

/* ---- callback kinds --------------------------------------------------------- */

#define TH_KIND_CALLBACK 0    /* enabled through `callbacks` */
#define TH_KIND_INTEGRATION 1 /* enabled through `report_to` (and `all`) */

/* ---- TrainerState, as plain numbers -------------------------------------- */
/* Filled by the host before every event; valid for the duration of the call. */
typedef struct th_state {
  uint32_t struct_size;
  int32_t is_local_process_zero; /* 0 or 1 */
  double epoch;                  /* fractional epoch, as in HF */
  int64_t global_step;
  int64_t max_steps;
  int64_t logging_steps;
  int64_t eval_steps;
  int64_t save_steps;
  int64_t train_batch_size;
  double num_train_epochs;
  double total_flos;
  int64_t num_input_tokens_seen;
  int32_t has_best_metric; /* 0: best_metric is meaningless (None in HF) */
  int32_t is_world_process_zero;
  double best_metric;
  int64_t best_global_step;          /* 0 when none */
  const char* best_model_checkpoint; /* NULL when none */
  const char* trial_name;            /* NULL when none */
  int32_t process_index;             /* rank, 0 in single-process runs */
  int32_t world_size;                /* 1 in single-process runs */
  int64_t steps_in_epoch;            /* optimizer steps per epoch */
} th_state;
#define TH_STATE_STRUCT_SIZE ((uint32_t)TH_STRUCT_SIZE(th_state, steps_in_epoch))

/* ---- TrainerControl, in/out ----------------------------------------------- */
/* The host resets flags as HF's CallbackHandler does before the callbacks of an
 * event run; a callback sets a flag to 1 to request the action. What one callback
 * sets is seen by the next. */
typedef struct th_control {
  uint32_t struct_size;
  int32_t should_training_stop;
  int32_t should_epoch_stop;
  int32_t should_save;
  int32_t should_evaluate;
  int32_t should_log;
} th_control;
#define TH_CONTROL_STRUCT_SIZE ((uint32_t)TH_STRUCT_SIZE(th_control, should_log))

/* ---- key/value records: logs and metrics --------------------------------- */
/* Parallel arrays, borrowed. Numeric values in (keys, values); values that are
 * strings in (string_keys, string_values). */
typedef struct th_values {
  uint32_t struct_size;
  uint32_t count;
  const char* const* keys;
  const double* values;
  uint32_t string_count;
  const char* const* string_keys;
  const char* const* string_values;
} th_values;
#define TH_VALUES_STRUCT_SIZE ((uint32_t)TH_STRUCT_SIZE(th_values, string_values))

/* ---- the values of one optimizer step (1.1) ------------------------------- */
/* At PRE_OPTIMIZER_STEP, OPTIMIZER_STEP and STEP_END of EVERY step (not only
 * every logging_steps). Numbers of this rank: no collective is added per step
 * (the mean over ranks is what LOG carries as "loss"). */
typedef struct th_step_values {
  uint32_t struct_size;
  double loss;          /* this step's raw training loss on this rank (mean over the
                           gradient-accumulation window; never NaN/inf-filtered) */
  double grad_norm;     /* global gradient L2 norm BEFORE clipping; NaN when the trainer
                           does not compute it (max_grad_norm <= 0) */
  double learning_rate; /* the learning rate this step's update uses (group 0) */
} th_step_values;
#define TH_STEP_VALUES_STRUCT_SIZE ((uint32_t)TH_STRUCT_SIZE(th_step_values, learning_rate))

/* ---- why a run ends by an error (1.3) -------------------------------------- */
/* EXCEPTION fires once, on every callback that asked for it, when a run is
 * ending by an error: an exception from the training loop, the data, checkpoint
 * I/O, a callback failing under plugin_error_policy=fail, or a second signal.
 * on_train_end does not follow it. The process still ends as it would have
 * (the error is reported and the exit status is unchanged); an integration
 * closes its run as failed there, with `message` as the reason. A run stopped by
 * a first SIGINT/SIGTERM is not a failure: it saves a checkpoint and ends with
 * on_train_end (where th_host.stop_signal, 1.3, tells it was a signal). */
#define TH_FAILURE_ERROR 0         /* any other error */
#define TH_FAILURE_OUT_OF_MEMORY 1 /* an allocation failed (std::bad_alloc, an out-of-memory error) */
#define TH_FAILURE_PLUGIN 2        /* a callback failed and plugin_error_policy stops the run */
#define TH_FAILURE_SIGNAL 3        /* a second SIGINT/SIGTERM: the run ends now */
#define TH_FAILURE_NON_FINITE 4    /* a callback stopped the run for a NaN/inf (nan_guard) */

typedef struct th_failure {
  uint32_t struct_size;
  int32_t kind;        /* TH_FAILURE_* ; an unknown value reads as TH_FAILURE_ERROR */
  const char* message; /* UTF-8, never NULL, one or more lines */
  int64_t step;        /* global_step when the run failed */
} th_failure;
#define TH_FAILURE_STRUCT_SIZE ((uint32_t)TH_STRUCT_SIZE(th_failure, step))

/* ---- what an event carries ------------------------------------------------ */
typedef struct th_event_args {
  uint32_t struct_size;
  int32_t event;              /* TH_EVENT_* */
  const th_state* state;      /* never NULL */
  th_control* control;        /* never NULL; in/out */
  const th_values* values;    /* LOG: logs; EVALUATE/PREDICT: metrics; else NULL */
  const char* checkpoint_dir; /* SAVE: the checkpoint folder just written; else NULL */
  int64_t batch_index;        /* PREDICTION_STEP: 0-based batch; else -1 */
  int64_t batch_count;        /* PREDICTION_STEP: batches in this pass (-1 unknown) */
  int32_t prediction_kind;    /* PREDICTION_STEP: 0 evaluate, 1 predict */
  /* 1.1: PRE_OPTIMIZER_STEP, OPTIMIZER_STEP, STEP_END: this step's values; else NULL */
  const th_step_values* step;
  /* 1.3: EXCEPTION: why the run is ending; else NULL */
  const th_failure* failure;
  /* 1.7: when the trainer emitted this event, in ns of CLOCK_MONOTONIC
   * (std::chrono::steady_clock on Linux; one clock for every process of the
   * machine). The same for every callback of the event. A callback that times
   * the training loop (step durations) reads this rather than the clock: an
   * observe-only event reaches an isolated callback later, in a batch. */
  int64_t time_ns;
} th_event_args;
#define TH_EVENT_ARGS_STRUCT_SIZE ((uint32_t)TH_STRUCT_SIZE(th_event_args, time_ns))

/* ---- tensor views (1.1) ------------------------------------------------------ */
/* The model's tensors as borrowed DLPack views: NO copies. `tensors[i]` is the
 * real tensor (dtype, device, shape, strides and byte_offset are its own) named
 * `names[i]` (the module's dotted names, e.g. "layers.0.weight"), in the
 * module's order. Host-owned; valid until the current event's call returns.
 *
 *  kind        readable at                               writable (TH_ACCESS_WRITE) at
 *  PARAMETERS  every event                               OPTIMIZER_STEP, STEP_END, EVALUATE_BEGIN,
 *                                                        EVALUATE (e.g. an EMA swap around evaluation),
 *                                                        TRAIN_END (the final weights, see below)
 *  GRADIENTS   SUBSTEP_END, PRE_OPTIMIZER_STEP,          PRE_OPTIMIZER_STEP (custom clipping, noise)
 *              OPTIMIZER_STEP (same order as PARAMETERS;
 *              data is NULL for a parameter without a gradient)
 *  BUFFERS     every event                               as PARAMETERS
 * Gradients at PRE_OPTIMIZER_STEP are already reduced over ranks and clipped
 * (max_grad_norm), as in HF. Asking at another event, or asking for writing
 * outside a safe point, returns TH_INVALID_ARGUMENT (message names the callback).
 * A callback that writes on one rank of a data-parallel run must write the same
 * on every rank (integrations run on rank 0 only, so writers are callbacks).
 * The final weights: parameters a callback (TH_KIND_CALLBACK, or a C++ callback)
 * writes at TRAIN_END are the model the run ends with, the one the final save
 * writes: as in HF, where the script calls save_model() after train() returns,
 * the host saves the final model again after TRAIN_END has reached every
 * callback (it also saves it once before TRAIN_END, so that a callback that
 * hangs or exits there cannot lose it). TRAIN_END comes after
 * --load_best_model_at_end has loaded the best checkpoint's weights. */
#define TH_TENSORS_PARAMETERS 0
#define TH_TENSORS_GRADIENTS 1
#define TH_TENSORS_BUFFERS 2
#define TH_ACCESS_READ 0
#define TH_ACCESS_WRITE 1

typedef struct th_tensor_list {
  uint32_t struct_size; /* set by the caller: TH_TENSOR_LIST_STRUCT_SIZE */
  uint32_t count;
  const char* const* names;
  const DLTensor* tensors; /* DLTensor is DLPack's frozen struct: an array of them */
} th_tensor_list;
#define TH_TENSOR_LIST_STRUCT_SIZE ((uint32_t)TH_STRUCT_SIZE(th_tensor_list, tensors))

/* ---- host services -------------------------------------------------------- */
/* One table per callback instance; it outlives the instance (the host destroys
 * the callback first). Strings returned are owned by the host and stay valid
 * until the callback is destroyed unless noted. */
typedef struct th_host {
  uint32_t struct_size;
  uint32_t abi_major;
  uint32_t abi_minor;
  void* ctx; /* pass back to every function below */
  /* Log through the trainer's logger, prefixed with the callback's name. */
  void (*log)(void* ctx, int32_t level, const char* message);
  /* The run's output_dir. */
  const char* (*output_dir)(void* ctx);
  /* The training arguments as JSON text (the content of training_args.json). */
  const char* (*training_args_json)(void* ctx);
  /* Ask the trainer to stop at the next step boundary, like setting
   * should_training_stop; thread-safe, may be called from a plugin's worker. */
  void (*request_stop)(void* ctx, const char* reason);
  /* The full TrainerState as JSON (log_history included). Not for the hot path;
   * valid until the next call of this function by the same callback. */
  const char* (*trainer_state_json)(void* ctx);
  /* A description of the model (may be empty). */
  const char* (*model_description)(void* ctx);
  /* Before on_train_begin only (e.g. in on_init_end): make the trainer resume
   * from this checkpoint folder, as `resume_from_checkpoint` would. Returns
   * TH_INVALID_ARGUMENT with a message if it is too late or the path is bad. */
  th_status (*set_resume_checkpoint)(void* ctx, const char* path, char* err, size_t err_size);
  /* The run's name (run_name argument; never NULL). */
  const char* (*run_name)(void* ctx);

  /* ---- 1.1: the model (check with TH_HAS_FIELD(host, th_host, tensors)) ---- */
  /* Views of the model's tensors (see "tensor views" above). Training thread only. */
  th_status (*tensors)(void* ctx, int32_t kind, int32_t access, th_tensor_list* out, char* err,
                       size_t err_size);
  /* The current learning rate of each optimizer parameter group: writes up to
   * `capacity` values, sets *count to the number of groups. TH_INVALID_ARGUMENT
   * before on_train_begin (no optimizer yet). */
  th_status (*learning_rates)(void* ctx, double* out, uint32_t capacity, uint32_t* count, char* err,
                              size_t err_size);
  /* Multiply the scheduler's learning rate by `factor` (> 0, finite) from now on
   * (ReduceLROnPlateau). Absolute, not cumulative; 1 = the schedule as is. Saved
   * in every checkpoint and restored on resume. Set it the same on every rank. */
  th_status (*set_lr_factor)(void* ctx, double factor, char* err, size_t err_size);
  double (*lr_factor)(void* ctx);
  /* Add `name` = `value` to the next log record built after the call
   * (log_history and every report_to integration, like the trainer's own).
   * Called at a step's events up to STEP_END (or at EVALUATE_BEGIN and
   * PREDICTION_STEP), it lands in that step's (or that evaluation's) record, the
   * one LOG then carries; called from LOG itself (the record is already built),
   * EVALUATE or SAVE, it lands one record late, in the next one. A value still
   * pending when the run logs nothing more is dropped. Finite values, names of printable
   * characters that are not the trainer's own keys (loss, learning_rate, ...).
   * The record of world process zero is the one kept: add values that are
   * already the same on every rank. Training thread only. */
  th_status (*add_metric)(void* ctx, const char* name, double value, char* err, size_t err_size);
  /* At PRE_OPTIMIZER_STEP only: this step's optimizer update is not applied (as a
   * gradient scaler skips a step with inf/NaN gradients); the step still counts
   * and the scheduler still advances. Ask on every rank. */
  th_status (*skip_optimizer_step)(void* ctx, char* err, size_t err_size);
  /* In create() (or later): this callback is critical: a failure of it stops the
   * run whatever plugin_error_policy says (an audit logger must not be silently
   * disabled). A function rather than a th_callback_info field so that plugins
   * written for 1.0 keep compiling warning-free (positional initializers). */
  void (*set_critical)(void* ctx);

  /* ---- 1.2 (check with TH_HAS_FIELD(host, th_host, end_requested)) ---------- */
  /* Nonzero once the run must end now: a SIGINT/SIGTERM arrived while callbacks
   * ran on_train_end. A callback waiting there for deliveries (an integration's
   * end-of-run flush) stops waiting, keeps what is undelivered where it keeps
   * such records (its spool) and returns; the host waits a few seconds for that,
   * then exits 128+signal. Any thread; cheap enough to poll every 100 ms. */
  int32_t (*end_requested)(void* ctx);

  /* ---- 1.3 (check with TH_HAS_FIELD(host, th_host, stop_signal)) ----------- */
  /* The signal number (SIGINT, SIGTERM) when the run was asked to stop by a
   * first signal, so that on_train_end closes it as stopped (MLflow's KILLED)
   * rather than finished; 0 otherwise. Any thread. */
  int32_t (*stop_signal)(void* ctx);

  /* ---- 1.4 (check with TH_HAS_FIELD(host, th_host, isolated)) -------------- */
  /* Nonzero when this callback runs isolated (plugin_isolation): in a helper
   * process of its own, not in the trainer's. There tensors() refuses (the
   * model's memory is not shared across processes); every other service works,
   * forwarded to the trainer. Fixed for the callback's life and answered from
   * create() on, so a callback that needs tensor views refuses in create() with
   * its own message instead of failing at its first step. A host older than
   * 1.4 does not say (read it as "not known"). Any thread. */
  int32_t (*isolated)(void* ctx);

  /* ---- 1.5 (check with TH_HAS_FIELD(host, th_host, profile_span)) ---------- */
  /* Nonzero when the run is profiled (--profile): a callback times its own
   * work off the callbacks (a worker thread's batch) only then. Fixed for the
   * callback's life. Any thread. */
  int32_t (*profiling)(void* ctx);
  /* One span of this callback's own work on the calling thread, from start_ns
   * to end_ns of CLOCK_MONOTONIC (std::chrono::steady_clock on Linux), named
   * `what` (e.g. "deliver"): the run's profile shows it as
   * "[Worker]<callback>.<what>" on a track of that thread. Ignored when the run
   * is not profiled. `what` is borrowed for the call. Any thread. */
  void (*profile_span)(void* ctx, const char* what, int64_t start_ns, int64_t end_ns);

  /* ---- 1.6 (check with TH_HAS_FIELD(host, th_host, set_observe_only)) ----- */
  /* In create(): of the events this callback's event_mask asks for, the ones
   * (TH_EVENT_BIT()s) it only observes. At such an event it reads the args and
   * may queue work or log, but sets no TrainerControl flag, reads or writes no
   * tensor and calls none of add_metric, set_lr_factor, skip_optimizer_step,
   * set_resume_checkpoint: it does not steer the run. An isolated callback then
   * gets these events without a round trip: the trainer copies each into a
   * bounded ring shared with the helper process and goes on, so they arrive
   * later, still in order with every other call; flags set there are ignored,
   * and when the helper falls behind and the ring is full, an event is dropped
   * and counted (the trainer reports the count, naming the callback).
   * TRAIN_END and EXCEPTION are always delivered and waited for. In process
   * nothing changes. Not calling it (a plugin built for 1.5 or older) means
   * every event is waited for, as before. A function rather than a
   * th_callback_info field so that plugins written for 1.0 keep compiling
   * warning-free (positional initializers), as set_critical. */
  void (*set_observe_only)(void* ctx, uint64_t events);

  /* ---- 1.8 (check with TH_HAS_FIELD(host, th_host, set_side_by_side)) ----- */
  /* In create(): of the events this callback waits at (its event_mask less
   * what it observes only), the ones (TH_EVENT_BIT()s) at which it does not
   * steer the run (as set_observe_only says) and does its own work only: no
   * other callback of the event needs that work done before it runs (e.g.
   * flushing its own log file, linking a checkpoint it will upload). The
   * trainer still waits for it before the event ends, but an isolated
   * callback's call there may overlap the calls of the callbacks after it:
   * the trainer sends it, goes on with the next callbacks and collects its
   * answer at the end of the event. Flags set there are ignored (and
   * reported). In process nothing changes. Not calling it (a plugin built for
   * 1.7 or older) means every waited event is called in turn, as before. */
  void (*set_side_by_side)(void* ctx, uint64_t events);
} th_host;
#define TH_HOST_STRUCT_SIZE ((uint32_t)TH_STRUCT_SIZE(th_host, set_side_by_side))

/* ---- a callback: created per run, called per event ------------------------ */
typedef struct th_callback_vtable {
  uint32_t struct_size;
  /* Handle one event. Required. */
  th_status (*on_event)(void* self, const th_event_args* args, char* err, size_t err_size);
  /* Stateful callbacks (HF ExportableState): write the state as JSON text into
   * buf. If buf_size is too small, set *needed (bytes including NUL) and return
   * TH_BUFFER_TOO_SMALL; the host calls again with a larger buffer. Optional
   * (NULL = stateless); an empty string also means "nothing to save". */
  th_status (*save_state)(void* self, char* buf, size_t buf_size, size_t* needed, char* err, size_t err_size);
  /* Receive the JSON written by save_state when a run resumes. Optional. */
  th_status (*load_state)(void* self, const char* state_json, char* err, size_t err_size);
  /* Free the instance. Required; never fails. */
  void (*destroy)(void* self);
} th_callback_vtable;
#define TH_CALLBACK_VTABLE_STRUCT_SIZE ((uint32_t)TH_STRUCT_SIZE(th_callback_vtable, destroy))

typedef struct th_callback_info {
  uint32_t struct_size;
  const char* name;        /* unique across all libraries, [a-z0-9_]+ */
  const char* version;     /* the callback's own version, e.g. "1.2.0" */
  int32_t kind;            /* TH_KIND_* */
  const char* description; /* one line, for `trainhook plugins` */
  uint64_t event_mask;     /* TH_EVENT_BIT()s of events it wants; others are skipped */
  /* Create an instance. host outlives it. config_json is this callback's
   * configuration section (a JSON object, "{}" when none). */
  th_status (*create)(const th_host* host, const char* config_json, void** out_self, char* err,
                      size_t err_size);
  const th_callback_vtable* vtable;
} th_callback_info;
#define TH_CALLBACK_INFO_STRUCT_SIZE ((uint32_t)TH_STRUCT_SIZE(th_callback_info, vtable))

/* A subcommand a library adds to the CLI: `trainhook <name> args...` (e.g.
 * "wandb-sync"). Runs on the caller's thread; prints through host->log. */
typedef struct th_command_info {
  uint32_t struct_size;
  const char* name;        /* [a-z0-9-]+, unique across libraries */
  const char* description; /* one line, for `trainhook --help` and `trainhook plugins` */
  /* Returns the process exit code in *exit_code; a non-TH_OK status is an error
   * with its message in err. argv are the arguments after the command name. */
  th_status (*run)(const th_host* host, int32_t argc, const char* const* argv, int32_t* exit_code, char* err,
                   size_t err_size);
} th_command_info;
#define TH_COMMAND_INFO_STRUCT_SIZE ((uint32_t)TH_STRUCT_SIZE(th_command_info, run))

typedef struct th_plugin_info {
  uint32_t struct_size;
  uint32_t abi_major; /* TRAINHOOK_ABI_VERSION_MAJOR the plugin was built with */
  uint32_t abi_minor; /* the oldest host minor it needs: TRAINHOOK_ABI_MIN_MINOR */
  const char* name;   /* the library's name, e.g. "tensorboard" */
  const char* version;
  uint32_t callback_count;
  /* Arrays of POINTERS (static storage in the library): the host never strides
   * over element structs, so th_callback_info / th_command_info may grow. */
  const th_callback_info* const* callbacks;
  uint32_t command_count;                 /* CLI subcommands; 0 when none */
  const th_command_info* const* commands; /* may be NULL when command_count is 0 */
} th_plugin_info;
#define TH_PLUGIN_INFO_STRUCT_SIZE ((uint32_t)TH_STRUCT_SIZE(th_plugin_info, commands))

/* What the host tells the entry point about itself. */
typedef struct th_host_info {
  uint32_t struct_size;
  uint32_t abi_major;
  uint32_t abi_minor;
  const char* host_version; /* trainhook version string */
} th_host_info;
#define TH_HOST_INFO_STRUCT_SIZE ((uint32_t)TH_STRUCT_SIZE(th_host_info, host_version))

/* The entry point. Returns TH_OK and sets *out to static plugin information, or
 * an error (TH_ABI_MISMATCH when it cannot work with this host) with a message. */
typedef th_status (*th_plugin_entry_fn)(const th_host_info* host, const th_plugin_info** out, char* err,
                                        size_t err_size);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TRAINHOOK_ABI_H */
