// NumPy's format (numpy.lib.format): "\x93NUMPY", major and minor version
// bytes, the header length (uint16 LE in 1.0, uint32 LE in 2.0/3.0), then an
// ASCII (3.0: UTF-8) Python dict literal padded with spaces and ended by '\n'.
#include <trainhook/data/npy_header.hpp>

#include <cstring>
#include <limits>
#include <stdexcept>

namespace trainhook {
namespace {

struct TypeEntry {
  const char* code;  // descr without the byte-order character
  NpyType type;
  size_t size;
};

constexpr TypeEntry kTypes[] = {
    {"f2", NpyType::float16, 2}, {"f4", NpyType::float32, 4}, {"f8", NpyType::float64, 8},
    {"i1", NpyType::int8, 1},    {"i2", NpyType::int16, 2},   {"i4", NpyType::int32, 4},
    {"i8", NpyType::int64, 8},   {"u1", NpyType::uint8, 1},   {"u2", NpyType::uint16, 2},
    {"u4", NpyType::uint32, 4},  {"b1", NpyType::boolean, 1}};

class DictParser {
 public:
  DictParser(const std::string& text, const std::string& file) : s_(text), file_(file) {}

  NpyHeader parse() {
    NpyHeader h;
    bool has_descr = false, has_order = false, has_shape = false;
    skip_space();
    expect('{');
    while (true) {
      skip_space();
      if (peek() == '}') break;
      const std::string key = string_literal();
      skip_space();
      expect(':');
      skip_space();
      if (key == "descr") {
        h.descr = string_literal();
        has_descr = true;
      } else if (key == "fortran_order") {
        if (boolean()) fail("the array is in Fortran order; save it C-ordered (np.ascontiguousarray)");
        has_order = true;
      } else if (key == "shape") {
        h.shape = tuple();
        has_shape = true;
      } else {
        fail("unexpected key '" + key + "' in the header (expected descr, fortran_order, shape)");
      }
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() != '}') fail("expected ',' or '}' after the value of '" + key + "'");
    }
    ++pos_;
    if (!has_descr || !has_order || !has_shape)
      fail(std::string("the header has no '") +
           (!has_descr   ? "descr"
            : !has_order ? "fortran_order"
                         : "shape") +
           "' key");
    skip_space();
    if (pos_ != s_.size()) fail("text after the header dict");
    return h;
  }

  [[noreturn]] void fail(const std::string& what) const { throw std::runtime_error(file_ + ": " + what); }

 private:
  char peek() const {
    if (pos_ >= s_.size()) fail("the header dict ends early (is the header length right?)");
    return s_[pos_];
  }
  void expect(char c) {
    if (peek() != c)
      fail(std::string("malformed header dict: expected '") + c + "' at header byte " + std::to_string(pos_));
    ++pos_;
  }
  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n')) ++pos_;
  }
  std::string string_literal() {
    const char q = peek();
    if (q != '\'' && q != '"')
      fail("malformed header dict: expected a quoted string at header byte " + std::to_string(pos_));
    ++pos_;
    std::string out;
    while (peek() != q) out.push_back(s_[pos_++]);
    ++pos_;
    return out;
  }
  bool boolean() {
    if (s_.compare(pos_, 4, "True") == 0) {
      pos_ += 4;
      return true;
    }
    if (s_.compare(pos_, 5, "False") == 0) {
      pos_ += 5;
      return false;
    }
    fail("fortran_order is neither True nor False");
  }
  std::vector<int64_t> tuple() {
    expect('(');
    std::vector<int64_t> out;
    while (true) {
      skip_space();
      if (peek() == ')') break;
      if (peek() < '0' || peek() > '9')
        fail("shape: expected a non-negative integer at header byte " + std::to_string(pos_));
      int64_t v = 0;
      while (peek() >= '0' && peek() <= '9') {
        const int d = s_[pos_++] - '0';
        if (v > (std::numeric_limits<int64_t>::max() - d) / 10) fail("shape: a dimension overflows int64");
        v = v * 10 + d;
      }
      if (peek() == 'L') ++pos_;  // Python 2 longs
      out.push_back(v);
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() != ')') fail("shape: expected ',' or ')' at header byte " + std::to_string(pos_));
    }
    ++pos_;
    return out;
  }

  const std::string& s_;
  const std::string& file_;
  size_t pos_ = 0;
};

uint32_t little_endian(const unsigned char* p, int bytes) {
  uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

}  // namespace

std::string npy_supported_dtypes() {
  std::string out;
  for (const auto& t : kTypes)
    out += (out.empty() ? "" : ", ") + std::string(t.size == 1 ? "|" : "<") + t.code;
  return out;
}

std::string npy_type_name(NpyType type) {
  switch (type) {
    case NpyType::float16:
      return "float16";
    case NpyType::float32:
      return "float32";
    case NpyType::float64:
      return "float64";
    case NpyType::int8:
      return "int8";
    case NpyType::int16:
      return "int16";
    case NpyType::int32:
      return "int32";
    case NpyType::int64:
      return "int64";
    case NpyType::uint8:
      return "uint8";
    case NpyType::uint16:
      return "uint16";
    case NpyType::uint32:
      return "uint32";
    case NpyType::boolean:
      return "bool";
  }
  return "?";
}

NpyHeader parse_npy_header(const char* data, size_t size, uint64_t file_size, const std::string& file) {
  const auto* p = reinterpret_cast<const unsigned char*>(data);
  const auto fail = [&](const std::string& what) -> void { throw std::runtime_error(file + ": " + what); };
  if (size < 10 || std::memcmp(data, "\x93NUMPY", 6) != 0)
    fail("not a .npy file (it does not start with NumPy's magic \\x93NUMPY)");
  NpyHeader h;
  h.major_version = p[6];
  if (h.major_version < 1 || h.major_version > 3)
    fail(".npy format version " + std::to_string(p[6]) + "." + std::to_string(p[7]) +
         " is not read (versions 1.0, 2.0 and 3.0 are)");
  const size_t prefix = h.major_version == 1 ? 10 : 12;
  if (size < prefix) fail("truncated .npy header (" + std::to_string(size) + " bytes)");
  const uint64_t header_len = little_endian(p + 8, h.major_version == 1 ? 2 : 4);
  if (prefix + header_len > file_size || prefix + header_len > size) {
    fail("the .npy header says it is " + std::to_string(header_len) + " bytes but the file has " +
         std::to_string(file_size - std::min<uint64_t>(file_size, prefix)) +
         " after the prefix (truncated?)");
  }
  if (header_len == 0 || data[prefix + header_len - 1] != '\n')
    fail("the .npy header does not end in a newline where its length (" + std::to_string(header_len) +
         " bytes) says: the length is wrong or the header is damaged");
  const std::string text(data + prefix, header_len);
  NpyHeader dict = DictParser(text, file).parse();
  h.descr = dict.descr;
  h.shape = dict.shape;
  h.data_offset = prefix + header_len;
  const std::string& d = h.descr;
  bool known = false;
  if (d.size() == 3) {
    for (const auto& t : kTypes) {
      if (d.compare(1, 2, t.code) != 0) continue;
      const char order = d[0];
      const bool ok = order == '<' || order == '=' || (t.size == 1 && order == '|');
      if (!ok && order == '>')
        fail("dtype '" + d + "' is big-endian; save it little-endian (arr.astype('<" + std::string(t.code) +
             "'))");
      if (!ok) break;
      h.type = t.type;
      h.item_size = t.size;
      known = true;
      break;
    }
  }
  if (!known) fail("dtype '" + d + "' is not read (supported: " + npy_supported_dtypes() + ")");
  uint64_t count = 1;
  for (int64_t dim : h.shape) {
    if (dim != 0 && count > std::numeric_limits<uint64_t>::max() / static_cast<uint64_t>(dim) / h.item_size)
      fail("shape overflows the addressable size");
    count *= static_cast<uint64_t>(dim);
  }
  const uint64_t bytes = count * h.item_size;
  const uint64_t available = file_size - h.data_offset;
  if (bytes > available) {
    std::string shape = "(";
    for (size_t i = 0; i < h.shape.size(); ++i) shape += (i ? ", " : "") + std::to_string(h.shape[i]);
    shape += h.shape.size() == 1 ? ",)" : ")";
    fail("truncated: shape " + shape + " of " + npy_type_name(h.type) + " needs " + std::to_string(bytes) +
         " data bytes but the file has " + std::to_string(available));
  }
  h.data_bytes = static_cast<size_t>(bytes);
  return h;
}

}  // namespace trainhook
