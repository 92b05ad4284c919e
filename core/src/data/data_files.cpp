// DataArguments -> TensorDatasets. CSV: float features (× feature_scale) and
// int64 labels; text: int64 token ids of non-overlapping blocks of
// block_size + 1 characters (inputs = first block_size, labels = shifted by one).
#include <trainhook/data/data_files.hpp>

#include <trainhook/data/csv_table.hpp>
#include <trainhook/data/tensor_dataset.hpp>
#include <trainhook/strings.hpp>

#include <ATen/CPUGeneratorImpl.h>

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
  if (has_extension(file, ".csv")) return DataKind::tabular;
  if (has_extension(file, ".txt")) return DataKind::text;
  throw std::runtime_error(file +
                           ": unknown data format (expected a .csv file with a label column or a .txt "
                           "file for character language modelling)");
}

std::shared_ptr<TensorDataset> csv_dataset(const std::string& file, const DataArguments& data, DataInfo& info,
                                           bool defines_classes) {
  const LabeledTable t = read_labeled_csv(file, data.label_column, data.csv_header);
  if (info.num_features != 0 && t.features != info.num_features) {
    throw std::runtime_error(file + ": rows have " + std::to_string(t.features) +
                             " features but the training data has " + std::to_string(info.num_features));
  }
  info.num_features = t.features;
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

std::shared_ptr<TensorDataset> load_file(const std::string& file, const DataArguments& data, DataInfo& info,
                                         bool first) {
  if (!std::filesystem::exists(file)) throw std::runtime_error(file + ": no such file");
  const DataKind kind = kind_of(file);
  if (!first && kind != info.kind) {
    throw std::runtime_error(file + ": its format differs from the training file's");
  }
  info.kind = kind;
  return kind == DataKind::tabular ? csv_dataset(file, data, info, first)
                                   : text_dataset(file, data, info, first);
}

}  // namespace

LoadedData load_data(const DataArguments& data, uint64_t seed) {
  LoadedData out;
  bool first = true;
  if (data.train_file) {
    out.train = load_file(*data.train_file, data, out.info, true);
    first = false;
  }
  if (data.validation_file) {
    if (first)
      throw std::runtime_error("validation_file needs a train_file (the vocabulary/classes come from it)");
    out.validation = load_file(*data.validation_file, data, out.info, false);
  } else if (data.validation_split_percentage > 0) {
    if (!out.train) throw std::runtime_error("validation_split_percentage needs a train_file");
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
    TensorDataset shuffled(out.train->inputs().index_select(0, perm),
                           out.train->labels().index_select(0, perm), out.train->description());
    auto parts = shuffled.split_at(n - n_val);
    out.train = std::make_shared<TensorDataset>(std::move(parts.first));
    out.validation = std::make_shared<TensorDataset>(std::move(parts.second));
  }
  if (data.test_file) {
    if (first) throw std::runtime_error("test_file needs a train_file (the vocabulary/classes come from it)");
    out.test = load_file(*data.test_file, data, out.info, false);
  }
  out.train_samples = out.train ? out.train->size() : 0;
  out.validation_samples = out.validation ? out.validation->size() : 0;
  out.test_samples = out.test ? out.test->size() : 0;
  return out;
}

}  // namespace trainhook
