// ggml's tensor types: the type table against ggml's own type_traits, and every readable type's dequantisation
// against ggml's dequantize_row_* bit for bit, on blocks ggml quantised and on random-byte blocks
// (tests/data/gguf_blocks, written by tools/golden/ggml_blocks.py from llama.cpp's libggml-base).
#include "attn/io/ggml_types.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <ostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace attn::io {
// A named namespace, not an anonymous one: in the unity build this file shares a translation unit with
// test_safetensors.cpp, whose anonymous namespace in attn::io has helpers of the same names.
namespace ggml_types_tests {

namespace fs = std::filesystem;

fs::path golden(const std::string& name) { return fs::path(ATTN_TEST_DATA_DIR) / "gguf_blocks" / name; }

std::vector<std::byte> read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  const std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> out(chars.size());
  if (!chars.empty()) std::memcpy(out.data(), chars.data(), chars.size());
  return out;
}

std::vector<float> read_floats(const fs::path& path) {
  const auto bytes = read_bytes(path);
  std::vector<float> out(bytes.size() / sizeof(float));
  if (!out.empty()) std::memcpy(out.data(), bytes.data(), out.size() * sizeof(float));
  return out;
}

// The MANIFEST's lines starting with `key`, split at spaces; the last field keeps the rest of the line (ggml's
// names of its retired types have spaces in them).
std::vector<std::vector<std::string>> manifest(const std::string& key, std::size_t fields) {
  std::ifstream in(golden("MANIFEST"));
  std::vector<std::vector<std::string>> rows;
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string first;
    if (!(words >> first) || first != key) continue;
    std::vector<std::string> row(fields);
    for (std::size_t i = 0; i + 1 < fields; ++i) words >> row[i];
    std::getline(words >> std::ws, row.back());
    rows.push_back(row);
  }
  return rows;
}

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

// Equal bits, or both NaN: ggml's own F16 widening quiets a signalling NaN, the engine's keeps it as it is.
::testing::AssertionResult same_floats(const std::vector<float>& expected, const std::vector<float>& got) {
  if (expected.size() != got.size()) return ::testing::AssertionFailure() << "sizes differ";
  std::size_t wrong = 0, first = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const bool same = std::bit_cast<std::uint32_t>(expected[i]) == std::bit_cast<std::uint32_t>(got[i]) ||
                      (std::isnan(expected[i]) && std::isnan(got[i]));
    if (!same && wrong++ == 0) first = i;
  }
  if (wrong == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << wrong << " of " << got.size() << " elements differ; the first, element "
                                       << first << ": ggml " << expected[first] << ", engine " << got[first];
}

struct Case {
  std::string type;
  std::uint32_t number = 0;
  std::size_t elements = 0;
};

// gtest names a failing case by its type rather than by its bytes.
void PrintTo(const Case& c, std::ostream* os) { *os << c.type; }

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const auto& row : manifest("case", 3))
    out.push_back({row[0], static_cast<std::uint32_t>(std::stoul(row[1])), std::stoul(row[2])});
  return out;
}

TEST(GgmlTypes, TableIsGgmlsTypeTraits) {
  const auto rows = manifest("type", 4);
  ASSERT_EQ(rows.size(), 43u) << "the MANIFEST lists ggml 0.25.1's GGML_TYPE_COUNT numbers";
  for (const auto& row : rows) {
    const auto number = static_cast<std::uint32_t>(std::stoul(row[0]));
    SCOPED_TRACE("type " + row[0] + " (" + row[3] + ")");
    const auto info = ggml_type_info(number);
    ASSERT_TRUE(info.has_value());
    EXPECT_EQ(info->block_elements, std::stoll(row[1]));
    EXPECT_EQ(info->block_bytes, std::stoll(row[2]));
    // A retired number keeps its own name here, where ggml says "DEPRECATED" or "... REMOVED, use ...".
    if (info->block_elements > 0) {
      EXPECT_EQ(std::string(info->name), upper(row[3]));
    }
  }
}

TEST(GgmlTypes, NamesSizesAndUnknownNumbers) {
  struct Fact {
    GgmlType type;
    std::string_view name;
    std::int64_t elements, bytes;
  };
  for (const Fact& f :
       {Fact{GgmlType::F32, "F32", 1, 4}, Fact{GgmlType::BF16, "BF16", 1, 2}, Fact{GgmlType::Q8_0, "Q8_0", 32, 34},
        Fact{GgmlType::Q4_K, "Q4_K", 256, 144}, Fact{GgmlType::Q6_K, "Q6_K", 256, 210},
        Fact{GgmlType::IQ2_XXS, "IQ2_XXS", 256, 66}, Fact{GgmlType::MXFP4, "MXFP4", 32, 17}}) {
    const auto info = ggml_type_info(static_cast<std::uint32_t>(f.type));
    ASSERT_TRUE(info.has_value()) << f.name;
    EXPECT_EQ(info->name, f.name);
    EXPECT_EQ(info->block_elements, f.elements) << f.name;
    EXPECT_EQ(info->block_bytes, f.bytes) << f.name;
  }
  EXPECT_EQ(ggml_type_name(12), "Q4_K");
  EXPECT_EQ(ggml_type_name(4), "Q4_2");
  EXPECT_EQ(ggml_type_name(31), "Q4_0_4_4");
  EXPECT_EQ(ggml_type_info(31)->block_elements, 0);
  EXPECT_EQ(ggml_type_name(43), "unknown type 43");
  EXPECT_EQ(ggml_type_name(99), "unknown type 99");
  EXPECT_FALSE(ggml_type_info(99).has_value());
  EXPECT_FALSE(ggml_type_info(std::numeric_limits<std::uint32_t>::max()).has_value());

  std::vector<std::string> readable;
  for (std::uint32_t t = 0; t < 64; ++t) {
    if (const auto info = ggml_type_info(t); info && info->readable) readable.emplace_back(info->name);
  }
  EXPECT_EQ(readable, (std::vector<std::string>{"F32", "F16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q2_K", "Q3_K",
                                                "Q4_K", "Q5_K", "Q6_K", "Q8_K", "BF16"}));
}

TEST(GgmlTypes, BytesOfARow) {
  EXPECT_EQ(ggml_bytes(12, 512), 288);
  EXPECT_EQ(ggml_bytes(8, 4096), 4352);
  EXPECT_EQ(ggml_bytes(30, 3), 6);
  EXPECT_EQ(ggml_bytes(12, 0), 0);
  EXPECT_FALSE(ggml_bytes(12, 100).has_value());  // not a whole super-block
  EXPECT_FALSE(ggml_bytes(12, -256).has_value());
  EXPECT_FALSE(ggml_bytes(4, 32).has_value());  // retired: no geometry
  EXPECT_FALSE(ggml_bytes(99, 32).has_value());
  const std::int64_t most = std::numeric_limits<std::int64_t>::max() / 256 * 256;
  EXPECT_FALSE(ggml_bytes(15, most).has_value());  // 292 bytes per 256 elements: past 63 bits
  EXPECT_EQ(ggml_bytes(0, std::numeric_limits<std::int64_t>::max() / 4),
            std::numeric_limits<std::int64_t>::max() / 4 * 4);
}

class GgmlDequantize : public ::testing::TestWithParam<Case> {};

// The blocks sit one byte past an aligned address, as a tensor may in a GGUF file: scales are read byte-wise.
TEST_P(GgmlDequantize, IsGgmlsBitForBit) {
  const Case& c = GetParam();
  const auto blocks = read_bytes(golden(c.type + ".bin"));
  const auto expected = read_floats(golden(c.type + ".f32"));
  ASSERT_EQ(expected.size(), c.elements);
  ASSERT_EQ(static_cast<std::int64_t>(blocks.size()), ggml_bytes(c.number, static_cast<std::int64_t>(c.elements)));
  std::vector<std::byte> shifted(blocks.size() + 1);
  std::copy(blocks.begin(), blocks.end(), shifted.begin() + 1);
  std::vector<float> got(c.elements, -1.0f);
  ASSERT_TRUE(ggml_dequantize(static_cast<GgmlType>(c.number), std::span(shifted).subspan(1), got));
  EXPECT_TRUE(same_floats(expected, got));
}

// Enough copies of the blocks that the OpenMP threads share them: the same bits again.
TEST_P(GgmlDequantize, IsTheSameShared) {
  const Case& c = GetParam();
  const auto blocks = read_bytes(golden(c.type + ".bin"));
  const auto expected = read_floats(golden(c.type + ".f32"));
  const std::size_t copies = (std::size_t{1} << 18) / c.elements + 2;
  std::vector<std::byte> many;
  std::vector<float> want;
  for (std::size_t i = 0; i < copies; ++i) {
    many.insert(many.end(), blocks.begin(), blocks.end());
    want.insert(want.end(), expected.begin(), expected.end());
  }
  std::vector<float> got(want.size());
  ASSERT_TRUE(ggml_dequantize(static_cast<GgmlType>(c.number), many, got));
  EXPECT_TRUE(same_floats(want, got));
}

INSTANTIATE_TEST_SUITE_P(Goldens, GgmlDequantize, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.type; });

TEST(GgmlDequantizeF32, IsACopyAtAnyAlignment) {
  std::mt19937 rng(45);
  std::vector<std::byte> bytes(1 + 4 * 100);
  for (auto& b : bytes) b = static_cast<std::byte>(rng());
  std::vector<float> got(100);
  ASSERT_TRUE(ggml_dequantize(GgmlType::F32, std::span(bytes).subspan(1), got));
  EXPECT_EQ(std::memcmp(got.data(), bytes.data() + 1, 400), 0);
}

TEST(GgmlDequantizeRefuses, WrongSizesAndUnreadableTypes) {
  const std::vector<std::byte> blocks(2 * 144);
  std::vector<float> out(512, 7.0f);
  const auto untouched = [&] { return std::all_of(out.begin(), out.end(), [](float v) { return v == 7.0f; }); };
  EXPECT_FALSE(ggml_dequantize(GgmlType::Q4_K, std::span(blocks).first(287), out));  // a byte short
  EXPECT_FALSE(ggml_dequantize(GgmlType::Q4_K, std::span(blocks), std::span(out).first(511)));
  EXPECT_FALSE(ggml_dequantize(GgmlType::Q4_K, std::span(blocks).first(144), std::span(out).first(255)));
  EXPECT_FALSE(ggml_dequantize(GgmlType::Q8_0, std::span(blocks), out));  // 16 blocks of Q8_0 are 544 bytes
  EXPECT_FALSE(ggml_dequantize(GgmlType::F16, std::span(blocks).first(287), std::span(out).first(143)));
  EXPECT_FALSE(ggml_dequantize(GgmlType::IQ2_XXS, std::span(blocks).first(132), out));
  EXPECT_FALSE(ggml_dequantize(GgmlType::Q8_1, std::span(blocks).first(36), std::span(out).first(32)));
  EXPECT_FALSE(ggml_dequantize(static_cast<GgmlType>(4), std::span(blocks).first(0), std::span(out).first(0)));
  EXPECT_FALSE(ggml_dequantize(static_cast<GgmlType>(99), std::span(blocks).first(0), std::span(out).first(0)));
  EXPECT_TRUE(untouched());
  EXPECT_TRUE(ggml_dequantize(GgmlType::Q4_K, std::span(blocks), out));  // zero scales: zeros
  EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](float v) { return v == 0.0f; }));
}

}  // namespace ggml_types_tests
}  // namespace attn::io
