/* An ABI 1.1 plugin in plain C (C11, only the SDK's C headers and dlpack/dlpack.h, no
 * LibTorch): the callback "c_grad_norm".
 *  - at on_pre_optimizer_step: the global gradient L2 norm from the gradient
 *    views, added to the next log record as "c_grad_norm"; this step's values
 *    (th_step_values) as "c_step_loss", "c_step_grad_norm", "c_step_lr";
 *  - config {"lr_factor": F, "lr_factor_step": S}: set_lr_factor(F) at the
 *    on_step_end of global_step S;
 *  - config {"stats": true}: at every on_pre_optimizer_step, min/max/sum/num of
 *    every parameter and gradient as "c_stats/<weights|gradients>/<name>/<what>"
 *    (the reference for the TensorBoard histograms test);
 *  - config {"probe": true}: tries every bad input once (at on_step_begin of
 *    step 0 and on_step_end of step 1) and logs "probe <case> status=<n> <message>",
 *    plus one good write at a safe point. */
#include <trainhook/abi.h>
#include <trainhook/plugin_entry.h>

#include <dlpack/dlpack.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct grad_norm {
  const th_host* host;
  int probe;
  int stats;
  double lr_factor;
  long lr_factor_step;
} grad_norm;

static void write_err(char* err, size_t err_size, const char* msg) {
  if (err == NULL || err_size == 0) return;
  strncpy(err, msg, err_size - 1);
  err[err_size - 1] = '\0';
}

static double number_after(const char* json, const char* key, double fallback) {
  const char* p = strstr(json, key);
  if (p == NULL) return fallback;
  p = strchr(p + strlen(key), ':');
  return p != NULL ? strtod(p + 1, NULL) : fallback;
}

static void logf_(const grad_norm* g, const char* what, th_status st, const char* err) {
  char line[1400];
  snprintf(line, sizeof line, "probe %s status=%d %s", what, (int)st, err);
  g->host->log(g->host->ctx, TH_LOG_INFO, line);
}

static th_status metric(const grad_norm* g, const char* name, double v, char* err, size_t err_size) {
  return g->host->add_metric(g->host->ctx, name, v, err, err_size);
}

/* Sum of squares of a float32 or float64 CPU tensor of any strides. */
static int sum_squares(const DLTensor* t, double* out) {
  int64_t n = 1, i;
  int d;
  if (t->data == NULL) return 1; /* no gradient: contributes nothing */
  if (t->device.device_type != kDLCPU || t->dtype.code != kDLFloat || t->dtype.lanes != 1) return 0;
  for (d = 0; d < t->ndim; ++d) n *= t->shape[d];
  for (i = 0; i < n; ++i) {
    /* Element i in row-major order -> its offset through the strides. */
    int64_t rest = i, off = 0;
    double v;
    for (d = t->ndim - 1; d >= 0; --d) {
      const int64_t idx = rest % t->shape[d];
      rest /= t->shape[d];
      off += idx * (t->strides != NULL ? t->strides[d] : 1);
    }
    if (t->dtype.bits == 32) {
      v = ((const float*)((const char*)t->data + t->byte_offset))[off];
    } else if (t->dtype.bits == 64) {
      v = ((const double*)((const char*)t->data + t->byte_offset))[off];
    } else {
      return 0;
    }
    *out += v * v;
  }
  return 1;
}

/* min/max/sum/num of a float CPU tensor (contiguous, as the model's are). */
static th_status add_stats(const grad_norm* g, const char* kind, const char* name, const DLTensor* t,
                           char* err, size_t err_size) {
  int64_t n = 1, i;
  int d;
  double mn = 0, mx = 0, sum = 0;
  char key[512];
  const char* what[4] = {"min", "max", "sum", "num"};
  double vals[4];
  th_status st;
  if (t->data == NULL) return TH_OK;
  for (d = 0; d < t->ndim; ++d) n *= t->shape[d];
  for (i = 0; i < n; ++i) {
    const double v = t->dtype.bits == 32 ? (double)((const float*)((const char*)t->data + t->byte_offset))[i]
                                         : ((const double*)((const char*)t->data + t->byte_offset))[i];
    if (i == 0 || v < mn) mn = v;
    if (i == 0 || v > mx) mx = v;
    sum += v;
  }
  vals[0] = mn;
  vals[1] = mx;
  vals[2] = sum;
  vals[3] = (double)n;
  for (d = 0; d < 4; ++d) {
    snprintf(key, sizeof key, "c_stats/%s/%s/%s", kind, name, what[d]);
    if ((st = metric(g, key, vals[d], err, err_size)) != TH_OK) return st;
  }
  return TH_OK;
}

static th_status add_all_stats(const grad_norm* g, char* err, size_t err_size) {
  const int32_t kinds[2] = {TH_TENSORS_PARAMETERS, TH_TENSORS_GRADIENTS};
  const char* names[2] = {"weights", "gradients"};
  int k;
  uint32_t i;
  th_status st;
  for (k = 0; k < 2; ++k) {
    th_tensor_list l;
    memset(&l, 0, sizeof l);
    l.struct_size = TH_TENSOR_LIST_STRUCT_SIZE;
    if ((st = g->host->tensors(g->host->ctx, kinds[k], TH_ACCESS_READ, &l, err, err_size)) != TH_OK)
      return st;
    for (i = 0; i < l.count; ++i)
      if ((st = add_stats(g, names[k], l.names[i], &l.tensors[i], err, err_size)) != TH_OK) return st;
  }
  return TH_OK;
}

static void probe_all(grad_norm* g, int32_t event) {
  char err[1024];
  th_tensor_list l;
  th_status st;
  uint32_t n = 0;
  double lrs[4];
  memset(&l, 0, sizeof l);
  l.struct_size = TH_TENSOR_LIST_STRUCT_SIZE;
  err[0] = '\0';
  if (event == TH_EVENT_STEP_BEGIN) {
    st = g->host->tensors(g->host->ctx, TH_TENSORS_GRADIENTS, TH_ACCESS_READ, &l, err, sizeof err);
    logf_(g, "grad_view_at_step_begin", st, err);
    err[0] = '\0';
    st = g->host->tensors(g->host->ctx, TH_TENSORS_PARAMETERS, TH_ACCESS_WRITE, &l, err, sizeof err);
    logf_(g, "param_write_at_step_begin", st, err);
    err[0] = '\0';
    st = g->host->set_lr_factor(g->host->ctx, 0.0, err, sizeof err);
    logf_(g, "factor_zero", st, err);
    err[0] = '\0';
    st = g->host->set_lr_factor(g->host->ctx, -2.0, err, sizeof err);
    logf_(g, "factor_negative", st, err);
    err[0] = '\0';
    st = g->host->add_metric(g->host->ctx, "", 1.0, err, sizeof err);
    logf_(g, "metric_empty_name", st, err);
    err[0] = '\0';
    st = g->host->add_metric(g->host->ctx, "c_nan", nan(""), err, sizeof err);
    logf_(g, "metric_nan", st, err);
    err[0] = '\0';
    st = g->host->add_metric(g->host->ctx, NULL, 1.0, err, sizeof err);
    logf_(g, "metric_null_name", st, err);
    err[0] = '\0';
    st = g->host->skip_optimizer_step(g->host->ctx, err, sizeof err);
    logf_(g, "skip_at_step_begin", st, err);
    err[0] = '\0';
    st = g->host->tensors(g->host->ctx, TH_TENSORS_PARAMETERS, TH_ACCESS_READ, NULL, err, sizeof err);
    logf_(g, "null_list", st, err);
    err[0] = '\0';
    st = g->host->learning_rates(g->host->ctx, lrs, 4, &n, err, sizeof err);
    logf_(g, "learning_rates", st, err);
  } else if (event == TH_EVENT_OPTIMIZER_STEP) {
    st = g->host->tensors(g->host->ctx, TH_TENSORS_PARAMETERS, TH_ACCESS_WRITE, &l, err, sizeof err);
    logf_(g, "param_write_at_optimizer_step", st, err);
  }
}

static th_status on_event(void* self, const th_event_args* args, char* err, size_t err_size) {
  grad_norm* g = (grad_norm*)self;
  if (g->probe && args->state->global_step == 0 &&
      (args->event == TH_EVENT_STEP_BEGIN || args->event == TH_EVENT_OPTIMIZER_STEP))
    probe_all(g, args->event);
  if (args->event == TH_EVENT_PRE_OPTIMIZER_STEP) {
    th_tensor_list l;
    double ss = 0;
    uint32_t i;
    th_status st;
    memset(&l, 0, sizeof l);
    l.struct_size = TH_TENSOR_LIST_STRUCT_SIZE;
    st = g->host->tensors(g->host->ctx, TH_TENSORS_GRADIENTS, TH_ACCESS_READ, &l, err, err_size);
    if (st != TH_OK) return st;
    for (i = 0; i < l.count; ++i) {
      if (!sum_squares(&l.tensors[i], &ss)) {
        write_err(err, err_size, "c_grad_norm: a gradient is not a float CPU tensor");
        return TH_ERROR;
      }
    }
    if ((st = metric(g, "c_grad_norm", sqrt(ss), err, err_size)) != TH_OK) return st;
    if (!TH_HAS_FIELD(args, th_event_args, step) || args->step == NULL) {
      write_err(err, err_size, "c_grad_norm: no step values at on_pre_optimizer_step");
      return TH_ERROR;
    }
    if ((st = metric(g, "c_step_loss", args->step->loss, err, err_size)) != TH_OK) return st;
    if (!isnan(args->step->grad_norm) &&
        (st = metric(g, "c_step_grad_norm", args->step->grad_norm, err, err_size)) != TH_OK)
      return st;
    if ((st = metric(g, "c_step_lr", args->step->learning_rate, err, err_size)) != TH_OK) return st;
    if (g->stats && (st = add_all_stats(g, err, err_size)) != TH_OK) return st;
  }
  if (args->event == TH_EVENT_STEP_END && g->lr_factor > 0 && args->state->global_step == g->lr_factor_step)
    return g->host->set_lr_factor(g->host->ctx, g->lr_factor, err, err_size);
  return TH_OK;
}

static void destroy(void* self) { free(self); }

static th_status create(const th_host* host, const char* config_json, void** out, char* err,
                        size_t err_size) {
  grad_norm* g;
  if (!TH_HAS_FIELD(host, th_host, skip_optimizer_step) || host->tensors == NULL) {
    write_err(err, err_size, "c_grad_norm needs a trainhook ABI 1.1 host (tensor views)");
    return TH_ABI_MISMATCH;
  }
  g = (grad_norm*)calloc(1, sizeof *g);
  if (g == NULL) {
    write_err(err, err_size, "c_grad_norm: out of memory");
    return TH_ERROR;
  }
  g->host = host;
  g->probe = strstr(config_json, "\"probe\": true") != NULL || strstr(config_json, "\"probe\":true") != NULL;
  g->stats = strstr(config_json, "\"stats\": true") != NULL || strstr(config_json, "\"stats\":true") != NULL;
  g->lr_factor = number_after(config_json, "\"lr_factor\"", 0);
  g->lr_factor_step = (long)number_after(config_json, "\"lr_factor_step\"", 1);
  *out = g;
  return TH_OK;
}

static const th_callback_vtable vtable = {TH_CALLBACK_VTABLE_STRUCT_SIZE, on_event, NULL, NULL, destroy};

static const th_callback_info info = {
    TH_CALLBACK_INFO_STRUCT_SIZE,
    "c_grad_norm",
    "1.1.0",
    TH_KIND_CALLBACK,
    "global gradient L2 norm from tensor views (plain C, ABI 1.1)",
    TH_EVENT_BIT(TH_EVENT_STEP_BEGIN) | TH_EVENT_BIT(TH_EVENT_PRE_OPTIMIZER_STEP) |
        TH_EVENT_BIT(TH_EVENT_OPTIMIZER_STEP) | TH_EVENT_BIT(TH_EVENT_STEP_END),
    create,
    &vtable};
static const th_callback_info* const callbacks[] = {&info};
TH_PLUGIN_ENTRY("c_grad_norm", "1.1.0", callbacks)
