// acme_metrics: a third-party integration built on the installed Trainhook SDK.
// It keeps the last, minimum and maximum of every numeric value logged and, at
// the end of training, writes them to <output_dir>/acme_metrics.json.
// Configuration (--plugin_config acme_metrics.file=NAME): the file name.
#include <trainhook/plugin.hpp>

#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <string>

namespace {

// Extracts "file": "<name>" from the flat JSON object the host passes; the SDK
// itself has no JSON parser, and this example needs nothing more.
std::string config_string(const std::string& json, const std::string& key, const std::string& fallback) {
  const std::string needle = "\"" + key + "\"";
  size_t p = json.find(needle);
  if (p == std::string::npos) return fallback;
  p = json.find('"', json.find(':', p + needle.size()));
  const size_t end = p == std::string::npos ? p : json.find('"', p + 1);
  if (end == std::string::npos) throw trainhook::ConfigError("acme_metrics: '" + key + "' must be a string");
  return json.substr(p + 1, end - p - 1);
}

class AcmeMetrics final : public trainhook::Callback {
 public:
  explicit AcmeMetrics(trainhook::Setup& setup)
      : host_(setup.host()), file_(config_string(setup.config_json(), "file", "acme_metrics.json")) {
    if (file_.empty() || file_.find('/') != std::string::npos)
      throw trainhook::ConfigError("acme_metrics: 'file' must be a plain file name, got '" + file_ + "'");
  }

  void on_log(trainhook::Event& e) override {
    const trainhook::Values v = e.values();
    for (uint32_t i = 0; i < v.size(); ++i) {
      Stats& s = stats_[std::string(v.key(i))];
      s.last = v.value(i);
      if (v.value(i) < s.min) s.min = v.value(i);
      if (v.value(i) > s.max) s.max = v.value(i);
      ++s.count;
    }
  }

  void on_train_end(trainhook::Event& e) override {
    if (!e.is_world_process_zero()) return;
    const std::string path = host_.output_dir() + "/" + file_;
    std::ofstream out(path);
    if (!out) throw std::runtime_error("acme_metrics: cannot write " + path);
    out << "{";
    bool first = true;
    for (const auto& [key, s] : stats_) {
      char line[256];
      std::snprintf(line, sizeof line,
                    "%s\n  \"%s\": {\"count\": %lld, \"last\": %.17g, \"max\": %.17g, \"min\": %.17g}",
                    first ? "" : ",", key.c_str(), static_cast<long long>(s.count), s.last, s.max, s.min);
      out << line;
      first = false;
    }
    out << "\n}\n";
    host_.info("wrote " + std::to_string(stats_.size()) + " metrics to " + path);
  }

 private:
  struct Stats {
    double last = 0;
    double min = std::numeric_limits<double>::infinity();
    double max = -std::numeric_limits<double>::infinity();
    long long count = 0;
  };
  trainhook::Host host_;
  std::string file_;
  std::map<std::string, Stats> stats_;
};

}  // namespace

TRAINHOOK_PLUGIN(
    "acme_metrics", ACME_VERSION,
    trainhook::callback<AcmeMetrics>("acme_metrics", ACME_VERSION, trainhook::Kind::integration,
                                     "summarises logged metrics into output_dir/acme_metrics.json"))
