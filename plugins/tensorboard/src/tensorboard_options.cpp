#include <trainhook/tensorboard/tensorboard_options.hpp>

#include <trainhook/plugin.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <vector>

namespace trainhook::tensorboard {
namespace {

// "weights,gradients" (or a JSON list of those names).
void parse_histograms(const nlohmann::json& v, TensorBoardOptions& o) {
  std::vector<std::string> names;
  if (v.is_string()) {
    std::string s = v.get<std::string>();
    for (size_t start = 0; start <= s.size();) {
      const size_t comma = std::min(s.find(',', start), s.size());
      if (comma > start) names.push_back(s.substr(start, comma - start));
      start = comma + 1;
    }
  } else if (v.is_array()) {
    for (const auto& n : v) names.push_back(n.is_string() ? n.get<std::string>() : n.dump());
  }
  bool weights = false, gradients = false;
  for (const auto& n : names) {
    if (n == "weights") {
      weights = true;
    } else if (n == "gradients") {
      gradients = true;
    } else {
      throw ConfigError(
          "plugin_config tensorboard.histograms: expected weights and/or gradients "
          "(e.g. weights,gradients), got " +
          v.dump());
    }
  }
  if (names.empty())
    throw ConfigError("plugin_config tensorboard.histograms: expected weights and/or gradients, got " +
                      v.dump());
  o.histograms(weights, gradients);
}

}  // namespace

TensorBoardOptions TensorBoardOptions::from_json(const std::string& config_json) {
  const nlohmann::json j = nlohmann::json::parse(config_json, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw ConfigError("plugin_config for tensorboard must be a JSON object, got: " + config_json);
  TensorBoardOptions o;
  for (const auto& [key, v] : j.items()) {
    if (key == "logging_dir") {
      if (!v.is_string() || v.get<std::string>().empty())
        throw ConfigError("plugin_config tensorboard.logging_dir must be a non-empty folder path, got " +
                          v.dump());
      o.logging_dir(v.get<std::string>());
    } else if (key == "queue_size") {
      // Values given on the command line arrive as strings; accept "65536" too.
      long long n = -1;
      if (v.is_number_integer()) {
        n = v.get<long long>();
      } else if (v.is_string()) {
        const std::string s = v.get<std::string>();
        size_t used = 0;
        try {
          n = std::stoll(s, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used != s.size()) n = -1;
      }
      if (n < 1)
        throw ConfigError(
            "plugin_config tensorboard.queue_size must be a positive integer (log records), got " + v.dump());
      o.queue_size(static_cast<size_t>(n));
    } else if (key == "flush_secs") {
      double secs = -1;
      if (v.is_number()) {
        secs = v.get<double>();
      } else if (v.is_string()) {
        const std::string s = v.get<std::string>();
        size_t used = 0;
        try {
          secs = std::stod(s, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used != s.size()) secs = -1;
      }
      if (!(secs >= 0.01 && secs <= 2.0))
        throw ConfigError(
            "plugin_config tensorboard.flush_secs must be a number of seconds from 0.01 to 2, got " +
            v.dump());
      o.flush_secs(secs);
    } else if (key == "histograms") {
      parse_histograms(v, o);
    } else if (key == "histogram_steps") {
      const double n = v.is_number()   ? v.get<double>()
                       : v.is_string() ? std::atof(v.get<std::string>().c_str())
                                       : 0;
      if (!(n >= 1) || n != static_cast<double>(static_cast<int64_t>(n)))
        throw ConfigError("plugin_config tensorboard.histogram_steps must be an integer >= 1, got " +
                          v.dump());
      o.histogram_steps(static_cast<int64_t>(n));
    } else {
      throw ConfigError("unknown plugin_config key tensorboard." + key +
                        " (expected: logging_dir, queue_size, flush_secs, histograms, histogram_steps)");
    }
  }
  return o;
}

}  // namespace trainhook::tensorboard
