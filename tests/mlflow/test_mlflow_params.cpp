#include <doctest/doctest.h>
#include <trainhook/mlflow/params.hpp>

#include <string>

using namespace trainhook::mlflow;

TEST_CASE("params: python-style values and secrets withheld and long values dropped and named") {
  std::string long_value(7000, 'x');
  std::string args = R"({"learning_rate": 0.001, "fp16": true, "resume_from_checkpoint": null,
    "report_to": ["mlflow"], "hub_token": "hf_abc", "optim_args": {"beta1": 0.9, "api_key": "k"},
    "long_one": ")" + long_value +
                     R"("})";
  ParamSet p = build_params(args, false, 6000, 0);
  auto find = [&](const std::string& k) -> std::string {
    for (const auto& kv : p.params)
      if (kv.first == k) return kv.second;
    return "<absent>";
  };
  CHECK(find("learning_rate") == "0.001");
  CHECK(find("fp16") == "True");
  CHECK(find("resume_from_checkpoint") == "None");
  CHECK(find("report_to") == "['mlflow']");
  CHECK(find("hub_token") == "<absent>");
  // Not flattened: the whole object as Python's str(), the credential masked.
  CHECK(find("optim_args") == "{'api_key': '<API_KEY>', 'beta1': 0.9}");
  CHECK(p.secrets == std::vector<std::string>{"hub_token"});
  CHECK(p.too_long == std::vector<std::string>{"long_one"});

  ParamSet flat = build_params(args, true, 6000, 0);
  bool has_beta = false, has_key = false;
  for (const auto& kv : flat.params) {
    has_beta |= kv.first == "optim_args.beta1";
    has_key |= kv.first == "optim_args.api_key";
  }
  CHECK(has_beta);
  CHECK_FALSE(has_key);  // the nested secret is withheld too
}

TEST_CASE("params: MLFLOW_MAX_LOG_PARAMS caps and requests carry at most 100") {
  std::string args = "{";
  for (int i = 0; i < 250; ++i)
    args += (i ? "," : "") + std::string("\"p") + std::to_string(i) + "\": " + std::to_string(i);
  args += "}";
  ParamSet all = build_params(args, false, 6000, 0);
  CHECK(all.params.size() == 250);
  auto chunks = chunk_params(all.params);
  REQUIRE(chunks.size() == 3);
  CHECK(chunks[0].size() == 100);
  CHECK(chunks[2].size() == 50);
  ParamSet capped = build_params(args, false, 6000, 30);
  CHECK(capped.params.size() == 30);
  CHECK(capped.capped == 220);
  CHECK_THROWS(build_params("[1,2]", false, 6000, 0));
}

TEST_CASE("params: lists and dicts as Python's str() renders them (HF sends str(value))") {
  // Expected strings are what CPython 3 prints for str(json.loads(text)).
  const std::string args = R"({
    "report_to": ["mlflow", "tensorboard"],
    "empty_list": [], "empty_dict": {},
    "nested": {"a": 1, "b": [true, false, null], "c": {"d": "e"}},
    "floats": [1e-05, 0.1, 5.0, 0.0001, 1e16, 1e15, 123.456, -2.5e-07, 1.5e+300, -0.0, 3],
    "quotes": ["it's", "say \"hi\"", "both ' and \"", "back\\slash", "tab\tnl\n", "bell\u0007", "caf\u00e9"],
    "top_float": 1e-05, "top_big": 1e16, "top_int": 7, "top_str": "it's"
  })";
  ParamSet p = build_params(args, false, 6000, 0);
  auto find = [&](const std::string& k) -> std::string {
    for (const auto& kv : p.params)
      if (kv.first == k) return kv.second;
    return "<absent>";
  };
  CHECK(find("report_to") == "['mlflow', 'tensorboard']");
  CHECK(find("empty_list") == "[]");
  CHECK(find("empty_dict") == "{}");
  CHECK(find("nested") == "{'a': 1, 'b': [True, False, None], 'c': {'d': 'e'}}");
  CHECK(find("floats") ==
        "[1e-05, 0.1, 5.0, 0.0001, 1e+16, 1000000000000000.0, 123.456, -2.5e-07, 1.5e+300, -0.0, 3]");
  CHECK(find("quotes") ==
        R"(["it's", 'say "hi"', 'both \' and "', 'back\\slash', 'tab\tnl\n', 'bell\x07', 'café'])");
  CHECK(find("top_float") == "1e-05");
  CHECK(find("top_big") == "1e+16");
  CHECK(find("top_int") == "7");
  CHECK(find("top_str") == "it's");
}
