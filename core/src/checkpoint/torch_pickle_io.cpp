#include <trainhook/checkpoint/torch_pickle_io.hpp>

#include <trainhook/checkpoint/atomic_file.hpp>
#include <trainhook/checkpoint/torch_zip_reader.hpp>

#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/export.h>
#include <torch/csrc/jit/serialization/pickler.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>

namespace fs = std::filesystem;

namespace trainhook::pickle_values {

c10::impl::GenericDict dict_of_strings() {
  return c10::impl::GenericDict(c10::StringType::get(), c10::AnyType::get());
}
c10::impl::GenericDict dict_of_ints() {
  return c10::impl::GenericDict(c10::IntType::get(), c10::AnyType::get());
}
c10::impl::GenericList list() { return c10::impl::GenericList(c10::AnyType::get()); }
c10::IValue tuple(std::vector<c10::IValue> items) { return c10::ivalue::Tuple::create(std::move(items)); }

}  // namespace trainhook::pickle_values

namespace trainhook {

void save_torch_pickle(const c10::IValue& value, const fs::path& file) {
  std::string pickle;
  // No tensor table: tensors are pickled as torch.save does (BINPERSID storages
  // rebuilt by torch._utils._rebuild_tensor_v2); no type tags.
  torch::jit::Pickler pickler([&](const char* data, size_t n) { pickle.append(data, n); }, nullptr, nullptr,
                              nullptr, nullptr, /*tag_aggregates=*/false);
  pickler.protocol();
  pickler.pushIValue(value);
  pickler.stop();
  std::string zip;
  {
    caffe2::serialize::PyTorchStreamWriter writer([&](const void* data, size_t n) -> size_t {
      zip.append(static_cast<const char*>(data), n);
      return n;
    });
    torch::jit::writeArchiveAndTensors("data", pickle.data(), pickle.size(), pickler.tensorData(), writer);
    writer.writeEndOfFile();
  }
  write_file_atomically(file, [&](const fs::path& tmp) {
    std::FILE* f = std::fopen(tmp.c_str(), "wb");
    if (f == nullptr)
      throw std::runtime_error(std::string("cannot open for writing: ") + std::strerror(errno));
    const bool ok = std::fwrite(zip.data(), 1, zip.size(), f) == zip.size();
    const int error = errno;
    const bool closed = std::fclose(f) == 0;
    if (!ok || !closed) throw std::runtime_error(std::strerror(error != 0 ? error : EIO));
  });
}

torch::Tensor load_pickle_tensor(const TorchSaveFile& file, const PickleTensor& t) {
  static const std::pair<const char*, torch::ScalarType> kTypes[] = {
      {"Double", torch::kDouble},     {"Float", torch::kFloat}, {"Half", torch::kHalf},
      {"BFloat16", torch::kBFloat16}, {"Long", torch::kLong},   {"Int", torch::kInt},
      {"Short", torch::kShort},       {"Char", torch::kChar},   {"Byte", torch::kByte},
      {"Bool", torch::kBool}};
  for (const auto& [name, type] : kTypes) {
    if (t.dtype != name) continue;
    const std::string_view data = file.storage(t);  // size checked against the element count
    auto storage = torch::empty({t.storage_numel}, torch::TensorOptions().dtype(type));
    if (!data.empty()) std::memcpy(storage.data_ptr(), data.data(), data.size());
    return storage.as_strided(t.sizes, t.strides, t.offset).clone();
  }
  throw std::runtime_error(file.name() + ": tensor of storage type " + t.dtype +
                           "Storage, which is not read");
}

bool is_torchscript_archive(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!looks_like_zip(bytes)) return false;
  try {
    const TorchZip zip = read_torch_zip(bytes, file.string());
    for (const auto& [name, data] : zip.records) {
      const size_t slash = name.find('/');
      if (slash != std::string::npos && name.compare(slash, std::string::npos, "/constants.pkl") == 0)
        return true;
    }
  } catch (const std::runtime_error&) {
    return false;  // the reader that follows names what is wrong
  }
  return false;
}

}  // namespace trainhook
