// check_plugin_config_sections: a --plugin_config section no callback of the
// run reads is an error before training, with a did-you-mean.
#include <trainhook/args/argument_parser.hpp>
#include <trainhook/args/plugin_config_sections.hpp>

#include <doctest/doctest.h>

using nlohmann::json;
using trainhook::ArgumentError;
using trainhook::check_plugin_config_sections;

namespace {

std::string error_of(const json& config, const std::vector<std::string>& enabled,
                     const std::vector<std::string>& installed) {
  try {
    check_plugin_config_sections(config, enabled, installed);
  } catch (const ArgumentError& e) {
    return e.what();
  }
  FAIL("expected an ArgumentError");
  return {};
}

const std::vector<std::string> kInstalled = {"early_stopping", "printer", "progress", "mlflow",
                                             "tensorboard"};

}  // namespace

TEST_CASE("a misspelt section is an error with the closest callback name") {
  const std::string e = error_of(json::parse(R"({"early_stoping": {"early_stopping_patience": 5}})"),
                                 {"early_stopping", "progress"}, kInstalled);
  CHECK(e ==
        "--plugin_config: the section 'early_stoping' is read by no callback of this run (did you mean "
        "'early_stopping'?); callbacks of this run: early_stopping, progress");
}

TEST_CASE("a section of an installed plugin that is not enabled says how to enable it") {
  const std::string e =
      error_of(json::parse(R"({"mlflow": {"experiment_name": "x"}})"), {"progress"}, kInstalled);
  CHECK(e.find("the section 'mlflow' is read by no callback of this run ('mlflow' is installed but not "
               "enabled: add it to --report_to or --callbacks, or remove the section)") != std::string::npos);
  const std::string none = error_of(json::parse(R"({"zzzz": {}})"), {}, kInstalled);
  CHECK(none.find("and no plugin of that name is installed; callbacks of this run: none") !=
        std::string::npos);
}

TEST_CASE("sections of enabled callbacks pass") {
  CHECK_NOTHROW(check_plugin_config_sections(json::parse(R"({"early_stopping": {}, "progress": {"x": 1}})"),
                                             {"early_stopping", "progress"}, kInstalled));
  CHECK_NOTHROW(check_plugin_config_sections(json::object(), {}, {}));
}
