// The C exports of bridge_api.h: thin wrappers over the registry, the loader
// and model_access_rules, so a host in another language (python/trainhook)
// applies the trainer's rules instead of a copy of them.
#include <trainhook/plugin_host/host/bridge_api.h>

#include "../registry/plugin_library.hpp"
#include "../registry/plugin_loader.hpp"

#include <trainhook/callbacks/callback_handler.hpp>
#include <trainhook/common/errors.hpp>
#include <trainhook/plugin_host/host/model_access.hpp>
#include <trainhook/plugin_host/registry/plugin_registry.hpp>
#include <trainhook/plugin_host/selection/callback_resolver.hpp>
#include <trainhook/plugin_host/selection/section_check.hpp>

#include <boost/dll/runtime_symbol_info.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace {
namespace fs = std::filesystem;
using trainhook::PluginError;

th_status fail(th_status status, const std::string& msg, char* err, size_t err_size) {
  if (err != nullptr && err_size > 0) {
    const size_t n = std::min(msg.size(), err_size - 1);
    std::memcpy(err, msg.data(), n);
    err[n] = '\0';
  }
  return status;
}

th_status rule(const std::string& why, char* err, size_t err_size) {
  return why.empty() ? TH_OK : fail(TH_INVALID_ARGUMENT, why, err, err_size);
}

// The plugins installed with this library: <libdir>/trainhook/plugins, where
// trainhook_add_plugin installs them (TRAINHOOK_PLUGIN_INSTALL_DIR) and where the
// build tree puts them. The trainer's own default is relative to its program,
// which for a foreign host is the interpreter, not trainhook.
fs::path default_dir_of_this_library() {
  std::error_code ec;
  const fs::path lib_dir = boost::dll::this_line_location(ec).parent_path();
  return ec ? fs::path() : lib_dir / "trainhook" / "plugins";
}

std::vector<std::string> string_list(const nlohmann::json& request, const char* key) {
  std::vector<std::string> out;
  if (!request.contains(key)) return out;
  const auto& v = request.at(key);
  if (!v.is_array()) throw PluginError(std::string("request: '") + key + "' must be a list of strings");
  for (const auto& item : v) {
    if (!item.is_string()) throw PluginError(std::string("request: '") + key + "' must be a list of strings");
    out.push_back(item.get<std::string>());
  }
  return out;
}

// One kind and event mask per name: the descriptor of the library that won it.
const trainhook::CallbackDescriptor* descriptor(const trainhook::PluginRegistry& registry,
                                                const std::string& name) {
  for (const auto& rec : registry.libraries())
    for (const auto& cb : rec.callbacks)
      if (rec.loaded && cb.name == name && cb.shadowed_by.empty()) return &cb;
  return nullptr;
}

// Libraries loaded by trainhook_bridge_load_callback, by file; never unloaded
// (a foreign host may hold function pointers into them until it exits).
std::mutex g_loaded_mu;
std::map<std::string, std::shared_ptr<const trainhook::detail::PluginLibrary>> g_loaded;

}  // namespace

extern "C" {

uint32_t trainhook_bridge_abi_version(void) {
  return (uint32_t{TRAINHOOK_ABI_VERSION_MAJOR} << 16) | uint32_t{TRAINHOOK_ABI_VERSION_MINOR};
}

uint32_t trainhook_bridge_struct_sizes(uint32_t* out, uint32_t capacity) {
  const uint32_t sizes[] = {TH_STATE_STRUCT_SIZE,           TH_CONTROL_STRUCT_SIZE,
                            TH_VALUES_STRUCT_SIZE,          TH_STEP_VALUES_STRUCT_SIZE,
                            TH_FAILURE_STRUCT_SIZE,         TH_EVENT_ARGS_STRUCT_SIZE,
                            TH_TENSOR_LIST_STRUCT_SIZE,     TH_HOST_STRUCT_SIZE,
                            TH_CALLBACK_VTABLE_STRUCT_SIZE, TH_CALLBACK_INFO_STRUCT_SIZE};
  const uint32_t n = sizeof sizes / sizeof sizes[0];
  for (uint32_t i = 0; out != nullptr && i < std::min(n, capacity); ++i) out[i] = sizes[i];
  return n;
}

const char* trainhook_bridge_event_name(int32_t event) {
  if (event < 0 || event >= TH_EVENT_COUNT) return nullptr;
  return trainhook::event_name(event);
}

th_status trainhook_bridge_resolve(const char* request_json, char* out, size_t out_size, size_t* needed,
                                   char* err, size_t err_size) {
  try {
    const nlohmann::json request = nlohmann::json::parse(request_json != nullptr ? request_json : "{}");
    if (!request.is_object()) throw PluginError("request: expected a JSON object");
    trainhook::PluginSearchOptions options;
    for (const auto& d : string_list(request, "plugin_dirs")) options.plugin_dirs.emplace_back(d);
    options.default_dir = default_dir_of_this_library();
    options.allow_unsafe_plugin_paths = request.value("allow_unsafe_plugin_paths", false);
    const trainhook::PluginRegistry registry(options);
    // The trainer's resolver, so Python refuses and accepts what the CLI does;
    // HF's Trainer adds its own progress callback, so ours is not listed.
    nlohmann::json warnings = nlohmann::json::array();
    const trainhook::CallbackSelection selection =
        trainhook::resolve_callbacks(registry,
                                     trainhook::CallbackRequest{string_list(request, "report_to"),
                                                                string_list(request, "callbacks"), false},
                                     [&warnings](const std::string& w) { warnings.push_back(w); });
    std::vector<std::string> names = selection.integrations;
    names.insert(names.end(), selection.callbacks.begin(), selection.callbacks.end());
    // The plugin_config sections, by the trainer's rule: an unknown one is an
    // error, one of an installed plugin this run does not enable a warning.
    nlohmann::json sections = nlohmann::json::object();
    for (const auto& section : string_list(request, "plugin_config_sections"))
      sections[section] = nlohmann::json::object();
    for (const auto& w : trainhook::plugin_config_section_warnings(sections, registry, names))
      warnings.push_back(w);
    nlohmann::json answer = {{"callbacks", nlohmann::json::array()},
                             {"searched", registry.searched_dirs()},
                             {"warnings", warnings}};
    for (const auto& name : names) {
      const trainhook::CallbackDescriptor* d = descriptor(registry, name);
      if (d == nullptr) throw PluginError("callback '" + name + "' has no library that provides it");
      answer["callbacks"].push_back({{"name", name},
                                     {"kind", d->kind},
                                     {"file", registry.library_of(name).string()},
                                     {"event_mask", d->event_mask}});
    }
    const std::string text = answer.dump();
    if (needed != nullptr) *needed = text.size() + 1;
    if (out == nullptr || out_size < text.size() + 1)
      return fail(TH_BUFFER_TOO_SMALL, "the answer needs " + std::to_string(text.size() + 1) + " bytes", err,
                  err_size);
    std::memcpy(out, text.c_str(), text.size() + 1);
    return TH_OK;
  } catch (const std::exception& e) {
    return fail(TH_INVALID_ARGUMENT, e.what(), err, err_size);
  } catch (...) {
    return fail(TH_ERROR, "unknown error while resolving plugins", err, err_size);
  }
}

th_status trainhook_bridge_load_callback(const char* file, const char* name, const th_callback_info** out,
                                         char* err, size_t err_size) {
  try {
    if (file == nullptr || name == nullptr || out == nullptr)
      return fail(TH_INVALID_ARGUMENT, "trainhook_bridge_load_callback: NULL argument", err, err_size);
    std::lock_guard<std::mutex> lock(g_loaded_mu);
    auto& lib = g_loaded[file];
    if (!lib) {
      trainhook::LibraryRecord rec;
      rec.path = file;
      lib = trainhook::detail::load_plugin_library(file, rec);
      if (!lib) {
        g_loaded.erase(file);
        return fail(TH_INVALID_ARGUMENT,
                    "refused plugin file " + std::string(file) + ": " + rec.refused_reason, err, err_size);
      }
    }
    const th_callback_info* info = trainhook::detail::find_callback(*lib, name);
    if (info == nullptr)
      return fail(TH_INVALID_ARGUMENT,
                  "plugin file " + std::string(file) + " does not export callback '" + name + "'", err,
                  err_size);
    *out = info;
    return TH_OK;
  } catch (const std::exception& e) {
    return fail(TH_ERROR, e.what(), err, err_size);
  } catch (...) {
    return fail(TH_ERROR, "unknown error while loading a plugin", err, err_size);
  }
}

th_status trainhook_bridge_check_tensors(int32_t event, int32_t kind, int32_t access, char* err,
                                         size_t err_size) {
  return rule(trainhook::model_access_rules::check_tensors(event, kind, access), err, err_size);
}

th_status trainhook_bridge_check_metric(const char* name, double value, char* err, size_t err_size) {
  if (name == nullptr) return fail(TH_INVALID_ARGUMENT, "add_metric: the metric name is NULL", err, err_size);
  return rule(trainhook::model_access_rules::check_metric(name, value), err, err_size);
}

th_status trainhook_bridge_check_factor(double factor, char* err, size_t err_size) {
  return rule(trainhook::model_access_rules::check_factor(factor), err, err_size);
}

th_status trainhook_bridge_check_skip(int32_t event, char* err, size_t err_size) {
  return rule(trainhook::model_access_rules::check_skip(event), err, err_size);
}

}  // extern "C"
