// HF PrinterCallback (used instead of the progress bars with disable_tqdm):
// prints each logs dict on its own line, world-zero process only. Lines are
// written by a Display thread (bars off), so on_log never waits on the output.
#pragma once

#include <trainhook/progress/display.hpp>

#include <trainhook/plugin.hpp>

namespace trainhook::progress {

class PrinterCallback final : public trainhook::Callback {
 public:
  explicit PrinterCallback(trainhook::Setup& setup);

  void on_log(trainhook::Event& e) override;
  void on_train_end(trainhook::Event& e) override;

 private:
  Display display_;
};

}  // namespace trainhook::progress
