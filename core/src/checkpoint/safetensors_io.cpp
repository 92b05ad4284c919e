#include <trainhook/checkpoint/safetensors_io.hpp>

#include <trainhook/checkpoint/atomic_file.hpp>
#include <trainhook/common/safetensors.hpp>

#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
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
  // Beside the file, then renamed over it: the final save writes into
  // output_dir itself, where a kill mid-write once left an empty
  // model.safetensors that a restart of the finished run then kept.
  write_file_atomically(file, [&](const fs::path& tmp) {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot open " + tmp.string());
    safetensors::write(out, views, {{"format", "pt"}});
    out.close();
    if (!out) throw std::runtime_error("cannot write " + tmp.string());
  });
}

void load_safetensors(torch::nn::Module& module, const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error(file.string() + ": cannot be opened");
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  const safetensors::Header header = safetensors::parse(data, bytes.size(), file.string());
  std::map<std::string, const safetensors::TensorEntry*> saved;
  for (const auto& t : header.tensors) saved[t.name] = &t;
  torch::NoGradGuard no_grad;
  auto take = [&](const std::string& name, torch::Tensor target) {
    const auto it = saved.find(name);
    if (it == saved.end())
      throw std::runtime_error(file.string() + ": has no tensor '" + name + "' for the model");
    const safetensors::TensorEntry& e = *it->second;
    const std::vector<int64_t> shape(target.sizes().begin(), target.sizes().end());
    if (e.dtype != dtype_name(target.scalar_type(), name) || e.shape != shape)
      throw std::runtime_error(file.string() + ": tensor '" + name + "' is " + e.dtype +
                               " of another shape or " + "dtype than the model's (" +
                               dtype_name(target.scalar_type(), name) + ")");
    auto cpu = torch::empty(shape, torch::TensorOptions().dtype(target.scalar_type()));
    if (e.end > e.begin) std::memcpy(cpu.data_ptr(), data + header.data_start + e.begin, e.end - e.begin);
    target.copy_(cpu);
    saved.erase(it);
  };
  for (const auto& p : module.named_parameters()) take(p.key(), p.value());
  for (const auto& b : module.named_buffers()) take(b.key(), b.value());
  if (!saved.empty())
    throw std::runtime_error(file.string() + ": holds '" + saved.begin()->first +
                             "', which the model does not have (another model's weights)");
}

}  // namespace trainhook
