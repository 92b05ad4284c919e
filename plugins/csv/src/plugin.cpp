// The library's entry point: one integration, "csv" (--report_to csv).
#include <trainhook/csv/csv_callback.hpp>

TRAINHOOK_PLUGIN("csv", "1.0.0",
                 trainhook::callback<trainhook::csv::CsvCallback>("csv", "1.0.0", trainhook::Kind::integration,
                                                                   "log_history as CSV in output_dir (header grows as keys appear)"))
