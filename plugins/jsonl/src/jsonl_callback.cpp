#include <trainhook/jsonl/jsonl_callback.hpp>

#include <trainhook/jsonl/jsonl_format.hpp>
#include <trainhook/jsonl/jsonl_options.hpp>

#include <memory>

namespace trainhook::jsonl {

JsonlCallback::JsonlCallback(trainhook::Setup& setup)
    : LogHistoryFileCallback(setup.host(), "jsonl", JsonlOptions::from_json(setup.config_json()),
                             [] { return std::make_unique<trainhook::jsonl::JsonlFormat>(); }) {}

}  // namespace trainhook::jsonl
