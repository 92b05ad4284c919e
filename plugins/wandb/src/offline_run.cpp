#include <trainhook/wandb/offline_run.hpp>

#include <nlohmann/json.hpp>

#include <sstream>
#include <stdexcept>
#include <system_error>

namespace trainhook::wandb {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

json spec_to_json(const RunSpec& s) {
  return json{{"run_id", s.run_id},
              {"project", s.project},
              {"entity", s.entity},
              {"display_name", s.display_name},
              {"config", json::parse(s.config_json)},
              {"host", s.host},
              {"program", s.program},
              {"job_type", s.job_type},
              {"group", s.group},
              {"tags", s.tags}};
}

RunSpec spec_from_json(const json& j, const fs::path& file) {
  if (!j.is_object() || !j.contains("run_id") || !j["run_id"].is_string() || !j.contains("project") ||
      !j["project"].is_string())
    throw std::runtime_error(file.string() + ": \"run\" must be an object with string run_id and project");
  RunSpec s;
  s.run_id = j["run_id"].get<std::string>();
  s.project = j["project"].get<std::string>();
  s.entity = j.value("entity", "");
  s.display_name = j.value("display_name", "");
  s.config_json = j.contains("config") && j["config"].is_object() ? j["config"].dump() : "{}";
  s.host = j.value("host", "");
  s.program = j.value("program", "trainhook");
  s.job_type = j.value("job_type", "");
  s.group = j.value("group", "");
  if (j.contains("tags") && j["tags"].is_array())
    for (const auto& t : j["tags"])
      if (t.is_string()) s.tags.push_back(t.get<std::string>());
  return s;
}

json read_json_file(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + file.string());
  std::stringstream ss;
  ss << in.rdbuf();
  json j = json::parse(ss.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw std::runtime_error(file.string() + " is not a JSON object");
  return j;
}

}  // namespace

std::string offline_dir_name(std::time_t when, const std::string& run_id) {
  std::tm tm{};
  gmtime_r(&when, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d_%H%M%S", &tm);
  return std::string("offline-run-") + buf + "-" + run_id;
}

void write_file_atomically(const fs::path& file, const std::string& text) {
  const fs::path tmp = file.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write " + tmp.string());
    out << text;
    out.flush();
    if (!out) throw std::runtime_error("cannot write " + tmp.string());
  }
  std::error_code ec;
  fs::rename(tmp, file, ec);
  if (ec)
    throw std::runtime_error("cannot rename " + tmp.string() + " to " + file.string() + ": " + ec.message());
}

OfflineRunWriter::OfflineRunWriter(const fs::path& root, const OfflineMeta& meta, std::time_t now) {
  dir_ = root / "wandb" / offline_dir_name(now, meta.spec.run_id);
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec)
    throw std::runtime_error("cannot create the offline run folder " + dir_.string() + ": " + ec.message());
  json run = {
      {"format", "trainhook-wandb-offline-1"}, {"run", spec_to_json(meta.spec)}, {"base_url", meta.base_url},
      {"history_offset", meta.history_offset}, {"reason", meta.reason},          {"created", meta.created}};
  write_file_atomically(dir_ / "run.json", run.dump(2) + "\n");
  history_.open(dir_ / "history.jsonl", std::ios::binary | std::ios::app);
  if (!history_)
    throw std::runtime_error("cannot open " + (dir_ / "history.jsonl").string() + " for appending");
}

void OfflineRunWriter::append(const std::vector<std::string>& lines) {
  for (const auto& l : lines) history_ << l << '\n';
  history_.flush();
  if (!history_) throw std::runtime_error("cannot append to " + (dir_ / "history.jsonl").string());
  lines_ += static_cast<int64_t>(lines.size());
}

void OfflineRunWriter::write_summary(const std::string& line) {
  write_file_atomically(dir_ / "summary.json", line + "\n");
}

void OfflineRunWriter::finish(int exitcode) {
  history_.flush();
  write_file_atomically(dir_ / "exit.json", json{{"exitcode", exitcode}}.dump() + "\n");
}

OfflineRun read_offline_run(const fs::path& dir) {
  OfflineRun r;
  r.dir = dir;
  const fs::path run_file = dir / "run.json";
  if (!fs::exists(run_file))
    throw std::runtime_error(dir.string() +
                             " is not an offline wandb run (no run.json); expected a folder "
                             "wandb/offline-run-<date>-<id> written with WANDB_MODE=offline");
  json run = read_json_file(run_file);
  if (run.value("format", "") != "trainhook-wandb-offline-1")
    throw std::runtime_error(run_file.string() + ": unknown format '" + run.value("format", "") +
                             "', expected trainhook-wandb-offline-1");
  r.meta.spec = spec_from_json(run.value("run", json()), run_file);
  r.meta.base_url = run.value("base_url", "");
  if (!run.contains("history_offset") || !run["history_offset"].is_number_integer() ||
      run["history_offset"].get<int64_t>() < 0)
    throw std::runtime_error(run_file.string() + ": history_offset must be an integer >= 0");
  r.meta.history_offset = run["history_offset"].get<int64_t>();
  r.meta.reason = run.value("reason", "");
  r.meta.created = run.value("created", "");

  std::ifstream in(dir / "history.jsonl", std::ios::binary);
  if (in) {
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string all = ss.str();
    size_t start = 0;
    size_t line_no = 0;
    while (start < all.size()) {
      const size_t nl = all.find('\n', start);
      if (nl == std::string::npos) {
        r.torn_last_line = true;  // crash mid-append: the line never completed
        break;
      }
      std::string line = all.substr(start, nl - start);
      ++line_no;
      // Lines may hold NaN/Infinity (W&B's JSON), which strict parsers refuse:
      // check the shape only.
      if (line.size() < 2 || line.front() != '{' || line.back() != '}')
        throw std::runtime_error((dir / "history.jsonl").string() + " line " + std::to_string(line_no) +
                                 " is not a JSON object");
      r.lines.push_back(std::move(line));
      start = nl + 1;
    }
  }
  if (fs::exists(dir / "summary.json")) {
    std::ifstream s(dir / "summary.json", std::ios::binary);
    std::string line;
    std::getline(s, line);
    if (!line.empty()) r.summary = line;
  }
  if (fs::exists(dir / "exit.json")) {
    json e = read_json_file(dir / "exit.json");
    if (!e.contains("exitcode") || !e["exitcode"].is_number_integer())
      throw std::runtime_error((dir / "exit.json").string() + ": exitcode must be an integer");
    r.exitcode = e["exitcode"].get<int>();
  }
  if (fs::exists(dir / "sync.json")) {
    json s = read_json_file(dir / "sync.json");
    r.synced_lines = std::max<int64_t>(0, s.value("history_lines", int64_t{0}));
    r.synced_complete = s.value("complete", false);
    if (r.synced_lines > static_cast<int64_t>(r.lines.size()))
      r.synced_lines = 0;  // stale: resend all (idempotent)
  }
  return r;
}

void write_sync_state(const fs::path& dir, int64_t synced_lines, bool complete) {
  write_file_atomically(dir / "sync.json",
                        json{{"history_lines", synced_lines}, {"complete", complete}}.dump() + "\n");
}

}  // namespace trainhook::wandb
