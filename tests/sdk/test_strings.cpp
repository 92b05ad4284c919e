// trainhook/strings.hpp: the one set of string helpers.
#include <trainhook/strings.hpp>

#include <doctest/doctest.h>

#include <array>

namespace s = trainhook::strings;

TEST_CASE("trim and trim_view drop ASCII whitespace at both ends only") {
  CHECK(s::trim("  a b \t\r\n") == "a b");
  CHECK(s::trim("") == "");
  CHECK(s::trim(" \t ") == "");
  CHECK(s::trim_view("x") == "x");
  CHECK(s::trim_view("\fx y\v") == "x y");
}

TEST_CASE("lower and iequals are ASCII case-insensitive") {
  CHECK(s::lower("WandB_API_Key") == "wandb_api_key");
  CHECK(s::iequals("TRUE", "true"));
  CHECK_FALSE(s::iequals("true", "trues"));
  CHECK_FALSE(s::iequals("on", "of"));
}

TEST_CASE("starts_with / ends_with") {
  CHECK(s::starts_with("s3://bucket", "s3://"));
  CHECK_FALSE(s::starts_with("s3", "s3://"));
  CHECK(s::ends_with("eval_loss", "loss"));
  CHECK_FALSE(s::ends_with("loss_x", "loss"));
  CHECK(s::ends_with("x", ""));
}

TEST_CASE("split keeps empty pieces and trims when asked") {
  CHECK(s::split("a,b", ',') == std::vector<std::string>{"a", "b"});
  CHECK(s::split("a,,b", ',') == std::vector<std::string>{"a", "", "b"});
  CHECK(s::split("", ',') == std::vector<std::string>{""});
  CHECK(s::split(" a , b ", ',', true) == std::vector<std::string>{"a", "b"});
}

TEST_CASE("join takes any range of strings") {
  CHECK(s::join(std::vector<std::string>{"a", "b", "c"}) == "a, b, c");
  CHECK(s::join(std::vector<std::string>{}) == "");
  CHECK(s::join(std::array<const char*, 2>{"x", "y"}, "|") == "x|y");
}
