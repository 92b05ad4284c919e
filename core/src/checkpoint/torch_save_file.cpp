#include <trainhook/checkpoint/torch_save_file.hpp>

#include <fstream>
#include <iterator>
#include <stdexcept>

namespace trainhook {

size_t torch_storage_element_size(const std::string& dtype) {
  if (dtype == "Double" || dtype == "Long") return 8;
  if (dtype == "Float" || dtype == "Int") return 4;
  if (dtype == "Half" || dtype == "BFloat16" || dtype == "Short") return 2;
  if (dtype == "Char" || dtype == "Byte" || dtype == "Bool") return 1;
  return 0;
}

TorchSaveFile::TorchSaveFile(std::string bytes, const std::string& name)
    : bytes_(std::make_unique<const std::string>(std::move(bytes))), name_(name) {
  zip_ = read_torch_zip(*bytes_, name_);
  // torch.load finds "data.pkl" under the archive's one top folder, whatever its name.
  std::string_view pickle;
  for (const auto& [record, data] : zip_.records) {
    const size_t slash = record.find('/');
    if (slash != std::string::npos && record.compare(slash, std::string::npos, "/data.pkl") == 0) {
      if (!prefix_.empty()) throw std::runtime_error(name_ + ": holds more than one data.pkl");
      prefix_ = record.substr(0, slash + 1);
      pickle = data;
    }
  }
  for (const auto& record : zip_.compressed)
    if (record.size() > 9 && record.compare(record.size() - 9, 9, "/data.pkl") == 0)
      throw std::runtime_error(name_ + ": its data.pkl is compressed (torch.save stores it plain)");
  if (prefix_.empty())
    throw std::runtime_error(name_ + ": has no <archive>/data.pkl record (not a torch.save file)");
  graph_ = read_pickle(pickle, name_);
  for (size_t i = 0; i < graph_.size(); ++i) {
    const PickleNode& n = graph_.node(i);
    if (n.kind != PickleNode::Kind::Tensor) continue;
    const PickleTensor& t = n.tensor;
    (void)storage(t);  // names a missing record or a wrong size
    bool empty = false;
    for (size_t d = 0; d < t.sizes.size(); ++d) {
      if (t.sizes[d] < 0 || t.strides[d] < 0)
        throw std::runtime_error(name_ + ": tensor on storage '" + t.storage_key +
                                 "' has a negative size or stride");
      empty = empty || t.sizes[d] == 0;
    }
    if (empty) continue;
    const auto lying = [&](const std::string& what) {
      return std::runtime_error(name_ + ": tensor on storage '" + t.storage_key + "' " + what +
                                " of a storage of " + std::to_string(t.storage_numel) +
                                " elements (a lying size)");
    };
    if (t.offset < 0 || t.offset >= t.storage_numel)
      throw lying("starts at element " + std::to_string(t.offset));
    int64_t last = t.offset;  // the furthest element the view reaches, kept below storage_numel
    for (size_t d = 0; d < t.sizes.size(); ++d) {
      const int64_t steps = t.sizes[d] - 1;
      if (t.strides[d] != 0 && steps > (t.storage_numel - 1 - last) / t.strides[d])
        throw lying("reaches past the end");
      last += steps * t.strides[d];
    }
  }
}

std::string_view TorchSaveFile::storage(const PickleTensor& t) const {
  const std::string record = prefix_ + "data/" + t.storage_key;
  const auto it = zip_.records.find(record);
  if (it == zip_.records.end())
    throw std::runtime_error(name_ + ": storage record '" + record + "' is " +
                             (zip_.compressed.count(record) != 0 ? "compressed (torch.save stores it plain)"
                                                                 : "missing"));
  const size_t element = torch_storage_element_size(t.dtype);
  if (element == 0 || t.storage_numel < 0 ||
      static_cast<uint64_t>(t.storage_numel) != it->second.size() / element ||
      it->second.size() % element != 0)
    throw std::runtime_error(name_ + ": storage record '" + record + "' holds " +
                             std::to_string(it->second.size()) + " bytes, not the " +
                             std::to_string(t.storage_numel) + " " + t.dtype +
                             " elements the pickle says (a lying size)");
  return it->second;
}

TorchSaveFile read_torch_save_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error(file.string() + ": cannot be opened");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return TorchSaveFile(std::move(bytes), file.string());
}

}  // namespace trainhook
