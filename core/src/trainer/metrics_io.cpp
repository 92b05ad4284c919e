// HF Trainer.metrics_format / log_metrics / save_metrics.
#include <trainhook/strings.hpp>
#include <trainhook/trainer/metrics_io.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <system_error>

namespace trainhook {
namespace {

using strings::ends_with;

std::string number(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15) {
    return std::to_string(static_cast<long long>(v));
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

void write_json_atomically(const std::filesystem::path& file, const nlohmann::json& j) {
  const std::filesystem::path tmp = file.string() + ".tmp";
  {
    std::ofstream out(tmp);
    out << j.dump(4) << "\n";
    if (!out) throw std::runtime_error("cannot write metrics file " + tmp.string());
  }
  std::error_code ec;
  std::filesystem::rename(tmp, file, ec);
  if (ec)
    throw std::runtime_error("cannot rename " + tmp.string() + " to " + file.string() + ": " + ec.message());
}

}  // namespace

std::string format_metric(const std::string& key, double value) {
  char buf[64];
  if (ends_with(key, "_runtime")) {
    const auto total = static_cast<int64_t>(value);
    const double secs = value - static_cast<double>(total - total % 60);
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%05.2f", static_cast<long long>(total / 3600),
                  static_cast<long long>((total / 60) % 60), secs);
    return buf;
  }
  if (key.find("_mem_") != std::string::npos) {
    std::snprintf(buf, sizeof buf, "%lldMB", static_cast<long long>(value) >> 20);
    return buf;
  }
  if (key == "total_flos") {
    std::snprintf(buf, sizeof buf, "%lldGF", static_cast<long long>(value) >> 30);
    return buf;
  }
  return number(value);
}

void log_metrics(std::ostream& out, const std::string& split, const Metrics& metrics) {
  out << "***** " << split << " metrics *****\n";
  size_t width = 0;
  for (const auto& [k, v] : metrics) width = std::max(width, k.size());
  for (const auto& [k, v] : metrics) {
    out << "  " << k << std::string(width - k.size(), ' ') << " = " << format_metric(k, v) << "\n";
  }
  out.flush();
}

void save_metrics(const std::filesystem::path& dir, const std::string& split, const Metrics& metrics,
                  bool combined) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create metrics folder " + dir.string() + ": " + ec.message());
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : metrics) j[k] = v;
  write_json_atomically(dir / (split + "_results.json"), j);
  if (!combined) return;
  const std::filesystem::path all = dir / "all_results.json";
  nlohmann::json merged = nlohmann::json::object();
  if (std::filesystem::exists(all)) {
    std::ifstream in(all);
    try {
      in >> merged;
    } catch (const nlohmann::json::exception& e) {
      throw std::runtime_error("cannot merge metrics into " + all.string() + ": not valid JSON (" + e.what() +
                               ")");
    }
    if (!merged.is_object()) throw std::runtime_error(all.string() + ": expected a JSON object");
  }
  for (const auto& [k, v] : metrics) merged[k] = v;
  write_json_atomically(all, merged);
}

}  // namespace trainhook
