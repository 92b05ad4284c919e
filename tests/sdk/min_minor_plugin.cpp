// A plugin built with this SDK for hosts of several minors. Built twice by
// tests/sdk/CMakeLists.txt: with TRAINHOOK_ABI_MIN_MINOR=1 (it needs a 1.1 host)
// and without it (stamped with the SDK's own minor, as every plugin was before
// the macro existed). test_min_minor.cpp loads both into hosts of minors 0-2.
//
// It uses one 1.1 service (set_critical, in the constructor) and, when the host
// has it, one 1.2 service (end_requested, at on_train_end) through plugin.hpp,
// whose Host checks TH_HAS_FIELD before reading a field newer than 1.0.
#include <trainhook/plugin.hpp>

#include <string>

namespace {

class MinMinor final : public trainhook::Callback {
 public:
  explicit MinMinor(trainhook::Setup& setup) : host_(setup.host()) { host_.set_critical(); }
  void on_train_end(trainhook::Event&) override {
    host_.info(std::string("host ABI 1.") + std::to_string(host_.abi_minor()) +
               (host_.end_requested() ? ": asked to end now" : ": no early end"));
  }

 private:
  trainhook::Host host_;
};

}  // namespace

TRAINHOOK_PLUGIN("min_minor", "1.0.0",
                 trainhook::callback<MinMinor>("min_minor", "1.0.0", trainhook::Kind::callback,
                                               "needs ABI 1.1, uses 1.2 when the host has it"))
