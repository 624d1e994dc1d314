// The GGUF container: a file written field by field here read back (values, tensors, offsets, alignment), and
// every refusal the reader promises (attn/io/gguf.h), each with its kind, its byte and a reason that names what
// is wrong; every prefix of a valid file refused; a 4 GiB sparse file refused within bounded memory.
#include "attn/io/gguf.h"
#include "gguf_writer.h"
#include "test_util.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <bit>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace attn::io {
namespace {

namespace fs = std::filesystem;
using test::Bytes;
using test::File;
using test::kv_string;
using test::kv_u32;
using test::Writer;

Bytes f32_bytes(std::vector<float> v) {
  Bytes b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// A small valid file: every scalar type, arrays of strings and integers, an F32 matrix and an F16 vector.
File valid() {
  File f;
  f.kvs.push_back(kv_string("general.architecture", "llama"));
  f.kvs.push_back(kv_u32("llama.block_count", 2));
  f.kvs.push_back([](Writer& w) { w.str("llama.rope.freq_base").type(GgufType::F32).put(10000.0f); });
  f.kvs.push_back([](Writer& w) { w.str("tokenizer.ggml.add_bos_token").type(GgufType::Bool).put<std::uint8_t>(1); });
  f.kvs.push_back([](Writer& w) { w.str("i8").type(GgufType::I8).put<std::int8_t>(-5); });
  f.kvs.push_back([](Writer& w) { w.str("u64").type(GgufType::U64).put<std::uint64_t>(1ull << 40); });
  f.kvs.push_back([](Writer& w) { w.str("f64").type(GgufType::F64).put(0.125); });
  f.kvs.push_back([](Writer& w) {
    w.str("tokenizer.ggml.tokens").type(GgufType::Array).type(GgufType::String).put<std::uint64_t>(3);
    w.str("<unk>").str("a").str("");
  });
  f.kvs.push_back([](Writer& w) {
    w.str("tokenizer.ggml.token_type").type(GgufType::Array).type(GgufType::I32).put<std::uint64_t>(3);
    w.put<std::int32_t>(2).put<std::int32_t>(1).put<std::int32_t>(-1);
  });
  f.tensors.push_back({"token_embd.weight", {4, 3}, 0, f32_bytes({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})});
  f.tensors.push_back({"output_norm.weight", {4}, 1, Bytes{0x00, 0x3C, 0x00, 0xC0, 0x00, 0x00, 0x01, 0x00}});
  return f;
}

Result<GgufFile> parse(const Bytes& b) { return GgufFile::parse(b, "test.gguf"); }

// The refusal of `b`: its kind, byte and a fragment of its reason.
void expect_refused(const Bytes& b, ErrorKind kind, std::int64_t offset, std::string_view fragment) {
  const auto r = parse(b);
  ASSERT_FALSE(r.has_value()) << "accepted";
  EXPECT_EQ(r.error().kind, kind) << r.error().message();
  EXPECT_EQ(r.error().file, "test.gguf");
  if (offset >= 0) {
    EXPECT_EQ(r.error().offset, offset) << r.error().message();
  }
  EXPECT_NE(r.error().reason.find(fragment), std::string::npos) << r.error().message();
}

TEST(Gguf, ReadsEveryValueTypeAndTheTensors) {
  for (const std::uint32_t version : {2u, 3u}) {
    File f = valid();
    f.version = version;
    const Bytes b = f.bytes();
    const auto r = parse(b);
    ASSERT_TRUE(r.has_value()) << r.error().message();
    EXPECT_EQ(r->version(), version);
    EXPECT_EQ(r->alignment(), 32);
    EXPECT_EQ(r->data_start() % 32, 0);
    ASSERT_EQ(r->keys().size(), 9u);
    EXPECT_EQ(r->keys().front(), "general.architecture");
    EXPECT_EQ(**r->string("general.architecture"), "llama");
    EXPECT_EQ(**r->integer("llama.block_count"), 2);
    EXPECT_EQ(**r->number("llama.block_count"), 2.0);  // an integer reads as a number too
    EXPECT_EQ(**r->number("llama.rope.freq_base"), 10000.0);
    EXPECT_EQ(**r->boolean("tokenizer.ggml.add_bos_token"), true);
    EXPECT_EQ(**r->integer("i8"), -5);
    EXPECT_EQ(**r->integer("u64"), std::int64_t{1} << 40);
    EXPECT_EQ(**r->number("f64"), 0.125);
    EXPECT_FALSE(r->integer("absent")->has_value());
    const GgufValue* tokens = r->value("tokenizer.ggml.tokens");
    ASSERT_NE(tokens, nullptr);
    EXPECT_TRUE(tokens->array);
    EXPECT_EQ(tokens->type, GgufType::String);
    EXPECT_EQ(tokens->strings, (std::vector<std::string>{"<unk>", "a", ""}));
    EXPECT_EQ(r->value("tokenizer.ggml.token_type")->integers, (std::vector<std::int64_t>{2, 1, -1}));
    // A key of another type is an error naming the key and its byte.
    const auto wrong = r->integer("general.architecture");
    ASSERT_FALSE(wrong.has_value());
    EXPECT_EQ(wrong.error().offset, r->value("general.architecture")->offset);
    EXPECT_NE(wrong.error().reason.find("general.architecture is a string, not an integer"), std::string::npos);

    ASSERT_EQ(r->tensors().size(), 2u);
    const GgufTensor* e = r->find("token_embd.weight");
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->shape(), (std::vector<std::int64_t>{3, 4}));
    EXPECT_EQ(e->rows(), 3);
    EXPECT_EQ(e->type_name(), "F32");
    EXPECT_EQ(e->offset, r->data_start());
    EXPECT_EQ(e->bytes, 48);
    const auto values = r->to_float(*e);
    ASSERT_TRUE(values.has_value()) << values.error().message();
    EXPECT_EQ((*values)[5], 5.0f);
    const GgufTensor* n = r->find("output_norm.weight");
    EXPECT_EQ(n->offset, r->data_start() + 64);  // 48 bytes, aligned to 32
    const auto half = r->to_float(*n);
    ASSERT_TRUE(half.has_value());
    EXPECT_EQ(*half, (std::vector<float>{1.0f, -2.0f, 0.0f, std::bit_cast<float>(0x33800000u)}));  // 2^-24
  }
}

TEST(Gguf, HonoursTheFilesAlignment) {
  File f = valid();
  f.alignment = 64;
  f.kvs.push_back(kv_u32("general.alignment", 64));
  const auto r = parse(f.bytes());
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(r->alignment(), 64);
  EXPECT_EQ(r->data_start() % 64, 0);
  EXPECT_EQ(r->find("output_norm.weight")->offset, r->data_start() + 64);
}

TEST(Gguf, RefusesEveryPrefixOfAValidFile) {
  const Bytes b = valid().bytes();
  for (std::size_t n = 0; n < b.size(); ++n) {
    const auto r = parse(Bytes(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(n)));
    ASSERT_FALSE(r.has_value()) << "a prefix of " << n << " of " << b.size() << " bytes was accepted";
    EXPECT_EQ(r.error().kind, ErrorKind::Truncated) << n << ": " << r.error().message();
    EXPECT_GE(r.error().offset, 0) << r.error().message();
  }
}

TEST(Gguf, RefusesOtherFilesAndVersions) {
  Bytes b = valid().bytes();
  b[0] = 'P';
  expect_refused(b, ErrorKind::Malformed, 0, "not a GGUF file");
  for (const auto& [version, fragment] :
       std::vector<std::pair<std::uint32_t, std::string>>{{1, "GGUF version 1"},
                                                          {4, "GGUF version 4; AttnScope reads versions 2 and 3"},
                                                          {0x03000000, "big-endian"}}) {
    File f = valid();
    f.version = version;
    expect_refused(f.bytes(), ErrorKind::Unsupported, 4, fragment);
  }
}

TEST(Gguf, RefusesAbsurdCountsBeforeAllocating) {
  File f = valid();
  f.tensor_count = std::int64_t{1} << 60;
  expect_refused(f.bytes(), ErrorKind::TooLarge, 8, "tensors, over the 1,048,576 allowed");
  f = valid();
  f.kv_count = std::int64_t{1} << 40;
  expect_refused(f.bytes(), ErrorKind::TooLarge, 16, "keys, over the 65,536 allowed");
  // More keys than the file holds: the file ends inside the next one.
  f = valid();
  f.tensors.clear();
  f.alignment = 1;  // no padding after the key/values: the file ends where key 10 would start
  f.kv_count = 10;
  expect_refused(f.bytes(), ErrorKind::Truncated, -1, "the file ends inside key 10: 8 bytes needed, 0 left");

  f = File{};
  f.kvs.push_back([](Writer& w) {
    w.str("big").type(GgufType::Array).type(GgufType::U32).put<std::uint64_t>(std::uint64_t{1} << 61);
  });
  expect_refused(f.bytes(), ErrorKind::Truncated, 4 + 4 + 8 + 8 + 8 + 3 + 4 + 4, "claims");
  f = File{};
  f.kvs.push_back([](Writer& w) { w.str("long").type(GgufType::String).put<std::uint64_t>(std::uint64_t{1} << 62); });
  expect_refused(f.bytes(), ErrorKind::TooLarge, 4 + 4 + 8 + 8 + 8 + 4 + 4, "bytes long, over the");
  f = File{};
  f.kvs.push_back([](Writer& w) { w.put<std::uint64_t>(std::uint64_t{1} << 20); });  // a key of a MiB
  expect_refused(f.bytes(), ErrorKind::TooLarge, 24, "key 1 is 1,048,576 bytes long, over the 65,535 allowed");
}

TEST(Gguf, RefusesMalformedKeysAndValues) {
  const auto one = [](std::function<void(Writer&)> kv) {
    File f;
    f.kvs.push_back(std::move(kv));
    return f.bytes();
  };
  expect_refused(one([](Writer& w) { w.str("k").put<std::uint32_t>(13).put<std::uint32_t>(0); }),
                 ErrorKind::Unsupported, 24 + 9, "value type 13, which GGUF does not define");
  expect_refused(one([](Writer& w) {
                   w.str("k").type(GgufType::Array).type(GgufType::Array).type(GgufType::U8).put<std::uint64_t>(0);
                 }),
                 ErrorKind::Unsupported, 24 + 9 + 4, "an array of arrays");
  expect_refused(one([](Writer& w) { w.str("k").type(GgufType::Array).put<std::uint32_t>(99); }),
                 ErrorKind::Unsupported, 24 + 9 + 4, "array of value type 99");
  expect_refused(one([](Writer& w) { w.str("k").type(GgufType::Bool).put<std::uint8_t>(2); }), ErrorKind::Malformed,
                 24 + 9 + 4, "a bool of value 2");
  expect_refused(one([](Writer& w) { w.str("k").type(GgufType::U64).put<std::uint64_t>(~std::uint64_t{0}); }),
                 ErrorKind::OutOfRange, 24 + 9 + 4, "a u64 over 2^63 - 1");
  expect_refused(one([](Writer& w) { w.str("").type(GgufType::U8).put<std::uint8_t>(0); }), ErrorKind::Malformed, 24,
                 "key 1 is empty");
  File f;
  f.kvs.push_back(kv_u32("same", 1));
  f.kvs.push_back(kv_u32("same", 2));
  expect_refused(f.bytes(), ErrorKind::Malformed, 24 + 12 + 4 + 4, "the key \"same\" appears twice");
  for (const auto& bad : {std::function<void(Writer&)>(kv_string("general.alignment", "32")),
                          kv_u32("general.alignment", 48), kv_u32("general.alignment", 0)}) {
    File g = valid();
    g.kvs.push_back(bad);
    const auto r = parse(g.bytes());
    ASSERT_FALSE(r.has_value());
    EXPECT_NE(r.error().reason.find("general.alignment"), std::string::npos) << r.error().message();
  }
}

TEST(Gguf, RefusesMalformedTensors) {
  const auto with = [](std::function<void(File&)> change) {
    File f = valid();
    change(f);
    return f.bytes();
  };
  expect_refused(with([](File& f) { f.tensors[1].name = f.tensors[0].name; }), ErrorKind::Malformed, -1,
                 "the tensor \"token_embd.weight\" appears twice (first at byte");
  expect_refused(with([](File& f) { f.tensors[0].name.clear(); }), ErrorKind::Malformed, -1, "has an empty name");
  expect_refused(with([](File& f) { f.tensors[0].name = std::string(64, 'x'); }), ErrorKind::TooLarge, -1,
                 "is 64 bytes long, over the 63 allowed");
  expect_refused(with([](File& f) {
                   f.tensors[0].ne = {1, 1, 1, 1, 1};
                 }),
                 ErrorKind::Unsupported, -1, "has 5 dimensions; ggml has at most 4");
  expect_refused(with([](File& f) {
                   f.tensors[0].ne = {1ull << 40, 1ull << 40};
                 }),
                 ErrorKind::OutOfRange, -1, "element count overflows 64 bits");
  expect_refused(with([](File& f) { f.tensors[0].type = 99; }), ErrorKind::Unsupported, -1,
                 "has ggml type 99, which ggml does not define");
  // Q8_0 (type 8) rows hold whole blocks of 32.
  expect_refused(with([](File& f) {
                   f.tensors[0].type = 8;
                   f.tensors[0].ne = {33, 1};
                 }),
                 ErrorKind::Malformed, -1, "rows hold 33 values, not a whole number of Q8_0 blocks of 32");
  expect_refused(with([](File& f) { f.tensors[1].offset = 40; }), ErrorKind::Malformed, -1,
                 "offset 40 is not a multiple of the alignment 32");
  expect_refused(with([](File& f) { f.tensors[1].offset = 32; }), ErrorKind::Malformed, -1,
                 "tensors \"token_embd.weight\" and \"output_norm.weight\" overlap");
  Bytes b = valid().bytes();
  b.resize(b.size() - 1);
  expect_refused(b, ErrorKind::Truncated, -1, "\"output_norm.weight\" (8 bytes of F16 at data offset 64) ends past");
}

// The process's data segment and private writable mappings (VmData), in bytes: what RLIMIT_DATA limits.
std::int64_t vm_data() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmData:", 0) == 0) return std::stoll(line.substr(7)) * 1024;
  }
  return -1;
}

// Opens `path` in a child whose heap may grow by at most 256 MiB (RLIMIT_DATA; the file's read-only mapping does not
// count): exits 0 when the header's counts are refused against the memory budget, 1 otherwise. Storing what the
// header claims would take gigabytes, so a reader that allocates before checking is killed or fails there.
[[noreturn]] void open_with_bounded_heap(const fs::path& path) {
  const rlim_t limit = static_cast<rlim_t>(vm_data() + (std::int64_t{256} << 20));
  const rlimit r{limit, limit};
  setrlimit(RLIMIT_DATA, &r);
  const auto file = GgufFile::open(path);
  // The budget's refusal, not a caught bad_alloc ("out of memory while reading the GGUF header").
  std::_Exit(!file.has_value() && file.error().reason.find("may take in memory") != std::string::npos ? 0 : 1);
}

// A sparse file of 4 GiB whose header claims an array of four billion bytes: refused from the counts, through the
// mapping, in bounded memory.
TEST(Gguf, RefusesASparseFileOfFourGibibytesInBoundedMemory) {
  attn::test::TempDir dir;
  const fs::path path = dir.path() / "sparse.gguf";
  File f;
  f.kvs.push_back([](Writer& w) {
    w.str("tokenizer.ggml.scores")
        .type(GgufType::Array)
        .type(GgufType::U8)
        .put<std::uint64_t>((std::uint64_t{4} << 30) - 4096);
  });
  f.tensor_count = 1000;
  {
    std::ofstream out(path, std::ios::binary);
    const Bytes b = f.bytes();
    out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  }
  fs::resize_file(path, std::uint64_t{4} << 30);
  const auto r = GgufFile::open(path);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, ErrorKind::TooLarge) << r.error().message();
  EXPECT_EQ(r.error().file, path.string());
  EXPECT_NE(r.error().reason.find("more than the key/values may take in memory (256 MiB)"), std::string::npos)
      << r.error().message();
  EXPECT_EXIT(open_with_bounded_heap(path), ::testing::ExitedWithCode(0), "");
  // The same file with tensor infos of zeros after a small key: the first info's empty name is the error.
  File g;
  g.tensor_count = 1000;
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    const Bytes b = g.bytes();
    out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  }
  fs::resize_file(path, std::uint64_t{4} << 30);
  const auto s = GgufFile::open(path);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().offset, 24);
  EXPECT_NE(s.error().reason.find("tensor info 1 has an empty name"), std::string::npos) << s.error().message();
}

// The fuzzer's seeds (tests/fuzz/make_corpus.py) are valid files, so that its mutations start from what the reader
// accepts: every one opens and every tensor dequantises.
TEST(Gguf, TheFuzzSeedsAreValid) {
  int seeds = 0;
  for (const auto& e : fs::directory_iterator(fs::path(ATTN_SOURCE_DIR) / "tests" / "fuzz" / "corpus" / "gguf")) {
    const auto f = GgufFile::open(e.path());
    ASSERT_TRUE(f.has_value()) << f.error().message();
    for (const GgufTensor& t : f->tensors()) {
      const auto values = f->to_float(t);
      EXPECT_TRUE(values.has_value()) << e.path() << " " << t.name << ": " << values.error().message();
    }
    ++seeds;
  }
  EXPECT_GE(seeds, 5);
}

TEST(Gguf, NamesTheExtension) {
  EXPECT_TRUE(is_gguf_name("model.gguf"));
  EXPECT_TRUE(is_gguf_name("/a/b/Model.Q4_K_M.GGUF"));
  EXPECT_FALSE(is_gguf_name("model.safetensors"));
  EXPECT_FALSE(is_gguf_name("gguf"));
}

}  // namespace
}  // namespace attn::io
