// The SDK's plugin_config section reader (sdk/include/trainhook/plugin_config.h),
// which C and C++ plugins run on the user's --plugin_config text: any bytes
// are checked, and a checked object's members are walked and every value
// converted, without reading past the text. The training-argument readers
// (th_args_*) run on the same bytes, checked or not: they check first.
#include <trainhook/plugin_config.h>

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);  // NUL-terminated copy
  char err[256];
  {
    double d;
    int64_t i;
    int b;
    char small[8];
    size_t len = 0;
    (void)th_args_number(text.c_str(), "learning_rate", &d, err, sizeof err);
    (void)th_args_int64(text.c_str(), "logging_steps", &i, err, sizeof err);
    (void)th_args_bool(text.c_str(), "fp16", &b, err, sizeof err);
    (void)th_args_string(text.c_str(), "output_dir", small, sizeof small, &len, err, sizeof err);
  }
  if (!th_cfg_check(text.c_str(), err, sizeof err)) return 0;
  size_t pos = 0;
  th_cfg_value key, value;
  char buf[64];
  while (th_cfg_next(text.c_str(), &pos, &key, &value)) {
    (void)th_cfg_string(&key, buf, sizeof buf);
    (void)th_cfg_string(&value, buf, sizeof buf);
    double d;
    int64_t i;
    int b;
    (void)th_cfg_number(&value, &d);
    (void)th_cfg_int64(&value, &i);
    (void)th_cfg_bool(&value, &b);
  }
  th_cfg_value found;
  (void)th_cfg_find(text.c_str(), "file", &found);
  return 0;
}
