#include "callback_session.hpp"

#include <cxxabi.h>

#include <chrono>
#include <cstdlib>
#include <exception>
#include <typeinfo>

namespace trainhook::plugin_check {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kKeptErrors = 5;

#define TH_CHECK_EVENT_NAME_(name, value, method) #method,
const char* const kEventNames[] = {TH_EVENT_LIST(TH_CHECK_EVENT_NAME_)};
#undef TH_CHECK_EVENT_NAME_

}  // namespace

std::string describe_current_exception() {
  try {
    throw;
  } catch (const std::exception& e) {
    int status = 0;
    char* name = abi::__cxa_demangle(typeid(e).name(), nullptr, nullptr, &status);
    std::string out = std::string(status == 0 && name != nullptr ? name : typeid(e).name()) + ": " + e.what();
    std::free(name);
    return out;
  } catch (...) {
    return "an exception of an unknown type";
  }
}

std::string event_name(int32_t id) {
  if (id >= 0 && id < TH_EVENT_COUNT) return kEventNames[id];
  return "event " + std::to_string(id);
}

std::string events_of(uint64_t mask) {
  if ((mask & TH_EVENT_MASK_ALL) == TH_EVENT_MASK_ALL) return "all";
  std::string out;
  for (int32_t e = 0; e < TH_EVENT_COUNT; ++e)
    if ((mask & TH_EVENT_BIT(e)) != 0) out += (out.empty() ? "" : ",") + event_name(e);
  return out.empty() ? "none" : out;
}

CallbackSession::CallbackSession(const th_plugin_info& info, CheckHost& host, Progress& progress,
                                 const std::map<std::string, std::string>& configs, int32_t only_kind)
    : info_(info), host_(host), progress_(progress), configs_(configs), only_kind_(only_kind) {}

CallbackSession::~CallbackSession() {
  try {
    destroy();
  } catch (...) {
  }
}

void CallbackSession::enter(const th_callback_info& cb, const char* what, int64_t step) {
  if (watch_ != nullptr) watch_->begin(cb.name, what, step);
  progress_.enter(cb.name, what, step);
}

void CallbackSession::leave() {
  progress_.done();
  if (watch_ != nullptr) watch_->end();
}

void CallbackSession::record_error(const Instance& in, const char* what, int64_t step, th_status st,
                                   const char* err) {
  ++error_count_;
  if (errors_.size() < kKeptErrors)
    errors_.push_back(std::string(in.info->name) + "." + what + " at step " + std::to_string(step) +
                      ": status " + std::to_string(st) + ": " + (err[0] != '\0' ? err : "(no message)"));
}

void CallbackSession::crossed(const Instance& in, const char* what, int64_t step,
                              const std::string& exception) {
  const std::string where = std::string(in.info->name) + "." + what + " at step " + std::to_string(step);
  report("exceptions", Verdict::fail,
         where + " let a C++ exception out through the C ABI (" + exception +
             "); catch everything at the boundary and return a status (plugin.hpp's layer does)");
  throw StopRun{"stopped: " + where + " threw (see exceptions)", true};
}

void CallbackSession::create() {
  for (uint32_t i = 0; info_.callbacks != nullptr && i < info_.callback_count; ++i) {
    const th_callback_info* cb = info_.callbacks[i];
    if (cb == nullptr || cb->create == nullptr || cb->vtable == nullptr || cb->vtable->on_event == nullptr ||
        cb->vtable->destroy == nullptr)
      continue;  // entry_table says so
    if (only_kind_ >= 0 && cb->kind != only_kind_) continue;
    Instance in{cb};
    bool ignored = false;
    (void)host_.take_observe_only(ignored);  // what an earlier create left
    (void)host_.take_side_by_side();
    const auto cfg = configs_.find(cb->name);
    const std::string config = cfg != configs_.end() ? cfg->second : "{}";
    char err[2048] = {0};
    th_status st = TH_OK;
    enter(*cb, "create", 0);
    try {
      st = cb->create(host_.table(), config.c_str(), &in.self, err, sizeof err);
    } catch (...) {
      leave();
      crossed(in, "create", 0, describe_current_exception());
    }
    leave();
    if (st != TH_OK || in.self == nullptr)
      throw StopRun{std::string(cb->name) + ".create failed with status " + std::to_string(st) + ": " + err +
                    " (give its plugin_config with --plugin_config " + cb->name + ".KEY=VALUE)"};
    in.observe_only = host_.take_observe_only(in.declared);
    in.side_by_side = host_.take_side_by_side();
    instances_.push_back(in);
  }
}

std::vector<CallbackSession::ObserveOnly> CallbackSession::observe_only() const {
  std::vector<ObserveOnly> out;
  for (const auto& in : instances_)
    out.push_back({in.info->name, in.declared, in.observe_only, in.info->event_mask, in.side_by_side});
  return out;
}

void CallbackSession::check_observed(const Instance& in, const th_event_args& args, const th_control& before,
                                     uint64_t steers_before, const char* declared_as) {
  const th_control& after = *args.control;
  std::string what;
  auto flag = [&](int32_t was, int32_t now, const char* name) {
    if (was != now) what += std::string(what.empty() ? "" : ", ") + "set " + name;
  };
  flag(before.should_training_stop, after.should_training_stop, "should_training_stop");
  flag(before.should_epoch_stop, after.should_epoch_stop, "should_epoch_stop");
  flag(before.should_save, after.should_save, "should_save");
  flag(before.should_evaluate, after.should_evaluate, "should_evaluate");
  flag(before.should_log, after.should_log, "should_log");
  if (host_.steer_count() != steers_before)
    what += std::string(what.empty() ? "" : ", ") + "called " + host_.last_steer();
  if (what.empty()) return;
  ++steered_count_;
  if (steered_.size() < kKeptErrors)
    steered_.push_back(std::string(in.info->name) + "." + event_name(args.event) + " at step " +
                       std::to_string(args.state->global_step) + ", declared " + declared_as + ", " + what);
}

void CallbackSession::fire(th_event_args& args) {
  const std::string ev = event_name(args.event);
  for (auto& in : instances_) {
    if ((in.info->event_mask & TH_EVENT_BIT(args.event)) == 0) continue;
    char err[2048] = {0};
    // The handler resets nothing between callbacks: what one sets, the next sees.
    th_status st = TH_OK;
    // TRAIN_END and EXCEPTION are waited for even when declared.
    const bool observed = (in.observe_only & TH_EVENT_BIT(args.event) &
                           ~(TH_EVENT_BIT(TH_EVENT_TRAIN_END) | TH_EVENT_BIT(TH_EVENT_EXCEPTION))) != 0;
    const th_control control_before = *args.control;
    const uint64_t steers_before = host_.steer_count();
    enter(*in.info, ev.c_str(), args.state->global_step);
    const auto start = Clock::now();
    try {
      st = in.info->vtable->on_event(in.self, &args, err, sizeof err);
    } catch (...) {
      leave();
      crossed(in, ev.c_str(), args.state->global_step, describe_current_exception());
    }
    const int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
    leave();
    EventTimes& t = times_[std::string(in.info->name) + "." + ev];
    ++t.calls;
    t.total_ns += ns;
    if (ns > t.max_ns) {
      t.max_ns = ns;
      t.max_step = args.state->global_step;
    }
    if (st != TH_OK) record_error(in, ev.c_str(), args.state->global_step, st, err);
    if (observed)
      check_observed(in, args, control_before, steers_before, "observe-only");
    else if ((in.side_by_side & TH_EVENT_BIT(args.event)) != 0)
      check_observed(in, args, control_before, steers_before, "side by side");
  }
}

std::map<std::string, std::string> CallbackSession::save_states() {
  std::map<std::string, std::string> out;
  for (auto& in : instances_) {
    if (in.info->vtable->save_state == nullptr) continue;
    char err[2048] = {0};
    size_t needed = 0;
    char probe[1] = {0};
    enter(*in.info, "save_state", 0);
    try {
      th_status st = in.info->vtable->save_state(in.self, probe, 0, &needed, err, sizeof err);
      std::string buf;
      if (st == TH_BUFFER_TOO_SMALL) {
        buf.assign(needed, '\0');
        st = in.info->vtable->save_state(in.self, buf.data(), buf.size(), &needed, err, sizeof err);
        if (st == TH_OK) buf.resize(std::char_traits<char>::length(buf.c_str()));
      }
      leave();
      if (st != TH_OK)
        record_error(in, "save_state", 0, st, err);
      else if (!buf.empty())
        out[in.info->name] = buf;
    } catch (...) {
      leave();
      crossed(in, "save_state", 0, describe_current_exception());
    }
  }
  return out;
}

void CallbackSession::load_states(const std::map<std::string, std::string>& states) {
  for (auto& in : instances_) {
    const auto it = states.find(in.info->name);
    if (it == states.end() || in.info->vtable->load_state == nullptr) continue;
    char err[2048] = {0};
    enter(*in.info, "load_state", 0);
    th_status st = TH_OK;
    try {
      st = in.info->vtable->load_state(in.self, it->second.c_str(), err, sizeof err);
    } catch (...) {
      leave();
      crossed(in, "load_state", 0, describe_current_exception());
    }
    leave();
    if (st != TH_OK) record_error(in, "load_state", 0, st, err);
  }
}

void CallbackSession::destroy() {
  // In reverse order of creation, as the trainer tears its callbacks down.
  while (!instances_.empty()) {
    Instance in = instances_.back();
    instances_.pop_back();
    enter(*in.info, "destroy", 0);
    try {
      in.info->vtable->destroy(in.self);
    } catch (...) {
      leave();
      crossed(in, "destroy", 0, describe_current_exception());
    }
    leave();
  }
}

}  // namespace trainhook::plugin_check
