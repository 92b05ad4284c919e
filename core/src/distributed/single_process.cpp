// SingleProcess (see single_process.hpp).
#include <trainhook/distributed/single_process.hpp>

#include <trainhook/checkpoint/checkpoint_io.hpp>

#include <utility>

namespace trainhook::distributed {

SingleProcess::SingleProcess(std::function<void()> reduce_gradients)
    : reduce_gradients_(std::move(reduce_gradients)) {}

void SingleProcess::reduce_gradients() {
  if (reduce_gradients_) reduce_gradients_();
}

std::string SingleProcess::rng_state_file() const { return kRngStateFile; }

}  // namespace trainhook::distributed
