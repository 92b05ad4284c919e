// The library's entry point: one integration, "jsonl" (--report_to jsonl).
#include <trainhook/jsonl/jsonl_format.hpp>

#include <memory>

namespace {

class JsonlCallback final : public trainhook::support::LogHistoryFileCallback {
 public:
  explicit JsonlCallback(trainhook::Setup& setup)
      : LogHistoryFileCallback(setup.host(), "jsonl",
                               trainhook::support::LogHistoryFileOptions::from_json(
                                   "jsonl", setup.config_json(), "log_history.jsonl"),
                               [] { return std::make_unique<trainhook::jsonl::JsonlFormat>(); }) {}
};

}  // namespace

TRAINHOOK_PLUGIN("jsonl", "1.0.0",
                 trainhook::callback<JsonlCallback>("jsonl", "1.0.0", trainhook::Kind::integration,
                                                    "log_history as JSON lines in output_dir"))
