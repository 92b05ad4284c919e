// The MLflow plugin's reading of a server's error answers.
#include <trainhook/mlflow/rest.hpp>

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  trainhook::mlflow::RestResult r;
  r.http.status = size > 0 ? 200 + data[0] % 400 : 500;
  r.http.body.assign(reinterpret_cast<const char*>(data), size);
  (void)r.error_code();
  (void)r.describe();
  return 0;
}
