// Trainer setup (callback list in HF's order), log(), evaluate(), predict(),
// checkpoints and best-metric tracking. The training loop is in
// training_loop.cpp.
#include "trainer_impl.hpp"

#include <trainhook/args/argument_parser.hpp>
#include <trainhook/args/secret_masking.hpp>
#include <trainhook/callbacks/default_flow_callback.hpp>
#include <trainhook/callbacks/trainer_state_io.hpp>
#include <trainhook/distributed/process_group.hpp>
#include <trainhook/strings.hpp>
#include <trainhook/trainer/checkpoint_dirs.hpp>
#include <trainhook/trainer/checkpoint_io.hpp>
#include <trainhook/trainer/reproducibility.hpp>

#include <spdlog/spdlog.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <stdexcept>

namespace fs = std::filesystem;

namespace trainhook {

ValuesView::ValuesView(const Metrics& m) {
  keys_.reserve(m.size());
  numbers_.reserve(m.size());
  for (const auto& [k, v] : m) {
    keys_.push_back(k.c_str());
    numbers_.push_back(v);
  }
  values_.struct_size = TH_VALUES_STRUCT_SIZE;
  values_.count = static_cast<uint32_t>(keys_.size());
  values_.keys = keys_.data();
  values_.values = numbers_.data();
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double round_to(double v, int digits) {
  const double scale = std::pow(10.0, digits);
  return std::round(v * scale) / scale;
}

void add_speed_metrics(Metrics& m, const std::string& split, double runtime, double samples,
                       std::optional<double> steps) {
  m[split + "_runtime"] = round_to(runtime, 4);
  m[split + "_samples_per_second"] = round_to(samples / runtime, 3);
  if (steps) m[split + "_steps_per_second"] = round_to(*steps / runtime, 3);
}

namespace {

std::string plugin_config_of(const TrainingArguments& args, const std::string& name) {
  if (args.plugin_config.is_object() && args.plugin_config.contains(name))
    return args.plugin_config[name].dump();
  return "{}";
}

TrainingArguments validated(TrainingArguments a) {
  validate(a);
  return a;
}

bool requests_plugins(const TrainingArguments& a) {
  for (const auto& r : a.report_to) {
    if (r != "none") return true;
  }
  return !a.callbacks.empty();
}

}  // namespace

Trainer::Impl::Impl(std::shared_ptr<Model> model_in, TrainingArguments args_in,
                    std::shared_ptr<TensorDataset> train, std::shared_ptr<TensorDataset> eval,
                    TrainerOptions options)
    : args(validated(std::move(args_in))),
      model(std::move(model_in)),
      train_dataset(std::move(train)),
      eval_dataset(std::move(eval)),
      compute_metrics(std::move(options.compute_metrics)),
      reduce_gradients(std::move(options.reduce_gradients)),
      group(std::move(options.process_group)),
      on_checkpoint_file(std::move(options.on_checkpoint_file)),
      print_metrics(options.print_metrics),
      // Masked once here: every copy written or handed to plugins is this one.
      args_json(mask_secrets(to_json(args)).dump(2)),
      memory(!args.skip_memory_metrics),
      handler(args.plugin_error_policy) {
  if (!model) throw std::invalid_argument("Trainer: no model given");
  if (!group && args.world_size > 1) {
    // HF sets up the distributed state from the launcher's environment.
    const auto env = distributed::read_launch_env();
    if (env.world_size != args.world_size || env.rank != args.process_index) {
      throw std::invalid_argument("world_size " + std::to_string(args.world_size) + " / process_index " +
                                  std::to_string(args.process_index) +
                                  " need a launcher (torchrun, srun or trainhook launch) that sets "
                                  "RANK and WORLD_SIZE to match; the environment has RANK=" +
                                  std::to_string(env.rank) + " WORLD_SIZE=" + std::to_string(env.world_size));
    }
    group = distributed::ProcessGroup::create(env, args.ddp_backend.value_or(DdpBackend::gloo),
                                              std::chrono::seconds(args.ddp_timeout));
  }
  if (group) {
    args.process_index = group->rank();
    args.world_size = group->size();
    if (args.local_rank < 0) args.local_rank = group->rank();
    // DDP's start: every rank holds rank 0's parameters and buffers, whatever its seed.
    std::vector<torch::Tensor> tensors = model->module().parameters();
    for (const auto& b : model->module().buffers()) tensors.push_back(b);
    distributed::broadcast_from_rank0(*group, tensors);
    if (!reduce_gradients) {
      const char* overlap = std::getenv("TRAINHOOK_DDP_OVERLAP");
      if (overlap && std::string(overlap) == "0") {
        // All-reduce after backward only (the benchmark's comparison point).
        auto g = group;
        reduce_gradients = [g](Model& m) { distributed::average_gradients(*g, m.module().parameters()); };
      } else {
        reducer = std::make_shared<distributed::GradientReducer>(group, model->module().parameters());
        auto r = reducer;
        reduce_gradients = [r](Model&) { r->finish(); };
      }
    }
  }
  set_seed(args.seed, args.full_determinism);
  fill_rank_state();
  for (const auto& p : model->module().parameters()) parameter_count += p.numel();

  host = std::make_unique<TrainerHost>(
      TrainerHost::Config{args.output_dir, args_json, args.run_name.value_or(args.output_dir),
                          model->description(), &access},
      state, handler);

  // HF's order: DefaultFlowCallback, report_to integrations, callbacks, progress.
  handler.add(std::make_unique<DefaultFlowCallback>(args));
  handler.add(access.state_callback());  // the ABI 1.1 learning-rate factor in checkpoints
  if (options.use_plugins) {
    PluginSearchOptions search = options.plugin_search;
    std::vector<fs::path> dirs(args.plugin_dir.begin(), args.plugin_dir.end());
    dirs.insert(dirs.end(), search.plugin_dirs.begin(), search.plugin_dirs.end());
    search.plugin_dirs = dirs;
    search.allow_unsafe_plugin_paths = search.allow_unsafe_plugin_paths || args.allow_unsafe_plugin_paths;
    search.allow_duplicate_plugins = search.allow_duplicate_plugins || args.allow_duplicate_plugins;
    registry.emplace(search);
    // Integrations report from world process zero only, as HF's do (the names
    // are still checked on every rank, so a typo fails everywhere).
    const auto integrations = registry->resolve_report_to(args.report_to);
    if (world_zero()) {
      for (const auto& name : integrations)
        handler.add(registry->create(name, *host, plugin_config_of(args, name)));
    }
    registry->check_callbacks(args.callbacks);
    for (const auto& name : args.callbacks)
      handler.add(registry->create(name, *host, plugin_config_of(args, name)));
  } else if (requests_plugins(args)) {
    throw std::invalid_argument(
        "report_to/callbacks name plugins, but this Trainer was built with use_plugins = false");
  }
  for (auto& cb : options.callbacks) {
    if (cb.callback) handler.add(std::move(cb));
  }
  if (options.use_plugins && world_zero()) {
    const std::string progress = args.disable_tqdm ? "printer" : "progress";
    if (registry->has(progress)) {
      handler.add(registry->create(progress, *host, plugin_config_of(args, progress)));
    } else {
      const std::string dirs = strings::join(registry->searched_dirs());
      spdlog::warn("the '{}' plugin was not found, so no progress is shown (searched: {})", progress,
                   dirs.empty() ? std::string("no folders") : dirs);
    }
  }
  fire(TH_EVENT_INIT_END);
}

void Trainer::Impl::fill_rank_state() {
  state.process_index = args.process_index;
  state.world_size = args.world_size;
  state.is_world_process_zero = args.process_index == 0;
  state.is_local_process_zero = args.local_rank <= 0;
}

void Trainer::Impl::sync_control() {
  if (!group) return;
  // A flag set by a callback on any rank holds on every rank, so all ranks
  // log, evaluate, save and stop at the same step.
  auto flags = torch::tensor(
      {static_cast<int32_t>(control.should_training_stop), static_cast<int32_t>(control.should_epoch_stop),
       static_cast<int32_t>(control.should_save), static_cast<int32_t>(control.should_evaluate),
       static_cast<int32_t>(control.should_log)},
      torch::kInt);
  std::vector<torch::Tensor> t{flags};
  group->all_reduce_max(t, "TrainerControl flags");
  const auto f = flags.accessor<int32_t, 1>();
  control.should_training_stop = f[0] != 0;
  control.should_epoch_stop = f[1] != 0;
  control.should_save = f[2] != 0;
  control.should_evaluate = f[3] != 0;
  control.should_log = f[4] != 0;
}

double Trainer::Impl::mean_over_ranks(double v) {
  if (!group) return v;
  auto t = torch::tensor({v}, torch::kDouble);
  std::vector<torch::Tensor> one{t};
  group->all_reduce_sum(one, "logged metrics");
  return t.item<double>() / static_cast<double>(group->size());
}

void Trainer::Impl::fire(EventId event, const EventPayload& payload) {
  handler.fire(event, state, control, access.payload(event, payload));
}

void Trainer::Impl::log(const Metrics& logs_in) {
  Metrics logs = logs_in;
  access.merge_metrics(logs);  // metrics plugins added (ABI 1.1)
  logs["epoch"] = state.epoch;
  nlohmann::json entry = nlohmann::json::object();
  for (const auto& [k, v] : logs) entry[k] = v;
  entry["step"] = state.global_step;
  state.log_history.push_back(std::move(entry));
  ValuesView view(logs);
  EventPayload payload;
  payload.values = view.get();
  fire(TH_EVENT_LOG, payload);
}

PredictionOutput Trainer::Impl::prediction_loop(const TensorDataset& dataset, const std::string& prefix,
                                                int32_t kind) {
  auto& module = model->module();
  const bool was_training = module.is_training();
  module.eval();
  torch::NoGradGuard no_grad;
  const int64_t bs = args.per_device_eval_batch_size;
  const int64_t n = dataset.size();
  // Several processes: each takes a contiguous part of the set and the parts
  // are gathered in rank order, so the predictions are in dataset order with
  // no padding (HF's SequentialDistributedSampler + DistributedTensorGatherer).
  const int64_t world = group ? group->size() : 1;
  const int64_t per_rank = (n + world - 1) / world;
  const int64_t first = std::min(n, per_rank * (group ? group->rank() : 0));
  const int64_t count = std::min(n - first, per_rank);
  const int64_t batches = (count + bs - 1) / bs;
  std::vector<torch::Tensor> outputs, labels;
  double loss_sum = 0;
  for (int64_t b = 0; b < batches; ++b) {
    const int64_t len = std::min(bs, count - b * bs);
    const Batch batch{dataset.inputs().narrow(0, first + b * bs, len),
                      dataset.labels().narrow(0, first + b * bs, len)};
    auto out = model->forward(batch.inputs);
    loss_sum += model->loss(out, batch.labels).item<double>() * static_cast<double>(len);
    outputs.push_back(out);
    labels.push_back(batch.labels);
    EventPayload payload;
    payload.batch_index = b;
    payload.batch_count = batches;
    payload.prediction_kind = kind;
    fire(TH_EVENT_PREDICTION_STEP, payload);
  }
  PredictionOutput result;
  if (group && n > 0) {
    if (outputs.empty()) {
      // This rank's part is empty (fewer samples than ranks): zero rows of the right shape.
      outputs.push_back(model->forward(dataset.inputs().narrow(0, 0, 1)).narrow(0, 0, 0));
      labels.push_back(dataset.labels().narrow(0, 0, 0));
    }
    result.predictions = group->gather_rows(torch::cat(outputs).contiguous(), "evaluation outputs");
    result.label_ids = group->gather_rows(torch::cat(labels).contiguous(), "evaluation labels");
    auto total = torch::tensor({loss_sum}, torch::kDouble);
    std::vector<torch::Tensor> t{total};
    group->all_reduce_sum(t, "evaluation loss");
    result.metrics[prefix + "_loss"] = total.item<double>() / static_cast<double>(n);
  } else if (batches > 0) {
    result.predictions = torch::cat(outputs);
    result.label_ids = torch::cat(labels);
    result.metrics[prefix + "_loss"] = loss_sum / static_cast<double>(n);
  }
  if (was_training) module.train();
  if (compute_metrics && result.predictions.defined()) {
    for (const auto& [k, v] : compute_metrics(EvalPrediction{result.predictions, result.label_ids})) {
      result.metrics[k.rfind(prefix + "_", 0) == 0 ? k : prefix + "_" + k] = v;
    }
  }
  return result;
}

Metrics Trainer::Impl::evaluate(const std::shared_ptr<TensorDataset>& dataset_in, const std::string& prefix) {
  const auto dataset = dataset_in ? dataset_in : eval_dataset;
  if (!dataset)
    throw std::invalid_argument(
        "evaluate: no evaluation dataset (pass one or give the Trainer an eval_dataset)");
  memory.start(prefix == "eval" ? "eval" : prefix);
  fire(TH_EVENT_EVALUATE_BEGIN);  // ABI 1.1: e.g. EMA weights swapped in
  const auto start = std::chrono::steady_clock::now();
  auto output = prediction_loop(*dataset, prefix, 0);
  const auto n = static_cast<double>(dataset->size());
  const double steps = std::ceil(n / static_cast<double>(args.per_device_eval_batch_size));
  add_speed_metrics(output.metrics, prefix, seconds_since(start), n, steps);
  log(output.metrics);
  // HF's log() adds "epoch" to the dict it is given, so evaluate's metrics (seen
  // by on_evaluate and saved to eval_results.json) carry it too.
  output.metrics["epoch"] = state.epoch;
  ValuesView view(output.metrics);
  EventPayload payload;
  payload.values = view.get();
  fire(TH_EVENT_EVALUATE, payload);
  memory.stop_and_update(prefix == "eval" ? "eval" : prefix, output.metrics);
  return output.metrics;
}

PredictionOutput Trainer::Impl::predict(const std::shared_ptr<TensorDataset>& dataset,
                                        const std::string& prefix) {
  if (!dataset) throw std::invalid_argument("predict: no dataset given");
  memory.start("test");
  const auto start = std::chrono::steady_clock::now();
  auto output = prediction_loop(*dataset, prefix, 1);
  const auto n = static_cast<double>(dataset->size());
  add_speed_metrics(output.metrics, prefix, seconds_since(start), n,
                    std::ceil(n / static_cast<double>(args.per_device_eval_batch_size)));
  ValuesView view(output.metrics);
  EventPayload payload;
  payload.values = view.get();
  fire(TH_EVENT_PREDICT, payload);
  memory.stop_and_update("test", output.metrics);
  return output;
}

bool Trainer::Impl::update_best_metric(const Metrics& metrics) {
  if (!args.metric_for_best_model) return false;
  std::string name = *args.metric_for_best_model;
  if (name.rfind("eval_", 0) != 0) name = "eval_" + name;
  const auto it = metrics.find(name);
  if (it == metrics.end()) {
    std::string have;
    for (const auto& [k, v] : metrics) have += (have.empty() ? "" : ", ") + k;
    throw std::runtime_error("metric_for_best_model: the evaluation has no metric '" + name +
                             "' (it has: " + have + "); set --metric_for_best_model to one of them");
  }
  const bool greater =
      args.greater_is_better.value_or(name.size() < 4 || name.compare(name.size() - 4, 4, "loss") != 0);
  const double value = it->second;
  const bool better =
      !state.best_metric || (greater ? value > *state.best_metric : value < *state.best_metric);
  if (better) {
    state.best_metric = value;
    state.best_global_step = state.global_step;
  }
  return better;
}

void Trainer::Impl::save_checkpoint() {
  const fs::path out(args.output_dir);
  const fs::path folder = checkpoint_dir(out, state.global_step);
  // The best checkpoint is the one saved at the step of the best evaluation.
  if (state.best_global_step && (*state.best_global_step == state.global_step ||
                                 fs::exists(checkpoint_dir(out, *state.best_global_step)))) {
    state.best_model_checkpoint = checkpoint_dir(out, *state.best_global_step).string();
  }
  handler.save_states(state, control);
  // Every rank's RNG state goes into the checkpoint rank 0 writes
  // (rng_state_<rank>.pth, as HF names them in a multi-process run).
  std::vector<torch::Tensor> rank_rng;
  if (group) {
    const auto mine = cpu_rng_state();
    const auto all = group->gather_rows(mine.reshape({1, -1}).contiguous(), "checkpoint RNG states");
    for (int64_t r = 0; r < all.size(0); ++r) rank_rng.push_back(all[r].clone());
  }
  if (world_zero()) {
    fs::create_directories(out);
    CheckpointContents contents;
    contents.module = &model->module();
    contents.optimizer = optimizer.get();
    contents.scheduler = &*scheduler;
    contents.state = &state;
    contents.training_args_json = args_json;
    contents.on_file = on_checkpoint_file;
    contents.rank_rng_states = rank_rng;
    write_checkpoint_atomically(out, state.global_step,
                                [&](const fs::path& tmp) { write_checkpoint_files(tmp, contents); });
    if (args.save_total_limit) rotate_checkpoints(out, *args.save_total_limit, state.best_model_checkpoint);
  }
  // No rank goes on (and may load it, or exit) before the checkpoint is complete.
  if (group) group->barrier("checkpoint written by rank 0");
  const std::string dir = folder.string();
  EventPayload payload;
  payload.checkpoint_dir = dir.c_str();
  fire(TH_EVENT_SAVE, payload);
}

void Trainer::Impl::write_training_args() const {
  if (!world_zero()) return;
  fs::create_directories(args.output_dir);
  const fs::path file = fs::path(args.output_dir) / kTrainingArgsFile;
  std::ofstream out(file);
  out << args_json << "\n";
  if (!out) throw std::runtime_error("cannot write " + file.string());
}

// ---- the public face -------------------------------------------------------

Trainer::Trainer(std::shared_ptr<Model> model, TrainingArguments args,
                 std::shared_ptr<TensorDataset> train_dataset, std::shared_ptr<TensorDataset> eval_dataset,
                 TrainerOptions options)
    : impl_(std::make_unique<Impl>(std::move(model), std::move(args), std::move(train_dataset),
                                   std::move(eval_dataset), std::move(options))) {}

Trainer::~Trainer() = default;

TrainOutput Trainer::train(std::optional<std::string> resume) { return impl_->train(std::move(resume)); }

Metrics Trainer::evaluate(std::shared_ptr<TensorDataset> dataset, const std::string& prefix) {
  return impl_->evaluate(dataset, prefix);
}

PredictionOutput Trainer::predict(std::shared_ptr<TensorDataset> dataset, const std::string& prefix) {
  return impl_->predict(dataset, prefix);
}

void Trainer::log(const Metrics& logs) { impl_->log(logs); }

void Trainer::log_metrics(const std::string& split, const Metrics& metrics) const {
  if (impl_->world_zero()) trainhook::log_metrics(std::cout, split, metrics);
}

void Trainer::save_metrics(const std::string& split, const Metrics& metrics, bool combined) const {
  if (impl_->world_zero()) trainhook::save_metrics(impl_->args.output_dir, split, metrics, combined);
}

void Trainer::save_model(const std::optional<fs::path>& dir) {
  if (!impl_->world_zero()) return;
  const fs::path target = dir.value_or(fs::path(impl_->args.output_dir));
  fs::create_directories(target);
  save_model_weights(impl_->model->module(), target / kModelFile);
  std::ofstream out(target / kTrainingArgsFile);
  out << impl_->args_json << "\n";
  if (!out) throw std::runtime_error("cannot write " + (target / kTrainingArgsFile).string());
}

const TrainerState& Trainer::state() const noexcept { return impl_->state; }
const TrainingArguments& Trainer::args() const noexcept { return impl_->args; }
Model& Trainer::model() noexcept { return *impl_->model; }
CallbackHandler& Trainer::callback_handler() noexcept { return impl_->handler; }
HostServices& Trainer::host() noexcept { return *impl_->host; }

Metrics accuracy_metrics(const EvalPrediction& p) {
  const auto predicted = p.predictions.argmax(-1);
  const double correct = predicted.eq(p.label_ids).sum().item<double>();
  return {{"accuracy", correct / static_cast<double>(p.label_ids.numel())}};
}

}  // namespace trainhook

namespace trainhook {

Metrics Trainer::predict_metrics(std::shared_ptr<TensorDataset> dataset, const std::string& prefix,
                                 const std::optional<fs::path>& predictions_file) {
  const auto output = impl_->predict(dataset, prefix);
  if (predictions_file && impl_->world_zero() && output.predictions.defined()) {
    const auto ids = output.predictions.argmax(-1).reshape({output.predictions.size(0), -1}).contiguous();
    const auto acc = ids.accessor<int64_t, 2>();
    const fs::path tmp = predictions_file->string() + ".tmp";
    {
      std::ofstream out(tmp);
      out << "index\tprediction\n";
      for (int64_t i = 0; i < ids.size(0); ++i) {
        out << i << '\t';
        for (int64_t j = 0; j < ids.size(1); ++j) out << (j ? " " : "") << acc[i][j];
        out << '\n';
      }
      if (!out) throw std::runtime_error("cannot write " + tmp.string());
    }
    fs::rename(tmp, *predictions_file);
  }
  return output.metrics;
}

void Trainer::load_model(const fs::path& path) {
  load_model_weights(impl_->model->module(), fs::is_directory(path) ? path / kModelFile : path);
}

void Trainer::save_state() const {
  if (!impl_->world_zero()) return;
  fs::create_directories(impl_->args.output_dir);
  save_trainer_state(impl_->state, fs::path(impl_->args.output_dir) / kTrainerStateFile);
}

}  // namespace trainhook
