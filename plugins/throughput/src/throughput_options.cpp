#include <trainhook/throughput/throughput_options.hpp>

namespace trainhook::throughput {

const OptionTable<ThroughputOptions>& ThroughputOptions::table() {
  static const auto t =
      OptionTable<ThroughputOptions>("throughput")
          .key(TRAINHOOK_KEY(window_size), "optimizer steps in the window (≥ 1; Composer's default)")
          .min(1)
          .key(TRAINHOOK_KEY(peak_flops),
               "one device's peak FLOPs per second (e.g. A100 bf16 dense 3.12e14, H100 SXM 9.89e14); adds "
               "`throughput/device/mfu`")
          .min(1)
          .max(1e30)
          .key(TRAINHOOK_KEY(flops_per_sample),
               "FLOPs one training sample costs (forward and backward), instead of the trainer's count")
          .above(0)
          .max(1e30);
  return t;
}

}  // namespace trainhook::throughput
