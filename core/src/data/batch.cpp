#include <trainhook/data/batch.hpp>

namespace trainhook {

const torch::Tensor* Batch::find(const std::string& name) const {
  if (name == input_name) return &inputs;
  if (name == label_name) return &labels;
  for (const auto& [n, t] : extra) {
    if (n == name) return &t;
  }
  return nullptr;
}

std::vector<std::string> Batch::names() const {
  std::vector<std::string> out{input_name, label_name};
  for (const auto& e : extra) out.push_back(e.first);
  return out;
}

}  // namespace trainhook
