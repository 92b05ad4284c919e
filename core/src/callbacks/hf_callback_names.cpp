#include <trainhook/callbacks/hf_callback_names.hpp>

#include <map>

namespace trainhook {

std::string stateful_callback_key(const std::string& callback_name) {
  // transformers/trainer_callback.py and integrations/integration_utils.py class names.
  static const std::map<std::string, std::string> hf = {{"early_stopping", "EarlyStoppingCallback"},
                                                        {"progress", "ProgressCallback"},
                                                        {"printer", "PrinterCallback"},
                                                        {"tensorboard", "TensorBoardCallback"},
                                                        {"mlflow", "MLflowCallback"},
                                                        {"wandb", "WandbCallback"},
                                                        {"flyte", "FlyteCallback"}};
  const auto it = hf.find(callback_name);
  return it == hf.end() ? callback_name : it->second;
}

}  // namespace trainhook
