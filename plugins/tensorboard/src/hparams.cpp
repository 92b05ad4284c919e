#include <trainhook/tensorboard/hparams.hpp>

#include <trainhook/tensorboard/proto_writer.hpp>

#include <nlohmann/json.hpp>
#include <stdexcept>

namespace trainhook::tensorboard {
namespace {

// HParamsPluginData.version: the plugin's PLUGIN_DATA_VERSION is 0, which
// protobuf does not serialise; the oneof field numbers follow.
constexpr uint32_t kExperimentField = 2;
constexpr uint32_t kSessionStartField = 3;
constexpr uint32_t kSessionEndField = 4;

// api.proto DataType and DatasetType.
constexpr int64_t kTypeString = 1;
constexpr int64_t kTypeBool = 2;
constexpr int64_t kTypeFloat64 = 3;
constexpr int64_t kDatasetTraining = 1;
constexpr int64_t kDatasetValidation = 2;

// google.protobuf.Value{number_value = 2 | string_value = 3 | bool_value = 4}.
void write_value(ProtoWriter& w, const HParam& h) {
  if (const auto* d = std::get_if<double>(&h.value)) {
    w.double_field(2, *d);
  } else if (const auto* s = std::get_if<std::string>(&h.value)) {
    w.bytes_field(3, *s);
  } else {
    w.bool_field(4, std::get<bool>(h.value));
  }
}

int64_t type_of(const HParam& h) {
  if (std::holds_alternative<double>(h.value)) return kTypeFloat64;
  if (std::holds_alternative<std::string>(h.value)) return kTypeString;
  return kTypeBool;
}

}  // namespace

std::vector<HParam> hparams_from_json(std::string_view json_object) {
  nlohmann::json j = nlohmann::json::parse(json_object.begin(), json_object.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw std::invalid_argument("the training arguments are not a JSON object");
  std::vector<HParam> out;
  for (const auto& [key, v] : j.items()) {
    if (v.is_boolean()) {
      out.push_back({key, v.get<bool>()});
    } else if (v.is_number()) {
      out.push_back({key, v.get<double>()});
    } else if (v.is_string()) {
      out.push_back({key, v.get<std::string>()});
    } else if (v.is_array() || v.is_object()) {
      out.push_back({key, v.dump()});
    }
  }
  return out;
}

std::string session_start_content(const std::vector<HParam>& hparams, std::string_view group_name,
                                  double start_time_secs) {
  std::string out;
  ProtoWriter data(out);
  data.message_field(kSessionStartField, [&](ProtoWriter& ssi) {
    for (const auto& h : hparams) {
      ssi.message_field(1, [&](ProtoWriter& entry) {  // map<string, Value> hparams = 1
        entry.bytes_field(1, h.name);
        entry.message_field(2, [&](ProtoWriter& value) { write_value(value, h); });
      });
    }
    if (!group_name.empty()) ssi.bytes_field(4, group_name);
    ssi.double_field(5, start_time_secs);
  });
  return out;
}

std::string session_end_content(SessionStatus status, double end_time_secs) {
  std::string out;
  ProtoWriter data(out);
  data.message_field(kSessionEndField, [&](ProtoWriter& sei) {
    sei.int_field(1, static_cast<int64_t>(status));
    sei.double_field(2, end_time_secs);
  });
  return out;
}

std::string experiment_content(const std::vector<HParam>& hparams,
                               const std::vector<std::string>& metric_tags, double time_created_secs) {
  std::string out;
  ProtoWriter data(out);
  data.message_field(kExperimentField, [&](ProtoWriter& exp) {
    exp.double_field(3, time_created_secs);
    for (const auto& h : hparams) {
      exp.message_field(4, [&](ProtoWriter& info) {  // HParamInfo
        info.bytes_field(1, h.name);
        info.int_field(4, type_of(h));
      });
    }
    for (const auto& tag : metric_tags) {
      exp.message_field(5, [&](ProtoWriter& info) {     // MetricInfo
        info.message_field(1, [&](ProtoWriter& name) {  // MetricName{group = "" (this run), tag}
          name.bytes_field(2, tag);
        });
        const bool eval = tag.rfind("eval/", 0) == 0;
        info.int_field(5, eval ? kDatasetValidation : kDatasetTraining);
      });
    }
  });
  return out;
}

}  // namespace trainhook::tensorboard
