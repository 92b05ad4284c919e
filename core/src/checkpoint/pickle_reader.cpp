// The restricted pickle machine: a stack of node indices, a memo, and an
// allow-list of globals whose REDUCE builds a plain value. Every length is
// checked against the bytes left before it is used.
#include <trainhook/checkpoint/pickle_reader.hpp>

#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <unordered_map>

namespace trainhook {
namespace {

using Kind = PickleNode::Kind;

// Names of the opcodes a refusal may meet (Python's pickletools names).
const char* opcode_name(uint8_t op) {
  switch (op) {
    case 'i':
      return "INST";
    case 'o':
      return "OBJ";
    case 0x81:
      return "NEWOBJ";
    case 0x92:
      return "NEWOBJ_EX";
    case 'P':
      return "PERSID";
    case 'I':
      return "INT";
    case 'L':
      return "LONG";
    case 0x8b:
      return "LONG4";
    case 'F':
      return "FLOAT";
    case 'S':
      return "STRING";
    case 'T':
      return "BINSTRING";
    case 'U':
      return "SHORT_BINSTRING";
    case 'V':
      return "UNICODE";
    case 'p':
      return "PUT";
    case 'g':
      return "GET";
    case 'l':
      return "LIST";
    case 'd':
      return "DICT";
    case 0x82:
      return "EXT1";
    case 0x83:
      return "EXT2";
    case 0x84:
      return "EXT4";
    case '0':
      return "POP";
    case '1':
      return "POP_MARK";
    case '2':
      return "DUP";
    case 0x8f:
      return "ADDITEMS";
    case 0x90:
      return "EMPTY_SET";
    case 0x91:
      return "FROZENSET";
    case 0x96:
      return "BYTEARRAY8";
    case 0x97:
      return "NEXT_BUFFER";
    case 0x98:
      return "READONLY_BUFFER";
    default:
      return nullptr;
  }
}

PickleNode of(Kind kind) {
  PickleNode n;
  n.kind = kind;
  return n;
}

bool is_storage_class(const std::string& name, std::string& dtype) {
  static const char* const kTypes[] = {"Double", "Float", "Half", "BFloat16", "Long",
                                       "Int",    "Short", "Char", "Byte",     "Bool"};
  for (const char* t : kTypes) {
    if (name == std::string("torch.") + t + "Storage") {
      dtype = t;
      return true;
    }
  }
  return false;
}

bool allowed_global(const std::string& name) {
  std::string dtype;
  return name == "collections.OrderedDict" || name == "torch._utils._rebuild_tensor_v2" ||
         name == "torch._utils._rebuild_parameter" || is_storage_class(name, dtype) ||
         // np.random.get_state() in rng_state*.pth (numpy 1.x and 2.x module names)
         name == "numpy.core.multiarray._reconstruct" || name == "numpy._core.multiarray._reconstruct" ||
         name == "numpy.ndarray" || name == "numpy.dtype" || name == "_codecs.encode";
}

class Machine {
 public:
  Machine(std::string_view b, const std::string& file) : b_(b), file_(file) {}

  void run(std::vector<PickleNode>& nodes, size_t& root) {
    nodes_ = &nodes;
    while (true) {
      if (pos_ >= b_.size()) fail("ends before its STOP opcode (truncated)");
      op_at_ = pos_;
      const auto op = static_cast<uint8_t>(b_[pos_++]);
      if (op == '.') {
        if (stack_.empty()) fail("STOP with nothing on the stack");
        root = stack_.back();
        return;
      }
      step(op);
    }
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error(file_ + ": refused pickle: " + what + " (at byte " + std::to_string(op_at_) +
                             ")");
  }

  std::string_view take(uint64_t n, const char* what) {
    if (n > b_.size() - pos_)
      fail(std::string(what) + " of " + std::to_string(n) + " bytes runs past the end (" +
           std::to_string(b_.size() - pos_) + " left): truncated or a lying size");
    const std::string_view v = b_.substr(pos_, n);
    pos_ += n;
    return v;
  }
  uint64_t le(int n, const char* what) {
    const std::string_view v = take(static_cast<uint64_t>(n), what);
    uint64_t x = 0;
    for (int i = n - 1; i >= 0; --i) x = (x << 8) | static_cast<uint8_t>(v[static_cast<size_t>(i)]);
    return x;
  }
  std::string line(const char* what) {
    const size_t nl = b_.find('\n', pos_);
    if (nl == std::string_view::npos || nl - pos_ > 256) fail(std::string(what) + " has no end of line");
    std::string s(b_.substr(pos_, nl - pos_));
    pos_ = nl + 1;
    return s;
  }

  size_t add(PickleNode n) {
    nodes_->push_back(std::move(n));
    return nodes_->size() - 1;
  }
  PickleNode& at(size_t i) { return (*nodes_)[i]; }
  void push_new(PickleNode n) { stack_.push_back(add(std::move(n))); }
  size_t pop(const char* op) {
    if (stack_.size() <= (marks_.empty() ? 0 : marks_.back()))
      fail(std::string(op) + " on an empty stack (or across a MARK)");
    const size_t v = stack_.back();
    stack_.pop_back();
    return v;
  }
  std::vector<size_t> pop_mark(const char* op) {
    if (marks_.empty()) fail(std::string(op) + " without a MARK");
    const size_t m = marks_.back();
    marks_.pop_back();
    std::vector<size_t> items(stack_.begin() + static_cast<std::ptrdiff_t>(m), stack_.end());
    stack_.resize(m);
    return items;
  }
  size_t& top(const char* op) {
    if (stack_.size() <= (marks_.empty() ? 0 : marks_.back())) fail(std::string(op) + " on an empty stack");
    return stack_.back();
  }
  size_t container(const char* op, Kind want) {
    const size_t i = top(op);
    if (at(i).kind != want)
      fail(std::string(op) + " on " + pickle_kind_name(at(i).kind) + ", not " + pickle_kind_name(want));
    return i;
  }

  void tuple(std::vector<size_t> items) {
    PickleNode n;
    n.kind = Kind::Tuple;
    n.items = std::move(items);
    push_new(std::move(n));
  }
  void scalar_int(int64_t v) {
    PickleNode n;
    n.kind = Kind::Int;
    n.integer = v;
    push_new(std::move(n));
  }
  void text(Kind k, std::string_view s) {
    PickleNode n;
    n.kind = k;
    n.text = std::string(s);
    push_new(std::move(n));
  }
  void memo_put(uint64_t key) {
    if (stack_.empty()) fail("a memo PUT on an empty stack");
    memo_[key] = stack_.back();
  }
  void memo_get(uint64_t key) {
    const auto it = memo_.find(key);
    if (it == memo_.end()) fail("memo GET of entry " + std::to_string(key) + ", which was never PUT");
    stack_.push_back(it->second);
  }

  int64_t int_of(size_t i, const char* what) {
    if (at(i).kind != Kind::Int)
      fail(std::string(what) + " is " + pickle_kind_name(at(i).kind) + ", not an int");
    return at(i).integer;
  }
  std::vector<int64_t> ints_of(size_t i, const char* what) {
    if (at(i).kind != Kind::Tuple)
      fail(std::string(what) + " is " + pickle_kind_name(at(i).kind) + ", not a tuple");
    std::vector<int64_t> out;
    for (size_t e : at(i).items) out.push_back(int_of(e, what));
    return out;
  }

  void persistent_id() {
    // ('storage', torch.<T>Storage, key, location, numel), as torch.save writes it.
    const size_t pid = pop("BINPERSID");
    const PickleNode& t = at(pid);
    if (t.kind != Kind::Tuple || t.items.size() != 5 || at(t.items[0]).kind != Kind::String ||
        at(t.items[0]).text != "storage")
      fail("BINPERSID of something other than a ('storage', type, key, location, numel) tuple");
    const PickleNode& type = at(t.items[1]);
    PickleTensor s;
    if (type.kind != Kind::Global || !is_storage_class(type.text, s.dtype))
      fail("BINPERSID names a storage type that is not a torch.<T>Storage");
    if (at(t.items[2]).kind != Kind::String) fail("BINPERSID's storage key is not a string");
    s.storage_key = at(t.items[2]).text;
    s.storage_numel = int_of(t.items[4], "BINPERSID's element count");
    if (s.storage_numel < 0) fail("BINPERSID's element count is negative");
    PickleNode n;
    n.kind = Kind::Object;
    n.text = "torch.storage";
    n.tensor = std::move(s);
    push_new(std::move(n));
  }

  void reduce() {
    const size_t args = pop("REDUCE");
    const size_t callable = pop("REDUCE");
    if (at(callable).kind != Kind::Global)
      fail("REDUCE calls " + std::string(pickle_kind_name(at(callable).kind)));
    if (at(args).kind != Kind::Tuple) fail("REDUCE's arguments are not a tuple");
    const std::string name = at(callable).text;
    const std::vector<size_t> a = at(args).items;
    PickleNode n;
    std::string dtype;
    if (name == "collections.OrderedDict") {
      if (!a.empty()) fail("collections.OrderedDict called with arguments");
      n.kind = Kind::Dict;
    } else if (name == "torch._utils._rebuild_tensor_v2") {
      if (a.size() < 4 || a.size() > 7)
        fail("torch._utils._rebuild_tensor_v2 with " + std::to_string(a.size()) + " arguments");
      if (at(a[0]).kind != Kind::Object || at(a[0]).text != "torch.storage")
        fail("torch._utils._rebuild_tensor_v2 of something that is not a storage");
      n.kind = Kind::Tensor;
      n.tensor = at(a[0]).tensor;
      n.tensor.offset = int_of(a[1], "a tensor's storage offset");
      n.tensor.sizes = ints_of(a[2], "a tensor's size");
      n.tensor.strides = ints_of(a[3], "a tensor's stride");
      if (n.tensor.sizes.size() != n.tensor.strides.size())
        fail("a tensor's size and stride differ in length");
    } else if (name == "torch._utils._rebuild_parameter") {
      if (a.size() != 3 || at(a[0]).kind != Kind::Tensor)
        fail("torch._utils._rebuild_parameter of something that is not a tensor");
      n = at(a[0]);
    } else if (is_storage_class(name, dtype)) {
      fail(name + " called directly (storages come only through BINPERSID)");
    } else {
      n.kind = Kind::Object;  // numpy's and _codecs' values: kept, never built
      n.text = name;
      n.items = a;
    }
    push_new(std::move(n));
  }

  void step(uint8_t op) {
    switch (op) {
      case 0x80: {  // PROTO
        const uint64_t v = le(1, "PROTO");
        if (v < 2 || v > 5) fail("pickle protocol " + std::to_string(v) + " (2 to 5 are read)");
        return;
      }
      case 0x95:
        take(8, "FRAME");
        return;
      case '(':
        marks_.push_back(stack_.size());
        return;
      case '}':
        push_new(of(Kind::Dict));
        return;
      case ']':
        push_new(of(Kind::List));
        return;
      case ')':
        tuple({});
        return;
      case 't':
        tuple(pop_mark("TUPLE"));
        return;
      case 0x85: {
        const size_t a = pop("TUPLE1");
        tuple({a});
        return;
      }
      case 0x86: {
        const size_t b = pop("TUPLE2"), a = pop("TUPLE2");
        tuple({a, b});
        return;
      }
      case 0x87: {
        const size_t c = pop("TUPLE3"), b = pop("TUPLE3"), a = pop("TUPLE3");
        tuple({a, b, c});
        return;
      }
      case 'a': {
        const size_t v = pop("APPEND");
        at(container("APPEND", Kind::List)).items.push_back(v);
        return;
      }
      case 'e': {
        const std::vector<size_t> items = pop_mark("APPENDS");
        auto& list = at(container("APPENDS", Kind::List)).items;
        list.insert(list.end(), items.begin(), items.end());
        return;
      }
      case 's': {
        const size_t v = pop("SETITEM"), k = pop("SETITEM");
        auto& dict = at(container("SETITEM", Kind::Dict)).items;
        dict.push_back(k);
        dict.push_back(v);
        return;
      }
      case 'u': {
        const std::vector<size_t> items = pop_mark("SETITEMS");
        if (items.size() % 2 != 0) fail("SETITEMS with an odd number of keys and values");
        auto& dict = at(container("SETITEMS", Kind::Dict)).items;
        dict.insert(dict.end(), items.begin(), items.end());
        return;
      }
      case 'q':
        memo_put(le(1, "BINPUT"));
        return;
      case 'r':
        memo_put(le(4, "LONG_BINPUT"));
        return;
      case 0x94:
        memo_put(memo_.size());
        return;  // MEMOIZE
      case 'h':
        memo_get(le(1, "BINGET"));
        return;
      case 'j':
        memo_get(le(4, "LONG_BINGET"));
        return;
      case 'J':
        scalar_int(static_cast<int32_t>(static_cast<uint32_t>(le(4, "BININT"))));
        return;
      case 'K':
        scalar_int(static_cast<int64_t>(le(1, "BININT1")));
        return;
      case 'M':
        scalar_int(static_cast<int64_t>(le(2, "BININT2")));
        return;
      case 0x8a: {  // LONG1: little-endian two's complement of any length up to 255 bytes
        const std::string_view v = take(le(1, "LONG1"), "LONG1");
        if (v.size() <= 8) {
          uint64_t x = 0;
          for (size_t i = v.size(); i-- > 0;) x = (x << 8) | static_cast<uint8_t>(v[i]);
          if (!v.empty() && v.size() < 8 && (static_cast<uint8_t>(v.back()) & 0x80) != 0)
            x |= ~uint64_t{0} << (8 * v.size());  // sign extension
          scalar_int(static_cast<int64_t>(x));
        } else {
          text(Kind::BigInt, v);
        }
        return;
      }
      case 'G': {
        const std::string_view v = take(8, "BINFLOAT");
        uint64_t x = 0;
        for (char c : v) x = (x << 8) | static_cast<uint8_t>(c);  // big-endian
        PickleNode n;
        n.kind = Kind::Float;
        std::memcpy(&n.number, &x, sizeof x);
        push_new(std::move(n));
        return;
      }
      case 'N':
        push_new(of(Kind::None));
        return;
      case 0x88:
      case 0x89: {
        PickleNode n;
        n.kind = Kind::Bool;
        n.boolean = op == 0x88;
        push_new(std::move(n));
        return;
      }
      case 'X':
        text(Kind::String, take(le(4, "BINUNICODE"), "BINUNICODE"));
        return;
      case 0x8c:
        text(Kind::String, take(le(1, "SHORT_BINUNICODE"), "SHORT_BINUNICODE"));
        return;
      case 0x8d:
        text(Kind::String, take(le(8, "BINUNICODE8"), "BINUNICODE8"));
        return;
      case 'B':
        text(Kind::Bytes, take(le(4, "BINBYTES"), "BINBYTES"));
        return;
      case 'C':
        text(Kind::Bytes, take(le(1, "SHORT_BINBYTES"), "SHORT_BINBYTES"));
        return;
      case 0x8e:
        text(Kind::Bytes, take(le(8, "BINBYTES8"), "BINBYTES8"));
        return;
      case 'c': {  // GLOBAL module\nname\n
        const std::string module = line("GLOBAL's module");
        const std::string name = module + "." + line("GLOBAL's name");
        if (!allowed_global(name)) fail("GLOBAL " + name + " is not allowed (never called by this reader)");
        text(Kind::Global, name);
        return;
      }
      case 0x93: {  // STACK_GLOBAL
        const size_t n = pop("STACK_GLOBAL"), m = pop("STACK_GLOBAL");
        if (at(m).kind != Kind::String || at(n).kind != Kind::String) fail("STACK_GLOBAL of non-strings");
        const std::string name = at(m).text + "." + at(n).text;
        if (!allowed_global(name))
          fail("STACK_GLOBAL " + name + " is not allowed (never called by this reader)");
        text(Kind::Global, name);
        return;
      }
      case 'Q':
        persistent_id();
        return;
      case 'R':
        reduce();
        return;
      case 'b': {  // BUILD: only numpy's objects take a state
        const size_t state = pop("BUILD");
        const size_t obj = top("BUILD");
        if (at(obj).kind != Kind::Object || at(obj).text == "torch.storage")
          fail("BUILD on " + std::string(pickle_kind_name(at(obj).kind)));
        at(obj).items.push_back(state);
        return;
      }
      default: {
        const char* name = opcode_name(op);
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02x", static_cast<unsigned>(op));
        fail("opcode " + std::string(name != nullptr ? name : "") + (name != nullptr ? " (" : "") + hex +
             (name != nullptr ? ")" : "") + " is not allowed");
      }
    }
  }

  std::string_view b_;
  const std::string& file_;
  size_t pos_ = 0;
  size_t op_at_ = 0;
  std::vector<PickleNode>* nodes_ = nullptr;
  std::vector<size_t> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, size_t> memo_;
};

}  // namespace

const char* pickle_kind_name(PickleNode::Kind kind) {
  switch (kind) {
    case Kind::None:
      return "None";
    case Kind::Bool:
      return "a bool";
    case Kind::Int:
      return "an int";
    case Kind::BigInt:
      return "a big int";
    case Kind::Float:
      return "a float";
    case Kind::String:
      return "a string";
    case Kind::Bytes:
      return "bytes";
    case Kind::List:
      return "a list";
    case Kind::Tuple:
      return "a tuple";
    case Kind::Dict:
      return "a dict";
    case Kind::Tensor:
      return "a tensor";
    case Kind::Global:
      return "a global";
    case Kind::Object:
      return "an object";
  }
  return "a value";
}

const PickleNode* PickleGraph::find(const PickleNode& dict, std::string_view key) const {
  if (dict.kind != PickleNode::Kind::Dict) return nullptr;
  for (size_t i = 0; i + 1 < dict.items.size(); i += 2) {
    const PickleNode& k = nodes_.at(dict.items[i]);
    if (k.kind == PickleNode::Kind::String && k.text == key) return &nodes_.at(dict.items[i + 1]);
  }
  return nullptr;
}

PickleGraph read_pickle(std::string_view bytes, const std::string& file) {
  PickleGraph g;
  Machine(bytes, file).run(g.nodes_, g.root_);
  return g;
}

}  // namespace trainhook
