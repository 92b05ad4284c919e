// PluginRegistry with the plugins built by tests/sdk: the plain-C plugin, the
// two-callback pack, and every kind of refused file, each checked by message.
#include <trainhook/callbacks/callback_handler.hpp>
#include <trainhook/plugin_host/registry/plugin_file_name.hpp>
#include <trainhook/plugin_host/registry/plugin_registry.hpp>

#include <doctest/doctest.h>
#include <recording_host.hpp>
#include <temp_dir.hpp>

#include <elf.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <fstream>
#include <mutex>

using namespace trainhook;
namespace fs = std::filesystem;
using trainhook::testkit::RecordingHost;
using trainhook::testkit::TempDir;

namespace {

const fs::path kRoot = TRAINHOOK_TEST_PLUGIN_ROOT;
// The host's ABI minor, and the one past it that the newer_minor and
// large_layout fakes claim (they are built as this SDK's minor + 1).
const std::string kMinor = std::to_string(TRAINHOOK_ABI_VERSION_MINOR);
const std::string kNewerMinor = std::to_string(TRAINHOOK_ABI_VERSION_MINOR + 1);
// The C plugin and the pack: built from this SDK ("good"), or the same
// sources built from the ABI 1.0 headers kept in tests/sdk/abi_1_0 ("abi10"):
// this file runs against both, unchanged (old plugin binaries keep working).
#ifndef TRAINHOOK_TEST_GOOD_FOLDER
#define TRAINHOOK_TEST_GOOD_FOLDER "good"
#define TRAINHOOK_TEST_GOOD_MINOR TRAINHOOK_ABI_VERSION_MINOR
#endif
const fs::path kGood = kRoot / TRAINHOOK_TEST_GOOD_FOLDER;

// Records everything plugins ask of the host.
PluginSearchOptions only(const std::vector<fs::path>& dirs) {
  PluginSearchOptions o;
  o.plugin_dirs = dirs;
  o.use_environment = false;
  o.default_dir = kRoot / "no_default_here";
  return o;
}

const LibraryRecord& record_named(const PluginRegistry& r, const std::string& filename) {
  for (const auto& rec : r.libraries())
    if (rec.path.filename() == filename) return rec;
  FAIL("no record for " << filename);
  throw std::logic_error("unreachable");
}

// The single library of a refusal folder: refused, with `reason` in its message
// and in describe() next to its path.
void check_refused(const std::string& folder, const std::string& file, const std::string& reason) {
  PluginRegistry r(only({kRoot / folder}));
  REQUIRE(r.libraries().size() == 1);
  const LibraryRecord& rec = r.libraries()[0];
  CHECK(rec.path == kRoot / folder / file);
  CHECK_FALSE(rec.loaded);
  CHECK(rec.refused_reason == reason);
  const std::string d = r.describe();
  CHECK(d.find((kRoot / folder / file).string() + "\n  REFUSED: " + reason) != std::string::npos);
  CHECK_FALSE(r.has("dup_cb"));
}

}  // namespace

TEST_CASE("the good folder: a C plugin and a two-callback pack load with their metadata") {
  PluginRegistry r(only({kGood}));
  REQUIRE(r.libraries().size() == 2);
  const LibraryRecord& c = record_named(r, plugin_file_name("c_plugin"));
  CHECK(c.loaded);
  CHECK(c.refused_reason.empty());
  CHECK(c.plugin_name == "c_plugin");
  CHECK(c.plugin_version == "0.3.0");
  CHECK(c.abi_major == 1);
  CHECK(c.abi_minor == TRAINHOOK_TEST_GOOD_MINOR);
  REQUIRE(c.callbacks.size() == 1);
  CHECK(c.callbacks[0].name == "c_counter");
  CHECK(c.callbacks[0].kind == TH_KIND_INTEGRATION);

  const LibraryRecord& pack = record_named(r, plugin_file_name("test_pack"));
  CHECK(pack.loaded);
  CHECK(pack.plugin_name == "test_pack");
  REQUIRE(pack.callbacks.size() == 2);
  CHECK(pack.callbacks[0].name == "pack_recorder");
  CHECK(pack.callbacks[0].kind == TH_KIND_CALLBACK);
  CHECK(pack.callbacks[0].description == "records events (test pack)");
  CHECK(pack.callbacks[1].name == "pack_reporter");
  CHECK(pack.callbacks[1].kind == TH_KIND_INTEGRATION);
  REQUIRE(pack.commands.size() == 1);
  CHECK(pack.commands[0].name == "pack-hello");

  CHECK(r.available(TH_KIND_INTEGRATION) == std::vector<std::string>{"c_counter", "pack_reporter"});
  CHECK(r.available(TH_KIND_CALLBACK) == std::vector<std::string>{"pack_recorder"});
  CHECK(r.has("pack_recorder"));
  CHECK(r.searched_dirs() ==
        std::vector<std::string>{(kGood).string(), (kRoot / "no_default_here").string()});

  const std::string d = r.describe();
  CHECK(d.find("plugin c_plugin 0.3.0, ABI 1." + std::to_string(TRAINHOOK_TEST_GOOD_MINOR)) !=
        std::string::npos);
  CHECK(d.find("integration c_counter 0.3.0  - counts events (a plugin in plain C)") != std::string::npos);
  CHECK(d.find("callback pack_recorder 2.1.0") != std::string::npos);
  CHECK(d.find("command pack-hello  - prints hello and its arguments") != std::string::npos);
  CHECK(d.find((kRoot / "no_default_here").string() + "  (default, missing)") != std::string::npos);
}

TEST_CASE("the C plugin through the handler: events, flags, config, log, saved state") {
  RecordingHost host;
  PluginRegistry r(only({kGood}));
  CallbackHandler h;
  h.add(r.create("c_counter", host, R"({"k": 1})"));
  CHECK(host.logged("c_counter|2|config={\"k\": 1}"));
  TrainerState st;
  TrainerControl c;
  st.global_step = 1;
  h.fire(TH_EVENT_STEP_END, st, c);
  CHECK_FALSE(c.should_save);
  st.global_step = 2;
  h.fire(TH_EVENT_STEP_END, st, c);
  CHECK(c.should_save);  // set by C code through th_control
  h.save_states(st, c);
  CHECK(st.stateful_callbacks["c_counter"] ==
        nlohmann::json::parse(R"({"args": {}, "attributes": {"events": 2}})"));
  h.fire(TH_EVENT_TRAIN_END, st, c);
  CHECK(host.logged("c_counter|2|events=3"));

  CallbackHandler resumed;
  resumed.add(r.create("c_counter", host, "{}"));
  resumed.load_states(st);
  resumed.fire(TH_EVENT_TRAIN_END, st, c);
  CHECK(host.logged("c_counter|2|events=3"));  // 2 restored + this one
}

TEST_CASE("the pack: masks, values, checkpoint dir, stop from a worker thread, host services") {
  RecordingHost host;
  PluginRegistry r(only({kGood}));
  CallbackHandler h;
  host.handler = &h;
  h.add(r.create("pack_recorder", host, R"({"stop_at_step": 2})"));
  h.add(r.create("pack_reporter", host, R"({"stop_from_thread": true})"));
  TrainerState st;
  TrainerControl c;
  h.fire(TH_EVENT_TRAIN_BEGIN, st, c);
  CHECK(host.logged("pack_recorder|2|on_train_begin step=0"));
  CHECK(host.logged("pack_reporter|2|output_dir=/runs/out run_name=run-7"));
  h.fire(TH_EVENT_STEP_BEGIN, st, c);  // not overridden by the recorder: never dispatched
  CHECK_FALSE(host.logged("pack_recorder|2|on_step_begin step=0"));
  st.global_step = 1;
  h.fire(TH_EVENT_STEP_END, st, c);
  CHECK(host.logged("pack_recorder|2|on_step_end step=1"));

  const char* keys[] = {"loss", "learning_rate"};
  const double values[] = {0.5, 0.001};
  const char* skeys[] = {"phase"};
  const char* svalues[] = {"warmup"};
  const th_values v{TH_VALUES_STRUCT_SIZE, 2, keys, values, 1, skeys, svalues};
  EventPayload p;
  p.values = &v;
  h.fire(TH_EVENT_LOG, st, c, p);
  CHECK(host.logged("pack_reporter|2|log loss=0.5 learning_rate=0.001 phase=warmup"));
  CHECK(c.should_save);  // set by the recorder's on_log

  EventPayload save;
  save.checkpoint_dir = "/runs/out/checkpoint-1";
  h.fire(TH_EVENT_SAVE, st, c, save);
  CHECK(host.logged("pack_recorder|2|checkpoint=/runs/out/checkpoint-1"));

  h.fire(TH_EVENT_TRAIN_END, st, c);  // joins the reporter's worker
  CHECK(h.stop_requested());
  CHECK(h.stop_reason() == "pack_reporter: reporter worker says stop");
  st.global_step = 2;
  TrainerControl fresh;
  h.fire(TH_EVENT_STEP_END, st, fresh);
  CHECK(fresh.should_training_stop);
  CHECK(h.disabled().empty());
}

TEST_CASE("a plugin exception crosses the C boundary as a message and disables only that callback") {
  RecordingHost host;
  PluginRegistry r(only({kGood}));
  CallbackHandler h;
  h.add(r.create("pack_recorder", host, R"({"throw_in": "on_log"})"));
  h.add(r.create("c_counter", host, "{}"));
  TrainerState st;
  TrainerControl c;
  h.fire(TH_EVENT_LOG, st, c);
  CHECK_FALSE(c.should_save);  // the failing callback's flag change was rolled back
  REQUIRE(h.disabled().size() == 1);
  CHECK(h.disabled()[0].callback == "pack_recorder");
  CHECK(h.disabled()[0].event == "on_log");
  CHECK(h.disabled()[0].message == "pack_recorder was told to fail in on_log [TH_ERROR]");
  h.fire(TH_EVENT_TRAIN_END, st, c);
  CHECK(host.logged("c_counter|2|events=2"));  // the C plugin kept running
}

TEST_CASE("create() errors name the callback and carry the plugin's message") {
  RecordingHost host;
  PluginRegistry r(only({kGood}));
  const std::string lib = (kGood / plugin_file_name("test_pack")).string();
  CHECK_THROWS_WITH_AS(r.create("pack_recorder", host, R"({"stop_at_step": 0})"),
                       ("cannot create callback 'pack_recorder' from " + lib +
                        ": pack_recorder: stop_at_step must be >= 1, got 0 [TH_INVALID_ARGUMENT]")
                           .c_str(),
                       PluginError);
  CHECK_THROWS_WITH_AS(r.create("pack_recordr", host, "{}"),
                       doctest::Contains("Did you mean 'pack_recorder'?"), PluginError);
}

TEST_CASE("a library stays loaded until the last callback it made is destroyed") {
  RecordingHost host;
  std::unique_ptr<trainhook::detail::InternalCallback> cb;
  {
    PluginRegistry r(only({kGood}));
    cb = r.create("c_counter", host, "{}");
  }  // the registry is gone; the callback still holds its library
  CallbackHandler h;
  h.add(std::move(cb));
  TrainerState st;
  TrainerControl c;
  h.fire(TH_EVENT_TRAIN_END, st, c);
  CHECK(host.logged("c_counter|2|events=1"));
}

// Whether the library file is mapped into this process (/proc/self/maps).
bool mapped(const fs::path& file) {
  std::ifstream maps("/proc/self/maps");
  const std::string canonical = fs::canonical(file).string();
  std::string line;
  while (std::getline(maps, line))
    if (line.size() >= canonical.size() &&
        line.compare(line.size() - canonical.size(), canonical.size(), canonical) == 0)
      return true;
  return false;
}

TEST_CASE("scanning runs no plugin code here: a library is loaded when one of its callbacks is created") {
  RecordingHost host;
  const fs::path pack = kGood / plugin_file_name("test_pack");
  PluginRegistry r(only({kGood}));
  REQUIRE(r.has("pack_recorder"));
  CHECK(r.library_of("pack_recorder") == fs::canonical(pack));
  CHECK_THROWS_WITH_AS(r.library_of("no_such_cb"), doctest::Contains("unknown callback 'no_such_cb'"),
                       PluginError);
  if (!mapped(pack)) {  // another case of this process may have loaded it already
    auto cb = r.create("pack_recorder", host, "{}");
    CHECK(mapped(pack));
  }
}

TEST_CASE("the registry cache: a second scan of unchanged files runs no scanner, and off scans every time") {
  TempDir dir("th_reg");
  const std::string cache = (dir.path / "registry.json").string();
  ::setenv("TRAINHOOK_REGISTRY_CACHE", cache.c_str(), 1);
  {
    PluginRegistry first(only({kGood}));
    CHECK(first.scanned_count() == first.libraries().size());
    CHECK(fs::exists(cache));
    PluginRegistry second(only({kGood}));
    CHECK(second.scanned_count() == 0);
    CHECK(second.describe() == first.describe());
  }
  ::setenv("TRAINHOOK_REGISTRY_CACHE", "off", 1);
  {
    PluginRegistry r(only({kGood}));
    CHECK(r.scanned_count() == r.libraries().size());
  }
  ::unsetenv("TRAINHOOK_REGISTRY_CACHE");
}

TEST_CASE("plugin commands run with arguments and return their exit code") {
  RecordingHost host;
  PluginRegistry r(only({kGood}));
  CHECK(r.command_names() == std::vector<std::string>{"pack-hello"});
  CHECK(r.has_command("pack-hello"));
  CHECK(r.run_command("pack-hello", {"a", "b", "c"}, host) == 3);
  CHECK(host.logged("pack-hello|2|hello a b c"));
  const std::vector<std::string> fail_args = {"--fail"};
  const std::string fail_message = "command 'pack-hello' (" +
                                   (kGood / plugin_file_name("test_pack")).string() +
                                   ") failed: pack-hello: --fail was given [status 1]";
  CHECK_THROWS_WITH_AS(r.run_command("pack-hello", fail_args, host), fail_message.c_str(), PluginError);
  CHECK_THROWS_WITH_AS(r.run_command("pack-helo", {}, host), doctest::Contains("Did you mean 'pack-hello'?"),
                       PluginError);
}

TEST_CASE("report_to and callbacks resolve names, unknown names list what exists and where we looked") {
  PluginRegistry r(only({kGood}));
  CHECK(r.resolve_report_to({"none"}).empty());
  CHECK(r.resolve_report_to({}).empty());
  CHECK(r.resolve_report_to({"all"}) == std::vector<std::string>{"c_counter", "pack_reporter"});
  CHECK(r.resolve_report_to({"pack_reporter", "pack_reporter"}) == std::vector<std::string>{"pack_reporter"});
  CHECK_THROWS_WITH_AS(
      r.resolve_report_to({"c_countr"}),
      ("report_to: unknown integration 'c_countr'. Did you mean 'c_counter'? Available: c_counter, "
       "pack_reporter. "
       "Searched: " +
       (kGood).string() + " (--plugin_dir), " + (kRoot / "no_default_here").string() + " (default).")
          .c_str(),
      PluginError);
  CHECK_THROWS_WITH_AS(
      r.resolve_report_to({"pack_recorder"}),
      "report_to: 'pack_recorder' is a callback, not an integration; enable it with --callbacks "
      "pack_recorder",
      PluginError);
  const std::vector<std::string> none_and_more = {"none", "c_counter"};
  CHECK_THROWS_WITH_AS(r.resolve_report_to(none_and_more),
                       "report_to: 'none' cannot be combined with other names, got 'none, c_counter'",
                       PluginError);
  CHECK_NOTHROW(r.check_callbacks({"pack_recorder", "c_counter"}));
  CHECK_THROWS_WITH_AS(r.check_callbacks({"early_stopping"}),
                       doctest::Contains("callbacks: unknown callback 'early_stopping'. Available: "
                                         "c_counter, pack_recorder, pack_reporter."),
                       PluginError);
}

TEST_CASE("refused: a library without the entry symbol") {
  check_refused("no_entry", plugin_file_name("no_entry"),
                "no entry symbol trainhook_plugin_v1 (not a Trainhook plugin, or built for another ABI)");
}

TEST_CASE("refused: ABI major version mismatch") {
  check_refused("abi_major", plugin_file_name("abi_major"),
                "ABI major version mismatch: the plugin was built for ABI 2." + kMinor +
                    ", this trainhook speaks ABI 1." + kMinor + " (rebuild the plugin against this SDK)");
}

TEST_CASE("refused: a plugin built for a newer minor version") {
  check_refused(
      "newer_minor", plugin_file_name("newer_minor"),
      "the plugin was built for ABI 1." + kNewerMinor + ", newer than this trainhook's ABI 1." + kMinor +
          " (upgrade trainhook, or rebuild the plugin against this SDK)");
}

TEST_CASE(
    "a plugin built against a smaller (older) header loads and works, nothing past struct_size is read") {
  // layout_plugins.c: th_plugin_info ends at `callbacks`, callback infos sit in
  // larger memory blocks, and every byte past each struct_size is 0xA5 poison.
  RecordingHost host;
  PluginRegistry r(only({kRoot / "smaller"}));
  REQUIRE(r.libraries().size() == 1);
  const LibraryRecord& rec = r.libraries()[0];
  INFO(rec.refused_reason);
  REQUIRE(rec.loaded);
  CHECK(rec.plugin_name == "small_layout");
  CHECK(rec.abi_minor == 0);
  REQUIRE(rec.callbacks.size() == 2);  // read through the pointer array, not with the host's stride
  CHECK(rec.callbacks[0].name == "small_a");
  CHECK(rec.callbacks[1].name == "small_b");
  CHECK(rec.commands.empty());  // the poison where command_count/commands would be is not read
  CHECK(r.command_names().empty());

  CallbackHandler h;
  h.add(r.create("small_a", host, "{}"));
  h.add(r.create("small_b", host, "{}"));
  TrainerState st;
  TrainerControl c;
  st.global_step = 1;
  h.fire(TH_EVENT_STEP_END, st, c);
  CHECK_FALSE(c.should_save);
  st.global_step = 2;
  h.fire(TH_EVENT_STEP_END, st, c);
  CHECK(c.should_save);
  h.fire(TH_EVENT_TRAIN_END, st, c);
  CHECK(host.logged("small_a|2|events=3 saves=1"));
  CHECK(host.logged("small_b|2|events=3 saves=1"));
  CHECK(h.disabled().empty());
}

TEST_CASE("refused: a plugin built against a larger (newer minor) header, with a message naming the file") {
  PluginRegistry r(only({kRoot / "larger"}));
  REQUIRE(r.libraries().size() == 1);
  const LibraryRecord& rec = r.libraries()[0];
  CHECK(rec.path == kRoot / "larger" / plugin_file_name("large_layout"));
  CHECK_FALSE(rec.loaded);
  CHECK(rec.refused_reason ==
        "the plugin was built for ABI 1." + kNewerMinor + ", newer than this trainhook's ABI 1." + kMinor +
            " (upgrade trainhook, or rebuild the plugin against this SDK)");
  CHECK(r.describe().find((kRoot / "larger" / plugin_file_name("large_layout")).string() + "\n  REFUSED: ") !=
        std::string::npos);
  CHECK_FALSE(r.has("large_cb"));
  // Asking for it by the library's name points at the refused file and why.
  const std::string refused = (kRoot / "larger" / plugin_file_name("large_layout")).string() +
                              " was found but refused: the plugin was built for ABI 1." + kNewerMinor;
  CHECK_THROWS_WITH_AS(r.check_callbacks({"large_layout"}), doctest::Contains(refused.c_str()), PluginError);
}

TEST_CASE("refused: negotiation failure reported by the plugin's entry") {
  check_refused("abi_refuse", plugin_file_name("abi_refuse"),
                "ABI negotiation failed: the plugin refused this trainhook (ABI 1." + kMinor +
                    "): fake plugin insists on trainhook ABI 7.3");
}

TEST_CASE("refused: the entry returns an error") {
  check_refused(
      "entry_error", plugin_file_name("entry_error"),
      "entry trainhook_plugin_v1 returned error 1: license file /nonexistent/license.key not found");
}

TEST_CASE("refused: a text file named like a plugin is not a shared library") {
  TempDir dir("th_reg");
  std::ofstream(dir.path / plugin_file_name("x")) << "this is not a library\n";
  std::ofstream(dir.path / "README.txt") << "not a candidate: ignored\n";
  PluginRegistry r(only({dir.path}));
  REQUIRE(r.libraries().size() == 1);
  CHECK_FALSE(r.libraries()[0].loaded);
  CHECK(r.libraries()[0].refused_reason == "not a shared library (not an ELF file)");
  CHECK(r.describe().find((dir.path / plugin_file_name("x")).string() +
                          "\n  REFUSED: not a shared library (not an ELF file)") != std::string::npos);
}

namespace {

// A copy of the good C plugin, named libtrainhook_patched<suffix> in `dir`, with
// `size` bytes of its ELF header at `offset` overwritten by `bytes`: the
// pre-check reads only the header for these, so one real library serves for
// every kind of foreign ELF file.
fs::path patched_plugin(const fs::path& dir, size_t offset, const void* bytes, size_t size) {
  const fs::path lib = dir / plugin_file_name("patched");
  fs::copy_file(kGood / plugin_file_name("c_plugin"), lib);
  std::fstream f(lib, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(static_cast<const char*>(bytes), static_cast<std::streamsize>(size));
  REQUIRE(f.good());
  return lib;
}

// The refusal of the single library in `dir`, checked in describe() next to its path.
std::string single_refusal(const fs::path& dir) {
  PluginRegistry r(only({dir}));
  REQUIRE(r.libraries().size() == 1);
  const LibraryRecord& rec = r.libraries()[0];
  CHECK_FALSE(rec.loaded);
  CHECK(r.describe().find(rec.path.string() + "\n  REFUSED: " + rec.refused_reason) != std::string::npos);
  return rec.refused_reason;
}

}  // namespace

TEST_CASE("refused before loading: an ELF executable (ET_EXEC) is not a shared library") {
  TempDir dir("th_reg");
  const uint16_t exec = ET_EXEC;
  patched_plugin(dir.path, offsetof(Elf64_Ehdr, e_type), &exec, sizeof exec);
  CHECK(single_refusal(dir.path) ==
        "not a shared library: an ELF executable (ET_EXEC); build the plugin as a shared library "
        "(trainhook_add_plugin, or add_library(... MODULE))");
}

TEST_CASE("refused before loading: an object file (ET_REL)") {
  TempDir dir("th_reg");
  const uint16_t rel = ET_REL;
  patched_plugin(dir.path, offsetof(Elf64_Ehdr, e_type), &rel, sizeof rel);
  CHECK(single_refusal(dir.path) ==
        "not a shared library: an ELF object file (ET_REL); link it into a shared library");
}

TEST_CASE("refused before loading: a library for another machine names both machines") {
#if defined(__x86_64__)
  const uint16_t other = EM_AARCH64;
  const std::string expected = "built for another platform: AArch64, this trainhook runs on x86-64";
#else
  const uint16_t other = EM_X86_64;
  const std::string expected = "built for another platform: x86-64, this trainhook runs on ";
#endif
  TempDir dir("th_reg");
  patched_plugin(dir.path, offsetof(Elf64_Ehdr, e_machine), &other, sizeof other);
  CHECK(single_refusal(dir.path).rfind(expected, 0) == 0);
}

TEST_CASE("refused before loading: a 32-bit ELF file") {
  TempDir dir("th_reg");
  const unsigned char elf32 = ELFCLASS32;
  patched_plugin(dir.path, EI_CLASS, &elf32, 1);
  CHECK(single_refusal(dir.path) ==
        "built for another platform: a 32-bit ELF file, this trainhook is 64-bit");
}

TEST_CASE("refused at load: an unresolved symbol, with the loader's reason naming it and the file") {
  const fs::path lib = kRoot / "unresolved" / plugin_file_name("unresolved");
  PluginRegistry r(only({kRoot / "unresolved"}));
  REQUIRE(r.libraries().size() == 1);
  const LibraryRecord& rec = r.libraries()[0];
  CHECK_FALSE(rec.loaded);
  INFO(rec.refused_reason);
  // glibc: "<file>: undefined symbol: trainhook_test_symbol_nobody_defines"
  CHECK(rec.refused_reason.rfind("cannot be loaded: ", 0) == 0);
  CHECK(rec.refused_reason.find("undefined symbol: trainhook_test_symbol_nobody_defines") !=
        std::string::npos);
  CHECK(rec.refused_reason.find(lib.filename().string()) != std::string::npos);
  CHECK(r.describe().find(lib.string() + "\n  REFUSED: cannot be loaded: ") != std::string::npos);
}

// The registry loads a plugin through /proc/self/fd/N (the descriptor it
// checked), whose folder means nothing to the dynamic loader: what the plugin
// finds through $ORIGIN is loaded first from where the plugin really is.
TEST_CASE(
    "a pack whose plugin needs the library beside it through RUNPATH $ORIGIN is scanned, loads and runs") {
  const fs::path folder = kRoot / "origin_pack";
  RecordingHost host;
  PluginRegistry r(only({folder}));
  const LibraryRecord& pack = record_named(r, plugin_file_name("origin_pack"));
  CHECK_MESSAGE(pack.loaded, pack.refused_reason);  // the scanner loaded it
  // The helper library is no plugin, and says so.
  CHECK(record_named(r, plugin_file_name("origin_dep")).refused_reason.rfind("no entry symbol", 0) == 0);
  REQUIRE(r.has("origin_pack"));
  auto cb = r.create("origin_pack", host, "{}");  // in this process: its create() calls the helper library
  CHECK(host.logged("origin_pack|2|origin_dep answers 42"));
}

TEST_CASE("a library a plugin needs through $ORIGIN is judged as the plugin is: group-writable, refused") {
  TempDir dir("th_reg");
  ::chmod(dir.path.c_str(), 0700);
  const fs::path lib = dir.path / plugin_file_name("origin_pack");
  const fs::path dep = dir.path / plugin_file_name("origin_dep");
  fs::copy_file(kRoot / "origin_pack" / lib.filename(), lib);
  fs::copy_file(kRoot / "origin_pack" / dep.filename(), dep);
  ::chmod(lib.c_str(), 0755);
  ::chmod(dep.c_str(), 0775);
  PluginRegistry r(only({dir.path}));
  CHECK(record_named(r, lib.filename().string()).refused_reason ==
        "unsafe plugin path: its dependency " + dep.filename().string() +
            " (which its RUNPATH finds through $ORIGIN): file " + dep.string() +
            " is group-writable (mode 0775); anyone in its group could change it (`chmod g-w " +
            dep.string() + "`) (pass --allow_unsafe_plugin_paths to load anyway)");
  CHECK_FALSE(r.has("origin_pack"));
  PluginSearchOptions o = only({dir.path});
  o.allow_unsafe_plugin_paths = true;
  PluginRegistry allowed(o);
  CHECK(allowed.has("origin_pack"));
}

TEST_CASE("refused: a stale TRAINHOOK_PLUGIN_PATH is ignored but a missing --plugin_dir is an error") {
  CHECK_THROWS_WITH_AS(PluginRegistry(only({kRoot / "nope"})),
                       ("--plugin_dir " + (kRoot / "nope").string() + ": no such file or folder").c_str(),
                       PluginError);
}

TEST_CASE("duplicate callback names in two libraries: an error naming both, unless allowed") {
  const std::string a = (kRoot / "dup" / plugin_file_name("dup_a")).string();
  const std::string b = (kRoot / "dup" / plugin_file_name("dup_b")).string();
  CHECK_THROWS_WITH_AS(
      PluginRegistry(only({kRoot / "dup"})),
      ("duplicate plugin names: callback 'dup_cb' is exported by both " + a + " and " + b +
       ". Remove one of the libraries, or pass --allow_duplicate_plugins to use the first one in "
       "search order")
          .c_str(),
      PluginError);
  PluginSearchOptions o = only({kRoot / "dup"});
  o.allow_duplicate_plugins = true;
  PluginRegistry r(o);
  CHECK(r.has("dup_cb"));
  CHECK(record_named(r, plugin_file_name("dup_a")).callbacks[0].shadowed_by.empty());
  CHECK(record_named(r, plugin_file_name("dup_b")).callbacks[0].shadowed_by == a);
  CHECK(r.describe().find("[DUPLICATE: ignored, " + a + " comes first]") != std::string::npos);
}

TEST_CASE("a library earlier in the search path overrides one of the same name found later, with a notice") {
  const fs::path a = kRoot / "dup" / plugin_file_name("dup_a");
  const fs::path b = kRoot / "dup" / plugin_file_name("dup_b");
  // b alone first (--plugin_dir may name one file), then its folder: b wins over a.
  {
    PluginRegistry r(only({b, kRoot / "dup"}));
    CHECK(r.has("dup_cb"));
    const LibraryRecord& shadowed = record_named(r, plugin_file_name("dup_a"));
    CHECK(shadowed.callbacks[0].shadowed_by == b);
    CHECK(shadowed.callbacks[0].overridden);
    CHECK(record_named(r, plugin_file_name("dup_b")).callbacks[0].shadowed_by.empty());
    CHECK(r.describe().find("[OVERRIDDEN by " + b.string() + ", earlier in the search path]") !=
          std::string::npos);
  }
  // A TRAINHOOK_PLUGIN_PATH entry overrides the default folder.
  {
    ::setenv("TRAINHOOK_PLUGIN_PATH", a.string().c_str(), 1);
    PluginSearchOptions o;
    o.default_dir = kRoot / "dup";
    PluginRegistry r(o);
    ::unsetenv("TRAINHOOK_PLUGIN_PATH");
    const LibraryRecord& shadowed = record_named(r, plugin_file_name("dup_b"));
    CHECK(shadowed.callbacks[0].shadowed_by == a);
    CHECK(shadowed.callbacks[0].overridden);
  }
}

TEST_CASE("search order: --plugin_dir, then TRAINHOOK_PLUGIN_PATH, then the default folder, each file once") {
  ::setenv("TRAINHOOK_PLUGIN_PATH", ((kRoot / "no_entry").string() + "::/nonexistent/stale").c_str(), 1);
  PluginSearchOptions o;
  o.plugin_dirs = {kGood, kGood};
  o.default_dir = kRoot / "abi_major";
  PluginRegistry r(o);
  ::unsetenv("TRAINHOOK_PLUGIN_PATH");
  CHECK(r.searched_dirs() == std::vector<std::string>{(kGood).string(), (kGood).string(),
                                                      (kRoot / "no_entry").string(), "/nonexistent/stale",
                                                      (kRoot / "abi_major").string()});
  std::vector<std::string> files;
  for (const auto& rec : r.libraries()) files.push_back(rec.path.filename().string());
  CHECK(files == std::vector<std::string>{plugin_file_name("c_plugin"), plugin_file_name("test_pack"),
                                          plugin_file_name("no_entry"), plugin_file_name("abi_major")});
}

TEST_CASE("default_plugin_dir is lib/trainhook/plugins beside the executable's bin folder") {
  // Test executables live in <build>/tests, so this is <build>/lib/trainhook/plugins.
  const fs::path d = default_plugin_dir();
  CHECK(d.filename() == "plugins");
  CHECK(d.parent_path().filename() == "trainhook");
  CHECK(d.parent_path().parent_path().parent_path() ==
        fs::path(TRAINHOOK_TEST_PLUGIN_ROOT).parent_path().parent_path());
}

TEST_CASE(
    "unsafe paths are refused unless allowed: world-writable folder or file, group-writable file, foreign "
    "owner") {
  TempDir dir("th_reg");
  const fs::path lib = dir.path / plugin_file_name("c_plugin");
  fs::copy_file(kGood / plugin_file_name("c_plugin"), lib);
  ::chmod(dir.path.c_str(), 0700);
  ::chmod(lib.c_str(), 0644);
  {
    PluginRegistry r(only({dir.path}));
    CHECK(r.has("c_counter"));
  }
  ::chmod(dir.path.c_str(), 0777);
  {
    PluginRegistry r(only({dir.path}));
    REQUIRE(r.libraries().size() == 1);
    CHECK(r.libraries()[0].refused_reason ==
          "unsafe plugin path: folder " + dir.path.string() +
              " is world-writable (mode 0777); anyone could change it (`chmod go-w " + dir.path.string() +
              "`) (pass --allow_unsafe_plugin_paths to load anyway)");
    PluginSearchOptions o = only({dir.path});
    o.allow_unsafe_plugin_paths = true;
    PluginRegistry allowed(o);
    CHECK(allowed.has("c_counter"));
  }
  ::chmod(dir.path.c_str(), 0700);
  ::chmod(lib.c_str(), 0666);
  {
    PluginRegistry r(only({dir.path}));
    CHECK(r.libraries()[0].refused_reason ==
          "unsafe plugin path: file " + lib.string() +
              " is world-writable (mode 0666); anyone could change it (`chmod go-w " + lib.string() +
              "`) (pass --allow_unsafe_plugin_paths to load anyway)");
  }
  // Group-writable: anyone in its group could put other code in the file.
  ::chmod(lib.c_str(), 0664);
  {
    PluginRegistry r(only({dir.path}));
    CHECK(r.libraries()[0].refused_reason ==
          "unsafe plugin path: file " + lib.string() +
              " is group-writable (mode 0664); anyone in its group could change it (`chmod g-w " +
              lib.string() + "`) (pass --allow_unsafe_plugin_paths to load anyway)");
    CHECK_FALSE(r.has("c_counter"));
  }
  ::chmod(lib.c_str(), 0644);
  // A file owned by another non-root user (needs root to arrange; otherwise
  // the file we created is ours, which the first block already showed is fine).
  if (::geteuid() == 0) {
    REQUIRE(::chown(lib.c_str(), 65534, 65534) == 0);
    PluginRegistry r(only({dir.path}));
    const std::string reason = r.libraries()[0].refused_reason;
    CHECK(reason.rfind("unsafe plugin path: file " + lib.string() + " is owned by ", 0) == 0);
    CHECK(reason.find("(uid 65534), not by you (") != std::string::npos);
    CHECK(reason.find(" or root; its owner could change it (`chown root " + lib.string() +
                      "`, or use a copy of your own) (pass --allow_unsafe_plugin_paths to load anyway)") !=
          std::string::npos);
  }
}

// `chmod 777 a; --plugin_dir a/sub` loaded (anyone can rename sub).
TEST_CASE("a plugin folder under a world- or group-writable folder is refused, sticky folders are fine") {
  TempDir dir("th_reg");
  const fs::path sub = dir.path / "sub";
  fs::create_directories(sub);
  const fs::path lib = sub / plugin_file_name("c_plugin");
  fs::copy_file(kRoot / "good" / plugin_file_name("c_plugin"), lib);
  ::chmod(sub.c_str(), 0755);
  ::chmod(lib.c_str(), 0644);
  auto tail = [&](const char* chmod) {
    return "; anyone who can write it could rename " + sub.string() +
           " and put another file in its place (`chmod " + chmod + " " + dir.path.string() +
           "`, or `chmod +t " + dir.path.string() + "`) (pass --allow_unsafe_plugin_paths to load anyway)";
  };
  ::chmod(dir.path.c_str(), 0777);
  {
    PluginRegistry r(only({sub}));
    REQUIRE(r.libraries().size() == 1);
    CHECK(r.libraries()[0].refused_reason == "unsafe plugin path: folder " + dir.path.string() + ", above " +
                                                 sub.string() + ", is world-writable (mode 0777)" +
                                                 tail("go-w"));
    CHECK_FALSE(r.has("c_counter"));
  }
  ::chmod(dir.path.c_str(), 0775);
  {
    PluginRegistry r(only({sub}));
    REQUIRE(r.libraries().size() == 1);
    CHECK(r.libraries()[0].refused_reason == "unsafe plugin path: folder " + dir.path.string() + ", above " +
                                                 sub.string() + ", is group-writable (mode 0775)" +
                                                 tail("g-w"));
  }
  // Sticky (as /tmp): others cannot rename sub, which is ours.
  ::chmod(dir.path.c_str(), 01777);
  {
    PluginRegistry r(only({sub}));
    CHECK(r.has("c_counter"));
  }
  ::chmod(dir.path.c_str(), 0700);
  {
    PluginRegistry r(only({sub}));
    CHECK(r.has("c_counter"));
  }
}

TEST_CASE("a stripped plugin (no .symtab) is still recognised through its dynamic symbols") {
  if (std::system("command -v strip >/dev/null 2>&1") != 0) {
    MESSAGE("strip is not installed: skipped");
    return;
  }
  TempDir dir("th_reg");
  const fs::path lib = dir.path / plugin_file_name("c_plugin");
  fs::copy_file(kGood / plugin_file_name("c_plugin"), lib);
  REQUIRE(std::system(("strip --strip-all '" + lib.string() + "'").c_str()) == 0);
  PluginRegistry r(only({dir.path}));
  REQUIRE(r.libraries().size() == 1);
  CHECK(r.libraries()[0].refused_reason == "");
  CHECK(r.has("c_counter"));
}
