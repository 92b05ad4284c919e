#include <trainhook/plugin_host/host/end_request.hpp>

#include <atomic>

namespace trainhook {
namespace {
std::atomic<bool> g_end_now{false};
std::atomic<int> g_stop_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "stored from a signal handler");
}  // namespace

void request_end_now() noexcept { g_end_now.store(true); }
bool end_now_requested() noexcept { return g_end_now.load(); }
void record_stop_signal(int sig) noexcept { g_stop_signal.store(sig); }
int stop_signal_received() noexcept { return g_stop_signal.load(); }

}  // namespace trainhook
