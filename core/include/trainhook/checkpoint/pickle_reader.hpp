// A reader of the Python pickles that torch.save writes for Hugging Face's
// checkpoint files (optimizer.pt, scheduler.pt, rng_state*.pth) and that
// LibTorch's Pickler writes for ours. It is not Python's unpickler: it builds a
// tree of plain values and never calls anything. It knows only the opcodes these
// files use (protocol 2 to 4: containers, numbers, strings, memo, BINPERSID,
// REDUCE and BUILD) and only these globals:
//   collections.OrderedDict                      -> an empty Dict
//   torch._utils._rebuild_tensor_v2 / _rebuild_parameter, torch.<T>Storage
//                                                -> a Tensor (data by storage key)
//   numpy's ndarray / dtype / _reconstruct, _codecs.encode (np.random.get_state())
//                                                -> an opaque Object
// Anything else (GLOBAL os.system, an unknown opcode, a length past the end) is
// refused with a std::runtime_error naming the file, the opcode or global, and
// the byte offset. No LibTorch here (fuzzed alone, fuzz/fuzz_torch_pickle).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace trainhook {

struct PickleTensor {
  std::string storage_key;  // "<archive>/data/<key>"'s key
  std::string dtype;        // the storage class without "Storage": Float, Long, Byte, ...
  int64_t storage_numel = 0;
  int64_t offset = 0;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
};

struct PickleNode {
  enum class Kind {
    None,
    Bool,
    Int,
    BigInt,
    Float,
    String,
    Bytes,
    List,
    Tuple,
    Dict,
    Tensor,
    Global,
    Object
  };
  Kind kind = Kind::None;
  bool boolean = false;
  int64_t integer = 0;  // Int
  double number = 0;    // Float
  // String, Bytes; Global and Object: "module.name"; BigInt: little-endian two's complement.
  std::string text;
  // List and Tuple: the elements; Dict: key, value, key, value ...; Object: its
  // constructor arguments then, after BUILD, its state. Indices into the graph.
  std::vector<size_t> items;
  PickleTensor tensor;  // Tensor
};

// The values of one pickle. Containers refer to their elements by index, so a
// list that holds itself is a cycle of indices, never of owners.
class PickleGraph {
 public:
  const PickleNode& node(size_t i) const { return nodes_.at(i); }
  const PickleNode& root() const { return nodes_.at(root_); }
  size_t root_index() const { return root_; }
  size_t size() const { return nodes_.size(); }
  // The value of `key` (a string) in a Dict node, or nullptr.
  const PickleNode* find(const PickleNode& dict, std::string_view key) const;

 private:
  friend PickleGraph read_pickle(std::string_view, const std::string&);
  std::vector<PickleNode> nodes_;
  size_t root_ = 0;
};

// Throws std::runtime_error starting with `file`.
PickleGraph read_pickle(std::string_view bytes, const std::string& file);

// A kind's name for messages ("a dict", "an int").
const char* pickle_kind_name(PickleNode::Kind kind);

}  // namespace trainhook
