#include "call_watch.hpp"

#include <chrono>
#include <utility>

namespace trainhook::plugin_check {
namespace {

// A change that lasts a few of these is seen; one undone within a sample may
// not be (what cannot be observed from outside the call is not judged).
constexpr auto kEvery = std::chrono::milliseconds(1);
constexpr size_t kKept = 5;

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

}  // namespace

CallWatch::Changes CallWatch::compare(const ProcessSettings& before, const ProcessSettings& now) {
  Changes c;
  if (const auto signals = changed_signals(before, now); !signals.empty())
    c.signals = "changed the disposition of " + joined(signals);
  c.std_fds = joined(changed_std_fds(before, now));
  if (before.cwd != now.cwd) c.cwd = "changed the working directory from " + before.cwd + " to " + now.cwd;
  return c;
}

void CallWatch::add(Kind& kind, const std::string& finding) {
  ++kind.count;
  if (kind.seen.size() < kKept) kind.seen.push_back(finding);
}

void CallWatch::start() {
  if (running()) return;
  last_ = ProcessSettings::take();
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = false;
    in_call_ = false;
  }
  sampler_ = std::thread([this] { sample(); });
}

void CallWatch::stop() {
  if (!running()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  sampler_.join();
}

void CallWatch::begin(const char* callback, const char* event, int64_t step) {
  if (!running()) return;
  ProcessSettings now = ProcessSettings::take();
  std::string where = std::string(callback) + "." + event + " at step " + std::to_string(step);
  const Changes between = compare(last_, now);
  if (between.any()) {
    const std::string when = "between two calls, before " + where + " (a thread of the plugin's): ";
    if (!between.signals.empty()) add(signals_, when + between.signals);
    if (!between.std_fds.empty()) add(std_fds_, when + between.std_fds);
    if (!between.cwd.empty()) add(cwd_, when + between.cwd);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    before_ = std::move(now);
    during_ = Changes{};
    in_call_ = true;
    ++call_;
  }
  where_ = std::move(where);
  wake_.notify_one();
}

void CallWatch::end() {
  if (!running()) return;
  Changes seen;
  {
    std::lock_guard<std::mutex> lock(mu_);
    in_call_ = false;
    seen = std::move(during_);
    during_ = Changes{};
  }
  // before_ changes only in begin(), on this thread: no lock needed to read it.
  ProcessSettings now = ProcessSettings::take();
  const Changes left = compare(before_, now);
  auto judge = [&](Kind& kind, const std::string& left_what, const std::string& seen_what) {
    if (!left_what.empty())
      add(kind, where_ + ": " + left_what + " (still so when it returned)");
    else if (!seen_what.empty())
      add(kind, where_ + ": " + seen_what + " while it ran (put back before it returned)");
  };
  judge(signals_, left.signals, seen.signals);
  judge(std_fds_, left.std_fds, seen.std_fds);
  judge(cwd_, left.cwd, seen.cwd);
  last_ = std::move(now);
}

void CallWatch::sample() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    if (!in_call_) {
      wake_.wait(lock);
      continue;
    }
    const uint64_t call = call_;
    lock.unlock();
    const ProcessSettings now = ProcessSettings::take();
    lock.lock();
    // Only a sample taken wholly inside one call speaks of that call.
    if (in_call_ && call_ == call) {
      Changes c = compare(before_, now);
      if (during_.signals.empty()) during_.signals = std::move(c.signals);
      if (during_.std_fds.empty()) during_.std_fds = std::move(c.std_fds);
      if (during_.cwd.empty()) during_.cwd = std::move(c.cwd);
    }
    wake_.wait_for(lock, kEvery, [&] { return stopping_ || call_ != call; });
  }
}

}  // namespace trainhook::plugin_check
