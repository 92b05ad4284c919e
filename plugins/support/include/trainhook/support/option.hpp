// TRAINHOOK_OPTION: one field of a plugin's <Name>Options type, in LibTorch's
// TORCH_ARG style: a chained setter `opts.name(value)` returning the options,
// and getters `opts.name()` (const, and non-const for in-place edits).
//
//   class MyOptions {
//     TRAINHOOK_OPTION(std::string, url, "http://localhost");
//     TRAINHOOK_OPTION(int64_t, retries, 3);
//   };
//   auto o = MyOptions().url("http://h:1").retries(5);
//
// The macro ends in a private: section holding the field (`name_`), so each
// use starts with its own public: line.
#pragma once

#include <utility>

#define TRAINHOOK_OPTION(T, name, ...)                     \
 public:                                                   \
  auto name(const T& new_##name)->decltype(*this) {        \
    this->name##_ = new_##name;                            \
    return *this;                                          \
  }                                                        \
  auto name(T&& new_##name)->decltype(*this) {             \
    this->name##_ = std::move(new_##name);                 \
    return *this;                                          \
  }                                                        \
  const T& name() const noexcept { return this->name##_; } \
  T& name() noexcept { return this->name##_; }             \
                                                           \
 private:                                                  \
  T name##_ = __VA_ARGS__
