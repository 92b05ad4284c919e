// The hparams plugin's messages (tensorboard/plugins/hparams/{plugin_data,api}.proto):
// HParamsPluginData carrying an Experiment, SessionStartInfo or SessionEndInfo.
// The functions return the serialised HParamsPluginData, which goes into the
// summary metadata's plugin content (see write_hparams_value).
#pragma once

#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace trainhook::tensorboard {

inline constexpr std::string_view kExperimentTag = "_hparams_/experiment";
inline constexpr std::string_view kSessionStartTag = "_hparams_/session_start_info";
inline constexpr std::string_view kSessionEndTag = "_hparams_/session_end_info";

struct HParam {
  std::string name;
  std::variant<double, std::string, bool> value;
};

// The hyperparameters of a run from the training arguments' JSON object:
// numbers, strings and booleans as they are; arrays and objects as compact JSON
// text; nulls skipped (TensorBoard has no "unset" value). Throws
// std::invalid_argument when the text is not a JSON object.
std::vector<HParam> hparams_from_json(std::string_view json_object);

enum class SessionStatus { success = 1, failure = 2 };

std::string session_start_content(const std::vector<HParam>& hparams, std::string_view group_name,
                                  double start_time_secs);
std::string session_end_content(SessionStatus status, double end_time_secs);
// An Experiment listing every hparam with its type and every scalar tag as a
// metric (tags starting with "eval/" as validation metrics, others training),
// so the HPARAMS tab shows the run's metrics beside its hyperparameters.
std::string experiment_content(const std::vector<HParam>& hparams,
                               const std::vector<std::string>& metric_tags, double time_created_secs);

}  // namespace trainhook::tensorboard
