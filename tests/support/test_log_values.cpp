#include <doctest/doctest.h>
#include <trainhook/support/log_values.hpp>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

using namespace trainhook::support;

TEST_CASE("for_each_value hands every number then every text in the host's order") {
  const char* keys[] = {"loss", "learning_rate"};
  const double values[] = {0.5, 1e-3};
  const char* text_keys[] = {"note"};
  const char* texts[] = {"warm-up"};
  const th_values v{TH_VALUES_STRUCT_SIZE, 2, keys, values, 1, text_keys, texts};
  std::vector<std::string> seen;
  for_each_value(
      trainhook::Values(&v),
      [&](std::string_view k, double x) { seen.push_back(std::string(k) + "=" + std::to_string(x)); },
      [&](std::string_view k, std::string_view t) { seen.push_back(std::string(k) + ":" + std::string(t)); });
  CHECK(seen == std::vector<std::string>{"loss=0.500000", "learning_rate=0.001000", "note:warm-up"});
  seen.clear();
  for_each_number(trainhook::Values(&v), [&](std::string_view k, double) { seen.emplace_back(k); });
  CHECK(seen == std::vector<std::string>{"loss", "learning_rate"});
}

TEST_CASE("for_each_value reads no texts from a host older than string values") {
  const char* keys[] = {"loss"};
  const double values[] = {2.0};
  // A host before string values: its struct ends before string_count.
  const th_values v{
      static_cast<uint32_t>(offsetof(th_values, string_count)), 1, keys, values, 7, nullptr, nullptr};
  int numbers = 0, texts = 0;
  for_each_value(
      trainhook::Values(&v), [&](std::string_view, double) { ++numbers; },
      [&](std::string_view, std::string_view) { ++texts; });
  CHECK(numbers == 1);
  CHECK(texts == 0);
}
