#include <trainhook/csv/csv_callback.hpp>

#include <trainhook/csv/csv_format.hpp>
#include <trainhook/csv/csv_options.hpp>

#include <memory>

namespace trainhook::csv {

CsvCallback::CsvCallback(trainhook::Setup& setup)
    : LogHistoryFileCallback(setup.host(), "csv", CsvOptions::from_json(setup.config_json()),
                             [] { return std::make_unique<trainhook::csv::CsvFormat>(); }) {}

}  // namespace trainhook::csv
