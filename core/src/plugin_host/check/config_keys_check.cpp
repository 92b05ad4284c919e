// config_keys: the plugin_config keys each callback declares, learnt the way a
// user meets them: create() with a key nobody declares. The SDK's option table
// (options.hpp) refuses it with "unknown key '...'; keys: a, b" (or "it takes
// no keys"), and the C example does the same, so the keys are read from that
// message. A callback that accepts the unknown key hides its users' typos.
// readme_table (with --readme): the README's "| key | ..." table names exactly
// the keys declared.
#include "callback_session.hpp"
#include "checks.hpp"

#include <algorithm>
#include <exception>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace trainhook::plugin_check {
namespace {

constexpr const char* kProbeKey = "trainhook_plugin_check_unknown_key";

std::string trim(std::string s) {
  const auto not_space = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return s;
}

// The keys listed after "keys: " up to the end, ';' or ')'; nullopt-like
// `found` false when the message lists none.
std::vector<std::string> listed_keys(const std::string& message, bool& found) {
  found = false;
  if (message.find("takes no keys") != std::string::npos) {
    found = true;
    return {};
  }
  const size_t at = message.find("keys: ");
  if (at == std::string::npos) return {};
  size_t end = message.find_first_of(";)\n", at);
  const std::string list =
      message.substr(at + 6, end == std::string::npos ? std::string::npos : end - at - 6);
  std::vector<std::string> keys;
  std::stringstream in(list);
  std::string k;
  while (std::getline(in, k, ',')) {
    k = trim(k);
    if (!k.empty()) keys.push_back(k);
  }
  found = !keys.empty();
  return keys;
}

// The first cells of the README's tables whose header starts "| key |".
std::set<std::string> readme_keys(const std::string& path, bool& found) {
  std::ifstream in(path);
  std::set<std::string> keys;
  std::string line;
  bool in_table = false;
  found = false;
  while (std::getline(in, line)) {
    if (line.rfind("| key |", 0) == 0) {
      in_table = found = true;
      std::getline(in, line);  // |---|
      continue;
    }
    if (in_table && line.rfind("|", 0) != 0) in_table = false;
    if (!in_table) continue;
    std::string cell = trim(line.substr(1, line.find('|', 1) - 1));
    cell.erase(std::remove(cell.begin(), cell.end(), '`'), cell.end());
    if (!cell.empty()) keys.insert(cell);
  }
  return keys;
}

std::string joined(const std::set<std::string>& s) {
  std::string out;
  for (const auto& k : s) out += (out.empty() ? "" : ", ") + k;
  return out;
}

}  // namespace

void check_config_keys(CheckContext& ctx) {
  CheckHost host(ctx.output_dir, "plugin-check");
  std::string detail;
  bool warn = false, every_listed = true;
  std::set<std::string> declared;
  for (uint32_t i = 0; ctx.info->callbacks != nullptr && i < ctx.info->callback_count; ++i) {
    const th_callback_info* cb = ctx.info->callbacks[i];
    if (cb == nullptr || cb->create == nullptr || cb->vtable == nullptr || cb->vtable->destroy == nullptr)
      continue;
    const std::string probe = std::string("{\"") + kProbeKey + "\": 1}";
    char err[2048] = {0};
    void* self = nullptr;
    th_status st = TH_OK;
    ctx.progress.enter(cb->name, "create", 0);
    try {
      st = cb->create(host.table(), probe.c_str(), &self, err, sizeof err);
    } catch (...) {
      ctx.progress.done();
      report("exceptions", Verdict::fail,
             std::string(cb->name) + ".create let a C++ exception out through the C ABI (" +
                 describe_current_exception() + ")");
      report("config_keys", Verdict::skip, std::string(cb->name) + ".create threw");
      return;
    }
    ctx.progress.done();
    if (st == TH_OK) {
      if (self != nullptr) cb->vtable->destroy(self);
      warn = true;
      every_listed = false;
      detail += std::string(detail.empty() ? "" : "\n") + cb->name + ": accepts the unknown key '" +
                kProbeKey +
                "' without a word: a typo in its plugin_config goes unnoticed (options.hpp refuses it)";
      continue;
    }
    bool found = false;
    const std::vector<std::string> keys = listed_keys(err, found);
    declared.insert(keys.begin(), keys.end());
    std::string list;
    for (const auto& k : keys) list += (list.empty() ? "" : ", ") + k;
    if (!found) every_listed = false;
    detail += std::string(detail.empty() ? "" : "\n") + cb->name + ": " +
              (found ? (keys.empty() ? "takes no keys" : "keys: " + list)
                     : "refuses unknown keys; its message lists no keys: " + std::string(err));
  }
  report("config_keys", warn ? Verdict::warn : Verdict::pass, detail.empty() ? "no callbacks" : detail);

  if (ctx.readme.empty()) return;
  bool found = false;
  const std::set<std::string> documented = readme_keys(ctx.readme, found);
  if (!found) {
    report("readme_table", Verdict::fail, ctx.readme + " has no table whose header starts \"| key |\"");
    return;
  }
  if (!every_listed) {
    report("readme_table", Verdict::warn,
           "the declared keys are not known (a callback's message does not list them); the README names: " +
               joined(documented));
    return;
  }
  std::set<std::string> missing, extra;
  for (const auto& k : declared)
    if (documented.count(k) == 0) missing.insert(k);
  for (const auto& k : documented)
    if (declared.count(k) == 0) extra.insert(k);
  if (missing.empty() && extra.empty()) {
    report("readme_table", Verdict::pass, ctx.readme + " documents every declared key: " + joined(declared));
    return;
  }
  std::string why = ctx.readme + " differs from the declaration:";
  if (!missing.empty()) why += " not documented: " + joined(missing) + ";";
  if (!extra.empty()) why += " documented but not declared: " + joined(extra) + ";";
  why.pop_back();
  report("readme_table", Verdict::fail, why);
}

}  // namespace trainhook::plugin_check
