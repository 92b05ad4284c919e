// metric_names: the key -> metric name rule and the first-wins table.
#include <trainhook/prometheus/metric_names.hpp>

#include <doctest/doctest.h>

using namespace trainhook::prometheus;

TEST_CASE("HF keys become trainhook_ names with invalid characters as underscores") {
  CHECK(metric_name_for("loss") == "trainhook_loss");
  CHECK(metric_name_for("learning_rate") == "trainhook_learning_rate");
  CHECK(metric_name_for("eval_accuracy") == "trainhook_eval_accuracy");
  CHECK(metric_name_for("eval/acc") == "trainhook_eval_acc");
  CHECK(metric_name_for("grad_norm/layers.0.weight") == "trainhook_grad_norm_layers_0_weight");
  CHECK(metric_name_for("throughput/device/mfu") == "trainhook_throughput_device_mfu");
  CHECK(metric_name_for("a:b-c d") == "trainhook_a_b_c_d");
  CHECK(metric_name_for("0th") == "trainhook_0th");
  // Each byte of a multi-byte UTF-8 character is replaced.
  CHECK(metric_name_for("\xc3\xa9t\xc3\xa9") == "trainhook___t__");
}

TEST_CASE("every mapped name is valid in the exposition format") {
  for (const char* key :
       {"loss", "eval/acc", "", "9", "a b", "\"quoted\"", "back\\slash", "new\nline", "x{y}"})
    CHECK_MESSAGE(is_valid_metric_name(metric_name_for(key)), key);
  CHECK_FALSE(is_valid_metric_name(""));
  CHECK_FALSE(is_valid_metric_name("9abc"));
  CHECK_FALSE(is_valid_metric_name("a/b"));
  CHECK(is_valid_metric_name("a:b_c9"));
}

TEST_CASE("two keys with one name: the first keeps it and the second is refused once") {
  MetricNames names;
  MetricNames::Lookup a = names.lookup("eval/acc");
  REQUIRE(a.name != nullptr);
  CHECK(*a.name == "trainhook_eval_acc");
  MetricNames::Lookup b = names.lookup("eval_acc");
  CHECK(b.name == nullptr);
  CHECK(b.first_refusal);
  CHECK(b.taken_by == "eval/acc");
  MetricNames::Lookup b2 = names.lookup("eval_acc");
  CHECK(b2.name == nullptr);
  CHECK_FALSE(b2.first_refusal);
  MetricNames::Lookup a2 = names.lookup("eval/acc");
  REQUIRE(a2.name != nullptr);
  CHECK(*a2.name == "trainhook_eval_acc");
}

TEST_CASE("a key mapping to one of the plugin's own names is refused") {
  MetricNames names;
  names.reserve("trainhook_up");
  MetricNames::Lookup up = names.lookup("up");
  CHECK(up.name == nullptr);
  CHECK(up.first_refusal);
  CHECK(up.taken_by.empty());
  CHECK(names.lookup("upper").name != nullptr);
}
