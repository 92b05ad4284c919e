// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78) and the "masked" form
// that TFRecord framing stores, so a reader can tell a CRC of data that itself
// holds CRCs apart from the real one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace trainhook::tensorboard {

// CRC-32C of n bytes, continuing from a previous CRC (0 to start). Uses the
// SSE4.2 crc32 instruction when the CPU has it, else a portable table method.
uint32_t crc32c(const void* data, size_t n, uint32_t crc = 0) noexcept;
inline uint32_t crc32c(std::string_view s, uint32_t crc = 0) noexcept {
  return crc32c(s.data(), s.size(), crc);
}

// The table method only; exposed so tests can check both paths agree.
uint32_t crc32c_portable(const void* data, size_t n, uint32_t crc = 0) noexcept;

// ((c >> 15) | (c << 17)) + 0xA282EAD8, modulo 2^32.
constexpr uint32_t mask_crc(uint32_t crc) noexcept {
  return static_cast<uint32_t>(((crc >> 15) | (crc << 17)) + 0xA282EAD8u);
}

}  // namespace trainhook::tensorboard
