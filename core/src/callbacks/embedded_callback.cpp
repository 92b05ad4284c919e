// The in-process adapter that lets an embedder's trainhook::Callback (the SDK's
// class, the same a plugin author uses) run in the handler next to plugins.
#include <trainhook/callbacks/callback.hpp>

#include <stdexcept>

namespace trainhook::detail {
namespace {

class EmbeddedCallback final : public InternalCallback {
 public:
  explicit EmbeddedCallback(NamedCallback cb) : cb_(std::move(cb)) {
    if (cb_.name.empty()) throw std::invalid_argument("a C++ callback needs a non-empty name");
    if (!cb_.callback) throw std::invalid_argument("C++ callback '" + cb_.name + "' is null");
  }
  std::string name() const override { return cb_.name; }
  uint64_t event_mask() const override { return cb_.event_mask; }
  void on_event(EventId /*event*/, const th_event_args& args) override {
    Event e(&args);
    cb_.callback->dispatch(e);
  }
  std::optional<nlohmann::json> save_state() override {
    const std::string text = cb_.callback->save_state();
    if (text.empty()) return std::nullopt;
    nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object())
      throw std::runtime_error("callback '" + cb_.name +
                               "': save_state() must return a JSON object, got: " + text.substr(0, 200));
    return j;
  }
  void load_state(const nlohmann::json& state) override { cb_.callback->load_state(state.dump()); }
  const Callback* user_callback() const noexcept override { return cb_.callback.get(); }

 private:
  NamedCallback cb_;
};

}  // namespace

std::unique_ptr<InternalCallback> adapt(NamedCallback cb) {
  return std::make_unique<EmbeddedCallback>(std::move(cb));
}

}  // namespace trainhook::detail
