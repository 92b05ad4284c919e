#include "library_record_json.hpp"

#include <stdexcept>

namespace trainhook::detail {
namespace {

template <class T>
T field(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end()) throw std::runtime_error(std::string("key '") + key + "' is missing");
  try {
    return it->get<T>();
  } catch (const nlohmann::json::exception&) {
    throw std::runtime_error(std::string("key '") + key + "' has the wrong type");
  }
}

}  // namespace

nlohmann::json record_to_json(const LibraryRecord& rec) {
  nlohmann::json callbacks = nlohmann::json::array();
  for (const auto& cb : rec.callbacks)
    callbacks.push_back({{"name", cb.name},
                         {"version", cb.version},
                         {"kind", cb.kind},
                         {"description", cb.description},
                         {"event_mask", cb.event_mask}});
  nlohmann::json commands = nlohmann::json::array();
  for (const auto& c : rec.commands) commands.push_back({{"name", c.name}, {"description", c.description}});
  return {{"loaded", rec.loaded},           {"refused_reason", rec.refused_reason},
          {"plugin_name", rec.plugin_name}, {"plugin_version", rec.plugin_version},
          {"abi_major", rec.abi_major},     {"abi_minor", rec.abi_minor},
          {"callbacks", callbacks},         {"commands", commands}};
}

void record_from_json(const nlohmann::json& j, LibraryRecord& rec) {
  if (!j.is_object()) throw std::runtime_error("a library record is not a JSON object");
  rec.loaded = field<bool>(j, "loaded");
  rec.refused_reason = field<std::string>(j, "refused_reason");
  rec.plugin_name = field<std::string>(j, "plugin_name");
  rec.plugin_version = field<std::string>(j, "plugin_version");
  rec.abi_major = field<uint32_t>(j, "abi_major");
  rec.abi_minor = field<uint32_t>(j, "abi_minor");
  rec.callbacks.clear();
  for (const auto& c : field<nlohmann::json>(j, "callbacks")) {
    CallbackDescriptor d;
    d.name = field<std::string>(c, "name");
    d.version = field<std::string>(c, "version");
    d.kind = field<int32_t>(c, "kind");
    d.description = field<std::string>(c, "description");
    d.event_mask = field<uint64_t>(c, "event_mask");
    rec.callbacks.push_back(std::move(d));
  }
  rec.commands.clear();
  for (const auto& c : field<nlohmann::json>(j, "commands")) {
    CommandDescriptor d;
    d.name = field<std::string>(c, "name");
    d.description = field<std::string>(c, "description");
    rec.commands.push_back(std::move(d));
  }
  if (!rec.loaded && rec.refused_reason.empty()) throw std::runtime_error("a refused library has no reason");
}

}  // namespace trainhook::detail
