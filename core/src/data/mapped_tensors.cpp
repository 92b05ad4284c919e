// Tensors over mappings: torch::from_blob with a deleter that holds the
// mapping, so a tensor (and every view of it) keeps its file mapped. Windows
// of a token file are one as_strided view; index_select copies a batch's rows.
#include <trainhook/data/mapped_tensors.hpp>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <fstream>
#include <map>
#include <stdexcept>

namespace fs = std::filesystem;

namespace trainhook {
namespace {

torch::ScalarType stored_type(NpyType t) {
  switch (t) {
    case NpyType::float16:
      return torch::kHalf;
    case NpyType::float32:
      return torch::kFloat;
    case NpyType::float64:
      return torch::kDouble;
    case NpyType::int8:
      return torch::kChar;
    case NpyType::int16:
    case NpyType::uint16:
      return torch::kShort;
    case NpyType::int32:
    case NpyType::uint32:
      return torch::kInt;
    case NpyType::int64:
      return torch::kLong;
    case NpyType::uint8:
      return torch::kByte;
    case NpyType::boolean:
      return torch::kBool;
  }
  return torch::kFloat;
}

bool integer_type(NpyType t) {
  return t != NpyType::float16 && t != NpyType::float32 && t != NpyType::float64 && t != NpyType::boolean;
}

torch::Tensor over_mapping(const std::shared_ptr<const MappedFile>& m, uint64_t offset,
                           std::vector<int64_t> shape, torch::ScalarType type) {
  // from_blob wants a mutable pointer; these tensors are only ever read.
  void* p = const_cast<char*>(m->data() ? m->data() + offset : nullptr);
  static char empty_storage[8];
  if (!p) p = empty_storage;
  return torch::from_blob(
      p, shape, [keep = m](void*) {}, torch::TensorOptions().dtype(type));
}

// Releases the mappings' pages once about `budget` bytes of them may be
// resident, counting the pages each batch touches (RSS stays flat however big
// the files are). Shared by every copy of the hook.
// A read fault maps the cached pages around it too, MADV_RANDOM or not: the
// kernel's fault-around, and with large page-cache folios (Linux 6.x) up to a
// whole 2 MiB folio (measured: ~1 MiB mapped per sampled window). Each sample
// counts that much, so a batch of 8 or more releases the mappings: a release
// walks page tables only (microseconds) and the page cache keeps the pages.
constexpr uint64_t kFaultAround = 2 << 20;
struct PageBudget {
  std::vector<std::shared_ptr<const MappedFile>> mappings;
  uint64_t budget = 0;
  std::atomic<uint64_t> touched{0};
  void add(uint64_t bytes) {
    if (budget == 0) return;
    // Files that together fit in 4 budgets stay mapped: the resident set is
    // bounded by their size already, and releasing would only cost refaults.
    uint64_t total = 0;
    for (const auto& m : mappings) total += m->size();
    if (total <= 4 * budget) return;
    if (touched.fetch_add(bytes) + bytes >= budget) {
      touched.store(0);
      for (const auto& m : mappings) m->release_pages();
    }
  }
};

// A token file: where its ids are and of which type.
struct TokenSource {
  std::shared_ptr<const MappedFile> mapping;
  uint64_t offset = 0;
  int64_t count = 0;
  NpyType type = NpyType::uint16;
  std::string type_origin;  // what set the type, for the mixed-types error
};

constexpr int32_t kLlmcMagic = 20240520;

NpyType flag_type(const std::string& token_dtype) {
  if (token_dtype == "uint16") return NpyType::uint16;
  if (token_dtype == "uint32") return NpyType::uint32;
  throw std::runtime_error("--token_dtype: expected uint16 or uint32, got '" + token_dtype + "'");
}

// Type, offset and count of a .bin (raw ids, or llm.c's 256 int32 header:
// magic, version 1 = uint16 / 2 = uint32, token count) or a 1-D .npy.
void describe(const std::string& file, const char* data, uint64_t size, const std::string& token_dtype,
              TokenSource& s) {
  const std::string ext = fs::path(file).extension().string();
  if (ext == ".npy") {
    const NpyHeader h = parse_npy_header(data, static_cast<size_t>(size), size, file);
    if (h.shape.size() != 1 || !integer_type(h.type)) {
      throw std::runtime_error(file + ": a token array must be 1-D of integers, this one is " +
                               npy_type_name(h.type) + " with " + std::to_string(h.shape.size()) +
                               " dimensions");
    }
    s.offset = h.data_offset;
    s.count = h.shape[0];
    s.type = h.type;
    s.type_origin = "its .npy header";
    return;
  }
  int32_t head[3] = {0, 0, 0};
  if (size >= sizeof head) std::memcpy(head, data, sizeof head);
  if (head[0] == kLlmcMagic && (head[1] == 1 || head[1] == 2)) {
    s.type = head[1] == 1 ? NpyType::uint16 : NpyType::uint32;
    const uint64_t item = head[1] == 1 ? 2 : 4;
    const uint64_t expected = 1024 + static_cast<uint64_t>(static_cast<uint32_t>(head[2])) * item;
    if (expected != size) {
      throw std::runtime_error(file + ": its llm.c header says " + std::to_string(head[2]) + " " +
                               npy_type_name(s.type) + " tokens (" + std::to_string(expected) +
                               " bytes with the header) but the file has " + std::to_string(size) +
                               " bytes (truncated or not an llm.c file)");
    }
    s.offset = 1024;
    s.count = head[2];
    s.type_origin = "its llm.c header (version " + std::to_string(head[1]) + ")";
    return;
  }
  // Header bytes read as token ids would train on silently (and inflate the
  // vocabulary): a file that announces another format is refused.
  if (size >= sizeof head && head[0] == kLlmcMagic) {
    throw std::runtime_error(file + ": an llm.c token file of header version " + std::to_string(head[1]) +
                             "; this trainer reads versions 1 (uint16) and 2 (uint32)");
  }
  if (size >= 6 && std::memcmp(data, "\x93NUMPY", 6) == 0) {
    throw std::runtime_error(file +
                             ": a NumPy .npy array with a .bin name; rename it to .npy (its header "
                             "gives the token type) or write the raw ids without a header");
  }
  s.type = flag_type(token_dtype);
  const uint64_t item = s.type == NpyType::uint16 ? 2 : 4;
  if (size % item != 0) {
    throw std::runtime_error(file + ": " + std::to_string(size) + " bytes is not a whole number of " +
                             token_dtype + " tokens (is --token_dtype right?)");
  }
  s.offset = 0;
  s.count = static_cast<int64_t>(size / item);
  s.type_origin = "--token_dtype";
}

void check_same_type(const std::vector<TokenSource>& sources, const std::vector<std::string>& files) {
  for (size_t i = 1; i < sources.size(); ++i) {
    if (sources[i].type != sources[0].type) {
      throw std::runtime_error(files[i] + ": its tokens are " + npy_type_name(sources[i].type) + " (from " +
                               sources[i].type_origin + ") but " + files[0] + " has " +
                               npy_type_name(sources[0].type) + " (from " + sources[0].type_origin +
                               "); every shard needs the same token type");
    }
  }
}

}  // namespace

MappedArray map_npy(const fs::path& file) {
  MappedArray a;
  a.mapping = map_file(file);
  a.header = parse_npy_header(a.mapping->data(), static_cast<size_t>(a.mapping->size()), a.mapping->size(),
                              file.string());
  a.tensor = over_mapping(a.mapping, a.header.data_offset, a.header.shape, stored_type(a.header.type));
  return a;
}

torch::Tensor widen_ids(const torch::Tensor& stored, NpyType type) {
  if (type == NpyType::uint16) return stored.to(torch::kLong).bitwise_and(int64_t{0xFFFF});
  if (type == NpyType::uint32) return stored.to(torch::kLong).bitwise_and(int64_t{0xFFFFFFFF});
  if (integer_type(type)) return stored.to(torch::kLong);
  return stored;
}

std::shared_ptr<TensorDataset> token_dataset(const std::vector<std::string>& files,
                                             const TokenFileOptions& options) {
  if (files.empty()) throw std::runtime_error("token data: no file");
  if (options.block_size < 1)
    throw std::runtime_error("block_size must be >= 1, got " + std::to_string(options.block_size));
  std::vector<TokenSource> sources;
  for (const auto& file : files) {
    TokenSource s;
    s.mapping = map_file(file);
    describe(file, s.mapping->data(), s.mapping->size(), options.token_dtype, s);
    if (s.count < options.block_size + 1) {
      throw std::runtime_error(file + ": " + std::to_string(s.count) +
                               " tokens is shorter than one block of block_size " +
                               std::to_string(options.block_size) + " + 1");
    }
    sources.push_back(std::move(s));
  }
  check_same_type(sources, files);
  const int64_t block = options.block_size;
  const int64_t stride = options.every_offset ? 1 : block;
  std::vector<DatasetShard> shards;
  std::vector<int64_t> firsts;
  int64_t total = 0;
  uint64_t mapped = 0;
  for (size_t i = 0; i < sources.size(); ++i) {
    const auto& s = sources[i];
    const int64_t windows = options.every_offset ? s.count - block : (s.count - 1) / block;
    // The dataset's own tensors are stride-0 placeholders of the samples' shape:
    // the batch hook copies each window from the mapping into the batch.
    const auto placeholder = torch::zeros({1, 1}, torch::kLong).expand({windows, block});
    shards.push_back(DatasetShard{{{"input_ids", placeholder}, {"labels", placeholder}}, files[i]});
    firsts.push_back(total);
    total += windows;
    mapped += s.mapping->size();
  }
  auto ds = std::make_shared<TensorDataset>(std::move(shards), "input_ids", "labels",
                                            files.size() == 1 ? files[0] : files[0] + " (+ shards)");
  ds->set_epochless(options.every_offset);
  const NpyType type = sources[0].type;
  const auto vocab = options.vocab_size;
  const auto stored = stored_type(type);
  const auto item = static_cast<uint64_t>(torch::elementSize(stored));
  // Files that together fit in 4 budgets stay mapped (the resident set is
  // bounded by their size); bigger ones are released window by window.
  const bool release = options.resident_budget > 0 && mapped > 4 * options.resident_budget;
  ds->add_batch_hook([type, vocab, firsts, stride, block, sources, stored, item, release](
                         Batch& b, const torch::Tensor& indices, const TensorDataset& data) {
    const auto idx = indices.to(torch::kLong).contiguous();
    const int64_t rows = idx.numel();
    auto buffer = torch::empty({rows, block + 1}, torch::TensorOptions().dtype(stored));
    auto* out = static_cast<char*>(buffer.data_ptr());
    const int64_t* want = idx.data_ptr<int64_t>();
    const auto bytes = static_cast<size_t>(block + 1) * item;
    for (int64_t r = 0; r < rows; ++r) {
      const auto s =
          static_cast<size_t>(std::upper_bound(firsts.begin(), firsts.end(), want[r]) - firsts.begin() - 1);
      const auto& src = sources[s];
      const uint64_t at = src.offset + static_cast<uint64_t>((want[r] - firsts[s]) * stride) * item;
      std::memcpy(out + static_cast<size_t>(r) * bytes, src.mapping->data() + at, bytes);
      if (release) src.mapping->release_range(at, bytes);
    }
    const auto window = widen_ids(buffer, type);
    b.inputs = window.narrow(1, 0, block).contiguous();
    b.labels = window.narrow(1, 1, block).contiguous();
    if (rows == 0) return;
    const auto bad = vocab ? window.ge(*vocab).logical_or(window.lt(0)) : window.lt(0);
    if (!bad.any().item<bool>()) return;
    const auto where = bad.nonzero();
    const int64_t row = where[0][0].item<int64_t>(), col = where[0][1].item<int64_t>();
    const int64_t index = indices[row].item<int64_t>();
    const auto shard = std::upper_bound(firsts.begin(), firsts.end(), index) - firsts.begin() - 1;
    const int64_t token = (index - firsts[static_cast<size_t>(shard)]) * stride + col;
    const int64_t id = window[row][col].item<int64_t>();
    throw std::runtime_error(data.file_of(index) + ": token " + std::to_string(token) + " has id " +
                             std::to_string(id) +
                             (vocab ? ", outside the model's vocabulary 0.." + std::to_string(*vocab - 1) +
                                          " (--vocab_size " + std::to_string(*vocab) + ")"
                                    : std::string(", a negative id")));
  });
  return ds;
}

int64_t largest_token_id(const std::vector<std::string>& files, const std::string& token_dtype) {
  int64_t largest = -1;
  std::vector<TokenSource> sources;
  for (const auto& file : files) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw std::runtime_error(file + ": cannot open the token file");
    in.seekg(0, std::ios::end);
    const auto size = static_cast<uint64_t>(in.tellg());
    in.seekg(0);
    std::vector<char> head(static_cast<size_t>(std::min<uint64_t>(size, 1 << 16)));
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    TokenSource s;
    // The header parser needs the whole header in `head`; 64 KiB holds any real one.
    describe(file, head.data(), size, token_dtype, s);
    sources.push_back(s);
    check_same_type(sources, files);
    const auto stored = stored_type(s.type);
    const size_t item = torch::elementSize(stored);
    in.clear();
    in.seekg(static_cast<std::streamoff>(s.offset));
    std::vector<char> buffer(size_t{1} << 20);
    int64_t left = s.count;
    while (left > 0) {
      const auto n = std::min<int64_t>(left, static_cast<int64_t>(buffer.size() / item));
      in.read(buffer.data(), static_cast<std::streamsize>(n * static_cast<int64_t>(item)));
      if (!in) throw std::runtime_error(file + ": read failed");
      const auto chunk = widen_ids(torch::from_blob(buffer.data(), {n}, stored), s.type);
      largest = std::max(largest, chunk.max().item<int64_t>());
      left -= n;
    }
  }
  return largest;
}

std::shared_ptr<TensorDataset> array_dataset(const std::vector<std::string>& folders,
                                             uint64_t resident_budget) {
  static const char* const kLabels[] = {"labels", "label", "y", "target", "targets"};
  static const char* const kInputs[] = {"input", "inputs", "input_ids", "x", "features"};
  std::vector<DatasetShard> shards;
  std::string input, label;
  std::map<std::string, NpyType> types;
  auto budget = std::make_shared<PageBudget>();
  budget->budget = resident_budget;
  uint64_t sample_bytes = 0;
  for (const auto& folder : folders) {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(folder)) {
      if (e.path().extension() == ".npy") files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    std::string names;
    for (const auto& f : files) names += (names.empty() ? "" : ", ") + f.filename().string();
    const auto find = [&](const char* const* list, size_t n) -> std::string {
      for (size_t i = 0; i < n; ++i) {
        for (const auto& f : files) {
          if (f.stem() == list[i]) return list[i];
        }
      }
      return "";
    };
    const std::string l = find(kLabels, 5), in = find(kInputs, 5);
    if (l.empty() || in.empty()) {
      throw std::runtime_error(folder + ": a folder of .npy arrays needs " +
                               (in.empty()
                                    ? std::string("an input (input.npy, inputs, input_ids, x or features)")
                                    : std::string("labels (labels.npy, label, y, target or targets)")) +
                               "; it has: " + (names.empty() ? std::string("no .npy file") : names));
    }
    if (shards.empty()) {
      input = in;
      label = l;
    } else if (in != input || l != label) {
      throw std::runtime_error(folder + ": its arrays are " + in + "/" + l + " but the first folder's are " +
                               input + "/" + label);
    }
    DatasetShard shard;
    shard.file = folder;
    for (const auto& f : files) {
      MappedArray a = map_npy(f);
      if (a.header.shape.empty())
        throw std::runtime_error(f.string() + ": a 0-dimensional array has no samples");
      const std::string name = f.stem().string();
      auto [it, fresh] = types.emplace(name, a.header.type);
      if (!fresh && it->second != a.header.type) {
        throw std::runtime_error(f.string() + ": dtype " + npy_type_name(a.header.type) + " differs from " +
                                 npy_type_name(it->second) + " of " + name + ".npy in " + folders[0] +
                                 " (every shard needs the same dtype)");
      }
      if (shards.empty() && a.header.shape[0] > 0)
        sample_bytes += a.header.data_bytes / static_cast<uint64_t>(a.header.shape[0]);
      budget->mappings.push_back(a.mapping);
      shard.tensors.emplace_back(name, a.tensor);
    }
    shards.push_back(std::move(shard));
  }
  std::shared_ptr<TensorDataset> ds;
  try {
    ds = std::make_shared<TensorDataset>(std::move(shards), input, label,
                                         folders.size() == 1 ? folders[0] : folders[0] + " (+ shards)");
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(e.what());
  }
  ds->add_batch_hook([types, budget, sample_bytes](Batch& b, const torch::Tensor&, const TensorDataset&) {
    const auto widen = [&](const std::string& name, torch::Tensor& t) {
      const auto it = types.find(name);
      // Integer arrays (ids, class labels) reach the model as int64, as a .pt file's would.
      if (it != types.end() && integer_type(it->second)) t = widen_ids(t, it->second);
    };
    widen(b.input_name, b.inputs);
    widen(b.label_name, b.labels);
    for (auto& [n, t] : b.extra) widen(n, t);
    budget->add(static_cast<uint64_t>(b.inputs.size(0)) * (sample_bytes + kFaultAround));
  });
  return ds;
}

}  // namespace trainhook
