// evaluate() and predict(): HF's evaluation_loop over a dataset, split across
// processes and gathered back in dataset order, then compute_metrics and the
// speed metrics.
#include "trainer_impl.hpp"

#include <trainhook/plugin_host/containment/plugin_exit_guard.hpp>
#include <trainhook/optim/optimizer_factory.hpp>
#include <trainhook/trainer/training_loss.hpp>

#include <cmath>
#include <fstream>
#include <iomanip>
#include <stdexcept>

namespace fs = std::filesystem;

namespace trainhook {
namespace {

// Predictions as HF hands them to compute_metrics: on the CPU, and float32 where
// autocast made them bfloat16/float16 (HF's nested_numpify upcasts them too).
torch::Tensor on_cpu_full_precision(const torch::Tensor& t) {
  const bool reduced = t.scalar_type() == torch::kBFloat16 || t.scalar_type() == torch::kHalf;
  return t.to(t.options().device(torch::kCPU).dtype(reduced ? torch::kFloat : t.scalar_type()));
}

// "index<TAB>prediction" lines, argmax of the last output dimension (a
// sequence gives space-separated ids), written to a temporary file and renamed.
// Class ids (argmax) for class labels; the predicted values for real-valued labels.
void write_predictions(const PredictionOutput& output, const fs::path& file) {
  const auto& predictions = output.predictions;
  const bool real = output.label_ids.defined() && output.label_ids.is_floating_point();
  const auto values = (real ? predictions.to(torch::kDouble) : predictions.argmax(-1).to(torch::kDouble))
                          .reshape({predictions.size(0), -1})
                          .contiguous();
  const auto acc = values.accessor<double, 2>();
  const fs::path tmp = file.string() + ".tmp";
  {
    std::ofstream out(tmp);
    out << "index\tprediction\n";
    for (int64_t i = 0; i < values.size(0); ++i) {
      out << i << '\t';
      for (int64_t j = 0; j < values.size(1); ++j) {
        if (j) out << ' ';
        if (real) {
          out << std::setprecision(9) << acc[i][j];
        } else {
          out << static_cast<int64_t>(acc[i][j]);
        }
      }
      out << '\n';
    }
    if (!out) throw std::runtime_error("cannot write " + tmp.string());
  }
  fs::rename(tmp, file);
}

}  // namespace

PredictionOutput Trainer::Impl::prediction_loop(const TensorDataset& dataset, const std::string& prefix,
                                                int32_t kind) {
  auto& module = model->module();
  const bool was_training = module.is_training();
  module.eval();
  torch::NoGradGuard no_grad;
  const int64_t bs = args.per_device_eval_batch_size;
  const int64_t n = dataset.size();
  // Each process takes a contiguous part of the set and the parts are gathered
  // in rank order, so the predictions are in dataset order with no padding
  // (HF's SequentialDistributedSampler + DistributedTensorGatherer).
  const int64_t world = data_parallel->world_size();
  const int64_t per_rank = (n + world - 1) / world;
  const int64_t first = std::min(n, per_rank * data_parallel->rank());
  const int64_t count = std::min(n - first, per_rank);
  const int64_t batches = (count + bs - 1) / bs;
  std::vector<torch::Tensor> outputs, labels;
  double loss_sum = 0;
  for (int64_t b = 0; b < batches; ++b) {
    const int64_t len = std::min(bs, count - b * bs);
    const Batch batch = dataset.slice(first + b * bs, len);
    ModelOutput result;
    {
      const AutocastScope mixed_precision(device.type(), autocast);
      result = forward_with_loss(*model, to_device(batch, device), args.label_smoothing_factor);
    }
    loss_sum += result.loss.item<double>() * static_cast<double>(len);
    outputs.push_back(on_cpu_full_precision(result.outputs));
    labels.push_back(batch.labels);
    EventPayload payload;
    payload.batch_index = b;
    payload.batch_count = batches;
    payload.prediction_kind = kind;
    fire(TH_EVENT_PREDICTION_STEP, payload);
  }
  PredictionOutput result;
  if (n > 0) {
    if (outputs.empty()) {
      // This rank's part is empty (fewer samples than ranks): zero rows of the right shape.
      const AutocastScope mixed_precision(device.type(), autocast);
      outputs.push_back(on_cpu_full_precision(
          model->forward_batch(to_device(dataset.slice(0, 1), device)).outputs.narrow(0, 0, 0)));
      labels.push_back(dataset.labels().narrow(0, 0, 0));
    }
    result.predictions = data_parallel->gather_rows(torch::cat(outputs).contiguous(), "evaluation outputs");
    result.label_ids = data_parallel->gather_rows(torch::cat(labels).contiguous(), "evaluation labels");
    result.metrics[prefix + "_loss"] =
        data_parallel->sum_over_ranks(loss_sum, "evaluation loss") / static_cast<double>(n);
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
  const ProfileScope timed(profile.get(), profile.actions().evaluate);
  fire(TH_EVENT_EVALUATE_BEGIN);  // ABI 1.1: e.g. EMA weights swapped in
  const auto dataset = dataset_in ? dataset_in : eval_dataset;
  if (!dataset)
    throw std::invalid_argument(
        "evaluate: no evaluation dataset (pass one or give the Trainer an eval_dataset)");
  memory.start(prefix == "eval" ? "eval" : prefix);
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
  if (in_train && !dataset_in && scheduler && scheduler->metric_driven()) {
    // HF's _evaluate: reduce_lr_on_plateau steps on the training-time evaluation only.
    scheduler->step_metrics(output.metrics, args.metric_for_best_model);
    set_learning_rate(*optimizer, access.lr());
  }
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

Metrics Trainer::predict_metrics(std::shared_ptr<TensorDataset> dataset, const std::string& prefix,
                                 const std::optional<fs::path>& predictions_file) {
  PluginExitGuard plugin_exit_guard;  // as in Trainer::predict
  const auto output = impl_->predict(dataset, prefix);
  if (predictions_file && impl_->world_zero() && output.predictions.defined())
    write_predictions(output, *predictions_file);
  return output.metrics;
}

Metrics accuracy_metrics(const EvalPrediction& p) {
  const auto predicted = p.predictions.argmax(-1);
  const double correct = predicted.eq(p.label_ids).sum().item<double>();
  return {{"accuracy", correct / static_cast<double>(p.label_ids.numel())}};
}

}  // namespace trainhook
