#include <trainhook/checkpoint/safetensors_io.hpp>

#include <trainhook/common/safetensors.hpp>

#include <fstream>
#include <stdexcept>

namespace fs = std::filesystem;

namespace trainhook {
namespace {

const std::pair<torch::ScalarType, const char*> kDtypes[] = {
    {torch::kDouble, "F64"}, {torch::kFloat, "F32"}, {torch::kHalf, "F16"},  {torch::kBFloat16, "BF16"},
    {torch::kLong, "I64"},   {torch::kInt, "I32"},   {torch::kShort, "I16"}, {torch::kChar, "I8"},
    {torch::kByte, "U8"},    {torch::kBool, "BOOL"}};

std::string dtype_name(torch::ScalarType t, const std::string& tensor) {
  for (const auto& [type, name] : kDtypes) {
    if (type == t) return name;
  }
  throw std::runtime_error("safetensors: tensor '" + tensor + "' has the dtype " + c10::toString(t) +
                           ", which safetensors cannot hold");
}

}  // namespace

void save_safetensors(const torch::nn::Module& module, const fs::path& file) {
  std::vector<torch::Tensor> keep;
  std::vector<safetensors::TensorView> views;
  auto add = [&](const std::string& name, const torch::Tensor& t) {
    auto c = t.detach().to(torch::kCPU).contiguous();
    keep.push_back(c);
    std::vector<int64_t> shape(c.sizes().begin(), c.sizes().end());
    views.push_back({name, dtype_name(c.scalar_type(), name), shape, c.data_ptr(), c.nbytes()});
  };
  for (const auto& p : module.named_parameters()) add(p.key(), p.value());
  for (const auto& b : module.named_buffers()) add(b.key(), b.value());
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error("cannot write " + file.string());
  safetensors::write(out, views, {{"format", "pt"}});
  out.close();
  if (!out) throw std::runtime_error("cannot write " + file.string());
}

}  // namespace trainhook
