// The labelled CSV reader (--train_file): any bytes give rows or a
// std::runtime_error, never a crash.
#include <trainhook/data/csv_table.hpp>

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <stdexcept>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  // The first byte picks the label column and the header flag.
  const char* columns[] = {"last", "first", "0", "1", "label"};
  const std::string label = columns[data[0] % 5];
  const bool header = (data[0] & 0x80) != 0;
  std::istringstream in(std::string(reinterpret_cast<const char*>(data) + 1, size - 1));
  try {
    const trainhook::LabeledTable t = trainhook::read_labeled_csv(in, "fuzz.csv", label, header);
    if (t.values.size() != static_cast<size_t>(t.rows * t.features) ||
        t.labels.size() != static_cast<size_t>(t.rows))
      __builtin_trap();
  } catch (const std::runtime_error&) {
  }
  return 0;
}
