// Reading torch.save files without Python or LibTorch: the zip
// (torch_zip_reader), the restricted pickle machine (pickle_reader) and the
// storage checks (torch_save_file). Valid files give plain values; hostile or
// damaged ones (a GLOBAL of os.system, opcodes outside the list, truncation,
// lying sizes) are refused naming the file and what is wrong.
#include <trainhook/checkpoint/pickle_reader.hpp>
#include <trainhook/checkpoint/torch_save_file.hpp>
#include <trainhook/checkpoint/torch_zip_reader.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

using namespace trainhook;
using Kind = PickleNode::Kind;
using namespace std::string_literals;

namespace {

void le(std::string& s, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) s += static_cast<char>(i < 8 ? (v >> (8 * i)) & 0xff : 0);  // n may exceed 8
}

// A stored (uncompressed) zip, as torch.save writes one.
std::string make_zip(const std::vector<std::pair<std::string, std::string>>& records) {
  std::string out, dir;
  for (const auto& [name, data] : records) {
    const uint64_t offset = out.size();
    le(out, 0x04034b50, 4);
    le(out, 0, 22);  // version, flags, method 0, time, date, crc, sizes left 0 (the directory has them)
    le(out, name.size(), 2);
    le(out, 0, 2);
    out += name + data;
    le(dir, 0x02014b50, 4);
    le(dir, 0, 16);  // versions, flags, method 0, time, date, crc
    le(dir, data.size(), 4);
    le(dir, data.size(), 4);
    le(dir, name.size(), 2);
    le(dir, 0, 12);  // extra, comment, disk, attributes
    le(dir, offset, 4);
    dir += name;
  }
  const uint64_t dir_offset = out.size();
  out += dir;
  le(out, 0x06054b50, 4);
  le(out, 0, 4);
  le(out, records.size(), 2);
  le(out, records.size(), 2);
  le(out, dir.size(), 4);
  le(out, dir_offset, 4);
  le(out, 0, 2);
  return out;
}

std::string unicode(const std::string& s) {
  std::string out = "X";
  le(out, s.size(), 4);
  return out + s;
}

// {"step": tensor(2.0), "big": 2**64 + 1, "neg": -3, "x": [1.5, None, True]}
// as protocol 2 writes it (torch.save's layout of a 0-d float tensor).
std::string sample_pickle() {
  std::string p = "\x80\x02}q\x00("s;
  p += unicode("step");
  p += "ctorch._utils\n_rebuild_tensor_v2\nq\x01((" + unicode("storage") + "ctorch\nFloatStorage\n" +
       unicode("0") + unicode("cpu") + "K\x01tQK\x00))"s + "\x89" + "ccollections\nOrderedDict\n)RtR";
  p += unicode("big");
  p += std::string("\x8a\x09\x01\x00\x00\x00\x00\x00\x00\x00\x01", 11);
  p += unicode("neg");
  p += std::string("\x8a\x01\xfd", 3);
  p += unicode("x");
  p += "](G\x3f\xf8\x00\x00\x00\x00\x00\x00N\x88"s + "eu.";
  return p;
}

std::string float_bytes(float f) {
  std::string s(4, '\0');
  std::memcpy(s.data(), &f, 4);
  return s;
}

std::string error_of(const std::string& bytes, const std::string& name = "optimizer.pt") {
  try {
    TorchSaveFile f(bytes, name);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

std::string pickle_error(const std::string& pickle) {
  try {
    read_pickle(pickle, "scheduler.pt");
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a torch.save file gives its values and tensors") {
  const std::string file = make_zip({{"archive/data.pkl", sample_pickle()},
                                     {"archive/data/0", float_bytes(2.0f)},
                                     {"archive/version", "3\n"}});
  TorchSaveFile f(file, "optimizer.pt");
  const PickleGraph& g = f.graph();
  REQUIRE(g.root().kind == Kind::Dict);
  const PickleNode* step = g.find(g.root(), "step");
  REQUIRE(step != nullptr);
  REQUIRE(step->kind == Kind::Tensor);
  CHECK(step->tensor.dtype == "Float");
  CHECK(step->tensor.sizes.empty());
  float v = 0;
  std::memcpy(&v, f.storage(step->tensor).data(), 4);
  CHECK(v == 2.0f);
  const PickleNode* big = g.find(g.root(), "big");
  REQUIRE(big != nullptr);
  CHECK(big->kind == Kind::BigInt);  // LONG1 of 9 bytes: Python's random.getstate() has such ints
  CHECK(g.find(g.root(), "neg")->integer == -3);
  const PickleNode* x = g.find(g.root(), "x");
  REQUIRE(x->kind == Kind::List);
  REQUIRE(x->items.size() == 3);
  CHECK(g.node(x->items[0]).number == 1.5);
  CHECK(g.node(x->items[1]).kind == Kind::None);
  CHECK(g.node(x->items[2]).boolean);
}

TEST_CASE("a GLOBAL outside the list is refused by name, never called") {
  const std::string e = pickle_error(
      "\x80\x02"
      "cos\nsystem\n" +
      unicode("touch /tmp/pwned") + "\x85R.");
  CHECK(e.find("scheduler.pt") == 0);
  CHECK(e.find("GLOBAL os.system is not allowed") != std::string::npos);
  CHECK(pickle_error("\x80\x02"
                     "cbuiltins\neval\n.")
            .find("builtins.eval") != std::string::npos);
  // numpy's globals are values only: REDUCE of them builds an object, never a call
  const PickleGraph g = read_pickle(
      "\x80\x02"
      "cnumpy\ndtype\n" +
          unicode("u4") + "\x85R.",
      "rng_state.pth");
  CHECK(g.root().kind == Kind::Object);
  CHECK(g.root().text == "numpy.dtype");
}

TEST_CASE("opcodes outside the list are refused by name") {
  CHECK(pickle_error("\x80\x02(i__main__\nEvil\n.").find("opcode INST (0x69) is not allowed") !=
        std::string::npos);
  CHECK(pickle_error("\x80\x02"
                     "I1\n.")
            .find("opcode INT") != std::string::npos);
  CHECK(pickle_error(std::string("\x80\x02\xff.", 4)).find("opcode 0xff is not allowed") !=
        std::string::npos);
  CHECK(pickle_error("\x80\x09.").find("pickle protocol 9") != std::string::npos);
  CHECK(pickle_error("\x80\x02"
                     "a.")
            .find("APPEND on an empty stack") != std::string::npos);
  CHECK(pickle_error("\x80\x02"
                     "K\x01"
                     "K\x02"
                     "a.")
            .find("APPEND on an int, not a list") != std::string::npos);
  CHECK(pickle_error("\x80\x02h\x05.").find("never PUT") != std::string::npos);
}

TEST_CASE("truncation and lying sizes are refused naming the file") {
  CHECK(pickle_error("\x80\x02}").find("ends before its STOP") != std::string::npos);
  CHECK(pickle_error(std::string("\x80\x02X\xff\xff\xff\x7f"
                                 "abc.",
                                 10))
            .find("lying size") != std::string::npos);
  CHECK(pickle_error(std::string("\x80\x02\x8a\x20\x01.", 6)).find("LONG1") != std::string::npos);

  const std::string good =
      make_zip({{"archive/data.pkl", sample_pickle()}, {"archive/data/0", float_bytes(2.0f)}});
  const std::string cut = error_of(good.substr(0, good.size() / 2));
  CHECK(cut.find("optimizer.pt: not a readable torch.save zip file") == 0);
  CHECK(cut.find("truncated") != std::string::npos);
  CHECK(error_of("not a zip").find("optimizer.pt: not a readable torch.save zip file") == 0);
  // the storage holds 2 bytes where the pickle says one float (4 bytes)
  const std::string short_storage =
      error_of(make_zip({{"archive/data.pkl", sample_pickle()}, {"archive/data/0", "ab"}}));
  CHECK(short_storage.find("optimizer.pt: storage record 'archive/data/0' holds 2 bytes") == 0);
  CHECK(short_storage.find("lying size") != std::string::npos);
  CHECK(error_of(make_zip({{"archive/data.pkl", sample_pickle()}})).find("'archive/data/0' is missing") !=
        std::string::npos);
  // a tensor view reaching past its storage (offset 1 of a one-element storage)
  std::string past = sample_pickle();
  past.replace(past.find("tQK\x00"s), 4, "tQK\x01");
  CHECK(error_of(make_zip({{"archive/data.pkl", past}, {"archive/data/0", float_bytes(1.0f)}}))
            .find("lying size") != std::string::npos);
  // a directory entry whose record runs past the end of the file
  std::string lying = good;
  const size_t dir = lying.find(std::string("PK\x01\x02", 4));
  lying[dir + 27] = '\x7f';  // the unpacked size's top byte
  lying[dir + 23] = '\x7f';  // the stored size's top byte
  CHECK(error_of(lying).find("runs past the end of the file") != std::string::npos);
  CHECK(error_of(make_zip({{"archive/other.pkl", "x"}})).find("has no <archive>/data.pkl") !=
        std::string::npos);
}

TEST_CASE("a list that holds itself is a cycle of indices") {
  const PickleGraph g = read_pickle(
      "\x80\x02]q\x00h\x00"
      "a."s,
      "x.pt");
  REQUIRE(g.root().kind == Kind::List);
  REQUIRE(g.root().items.size() == 1);
  CHECK(g.root().items[0] == g.root_index());
}
