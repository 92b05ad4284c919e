#include <trainhook/plugin_host/end_request.hpp>

#include <atomic>

namespace trainhook {
namespace {
std::atomic<bool> g_end_now{false};
}  // namespace

void request_end_now() noexcept { g_end_now.store(true); }
bool end_now_requested() noexcept { return g_end_now.load(); }

}  // namespace trainhook
