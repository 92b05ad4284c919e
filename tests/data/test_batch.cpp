// A batch's tensors by name: input and labels under the data set's names, the
// other tensors after them (what a TorchScript model's forward is bound to).
#include <trainhook/data/batch.hpp>

#include <doctest/doctest.h>

#include <torch/torch.h>

#include <string>
#include <vector>

using trainhook::Batch;

namespace {

Batch three_tensor_batch() {
  Batch b;
  b.inputs = torch::ones({2, 3});
  b.labels = torch::zeros({2}, torch::kLong);
  b.input_name = "input_ids";
  b.label_name = "label";
  b.extra.emplace_back("attention_mask", torch::full({2, 3}, 7));
  return b;
}

}  // namespace

TEST_CASE("Batch::find: input, labels and extra tensors by their names, nullptr for others") {
  const Batch b = three_tensor_batch();
  REQUIRE(b.find("input_ids") != nullptr);
  CHECK(b.find("input_ids")->sizes() == b.inputs.sizes());
  CHECK(b.find("input_ids") == &b.inputs);
  CHECK(b.find("label") == &b.labels);
  REQUIRE(b.find("attention_mask") != nullptr);
  CHECK(b.find("attention_mask")->max().item<int64_t>() == 7);
  CHECK(b.find("input") == nullptr);  // the default name, not this batch's
  CHECK(b.find("labels") == nullptr);
}

TEST_CASE("Batch::names: input and labels first, then the extra tensors in order") {
  Batch b = three_tensor_batch();
  b.extra.emplace_back("token_type_ids", torch::zeros({2, 3}));
  CHECK(b.names() == std::vector<std::string>{"input_ids", "label", "attention_mask", "token_type_ids"});
  CHECK(Batch{}.names() == std::vector<std::string>{"input", "labels"});
}
