// The safetensors container: every refusal of tools/make_bad_safetensors.py's corpus (reason and byte
// offset), exact F16/BF16 conversion, the writer's byte layout against the reference's own tests, round
// trips of every float dtype, and the shape checks of matrix() and vector().
#include "attn/io/safetensors.h"
#include "test_util.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace attn::io {
namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<std::uint8_t>;

fs::path data(const std::string& name) {
  return fs::path(ATTN_TEST_DATA_DIR) / "safetensors" / (name + ".safetensors");
}

Bytes read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

void write_file(const fs::path& path, const Bytes& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// A header (as given, unpadded) and data, in the container.
Bytes container(std::string_view header, const Bytes& payload = {}) {
  Bytes out(8 + header.size() + payload.size());
  for (std::size_t i = 0; i < 8; ++i)
    out[i] = static_cast<std::uint8_t>(static_cast<std::uint64_t>(header.size()) >> (8 * i));
  if (!header.empty()) std::memcpy(out.data() + 8, header.data(), header.size());
  if (!payload.empty()) std::memcpy(out.data() + 8 + header.size(), payload.data(), payload.size());
  return out;
}

using test::TempDir;

constexpr const char* kQuery = "bert.encoder.layer.0.attention.self.query.weight";

// ---------------------------------------------------------------------------------------------------------
// The bad-input corpus

struct BadFile {
  const char* name;
  std::int64_t offset;
  std::string reason;
};

void PrintTo(const BadFile& b, std::ostream* os) { *os << b.name; }

const std::string q = std::string("\"") + kQuery + "\"";

const BadFile kBadFiles[] = {
    {"empty", 0, "the file is empty; a safetensors file begins with an 8-byte header length"},
    {"four_bytes", 4, "the file ends at byte 4, inside the 8-byte header length"},
    {"header_too_large", 0, "header length 1152921504606846976 is over the limit of 100000000 bytes"},
    {"header_past_end", 0, "header length 1000 runs past the end of the file (68 bytes)"},
    {"not_utf8", 10, "the header is not valid UTF-8 (byte value 255)"},
    {"not_json", 15,
     "the header is not valid JSON: syntax error while parsing value - invalid literal; last read: '\"a\": no'"},
    {"header_not_object", 8, "the header is array, not a JSON object"},
    {"wrong_length", 9, "tensor " + q + ": data_offsets [0, 100] hold 100 bytes but shape [64, 64] of F32 needs 16384"},
    {"unknown_dtype", 9,
     "tensor \"w\": unknown dtype \"F12\" (known: BOOL, U8, I8, F8_E5M2, F8_E4M3, I16, U16, F16, BF16, I32, U32, "
     "F32, F64, I64, U64)"},
    {"offsets_reversed", 9, "tensor \"w\": data_offsets [8, 4] end before they begin"},
    {"negative_dim", 9, "tensor \"w\": \"shape\" [-1,2]: dimension -1 is negative"},
    {"shape_overflow", 9,
     "tensor \"w\": shape [1099511627776, 1099511627776] of F32 holds more bytes than fit in 63 bits"},
    {"duplicate_key", 62, "tensor \"w\" appears twice in the header (first at byte 9)"},
    {"metadata_not_string", 9, "\"__metadata__\" entry \"step\" is number, not a string"},
    {"overlap", 176, "tensor " + q + ": data_offsets [8, 24] overlap tensor \"a\" (data_offsets [0, 16])"},
    {"gap", 188,
     "tensor " + q +
         ": data_offsets [20, 36] leave a gap: bytes 16 to 20 of the data section belong to no tensor (the previous "
         "tensor, \"a\", ends at 16)"},
    {"gap_at_start", 116,
     "tensor " + q +
         ": data_offsets [4, 8] leave bytes 0 to 4 of the data section to no tensor: the first tensor's "
         "data must begin at 0"},
    {"truncated", 176,
     "tensor " + q +
         ": data_offsets [8, 72] run past the end of the file: its data section holds 40 bytes (the file "
         "is 208 bytes)"},
    {"trailing_bytes", 120, "tensor " + q + ": its data is the last and ends at byte 120, but 4 bytes follow it"},
};

// A text file given as a safetensors file (`attnscope-cli run --dump-in notes.txt`): its first eight bytes,
// read as a header length, are some 10^18; the error names the likely cause instead of that number.
TEST(Safetensors, TextFileIsNamedNotSafetensors) {
  const std::string text = "AttnScope notes\nline two\n";
  const std::vector<std::uint8_t> bytes(text.begin(), text.end());
  const auto parsed = SafeTensors::parse(bytes, "notes.txt");
  ASSERT_FALSE(parsed.has_value());
  EXPECT_EQ(parsed.error().kind, attn::ErrorKind::Malformed);
  EXPECT_EQ(parsed.error().offset, 0);
  EXPECT_EQ(parsed.error().reason,
            "not a safetensors file: it begins with text (\"AttnScope notes\\n\"), where a safetensors file begins "
            "with an 8-byte header length and a JSON header");
}

class SafetensorsBadFile : public ::testing::TestWithParam<BadFile> {};

TEST_P(SafetensorsBadFile, IsRefusedWithReasonAndOffset) {
  const BadFile& bad = GetParam();
  const fs::path path = data(bad.name);
  ASSERT_TRUE(fs::exists(path)) << path << ": run tools/make_bad_safetensors.py";
  const auto opened = SafeTensors::open(path);
  ASSERT_FALSE(opened.has_value());
  EXPECT_EQ(opened.error().file, path.string());
  EXPECT_EQ(opened.error().offset, bad.offset);
  EXPECT_EQ(opened.error().reason, bad.reason);
  EXPECT_EQ(opened.error().message(), path.string() + ": byte " + std::to_string(bad.offset) + ": " + bad.reason);

  // The same validation over bytes in memory.
  const auto parsed = SafeTensors::parse(read_file(path), "in-memory");
  ASSERT_FALSE(parsed.has_value());
  EXPECT_EQ(parsed.error().file, "in-memory");
  EXPECT_EQ(parsed.error().offset, bad.offset);
  EXPECT_EQ(parsed.error().reason, bad.reason);
}

INSTANTIATE_TEST_SUITE_P(Safetensors, SafetensorsBadFile, ::testing::ValuesIn(kBadFiles),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(SafetensorsRead, EveryPrefixOfAValidFileIsRefusedCleanly) {
  const Bytes whole = read_file(data("valid_f16"));
  ASSERT_EQ(whole.size(), 120u);
  for (std::size_t n = 0; n < whole.size(); ++n) {
    const auto r = SafeTensors::parse(Bytes(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(n)), "cut");
    ASSERT_FALSE(r.has_value()) << n;
    EXPECT_FALSE(r.error().reason.empty());
    EXPECT_GE(r.error().offset, 0) << n;
  }
  EXPECT_TRUE(SafeTensors::parse(whole, "whole").has_value());
}

TEST(SafetensorsRead, MissingFileAndDirectory) {
  const auto missing = SafeTensors::open(data("no_such_file"));
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().reason, "no such file");
  const auto folder = SafeTensors::open(fs::path(ATTN_TEST_DATA_DIR) / "safetensors");
  ASSERT_FALSE(folder.has_value());
  EXPECT_EQ(folder.error().reason, "is a directory, not a safetensors file");
}

TEST(SafetensorsRead, HeaderEntryErrorsPointAtTheirKey) {
  // The second entry is bad: the offset is its key's, not the header's start.
  const std::string header =
      R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}, "b":{"dtype":"F32","shape":[2]}})";
  const auto r = SafeTensors::parse(container(header, Bytes(4)), "h");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().offset, 8 + static_cast<std::int64_t>(header.find("\"b\"")));
  EXPECT_EQ(r.error().reason, "tensor \"b\": no \"data_offsets\"");
}

TEST(SafetensorsRead, MalformedEntries) {
  struct Case {
    std::string header;
    std::string reason;
  };
  const Case cases[] = {
      {R"({"w":[1]})", "tensor \"w\": the entry is array, not an object with dtype, shape and data_offsets"},
      {R"({"w":{"shape":[1],"data_offsets":[0,4]}})", "tensor \"w\": no \"dtype\""},
      {R"({"w":{"dtype":4,"shape":[1],"data_offsets":[0,4]}})", "tensor \"w\": \"dtype\" is number, not a string"},
      {R"({"w":{"dtype":"F32","data_offsets":[0,4]}})", "tensor \"w\": no \"shape\""},
      {R"({"w":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}})",
       "tensor \"w\": \"shape\" [1.5]: dimension 1.5 is not a whole number"},
      {R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4,8]}})",
       "tensor \"w\": \"data_offsets\" is [0,4,8], not an array [begin, end]"},
      {R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[-4,4]}})",
       "tensor \"w\": \"data_offsets\" begin -4 is negative"},
      {R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,18446744073709551615]}})",
       "tensor \"w\": \"data_offsets\" end 18446744073709551615 is too large"},
      {R"({"__metadata__":["x"],"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
       "\"__metadata__\" is array, not an object of strings"},
  };
  for (const Case& c : cases) {
    const auto r = SafeTensors::parse(container(c.header, Bytes(4)), "m");
    ASSERT_FALSE(r.has_value()) << c.header;
    EXPECT_EQ(r.error().reason, c.reason) << c.header;
    EXPECT_EQ(r.error().offset, 9) << c.header;
  }
}

TEST(SafetensorsRead, HugeOffsetsDoNotOverflow) {
  const std::string header =
      R"({"a":{"dtype":"U8","shape":[0],"data_offsets":[0,0]},"b":{"dtype":"U8","shape":[1],"data_offsets":[9223372036854775806,9223372036854775807]}})";
  const auto r = SafeTensors::parse(container(header), "big");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().offset, std::numeric_limits<std::int64_t>::max());
  EXPECT_NE(r.error().reason.find("tensor \"b\": data_offsets [9223372036854775806, 9223372036854775807] leave a gap"),
            std::string::npos)
      << r.error().reason;
}

// ---------------------------------------------------------------------------------------------------------
// Valid files and conversions

TEST(SafetensorsRead, F16ConvertsExactly) {
  const auto st = SafeTensors::open(data("valid_f16"));
  ASSERT_TRUE(st.has_value()) << st.error().message();
  EXPECT_EQ(st->data_start(), 104);
  EXPECT_EQ(st->metadata().at("format"), "pt");
  ASSERT_EQ(st->tensors().size(), 1u);
  const TensorInfo* t = st->find("half");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->dtype, DType::F16);
  EXPECT_EQ(t->shape, (std::vector<std::int64_t>{2, 4}));
  EXPECT_EQ(st->bytes(*t).size(), 16u);
  const auto v = st->to_float(*t);
  ASSERT_TRUE(v.has_value());
  const std::vector<float> want{1.0f,
                                -2.0f,
                                65504.0f,
                                std::ldexp(1.0f, -24),
                                std::ldexp(1.0f, -14),
                                -0.0f,
                                std::numeric_limits<float>::infinity(),
                                0.333251953125f};
  ASSERT_EQ(v->size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(std::bit_cast<std::uint32_t>((*v)[i]), std::bit_cast<std::uint32_t>(want[i])) << i;
  }
  const auto m = st->matrix("half", 2, 4);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ((*m)(1, 0), std::ldexp(1.0f, -14));
}

TEST(SafetensorsRead, F16EveryBitPatternMatchesEigen) {
  std::vector<std::byte> bytes(2 * 65536);
  for (std::uint32_t h = 0; h < 65536; ++h) {
    bytes[2 * h] = static_cast<std::byte>(h & 0xFF);
    bytes[2 * h + 1] = static_cast<std::byte>(h >> 8);
  }
  std::vector<float> out(65536);
  ASSERT_TRUE(convert_to_float(DType::F16, bytes, out));
  for (std::uint32_t h = 0; h < 65536; ++h) {
    const float want = static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(static_cast<std::uint16_t>(h)));
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(out[h])) << h;
    } else {
      ASSERT_EQ(std::bit_cast<std::uint32_t>(out[h]), std::bit_cast<std::uint32_t>(want)) << h;
    }
  }
}

TEST(SafetensorsRead, BF16ConvertsExactly) {
  const auto st = SafeTensors::open(data("valid_bf16"));
  ASSERT_TRUE(st.has_value()) << st.error().message();
  const auto v = st->to_float(*st->find("bfloat"));
  ASSERT_TRUE(v.has_value());
  const std::vector<std::uint32_t> want{0x3F800000u, 0xC0000000u, 0x40490000u, 0x00010000u, 0xFF800000u, 0x7F7F0000u};
  ASSERT_EQ(v->size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(std::bit_cast<std::uint32_t>((*v)[i]), want[i]) << i;
  EXPECT_EQ((*v)[2], 3.140625f);
  EXPECT_EQ((*v)[3], std::ldexp(1.0f, -133));
  const auto vec = st->vector("bfloat", 6);
  ASSERT_TRUE(vec.has_value());
  EXPECT_EQ((*vec)(1), -2.0f);
}

TEST(SafetensorsRead, RankZeroAndZeroElementTensors) {
  const auto scalar = SafeTensors::open(data("valid_rank0"));
  ASSERT_TRUE(scalar.has_value()) << scalar.error().message();
  const TensorInfo* s = scalar->find("scalar");
  ASSERT_NE(s, nullptr);
  EXPECT_TRUE(s->shape.empty());
  EXPECT_EQ(s->elements(), 1);
  EXPECT_EQ(scalar->to_float(*s).value(), std::vector<float>{3.5f});

  const auto zero = SafeTensors::open(data("valid_zero_elements"));
  ASSERT_TRUE(zero.has_value()) << zero.error().message();
  ASSERT_EQ(zero->tensors().size(), 2u);
  EXPECT_EQ(zero->tensors()[0].name, "empty");  // data order: [0, 0] before [0, 8]
  EXPECT_EQ(zero->tensors()[0].elements(), 0);
  EXPECT_TRUE(zero->to_float(zero->tensors()[0]).value().empty());
  EXPECT_EQ(zero->matrix("empty", 0, 4).value().size(), 0);
  EXPECT_EQ(zero->to_float(*zero->find("bias")).value(), (std::vector<float>{1.5f, -2.5f}));
}

TEST(SafetensorsRead, UnalignedF32Data) {
  // A 5-byte header: the data starts at byte 13, not a multiple of 4.
  const std::string header = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  const float values[2] = {0.25f, -7.0f};
  Bytes payload(8);
  std::memcpy(payload.data(), values, 8);
  const auto st = SafeTensors::parse(container(header, payload), "u");
  ASSERT_TRUE(st.has_value()) << st.error().message();
  EXPECT_EQ(st->data_start() % 4, (8 + static_cast<std::int64_t>(header.size())) % 4);
  EXPECT_EQ(st->to_float(*st->find("w")).value(), (std::vector<float>{0.25f, -7.0f}));
}

TEST(SafetensorsRead, MatrixAndVectorShapeErrors) {
  const float values[6] = {1, 2, 3, 4, 5, 6};
  const auto bytes =
      serialize_safetensors({f32_tensor("m", {2, 3}, values), f32_tensor("v", {3}, std::span(values, 3))}, {});
  ASSERT_TRUE(bytes.has_value());
  const auto st = SafeTensors::parse(*bytes, "model.safetensors");
  ASSERT_TRUE(st.has_value()) << st.error().message();
  const std::int64_t m_at = st->data_start() + st->find("m")->begin;

  const auto ok = st->matrix("m", 2, 3);
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ((*ok)(1, 2), 6.0f);

  const auto wrong = st->matrix("m", 3, 2);
  ASSERT_FALSE(wrong.has_value());
  EXPECT_EQ(wrong.error().file, "model.safetensors");
  EXPECT_EQ(wrong.error().offset, m_at);
  EXPECT_EQ(wrong.error().reason, "tensor \"m\" has shape [2, 3] but [3, 2] is expected");

  const auto row = st->matrix("v", 1, 3);  // rank 1 as [1, n]
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ((*row)(0, 2), 3.0f);
  const auto column = st->matrix("v", 3, 1);
  ASSERT_FALSE(column.has_value());
  EXPECT_EQ(column.error().reason, "tensor \"v\" has shape [3] but [3, 1] is expected");

  const auto missing = st->matrix("nope", 1, 1);
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().reason, "no tensor \"nope\" in the file");

  EXPECT_TRUE(st->vector("v", 3).has_value());
  const auto vec = st->vector("m", 6);
  ASSERT_FALSE(vec.has_value());
  EXPECT_EQ(vec.error().reason, "tensor \"m\" has shape [2, 3] but [6] is expected");
  EXPECT_EQ(vec.error().offset, m_at);
}

TEST(SafetensorsRead, IntegerTensorsDoNotConvert) {
  const std::int64_t ids[3] = {1, 2, 3};
  TensorData t{"ids", DType::I64, {3}, std::as_bytes(std::span(ids))};
  const auto st = SafeTensors::parse(serialize_safetensors({t}, {}).value(), "i");
  ASSERT_TRUE(st.has_value());
  const auto f = st->to_float(*st->find("ids"));
  ASSERT_FALSE(f.has_value());
  EXPECT_EQ(f.error().reason, "tensor \"ids\" is I64; only F32, F16, BF16 and F64 convert to float32");
  EXPECT_FALSE(st->vector("ids", 3).has_value());
  EXPECT_EQ(std::memcmp(st->bytes(*st->find("ids")).data(), ids, sizeof ids), 0);
}

// ---------------------------------------------------------------------------------------------------------
// Writing

Bytes as_vector(std::initializer_list<int> v) {
  Bytes out;
  for (int b : v) out.push_back(static_cast<std::uint8_t>(b));
  return out;
}

TEST(SafetensorsWrite, MatchesTheReferenceSerialization) {
  // huggingface/safetensors tensor.rs test_serialization: {"attn.0": F32 [1, 2, 3] = 0..5}.
  const float values[6] = {0, 1, 2, 3, 4, 5};
  const auto out = serialize_safetensors({f32_tensor("attn.0", {1, 2, 3}, values)}, {});
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(*out,
            as_vector({64,  0,   0,   0,   0,   0,  0,  0,  123, 34, 97,  116, 116, 110, 46,  48,  34,  58,  123, 34,
                       100, 116, 121, 112, 101, 34, 58, 34, 70,  51, 50,  34,  44,  34,  115, 104, 97,  112, 101, 34,
                       58,  91,  49,  44,  50,  44, 51, 93, 44,  34, 100, 97,  116, 97,  95,  111, 102, 102, 115, 101,
                       116, 115, 34,  58,  91,  48, 44, 50, 52,  93, 125, 125, 0,   0,   0,   0,   0,   0,   128, 63,
                       0,   0,   0,   64,  0,   0,  64, 64, 0,   0,  128, 64,  0,   0,   160, 64}));

  // test_serialization_forced_alignement: "attn0", [1, 1, 2, 3]: the header is padded with 7 spaces.
  const auto padded = serialize_safetensors({f32_tensor("attn0", {1, 1, 2, 3}, values)}, {});
  ASSERT_TRUE(padded.has_value());
  EXPECT_EQ(padded->size(), 8u + 72u + 24u);
  EXPECT_EQ((*padded)[0], 72);
  EXPECT_EQ(std::string(padded->begin() + 73, padded->begin() + 80), "       ");

  // test_empty.
  EXPECT_EQ(serialize_safetensors({}, {}).value(),
            as_vector({8, 0, 0, 0, 0, 0, 0, 0, 123, 125, 32, 32, 32, 32, 32, 32}));
  const std::string with_metadata = R"({"__metadata__":{"framework":"pt"}})";
  Bytes want = as_vector({40, 0, 0, 0, 0, 0, 0, 0});
  want.insert(want.end(), with_metadata.begin(), with_metadata.end());
  want.insert(want.end(), 5, ' ');
  EXPECT_EQ(serialize_safetensors({}, {{"framework", "pt"}}).value(), want);
}

TEST(SafetensorsWrite, SortsByAlignmentThenName) {
  const std::uint16_t h[1] = {0x3C00};
  const float f[1] = {1.0f};
  const double d[1] = {1.0};
  const std::vector<TensorData> tensors{
      {"a_half", DType::F16, {1}, std::as_bytes(std::span(h))},
      {"z_float", DType::F32, {1}, std::as_bytes(std::span(f))},
      {"b_float", DType::F32, {1}, std::as_bytes(std::span(f))},
      {"c_double", DType::F64, {1}, std::as_bytes(std::span(d))},
  };
  const auto st = SafeTensors::parse(serialize_safetensors(tensors, {}).value(), "s");
  ASSERT_TRUE(st.has_value()) << st.error().message();
  std::vector<std::string> order;
  for (const auto& t : st->tensors()) order.push_back(t.name);
  EXPECT_EQ(order, (std::vector<std::string>{"c_double", "b_float", "z_float", "a_half"}));
  for (const auto& t : st->tensors())
    EXPECT_EQ((st->data_start() + t.begin) % static_cast<std::int64_t>(dtype_size(t.dtype)), 0) << t.name;
}

TEST(SafetensorsWrite, RoundTripsEveryFloatDType) {
  TempDir dir;
  const float f32v[4] = {0.5f, -1.25f, 3e-8f, 65504.0f};
  const std::uint16_t f16v[4] = {0x3C00, 0xBC00, 0x0001, 0x7BFF};   // 1, -1, 2^-24, 65504
  const std::uint16_t bf16v[4] = {0x3F80, 0x4049, 0x8000, 0x7F80};  // 1, 3.140625, -0, inf
  const double f64v[4] = {0.1, -2.0, 1e300, 1.0 / 3.0};
  const std::vector<TensorData> tensors{
      f32_tensor("f32", {2, 2}, f32v),
      {"f16", DType::F16, {4}, std::as_bytes(std::span(f16v))},
      {"bf16", DType::BF16, {1, 4}, std::as_bytes(std::span(bf16v))},
      {"f64", DType::F64, {2, 1, 2}, std::as_bytes(std::span(f64v))},
  };
  const fs::path path = dir / "all.safetensors";
  ASSERT_TRUE(write_safetensors(path, tensors, {{"note", "round \"trip\"\n"}}).has_value());
  const auto st = SafeTensors::open(path);
  ASSERT_TRUE(st.has_value()) << st.error().message();
  EXPECT_EQ(st->metadata().at("note"), "round \"trip\"\n");
  for (const TensorData& t : tensors) {
    const TensorInfo* info = st->find(t.name);
    ASSERT_NE(info, nullptr) << t.name;
    EXPECT_EQ(info->dtype, t.dtype);
    EXPECT_EQ(info->shape, t.shape);
    const auto b = st->bytes(*info);
    ASSERT_EQ(b.size(), t.data.size());
    EXPECT_EQ(std::memcmp(b.data(), t.data.data(), b.size()), 0) << t.name;
  }
  EXPECT_EQ(st->to_float(*st->find("f32")).value(), (std::vector<float>{0.5f, -1.25f, 3e-8f, 65504.0f}));
  EXPECT_EQ(st->to_float(*st->find("f16")).value(), (std::vector<float>{1.0f, -1.0f, std::ldexp(1.0f, -24), 65504.0f}));
  const auto bf = st->to_float(*st->find("bf16")).value();
  EXPECT_EQ(bf[1], 3.140625f);
  EXPECT_TRUE(std::signbit(bf[2]));
  EXPECT_EQ(bf[3], std::numeric_limits<float>::infinity());
  EXPECT_EQ(st->to_float(*st->find("f64")).value(),
            (std::vector<float>{0.1f, -2.0f, std::numeric_limits<float>::infinity(), static_cast<float>(1.0 / 3.0)}));
  // Nothing but the file is left in the folder.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
}

TEST(SafetensorsWrite, ReplacesAnExistingFile) {
  TempDir dir;
  const fs::path path = dir / "w.safetensors";
  write_file(path, Bytes(1000, 7));
  const float v[1] = {2.0f};
  ASSERT_TRUE(write_safetensors(path, {f32_tensor("w", {1}, v)}).has_value());
  EXPECT_EQ(fs::file_size(path), 8u + 56u + 4u);
  EXPECT_EQ(SafeTensors::open(path).value().matrix("w", 1, 1).value()(0, 0), 2.0f);
}

TEST(SafetensorsWrite, RefusesBadTensors) {
  const float v[4] = {1, 2, 3, 4};
  const auto dup = serialize_safetensors({f32_tensor("w", {4}, v), f32_tensor("w", {2, 2}, v)}, {});
  ASSERT_FALSE(dup.has_value());
  EXPECT_EQ(dup.error().reason, "tensor \"w\" is given twice");

  const auto size = serialize_safetensors({f32_tensor("w", {2, 3}, v)}, {});
  ASSERT_FALSE(size.has_value());
  EXPECT_EQ(size.error().reason, "tensor \"w\": 16 bytes of data but shape [2, 3] of F32 needs 24");

  const auto reserved = serialize_safetensors({f32_tensor("__metadata__", {4}, v)}, {});
  ASSERT_FALSE(reserved.has_value());
  EXPECT_EQ(reserved.error().reason, "a tensor cannot be called \"__metadata__\"");

  TempDir dir;
  const fs::path path = dir / "bad.safetensors";
  const auto written = write_safetensors(path, {f32_tensor("w", {-4}, v)});
  ASSERT_FALSE(written.has_value());
  EXPECT_EQ(written.error().file, path.string());
  EXPECT_FALSE(fs::exists(path));

  const auto no_folder = write_safetensors(dir / "missing" / "x.safetensors", {f32_tensor("w", {4}, v)});
  ASSERT_FALSE(no_folder.has_value());
  EXPECT_EQ(no_folder.error().reason, "cannot write the file: No such file or directory");
}

}  // namespace
}  // namespace attn::io
