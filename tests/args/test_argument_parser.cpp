// parse_train_arguments / validate / train_help_text: flags, JSON and YAML
// config files, args files, precedence, lists, plugin_config, unsupported HF
// arguments and every validation message.
#include <trainhook/args/argument_parser.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <temp_dir.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using trainhook::ArgumentError;
using trainhook::parse_train_arguments;
using trainhook::ParsedArguments;
using trainhook::TrainingArguments;
using trainhook::testkit::TempDir;

namespace {

std::string write_file(const fs::path& path, const std::string& text) {
  std::ofstream(path) << text;
  return path.string();
}

ParsedArguments parse(const std::vector<std::string>& args) {
  return parse_train_arguments(args, "trainhook");
}

// The ArgumentError message of parse(args); fails the test when it parses.
std::string error_of(const std::vector<std::string>& args, const std::string& program = "trainhook") {
  try {
    parse_train_arguments(args, program);
  } catch (const ArgumentError& e) {
    return e.what();
  }
  FAIL("expected an ArgumentError");
  return {};
}

std::string validate_error(TrainingArguments a) {
  try {
    trainhook::validate(a);
  } catch (const ArgumentError& e) {
    return e.what();
  }
  FAIL("expected an ArgumentError from validate()");
  return {};
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace

TEST_CASE("defaults are Hugging Face's and pass validation") {
  const auto p = parse({});
  CHECK(p.training.output_dir == "trainer_output");
  CHECK(p.training.run_name == "trainer_output");
  CHECK(p.training.learning_rate == doctest::Approx(5e-5));
  CHECK(p.training.per_device_train_batch_size == 8);
  CHECK(p.training.num_train_epochs == 3.0);
  CHECK(p.training.max_steps == -1);
  CHECK(p.training.save_strategy == trainhook::SaveStrategy::steps);
  CHECK(p.training.eval_strategy == trainhook::IntervalStrategy::no);
  CHECK_FALSE(p.training.eval_steps.has_value());
  CHECK_FALSE(p.training.metric_for_best_model.has_value());
  CHECK(p.training.report_to == std::vector<std::string>{"none"});
  CHECK(p.model.model == "mlp");
  CHECK(p.data.label_column == "last");
  CHECK(p.warnings.empty());
  CHECK_FALSE(p.help);
}

TEST_CASE("flags: --name value, --name=value, dashes, negative numbers, repeated scalars") {
  const auto p = parse({"--output_dir",
                        "out",
                        "--learning-rate=0.001",
                        "--max_steps",
                        "-1",
                        "--num_train_epochs",
                        "0.5",
                        "--seed",
                        "7",
                        "--seed",
                        "9",
                        "--model",
                        "cnn",
                        "--train_file",
                        "a.csv",
                        "--dropout",
                        "0.25",
                        "--image_size",
                        "8",
                        "--save_total_limit",
                        "2"});
  CHECK(p.training.output_dir == "out");
  CHECK(p.training.learning_rate == doctest::Approx(0.001));
  CHECK(p.training.num_train_epochs == doctest::Approx(0.5));
  CHECK(p.training.seed == 9);  // the last one wins
  CHECK(p.training.save_total_limit == 2);
  CHECK(p.model.model == "cnn");
  CHECK(p.model.dropout == doctest::Approx(0.25));
  CHECK(p.data.train_file == "a.csv");
  CHECK(p.data.image_size == 8);
}

TEST_CASE("booleans: bare flag, literals, =value, and the next flag is not swallowed") {
  auto p = parse({"--do_train", "--do_eval", "false", "--overwrite_output_dir", "yes",
                  "--logging_first_step=1", "--disable_tqdm", "NO", "--full_determinism", "--seed", "3"});
  CHECK(p.training.do_train);
  CHECK_FALSE(p.training.do_eval);
  CHECK(p.training.overwrite_output_dir);
  CHECK(p.training.logging_first_step);
  CHECK_FALSE(p.training.disable_tqdm);
  CHECK(p.training.full_determinism);
  CHECK(p.training.seed == 3);

  p = parse({"--greater_is_better", "false", "--logging_nan_inf_filter", "0"});
  CHECK(p.training.greater_is_better == false);
  CHECK_FALSE(p.training.logging_nan_inf_filter);

  const std::string e = error_of({"--do_train=maybe"});
  CHECK(contains(e, "--do_train"));
  CHECK(contains(e, "expected a boolean"));
}

TEST_CASE("a bad value names the flag and what was expected") {
  std::string e = error_of({"--learning_rate", "fast"});
  CHECK(contains(e, "--learning_rate"));
  CHECK(contains(e, "expected a number"));
  e = error_of({"--per_device_train_batch_size", "8.5"});
  CHECK(contains(e, "--per_device_train_batch_size"));
  CHECK(contains(e, "expected an integer"));
  e = error_of({"--learning_rate", "nan"});
  CHECK(contains(e, "finite"));
  e = error_of({"--seed"});
  CHECK(contains(e, "--seed expects a value"));
  e = error_of({"--report_to"});
  CHECK(contains(e, "--report_to expects one or more values"));
  e = error_of({"positional"});
  CHECK(contains(e, "unexpected argument 'positional'"));
  e = error_of({"-x"});
  CHECK(contains(e, "unexpected argument '-x'"));
}

TEST_CASE("unknown flag: named, with the closest valid name") {
  std::string e = error_of({"--lerning_rate", "0.1"});
  CHECK(contains(e, "--lerning_rate"));
  CHECK(contains(e, "did you mean 'learning_rate'"));
  e = error_of({"--eval_stratgy=steps"});
  CHECK(contains(e, "--eval_stratgy"));
  CHECK(contains(e, "did you mean 'eval_strategy'"));
  e = error_of({"--zzzzzzzzzzzz"});
  CHECK(contains(e, "unknown argument --zzzzzzzzzzzz"));
  CHECK_FALSE(contains(e, "did you mean"));
  // No prefix guessing: --learning is not --learning_rate.
  e = error_of({"--learning", "0.1"});
  CHECK(contains(e, "unknown argument --learning"));
}

TEST_CASE("--help anywhere wins, even over bad arguments") {
  CHECK(parse({"--help"}).help);
  CHECK(parse({"--bogus", "-h"}).help);
}

TEST_CASE("lists: comma-separated, repeated, multiple values") {
  auto p = parse({"--report_to", "tensorboard,mlflow", "--report_to", "wandb", "--callbacks", "a", "b",
                  "--plugin_dir", "/x", "--plugin-dir=/y"});
  CHECK(p.training.report_to == std::vector<std::string>{"tensorboard", "mlflow", "wandb"});
  CHECK(p.training.callbacks == std::vector<std::string>{"a", "b"});
  CHECK(p.training.plugin_dir == std::vector<std::string>{"/x", "/y"});
  p = parse({"--report_to", "all"});
  CHECK(p.training.report_to == std::vector<std::string>{"all"});
  std::string e = error_of({"--report_to", "none,tensorboard"});
  CHECK(contains(e, "--report_to"));
  CHECK(contains(e, "'none' cannot be combined"));
  e = error_of({"--report_to", "all", "mlflow"});
  CHECK(contains(e, "'all' cannot be combined"));
  e = error_of({"--callbacks", "a,,b"});
  CHECK(contains(e, "--callbacks"));
  CHECK(contains(e, "empty name"));
}

TEST_CASE("plugin_config: flags, JSON values, nesting, merge with the file") {
  const TempDir scratch("trainhook_args");
  const fs::path& dir = scratch.path;
  const std::string cfg = write_file(dir / "c.json", R"({"plugin_config": {"early_stopping": {"patience": 1,
      "threshold": 0.5}, "tensorboard": {"flush": true}}})");
  const auto p =
      parse({"--config", cfg, "--plugin_config", "early_stopping.patience=3", "--plugin_config",
             "mlflow.tags={\"team\": \"ml\"}", "--plugin_config", "mlflow.experiment=demo run",
             "--plugin_config", "http.retry.max=5", "--plugin_config", "tensorboard={\"dir\": \"tb\"}"});
  const auto& pc = p.training.plugin_config;
  CHECK(pc["early_stopping"]["patience"] == 3);     // flag wins
  CHECK(pc["early_stopping"]["threshold"] == 0.5);  // kept from the file
  CHECK(pc["mlflow"]["tags"]["team"] == "ml");      // parsed as JSON
  CHECK(pc["mlflow"]["experiment"] == "demo run");  // not JSON: a string
  CHECK(pc["http"]["retry"]["max"] == 5);           // dotted key: nested
  CHECK(pc["tensorboard"]["flush"] == true);        // merged, not replaced
  CHECK(pc["tensorboard"]["dir"] == "tb");

  std::string e = error_of({"--plugin_config", "early_stopping.patience"});
  CHECK(contains(e, "--plugin_config"));
  CHECK(contains(e, "no '='"));
  e = error_of({"--plugin_config", "early_stopping=3"});
  CHECK(contains(e, "name.key=value"));
  e = error_of({"--plugin_config", ".patience=3"});
  CHECK(contains(e, "empty name"));
  const std::string bad = write_file(dir / "bad.json", R"({"plugin_config": {"early_stopping": 3}})");
  e = error_of({"--config", bad});
  CHECK(contains(e, "bad.json"));
  CHECK(contains(e, "plugin_config"));
  CHECK(contains(e, "early_stopping"));
}

TEST_CASE("JSON config file: values, types, precedence under flags") {
  const TempDir scratch("trainhook_args");
  const fs::path& dir = scratch.path;
  const std::string cfg = write_file(dir / "train.json", R"({
    "output_dir": "from_file", "learning_rate": 0.01, "per_device_train_batch_size": "16",
    "do_train": true, "report_to": ["tensorboard"], "callbacks": "a,b", "eval_steps": null,
    "model": "char_transformer", "block_size": 32, "csv_header": "yes", "seed": 5})");
  auto p = parse({"--config", cfg});
  CHECK(p.training.output_dir == "from_file");
  CHECK(p.training.learning_rate == doctest::Approx(0.01));
  CHECK(p.training.per_device_train_batch_size == 16);
  CHECK(p.training.do_train);
  CHECK(p.training.report_to == std::vector<std::string>{"tensorboard"});
  CHECK(p.training.callbacks == std::vector<std::string>{"a", "b"});
  CHECK(p.model.model == "char_transformer");
  CHECK(p.data.block_size == 32);
  CHECK(p.data.csv_header);

  p = parse({"--seed", "11", "--config", cfg, "--report_to", "mlflow"});
  CHECK(p.training.seed == 11);                                       // flag > file
  CHECK(p.training.report_to == std::vector<std::string>{"mlflow"});  // a list is replaced
  CHECK(p.training.output_dir == "from_file");
}

TEST_CASE("config file errors name the file, the key and the closest name") {
  const TempDir scratch("trainhook_args");
  const fs::path& dir = scratch.path;
  std::string e = error_of({"--config", write_file(dir / "a.json", R"({"learning_rat": 0.1})")});
  CHECK(contains(e, "a.json"));
  CHECK(contains(e, "unknown key 'learning_rat'"));
  CHECK(contains(e, "did you mean 'learning_rate'"));
  e = error_of({"--config", write_file(dir / "b.json", R"({"learning_rate": "fast"})")});
  CHECK(contains(e, "b.json: key 'learning_rate': expected a number"));
  e = error_of({"--config", write_file(dir / "c.json", "{\"seed\": 1,\n \"x\": }")});
  CHECK(contains(e, "c.json: invalid JSON"));
  CHECK(contains(e, "line 2"));
  e = error_of({"--config", write_file(dir / "d.json", "[1, 2]")});
  CHECK(contains(e, "d.json: expected a JSON object"));
  e = error_of({"--config", write_file(dir / "e.toml", "seed = 1")});
  CHECK(contains(e, "expected a .json, .yaml or .yml file"));
  e = error_of({"--config", (dir / "missing.json").string()});
  CHECK(contains(e, "cannot read"));
  CHECK(contains(e, "missing.json"));
  e = error_of({"--config", write_file(dir / "f.json", R"({"config": "other.json"})")});
  CHECK(contains(e, "'config' is not allowed in a config file"));
  e = error_of({"--config", write_file(dir / "g.yaml", "seed: 1\nlerning_rate: 0.1\n")});
  CHECK(contains(e, "g.yaml:2: unknown key 'lerning_rate'"));
  CHECK(contains(e, "did you mean 'learning_rate'"));
  e = error_of({"--config", write_file(dir / "h.yaml", "seed: 1\nmax_steps: many\n")});
  CHECK(contains(e, "h.yaml:2: key 'max_steps': expected an integer"));
}

TEST_CASE("YAML config file: scalars, lists, nesting, comments") {
  const TempDir scratch("trainhook_args");
  const fs::path& dir = scratch.path;
  const std::string cfg = write_file(dir / "train.yaml", R"(---
# a comment
output_dir: "runs/yaml #1"   # trailing comment
learning_rate: 5e-4
num_train_epochs: 2.5
do_train: true
run_name: 'it''s mine'
save_total_limit: ~
report_to: [tensorboard, "mlflow"]
callbacks:
  - progress
  - early_stopping
plugin_dir:
- /opt/plugins
plugin_config:
  early_stopping:
    patience: 3
    threshold: 0.01
  mlflow: {experiment: demo, nested: {a: 1}}
metric_for_best_model: eval_loss
label_column: label
)");
  const auto p = parse({"--config", cfg});
  CHECK(p.training.output_dir == "runs/yaml #1");
  CHECK(p.training.learning_rate == doctest::Approx(5e-4));
  CHECK(p.training.num_train_epochs == doctest::Approx(2.5));
  CHECK(p.training.do_train);
  CHECK(p.training.run_name == "it's mine");
  CHECK_FALSE(p.training.save_total_limit.has_value());
  CHECK(p.training.report_to == std::vector<std::string>{"tensorboard", "mlflow"});
  CHECK(p.training.callbacks == std::vector<std::string>{"progress", "early_stopping"});
  CHECK(p.training.plugin_dir == std::vector<std::string>{"/opt/plugins"});
  CHECK(p.training.plugin_config["early_stopping"]["patience"] == 3);
  CHECK(p.training.plugin_config["early_stopping"]["threshold"] == doctest::Approx(0.01));
  CHECK(p.training.plugin_config["mlflow"]["experiment"] == "demo");
  CHECK(p.training.plugin_config["mlflow"]["nested"]["a"] == 1);
  CHECK(p.data.label_column == "label");
  // .yml works too
  CHECK(parse({"--config", write_file(dir / "t.yml", "seed: 4\n")}).training.seed == 4);
  // An empty file is an empty mapping.
  CHECK(parse({"--config", write_file(dir / "empty.yaml", "# nothing\n")}).training.seed == 42);
}

TEST_CASE("YAML config file: anchors, merge keys, block scalars, lists of mappings") {
  const TempDir scratch("trainhook_args");
  const fs::path& dir = scratch.path;
  const std::string cfg = write_file(dir / "full.yaml", R"(output_dir: &out runs/anchored
run_name: *out
plugin_config:
  base: &base {patience: 3, threshold: 0.5}
  early_stopping:
    <<: *base
    threshold: 0.01
  mlflow:
    <<: [{extra: 1, patience: 9}, *base]
  notes:
    text: |
      line one
      line two
    folded: >
      folded
      text
    stripped: |-
      no newline
  hooks:
    steps:
      - name: a
        every: 2
      - name: b
max_steps: 7
)");
  const auto p = parse({"--config", cfg});
  CHECK(p.training.output_dir == "runs/anchored");
  CHECK(p.training.run_name == "runs/anchored");  // alias
  const auto& pc = p.training.plugin_config;
  // Merge key: the mapping's own keys win over merged ones.
  CHECK(pc["early_stopping"] == nlohmann::json({{"patience", 3}, {"threshold", 0.01}}));
  // A list of merged mappings: the earlier one wins.
  CHECK(pc["mlflow"] == nlohmann::json({{"extra", 1}, {"patience", 9}, {"threshold", 0.5}}));
  CHECK(pc["notes"]["text"] == "line one\nline two\n");
  CHECK(pc["notes"]["folded"] == "folded text\n");
  CHECK(pc["notes"]["stripped"] == "no newline");
  CHECK(pc["hooks"]["steps"] == nlohmann::json::parse(R"([{"name": "a", "every": 2}, {"name": "b"}])"));
  CHECK(p.training.max_steps == 7);
  // Lines stay right after a block scalar.
  CHECK(
      contains(error_of({"--config", write_file(dir / "b.yaml", "run_name: |\n  a\n  b\nmax_steps: many\n")}),
               "b.yaml:4: key 'max_steps': expected an integer"));
}

TEST_CASE("YAML config file: YAML 1.2 typing of plain and quoted scalars") {
  const TempDir scratch("trainhook_args");
  const fs::path& dir = scratch.path;
  const std::string cfg = write_file(dir / "types.yaml", R"(run_name: "3"
seed: 5
plugin_config:
  t:
    int: 3
    quoted_int: "3"
    float: 1.5
    quoted_float: '1.5'
    exp: 5e-5
    hex: 0x1F
    octal: 0o17
    plain_true: true
    quoted_true: "true"
    yes_word: yes
    off_word: off
    plain_null: null
    tilde: ~
    empty:
    quoted_null: "null"
    tagged_str: !!str 12
    tagged_float: !!float 3
    underscores: 1_000
)");
  const auto p = parse({"--config", cfg});
  CHECK(p.training.run_name == "3");
  CHECK(p.training.seed == 5);
  const auto& t = p.training.plugin_config["t"];
  CHECK(t["int"] == 3);
  CHECK(t["int"].is_number_integer());
  CHECK(t["quoted_int"] == "3");
  CHECK(t["float"] == 1.5);
  CHECK(t["quoted_float"] == "1.5");
  CHECK(t["exp"] == doctest::Approx(5e-5));
  CHECK(t["hex"] == 31);
  CHECK(t["octal"] == 15);
  CHECK(t["plain_true"] == true);
  CHECK(t["quoted_true"] == "true");
  // YAML 1.1's yes/no/on/off are plain strings in YAML 1.2.
  CHECK(t["yes_word"] == "yes");
  CHECK(t["off_word"] == "off");
  CHECK(t["plain_null"].is_null());
  CHECK(t["tilde"].is_null());
  CHECK(t["empty"].is_null());
  CHECK(t["quoted_null"] == "null");
  CHECK(t["tagged_str"] == "12");
  CHECK(t["tagged_float"].is_number_float());
  CHECK(t["underscores"] == "1_000");
}

TEST_CASE("YAML errors carry file:line") {
  const TempDir scratch("trainhook_args");
  const fs::path& dir = scratch.path;
  struct Case {
    const char* file;
    const char* text;
    const char* message;
  };
  const Case cases[] = {
      // Syntax errors (yaml-cpp's message, our file:line).
      {"a.yaml", "seed: 1\n\tmax_steps: 2\n",
       "a.yaml:2: invalid YAML: illegal tab when looking for indentation"},
      {"e.yaml", "seed: 1\n  max_steps: 2\n", "e.yaml:2: invalid YAML: illegal map value"},
      {"g.yaml", "seed: 1\nreport_to: [a, b\nmax_steps: 3\n",
       "g.yaml:3: invalid YAML: end of sequence flow not found"},
      {"j.yaml", "seed: 1\nmax_steps: *x\n", "j.yaml:2: invalid YAML: the referenced anchor is not defined"},
      // yaml-cpp itself accepts a quote still open at the end of the file.
      {"d.yaml", "seed: 1\nrun_name: \"open\nmax_steps: 2\n", "d.yaml:2: unterminated double quote"},
      {"d2.yaml", "run_name: 'it''s open\n", "d2.yaml:1: unterminated single quote"},
      // Duplicate keys (yaml-cpp keeps both), at any depth.
      {"b.yaml", "seed: 1\nseed: 2\n", "b.yaml:2: duplicate key 'seed' (first at line 1)"},
      {"b2.yaml", "plugin_config:\n  a:\n    x: 1\n\n    x: 2\n",
       "b2.yaml:5: duplicate key 'plugin_config.a.x' (first at line 3)"},
      // Structure.
      {"c.yaml", "seed 1\n", "c.yaml:1: the top level must be a mapping"},
      {"i.yaml", "- a\n- b\n",
       "i.yaml:1: the top level must be a mapping of `name: value` lines, not a list"},
      {"k.yaml", "seed: 1\n---\nseed: 2\n", "k.yaml:2: more than one YAML document"},  // the second ---
      // yaml-cpp 0.7's LoadAll never returned on these (fuzz/corpus/yaml_config/loadall_stray_comma.yaml).
      {"p.yaml", ",", "p.yaml:1: a ',' outside [ ] or { } (column 1)"},
      {"p2.yaml", "\"a\",", "p2.yaml:1: a ',' outside [ ] or { }"},
      // A merge key that merges its own anchor: a cycle (fuzz/corpus/yaml_config/merge_own_anchor.yaml).
      {"q.yaml", "d: &d\n  <<: *d\n  y: 1\n", "q.yaml:1: values nested more than 64 levels deep"},
      {"q2.yaml",
       "x: "
       "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
       "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n",
       "q2.yaml:1: values nested more than 64 levels deep"},
      {"n.yaml", "? [a]\n: 1\n", "n.yaml:1: a key must be a plain name"},
      {"m.yaml", "plugin_config: &s 1\nlogging_dir:\n  <<: *s\n",
       "m.yaml:3: a merge key (<<) takes a mapping or a list of mappings"},
      // Tags and types.
      {"t.yaml", "seed: 1\nmax_steps: !custom 1\n", "t.yaml:2: the tag '!custom' is not supported"},
      {"t2.yaml", "seed: !!int abc\n", "t2.yaml:1: 'abc' is not a valid !!int"},
      {"o.yaml", "seed: 99999999999999999999\n", "o.yaml:1: the number 99999999999999999999 is out of range"},
      {"h.yaml", "seed: 1\ncallbacks:\n  - name: x\n",
       "h.yaml:2: key 'callbacks': expected a list of strings"},
      {"l.yaml", "learning_rate: .inf\n", "l.yaml:1: key 'learning_rate': expected a finite"},
  };
  for (const auto& c : cases) {
    const std::string e = error_of({"--config", write_file(dir / c.file, c.text)});
    INFO(e);
    CHECK(contains(e, c.message));
  }
}

TEST_CASE("args files: <program>.args and --args_file, comments, quotes, precedence") {
  const TempDir scratch("trainhook_args");
  const fs::path& dir = scratch.path;
  fs::create_directories(dir / "bin");
  const std::string program = (dir / "bin" / "trainhook").string();
  write_file(
      dir / "bin" / "trainhook.args",
      "# site defaults\n--seed 1 --learning_rate 0.5\n--run_name \"site run\" --report_to tensorboard\n");
  auto p = parse_train_arguments({}, program);
  CHECK(p.training.seed == 1);
  CHECK(p.training.run_name == "site run");
  CHECK(p.training.report_to == std::vector<std::string>{"tensorboard"});

  const std::string cfg = write_file(dir / "c.yaml", "seed: 2\nlearning_rate: 0.25\nmax_steps: 10\n");
  const std::string extra = write_file(dir / "extra.args", "--seed 3  # comment\n--config " + cfg + "\n");
  // Defaults < <program>.args < --config < --args_file < command line.
  p = parse_train_arguments({"--args_file", extra}, program);
  CHECK(p.training.seed == 3);                               // args file over config
  CHECK(p.training.learning_rate == doctest::Approx(0.25));  // config over <program>.args
  CHECK(p.training.max_steps == 10);
  CHECK(p.training.run_name == "site run");
  p = parse_train_arguments({"--args_file", extra, "--seed", "4"}, program);
  CHECK(p.training.seed == 4);  // command line over everything

  // Errors name the args file and line.
  const std::string bad = write_file(dir / "bad.args", "--seed 1\n--sed 2\n");
  std::string e = error_of({"--args_file", bad});
  CHECK(contains(e, "--sed"));
  CHECK(contains(e, "bad.args:2"));
  CHECK(contains(e, "did you mean 'seed'"));
  const std::string nested = write_file(dir / "nested.args", "--args_file " + bad + "\n");
  e = error_of({"--args_file", nested});
  CHECK(contains(e, "cannot name another args file"));
  e = error_of({"--args_file", write_file(dir / "q.args", "--run_name \"open\n")});
  CHECK(contains(e, "q.args:1: unterminated double quote"));
  e = error_of({"--args_file", write_file(dir / "v.args", "--learning_rate x\n")});
  CHECK(contains(e, "--learning_rate (in "));
  CHECK(contains(e, "v.args:1"));
  e = error_of({"--args_file", (dir / "none.args").string()});
  CHECK(contains(e, "cannot read"));
}

TEST_CASE("unsupported Hugging Face arguments: errors with the reason, harmless ones warn") {
  std::string e = error_of({"--fp16_full_eval"});
  CHECK(contains(e, "--fp16_full_eval"));
  CHECK(contains(e, "not supported"));
  CHECK(contains(e, "autocast"));
  CHECK(contains(e, "set it to false"));
  e = error_of({"--push_to_hub", "true"});
  CHECK(contains(e, "--push_to_hub"));
  CHECK(contains(e, "Hub"));
  e = error_of({"--deepspeed", "ds.json"});
  CHECK(contains(e, "DeepSpeed"));
  e = error_of({"--gradient_checkpointing"});
  CHECK(contains(e, "gradient_checkpointing"));
  e = error_of({"--torch_compile"});
  CHECK(contains(e, "torch.compile"));
  e = error_of({"--evaluation_strategy", "steps"});
  CHECK(contains(e, "use --eval_strategy"));
  e = error_of({"--neftune_noise_alpha", "5"});
  CHECK(contains(e, "NEFTune"));

  auto p = parse({"--fp16", "false", "--use_cpu", "--hub_token", "secret", "--tf32=no", "--bf16_full_eval",
                  "false", "--dataloader_persistent_workers", "true", "--local_rank", "-1"});
  // --local_rank, --fp16 and --use_cpu are real arguments, not warnings.
  REQUIRE(p.warnings.size() == 4);
  CHECK(p.training.local_rank == -1);
  CHECK(p.training.use_cpu);
  CHECK_FALSE(p.training.fp16);
  CHECK(contains(p.warnings[0], "<HUB_TOKEN>"));  // credentials are never echoed (HF's placeholder)
  CHECK_FALSE(contains(p.warnings[0], "secret"));
  CHECK(contains(p.warnings[2], "--bf16_full_eval"));
  CHECK(contains(p.warnings[2], "ignored"));
  CHECK(contains(p.warnings[3], "dataloader_persistent_workers"));
  // Worker threads, prefetch depth, pinning, length grouping and eval_on_start are real arguments.
  const auto workers = parse({"--dataloader_num_workers", "2", "--dataloader_prefetch_factor", "3",
                              "--group_by_length", "--eval_on_start", "--token_dtype", "uint32"});
  CHECK(workers.warnings.empty());
  CHECK(workers.training.dataloader_num_workers == 2);
  CHECK(workers.training.dataloader_prefetch_factor == 3);
  CHECK(workers.training.group_by_length);
  CHECK(workers.training.eval_on_start);
  CHECK(workers.data.token_dtype == "uint32");
  CHECK(contains(error_of({"--dataloader_prefetch_factor", "2"}),
                 "only used with --dataloader_num_workers > 0"));
  CHECK(
      contains(error_of({"--token_dtype", "int8"}), "--token_dtype: expected uint16 or uint32, got 'int8'"));

  const TempDir scratch("trainhook_args");
  const fs::path& dir = scratch.path;
  p = parse(
      {"--config", write_file(dir / "hf.json", R"({"fp16": false, "bf16_full_eval": 0, "push_to_hub": false,
      "logging_dir": null, "remove_unused_columns": false})")});
  CHECK(p.warnings.size() == 4);
  CHECK(contains(p.warnings[0], "hf.json"));
  e = error_of({"--config", write_file(dir / "hf2.yaml", "seed: 1\nbf16_full_eval: true\n")});
  CHECK(contains(e, "hf2.yaml:2: key 'bf16_full_eval'"));
  CHECK(contains(e, "--bf16/--fp16 evaluate under autocast"));
  CHECK(parse({"--config", write_file(dir / "hf4.yaml", "bf16: true\n")}).training.bf16);
  p = parse({"--config", write_file(dir / "hf3.json", R"({"logging_dir": "tb"})")});
  REQUIRE(p.warnings.size() == 1);
  CHECK(contains(p.warnings[0], "TENSORBOARD_LOGGING_DIR"));
}

TEST_CASE("a Hugging Face training_args.json dump is accepted, its unsupported defaults only warn") {
  // Keys and default values as HF v5's TrainingArguments.to_dict() writes them.
  const TempDir scratch("trainhook_args");
  const fs::path& dir = scratch.path;
  const std::string dump = write_file(dir / "hf_training_args.json", R"({
    "output_dir": "hf_out", "per_device_train_batch_size": 8, "num_train_epochs": 3.0, "max_steps": -1,
    "learning_rate": 5e-05, "lr_scheduler_type": "linear", "lr_scheduler_kwargs": null, "warmup_steps": 0,
    "optim": "adamw_torch_fused", "optim_args": null, "weight_decay": 0.0, "adam_beta1": 0.9,
    "adam_beta2": 0.999, "adam_epsilon": 1e-08, "optim_target_modules": null, "gradient_accumulation_steps": 1,
    "average_tokens_across_devices": true, "max_grad_norm": 1.0, "label_smoothing_factor": 0.0, "bf16": false,
    "fp16": false, "bf16_full_eval": false, "fp16_full_eval": false, "tf32": null, "gradient_checkpointing": false,
    "gradient_checkpointing_kwargs": null, "torch_compile": false, "torch_compile_backend": null,
    "torch_compile_mode": null, "use_liger_kernel": false, "liger_kernel_config": null, "use_cache": false,
    "neftune_noise_alpha": null, "torch_empty_cache_steps": null, "auto_find_batch_size": false,
    "logging_strategy": "steps", "logging_steps": 500, "logging_first_step": false, "log_on_each_node": true,
    "logging_nan_inf_filter": true, "include_num_input_tokens_seen": "no", "log_level": "passive",
    "log_level_replica": "warning", "disable_tqdm": null, "report_to": [], "run_name": null,
    "project": "huggingface", "trackio_space_id": "trackio", "eval_strategy": "no", "eval_steps": null,
    "eval_delay": 0, "per_device_eval_batch_size": 8, "prediction_loss_only": false, "eval_on_start": false,
    "eval_do_concat_batches": true, "eval_use_gather_object": false, "eval_accumulation_steps": null,
    "include_for_metrics": [], "batch_eval_metrics": false, "save_only_model": false, "save_strategy": "steps",
    "save_steps": 500, "save_on_each_node": false, "save_total_limit": null, "enable_jit_checkpoint": false,
    "push_to_hub": false, "hub_token": "hf_real_token_value", "hub_private_repo": null, "hub_model_id": null,
    "hub_strategy": "every_save", "hub_always_push": false, "hub_revision": null, "load_best_model_at_end": false,
    "metric_for_best_model": null, "greater_is_better": null, "ignore_data_skip": false,
    "restore_callback_states_from_checkpoint": false, "full_determinism": false, "seed": 42, "data_seed": null,
    "use_cpu": false, "accelerator_config": {"split_batches": false, "dispatch_batches": null},
    "parallelism_config": null, "dataloader_drop_last": false, "dataloader_num_workers": 0,
    "dataloader_pin_memory": true, "dataloader_persistent_workers": false, "dataloader_prefetch_factor": null,
    "remove_unused_columns": true, "label_names": null, "train_sampling_strategy": "random",
    "length_column_name": "length", "ddp_find_unused_parameters": null, "ddp_bucket_cap_mb": null,
    "ddp_broadcast_buffers": null, "ddp_backend": null, "ddp_timeout": 1800, "fsdp": [],
    "fsdp_config": {"min_num_params": 0, "xla": false}, "deepspeed": null, "debug": [],
    "skip_memory_metrics": true, "do_train": false, "do_eval": false, "do_predict": false,
    "resume_from_checkpoint": null, "warmup_ratio": null, "logging_dir": null, "local_rank": -1})");
  const auto p = parse({"--config", dump});
  CHECK(p.training.output_dir == "hf_out");
  CHECK(p.training.optim == trainhook::OptimizerName::adamw_torch_fused);  // HF's default on torch >= 2.8
  CHECK(p.training.warmup_ratio == 0.0);                                   // null = not set
  CHECK_FALSE(p.training.disable_tqdm);
  CHECK(p.training.report_to == std::vector<std::string>{"none"});
  CHECK(p.warnings.size() > 20);  // every unsupported key is reported, none silently dropped
  for (const auto& w : p.warnings) CHECK_MESSAGE(contains(w, "ignored"), w);
  // A dump whose hub_token holds a real value: the value is never echoed.
  for (const auto& w : p.warnings) CHECK_FALSE(contains(w, "hf_real_token_value"));
  // A real argument now (the first SIGTERM's save), not an ignored one.
  CHECK_FALSE(p.training.enable_jit_checkpoint);
  for (const auto& w : p.warnings) CHECK_FALSE(contains(w, "enable_jit_checkpoint"));
}

TEST_CASE("enable_jit_checkpoint is accepted as HF gives it") {
  auto p = parse({"--enable_jit_checkpoint"});
  CHECK(p.training.enable_jit_checkpoint);
  CHECK(p.warnings.empty());
  p = parse({"--enable_jit_checkpoint", "false"});
  CHECK_FALSE(p.training.enable_jit_checkpoint);
  CHECK(p.warnings.empty());
  const TempDir scratch("trainhook_args");
  const fs::path& dir = scratch.path;
  p = parse({"--config", write_file(dir / "jit.json", R"({"enable_jit_checkpoint": true})")});
  CHECK(p.training.enable_jit_checkpoint);
  CHECK(p.warnings.empty());
  // Written back with the other arguments, so a resumed run compares it.
  CHECK(trainhook::to_json(p.training).at("enable_jit_checkpoint") == true);
  const std::string e = error_of({"--enable_jit_checkpoint=sometimes"});
  CHECK(contains(e, "--enable_jit_checkpoint"));
  CHECK(contains(e, "expected a boolean"));
}

TEST_CASE("validation: strategies and enumerations name the flag and suggest") {
  std::string e = error_of({"--eval_strategy", "step"});
  CHECK(contains(e, "--eval_strategy: expected one of no, steps, epoch, got 'step'"));
  CHECK(contains(e, "did you mean 'steps'"));
  e = error_of({"--save_strategy", "always"});
  CHECK(contains(e, "--save_strategy: expected one of no, steps, epoch, best"));
  e = error_of({"--logging_strategy", "epochs"});
  CHECK(contains(e, "--logging_strategy"));
  CHECK(contains(e, "did you mean 'epoch'"));
  e = error_of({"--lr_scheduler_type", "cosin"});
  CHECK(contains(e, "--lr_scheduler_type"));
  CHECK(contains(e, "did you mean 'cosine'"));
  e = error_of({"--optim", "adam"});
  CHECK(contains(e, "--optim: expected one of adamw_torch, adamw_torch_fused, sgd"));
  e = error_of({"--plugin_error_policy", "ignore"});
  CHECK(contains(e, "--plugin_error_policy: expected one of disable, fail"));
  CHECK(parse({"--optim", "adamw"}).training.optim == trainhook::OptimizerName::adamw_torch);
  CHECK(parse({"--optim", "sgd"}).training.optim == trainhook::OptimizerName::sgd);
  for (const char* s : {"linear", "cosine", "constant", "constant_with_warmup"})
    CHECK(trainhook::enum_name(parse({"--lr_scheduler_type", s}).training.lr_scheduler_type) ==
          std::string(s));
  CHECK(parse({"--optim", "adamw_torch_fused"}).training.optim ==
        trainhook::OptimizerName::adamw_torch_fused);
  CHECK(parse({"--ddp_backend", "gloo"}).training.ddp_backend == trainhook::DdpBackend::gloo);
  CHECK_FALSE(parse({"--ddp_backend", "none"}).training.ddp_backend.has_value());
  e = error_of({"--ddp_backend", "mpi"});
  CHECK(contains(e, "--ddp_backend: expected one of gloo, nccl, got 'mpi'"));
  // --ddp_gradient_reduction: the CLI's TrainerOptions::gradient_reduction.
  using trainhook::GradientReduction;
  CHECK(parse({}).model.ddp_gradient_reduction == GradientReduction::overlap_with_backward);
  CHECK(parse({"--ddp_gradient_reduction", "after_backward"}).model.ddp_gradient_reduction ==
        GradientReduction::after_backward);
  CHECK(parse({"--ddp_gradient_reduction", "overlap_with_backward"}).model.ddp_gradient_reduction ==
        GradientReduction::overlap_with_backward);
  e = error_of({"--ddp_gradient_reduction", "off"});
  CHECK(contains(e, "--ddp_gradient_reduction: expected one of overlap, after_backward, got 'off'"));
  // Names are parsed when read, so a config file's bad value names the file and key.
  const TempDir scratch("trainhook_args");
  const fs::path& dir = scratch.path;
  const std::string cfg = write_file(dir / "strategy.json", R"({"save_strategy": "epochs"})");
  e = error_of({"--config", cfg});
  CHECK(contains(e, cfg + ": key 'save_strategy': expected one of no, steps, epoch, best, got 'epochs'"));
  CHECK(contains(e, "did you mean 'epoch'"));
  e = error_of({"--config", write_file(dir / "strategy2.json", R"({"eval_strategy": 1})")});
  CHECK(contains(e, "key 'eval_strategy': expected one of no, steps, epoch, got 1"));
}

TEST_CASE("validation: ranges of numbers") {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--per_device_train_batch_size", "0"}, "--per_device_train_batch_size: expected a value >= 1, got 0"},
      {{"--per_device_eval_batch_size", "-2"}, "--per_device_eval_batch_size: expected a value >= 1"},
      {{"--gradient_accumulation_steps", "0"}, "--gradient_accumulation_steps: expected a value >= 1"},
      {{"--learning_rate", "-1"}, "--learning_rate: expected a value >= 0"},
      {{"--weight_decay", "-0.1"}, "--weight_decay: expected a value >= 0"},
      {{"--adam_beta1", "1"}, "--adam_beta1: expected a value in [0, 1)"},
      {{"--adam_beta2", "-0.5"}, "--adam_beta2: expected a value in [0, 1)"},
      {{"--adam_epsilon", "-1e-8"}, "--adam_epsilon: expected a value >= 0"},
      {{"--max_grad_norm", "-1"}, "--max_grad_norm: expected a value >= 0"},
      {{"--max_steps", "0"}, "--max_steps: expected a positive step count, or -1"},
      {{"--max_steps", "-5"}, "--max_steps: expected a positive step count"},
      {{"--num_train_epochs", "0"}, "--num_train_epochs: expected a value > 0 when --max_steps is not set"},
      {{"--warmup_ratio", "1.5"}, "--warmup_ratio: expected a value in [0, 1]"},
      {{"--warmup_steps", "-1"}, "--warmup_steps: expected a step count"},
      {{"--warmup_steps", "2.5"}, "--warmup_steps: must be a whole number when bigger than 1"},
      {{"--logging_steps", "10.5"}, "--logging_steps: must be a whole number"},
      {{"--logging_steps", "0"}, "--logging_strategy steps requires a non-zero --logging_steps"},
      {{"--eval_strategy", "steps", "--eval_steps", "7.5"}, "--eval_steps: must be a whole number"},
      {{"--eval_strategy", "steps", "--logging_strategy", "no", "--logging_steps", "0"},
       "--eval_strategy steps requires a non-zero --eval_steps or --logging_steps"},
      {{"--eval_strategy", "steps", "--logging_strategy", "epoch", "--logging_steps", "2.5"},
       "--logging_steps (the default of --eval_steps): must be a whole number"},
      {{"--eval_steps", "-1"}, "--eval_steps: expected a step count"},
      {{"--eval_delay", "-1"}, "--eval_delay: expected a value >= 0"},
      {{"--save_steps", "0"}, "--save_strategy steps requires a non-zero --save_steps"},
      {{"--save_steps", "-3"}, "--save_steps: expected a step count"},
      {{"--save_total_limit", "0"}, "--save_total_limit: expected a value >= 1"},
      {{"--world_size", "0"}, "--world_size: expected a value >= 1"},
      {{"--process_index", "2", "--world_size", "2"}, "--process_index: expected a value in [0, world_size)"},
      {{"--output_dir="}, "--output_dir: must not be empty"},
      {{"--metric_for_best_model="}, "--metric_for_best_model: must not be empty"},
      {{"--hidden_size", "0"}, "--hidden_size: expected a value >= 1"},
      {{"--num_layers", "0"}, "--num_layers: expected a value >= 1"},
      {{"--num_heads", "0"}, "--num_heads: expected a value >= 1"},
      {{"--dropout", "1"}, "--dropout: expected a probability in [0, 1)"},
      {{"--validation_split_percentage", "100"},
       "--validation_split_percentage: expected a value in [0, 100)"},
      {{"--block_size", "0"}, "--block_size: expected a value >= 1"},
      {{"--image_size", "0"}, "--image_size: expected a value >= 1"},
      {{"--label_column="}, "--label_column: must not be empty"},
      {{"--model="}, "--model: must not be empty"},
  };
  for (const auto& [args, expected] : cases) {
    INFO(args.front());
    const std::string e = error_of(args);
    CHECK_MESSAGE(contains(e, expected), e);
  }
}

TEST_CASE("validation: load_best_model_at_end, save_strategy best and the best-metric defaults") {
  std::string e = error_of({"--load_best_model_at_end", "--eval_strategy", "epoch"});
  CHECK(contains(e, "--load_best_model_at_end requires the save and eval strategy to match"));
  CHECK(contains(e, "--eval_strategy epoch and --save_strategy steps"));
  e = error_of(
      {"--load_best_model_at_end", "--eval_strategy", "steps", "--eval_steps", "30", "--save_steps", "50"});
  CHECK(contains(e, "--save_steps to be a multiple of --eval_steps"));
  CHECK(contains(e, "--save_steps 50 and --eval_steps 30"));
  e = error_of(
      {"--load_best_model_at_end", "--eval_strategy", "steps", "--eval_steps", "0.1", "--save_steps", "50"});
  CHECK(contains(e, "mixing a ratio and a step count"));
  e = error_of(
      {"--load_best_model_at_end", "--eval_strategy", "steps", "--eval_steps", "0.2", "--save_steps", "0.3"});
  CHECK(contains(e, "multiple of --eval_steps"));
  e = error_of({"--save_strategy", "best"});
  CHECK(contains(e, "--save_strategy best"));
  CHECK(contains(e, "requires --eval_strategy steps or epoch"));

  auto p = parse(
      {"--load_best_model_at_end", "--eval_strategy", "steps", "--eval_steps", "25", "--save_steps", "50"});
  CHECK(p.training.metric_for_best_model == "loss");
  CHECK(p.training.greater_is_better == false);
  p = parse(
      {"--load_best_model_at_end", "--eval_strategy", "steps", "--eval_steps", "0.1", "--save_steps", "0.2"});
  CHECK(p.training.eval_steps == doctest::Approx(0.1));  // ratios kept as given
  p = parse({"--load_best_model_at_end", "--eval_strategy", "epoch", "--save_strategy", "epoch",
             "--metric_for_best_model", "accuracy"});
  CHECK(p.training.greater_is_better == true);
  p = parse({"--save_strategy", "best", "--eval_strategy", "epoch"});
  CHECK(p.training.metric_for_best_model == "loss");
  p = parse({"--save_strategy", "best", "--eval_strategy", "steps", "--load_best_model_at_end",
             "--eval_steps", "7", "--metric_for_best_model",
             "eval_loss"});  // best needs no matching strategies
  CHECK(p.training.greater_is_better == false);
  p = parse({"--metric_for_best_model", "f1", "--greater_is_better", "false"});
  CHECK(p.training.greater_is_better == false);  // an explicit value is kept
}

TEST_CASE("validation: derived defaults (eval_steps, do_eval, run_name, resume spelling)") {
  auto p = parse({"--eval_strategy", "steps", "--logging_steps", "20"});
  CHECK(p.training.eval_steps == doctest::Approx(20));
  CHECK(p.training.do_eval);
  p = parse({"--output_dir", "o", "--run_name", "r"});
  CHECK(p.training.run_name == "r");
  p = parse({"--resume_from_checkpoint", "True"});
  CHECK(p.training.resume_from_checkpoint == "true");
  p = parse({"--resume_from_checkpoint", "false"});
  CHECK_FALSE(p.training.resume_from_checkpoint.has_value());
  p = parse({"--resume_from_checkpoint", "out/checkpoint-10"});
  CHECK(p.training.resume_from_checkpoint == "out/checkpoint-10");
  p = parse({"--save_total_limit", "3", "--save_total_limit", "none"});
  CHECK_FALSE(p.training.save_total_limit.has_value());  // none unsets an optional
  p = parse({"--logging_steps", "0.05", "--save_steps", "0.5", "--warmup_steps", "0.1"});
  CHECK(p.training.logging_steps == doctest::Approx(0.05));
  // As HF: a fractional count above 1 only matters when its strategy counts steps.
  p = parse({"--logging_strategy", "epoch", "--logging_steps", "2.5", "--save_strategy", "no", "--save_steps",
             "7.5"});
  CHECK(p.training.save_steps == doctest::Approx(7.5));
  // Tiny ratios do not divide by zero in the multiple check.
  CHECK(contains(error_of({"--load_best_model_at_end", "--eval_strategy", "steps", "--eval_steps", "1e-9",
                           "--save_steps", "0.5"}),
                 "multiple of --eval_steps"));

  // validate() directly, as the C++ API's users call it.
  TrainingArguments a;
  a.eval_strategy = trainhook::IntervalStrategy::epoch;
  trainhook::validate(a);
  CHECK(a.do_eval);
  CHECK(a.run_name == a.output_dir);
  TrainingArguments b;
  b.plugin_config = nlohmann::json::array();
  CHECK(contains(validate_error(b), "--plugin_config: expected an object"));
  TrainingArguments c;
  c.report_to = {""};
  CHECK(contains(validate_error(c), "--report_to: an empty name"));
}

TEST_CASE("help text: every group, every option, defaults") {
  const std::string h = trainhook::train_help_text();
  for (const char* group :
       {"Output:", "Training:", "Logging, evaluation and saving:", "Reproducibility and data loading:",
        "Integrations and plugins:", "Model:", "Data:"})
    CHECK_MESSAGE(contains(h, std::string("\n") + group + "\n"), group);
  // Every argument is listed (the JSON objects are kept alive: items() is a view).
  const nlohmann::json all[] = {trainhook::to_json(TrainingArguments{}),
                                trainhook::to_json(trainhook::ModelArguments{}),
                                trainhook::to_json(trainhook::DataArguments{})};
  for (const auto& part : all)
    for (const auto& [key, value] : part.items()) CHECK_MESSAGE(contains(h, "--" + key + " "), key);
  CHECK(contains(h, "[default: 5e-05]"));
  CHECK(contains(h, "[default: trainer_output]"));
  CHECK(contains(h, "[default: none]"));
  CHECK(contains(h, "--config FILE"));
  CHECK(contains(h, "--args_file FILE"));
  // Groups come in this order.
  CHECK(h.find("Output:") < h.find("Training:"));
  CHECK(h.find("Training:") < h.find("Logging, evaluation"));
  CHECK(h.find("Integrations and plugins:") < h.find("Model:"));
  CHECK(h.find("Model:") < h.find("Data:"));
}

// ---- hostile inputs that were accepted silently or crashed ----

TEST_CASE("JSON config: a duplicate key is an error naming file, line and key (at any depth)") {
  const TempDir scratch("trainhook_args");
  const fs::path& dir = scratch.path;
  const std::string a = write_file(dir / "dup.json", "{\n  \"seed\": 1,\n  \"seed\": 2\n}\n");
  std::string e = error_of({"--config", a});
  CHECK_MESSAGE(contains(e, a + ":3: duplicate key 'seed'"), e);
  const std::string b = write_file(
      dir / "dup2.json",
      R"({"plugin_config": {"early_stopping": {"early_stopping_patience": 1, "early_stopping_patience": 2}}})");
  e = error_of({"--config", b});
  CHECK_MESSAGE(contains(e, b + ":1: duplicate key 'early_stopping_patience'"), e);
  // The same name in two different objects is no duplicate; escapes are decoded.
  const std::string c =
      write_file(dir / "ok.json", R"({"seed": 3, "plugin_config": {"a": {"seed": 1}, "b": {"seed": 2}}})");
  CHECK(parse({"--config", c}).training.seed == 3);
  e = error_of({"--config", write_file(dir / "esc.json", R"({"seed": 1, "se\u0065d": 2})")});
  CHECK_MESSAGE(contains(e, "duplicate key 'seed'"), e);
}

TEST_CASE("JSON config: nesting is bounded (200,000 open brackets crashed the parser)") {
  const TempDir scratch("trainhook_args");
  const fs::path& dir = scratch.path;
  const std::string deep = write_file(dir / "deep.json", "{\"x\": " + std::string(200000, '['));
  const std::string e = error_of({"--config", deep});
  CHECK_MESSAGE(contains(e, deep + ":1: nested deeper than 100 levels"), e);
}

TEST_CASE("YAML config: numbers of 50,000 / 200,000 digits are an error, not a stack overflow") {
  const TempDir scratch("trainhook_args");
  const fs::path& dir = scratch.path;
  const std::string i = write_file(dir / "int.yaml", "seed: 1\nmax_steps: " + std::string(50000, '9') + "\n");
  std::string e = error_of({"--config", i});
  CHECK_MESSAGE(contains(e, i + ":2: a number of 50000 characters (at most 400)"), e);
  const std::string f = write_file(dir / "float.yaml", "learning_rate: 0." + std::string(200000, '1') + "\n");
  e = error_of({"--config", f});
  CHECK_MESSAGE(contains(e, f + ":1: a number of 200002 characters"), e);
  // Long text that is no number stays text; the number forms still type as before.
  const std::string t =
      write_file(dir / "text.yaml", "run_name: " + std::string(100000, 'a') + "\nseed: 0x1F\n" +
                                        "learning_rate: .5e-3\nweight_decay: +1.\n");
  const auto p = parse({"--config", t});
  CHECK(p.training.run_name->size() == 100000);
  CHECK(p.training.seed == 31);
  CHECK(p.training.learning_rate == doctest::Approx(0.0005));
  CHECK(p.training.weight_decay == doctest::Approx(1.0));
  e = error_of({"--config", write_file(dir / "big.yaml", "max_steps: 99999999999999999999\n")});
  CHECK_MESSAGE(contains(e, ":1: the number 99999999999999999999 is out of range"), e);
}

TEST_CASE("step counts that overflow are an argument error") {
  std::string e = error_of({"--num_train_epochs", "1e30"});
  CHECK_MESSAGE(contains(e, "--num_train_epochs: 1e+30 is too large (at most 1e+09"), e);
  e = error_of({"--save_steps", "1e20"});
  CHECK_MESSAGE(contains(e, "--save_steps: 1e+20 is too large"), e);
  e = error_of({"--max_steps", "9000000000000000000"});
  CHECK_MESSAGE(contains(e, "--max_steps: 9e+18 is too large"), e);
  CHECK(parse({"--num_train_epochs", "1000"}).training.num_train_epochs == 1000);
}

TEST_CASE("non-UTF-8 run_name, output_dir or plugin_config values are an error naming the flag") {
  std::string e = error_of({"--run_name", "caf\xE9"});
  CHECK_MESSAGE(contains(e, "--run_name: not valid UTF-8 text (byte 0xE9 at position 4)"), e);
  e = error_of({"--output_dir", "out\xFF"});
  CHECK_MESSAGE(contains(e, "--output_dir: not valid UTF-8 text (byte 0xFF at position 4)"), e);
  e = error_of({"--plugin_config", "mlflow.experiment_name=\xC3"});
  CHECK_MESSAGE(contains(e, "--plugin_config mlflow.experiment_name: not valid UTF-8"), e);
  e = error_of({"--run_name", "\xED\xA0\x80"});  // a UTF-16 surrogate
  CHECK_MESSAGE(contains(e, "--run_name: not valid UTF-8"), e);
  CHECK(*parse({"--run_name", "caf\xC3\xA9 \xF0\x9F\x9A\x80"}).training.run_name ==
        "caf\xC3\xA9 \xF0\x9F\x9A\x80");
}

TEST_CASE("a value from a config file that fails a check names the file and line") {
  const TempDir scratch("trainhook_args");
  const fs::path& dir = scratch.path;
  const std::string cfg = write_file(dir / "latin1.yaml", "seed: 1\nrun_name: caf\xE9\n");
  std::string e = error_of({"--config", cfg});
  CHECK_MESSAGE(contains(e, "--run_name (in " + cfg + ":2): not valid UTF-8 text (byte 0xE9"), e);
  // The command line overrides the file: the message names no file then.
  e = error_of({"--config", cfg, "--run_name", "b\xFF"});
  CHECK_MESSAGE(contains(e, "--run_name: not valid UTF-8 text"), e);
  CHECK_MESSAGE(!contains(e, "latin1.yaml"), e);
}

TEST_CASE("flags that choose the same thing twice are refused naming both") {
  std::string e = error_of({"--model_name_or_path", "model.pt", "--model", "cnn"});
  CHECK_MESSAGE(contains(e, "--model_name_or_path and --model conflict"), e);
  const TempDir scratch("trainhook_args");
  const fs::path& dir = scratch.path;
  const std::string cfg = write_file(dir / "m.yaml", "seed: 1\nmodel: cnn\n");
  e = error_of({"--config", cfg, "--model_name_or_path", "model.pt"});
  CHECK_MESSAGE(contains(e, "--model_name_or_path and --model (in " + cfg + ":2) conflict"), e);
  CHECK(parse({"--model_name_or_path", "model.pt"}).model.model_name_or_path == std::string("model.pt"));
}

TEST_CASE("early_stopping without metric_for_best_model is an error before training") {
  std::string e = error_of({"--callbacks", "early_stopping", "--eval_strategy", "epoch"});
  CHECK_MESSAGE(contains(e, "--callbacks early_stopping requires --metric_for_best_model"), e);
  CHECK(parse({"--callbacks", "early_stopping", "--eval_strategy", "epoch", "--metric_for_best_model",
               "eval_loss"})
            .training.callbacks == std::vector<std::string>{"early_stopping"});
  CHECK(parse({"--callbacks", "early_stopping", "--eval_strategy", "epoch", "--save_strategy", "epoch",
               "--load_best_model_at_end"})
            .training.metric_for_best_model == "loss");
}

TEST_CASE("debug: HF's space-separated list, underflow_overflow only, others named") {
  CHECK(parse({}).training.debug.empty());
  CHECK(parse({"--debug", "underflow_overflow"}).training.debug ==
        std::vector<std::string>{"underflow_overflow"});
  CHECK(parse({"--debug", " underflow_overflow  underflow_overflow "}).training.debug ==
        std::vector<std::string>{"underflow_overflow"});
  CHECK(parse({"--debug", ""}).training.debug.empty());
  std::string e = error_of({"--debug", "tpu_metrics_debug"});
  CHECK(contains(e, "--debug"));
  CHECK(contains(e, "'tpu_metrics_debug' is not applicable"));
  e = error_of({"--debug", "underflow_overflow overflow"});
  CHECK(contains(e, "--debug"));
  CHECK(contains(e, "unknown debug option 'overflow' (expected underflow_overflow)"));
}
