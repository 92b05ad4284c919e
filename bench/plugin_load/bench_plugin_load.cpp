// Plugin discovery time: how long PluginRegistry's constructor takes (scan
// the folders, check each file's path, learn what each library exports) for
//   all      every plugin library found on the default search path, and
//   trivial  N copies (default 100) of a do-nothing C plugin in one folder
//            (target: 100 in <= 100 ms for what every run pays),
// each twice: with a cold registry cache (every library read by a scanner
// process: what the first run after an install or an upgrade pays) and with a
// warm one (the cache answers: what every later run pays). The target applies
// to the warm case; the cold one is printed beside it.
// Each measurement runs in a fresh child process (this program re-run with
// --child), because a library stays mapped after its first load in a process
// and later loads would only be reference-count bumps. The medians of the
// repeats are printed and, with --json FILE, written as JSON.
//
// usage: bench_plugin_load [--copies 100] [--repeats 7] [--json FILE]
#include <trainhook/plugin_host/registry/plugin_file_name.hpp>
#include <trainhook/plugin_host/registry/plugin_registry.hpp>

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

constexpr double kTargetMsPer100 = 100.0;

// CPU time of this process (user + system), which on a shared machine shows
// the cost that wall time mixes with other processes' load.
double cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

// Child: one registry over `dir` ("default" = the normal search path) and one
// JSON line on stdout.
int child(const std::string& dir) {
  // Loading messages are info lines; the CLI prints them, the timing should not.
  spdlog::set_level(spdlog::level::warn);
  trainhook::PluginSearchOptions o;
  if (dir != "default") {
    o.plugin_dirs = {dir};
    o.use_environment = false;
    o.default_dir = "/nonexistent";
  }
  const double cpu0 = cpu_ms();
  const auto start = Clock::now();
  trainhook::PluginRegistry registry(o);
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  const double cpu = cpu_ms() - cpu0;
  size_t loaded = 0, callbacks = 0;
  for (const auto& lib : registry.libraries()) {
    loaded += lib.loaded ? 1 : 0;
    callbacks += lib.callbacks.size();
  }
  nlohmann::json out = {{"ms", ms},
                        {"cpu_ms", cpu},
                        {"libraries", registry.libraries().size()},
                        {"loaded", loaded},
                        {"callbacks", callbacks}};
  std::printf("%s\n", out.dump().c_str());
  return 0;
}

nlohmann::json run_child(const fs::path& self, const std::string& dir) {
  const std::string cmd = "'" + self.string() + "' --child '" + dir + "'";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) throw std::runtime_error("cannot run " + cmd);
  std::string text;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) text.append(buf, n);
  const int rc = pclose(p);
  if (rc != 0) throw std::runtime_error(cmd + " failed (status " + std::to_string(rc) + "): " + text);
  const auto brace = text.rfind('{');
  if (brace == std::string::npos) throw std::runtime_error(cmd + " printed no JSON: " + text);
  return nlohmann::json::parse(text.substr(brace));
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The registry cache the children share (TRAINHOOK_REGISTRY_CACHE).
fs::path g_cache_file;

// Repeats of one measurement: the median time and the last child's counts.
// cold: the cache is removed before each child; warm: one child fills it first.
nlohmann::json measure(const fs::path& self, const std::string& dir, int repeats, bool cold) {
  std::vector<double> ms, cpu;
  nlohmann::json last;
  std::error_code ec;
  fs::remove(g_cache_file, ec);
  if (!cold) (void)run_child(self, dir);
  for (int r = 0; r < repeats; ++r) {
    if (cold) fs::remove(g_cache_file, ec);
    last = run_child(self, dir);
    ms.push_back(last["ms"].get<double>());
    cpu.push_back(last["cpu_ms"].get<double>());
  }
  last["ms"] = median(ms);
  last["cpu_ms"] = median(cpu);
  last["ms_min"] = *std::min_element(ms.begin(), ms.end());
  last["ms_max"] = *std::max_element(ms.begin(), ms.end());
  last["repeats"] = repeats;
  return last;
}

// N copies of the trivial plugin, named so each exports its own callback.
fs::path make_copies(int copies) {
  char tmpl[] = "/tmp/trainhook-bench-plugins-XXXXXX";
  if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
  const fs::path dir = tmpl;
  for (int i = 0; i < copies; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "trivial_%03d", i);
    fs::copy_file(BENCH_TRIVIAL_PLUGIN, dir / trainhook::plugin_file_name(name));
  }
  return dir;
}

int parent(int copies, int repeats, const std::string& json_file) {
  const fs::path self = fs::read_symlink("/proc/self/exe");
  const fs::path dir = make_copies(copies);
  g_cache_file = dir / "registry-cache.json";  // not a plugin file name: never scanned
  ::setenv("TRAINHOOK_REGISTRY_CACHE", g_cache_file.c_str(), 1);
  nlohmann::json all, all_cold, trivial, trivial_cold;
  try {
    all = measure(self, "default", repeats, false);
    all_cold = measure(self, "default", repeats, true);
    trivial = measure(self, dir.string(), repeats, false);
    trivial_cold = measure(self, dir.string(), repeats, true);
  } catch (...) {
    fs::remove_all(dir);
    throw;
  }
  fs::remove_all(dir);
  if (trivial["callbacks"].get<int>() != copies)
    throw std::runtime_error("expected " + std::to_string(copies) +
                             " trivial callbacks, the registry found " + trivial["callbacks"].dump());
  const double per100 = trivial["ms"].get<double>() * 100.0 / copies;
  const double cold_per100 = trivial_cold["ms"].get<double>() * 100.0 / copies;
  std::printf("plugin discovery (PluginRegistry constructor, fresh process, median of %d):\n", repeats);
  std::printf("  all plugins found (%s libraries, %s callbacks) in %s:\n", all["loaded"].dump().c_str(),
              all["callbacks"].dump().c_str(), trainhook::default_plugin_dir().string().c_str());
  std::printf("      warm cache %8.2f ms wall, %8.2f ms CPU;  cold cache (scanner processes) %8.2f ms wall\n",
              all["ms"].get<double>(), all["cpu_ms"].get<double>(), all_cold["ms"].get<double>());
  std::printf("  %d copies of a trivial plugin:\n", copies);
  std::printf("      warm cache %8.2f ms wall, %8.2f ms CPU  (%.2f ms wall per 100, target <= %.0f) %s\n",
              trivial["ms"].get<double>(), trivial["cpu_ms"].get<double>(), per100, kTargetMsPer100,
              per100 <= kTargetMsPer100 ? "ok" : "ABOVE TARGET");
  std::printf("      cold cache %8.2f ms wall (%.2f ms per 100: one scanner process per library)\n",
              trivial_cold["ms"].get<double>(), cold_per100);
  if (!json_file.empty()) {
    nlohmann::json out = {{"all", all},
                          {"all_cold_cache", all_cold},
                          {"trivial", trivial},
                          {"trivial_cold_cache", trivial_cold},
                          {"trivial_cold_ms_per_100", cold_per100},
                          {"copies", copies},
                          {"trivial_ms_per_100", per100},
                          {"target_ms_per_100", kTargetMsPer100}};
    std::ofstream(json_file) << out.dump(2) << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int copies = 100, repeats = 7;
  std::string json_file;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
        return argv[++i];
      };
      auto number = [&]() -> long long {
        const std::string v = value();
        size_t used = 0;
        long long n = 0;
        try {
          n = std::stoll(v, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used == 0 || used != v.size())
          throw std::invalid_argument(a + " must be a whole number, got '" + v + "'");
        return n;
      };
      if (a == "--child") return child(value());
      if (a == "--copies")
        copies = static_cast<int>(number());
      else if (a == "--repeats")
        repeats = static_cast<int>(number());
      else if (a == "--json")
        json_file = value();
      else
        throw std::invalid_argument("unknown argument '" + a +
                                    "' (expected --copies N, --repeats N, --json FILE)");
    }
    if (copies < 1 || repeats < 1) throw std::invalid_argument("--copies and --repeats must be >= 1");
    return parent(copies, repeats, json_file);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_plugin_load: %s\n", e.what());
    return 2;
  }
}
