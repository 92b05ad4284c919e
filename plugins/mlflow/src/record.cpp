#include <trainhook/mlflow/record.hpp>
#include <trainhook/support/clock.hpp>
#include <trainhook/support/log_keys.hpp>

#include <nlohmann/json.hpp>

#include <cmath>

namespace trainhook::mlflow {

Record Record::metric(std::string key, double value, int64_t timestamp_ms, int64_t step) {
  Record r;
  r.kind = Kind::metric;
  r.key = std::move(key);
  r.value = value;
  r.timestamp = timestamp_ms;
  r.step = step;
  return r;
}

Record Record::artifact_dir(std::string dir, int64_t step) {
  Record r;
  r.kind = Kind::artifact_dir;
  r.key = std::move(dir);
  r.step = step;
  r.timestamp = support::unix_millis();
  return r;
}

Record Record::end_run(std::string status, int64_t end_time_ms, std::string reason) {
  Record r;
  r.kind = Kind::end_run;
  r.key = std::move(status);
  r.timestamp = end_time_ms;
  r.reason = std::move(reason);
  return r;
}

std::string cut_tag_value(const std::string& value) {
  const std::string mark = " [cut]";
  // Byte offsets where characters start: a continuation byte is 10xxxxxx.
  size_t chars = 0, keep_end = value.size();
  const size_t keep_chars = kMaxTagValueChars - mark.size();
  for (size_t i = 0; i < value.size(); ++i) {
    if ((static_cast<unsigned char>(value[i]) & 0xC0) == 0x80) continue;
    if (chars == keep_chars) keep_end = i;
    if (++chars > kMaxTagValueChars) return value.substr(0, keep_end) + mark;
  }
  return value;
}

std::string to_line(const Record& r) {
  nlohmann::json j;
  switch (r.kind) {
    case Record::Kind::metric:
      j["m"] = r.key;
      // JSON has no NaN/Infinity: keep them as text.
      if (std::isfinite(r.value)) {
        j["v"] = r.value;
      } else {
        j["v"] = std::isnan(r.value) ? "NaN" : (r.value > 0 ? "Infinity" : "-Infinity");
      }
      break;
    case Record::Kind::artifact_dir:
      j["a"] = r.key;
      break;
    case Record::Kind::end_run:
      j["e"] = r.key;
      if (!r.reason.empty()) j["f"] = r.reason;
      break;
  }
  j["t"] = r.timestamp;
  j["s"] = r.step;
  return j.dump();
}

std::optional<Record> from_line(const std::string& line) {
  try {
    auto j = nlohmann::json::parse(line);
    int64_t t = j.at("t").get<int64_t>(), s = j.at("s").get<int64_t>();
    if (j.contains("m")) {
      const auto& v = j.at("v");
      double value = 0;
      if (v.is_number()) {
        value = v.get<double>();
      } else {
        std::string text = v.get<std::string>();
        value = text == "NaN" ? std::nan("") : (text == "Infinity" ? HUGE_VAL : -HUGE_VAL);
      }
      return Record::metric(j.at("m").get<std::string>(), value, t, s);
    }
    if (j.contains("a")) {
      Record r = Record::artifact_dir(j.at("a").get<std::string>(), s);
      r.timestamp = t;
      return r;
    }
    if (j.contains("e")) return Record::end_run(j.at("e").get<std::string>(), t, j.value("f", std::string()));
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

std::string sanitize_metric_name(const std::string& name) { return support::sanitize_key(name, "_-. :/"); }

}  // namespace trainhook::mlflow
