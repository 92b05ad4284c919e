// Plugin libraries that misbehave as soon as they are loaded (before any
// callback is asked for), one per compile definition; tests/plugin_host builds
// each into tests/plugins/misbehaving/ as libtrainhook_<name>.so, all with a
// valid entry symbol so the ELF pre-check lets them through to the loader:
//   CTOR_SEGV    a constructor raises SIGSEGV
//   CTOR_HANG    a constructor never returns
//   CTOR_EXIT    a constructor calls exit(0)
//   CTOR_ABORT   a constructor calls abort()
//   CTOR_THROW   a static object's constructor throws (std::terminate)
//   ENTRY_THROW  the entry function throws a C++ exception
//   ENTRY_SEGV   the entry function dereferences a null pointer
//   CREATE_THROW loads fine; its callback's create() lets a C++ exception
//                cross the C ABI (built into create_throw/, not misbehaving/)
// A run that never names them must not notice them; one that names them gets
// the file and the reason.
#include <trainhook/abi.h>

#include <signal.h>
#include <unistd.h>
#include <cstdlib>
#include <stdexcept>

#ifndef MISBEHAVING_NAME
#error "MISBEHAVING_NAME is the callback name, as in the library's file name"
#endif

namespace {

#if defined(CTOR_SEGV)
__attribute__((constructor)) void on_load() { ::raise(SIGSEGV); }
#elif defined(CTOR_HANG)
__attribute__((constructor)) void on_load() {
  for (;;) ::pause();
}
#elif defined(CTOR_EXIT)
__attribute__((constructor)) void on_load() { std::exit(0); }
#elif defined(CTOR_ABORT)
__attribute__((constructor)) void on_load() { std::abort(); }
#elif defined(CTOR_THROW)
struct ThrowsOnLoad {
  ThrowsOnLoad() { throw std::runtime_error("thrown by a static constructor"); }
};
ThrowsOnLoad g_throws;
#endif

int* volatile g_nowhere = nullptr;

th_status on_event(void*, const th_event_args*, char*, size_t) { return TH_OK; }
void destroy(void*) {}
int g_instance;
th_status create(const th_host*, const char*, void** out, char*, size_t) {
#if defined(CREATE_THROW)
  throw std::runtime_error("thrown by create");
#endif
  *out = &g_instance;
  return TH_OK;
}
const th_callback_vtable kVtable = {TH_CALLBACK_VTABLE_STRUCT_SIZE, on_event, nullptr, nullptr, destroy};
const th_callback_info kCallback = {
    TH_CALLBACK_INFO_STRUCT_SIZE, MISBEHAVING_NAME,  "0.1.0", TH_KIND_CALLBACK,
    "misbehaves when loaded",     TH_EVENT_MASK_ALL, create,  &kVtable};
const th_callback_info* const kCallbacks[] = {&kCallback};
const th_plugin_info kInfo = {TH_PLUGIN_INFO_STRUCT_SIZE,
                              TRAINHOOK_ABI_VERSION_MAJOR,
                              TRAINHOOK_ABI_VERSION_MINOR,
                              MISBEHAVING_NAME,
                              "0.1.0",
                              1,
                              kCallbacks,
                              0,
                              nullptr};

}  // namespace

extern "C" TRAINHOOK_EXPORT th_status TRAINHOOK_ENTRY_NAME(const th_host_info*, const th_plugin_info** out,
                                                           char*, size_t) {
#if defined(ENTRY_THROW)
  throw std::runtime_error("thrown by the entry function");
#elif defined(ENTRY_SEGV)
  *g_nowhere = 1;
#endif
  *out = &kInfo;
  return TH_OK;
}
