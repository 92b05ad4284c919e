// The few pieces of S3's XML answers we read (ListObjectsV2, multipart
// uploads, <Error>) and the one document we write (CompleteMultipartUpload).
// S3's answers are flat and regular, so a tag scanner suffices; no XML library.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace trainhook::flyte::s3xml {

// Text of every <tag>...</tag> in order, entities decoded.
std::vector<std::string> all(std::string_view xml, std::string_view tag);
// Text of the first <tag>...</tag>, entities decoded.
std::optional<std::string> first(std::string_view xml, std::string_view tag);
// Every <outer>...</outer> block, raw (for <Contents> of a listing).
std::vector<std::string_view> blocks(std::string_view xml, std::string_view outer);

std::string decode_entities(std::string_view text);
std::string escape(std::string_view text);

// "Code: Message" when the document is an S3 <Error>, else nullopt.
std::optional<std::string> error_of(std::string_view xml);

// <CompleteMultipartUpload> with (part number, ETag) pairs.
std::string complete_multipart_body(const std::vector<std::pair<int, std::string>>& parts);

}  // namespace trainhook::flyte::s3xml
