#include <trainhook/support/spool.hpp>

#include <fstream>
#include <stdexcept>
#include <system_error>

namespace trainhook::support {

namespace fs = std::filesystem;

namespace {
// Above this acknowledged prefix, the remaining lines are moved to a new file.
constexpr uint64_t kCompactAbove = 4u << 20;

[[noreturn]] void fail(const fs::path& file, const std::string& what) {
  throw std::runtime_error("spool " + file.string() + ": " + what);
}
}  // namespace

Spool::Spool(fs::path file) : file_(std::move(file)), ack_file_(file_.string() + ".ack") {
  std::error_code ec;
  if (!fs::exists(file_, ec)) {
    fs::remove(ack_file_, ec);
    return;
  }
  {
    std::ifstream ack(ack_file_);
    if (ack) ack >> ack_offset_;
  }
  uint64_t size = fs::file_size(file_, ec);
  if (ec) fail(file_, "cannot read its size: " + ec.message());
  if (ack_offset_ > size) ack_offset_ = size;
  // Count pending lines; cut a torn last line left by a crash mid-append.
  std::ifstream in(file_, std::ios::binary);
  if (!in) fail(file_, "cannot open for reading");
  in.seekg(static_cast<std::streamoff>(ack_offset_));
  uint64_t offset = ack_offset_, last_complete = ack_offset_;
  std::string line;
  while (std::getline(in, line)) {
    offset += line.size();
    if (in.eof()) break;  // no newline after it: torn
    offset += 1;
    last_complete = offset;
    if (!line.empty()) ++pending_lines_;
  }
  in.close();
  if (last_complete < size) fs::resize_file(file_, last_complete, ec);
  if (pending_lines_ == 0) {
    fs::remove(file_, ec);
    fs::remove(ack_file_, ec);
    ack_offset_ = 0;
  }
}

void Spool::append(const std::vector<std::string>& lines) {
  if (lines.empty()) return;
  std::error_code ec;
  if (file_.has_parent_path()) fs::create_directories(file_.parent_path(), ec);
  std::ofstream out(file_, std::ios::binary | std::ios::app);
  if (!out) fail(file_, "cannot open for appending");
  for (const auto& l : lines) {
    out << l << '\n';
    ++pending_lines_;
  }
  out.flush();
  if (!out) fail(file_, "write failed (disk full?)");
}

SpoolChunk Spool::peek(size_t max_lines) const {
  SpoolChunk chunk;
  chunk.end_offset = ack_offset_;
  if (pending_lines_ == 0) return chunk;
  std::ifstream in(file_, std::ios::binary);
  if (!in) fail(file_, "cannot open for reading");
  in.seekg(static_cast<std::streamoff>(ack_offset_));
  std::string line;
  while (chunk.lines.size() < max_lines && std::getline(in, line)) {
    if (in.eof()) break;  // torn (being written): not yet part of the spool
    chunk.end_offset += line.size() + 1;
    if (!line.empty()) chunk.lines.push_back(std::move(line));
  }
  return chunk;
}

void Spool::acknowledge(const SpoolChunk& chunk) {
  if (chunk.end_offset <= ack_offset_) return;
  ack_offset_ = chunk.end_offset;
  pending_lines_ = pending_lines_ >= chunk.lines.size() ? pending_lines_ - chunk.lines.size() : 0;
  std::error_code ec;
  if (pending_lines_ == 0) {
    fs::remove(file_, ec);
    fs::remove(ack_file_, ec);
    ack_offset_ = 0;
    return;
  }
  write_ack();
  if (ack_offset_ > kCompactAbove) compact();
}

void Spool::write_ack() const {
  fs::path tmp = ack_file_.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << ack_offset_ << '\n';
    if (!out) fail(ack_file_, "cannot write the acknowledged offset");
  }
  std::error_code ec;
  fs::rename(tmp, ack_file_, ec);
  if (ec) fail(ack_file_, "cannot replace: " + ec.message());
}

void Spool::prepend(const std::vector<std::string>& lines) {
  if (lines.empty()) return;
  if (pending_lines_ == 0) return append(lines);
  rewrite(lines);
  pending_lines_ += lines.size();
}

void Spool::compact() { rewrite({}); }

void Spool::rewrite(const std::vector<std::string>& front) {
  fs::path tmp = file_.string() + ".compact";
  {
    std::ifstream in(file_, std::ios::binary);
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!in || !out) fail(file_, "cannot rewrite");
    for (const auto& l : front) out << l << '\n';
    in.seekg(static_cast<std::streamoff>(ack_offset_));
    // Guarded: << of an empty rdbuf sets failbit, which is not a write error.
    if (in.peek() != std::ifstream::traits_type::eof()) out << in.rdbuf();
    out.flush();
    if (!out) fail(tmp, "write failed while rewriting (disk full?)");
  }
  // The .ack goes first: a crash between the two steps then replays the old
  // file from offset 0 (acknowledged lines again, which a consumer replaying a
  // spool must expect anyway), never the new file from a stale, too-large offset.
  std::error_code ec;
  fs::remove(ack_file_, ec);
  fs::rename(tmp, file_, ec);
  if (ec) fail(file_, "cannot replace after rewriting: " + ec.message());
  ack_offset_ = 0;
}

}  // namespace trainhook::support
