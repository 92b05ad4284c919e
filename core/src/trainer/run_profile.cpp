#include "run_profile.hpp"

#include <trainhook/checkpoint/atomic_file.hpp>
#include <trainhook/distributed/data_parallel.hpp>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <stdexcept>

namespace trainhook {
namespace {
constexpr size_t kMaxSpansPerRank = 500'000;  // a trace's spans per rank; the totals count every call
}  // namespace

RunProfile::RunProfile(ProfileMode mode) : mode_(mode) {
  if (mode_ == ProfileMode::none) return;
  profiler_ = std::make_unique<Profiler>(/*keep_spans=*/mode_ != ProfileMode::simple, kMaxSpansPerRank);
  Profiler& p = *profiler_;
  actions_.get_train_batch = p.action("get_train_batch");
  actions_.training_step = p.action("training_step");
  actions_.forward = p.action("forward");
  actions_.backward = p.action("backward");
  actions_.gradient_reduction = p.action("gradient_reduction");
  actions_.optimizer_step = p.action("optimizer_step");
  actions_.agree_on_control = p.action("agree_on_control");
  actions_.evaluate = p.action("evaluate");
  actions_.save_checkpoint = p.action("save_checkpoint");
  actions_.write_checkpoint = p.action("write_checkpoint");
  actions_.rotate_checkpoints = p.action("rotate_checkpoints");
}

RunProfile::~RunProfile() = default;

void RunProfile::start() {
  if (!profiler_) return;
  profiler_->name_this_thread("training");
  start_ = Profiler::Clock::now();
  if (mode_ == ProfileMode::ops) ops_ = OperatorProfile::start();
}

void RunProfile::finish(distributed::DataParallel& ranks, const std::string& output_dir) {
  if (!profiler_) return;
  const auto run = Profiler::Clock::now() - start_;
  const int rank = ranks.rank();
  const std::filesystem::path out(output_dir);
  if (ops_) {
    // Every rank its own file: the operator traces are LibTorch's, per process.
    const auto file = out / ("ops_trace_rank" + std::to_string(rank) + ".json");
    try {
      std::filesystem::create_directories(out);
      const std::string which = ops_->save(file.string());
      spdlog::info("--profile ops: {} wrote the operator profile of rank {} to {}", which, rank, file.string());
    } catch (const std::exception& e) {
      spdlog::warn("--profile ops: the operator profile of rank {} was not written to {}: {}", rank,
                   file.string(), e.what());
    }
    ops_.reset();
  }
  nlohmann::json part = profiler_->summary(std::chrono::duration_cast<std::chrono::nanoseconds>(run));
  part["rank"] = rank;
  const bool trace = mode_ != ProfileMode::simple;
  if (trace) {
    part["trace_events"] = profiler_->trace_events(rank, "rank " + std::to_string(rank));
    part["spans_left_out"] = profiler_->spans_left_out();
  }
  const std::vector<std::string> parts = ranks.gather_strings(part.dump(), "the profile");
  if (rank != 0) return;

  nlohmann::json profile = {{"mode", enum_name(mode_)}, {"world_size", parts.size()}};
  nlohmann::json trace_doc = {{"traceEvents", nlohmann::json::array()}, {"displayTimeUnit", "ms"}};
  nlohmann::json& events = trace_doc["traceEvents"];
  nlohmann::json& by_rank = profile["ranks"] = nlohmann::json::array();
  for (const std::string& text : parts) {
    nlohmann::json r = nlohmann::json::parse(text);
    if (trace) {
      for (auto& e : r["trace_events"]) events.push_back(std::move(e));
      if (const size_t left = r["spans_left_out"].get<size_t>(); left > 0)
        spdlog::warn("--profile trace: rank {} kept its first {} spans; {} more are in profile.json's totals only",
                     r["rank"].get<int>(), kMaxSpansPerRank, left);
      r.erase("trace_events");
    }
    by_rank.push_back(std::move(r));
  }
  spdlog::info("{}", Profiler::table(by_rank[0], "Profiler report (rank 0 of " + std::to_string(parts.size()) +
                                                     "; every rank in " + (out / "profile.json").string() + ")"));
  try {
    write_text_atomically(out / "profile.json", profile.dump(2) + "\n");
    if (trace) {
      write_text_atomically(out / "trace.json", trace_doc.dump() + "\n");
      spdlog::info("--profile {}: Chrome trace of {} rank(s) in {} (open it in Perfetto or chrome://tracing)",
                   enum_name(mode_), parts.size(), (out / "trace.json").string());
    }
  } catch (const std::exception& e) {
    // The run's results are saved already: a profile that cannot be written is reported, not fatal.
    spdlog::warn("--profile: {}", e.what());
  }
}

}  // namespace trainhook
