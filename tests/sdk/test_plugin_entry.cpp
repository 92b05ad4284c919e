// trainhook/plugin_entry.h: TH_PLUGIN_ENTRY builds the library's description
// from the callbacks array and exports the entry, which refuses a host of
// another ABI major. Compiled here as C++ (the C plugins of the tests and
// examples/c_plugin build it as strict C11 and load through it).
#include <trainhook/plugin_entry.h>

#include <doctest/doctest.h>

#include <cstring>
#include <string>

namespace {

th_status entry_create(const th_host*, const char*, void** out, char*, size_t) {
  static int instance;
  *out = &instance;
  return TH_OK;
}
th_status entry_on_event(void*, const th_event_args*, char*, size_t) { return TH_OK; }
void entry_destroy(void*) {}

const th_callback_vtable entry_vtable = {TH_CALLBACK_VTABLE_STRUCT_SIZE, entry_on_event, nullptr, nullptr,
                                         entry_destroy};
const th_callback_info entry_first = {TH_CALLBACK_INFO_STRUCT_SIZE,
                                      "entry_first",
                                      "0.1.0",
                                      TH_KIND_CALLBACK,
                                      "first",
                                      TH_EVENT_MASK_ALL,
                                      entry_create,
                                      &entry_vtable};
const th_callback_info entry_second = {TH_CALLBACK_INFO_STRUCT_SIZE,
                                       "entry_second",
                                       "0.1.0",
                                       TH_KIND_INTEGRATION,
                                       "second",
                                       TH_EVENT_MASK_ALL,
                                       entry_create,
                                       &entry_vtable};
const th_callback_info* const entry_callbacks[] = {&entry_first, &entry_second};

}  // namespace

TH_PLUGIN_ENTRY("entry_pack", "2.3.4", entry_callbacks)

namespace {

th_host_info host_of(uint32_t major) {
  th_host_info h{};
  h.struct_size = TH_HOST_INFO_STRUCT_SIZE;
  h.abi_major = major;
  h.abi_minor = TRAINHOOK_ABI_VERSION_MINOR;
  h.host_version = "test";
  return h;
}

}  // namespace

TEST_CASE("TH_PLUGIN_ENTRY describes the library with every callback of the array and no commands") {
  const th_host_info host = host_of(TRAINHOOK_ABI_VERSION_MAJOR);
  const th_plugin_info* info = nullptr;
  char err[64] = "";
  REQUIRE(TRAINHOOK_ENTRY_NAME(&host, &info, err, sizeof err) == TH_OK);
  REQUIRE(info != nullptr);
  CHECK(info->struct_size == TH_PLUGIN_INFO_STRUCT_SIZE);
  CHECK(info->abi_major == TRAINHOOK_ABI_VERSION_MAJOR);
  CHECK(info->abi_minor == TRAINHOOK_ABI_MIN_MINOR);
  CHECK(std::string(info->name) == "entry_pack");
  CHECK(std::string(info->version) == "2.3.4");
  REQUIRE(info->callback_count == 2);
  CHECK(info->callbacks[0] == &entry_first);
  CHECK(info->callbacks[1] == &entry_second);
  CHECK(info->command_count == 0);
  CHECK(info->commands == nullptr);
  CHECK(std::string(err).empty());
}

TEST_CASE("TH_PLUGIN_ENTRY refuses a host of another ABI major, or none, naming the library") {
  const th_host_info other = host_of(TRAINHOOK_ABI_VERSION_MAJOR + 1);
  for (const th_host_info* host : {&other, static_cast<const th_host_info*>(nullptr)}) {
    const th_plugin_info* info = nullptr;
    char err[64] = "";
    CHECK(TRAINHOOK_ENTRY_NAME(host, &info, err, sizeof err) == TH_ABI_MISMATCH);
    CHECK(info == nullptr);
    CHECK(std::string(err) ==
          "entry_pack needs trainhook ABI " + std::to_string(TRAINHOOK_ABI_VERSION_MAJOR));
  }
}

TEST_CASE("TH_PLUGIN_ENTRY cuts its message to the host's buffer and writes none without one") {
  const th_host_info other = host_of(TRAINHOOK_ABI_VERSION_MAJOR + 1);
  const th_plugin_info* info = nullptr;
  char err[8];
  std::memset(err, 'x', sizeof err);
  CHECK(TRAINHOOK_ENTRY_NAME(&other, &info, err, 6) == TH_ABI_MISMATCH);
  CHECK(std::string(err) == "entry");
  CHECK(err[6] == 'x');
  CHECK(TRAINHOOK_ENTRY_NAME(&other, &info, nullptr, 0) == TH_ABI_MISMATCH);
  CHECK(TRAINHOOK_ENTRY_NAME(&other, &info, err, 0) == TH_ABI_MISMATCH);
  CHECK(err[0] == 'e');
}
