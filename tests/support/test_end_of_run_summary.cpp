#include <doctest/doctest.h>
#include <trainhook/support/end_of_run_summary.hpp>

#include <string>
#include <utility>
#include <vector>

using trainhook::support::describe_failure;
using trainhook::support::describe_run_end;
using trainhook::support::end_of_run_needs_attention;
using trainhook::support::EndOfRunSummary;
using trainhook::support::format_end_of_run;
using trainhook::support::run_status_name;
using trainhook::support::RunEnd;
using trainhook::support::RunOutcome;

TEST_CASE("a delivered run says its id and status and that nothing waits") {
  EndOfRunSummary s;
  s.integration = "MLflow";
  s.run = "3f2a";
  s.status = "FINISHED";
  s.delivered = 49;
  CHECK(format_end_of_run(s) == "MLflow run 3f2a FINISHED: 49 records delivered, 0 spooled");
  CHECK_FALSE(end_of_run_needs_attention(s));
}

TEST_CASE("spooled records name the spool and how to send them") {
  EndOfRunSummary s;
  s.integration = "wandb";
  s.run = "abc";
  s.status = "FAILED";
  s.failure = "error at step 7: boom\nsecond line";
  s.unit = "history lines";
  s.delivered = 3;
  s.spooled = 4;
  s.spool_path = "/out/wandb/offline-run-abc";
  s.resend = "`trainhook wandb-sync /out/wandb/offline-run-abc`";
  CHECK(format_end_of_run(s) ==
        "wandb run abc FAILED (error at step 7: boom ...): 3 history lines delivered, 4 spooled in "
        "/out/wandb/offline-run-abc; send them later: `trainhook wandb-sync /out/wandb/offline-run-abc`");
  CHECK(end_of_run_needs_attention(s));
}

TEST_CASE("no run says why and keeps the training status") {
  EndOfRunSummary s;
  s.integration = "MLflow";
  s.no_run_reason = "the server answered with a body that is not JSON";
  s.status = "KILLED";
  s.spooled = 49;
  s.spool_path = "/o/unassigned.jsonl";
  s.resend = "the next run with this output_dir delivers them";
  const std::string line = format_end_of_run(s);
  CHECK(line ==
        "MLflow run not created (the server answered with a body that is not JSON); training KILLED: 0 "
        "records delivered, 49 spooled in /o/unassigned.jsonl; send them later: the next run with this "
        "output_dir delivers them");
  CHECK(end_of_run_needs_attention(s));
}

TEST_CASE("lost records are counted with their reason and a finished run shows no failure") {
  EndOfRunSummary s;
  s.integration = "TensorBoard";
  s.run = "/logs/events.out.tfevents.1";
  s.status = "FINISHED";
  s.failure = "ignored for a finished run";
  s.unit = "events";
  s.delivered = 10;
  s.lost = 2;
  s.lost_reason = "the writer queue was full";
  s.note = "see above";
  CHECK(format_end_of_run(s) ==
        "TensorBoard run /logs/events.out.tfevents.1 FINISHED: 10 events delivered, 0 spooled; 2 lost (the "
        "writer queue was full); see above");
  CHECK(end_of_run_needs_attention(s));
}

TEST_CASE("spooled records without a known way to resend say so") {
  EndOfRunSummary s;
  s.integration = "flyte";
  s.run = "s3://b/p";
  s.status = "FAILED";
  s.spooled = 1;
  CHECK(format_end_of_run(s) ==
        "flyte run s3://b/p FAILED: 0 records delivered, 1 spooled; send them later: no way to resend them "
        "is known");
}

TEST_CASE("a run that did not finish needs attention even when all was delivered") {
  EndOfRunSummary s;
  s.integration = "wandb";
  s.run = "r";
  s.status = "KILLED";
  s.delivered = 5;
  CHECK(end_of_run_needs_attention(s));
  s.status = "FINISHED";
  CHECK_FALSE(end_of_run_needs_attention(s));
}

TEST_CASE("a failure reads as kind at step and message") {
  th_failure f{TH_FAILURE_STRUCT_SIZE, TH_FAILURE_PLUGIN, "callback 'boom' failed: on_log threw", 12};
  CHECK(describe_failure(f) == "plugin at step 12: callback 'boom' failed: on_log threw");
  f.kind = 99;  // a newer host's kind reads as a plain error
  f.message = nullptr;
  CHECK(describe_failure(f) == "error at step 12: ");
}

TEST_CASE("a run end reads as kind at step and message or the stopping signal") {
  RunEnd end{RunOutcome::failed};
  end.failure_kind = "out_of_memory";
  end.message = "CUDA out of memory";
  end.step = 40;
  CHECK(describe_run_end(end) == "out_of_memory at step 40: CUDA out of memory");
  end.step = -1;
  CHECK(describe_run_end(end) == "out_of_memory: CUDA out of memory");
  RunEnd stopped{RunOutcome::killed};
  stopped.stop_signal = 2;
  CHECK(describe_run_end(stopped) == "stopped by signal 2");
  CHECK(describe_run_end(RunEnd{RunOutcome::finished}).empty());
  CHECK(std::string(run_status_name(RunOutcome::finished)) == "FINISHED");
  CHECK(std::string(run_status_name(RunOutcome::failed)) == "FAILED");
  CHECK(std::string(run_status_name(RunOutcome::killed)) == "KILLED");
}

TEST_CASE("outcome names for prose and the queue-full reason every integration gives") {
  CHECK(std::string(trainhook::support::run_outcome_name(RunOutcome::finished)) == "finished");
  CHECK(std::string(trainhook::support::run_outcome_name(RunOutcome::killed)) == "killed");
  CHECK(std::string(trainhook::support::run_outcome_name(RunOutcome::failed)) == "failed");
  CHECK(trainhook::support::queue_full_reason(12, 100, "plugin_config wandb.queue_capacity") ==
        "12 dropped because the queue of 100 records was full; raise plugin_config wandb.queue_capacity");
  CHECK(trainhook::support::queue_full_reason(1, 5) == "1 dropped because the queue of 5 records was full");
}

TEST_CASE("log_end_of_run warns when the line needs attention or the caller says so") {
  std::vector<std::pair<trainhook::LogLevel, std::string>> logged;
  const trainhook::support::Logger log = [&](trainhook::LogLevel l, const std::string& m) {
    logged.emplace_back(l, m);
  };
  EndOfRunSummary s;
  s.integration = "flyte";
  s.run = "/dest";
  s.status = "FINISHED";
  s.unit = "uploads";
  s.delivered = 2;
  trainhook::support::log_end_of_run(log, s);
  trainhook::support::log_end_of_run(log, s, true);
  s.status = "KILLED";
  trainhook::support::log_end_of_run(log, s);
  REQUIRE(logged.size() == 3);
  CHECK(logged[0].first == trainhook::LogLevel::info);
  CHECK(logged[0].second == "flyte run /dest FINISHED: 2 uploads delivered, 0 spooled");
  CHECK(logged[1].first == trainhook::LogLevel::warn);
  CHECK(logged[2].first == trainhook::LogLevel::warn);
  trainhook::support::log_end_of_run(nullptr, s);  // an empty Logger drops the line
}
