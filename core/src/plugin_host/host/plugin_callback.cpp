#include "plugin_callback.hpp"

#include "../containment/crash_handler.hpp"
#include "../containment/plugin_address_table.hpp"

#include <trainhook/callbacks/callback_handler.hpp>
#include <trainhook/common/errors.hpp>
#include <trainhook/plugin_host/containment/process_containment.hpp>

#include <spdlog/spdlog.h>

#include <cstring>
#include <optional>
#include <stdexcept>
#include <vector>

namespace trainhook::detail {
namespace {

constexpr size_t kErrSize = 1024;

const char* status_name(th_status s) {
  switch (s) {
    case TH_OK:
      return "TH_OK";
    case TH_ERROR:
      return "TH_ERROR";
    case TH_ABI_MISMATCH:
      return "TH_ABI_MISMATCH";
    case TH_INVALID_ARGUMENT:
      return "TH_INVALID_ARGUMENT";
    case TH_BUFFER_TOO_SMALL:
      return "TH_BUFFER_TOO_SMALL";
    default:
      return "unknown status";
  }
}

// Copies the registry's th_callback_info (already a host-owned copy, see
// PluginLibrary), reading only the fields its struct has.
th_callback_info copy_info(const th_callback_info& in) { return abi_copy(in, TH_CALLBACK_INFO_STRUCT_SIZE); }

// The events of every step (and of every evaluation batch): after these the
// host only notes the call and checks descriptors 0-2 and the umask at the
// step's end (process_containment.hpp); after the others, at once.
constexpr uint64_t kPerStepEvents =
    TH_EVENT_BIT(TH_EVENT_STEP_BEGIN) | TH_EVENT_BIT(TH_EVENT_SUBSTEP_END) |
    TH_EVENT_BIT(TH_EVENT_PRE_OPTIMIZER_STEP) | TH_EVENT_BIT(TH_EVENT_OPTIMIZER_STEP) |
    TH_EVENT_BIT(TH_EVENT_STEP_END) | TH_EVENT_BIT(TH_EVENT_PREDICTION_STEP);

// What a create or on_train_begin call changed of the process and the host
// put back (process_containment.hpp), one warning each.
void report_changes(const std::vector<std::string>& changes, const PluginCallNames& names, const char* what) {
  for (const auto& change : changes)
    spdlog::warn("callback '{}' from {} in {}: {}", names.callback, names.file, what, change);
}

// check_process_state_after when the call returns or throws (save_state
// and load_state have several ways out).
class StateCheckAfter {
 public:
  StateCheckAfter(const PluginCallNames& names, const char* what) noexcept : names_(names), what_(what) {}
  ~StateCheckAfter() {
    try {
      check_process_state_after(names_.file, names_.callback, what_);
    } catch (...) {
      // a warning that could not be written; what changed is put back all the same
    }
  }
  StateCheckAfter(const StateCheckAfter&) = delete;
  StateCheckAfter& operator=(const StateCheckAfter&) = delete;

 private:
  const PluginCallNames& names_;
  const char* what_;
};

}  // namespace

PluginCallback::PluginCallback(std::shared_ptr<const PluginLibrary> library, const th_callback_info& info,
                               HostServices& host, const std::string& config_json)
    : library_(std::move(library)),
      info_(copy_info(info)),
      vtable_(info_.vtable),
      name_(info_.name != nullptr ? info_.name : ""),
      scope_names_(plugin_call_names(library_->path.string(), name_)),
      host_(host, name_) {
  has_save_state_ = TH_HAS_FIELD(vtable_, th_callback_vtable, save_state) && vtable_->save_state != nullptr;
  has_load_state_ = TH_HAS_FIELD(vtable_, th_callback_vtable, load_state) && vtable_->load_state != nullptr;

  char err[kErrSize];
  err[0] = '\0';
  void* self = nullptr;
  install_crash_handler();  // a crash in create() is named like one in an event
  watch_forks_in_plugin_calls();
  remember_process_state();
  ProcessStateCheck process;  // after the crash handler: its dispositions are the host's
  // A library create() loads (a vendor SDK) is the plugin's in a crash line.
  const int objects_before = loaded_object_count();
  th_status st = TH_ERROR;
  {
    PluginCallScope scope(scope_names_.file, scope_names_.callback, "create");  // named if it crashes
    PluginCallGuard call(scope_names_.file, scope_names_.callback, "create");   // a forked child ends here
    try {
      st = info_.create(host_.table(), config_json.empty() ? "{}" : config_json.c_str(), &self, err,
                        sizeof err);
    } catch (const std::exception& e) {  // a create() not built on the SDK lets it cross the C ABI
      throw PluginError("cannot create callback '" + name_ + "' from " + library_->path.string() +
                        ": create() threw an exception through the C ABI: " + e.what());
    } catch (...) {
      throw PluginError("cannot create callback '" + name_ + "' from " + library_->path.string() +
                        ": create() threw an exception through the C ABI");
    }
  }
  err[kErrSize - 1] = '\0';
  enter_libraries_loaded_since(objects_before, reinterpret_cast<const void*>(info_.create));
  report_changes(process.restore(), scope_names_, "create");
  if (st != TH_OK || self == nullptr) {
    if (st == TH_OK && self != nullptr) info_.vtable->destroy(self);
    throw PluginError(
        "cannot create callback '" + name_ + "' from " + library_->path.string() + ": " +
        (st == TH_OK ? std::string("create() returned TH_OK but no instance") : describe_failure(st, err)));
  }
  self_ = self;
  // TRAIN_END and EXCEPTION are always waited for, so never declared (as isolated).
  declared_ = (observe_only() | side_by_side()) &
              ~(TH_EVENT_BIT(TH_EVENT_TRAIN_END) | TH_EVENT_BIT(TH_EVENT_EXCEPTION));
}

PluginCallback::~PluginCallback() {
  {
    PluginCallScope scope(scope_names_.file, scope_names_.callback, "destroy");
    if (self_ != nullptr) vtable_->destroy(self_);
  }
  try {
    check_process_state_after(scope_names_.file, scope_names_.callback, "destroy");
  } catch (...) {
    // a warning that could not be written; what changed is put back all the same
  }
  // table_ and library_ are released after this body: the instance is gone first.
}

std::string PluginCallback::describe_failure(th_status status, const char* err) const {
  std::string msg = (err != nullptr && err[0] != '\0') ? err : "no message";
  return msg + " [" + status_name(status) + "]";
}

void PluginCallback::on_event(EventId event, const th_event_args& args) {
  if (event >= 0 && event < 64 && (declared_ & TH_EVENT_BIT(event)) != 0) return on_declared_event(event, args);
  if (event == TH_EVENT_TRAIN_BEGIN) return on_train_begin(args);
  // The path of every other event: two scope objects, the call and the
  // descriptor/umask check or, per step, its note (bench/dispatch measures
  // it; the state check below is ~1.3 KB).
  char err[kErrSize];
  if (const th_status st = call_event(event, args, err); st != TH_OK) throw_failure(st, err);
}

th_status PluginCallback::call_event(EventId event, const th_event_args& args, char* err) {
  const char* what = event_name(event);
  PluginCallScope scope(scope_names_.file, scope_names_.callback, what);
  err[0] = '\0';
  th_status st = TH_ERROR;
  {
    PluginCallGuard call(scope_names_.file, scope_names_.callback, what);
    st = vtable_->on_event(self_, &args, err, kErrSize);
  }
  if (kPerStepEvents & TH_EVENT_BIT(event))
    note_unchecked_plugin_call(scope_names_.file, scope_names_.callback, what);
  else
    check_process_state_after(scope_names_.file, scope_names_.callback, what);
  return st;
}

void PluginCallback::on_declared_event(EventId event, const th_event_args& args) {
  const char* kind = (observe_only() & TH_EVENT_BIT(event)) != 0 ? "observe-only (set_observe_only / observed_events)"
                                                                 : "side by side (set_side_by_side / side_by_side_events)";
  const th_control before = *args.control;
  char err[kErrSize];
  host_.enter_declared(event, kind);
  th_status st = TH_ERROR;
  try {
    st = event == TH_EVENT_TRAIN_BEGIN ? (on_train_begin(args), TH_OK) : call_event(event, args, err);
  } catch (...) {
    host_.leave_declared();
    host_.take_breach();
    throw;
  }
  host_.leave_declared();
  if (std::string breach = host_.take_breach(); !breach.empty()) throw std::runtime_error(breach);
  if (st != TH_OK) throw_failure(st, err);
  if (const std::string changed = changed_flags(before, *args.control); !changed.empty())
    throw std::runtime_error("it changed TrainerControl (" + changed + ") in " + event_name(event) +
                             ", which it declared " + kind +
                             ": a declared event may not steer the run (refused in process as in its own "
                             "process); declare only the events in which it does not steer");
}

// on_train_begin is where a plugin sets up for the run (threads, signal
// handlers, its files): what it changes of the process is checked as after create.
void PluginCallback::on_train_begin(const th_event_args& args) {
  const char* what = event_name(TH_EVENT_TRAIN_BEGIN);
  PluginCallScope scope(scope_names_.file, scope_names_.callback, what);
  char err[kErrSize];
  err[0] = '\0';
  ProcessStateCheck process;
  const int objects_before = loaded_object_count();
  th_status st = TH_ERROR;
  {
    PluginCallGuard call(scope_names_.file, scope_names_.callback, what);
    st = vtable_->on_event(self_, &args, err, sizeof err);
  }
  enter_libraries_loaded_since(objects_before, reinterpret_cast<const void*>(info_.create));
  report_changes(process.restore(), scope_names_, what);
  if (st != TH_OK) throw_failure(st, err);
}

void PluginCallback::throw_failure(th_status status, char* err) const {
  err[kErrSize - 1] = '\0';
  throw std::runtime_error(describe_failure(status, err));
}

std::optional<nlohmann::json> PluginCallback::save_state() {
  if (!has_save_state_) return std::nullopt;
  PluginCallScope scope(scope_names_.file, scope_names_.callback, "save_state");
  PluginCallGuard call(scope_names_.file, scope_names_.callback, "save_state");
  const StateCheckAfter check(scope_names_, "save_state");
  std::vector<char> buf(4096);
  char err[kErrSize];
  // The two-call protocol of abi.h; a few retries cover state that grows in between.
  for (int attempt = 0; attempt < 4; ++attempt) {
    err[0] = '\0';
    size_t needed = 0;
    const th_status st = vtable_->save_state(self_, buf.data(), buf.size(), &needed, err, sizeof err);
    err[kErrSize - 1] = '\0';
    if (st == TH_BUFFER_TOO_SMALL) {
      if (needed <= buf.size())
        throw std::runtime_error("save_state returned TH_BUFFER_TOO_SMALL but asked for " +
                                 std::to_string(needed) + " bytes, not more than the " +
                                 std::to_string(buf.size()) + " given");
      buf.resize(needed);
      continue;
    }
    if (st != TH_OK) throw std::runtime_error(describe_failure(st, err));
    buf.back() = '\0';
    const std::string text(buf.data());
    if (text.empty()) return std::nullopt;
    try {
      return nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range (a number too large)
      throw std::runtime_error(std::string("save_state wrote text that is not JSON: ") + e.what());
    }
  }
  throw std::runtime_error("save_state kept asking for a larger buffer");
}

void PluginCallback::load_state(const nlohmann::json& state) {
  if (!has_load_state_) return;
  PluginCallScope scope(scope_names_.file, scope_names_.callback, "load_state");
  PluginCallGuard call(scope_names_.file, scope_names_.callback, "load_state");
  const StateCheckAfter check(scope_names_, "load_state");
  const std::string text = state.dump();
  char err[kErrSize];
  err[0] = '\0';
  const th_status st = vtable_->load_state(self_, text.c_str(), err, sizeof err);
  err[kErrSize - 1] = '\0';
  if (st != TH_OK) throw std::runtime_error(describe_failure(st, err));
}

}  // namespace trainhook::detail
