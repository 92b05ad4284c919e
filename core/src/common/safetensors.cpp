// Written from the format's description (huggingface/safetensors README):
// header length u64 LE, JSON header, data. Little-endian hosts only (checked).
#include <trainhook/common/safetensors.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <limits>
#include <set>
#include <stdexcept>

namespace trainhook::safetensors {
namespace {

// The reference implementation refuses headers above 100 MB.
constexpr uint64_t kMaxHeader = 100'000'000;

bool little_endian() {
  const uint16_t one = 1;
  unsigned char first = 0;
  std::memcpy(&first, &one, 1);
  return first == 1;
}

[[noreturn]] void fail(const std::string& name, const std::string& what) {
  throw std::runtime_error(name + ": not a valid safetensors file: " + what);
}

uint64_t read_u64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

uint64_t offset_of(const nlohmann::json& v, const std::string& name, const std::string& tensor) {
  if (!v.is_number_unsigned()) {
    fail(name, "tensor '" + tensor + "': data_offsets must be two non-negative integers");
  }
  return v.get<uint64_t>();
}

}  // namespace

size_t dtype_size(const std::string& dtype) {
  static const std::map<std::string, size_t> sizes = {{"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2},
                                                      {"I64", 8}, {"I32", 4}, {"I16", 2}, {"I8", 1},
                                                      {"U8", 1},  {"BOOL", 1}};
  const auto it = sizes.find(dtype);
  return it == sizes.end() ? 0 : it->second;
}

Header parse(const uint8_t* data, size_t size, const std::string& name) {
  if (size < 8)
    fail(name, "truncated: " + std::to_string(size) + " bytes, shorter than the 8-byte header length");
  const uint64_t n = read_u64(data);
  if (n > size - 8) {
    fail(name, "the header length " + std::to_string(n) + " runs past the end of the file (" +
                   std::to_string(size) + " bytes)");
  }
  if (n > kMaxHeader) fail(name, "the header length " + std::to_string(n) + " is above the 100 MB limit");
  if (n < 2 || data[8] != '{') fail(name, "the header does not start with a JSON object");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(reinterpret_cast<const char*>(data + 8),
                              reinterpret_cast<const char*>(data + 8 + n));
  } catch (const nlohmann::json::exception& e) {
    fail(name, std::string("the header is not JSON (") + e.what() + ")");
  }
  if (!j.is_object()) fail(name, "the header is not a JSON object");
  Header h;
  h.data_start = 8 + n;
  const uint64_t data_size = size - h.data_start;
  for (const auto& [key, value] : j.items()) {
    if (key == "__metadata__") {
      if (!value.is_object()) fail(name, "__metadata__ is not an object");
      for (const auto& [mk, mv] : value.items()) {
        if (!mv.is_string()) fail(name, "__metadata__ '" + mk + "' is not a string");
        h.metadata[mk] = mv.get<std::string>();
      }
      continue;
    }
    if (!value.is_object()) fail(name, "tensor '" + key + "' is not an object");
    const auto dt = value.find("dtype");
    const auto sh = value.find("shape");
    const auto off = value.find("data_offsets");
    if (dt == value.end() || sh == value.end() || off == value.end()) {
      fail(name, "tensor '" + key + "' lacks dtype, shape or data_offsets");
    }
    if (!dt->is_string()) fail(name, "tensor '" + key + "': dtype is not a string");
    TensorEntry t;
    t.name = key;
    t.dtype = dt->get<std::string>();
    const size_t elem = dtype_size(t.dtype);
    if (elem == 0) {
      fail(name, "tensor '" + key + "' has the unknown dtype '" + t.dtype +
                     "' (known: F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL)");
    }
    if (!sh->is_array()) fail(name, "tensor '" + key + "': shape is not an array");
    uint64_t numel = 1;
    bool overflow = false;
    for (const auto& d : *sh) {
      if (!d.is_number_unsigned() ||
          d.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        fail(name, "tensor '" + key + "': shape holds something other than non-negative integers");
      }
      const uint64_t dim = d.get<uint64_t>();
      t.shape.push_back(static_cast<int64_t>(dim));
      if (dim != 0 && numel > std::numeric_limits<uint64_t>::max() / dim) overflow = true;
      numel *= dim;
    }
    if (!off->is_array() || off->size() != 2)
      fail(name, "tensor '" + key + "': data_offsets is not [begin, end]");
    t.begin = offset_of((*off)[0], name, key);
    t.end = offset_of((*off)[1], name, key);
    if (t.end < t.begin) fail(name, "tensor '" + key + "': data_offsets end before they begin");
    if (t.end > data_size) {
      fail(name, "tensor '" + key + "': data_offsets [" + std::to_string(t.begin) + ", " +
                     std::to_string(t.end) + "] run past the end of the data (" + std::to_string(data_size) +
                     " bytes)");
    }
    if (overflow || numel > std::numeric_limits<uint64_t>::max() / elem || numel * elem != t.end - t.begin) {
      fail(name, "tensor '" + key + "': " + std::to_string(t.end - t.begin) +
                     " bytes do not hold its shape of " + t.dtype + " elements");
    }
    h.tensors.push_back(std::move(t));
  }
  std::sort(h.tensors.begin(), h.tensors.end(), [](const TensorEntry& a, const TensorEntry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t at = 0;
  for (const auto& t : h.tensors) {
    if (t.begin < at) fail(name, "tensor '" + t.name + "' overlaps the tensor before it in the data");
    if (t.begin > at) fail(name, "a gap of unused bytes before tensor '" + t.name + "'");
    at = t.end;
  }
  if (at != data_size) {
    fail(name,
         "the tensors cover " + std::to_string(at) + " of the " + std::to_string(data_size) + " data bytes");
  }
  return h;
}

void write(std::ostream& out, const std::vector<TensorView>& tensors,
           const std::map<std::string, std::string>& metadata) {
  if (!little_endian()) throw std::runtime_error("safetensors: writing needs a little-endian host");
  nlohmann::json header = nlohmann::json::object();
  std::set<std::string> names;
  uint64_t at = 0;
  for (const auto& t : tensors) {
    const size_t elem = dtype_size(t.dtype);
    if (elem == 0)
      throw std::invalid_argument("safetensors: tensor '" + t.name + "' has an unknown dtype '" + t.dtype +
                                  "'");
    if (t.name == "__metadata__" || !names.insert(t.name).second) {
      throw std::invalid_argument("safetensors: the tensor name '" + t.name + "' is reserved or used twice");
    }
    uint64_t numel = 1;
    for (const auto d : t.shape) numel *= static_cast<uint64_t>(d);
    if (numel * elem != t.nbytes) {
      throw std::invalid_argument("safetensors: tensor '" + t.name + "' has " + std::to_string(t.nbytes) +
                                  " bytes for its shape of " + std::to_string(numel) + " " + t.dtype +
                                  " elements");
    }
    header[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {at, at + t.nbytes}}};
    at += t.nbytes;
  }
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  uint8_t len[8];
  uint64_t n = text.size();
  for (auto& b : len) {
    b = static_cast<uint8_t>(n & 0xff);
    n >>= 8;
  }
  out.write(reinterpret_cast<const char*>(len), 8);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  for (const auto& t : tensors)
    out.write(static_cast<const char*>(t.data), static_cast<std::streamsize>(t.nbytes));
}

}  // namespace trainhook::safetensors
