// llama.cpp's arithmetic on GGUF weights (issue 45): the activations' rounding (io::ggml_round_activations) against
// the activation blocks llama.cpp's CPU backend writes, bit for bit, and the decoder's products (stored_linear with
// ggml_rounding) against ggml's vec_dot of the same weight rows and activations, for every weight type the engine
// multiplies (tests/data/gguf_blocks: ggml_blocks.py's weight rows, ggml_vec_dot.py's activations and products, from
// node-llama-cpp's libggml-cpu-zen4.so, the variant llama.cpp runs on the machine the goldens were made on).
#include "attn/io/ggml_types.h"
#include "io/half.h"
#include "models/hf/decoder_impl.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace attn::models {
namespace ggml_products_tests {

namespace fs = std::filesystem;

constexpr Index kRow = 512;  // elements per row in the goldens (tools/golden/ggml_blocks.py's ROW)

fs::path golden(const std::string& name) { return fs::path(ATTN_TEST_DATA_DIR) / "gguf_blocks" / name; }

std::vector<std::uint8_t> bytes_of(const std::string& name) {
  std::ifstream in(golden(name), std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<float> floats_of(const std::string& name) {
  const auto b = bytes_of(name);
  std::vector<float> out(b.size() / sizeof(float));
  if (!out.empty()) std::memcpy(out.data(), b.data(), out.size() * sizeof(float));
  return out;
}

struct Case {
  std::string type, vec_dot_type;
  Index rows;
};

std::vector<Case> cases() {
  std::ifstream in(golden("VECDOT"));
  std::vector<Case> out;
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string key;
    Case c;
    if (words >> key >> c.type >> c.vec_dot_type >> c.rows && key == "vecdot") out.push_back(c);
  }
  return out;
}

io::GgmlType type_named(const std::string& name) {
  for (std::uint32_t t = 0; t < 43; ++t) {
    if (io::ggml_type_name(t) == name) return static_cast<io::GgmlType>(t);
  }
  return io::GgmlType::Q1_0;
}

// What llama.cpp multiplies with: the activation blocks from_float wrote, widened.
std::vector<float> widened(const std::string& vec_dot_type, const std::vector<std::uint8_t>& b) {
  std::vector<float> out;
  if (vec_dot_type == "F16" || vec_dot_type == "BF16") {
    for (std::size_t i = 0; i + 1 < b.size(); i += 2) {
      const auto h = static_cast<std::uint16_t>(b[i] | b[i + 1] << 8);
      out.push_back(vec_dot_type == "F16" ? io::half_to_float(h) : io::bf16_to_float(h));
    }
  } else if (vec_dot_type == "Q8_1") {  // f16 d, f16 s (not a value), 32 int8
    for (std::size_t i = 0; i + 36 <= b.size(); i += 36) {
      const float d = io::half_to_float(static_cast<std::uint16_t>(b[i] | b[i + 1] << 8));
      for (std::size_t j = 0; j < 32; ++j)
        out.push_back(d * static_cast<float>(static_cast<std::int8_t>(b[i + 4 + j])));
    }
  } else {
    const io::GgmlType t = type_named(vec_dot_type);
    out.resize(b.size() / static_cast<std::size_t>(*io::ggml_bytes(static_cast<std::uint32_t>(t), kRow)) * kRow);
    EXPECT_TRUE(io::ggml_dequantize(t, std::as_bytes(std::span(b)), out));
  }
  return out;
}

TEST(GgmlProducts, ActivationsRoundAsLlamaCppQuantisesThem) {
  const std::vector<float> x = floats_of("activations.f32");
  const Index n = static_cast<Index>(x.size()) / kRow;
  ASSERT_GE(n, 7);
  const auto all = cases();
  ASSERT_EQ(all.size(), 12u) << "tests/data/gguf_blocks/VECDOT";
  for (const Case& c : all) {
    SCOPED_TRACE(c.type + " (activations as " + c.vec_dot_type + ")");
    const std::vector<float> expected = widened(c.vec_dot_type, bytes_of(c.vec_dot_type + ".act.bin"));
    ASSERT_EQ(expected.size(), x.size());
    std::vector<float> mine = x;
    ASSERT_TRUE(io::ggml_round_activations(type_named(c.type), mine));
    int differ = 0;
    for (std::size_t i = 0; i < x.size(); ++i)
      differ += std::bit_cast<std::uint32_t>(mine[i]) != std::bit_cast<std::uint32_t>(expected[i]);
    EXPECT_EQ(differ, 0) << "of " << x.size() << " values";
  }
  std::vector<float> odd(100, 1.0f);
  EXPECT_FALSE(io::ggml_round_activations(io::GgmlType::Q8_0, odd)) << "not a whole number of blocks";
  EXPECT_FALSE(io::ggml_round_activations(io::GgmlType::Q8_K, odd)) << "no vec_dot type";
}

// The activations' blocks as the integer kernels read them are ggml's from_float output, byte for byte (Q8_1's
// sum s included); Q8_1's offsets (s minus the rounded block's float sum, which the float product of non-AVX2 builds
// adds) follow from those bytes.
TEST(GgmlProducts, ActivationBlocksAreLlamaCppsBytes) {
  const std::vector<float> x = floats_of("activations.f32");
  for (const auto& [name, type] : {std::pair{"Q8_0", io::GgmlType::Q8_0}, std::pair{"Q8_1", io::GgmlType::Q8_1},
                                   std::pair{"Q8_K", io::GgmlType::Q8_K}}) {
    SCOPED_TRACE(name);
    const std::vector<std::uint8_t> expected = bytes_of(std::string(name) + ".act.bin");
    std::vector<std::byte> mine(expected.size());
    ASSERT_TRUE(io::ggml_quantize_activations(type, x, mine));
    EXPECT_EQ(std::memcmp(mine.data(), expected.data(), expected.size()), 0);
    if (type != io::GgmlType::Q8_1) continue;
    std::vector<float> offsets(x.size() / 32);
    ASSERT_TRUE(io::ggml_q8_1_offsets(x, offsets));
    for (std::size_t b = 0; b < offsets.size(); ++b) {
      const std::uint8_t* block = expected.data() + 36 * b;
      std::uint16_t d, sum;
      std::memcpy(&d, block, 2);
      std::memcpy(&sum, block + 2, 2);
      float rounded = 0.0f;
      for (int j = 0; j < 32; ++j)
        rounded += io::half_to_float(d) * static_cast<float>(static_cast<std::int8_t>(block[4 + j]));
      EXPECT_EQ(offsets[b], io::half_to_float(sum) - rounded) << "block " << b;
    }
  }
}

// The types whose products the engine computes in ggml's own integer lanes and float order (ggml_products.cpp's
// integer kernels, in builds with AVX2, FMA and F16C): llama.cpp's vec_dot for them, to the bit, one activation row
// at a time and in a batch (tinyBLAS_Q0's outputs are vec_dot's for Q8_0 and Q5_0); BF16 where the CPU has
// AVX512-BF16 (ggml_bf16.cpp), one row at a time (a batch takes tinyBLAS's sums, another order than vec_dot's).
bool bit_exact(const std::string& type, Index at_once) {
#if defined(__AVX512F__) && defined(__AVX512BF16__)
  if (type == "BF16") return at_once == 1;
#endif
#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
  for (const char* t : {"Q8_0", "Q4_0", "Q5_0", "Q4_1", "Q5_1", "Q3_K", "Q5_K", "Q6_K"}) {
    if (type == t) return true;
  }
#endif
  (void)type, (void)at_once;
  return false;
}

// Relative distance, against the size of the terms (sum |w x|) so that cancelling sums are not held to more digits
// than they have; and for bit_exact's types, equality.
TEST(GgmlProducts, ProductsAreLlamaCppsVecDot) {
  const std::vector<float> x = floats_of("activations.f32");
  const Index n = static_cast<Index>(x.size()) / kRow;
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.type);
    const auto blocks = bytes_of(c.type + ".bin");
    const io::GgmlType t = type_named(c.type);
    StoredMatrix W;
    W.dtype = c.type == "F16" ? io::DType::F16 : c.type == "BF16" ? io::DType::BF16 : io::DType::GGML;
    W.ggml_type = static_cast<std::uint32_t>(t);
    W.ggml_rounding = true;
    W.data = blocks.data();
    W.rows = c.rows;
    W.cols = kRow;
    std::vector<float> w(static_cast<std::size_t>(c.rows * kRow));
    W.rows_to_float(0, c.rows, w.data());
    const std::vector<float> expected = floats_of(c.type + ".dot.f32");
    ASSERT_EQ(expected.size(), static_cast<std::size_t>(n * c.rows));
    double worst = 0;
    int compared = 0;
    // One activation row at a time (generation's fused path) and all together (the blocked path).
    for (const Index at_once : {Index{1}, n}) {
      std::vector<float> y(static_cast<std::size_t>(n * c.rows)), scratch;
      for (Index a0 = 0; a0 < n; a0 += at_once) {
        stored_linear(x.data() + a0 * kRow, std::min(at_once, n - a0), kRow, W, y.data() + a0 * c.rows, c.rows,
                      scratch);
      }
      for (Index a = 0; a < n; ++a) {
        for (Index r = 0; r < c.rows; ++r) {
          const float g = expected[static_cast<std::size_t>(a * c.rows + r)];
          if (!std::isfinite(g)) continue;  // F16.bin's rows of infinities and NaNs
          double size = 0;
          for (Index j = 0; j < kRow; ++j) size += std::abs(double(w[r * kRow + j]) * x[a * kRow + j]);
          const double d = std::abs(double(y[a * c.rows + r]) - g) / std::max(size, 1e-30);
          worst = std::max(worst, d);
          ++compared;
          EXPECT_LE(d, 1e-5) << "activation row " << a << ", weight row " << r << ": " << y[a * c.rows + r]
                             << " against ggml's " << g;
          if (bit_exact(c.type, at_once)) {
            EXPECT_EQ(y[a * c.rows + r], g) << "activation row " << a << ", weight row " << r << " (" << at_once
                                            << " at once): not ggml's integer lanes and float order";
          }
        }
      }
    }
    EXPECT_GT(compared, 0);
    std::printf("%-5s products within %.2e of ggml's vec_dot (relative to sum |w x|), %d compared\n", c.type.c_str(),
                worst, compared);
  }
}

// Q8_K's scale comes from the first value of largest magnitude (quantize_row_q8_K_ref): -3 before +3 gives a positive
// d and -3 at -127; a block holding a NaN or an infinity takes the reference's scalar path (NaN quants are 0x80).
TEST(GgmlProducts, Q8KTakesTheFirstLargestValue) {
  std::vector<float> x(512, 0.5f);
  x[5] = -3.0f;
  x[200] = 3.0f;
  x[256 + 7] = 3.0f;
  x[256 + 9] = -3.0f;
  std::vector<std::byte> q(2 * 292);
  ASSERT_TRUE(io::ggml_quantize_activations(io::GgmlType::Q8_K, x, q));
  const auto* b = reinterpret_cast<const std::uint8_t*>(q.data());
  float d0, d1;
  std::memcpy(&d0, b, 4);
  std::memcpy(&d1, b + 292, 4);
  EXPECT_GT(d0, 0.0f);
  EXPECT_EQ(static_cast<std::int8_t>(b[4 + 5]), -127);
  EXPECT_EQ(static_cast<std::int8_t>(b[4 + 200]), 127);
  EXPECT_LT(d1, 0.0f);
  EXPECT_EQ(static_cast<std::int8_t>(b[292 + 4 + 7]), -127);
  std::int16_t sum0;
  std::memcpy(&sum0, b + 260, 2);
  int expected = 0;
  for (int j = 0; j < 16; ++j) expected += static_cast<std::int8_t>(b[4 + j]);
  EXPECT_EQ(sum0, expected);
  x[300] = std::numeric_limits<float>::quiet_NaN();
  ASSERT_TRUE(io::ggml_quantize_activations(io::GgmlType::Q8_K, x, q));
  EXPECT_EQ(b[292 + 4 + 300 - 256], 0x80);
  EXPECT_EQ(static_cast<std::int8_t>(b[4 + 5]), -127) << "the finite block before it as before";
}

// Repacked Q4_K rows (llama.cpp repacks them where rows % 8 == 0): a batch's outputs are the one-row product's
// (dot_q4_k_sums<false>, llama.cpp's gemv, which its gemm matches output for output), bit for bit, for a batch longer
// than the kernel's tiles and not a multiple of them, and rows not a multiple of its sixteen lanes.
TEST(GgmlProducts, RepackedQ4KBatchIsItsRowProduct) {
  const std::vector<std::uint8_t> golden_rows = bytes_of("Q4_K.bin");
  const std::size_t row_bytes = golden_rows.size() / 9;
  ASSERT_EQ(row_bytes, 2u * 144);
  std::vector<std::uint8_t> blocks;
  for (int r = 0; r < 24; ++r) {  // 24 rows: the golden's 9, repeated
    const auto* row = golden_rows.data() + static_cast<std::size_t>(r % 9) * row_bytes;
    blocks.insert(blocks.end(), row, row + row_bytes);
  }
  const std::vector<float> golden_x = floats_of("activations.f32");
  const Index golden_n = static_cast<Index>(golden_x.size()) / kRow, n = 77;
  std::vector<float> x(static_cast<std::size_t>(n * kRow));
  for (Index i = 0; i < n; ++i) {  // the golden's rows, each pass scaled and shifted
    for (Index j = 0; j < kRow; ++j) {
      const float v = golden_x[static_cast<std::size_t>((i % golden_n) * kRow + j)];
      x[static_cast<std::size_t>(i * kRow + j)] =
          v * (1.0f + 0.37f * static_cast<float>(i / golden_n)) + 0.01f * static_cast<float>(i / golden_n);
    }
  }
  StoredMatrix W;
  W.dtype = io::DType::GGML;
  W.ggml_type = static_cast<std::uint32_t>(io::GgmlType::Q4_K);
  W.ggml_rounding = true;
  W.ggml_repacked = true;
  W.data = blocks.data();
  W.rows = 24;
  W.cols = kRow;
  std::vector<float> one(static_cast<std::size_t>(n * W.rows)), batch(one.size()), scratch;
  for (Index i = 0; i < n; ++i)
    stored_linear(x.data() + i * kRow, 1, kRow, W, one.data() + i * W.rows, W.rows, scratch);
  stored_linear(x.data(), n, kRow, W, batch.data(), W.rows, scratch);
  int differ = 0;
  for (std::size_t i = 0; i < one.size(); ++i)
    differ += std::bit_cast<std::uint32_t>(one[i]) != std::bit_cast<std::uint32_t>(batch[i]);
  EXPECT_EQ(differ, 0) << "of " << one.size() << " outputs";
  // Not repacked, a batch takes the float product of the dequantised rows: other bits.
  W.ggml_repacked = false;
  stored_linear(x.data(), n, kRow, W, batch.data(), W.rows, scratch);
  differ = 0;
  for (std::size_t i = 0; i < one.size(); ++i)
    differ += std::bit_cast<std::uint32_t>(one[i]) != std::bit_cast<std::uint32_t>(batch[i]);
  EXPECT_GT(differ, 0);
}

// Q8_0 and Q4_0 rows llama.cpp's AMX buffer holds (StoredMatrix::ggml_amx): one row or a batch (on AMX tiles where the
// CPU has them), every output is each block's exact integer dot fused-multiply-added with d_w d_a into one float,
// block after block (ggml-cpu/amx/mmq.cpp), computed here from the bytes; for 77 activation rows (two tiles of 32 and
// a padded rest) and 64 weight rows. Without ggml_amx, the AVX-512 build's lanes: other bits.
TEST(GgmlProducts, AmxQ8_0AndQ4_0ProductsSumBlockAfterBlock) {
  constexpr Index kRows = 64, kN = 77, kBlocks = kRow / 32;
  std::uint32_t state = 12345;
  auto next = [&state] { return state = state * 1664525u + 1013904223u; };
  std::vector<float> x(static_cast<std::size_t>(kN * kRow));
  for (float& v : x) v = static_cast<float>(static_cast<int>(next() % 2001) - 1000) * 1e-3f;
  for (const io::GgmlType type : {io::GgmlType::Q8_0, io::GgmlType::Q4_0}) {
    SCOPED_TRACE(io::ggml_type_name(static_cast<std::uint32_t>(type)));
    const std::size_t bytes = type == io::GgmlType::Q8_0 ? 34 : 18;
    // Element j of a block: Q8_0's byte j; Q4_0's nibble j (low nibbles first) less 8.
    auto quant = [&](const std::uint8_t* blk, int j) {
      if (type == io::GgmlType::Q8_0) return static_cast<int>(static_cast<std::int8_t>(blk[2 + j]));
      return (j < 16 ? blk[2 + j] & 15 : blk[2 + j - 16] >> 4) - 8;
    };
    std::vector<std::uint8_t> blocks(static_cast<std::size_t>(kRows * kBlocks) * bytes);
    for (std::size_t b = 0; b < blocks.size() / bytes; ++b) {
      const std::uint16_t d = io::float_to_half(0.001f + static_cast<float>(next() % 1000) * 1e-5f);
      std::memcpy(blocks.data() + bytes * b, &d, 2);
      for (std::size_t j = 2; j < bytes; ++j) blocks[bytes * b + j] = static_cast<std::uint8_t>(next() >> 24);
    }
    StoredMatrix W;
    W.dtype = io::DType::GGML;
    W.ggml_type = static_cast<std::uint32_t>(type);
    W.ggml_rounding = W.ggml_amx = true;
    W.data = blocks.data();
    W.rows = kRows;
    W.cols = kRow;
    std::vector<float> expected(static_cast<std::size_t>(kN * kRows)), one(expected.size()), batch(expected.size()),
        scratch;
    std::vector<std::byte> q(static_cast<std::size_t>(kBlocks) * 34);
    for (Index i = 0; i < kN; ++i) {
      ASSERT_TRUE(io::ggml_quantize_activations(io::GgmlType::Q8_0, {x.data() + i * kRow, kRow}, q));
      const auto* a = reinterpret_cast<const std::uint8_t*>(q.data());
      for (Index o = 0; o < kRows; ++o) {
        float acc = 0.0f;
        for (Index b = 0; b < kBlocks; ++b) {
          const std::uint8_t* wb = blocks.data() + static_cast<std::size_t>(o * kBlocks + b) * bytes;
          const std::uint8_t* ab = a + static_cast<std::size_t>(b) * 34;
          int sum = 0;
          for (int j = 0; j < 32; ++j) sum += quant(wb, j) * static_cast<std::int8_t>(ab[2 + j]);
          std::uint16_t dw, da;
          std::memcpy(&dw, wb, 2);
          std::memcpy(&da, ab, 2);
          acc = std::fma(static_cast<float>(sum), io::half_to_float(dw) * io::half_to_float(da), acc);
        }
        expected[static_cast<std::size_t>(i * kRows + o)] = acc;
      }
      stored_linear(x.data() + i * kRow, 1, kRow, W, one.data() + i * kRows, kRows, scratch);
    }
    stored_linear(x.data(), kN, kRow, W, batch.data(), kRows, scratch);
    auto differing = [&](const std::vector<float>& y) {
      int differ = 0;
      for (std::size_t i = 0; i < y.size(); ++i)
        differ += std::bit_cast<std::uint32_t>(y[i]) != std::bit_cast<std::uint32_t>(expected[i]);
      return differ;
    };
    EXPECT_EQ(differing(one), 0) << "of " << one.size() << " outputs, one row at a time";
    EXPECT_EQ(differing(batch), 0) << "of " << batch.size() << " outputs, as a batch";
    W.ggml_amx = false;  // Q8_0: tinyBLAS's lanes; Q4_0 (not repacked here): the lanes of its vec_dot
    stored_linear(x.data(), kN, kRow, W, batch.data(), kRows, scratch);
    EXPECT_GT(differing(batch), 0);
  }
}

// A GGUF matrix's NaN and infinities are found from its blocks' scales: Q8_0 blocks with a NaN scale (32 NaN), an
// infinite scale over quants with two zeros (30 infinities, 2 NaN: inf x 0) and a finite one.
TEST(GgmlProducts, NonFiniteValuesAreCountedFromTheScales) {
  std::vector<std::uint8_t> blocks(3 * 34, 0);
  const std::uint16_t scales[3] = {0x7E00, 0x7C00, 0x3C00};  // NaN, infinity, 1
  for (int b = 0; b < 3; ++b) {
    std::memcpy(blocks.data() + b * 34, &scales[b], 2);
    for (int j = 2; j < 32; ++j) blocks[static_cast<std::size_t>(b * 34 + 2 + j)] = static_cast<std::uint8_t>(j);
  }
  std::int64_t nan = 0, inf = 0;
  ASSERT_TRUE(io::ggml_count_nonfinite(io::GgmlType::Q8_0, std::as_bytes(std::span(blocks)), nan, inf));
  EXPECT_EQ(nan, 32 + 2);
  EXPECT_EQ(inf, 30);
  EXPECT_FALSE(io::ggml_count_nonfinite(io::GgmlType::Q8_0, std::as_bytes(std::span(blocks)).first(40), nan, inf));
  EXPECT_FALSE(io::ggml_count_nonfinite(io::GgmlType::F16, std::as_bytes(std::span(blocks)), nan, inf));
}

}  // namespace ggml_products_tests
}  // namespace attn::models
