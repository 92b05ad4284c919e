// The library's entry point: one integration, "csv" (--report_to csv).
#include <trainhook/csv/csv_format.hpp>

#include <memory>

namespace {

class CsvCallback final : public trainhook::support::LogHistoryFileCallback {
 public:
  explicit CsvCallback(trainhook::Setup& setup)
      : LogHistoryFileCallback(setup.host(), "csv",
                               trainhook::support::LogHistoryFileOptions::from_json(
                                   "csv", setup.config_json(), "log_history.csv"),
                               [] { return std::make_unique<trainhook::csv::CsvFormat>(); }) {}
};

}  // namespace

TRAINHOOK_PLUGIN(
    "csv", "1.0.0",
    trainhook::callback<CsvCallback>("csv", "1.0.0", trainhook::Kind::integration,
                                     "log_history as CSV in output_dir (header grows as keys appear)"))
