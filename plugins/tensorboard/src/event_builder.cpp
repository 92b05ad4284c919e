#include <trainhook/tensorboard/event_builder.hpp>

namespace trainhook::tensorboard {
namespace {

// DataType (types.proto) and DataClass (summary.proto) values.
constexpr int64_t kDtFloat = 1;
constexpr int64_t kDtString = 7;
constexpr int64_t kDataClassTensor = 2;

// SummaryMetadata{plugin_data{plugin_name, content}, data_class}.
void write_plugin_metadata(ProtoWriter& value, std::string_view plugin, std::string_view content) {
  value.message_field(9, [&](ProtoWriter& md) {          // Value.metadata
    md.message_field(1, [&](ProtoWriter& pd) {           // SummaryMetadata.plugin_data
      pd.bytes_field(1, plugin);                         // PluginData.plugin_name
      if (!content.empty()) pd.bytes_field(2, content);  // PluginData.content
    });
    md.int_field(4, kDataClassTensor);  // SummaryMetadata.data_class
  });
}

}  // namespace

void encode_file_version_event(std::string& out, double wall_time) {
  ProtoWriter event(out);
  event.double_field(1, wall_time);
  event.bytes_field(3, "brain.Event:2");  // Event.file_version
}

void write_scalar_value(ProtoWriter& summary, std::string_view prefix, std::string_view name, float value) {
  summary.message_field(1, [&](ProtoWriter& v) {  // Summary.value
    v.bytes_field(1, prefix, name);               // Value.tag
    v.float_field(2, value);                      // Value.simple_value
  });
}

void write_text_value(ProtoWriter& summary, std::string_view prefix, std::string_view name,
                      std::string_view text) {
  summary.message_field(1, [&](ProtoWriter& v) {
    v.bytes_field(1, prefix, name);
    // TextPluginData{version = 0} serialises to nothing, so no content.
    write_plugin_metadata(v, "text", {});
    v.message_field(8, [&](ProtoWriter& t) {                                     // Value.tensor (TensorProto)
      t.int_field(1, kDtString);                                                 // dtype
      t.message_field(2, [&](ProtoWriter& shape) {                               // tensor_shape
        shape.message_field(2, [&](ProtoWriter& dim) { dim.int_field(1, 1); });  // dim{size: 1}
      });
      t.bytes_field(8, text);  // string_val
    });
  });
}

void write_hparams_value(ProtoWriter& summary, std::string_view tag, std::string_view plugin_content) {
  summary.message_field(1, [&](ProtoWriter& v) {
    v.bytes_field(1, tag);
    write_plugin_metadata(v, "hparams", plugin_content);
    v.message_field(8, [&](ProtoWriter& t) {
      t.int_field(1, kDtFloat);
      t.message_field(2, [&](ProtoWriter& shape) {
        shape.message_field(2, [](ProtoWriter&) {});  // dim{size: 0}, size omitted as protobuf does
      });
    });
  });
}

}  // namespace trainhook::tensorboard
