// DataArguments -> TensorDatasets. CSV: float features (× feature_scale) and
// int64 labels; text: int64 token ids of non-overlapping blocks of
// block_size + 1 characters (inputs = first block_size, labels = shifted by one).
#include <trainhook/data/data_files.hpp>

#include <trainhook/data/csv_table.hpp>
#include <trainhook/data/mapped_tensors.hpp>
#include <trainhook/data/tensor_dataset.hpp>
#include <trainhook/data/tensor_file.hpp>
#include <trainhook/strings.hpp>

#include <ATen/CPUGeneratorImpl.h>

#include <glob.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>

namespace trainhook {
namespace {

bool has_extension(const std::string& file, const std::string& ext) {
  return strings::lower(std::filesystem::path(file).extension().string()) == ext;
}

DataKind kind_of(const std::string& file) {
  // A folder is a folder of .npy arrays unless its name says it should have
  // been a file ("data.csv/"): that one's reader names it as a folder.
  static const char* const file_kinds[] = {".bin", ".npy", ".csv", ".txt", ".pt", ".pth"};
  const bool named_as_file = std::any_of(std::begin(file_kinds), std::end(file_kinds),
                                         [&](const char* ext) { return has_extension(file, ext); });
  if (std::filesystem::is_directory(file) && !named_as_file) return DataKind::arrays;
  if (has_extension(file, ".bin") || has_extension(file, ".npy")) return DataKind::tokens;
  if (has_extension(file, ".csv")) return DataKind::tabular;
  if (has_extension(file, ".txt")) return DataKind::text;
  if (has_extension(file, ".pt") || has_extension(file, ".pth")) return DataKind::tensors;
  throw std::runtime_error(
      file +
      ": unknown data format (expected a .csv file with a label column, a .txt "
      "file for character language modelling, a .pt file of named tensors, a .bin or .npy token "
      "file or a folder of .npy arrays)");
}

// The first non-blank line's fields when it is a header (some field is not a
// number), else nothing.
std::vector<std::string> header_fields(const std::string& file) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (strings::trim(line).empty()) continue;
    auto fields = strings::split(line, ',', true);
    for (const auto& f : fields) {
      char* end = nullptr;
      (void)std::strtod(f.c_str(), &end);
      if (f.empty() || end != f.c_str() + f.size()) return fields;
    }
    return {};
  }
  return {};
}

// Which column holds the label and whether the file has a header:
// --label_column_name (a header name) wins; a header (csv_header, or a first
// line of names) that has HF's "label" column uses it unless --label_column
// says otherwise.
std::pair<std::string, bool> label_column_of(const std::string& file, const DataArguments& data) {
  if (data.label_column_name) return {*data.label_column_name, true};
  const auto header = header_fields(file);
  const bool has_label = std::find(header.begin(), header.end(), "label") != header.end();
  if (has_label && data.label_column == "last") return {"label", true};
  return {data.label_column, data.csv_header};
}

void check_features(const std::string& file, int64_t features, DataInfo& info) {
  if (info.num_features != 0 && features != info.num_features) {
    throw std::runtime_error(file + ": samples have " + std::to_string(features) +
                             " features but the training data has " + std::to_string(info.num_features));
  }
  info.num_features = features;
}

// Integer class labels: the training data (first) defines the classes,
// evaluation and test data must stay within them.
void note_class_ids(const std::string& file, int64_t max_label, DataInfo& info, bool first) {
  if (first) {
    info.num_classes = max_label + 1;
  } else if (info.num_classes > 0 && max_label >= info.num_classes) {
    throw std::runtime_error(file + ": label " + std::to_string(max_label) +
                             " is out of range: the training data has classes 0.." +
                             std::to_string(info.num_classes - 1));
  }
}

std::shared_ptr<TensorDataset> csv_dataset(const std::string& file, const DataArguments& data, DataInfo& info,
                                           bool defines_classes, bool real_labels) {
  const auto [label_column, header] = label_column_of(file, data);
  const LabeledTable t = read_labeled_csv(file, label_column, header, !real_labels);
  check_features(file, t.features, info);
  if (real_labels) {
    info.real_labels = true;
    auto inputs =
        torch::from_blob(const_cast<float*>(t.values.data()), {t.rows, t.features}, torch::kFloat).clone();
    if (data.feature_scale != 1.0) inputs.mul_(data.feature_scale);
    auto labels = torch::from_blob(const_cast<double*>(t.real_labels.data()), {t.rows}, torch::kDouble)
                      .to(torch::kFloat);
    return std::make_shared<TensorDataset>(inputs, labels, file);
  }
  const int64_t max_label = *std::max_element(t.labels.begin(), t.labels.end());
  if (defines_classes) {
    info.num_classes = max_label + 1;
  } else {
    for (size_t i = 0; i < t.labels.size(); ++i) {
      if (t.labels[i] >= info.num_classes) {
        throw std::runtime_error(
            file + ":" + std::to_string(t.lines[i]) + ": label " + std::to_string(t.labels[i]) +
            " is out of range: the training data has classes 0.." + std::to_string(info.num_classes - 1));
      }
    }
  }
  auto inputs =
      torch::from_blob(const_cast<float*>(t.values.data()), {t.rows, t.features}, torch::kFloat).clone();
  if (data.feature_scale != 1.0) inputs.mul_(data.feature_scale);
  auto labels = torch::from_blob(const_cast<int64_t*>(t.labels.data()), {t.rows}, torch::kLong).clone();
  return std::make_shared<TensorDataset>(inputs, labels, file);
}

std::string read_text(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error(file + ": cannot open the text file (missing or unreadable)");
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::shared_ptr<TensorDataset> text_dataset(const std::string& file, const DataArguments& data,
                                            DataInfo& info, bool defines_vocabulary) {
  if (data.block_size < 1) {
    throw std::runtime_error("block_size must be >= 1, got " + std::to_string(data.block_size));
  }
  const std::string text = read_text(file);
  if (defines_vocabulary) {
    std::array<bool, 256> seen{};
    for (unsigned char c : text) seen[c] = true;
    info.vocabulary.clear();
    for (int c = 0; c < 256; ++c) {
      if (seen[static_cast<size_t>(c)]) info.vocabulary.push_back(static_cast<char>(c));
    }
    info.vocab_size = static_cast<int64_t>(info.vocabulary.size());
    info.block_size = data.block_size;
  }
  std::array<int64_t, 256> id;
  id.fill(-1);
  for (size_t i = 0; i < info.vocabulary.size(); ++i)
    id[static_cast<unsigned char>(info.vocabulary[i])] = static_cast<int64_t>(i);
  const int64_t span = data.block_size + 1;
  const int64_t blocks = (static_cast<int64_t>(text.size()) - 1) / data.block_size;
  if (static_cast<int64_t>(text.size()) < span || blocks < 1) {
    throw std::runtime_error(file + ": " + std::to_string(text.size()) +
                             " characters is too short for one block of block_size " +
                             std::to_string(data.block_size) + " + 1");
  }
  std::vector<int64_t> tokens(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const int64_t t = id[static_cast<unsigned char>(text[i])];
    if (t < 0) {
      throw std::runtime_error(file + ": character code " +
                               std::to_string(static_cast<unsigned char>(text[i])) + " at byte " +
                               std::to_string(i) + " is not in the training text's vocabulary");
    }
    tokens[i] = t;
  }
  auto all = torch::from_blob(tokens.data(), {static_cast<int64_t>(tokens.size())}, torch::kLong).clone();
  std::vector<torch::Tensor> in, out;
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t start = b * data.block_size;
    in.push_back(all.narrow(0, start, data.block_size));
    out.push_back(all.narrow(0, start + 1, data.block_size));
  }
  return std::make_shared<TensorDataset>(torch::stack(in), torch::stack(out), file);
}

template <size_t N>
std::string pick(const std::vector<NamedTensor>& tensors, const char* const (&names)[N]) {
  for (const char* n : names) {
    for (const auto& t : tensors) {
      if (t.first == n) return n;
    }
  }
  return "";
}

// A .pt file: the labels are "labels" (HF's name), "label", "y", "target" or
// "targets"; the input is "input", "inputs", "input_ids", "x" or "features",
// or the one other tensor. Every tensor rides along by name.
std::shared_ptr<TensorDataset> pt_dataset(const std::string& file, DataInfo& info, bool first) {
  std::vector<NamedTensor> tensors = read_tensor_file(file);
  std::string names;
  for (const auto& t : tensors) names += (names.empty() ? "" : ", ") + t.first;
  static const char* const kLabels[] = {"labels", "label", "y", "target", "targets"};
  static const char* const kInputs[] = {"input", "inputs", "input_ids", "x", "features"};
  const std::string label = pick(tensors, kLabels);
  if (label.empty()) {
    throw std::runtime_error(file +
                             ": no labels tensor (expected one named labels, label, y, target or "
                             "targets; the file has: " +
                             names + ")");
  }
  std::string input = pick(tensors, kInputs);
  if (input.empty() && tensors.size() == 2)
    input = tensors[0].first == label ? tensors[1].first : tensors[0].first;
  if (input.empty()) {
    throw std::runtime_error(file +
                             ": no input tensor (expected one named input, inputs, input_ids, x or "
                             "features, or exactly one tensor besides the labels; the file has: " +
                             names + ")");
  }
  std::shared_ptr<TensorDataset> ds;
  try {
    ds = std::make_shared<TensorDataset>(std::move(tensors), input, label, file);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(e.what());
  }
  const auto& x = ds->inputs();
  check_features(file, x.dim() > 1 ? x.numel() / std::max<int64_t>(x.size(0), 1) : 1, info);
  const auto& y = ds->labels();
  if (y.is_floating_point()) {
    info.real_labels = true;
  } else if (y.numel() > 0) {
    if (y.min().item<int64_t>() < 0) {
      throw std::runtime_error(file + ": tensor '" + label + "' has a negative class id");
    }
    note_class_ids(file, y.max().item<int64_t>(), info, first);
  }
  return ds;
}

// A glob pattern's matches, sorted (shards in order); a plain name as it is.
std::vector<std::string> expand(const std::string& pattern) {
  if (pattern.find_first_of("*?[") == std::string::npos) {
    if (!std::filesystem::exists(pattern)) throw std::runtime_error(pattern + ": no such file");
    return {pattern};
  }
  glob_t g{};
  const int rc = ::glob(pattern.c_str(), 0, nullptr, &g);
  std::vector<std::string> out;
  for (size_t i = 0; rc == 0 && i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
  globfree(&g);
  if (out.empty()) throw std::runtime_error(pattern + ": no file matches the pattern");
  std::sort(out.begin(), out.end());
  return out;
}

// Class ids of int labels, as for a .pt file: the training data defines them.
void check_array_labels(const std::string& file, TensorDataset& ds, DataInfo& info, bool first) {
  if (ds.size() == 0) throw std::runtime_error(file + ": the arrays hold no sample");
  const auto y = ds.column(ds.label_name());
  check_features(file, ds.inputs().dim() > 1 ? ds.inputs()[0].numel() : 1, info);
  if (y.is_floating_point()) {
    info.real_labels = true;
    return;
  }
  if (y.numel() == 0 || y.scalar_type() == torch::kBool) return;
  const auto wide = y.to(torch::kLong);
  if (wide.min().item<int64_t>() < 0)
    throw std::runtime_error(file + ": the labels hold a negative class id");
  note_class_ids(file, wide.max().item<int64_t>(), info, first);
}

std::shared_ptr<TensorDataset> mapped_dataset(const std::string& pattern,
                                              const std::vector<std::string>& files, DataKind kind,
                                              const DataArguments& data, DataInfo& info, bool first,
                                              std::optional<int64_t> vocab_size) {
  for (const auto& f : files) {
    if (kind_of(f) != kind)
      throw std::runtime_error(f + ": matched by " + pattern + " but its format differs from " + files[0] +
                               "'s");
  }
  if (kind == DataKind::arrays) {
    auto ds = array_dataset(files);
    check_array_labels(pattern, *ds, info, first);
    return ds;
  }
  if (first) {
    info.block_size = data.block_size;
    info.vocab_size = vocab_size ? *vocab_size : largest_token_id(files, data.token_dtype) + 1;
  }
  TokenFileOptions o;
  o.block_size = data.block_size;
  o.token_dtype = data.token_dtype;
  o.every_offset = first;  // training: random windows; evaluation: each block once
  o.vocab_size = info.vocab_size;
  return token_dataset(files, o);
}

std::shared_ptr<TensorDataset> load_file(const std::string& pattern, const DataArguments& data,
                                         DataInfo& info, bool first, bool real_labels,
                                         std::optional<int64_t> vocab_size) {
  const std::vector<std::string> files = expand(pattern);
  const std::string& file = files.front();
  const DataKind kind = kind_of(file);
  if (!first && kind != info.kind) {
    throw std::runtime_error(pattern + ": its format differs from the training file's");
  }
  info.kind = kind;
  if (kind == DataKind::tokens || kind == DataKind::arrays)
    return mapped_dataset(pattern, files, kind, data, info, first, vocab_size);
  if (files.size() > 1) {
    throw std::runtime_error(pattern + ": matches " + std::to_string(files.size()) +
                             " files; shards are read for .bin/.npy token files and .npy folders only");
  }
  if (kind == DataKind::tensors) return pt_dataset(file, info, first);
  return kind == DataKind::tabular ? csv_dataset(file, data, info, first, real_labels)
                                   : text_dataset(file, data, info, first);
}

}  // namespace

LoadedData load_data(const DataArguments& data, uint64_t seed, bool real_labels,
                     std::optional<int64_t> vocab_size) {
  LoadedData out;
  bool first = true;
  if (data.train_file) {
    out.train = load_file(*data.train_file, data, out.info, true, real_labels, vocab_size);
    first = false;
  }
  if (data.validation_file) {
    if (first)
      throw std::runtime_error("validation_file needs a train_file (the vocabulary/classes come from it)");
    out.validation = load_file(*data.validation_file, data, out.info, false, real_labels, vocab_size);
  } else if (data.validation_split_percentage > 0) {
    if (!out.train) throw std::runtime_error("validation_split_percentage needs a train_file");
    if (out.info.kind == DataKind::tokens || out.info.kind == DataKind::arrays) {
      throw std::runtime_error(*data.train_file +
                               ": memory-mapped data is not split in memory; give a --validation_file "
                               "(e.g. val.bin) instead of --validation_split_percentage");
    }
    if (data.validation_split_percentage >= 100) {
      throw std::runtime_error("validation_split_percentage must be below 100, got " +
                               std::to_string(data.validation_split_percentage));
    }
    const int64_t n = out.train->size();
    const auto n_val =
        static_cast<int64_t>(static_cast<double>(n) * data.validation_split_percentage / 100.0);
    if (n_val < 1 || n_val >= n) {
      throw std::runtime_error("validation_split_percentage " +
                               std::to_string(data.validation_split_percentage) +
                               " leaves no validation or no training rows of " + std::to_string(n));
    }
    auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
    const auto perm = torch::randperm(n, gen, torch::kLong);
    const TensorDataset shuffled = out.train->select(perm);
    auto parts = shuffled.split_at(n - n_val);
    out.train = std::make_shared<TensorDataset>(std::move(parts.first));
    out.validation = std::make_shared<TensorDataset>(std::move(parts.second));
  }
  if (data.test_file) {
    if (first) throw std::runtime_error("test_file needs a train_file (the vocabulary/classes come from it)");
    out.test = load_file(*data.test_file, data, out.info, false, real_labels, vocab_size);
  }
  out.train_samples = out.train ? out.train->size() : 0;
  out.validation_samples = out.validation ? out.validation->size() : 0;
  out.test_samples = out.test ? out.test->size() : 0;
  return out;
}

}  // namespace trainhook
