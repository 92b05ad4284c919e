// A minimal protobuf wire-format encoder: just the field kinds TensorBoard's
// Event/Summary/hparams messages need. It appends to a caller-owned string, so
// one buffer can be reused for many events without allocating.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace trainhook::tensorboard {

enum class WireType : uint32_t { varint = 0, fixed64 = 1, length_delimited = 2, fixed32 = 5 };

inline size_t varint_size(uint64_t v) noexcept {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

inline void append_varint(std::string& out, uint64_t v) {
  char buf[10];
  size_t n = 0;
  while (v >= 0x80) {
    buf[n++] = static_cast<char>((v & 0x7F) | 0x80);
    v >>= 7;
  }
  buf[n++] = static_cast<char>(v);
  out.append(buf, n);
}

// Writes fields of one message at the end of `out`. Fields with default
// values are written anyway when asked: the caller decides what to omit.
class ProtoWriter {
 public:
  explicit ProtoWriter(std::string& out) noexcept : out_(out) {}

  void tag(uint32_t field, WireType type) {
    append_varint(out_, (uint64_t{field} << 3) | static_cast<uint32_t>(type));
  }
  void varint_field(uint32_t field, uint64_t v) {
    tag(field, WireType::varint);
    append_varint(out_, v);
  }
  // int32/int64/enum: negative values are sign-extended to 10 bytes, as protobuf does.
  void int_field(uint32_t field, int64_t v) { varint_field(field, static_cast<uint64_t>(v)); }
  void bool_field(uint32_t field, bool v) { varint_field(field, v ? 1 : 0); }
  void double_field(uint32_t field, double v) {
    tag(field, WireType::fixed64);
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    append_le(bits, 8);
  }
  void float_field(uint32_t field, float v) {
    tag(field, WireType::fixed32);
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    append_le(bits, 4);
  }
  void bytes_field(uint32_t field, std::string_view v) {
    tag(field, WireType::length_delimited);
    append_varint(out_, v.size());
    out_.append(v.data(), v.size());
  }
  // A string given in two pieces (e.g. a "train/" prefix and a key), without
  // concatenating them first.
  void bytes_field(uint32_t field, std::string_view a, std::string_view b) {
    tag(field, WireType::length_delimited);
    append_varint(out_, a.size() + b.size());
    out_.append(a.data(), a.size());
    out_.append(b.data(), b.size());
  }
  // A nested message whose body `write(ProtoWriter&)` appends. The length is
  // not known in advance: one byte is reserved (enough for bodies < 128 bytes,
  // the common case) and the prefix is widened afterwards when needed.
  template <class F>
  void message_field(uint32_t field, F&& write) {
    tag(field, WireType::length_delimited);
    const size_t len_pos = out_.size();
    out_.push_back('\0');
    ProtoWriter body(out_);
    write(body);
    const size_t len = out_.size() - len_pos - 1;
    const size_t width = varint_size(len);
    if (width > 1) out_.insert(len_pos + 1, width - 1, '\0');
    size_t pos = len_pos;
    uint64_t v = len;
    while (v >= 0x80) {
      out_[pos++] = static_cast<char>((v & 0x7F) | 0x80);
      v >>= 7;
    }
    out_[pos] = static_cast<char>(v);
  }

  std::string& buffer() noexcept { return out_; }

 private:
  void append_le(uint64_t bits, size_t bytes) {
    char buf[8];
    for (size_t i = 0; i < bytes; ++i) buf[i] = static_cast<char>((bits >> (8 * i)) & 0xFF);
    out_.append(buf, bytes);
  }
  std::string& out_;
};

}  // namespace trainhook::tensorboard
