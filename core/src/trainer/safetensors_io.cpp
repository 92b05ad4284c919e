#include <trainhook/trainer/safetensors_io.hpp>

#include <trainhook/common/safetensors.hpp>

#include <cstring>
#include <fstream>
#include <iterator>
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

torch::ScalarType scalar_type(const std::string& dtype) {
  for (const auto& [type, name] : kDtypes) {
    if (dtype == name) return type;
  }
  throw std::logic_error("safetensors: dtype " + dtype + " passed the header check");
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

std::vector<NamedTensor> load_safetensors(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in)
    throw std::runtime_error(file.string() + ": cannot open the safetensors file (missing or unreadable)");
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto header = safetensors::parse(bytes.data(), bytes.size(), file.string());
  std::vector<NamedTensor> out;
  for (const auto& t : header.tensors) {
    auto tensor = torch::empty(t.shape, torch::TensorOptions().dtype(scalar_type(t.dtype)));
    if (t.end > t.begin)
      std::memcpy(tensor.data_ptr(), bytes.data() + header.data_start + t.begin, t.end - t.begin);
    out.emplace_back(t.name, tensor);
  }
  return out;
}

}  // namespace trainhook
