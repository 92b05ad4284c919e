// check_plugin_config_sections: a --plugin_config section named after no
// installed plugin is an error before training, with a did-you-mean; a section
// of an installed plugin the run does not enable is a warning.
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

TEST_CASE("a section of an installed plugin that is not enabled is a warning naming it") {
  std::vector<std::string> warnings;
  CHECK_NOTHROW(warnings = check_plugin_config_sections(
                    json::parse(R"({"mlflow": {"experiment_name": "x"}, "progress": {}})"), {"progress"},
                    kInstalled));
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0] ==
        "--plugin_config: the section 'mlflow' is read by no callback of this run ('mlflow' is installed but "
        "not enabled; its settings apply when --report_to or --callbacks names it)");
}

TEST_CASE("a section named after no installed plugin is an error") {
  const std::string none = error_of(json::parse(R"({"zzzz": {}})"), {}, kInstalled);
  CHECK(none.find("and no plugin of that name is installed; callbacks of this run: none") !=
        std::string::npos);
}

TEST_CASE("sections of enabled callbacks pass without warnings") {
  CHECK(check_plugin_config_sections(json::parse(R"({"early_stopping": {}, "progress": {"x": 1}})"),
                                     {"early_stopping", "progress"}, kInstalled)
            .empty());
  CHECK(check_plugin_config_sections(json::object(), {}, {}).empty());
}
