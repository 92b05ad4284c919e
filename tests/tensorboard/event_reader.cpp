#include "event_reader.hpp"

#include <trainhook/tensorboard/crc32c.hpp>

#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace tbtest {
namespace {

uint64_t read_varint(const std::string& s, size_t& pos) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos >= s.size()) throw std::runtime_error("truncated varint");
    const auto b = static_cast<uint8_t>(s[pos++]);
    v |= uint64_t{b & 0x7Fu} << shift;
    if ((b & 0x80) == 0) return v;
  }
  throw std::runtime_error("varint too long");
}

uint64_t read_le(const std::string& s, size_t& pos, size_t n) {
  if (pos + n > s.size()) throw std::runtime_error("truncated fixed field");
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= uint64_t{static_cast<uint8_t>(s[pos + i])} << (8 * i);
  pos += n;
  return v;
}

}  // namespace

std::vector<WireField> decode_message(const std::string& bytes) {
  std::vector<WireField> out;
  size_t pos = 0;
  while (pos < bytes.size()) {
    const uint64_t key = read_varint(bytes, pos);
    WireField f;
    f.number = static_cast<uint32_t>(key >> 3);
    f.wire_type = static_cast<uint32_t>(key & 7);
    switch (f.wire_type) {
      case 0:
        f.varint = read_varint(bytes, pos);
        break;
      case 1:
        f.varint = read_le(bytes, pos, 8);
        break;
      case 5:
        f.varint = read_le(bytes, pos, 4);
        break;
      case 2: {
        const uint64_t n = read_varint(bytes, pos);
        if (pos + n > bytes.size()) throw std::runtime_error("truncated length-delimited field");
        f.bytes = bytes.substr(pos, n);
        pos += n;
        break;
      }
      default:
        throw std::runtime_error("unsupported wire type " + std::to_string(f.wire_type));
    }
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<std::string> read_records(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string all = ss.str();
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < all.size()) {
    const std::string where = path + " at offset " + std::to_string(pos);
    if (pos + 12 > all.size()) throw std::runtime_error("truncated record header in " + where);
    size_t p = pos;
    const uint64_t len = read_le(all, p, 8);
    const auto len_crc = static_cast<uint32_t>(read_le(all, p, 4));
    if (len_crc != trainhook::tensorboard::mask_crc(trainhook::tensorboard::crc32c(all.data() + pos, 8)))
      throw std::runtime_error("bad length CRC in " + where);
    if (p + len + 4 > all.size()) throw std::runtime_error("truncated record data in " + where);
    std::string data = all.substr(p, len);
    p += len;
    const auto data_crc = static_cast<uint32_t>(read_le(all, p, 4));
    if (data_crc != trainhook::tensorboard::mask_crc(trainhook::tensorboard::crc32c(data)))
      throw std::runtime_error("bad data CRC in " + where);
    out.push_back(std::move(data));
    pos = p;
  }
  return out;
}

DecodedEvent decode_event(const std::string& data) {
  DecodedEvent e;
  for (const auto& f : decode_message(data)) {
    if (f.number == 1) std::memcpy(&e.wall_time, &f.varint, 8);
    if (f.number == 2) e.step = static_cast<int64_t>(f.varint);
    if (f.number == 3) e.file_version = f.bytes;
    if (f.number != 5) continue;
    for (const auto& vf : decode_message(f.bytes)) {
      if (vf.number != 1) continue;
      DecodedValue v;
      for (const auto& x : decode_message(vf.bytes)) {
        if (x.number == 1) v.tag = x.bytes;
        if (x.number == 2) {
          const auto bits = static_cast<uint32_t>(x.varint);
          float fl;
          std::memcpy(&fl, &bits, 4);
          v.simple_value = fl;
        }
        if (x.number == 9) {
          for (const auto& md : decode_message(x.bytes))
            if (md.number == 1)
              for (const auto& pd : decode_message(md.bytes)) {
                if (pd.number == 1) v.plugin_name = pd.bytes;
                if (pd.number == 2) v.plugin_content = pd.bytes;
              }
        }
        if (x.number == 8)
          for (const auto& t : decode_message(x.bytes))
            if (t.number == 8) v.string_val.push_back(t.bytes);
      }
      e.values.push_back(std::move(v));
    }
  }
  return e;
}

std::vector<DecodedEvent> read_events(const std::string& path) {
  std::vector<DecodedEvent> out;
  for (const auto& r : read_records(path)) out.push_back(decode_event(r));
  return out;
}

}  // namespace tbtest
