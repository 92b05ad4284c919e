// entry_table: what the library's entry point answered, shown as a pack
// author reads it, and each rule of abi.h it breaks (FAIL) or bends (WARN).
#include "callback_session.hpp"
#include "checks.hpp"

#include <set>
#include <string>
#include <vector>

namespace trainhook::plugin_check {
namespace {

bool plain_name(const char* s, const char* extra) {
  if (s == nullptr || *s == '\0') return false;
  for (const char* p = s; *p != '\0'; ++p) {
    const char c = *p;
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
          std::string(extra).find(c) != std::string::npos))
      return false;
  }
  return true;
}

std::string text(const char* s) { return s != nullptr ? s : "(null)"; }

}  // namespace

void check_entry_table(CheckContext& ctx) {
  const th_plugin_info& info = *ctx.info;
  std::vector<std::string> fails, warns;
  std::string shown = text(info.name) + " " + text(info.version) + ", ABI " + std::to_string(info.abi_major) +
                      "." + std::to_string(info.abi_minor) + " (needs a trainer of ABI 1." +
                      std::to_string(info.abi_minor) + " or newer; this one speaks 1." +
                      std::to_string(TRAINHOOK_ABI_VERSION_MINOR) + ")";
  if (info.struct_size < TH_STRUCT_SIZE(th_plugin_info, callbacks))
    fails.push_back("th_plugin_info.struct_size " + std::to_string(info.struct_size) +
                    " is smaller than a 1.0 th_plugin_info");
  if (info.abi_major != TRAINHOOK_ABI_VERSION_MAJOR)
    fails.push_back("ABI major " + std::to_string(info.abi_major) + ": this trainer speaks major " +
                    std::to_string(TRAINHOOK_ABI_VERSION_MAJOR));
  if (info.name == nullptr || *info.name == '\0') fails.push_back("the library has no name");
  if (info.version == nullptr || *info.version == '\0') fails.push_back("the library has no version");
  const uint32_t commands =
      TH_HAS_FIELD(&info, th_plugin_info, commands) && info.commands != nullptr ? info.command_count : 0;
  if (info.callback_count == 0 && commands == 0) fails.push_back("it exports no callback and no command");
  if (info.callback_count > 0 && info.callbacks == nullptr) fails.push_back("callbacks is NULL");
  std::set<std::string> names;
  for (uint32_t i = 0; info.callbacks != nullptr && i < info.callback_count; ++i) {
    const th_callback_info* cb = info.callbacks[i];
    if (cb == nullptr) {
      fails.push_back("callbacks[" + std::to_string(i) + "] is NULL");
      continue;
    }
    const std::string name = text(cb->name);
    shown += "\n  " + std::string(cb->kind == TH_KIND_INTEGRATION ? "integration " : "callback ") + name +
             " " + text(cb->version) + ": " + text(cb->description) +
             "\n    events: " + events_of(cb->event_mask) +
             (cb->vtable != nullptr && cb->vtable->save_state != nullptr ? "; stateful" : "");
    if (cb->struct_size < TH_CALLBACK_INFO_STRUCT_SIZE)
      fails.push_back(name + ": th_callback_info.struct_size " + std::to_string(cb->struct_size) +
                      " is too small");
    if (!plain_name(cb->name, "_")) fails.push_back(name + ": a callback name is [a-z0-9_]+");
    if (!names.insert(name).second) fails.push_back(name + ": exported twice");
    if (cb->version == nullptr || *cb->version == '\0') fails.push_back(name + ": no version");
    if (cb->kind != TH_KIND_CALLBACK && cb->kind != TH_KIND_INTEGRATION)
      fails.push_back(name + ": unknown kind " + std::to_string(cb->kind));
    if (cb->description == nullptr || *cb->description == '\0')
      warns.push_back(name + ": no description (`trainhook plugins` shows it)");
    if (cb->event_mask == 0) warns.push_back(name + ": its event mask asks for no event");
    if ((cb->event_mask & ~static_cast<uint64_t>(TH_EVENT_MASK_ALL)) != 0)
      warns.push_back(name + ": its event mask has bits of events this ABI does not know");
    if (cb->create == nullptr) fails.push_back(name + ": create is NULL");
    if (cb->vtable == nullptr) {
      fails.push_back(name + ": vtable is NULL");
      continue;
    }
    if (cb->vtable->struct_size < TH_CALLBACK_VTABLE_STRUCT_SIZE)
      fails.push_back(name + ": th_callback_vtable.struct_size is too small");
    if (cb->vtable->on_event == nullptr) fails.push_back(name + ": on_event is NULL");
    if (cb->vtable->destroy == nullptr) fails.push_back(name + ": destroy is NULL");
    if (cb->vtable->save_state != nullptr && cb->vtable->load_state == nullptr)
      warns.push_back(name + ": save_state without load_state: what it saves is never given back");
  }
  for (uint32_t i = 0; i < commands; ++i) {
    const th_command_info* c = info.commands[i];
    if (c == nullptr) {
      fails.push_back("commands[" + std::to_string(i) + "] is NULL");
      continue;
    }
    shown += "\n  command " + text(c->name) + ": " + text(c->description);
    if (!plain_name(c->name, "-")) fails.push_back(text(c->name) + ": a command name is [a-z0-9-]+");
    if (c->run == nullptr) fails.push_back(text(c->name) + ": run is NULL");
  }
  std::string detail = shown;
  for (const auto& f : fails) detail += "\n  FAIL: " + f;
  for (const auto& w : warns) detail += "\n  WARN: " + w;
  report("entry_table",
         !fails.empty()   ? Verdict::fail
         : !warns.empty() ? Verdict::warn
                          : Verdict::pass,
         detail);
}

}  // namespace trainhook::plugin_check
