// acme_metrics: a third-party integration built on the installed Trainhook SDK.
// It keeps the last, minimum and maximum of every numeric value logged and, at
// the end of training, writes them to <output_dir>/acme_metrics.json.
// Configuration (--plugin_config acme_metrics.file=NAME): the file name.
#include <trainhook/options.hpp>
#include <trainhook/plugin.hpp>

#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <string>

namespace {

// The plugin's keys, declared once (trainhook/options.hpp): the SDK parses the
// plugin_config section with them, with the same errors as the built-in plugins
// ("plugin_config acme_metrics: unknown key 'fiel' (did you mean 'file'?)").
class AcmeOptions {
  TRAINHOOK_OPTION(std::string, file, "acme_metrics.json");

 public:
  static const trainhook::OptionTable<AcmeOptions>& table() {
    static const auto t = trainhook::OptionTable<AcmeOptions>("acme_metrics")
                              .key(TRAINHOOK_KEY(file), "the summary's file name, in output_dir")
                              .check("a plain file name (no '/')", [](const std::string& f) {
                                return !f.empty() && f.find('/') == std::string::npos;
                              });
    return t;
  }
};

class AcmeMetrics final : public trainhook::Callback {
 public:
  explicit AcmeMetrics(trainhook::Setup& setup)
      : host_(setup.host()), file_(AcmeOptions::table().parse(setup.config_json()).file()) {}

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

  // An integration: the trainer creates it on world rank 0 only, so it never checks the rank.
  void on_train_end(trainhook::Event&) override {
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
