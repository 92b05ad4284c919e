// trainhook train: HF's example-script flow (run_glue.py / run_clm.py) with the
// built-in models and data: parse and validate the arguments, check output_dir,
// seed, load data, build the model, then train / evaluate / predict and write
// the metrics. Torch-free translation unit: it sees the trainer through
// trainer.hpp only.
#include <trainhook/args/argument_parser.hpp>
#include <trainhook/args/hf_training_args.hpp>
#include <trainhook/args/path_arguments.hpp>
#include <trainhook/checkpoint/checkpoint_dirs.hpp>
#include <trainhook/checkpoint/checkpoint_io.hpp>
#include <trainhook/checkpoint/reproducibility.hpp>
#include <trainhook/checkpoint/resume_compatibility.hpp>
#include <trainhook/checkpoint/safetensors_io.hpp>
#include <trainhook/cli/commands.hpp>
#include <trainhook/data/data_files.hpp>
#include <trainhook/distributed/launch_env.hpp>
#include <trainhook/models/model_factory.hpp>
#include <trainhook/plugin_host/containment/plugin_exit_guard.hpp>
#include <trainhook/plugin_host/containment/process_containment.hpp>
#include <trainhook/plugin_host/containment/process_end.hpp>
#include <trainhook/trainer/device_placement.hpp>
#include <trainhook/trainer/evaluate_only_model.hpp>
#include <trainhook/trainer/label_metrics.hpp>
#include <trainhook/trainer/output_dir_lock.hpp>
#include <trainhook/trainer/signal_guard.hpp>
#include <trainhook/common/fatal_error_file.hpp>
#include <trainhook/common/requeue_signal.hpp>
#include <trainhook/trainer/trainer.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>

namespace fs = std::filesystem;

namespace trainhook::cli {
namespace {

// The lock file (output_dir_lock.hpp) does not count: this run made it, or
// an earlier run left it.
// What a start writes into output_dir before its first checkpoint: the lock,
// the arguments (HF's and ours, at train begin) and a checkpoint folder being
// written. A folder
// holding only these is a run killed before it saved anything, which the same
// command (a scheduler's retry) starts over rather than refuses.
bool start_file(const fs::path& name) {
  const std::string n = name.string();
  return n == kOutputDirLockFile || n == kTrainingArgsFile || n == kTrainhookArgsFile ||
         n.rfind("tmp-checkpoint-", 0) == 0;
}

bool non_empty_dir(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return false;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec))
    if (!start_file(it->path().filename())) return true;
  return false;
}

// Returns an error message, or "" when the combination of flags can run.
std::string check_tasks(const ParsedArguments& p) {
  const auto& t = p.training;
  if (!t.do_train && !t.do_eval && !t.do_predict) {
    return "nothing to do: pass --do_train, --do_eval and/or --do_predict";
  }
  if (!p.data.train_file) {
    return "--train_file is required (the model's classes or vocabulary come from it, even for --do_eval or "
           "--do_predict alone)";
  }
  if (t.do_eval && !p.data.validation_file && p.data.validation_split_percentage <= 0) {
    return "--do_eval needs --validation_file or --validation_split_percentage";
  }
  if (t.eval_strategy != IntervalStrategy::no && !p.data.validation_file &&
      p.data.validation_split_percentage <= 0) {
    return std::string("--eval_strategy ") + enum_name(t.eval_strategy) +
           " needs --validation_file or --validation_split_percentage";
  }
  if (t.do_predict && !p.data.test_file) return "--do_predict needs --test_file";
  return "";
}

// After a second signal: the callbacks heard on_exception; nothing else is
// run or destroyed (as the signal handler's _exit did before), the status is
// that of the signal.
[[noreturn]] void end_now(int sig) {
  spdlog::default_logger()->flush();
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(128 + sig);
}

// A run that ends by an error, from its first argument on: the message on
// stderr and, under torchrun, in its error file (its failure summary shows
// it, else only "To enable traceback see ..."); `hint` is a line for the
// console only. Returns `status`.
int fail_run(const std::string& message, int status, const char* hint = nullptr) {
  std::fprintf(stderr, "trainhook train: error: %s\n", message.c_str());
  if (hint) std::fprintf(stderr, "%s\n", hint);
  write_torchelastic_error_file(message, "trainhook train");
  return status;
}

// The final model, the train results and trainer_state.json in output_dir.
// A run that resumed at its end (already_complete) trained nothing: what an
// earlier start of the same run saved there is its result and stays byte for
// byte; only a file that start did not get to write is written.
void save_final(Trainer& trainer, const TrainingArguments& targs, const TrainOutput& result,
                const Metrics* train_metrics) {
  const fs::path dir(targs.output_dir);
  const bool keep = result.already_complete;
  const bool model_there =
      fs::exists(dir / kModelFile) && (!targs.save_safetensors || fs::exists(dir / kSafetensorsFile));
  if (!keep || !model_there) trainer.save_model();
  if (train_metrics && (!keep || !fs::exists(dir / "train_results.json"))) {
    trainer.log_metrics("train", *train_metrics);
    trainer.save_metrics("train", *train_metrics);
  }
  if (!keep || !fs::exists(dir / kTrainerStateFile)) trainer.save_state();
}

// Train, evaluate and predict as the arguments ask; 128 + signal after a
// first signal stopped training.
int run_phases(Trainer& trainer, const TrainingArguments& targs, const LoadedData& data) {
  if (targs.do_train) {
    const TrainOutput result = trainer.train();
    if (const int sig = SignalGuard::second_received()) end_now(sig);  // during on_train_end
    // Again, now that on_train_end is over: a callback may write the weights
    // there (abi.h: what it writes is what the final save holds; ema's
    // final_weights) and may have logged. The save before on_train_end stays
    // in place if this one never happens (temp + rename).
    save_final(trainer, targs, result, nullptr);
    if (const int sig = SignalGuard::received()) {
      const auto last = latest_checkpoint(targs.output_dir);
      std::fprintf(stderr,
                   "trainhook train: stopped by %s at step %lld: checkpoint %s, the model and train results "
                   "saved in %s; resume with --resume_from_checkpoint true\n",
                   SignalGuard::name(sig), static_cast<long long>(trainer.state().global_step),
                   last ? last->string().c_str() : "(none)", targs.output_dir.c_str());
      return 128 + sig;
    }
  } else {
    trainer.load_model(evaluate_only_model(targs));  // never a fresh model
  }
  if (targs.do_eval) {
    Metrics metrics = trainer.evaluate();
    metrics["eval_samples"] = static_cast<double>(data.validation_samples);
    trainer.log_metrics("eval", metrics);
    trainer.save_metrics("eval", metrics);
  }
  if (targs.do_predict) {
    Metrics metrics =
        trainer.predict_metrics(data.test, "test", fs::path(targs.output_dir) / "predict_results.txt");
    metrics["test_samples"] = static_cast<double>(data.test_samples);
    trainer.log_metrics("test", metrics);
    trainer.save_metrics("test", metrics);
  }
  if (const int sig = SignalGuard::received()) return 128 + sig;
  return 0;
}

// The end of a run that got as far as its Trainer: what was printed is
// flushed (a crash from here on ends the process with _exit), the callbacks
// are destroyed within --callback_end_timeout each (Trainer::end_callbacks),
// and what is left of the process (the plugin libraries' destructors run in
// exit()) gets the same bound. `complete`: every file the run writes is on
// disk, so a crash from here on (a plugin's destroy(), one of its threads, its
// library's destructors) is named with "the run's results are complete" and
// ends the process with `status`, never 128 + signal (docs/reliability.md).
int end_run(Trainer& trainer, const TrainingArguments& targs, int status, bool complete) {
  spdlog::default_logger()->flush();
  std::cout.flush();
  std::fflush(stdout);
  std::fflush(stderr);
  if (complete) mark_run_results_complete(targs.output_dir, status);
  trainer.end_callbacks(status);
  bound_process_end(targs.callback_end_timeout, "--callback_end_timeout", status);
  return status;
}

}  // namespace

int train_command(const std::vector<std::string>& args, const std::string& program_path) {
  // Before any file is opened: a closed stdin/stdout/stderr (a launcher's
  // `>&-`) would hand its number to the first data file, and the console
  // output would go into it.
  const std::vector<int> filled = reopen_closed_standard_descriptors();
  // A file that grows past RLIMIT_FSIZE (`ulimit -f`, a plugin's setrlimit)
  // fails with EFBIG, named with the limit (atomic_file.cpp), instead of
  // SIGXFSZ ending the run without a word.
  ignore_file_size_signal();
  ParsedArguments parsed;
  try {
    parsed = parse_train_arguments(args, program_path);
  } catch (const ArgumentError& e) {
    return fail_run(e.what(), 2, "(see trainhook train --help)");
  }
  if (parsed.help) {
    std::cout << train_help_text();
    return 0;
  }
  for (const auto& w : parsed.warnings) spdlog::warn("{}", w);
  for (const int fd : filled)
    spdlog::warn("descriptor {} ({}) was closed when trainhook started; it now points at /dev/null", fd,
                 standard_descriptor_name(fd));
  // Once, before any plugin is created: a plugin's chdir() cannot move the
  // run's files (path_arguments.hpp).
  if (!make_path_arguments_absolute(parsed))
    spdlog::warn("cannot read the current working directory ({}); relative paths stay relative",
                 std::strerror(errno));
  if (const std::string problem = check_tasks(parsed); !problem.empty()) return fail_run(problem, 2);
  TrainingArguments& targs = parsed.training;
  // Under torchrun / srun / trainhook launch: this process's rank and the
  // world size come from the environment (the Trainer joins the group).
  distributed::LaunchEnv launch;
  try {
    launch = distributed::apply_launch_env(targs);
    (void)distributed::gloo_socket_interfaces();  // a bad interface name now, not at the rendezvous
  } catch (const std::runtime_error& e) {
    return fail_run(std::string("launcher environment: ") + e.what(), 2);
  }
  if (!launch.run_id.empty() || launch.restart_count >= 0) {
    // Which attempt of an elastic job wrote these logs: a restart resumes from the last checkpoint.
    spdlog::info("torchrun: run id {}, restart {} of at most {}", launch.run_id.empty() ? "(unset)" : launch.run_id,
                 launch.restart_count < 0 ? 0 : launch.restart_count,
                 launch.max_restarts < 0 ? std::string("(unset)") : std::to_string(launch.max_restarts));
  }
  // A device or precision this machine cannot serve (--fp16 without a GPU) is
  // an argument error, refused before any data is read; the Trainer asks again.
  try {
    (void)choose_device(targs);
  } catch (const ArgumentError& e) {
    return fail_run(e.what(), 2);
  }
  // HF's log_level_replica (default warning): only world rank 0 logs info.
  if (targs.process_index != 0 && spdlog::get_level() < spdlog::level::warn)
    spdlog::set_level(spdlog::level::warn);

  // One writer per output_dir: world rank 0 of a run that writes locks it
  // before anything else looks into it (the resume detection below), and holds
  // it until this command returns (the Trainer shares it).
  std::shared_ptr<OutputDirLock> output_dir_lock;
  if (targs.process_index == 0 && !output_dir_read_only(targs.do_train, targs.do_eval, targs.do_predict)) {
    try {
      output_dir_lock = OutputDirLock::acquire(targs.output_dir);
    } catch (const std::runtime_error& e) {
      return fail_run(e.what(), 1);
    }
  }

  // HF example scripts: a non-empty output_dir is an error unless told to
  // overwrite or resume; a checkpoint in it resumes training.
  if (targs.do_train && !targs.overwrite_output_dir && !targs.resume_from_checkpoint &&
      non_empty_dir(targs.output_dir)) {
    if (const auto last = latest_checkpoint(targs.output_dir)) {
      check_resume_compatibility(*last, to_json(targs), /*found_automatically=*/true);  // another run's?
      spdlog::info(
          "checkpoint detected, resuming training at {} (use --overwrite_output_dir to train from scratch)",
          last->string());
      targs.resume_from_checkpoint = last->string();
    } else {
      return fail_run("output_dir '" + targs.output_dir +
                          "' already exists and is not empty; use --overwrite_output_dir to write into it",
                      2);
    }
  }

  // From here to the return, a plugin that calls exit() or quick_exit() ends
  // the run with kPluginExitStatus and a message, not with its own status
  // (declared before the Trainer: its plugins' destroy() is covered too).
  PluginExitGuard plugin_exit_guard;
  set_seed(targs.seed, targs.full_determinism);
  const LoadedData data = load_data(parsed.data, static_cast<uint64_t>(targs.seed),
                                    real_valued_loss(parsed.model.loss), parsed.model.vocab_size);
  auto model = make_cli_model(parsed.model, parsed.data, data);

  TrainerOptions options;
  options.compute_metrics = label_metrics;
  options.gradient_reduction = parsed.model.ddp_gradient_reduction;          // --ddp_gradient_reduction
  options.model_config_json = model_config_json(parsed.model, parsed.data);  // config.json, checked on resume
  // the final model and train results are saved before on_train_end
  // (HF's scripts: after train() returns), so a plugin that hangs or exits
  // there cannot lose them.
  Trainer* trainer_ptr = nullptr;
  options.before_train_end = [&trainer_ptr, &data, &targs](const TrainOutput& result) {
    Metrics metrics = result.metrics;
    metrics["train_samples"] = static_cast<double>(data.train_samples);
    save_final(*trainer_ptr, targs, result, &metrics);
  };
  Trainer trainer(model, targs, data.train, data.validation, std::move(options));
  trainer_ptr = &trainer;

  // the first SIGINT/SIGTERM finishes the step, saves a checkpoint and stops;
  // a second one ends the run at the next event (after on_exception).
  // and so does --requeue_signal (validated: a signal or none), which then requeues the Slurm job.
  SignalGuard signals(std::max(0, requeue_signal_number(targs.requeue_signal)));
  int status = 0;
  try {
    status = run_phases(trainer, targs, data);
  } catch (const StoppedBySignal& e) {
    end_now(e.signal());
  } catch (const std::exception& e) {
    // Said here, as main() would, before the callbacks are ended (bounded).
    return end_run(trainer, targs, fail_run(e.what(), 1), /*complete=*/false);
  }
  if (SignalGuard::requeue_requested()) {
    // Slurm's `--signal=USR1@90`: the checkpoint is saved; the job goes back
    // to the queue and resumes from it (docs/distributed.md).
    const auto outcome = distributed::requeue_slurm_job(launch, targs.process_index);
    std::fprintf(stderr, "trainhook train: %s%s\n", outcome.message.c_str(),
                 outcome.requeued ? "; exit status 75" : "");
    if (outcome.requeued) status = kRequeuedExitStatus;
  }
  return end_run(trainer, targs, status, /*complete=*/true);
}

}  // namespace trainhook::cli
