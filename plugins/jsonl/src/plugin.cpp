// The library's entry point: one integration, "jsonl" (--report_to jsonl).
#include <trainhook/jsonl/jsonl_callback.hpp>

TRAINHOOK_PLUGIN("jsonl", "1.0.0",
                 trainhook::callback<trainhook::jsonl::JsonlCallback>("jsonl", "1.0.0", trainhook::Kind::integration,
                                                                   "log_history as JSON lines in output_dir"))
