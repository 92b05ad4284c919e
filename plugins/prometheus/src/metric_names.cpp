#include <trainhook/prometheus/metric_names.hpp>

namespace trainhook::prometheus {
namespace {

bool name_char(char c, bool first) {
  const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
  return letter || (!first && c >= '0' && c <= '9');
}

}  // namespace

std::string metric_name_for(std::string_view key) {
  std::string out(kPrefix);
  out.reserve(kPrefix.size() + key.size());
  for (const char c : key) out.push_back(name_char(c, false) && c != ':' ? c : '_');
  return out;
}

bool is_valid_metric_name(std::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i)
    if (!name_char(name[i], i == 0)) return false;
  return true;
}

MetricNames::Lookup MetricNames::lookup(std::string_view key) {
  Lookup out;
  const std::string k(key);
  if (auto it = by_key_.find(k); it != by_key_.end()) {
    out.name = &it->second;
    return out;
  }
  std::string name = metric_name_for(key);
  auto [owner, inserted] = owner_.emplace(name, k);
  if (!inserted) {
    out.taken_by = owner->second;
    out.first_refusal = refused_.insert(k).second;
    return out;
  }
  out.name = &by_key_.emplace(k, std::move(name)).first->second;
  return out;
}

}  // namespace trainhook::prometheus
