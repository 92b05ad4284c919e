// Builds the protobuf bytes of TensorBoard's Event and Summary.Value messages,
// with the field numbers of tensorboard/compat/proto/{event,summary,tensor}.proto.
//
// Scalars are written as Summary.Value.simple_value with no metadata, the form
// every TensorBoard reader shows as a scalar (the legacy EventAccumulator's
// Scalars(), the plugin accumulator after data_compat migration, and the Rust
// data server). Text and hparams values carry plugin metadata and a tensor.
#pragma once

#include <trainhook/tensorboard/proto_writer.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace trainhook::tensorboard {

// Appends Event{wall_time, file_version = "brain.Event:2"}: the first record of every file.
void encode_file_version_event(std::string& out, double wall_time);

// Appends Event{wall_time, step, summary = {values written by write_values(ProtoWriter&)}}.
template <class F>
void encode_summary_event(std::string& out, double wall_time, int64_t step, F&& write_values) {
  ProtoWriter event(out);
  event.double_field(1, wall_time);                       // Event.wall_time
  event.int_field(2, step);                               // Event.step
  event.message_field(5, std::forward<F>(write_values));  // Event.summary
}

// Inside a Summary: one Value{tag = prefix + name, simple_value = value}.
void write_scalar_value(ProtoWriter& summary, std::string_view prefix, std::string_view name, float value);

// Inside a Summary: a text-plugin Value{tag = prefix + name, rank-1 DT_STRING tensor holding text}.
void write_text_value(ProtoWriter& summary, std::string_view prefix, std::string_view name,
                      std::string_view text);

// Inside a Summary: an hparams-plugin Value{tag, metadata content = HParamsPluginData bytes,
// the plugin's "null tensor" (empty DT_FLOAT vector)}.
void write_hparams_value(ProtoWriter& summary, std::string_view tag, std::string_view plugin_content);

}  // namespace trainhook::tensorboard
