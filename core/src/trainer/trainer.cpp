// Trainer construction, log() and the public face. The other jobs of the
// Trainer are in files of their own (trainer_impl.hpp lists them).
#include "trainer_impl.hpp"

#include <trainhook/args/argument_parser.hpp>
#include <trainhook/args/plugin_config_sections.hpp>
#include <trainhook/args/secret_masking.hpp>
#include <trainhook/plugin_host/containment/plugin_exit_guard.hpp>
#include <trainhook/checkpoint/reproducibility.hpp>
#include <trainhook/distributed/make_data_parallel.hpp>
#include <trainhook/trainer/signal_guard.hpp>

#include <spdlog/spdlog.h>

#include <cmath>
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

TrainingArguments validated(TrainingArguments a) {
  validate(a);
  return a;
}

// The Trainer's options that concern several processes, for make_data_parallel.
distributed::DataParallelOptions data_parallel_options(TrainerOptions& options, Model* model) {
  distributed::DataParallelOptions dp;
  dp.process_group = std::move(options.process_group);
  dp.gradient_reduction = options.gradient_reduction;
  // The model outlives the data-parallel object (Impl declares it first).
  if (options.reduce_gradients)
    dp.reduce_gradients = [hook = std::move(options.reduce_gradients), model] { hook(*model); };
  return dp;
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
      on_checkpoint_file(std::move(options.on_checkpoint_file)),
      model_config_json(std::move(options.model_config_json)),
      before_train_end(std::move(options.before_train_end)),
      // Masked once here: every copy written or handed to plugins is this one.
      args_json(mask_secrets(to_json(args)).dump(2)),
      memory(!args.skip_memory_metrics),
      handler(args.plugin_error_policy) {
  if (!model) throw std::invalid_argument("Trainer: no model given");
  handler.set_profiler(profile.get());
  // The model goes to its device before rank 0's weights are broadcast and the optimizer is made.
  device = choose_device(args);
  autocast = autocast_dtype(args);
  scaler = GradScaler(args.fp16);
  if (!device.is_cpu()) model->module().to(device);
  if (args.process_index == 0 || args.local_rank <= 0)
    spdlog::info(
        "training on {}{}", device.is_cpu() ? std::string("the CPU") : device.str(),
        autocast ? (args.bf16 ? " with bfloat16 autocast (--bf16)" : " with float16 autocast (--fp16)") : "");
  // HF sets up the distributed state first (from the launcher's environment
  // when no group is given); it fixes this process's rank in `args`.
  data_parallel =
      distributed::make_data_parallel(args, model->module(), data_parallel_options(options, model.get()));
  // Before the callbacks are made (they may write into output_dir) and before
  // anything of output_dir is read; `trainhook train` took it already (shared).
  if (args.process_index == 0 && !output_dir_read_only(args.do_train, args.do_eval, args.do_predict))
    output_dir_lock = OutputDirLock::acquire(args.output_dir);
  set_seed(args.seed, args.full_determinism);
  fill_rank_state();
  for (const auto& p : model->module().parameters()) parameter_count += p.numel();

  services = std::make_unique<TrainerServices>(
      TrainerServices::Config{args.output_dir, args_json, args.run_name.value_or(args.output_dir),
                              model->description(), &access, profile.get()},
      state, handler);
  assemble_callbacks(options);
  fire(TH_EVENT_INIT_END);
}

void Trainer::Impl::fill_rank_state() {
  state.process_index = args.process_index;
  state.world_size = args.world_size;
  state.is_world_process_zero = args.process_index == 0;
  state.is_local_process_zero = args.local_rank <= 0;
}

void Trainer::Impl::fire(EventId event, const EventPayload& payload) {
  throw_if_second_signal();  // the event boundary where a second signal ends the run
  handler.fire(event, state, control, access.payload(event, payload));
}

void Trainer::Impl::log(const Metrics& logs_in) {
  Metrics logs = logs_in;
  access.merge_metrics(logs);  // metrics plugins added (ABI 1.1)
  logs["epoch"] = state.epoch;
  if (args.include_num_input_tokens_seen)
    logs["num_input_tokens_seen"] = static_cast<double>(state.num_input_tokens_seen);
  nlohmann::json entry = nlohmann::json::object();
  for (const auto& [k, v] : logs) entry[k] = v;
  // An integer in log_history, as HF writes it.
  if (args.include_num_input_tokens_seen) entry["num_input_tokens_seen"] = state.num_input_tokens_seen;
  entry["step"] = state.global_step;
  state.log_history.push_back(std::move(entry));
  ValuesView view(logs);
  EventPayload payload;
  payload.values = view.get();
  fire(TH_EVENT_LOG, payload);
}

// ---- the public face -------------------------------------------------------

Trainer::Trainer(std::shared_ptr<Model> model, TrainingArguments args,
                 std::shared_ptr<TensorDataset> train_dataset, std::shared_ptr<TensorDataset> eval_dataset,
                 TrainerOptions options)
    : impl_(std::make_unique<Impl>(std::move(model), std::move(args), std::move(train_dataset),
                                   std::move(eval_dataset), std::move(options))) {}

Trainer::~Trainer() = default;

// A plugin that calls exit() in these calls ends the process with
// kPluginExitStatus and a message (plugin_exit_guard.hpp); the embedder's own
// exit() between them is left alone.
TrainOutput Trainer::train(std::optional<std::string> resume) {
  PluginExitGuard plugin_exit_guard;
  return impl_->train(std::move(resume));
}

Metrics Trainer::evaluate(std::shared_ptr<TensorDataset> dataset, const std::string& prefix) {
  PluginExitGuard plugin_exit_guard;
  return impl_->evaluate(dataset, prefix);
}

PredictionOutput Trainer::predict(std::shared_ptr<TensorDataset> dataset, const std::string& prefix) {
  PluginExitGuard plugin_exit_guard;
  return impl_->predict(dataset, prefix);
}

void Trainer::log(const Metrics& logs) { impl_->log(logs); }

void Trainer::log_metrics(const std::string& split, const Metrics& metrics) const {
  if (impl_->world_zero()) trainhook::log_metrics(std::cout, split, metrics);
}

void Trainer::save_metrics(const std::string& split, const Metrics& metrics, bool combined) const {
  if (impl_->world_zero()) trainhook::save_metrics(impl_->args.output_dir, split, metrics, combined);
}

const TrainerState& Trainer::state() const noexcept { return impl_->state; }
const TrainingArguments& Trainer::args() const noexcept { return impl_->args; }
Model& Trainer::model() noexcept { return *impl_->model; }
CallbackHandler& Trainer::callback_handler() noexcept { return impl_->handler; }
HostServices& Trainer::host() noexcept { return *impl_->services; }

}  // namespace trainhook
