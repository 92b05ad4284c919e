// sdk/include/trainhook/options.hpp (the option table) and plugin_config.h (the
// C reader it parses through): types, ranges, environment precedence, the one
// error wording, did-you-mean, and README rows.
#include <doctest/doctest.h>

#include <trainhook/options.hpp>

#include <cstdlib>
#include <string>

namespace {

enum class Mode { fast, safe };

class DemoOptions {
  TRAINHOOK_OPTION(double, decay, 0.999);

 public:
  TRAINHOOK_OPTION(int64_t, patience, 3);

 public:
  TRAINHOOK_OPTION(bool, verbose, false);

 public:
  TRAINHOOK_OPTION(std::string, url, "http://localhost:5000");

 public:
  TRAINHOOK_OPTION(std::optional<double>, peak, std::nullopt);

 public:
  TRAINHOOK_OPTION(std::vector<std::string>, tags, {});

 public:
  TRAINHOOK_OPTION(Mode, mode, Mode::fast);

 public:
  TRAINHOOK_OPTION(std::optional<std::string>, api_key, std::nullopt);

 public:
  TRAINHOOK_OPTION(trainhook::JsonText, extra, {"{}"});
};

const trainhook::OptionTable<DemoOptions>& table() {
  static const auto t =
      trainhook::OptionTable<DemoOptions>("demo")
          .key(TRAINHOOK_KEY(decay), "decay")
          .min(0)
          .below(1)
          .key(TRAINHOOK_KEY(patience), "evaluations to wait")
          .alias("wait")
          .min(1)
          .env("DEMO_PATIENCE")
          .key(TRAINHOOK_KEY(verbose), "say more")
          .env("DEMO_VERBOSE")
          .key(TRAINHOOK_KEY(url), "server")
          .env("DEMO_URL")
          .check("an http:// URL", [](const std::string& v) { return v.rfind("http://", 0) == 0; })
          .key(TRAINHOOK_KEY(peak), "peak FLOPs")
          .above(0)
          .key(TRAINHOOK_KEY(tags), "tags")
          .choice(
              "mode", [](auto& o) -> auto& { return o.mode(); }, {{"fast", Mode::fast}, {"safe", Mode::safe}},
              "how")
          .key(TRAINHOOK_KEY(api_key), "credential")
          .env("DEMO_API_KEY")
          .key(TRAINHOOK_KEY(extra), "passed on");
  return t;
}

std::string error_of(const std::string& json) {
  try {
    table().parse(json);
  } catch (const trainhook::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

struct EnvVar {
  EnvVar(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~EnvVar() { unsetenv(name_); }
  const char* name_;
};

}  // namespace

TEST_CASE("an empty section gives the options type's defaults") {
  for (const char* empty : {"", "{}", "  { }  "}) {
    const DemoOptions o = table().parse(empty);
    CHECK(o.decay() == 0.999);
    CHECK(o.patience() == 3);
    CHECK_FALSE(o.verbose());
    CHECK(o.url() == "http://localhost:5000");
    CHECK_FALSE(o.peak().has_value());
    CHECK(o.tags().empty());
    CHECK(o.mode() == Mode::fast);
  }
}

TEST_CASE("values of every type are read from JSON and from numbers as text") {
  const DemoOptions o = table().parse(
      R"({"decay": "0.5", "patience": 1e1, "verbose": "true", "url": "http://h:1", "peak": 3.12e14,
          "tags": ["a", "b\u00e9"], "mode": "safe", "extra": {"k": [1, 2]}})");
  CHECK(o.decay() == 0.5);
  CHECK(o.patience() == 10);
  CHECK(o.verbose());
  CHECK(o.url() == "http://h:1");
  CHECK(*o.peak() == 3.12e14);
  CHECK(o.tags() == std::vector<std::string>{"a", "b\xc3\xa9"});
  CHECK(o.mode() == Mode::safe);
  CHECK(o.extra().text == R"({"k": [1, 2]})");
  CHECK(table().parse(R"({"tags": "x, y,,z"})").tags() == std::vector<std::string>{"x", "y", "z"});
  CHECK(table().parse(R"({"patience": "7"})").patience() == 7);
  CHECK(table().parse(R"({"decay": null})").decay() == 0.999);
}

TEST_CASE("numbers as text are parsed strictly") {
  CHECK(error_of(R"({"decay": "0.5x"})") ==
        R"(plugin_config demo.decay: expected a number in [0, 1), got "0.5x")");
  CHECK(error_of(R"({"decay": " 0.5"})") ==
        R"(plugin_config demo.decay: expected a number in [0, 1), got " 0.5")");
  CHECK(error_of(R"({"decay": ""})") == R"(plugin_config demo.decay: expected a number in [0, 1), got "")");
  CHECK(error_of(R"({"decay": "nan"})") ==
        R"(plugin_config demo.decay: expected a number in [0, 1), got "nan")");
  CHECK(error_of(R"({"decay": 1})") == "plugin_config demo.decay: expected a number in [0, 1), got 1");
  CHECK(error_of(R"({"patience": 2.5})") == "plugin_config demo.patience: expected an integer >= 1, got 2.5");
  CHECK(error_of(R"({"patience": "0x10"})") ==
        R"(plugin_config demo.patience: expected an integer >= 1, got "0x10")");
  CHECK(error_of(R"({"patience": 99999999999999999999})") ==
        "plugin_config demo.patience: expected an integer >= 1, got 99999999999999999999");
  CHECK(error_of(R"({"peak": 0})") == "plugin_config demo.peak: expected a number > 0, got 0");
  CHECK(error_of(R"({"verbose": "maybe"})") ==
        R"(plugin_config demo.verbose: expected true or false, got "maybe")");
  CHECK(error_of(R"({"mode": "slow"})") ==
        R"(plugin_config demo.mode: expected one of fast, safe, got "slow")");
  CHECK(error_of(R"({"url": "ftp://x"})") ==
        R"(plugin_config demo.url: expected an http:// URL, got "ftp://x")");
  CHECK(error_of(R"({"tags": [1]})") == "plugin_config demo.tags: expected a list of strings, got [1]");
  CHECK(error_of(R"({"url": [1]})") == "plugin_config demo.url: expected a string, got [1]");
}

TEST_CASE("an unknown key is an error with a did-you-mean and the list of keys") {
  CHECK(error_of(R"({"patince": 2})") ==
        "plugin_config demo: unknown key 'patince' (did you mean 'patience'?); keys: decay, patience, "
        "verbose, url, peak, tags, mode, api_key, extra");
  CHECK(error_of(R"({"zzzzzzzz": 2})").find("unknown key 'zzzzzzzz'; keys: decay,") != std::string::npos);
  CHECK(error_of(R"({"decay": 0.1, "decay": 0.2})") == "plugin_config demo.decay: given twice");
  CHECK(error_of(R"({"patience": 1, "wait": 2})") ==
        "plugin_config demo.wait: given twice (as patience and wait)");
  CHECK(table().parse(R"({"wait": 2})").patience() == 2);
  CHECK(error_of(R"({"wiat": 2})").find("(did you mean 'wait'?)") != std::string::npos);
}

TEST_CASE("text that is not one JSON object is refused with the offset") {
  CHECK(error_of("[1]") == "plugin_config demo: not a valid JSON object: expected a JSON object at offset 0");
  CHECK(error_of(R"({"decay" 1})") ==
        "plugin_config demo: not a valid JSON object: expected ':' after a key at offset 9");
  CHECK(error_of(R"({"decay": 1} x)") ==
        "plugin_config demo: not a valid JSON object: unexpected text after the object at offset 13");
  CHECK(error_of("{\"url\": \"a\x01\"}") ==
        "plugin_config demo: not a valid JSON object: malformed string at offset 8");
  CHECK(error_of(R"({"decay": 01})") ==
        "plugin_config demo: not a valid JSON object: expected ',' or '}' at offset 11");
  CHECK(error_of(R"({"decay": tru})") ==
        "plugin_config demo: not a valid JSON object: expected a JSON value at offset 10");
  std::string deep = R"({"extra": )" + std::string(40, '[') + std::string(40, ']') + "}";
  CHECK(error_of(deep).find("nested too deeply") != std::string::npos);
}

TEST_CASE("the environment variable supplies a key the section does not set") {
  EnvVar p("DEMO_PATIENCE", " 12 ");
  EnvVar v("DEMO_VERBOSE", "YES");
  CHECK(table().parse("{}").patience() == 12);
  CHECK(table().parse("{}").verbose());
  CHECK(table().parse(R"({"patience": 4})").patience() == 4);  // the section wins
  {
    EnvVar bad("DEMO_PATIENCE", "12x");
    CHECK(error_of("{}") ==
          "environment variable DEMO_PATIENCE (plugin_config demo.patience): expected an integer >= 1, got "
          "'12x'");
  }
  EnvVar empty("DEMO_URL", "");
  CHECK(table().parse("{}").url() == "http://localhost:5000");  // empty: unset
}

TEST_CASE("a credential's value never appears in a message") {
  EnvVar k("DEMO_API_KEY", "s3cr3t");
  CHECK(*table().parse("{}").api_key() == "s3cr3t");
  CHECK(error_of(R"({"api_key": ["s3cr3t"]})") ==
        "plugin_config demo.api_key: expected a string, got <API_KEY>");
}

TEST_CASE("README rows render every key with its default and variable") {
  CHECK(table().markdown_rows() ==
        "| `decay` | `0.999` | decay |\n"
        "| `patience` | `3` | evaluations to wait (alias `wait`) (environment variable `DEMO_PATIENCE`) |\n"
        "| `verbose` | `false` | say more (environment variable `DEMO_VERBOSE`) |\n"
        "| `url` | `http://localhost:5000` | server (environment variable `DEMO_URL`) |\n"
        "| `peak` | unset | peak FLOPs |\n"
        "| `tags` | empty | tags |\n"
        "| `mode` | `fast` | how |\n"
        "| `api_key` | unset | credential (environment variable `DEMO_API_KEY`) |\n"
        "| `extra` | `{}` | passed on |\n");
}

namespace {

using Tags = std::map<std::string, std::string>;

class MoreOptions {
  TRAINHOOK_OPTION(std::chrono::milliseconds, timeout, std::chrono::seconds(30));

 public:
  TRAINHOOK_OPTION(size_t, records, 500);

 public:
  TRAINHOOK_OPTION(Tags, tags, {});
};

const trainhook::OptionTable<MoreOptions>& more() {
  static const auto t = trainhook::OptionTable<MoreOptions>("more")
                            .key(TRAINHOOK_KEY(timeout), "seconds")
                            .key(TRAINHOOK_KEY(records), "records")
                            .min(1)
                            .key(TRAINHOOK_KEY(tags), "tags")
                            .env("MORE_TAGS");
  return t;
}

std::string more_error(const std::string& json) {
  try {
    more().parse(json);
  } catch (const trainhook::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("durations in seconds and unsigned integers and string maps") {
  std::map<std::string, std::string> from;
  const MoreOptions o =
      more().parse(R"({"timeout": "2.5", "records": 7, "tags": {"team": "nlp", "n": 3}})", &from);
  CHECK(o.timeout().count() == 2500);
  CHECK(o.records() == 7);
  CHECK(o.tags() == std::map<std::string, std::string>{{"team", "nlp"}, {"n", "3"}});
  CHECK(from.at("timeout") == "plugin_config more.timeout");
  CHECK(from.count("tags") == 1);
  CHECK(more_error(R"({"timeout": -1})") == "plugin_config more.timeout: expected a number >= 0, got -1");
  CHECK(more_error(R"({"records": -1})") == "plugin_config more.records: expected an integer >= 1, got -1");
  CHECK(more_error(R"({"tags": [1]})").find("plugin_config more.tags: expected a JSON object of strings") ==
        0);
  CHECK(more_error(R"({"tags": {"a": [1]}})").find("expected a JSON object of strings") != std::string::npos);
  EnvVar t("MORE_TAGS", R"({"x": "y"})");
  std::map<std::string, std::string> env_from;
  CHECK(more().parse("{}", &env_from).tags().at("x") == "y");
  CHECK(env_from.at("tags") == "environment variable MORE_TAGS (plugin_config more.tags)");
  EnvVar bad("MORE_TAGS", "{not json");
  CHECK(more_error("{}").find(
            "environment variable MORE_TAGS (plugin_config more.tags): expected a JSON object") == 0);
  CHECK(more().markdown_rows() ==
        "| `timeout` | `30` | seconds |\n| `records` | `500` | records |\n"
        "| `tags` | empty | tags (environment variable `MORE_TAGS`) |\n");
}

TEST_CASE("the C reader decodes escapes and surrogate pairs and finds keys") {
  const char* json = R"({"a\"b": "x\ty", "emoji": "\ud83d\ude00", "n": -1.5e3, "lone": "\udc00"})";
  char err[128];
  REQUIRE(th_cfg_check(json, err, sizeof err) == 1);
  th_cfg_value v;
  char buf[32];
  REQUIRE(th_cfg_find(json, "a\"b", &v) == 1);
  CHECK(th_cfg_string(&v, buf, sizeof buf) == 3);
  CHECK(std::string(buf) == "x\ty");
  REQUIRE(th_cfg_find(json, "emoji", &v) == 1);
  CHECK(th_cfg_string(&v, buf, sizeof buf) == 4);
  CHECK(std::string(buf) == "\xf0\x9f\x98\x80");
  CHECK(th_cfg_string(&v, buf, 2) == 4);  // cut, NUL-terminated, full length returned
  CHECK(std::string(buf).size() == 1);
  REQUIRE(th_cfg_find(json, "n", &v) == 1);
  double d = 0;
  CHECK(th_cfg_number(&v, &d) == 1);
  CHECK(d == -1500);
  int64_t i = 0;
  CHECK(th_cfg_int64(&v, &i) == 1);  // a whole number, whatever its spelling
  CHECK(i == -1500);
  REQUIRE(th_cfg_find(json, "lone", &v) == 1);
  CHECK(th_cfg_string(&v, buf, sizeof buf) == -1);
  CHECK(th_cfg_find(json, "missing", &v) == 0);
  CHECK(th_cfg_check(nullptr, err, sizeof err) == 1);
  CHECK(th_cfg_check("{\"a\": 1", err, sizeof err) == 0);
  CHECK(std::string(err) == "expected ',' or '}' at offset 7");
}
