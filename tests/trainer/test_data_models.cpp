// The CLI's data (CSV, text, validation split), the batch sampler (epoch
// order, shards) and the built-in models.
#include "trainer_test_support.hpp"

#include <trainhook/data/batch_sampler.hpp>
#include <trainhook/data/data_files.hpp>
#include <trainhook/models/model_factory.hpp>

#include <doctest/doctest.h>

#include <fstream>
#include <set>

using namespace trainhook;
using namespace trainhook::test;
namespace fs = std::filesystem;

TEST_CASE("CSV files load as float features and class labels, classes come from the training file") {
  TempDir dir("trainhook-data-csv");
  std::ofstream(dir.path / "train.csv") << "0,1,2,3,0\n4,5,6,7,1\n8,9,10,11,2\n1,1,1,1,2\n";
  std::ofstream(dir.path / "valid.csv") << "0,1,2,3,1\n";
  std::ofstream(dir.path / "bad_label.csv") << "0,1,2,3,1\n0,1,2,3,3\n";
  DataArguments d;
  d.train_file = (dir.path / "train.csv").string();
  d.validation_file = (dir.path / "valid.csv").string();
  d.feature_scale = 0.5;
  const auto data = load_data(d, 1);
  CHECK(data.info.kind == DataKind::tabular);
  CHECK(data.info.num_features == 4);
  CHECK(data.info.num_classes == 3);
  CHECK(data.train_samples == 4);
  CHECK(data.validation_samples == 1);
  CHECK(data.train->inputs()[1][0].item<float>() == 2.0f);
  CHECK(data.train->labels().dtype() == torch::kLong);

  d.validation_file = (dir.path / "bad_label.csv").string();
  CHECK_THROWS_WITH_AS(load_data(d, 1), doctest::Contains("bad_label.csv:2: label 3 is out of range"),
                       std::runtime_error);
  d.validation_file = (dir.path / "missing.csv").string();
  CHECK_THROWS_WITH_AS(load_data(d, 1), doctest::Contains("missing.csv: no such file"), std::runtime_error);
  d.validation_file.reset();
  d.validation_split_percentage = 50;
  const auto split = load_data(d, 1);
  CHECK(split.train_samples == 2);
  CHECK(split.validation_samples == 2);
}

TEST_CASE("text files become next-character blocks over the training vocabulary") {
  TempDir dir("trainhook-data-text");
  std::ofstream(dir.path / "train.txt") << "abcabcabcab";
  std::ofstream(dir.path / "short.txt") << "ab";
  DataArguments d;
  d.train_file = (dir.path / "train.txt").string();
  d.block_size = 4;
  const auto data = load_data(d, 1);
  CHECK(data.info.kind == DataKind::text);
  CHECK(data.info.vocabulary == "abc");
  CHECK(data.train_samples == 2);  // (11 - 1) / 4 blocks
  CHECK(torch::equal(data.train->inputs()[0], torch::tensor({0, 1, 2, 0}, torch::kLong)));
  CHECK(torch::equal(data.train->labels()[0], torch::tensor({1, 2, 0, 1}, torch::kLong)));
  d.train_file = (dir.path / "short.txt").string();
  CHECK_THROWS_WITH_AS(load_data(d, 1), doctest::Contains("too short"), std::runtime_error);
  d.train_file = (dir.path / "data.parquet").string();
  std::ofstream(*d.train_file) << "x";
  CHECK_THROWS_WITH_AS(load_data(d, 1), doctest::Contains("unknown data format"), std::runtime_error);
}

TEST_CASE("each epoch has its own order, shards split it without overlap") {
  SamplerOptions o;
  o.batch_size = 4;
  o.seed = 3;
  BatchSampler whole(10, o);
  CHECK(whole.batches_per_epoch() == 3);
  const auto e0 = whole.epoch_batches(0);
  const auto again = whole.epoch_batches(0);
  const auto e1 = whole.epoch_batches(1);
  CHECK(torch::equal(e0[0], again[0]));
  CHECK_FALSE(torch::equal(torch::cat(e0), torch::cat(e1)));
  CHECK(e0[2].numel() == 2);
  o.drop_last = true;
  CHECK(BatchSampler(10, o).batches_per_epoch() == 2);
  o.drop_last = false;
  std::multiset<int64_t> seen;
  for (int32_t rank = 0; rank < 3; ++rank) {
    o.shard = Shard{rank, 3};
    BatchSampler part(10, o);
    CHECK(part.samples_per_epoch() == 4);  // padded to 12 by wrapping
    for (const auto& b : part.epoch_batches(0)) {
      for (int64_t i = 0; i < b.numel(); ++i) seen.insert(b[i].item<int64_t>());
    }
  }
  CHECK(seen.size() == 12);
  for (int64_t i = 0; i < 10; ++i) CHECK(seen.count(i) >= 1);
  o.shard = Shard{3, 3};
  CHECK_THROWS_AS(BatchSampler(10, o), std::invalid_argument);
}

TEST_CASE("built-in models give outputs of the right shape and a scalar loss") {
  ModelArguments m;
  m.hidden_size = 16;
  DataArguments d;
  DataInfo tab;
  tab.num_features = 64;
  tab.num_classes = 10;
  const auto x = torch::rand({5, 64});
  const auto y = torch::randint(0, 10, {5}, torch::kLong);
  for (const std::string name : {"mlp", "cnn"}) {
    CAPTURE(name);
    m.model = name;
    auto model = make_builtin_model(m, d, tab);
    const auto out = model->forward(x);
    CHECK(out.sizes() == torch::IntArrayRef({5, 10}));
    CHECK(model->loss(out, y).dim() == 0);
    CHECK_FALSE(model->description().empty());
  }
  tab.num_features = 60;
  m.model = "cnn";
  CHECK_THROWS_WITH_AS(make_builtin_model(m, d, tab), doctest::Contains("not a square image"),
                       std::invalid_argument);

  DataInfo text;
  text.kind = DataKind::text;
  text.vocab_size = 7;
  text.block_size = 8;
  m.model = "char_transformer";
  m.num_heads = 4;
  auto lm = make_builtin_model(m, d, text);
  const auto tokens = torch::randint(0, 7, {3, 8}, torch::kLong);
  const auto out = lm->forward(tokens);
  CHECK(out.sizes() == torch::IntArrayRef({3, 8, 7}));
  CHECK(lm->loss(out, tokens).dim() == 0);
  CHECK(lm->tokens_per_sample(tokens) == 8);
  // Causal: changing a later token does not change earlier outputs.
  auto changed = tokens.clone();
  changed[0][7] = (tokens[0][7].item<int64_t>() + 1) % 7;
  lm->module().eval();
  const auto a = lm->forward(tokens);
  const auto b = lm->forward(changed);
  CHECK(torch::allclose(a[0].narrow(0, 0, 7), b[0].narrow(0, 0, 7)));

  m.model = "mlpp";
  CHECK_THROWS_WITH_AS(make_builtin_model(m, d, tab), doctest::Contains("did you mean 'mlp'"),
                       std::invalid_argument);
  m.model = "mlp";
  CHECK_THROWS_WITH_AS(make_builtin_model(m, d, text), doctest::Contains("needs tabular data"),
                       std::invalid_argument);
}
