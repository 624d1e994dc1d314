// ggml's tensor types, as GGUF files (llama.cpp) number them in their tensor infos, and their dequantisation to
// float32 exactly as ggml's reference dequantize_row_* (ggml/src/ggml-quants.c) computes it, bit for bit.
//
// The block layouts (ggml/src/ggml-common.h), all little-endian, f16 = IEEE binary16, QK_K = 256:
//   Q4_0  32 el.,  18 B: f16 d, 16 B nibbles (element j low, j + 16 high)          y = (q - 8) d
//   Q4_1  32 el.,  20 B: f16 d, f16 m, 16 B nibbles                                y = q d + m
//   Q5_0  32 el.,  22 B: f16 d, 4 B fifth bits, 16 B nibbles                       y = (q - 16) d
//   Q5_1  32 el.,  24 B: f16 d, f16 m, 4 B fifth bits, 16 B nibbles                y = q d + m
//   Q8_0  32 el.,  34 B: f16 d, 32 int8                                            y = q d
//   Q2_K 256 el.,  84 B: 16 B 4-bit scale|min pairs, 64 B 2-bit quants, f16 d, f16 dmin
//   Q3_K 256 el., 110 B: 32 B high-bit mask, 64 B 2-bit quants, 12 B 6-bit scales, f16 d
//   Q4_K 256 el., 144 B: f16 d, f16 dmin, 12 B 6-bit scales and mins, 128 B nibbles
//   Q5_K 256 el., 176 B: f16 d, f16 dmin, 12 B 6-bit scales and mins, 32 B fifth bits, 128 B nibbles
//   Q6_K 256 el., 210 B: 128 B low nibbles, 64 B high 2-bit pairs, 16 int8 scales, f16 d
//   Q8_K 256 el., 292 B: f32 d, 256 int8, 16 int16 group sums (unused by dequantisation)
// A K-quant's sub-block value is y = (d * scale) * q - dmin * min. The products are exact in float (24-bit
// significand): an f16 has 11 significant bits and the sub-scales and quants it meets add at most 11 more (Q5_K:
// 6 + 5). Q6_K's d * scale * q (11 + 8 + 6 bits) and Q8_K's f32 d * q round once, the same exact product in any
// order. So each value is one rounding of the same exact figures as ggml's, and a fused multiply-add or another
// order of the products gives the same bits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace attn::io {

// ggml's type numbers (ggml/include/ggml.h, enum ggml_type, ggml 0.25.1), as stored in GGUF tensor infos. The
// numbers ggml has retired (4 and 5: Q4_2 and Q4_3; 31 to 33: Q4_0_4_4, Q4_0_4_8, Q4_0_8_8; 36 to 38: the
// IQ4_NL_4_4 family) are not members: no file may use them, and ggml never gives them to another type.
enum class GgmlType : std::uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  IQ2_XXS = 16,
  IQ2_XS = 17,
  IQ3_XXS = 18,
  IQ1_S = 19,
  IQ4_NL = 20,
  IQ3_S = 21,
  IQ2_S = 22,
  IQ4_XS = 23,
  I8 = 24,
  I16 = 25,
  I32 = 26,
  I64 = 27,
  F64 = 28,
  IQ1_M = 29,
  BF16 = 30,
  TQ1_0 = 34,
  TQ2_0 = 35,
  MXFP4 = 39,
  NVFP4 = 40,
  Q1_0 = 41,
  Q2_0 = 42,
};

struct GgmlTypeInfo {
  std::string_view name;        // the enum's name without GGML_TYPE_: "Q4_K" (ggml_type_name says "q4_K")
  std::int64_t block_elements;  // elements per block (1 for F32/F16/BF16, 32, 256); 0 for a retired number
  std::int64_t block_bytes;     // bytes per block; 0 for a retired number
  bool readable;                // ggml_dequantize reads it
};

// Every number ggml.h has assigned, retired ones included, with its name and block geometry as ggml's type_traits
// (ggml/src/ggml.c) give them: a retired number has a name and no geometry (block_elements = 0, which llama.cpp's
// gguf.cpp refuses, as a reader should). nullopt for a number ggml never assigned.
std::optional<GgmlTypeInfo> ggml_type_info(std::uint32_t type);
// "Q4_K", or "unknown type 99" for numbers ggml never assigned.
std::string ggml_type_name(std::uint32_t type);
// The bytes `elements` elements of `type` take (ggml_row_size): nullopt when the type has no geometry, when
// `elements` is negative or not a whole number of blocks, or when the size would not fit in 63 bits.
std::optional<std::int64_t> ggml_bytes(std::uint32_t type, std::int64_t elements);
// Dequantises `out.size()` elements (a whole number of blocks) from `blocks` (exactly ggml_bytes(type,
// out.size()) bytes, at any alignment), as ggml's dequantize_row_* does, bit for bit; large spans are shared
// between the OpenMP threads. false, leaving `out` untouched, for a type that is not readable or sizes that
// disagree.
bool ggml_dequantize(GgmlType type, std::span<const std::byte> blocks, std::span<float> out);

// The type ggml's CPU backend turns a product's activations into before it multiplies them with rows of `weights`
// (type_traits_cpu's vec_dot_type): F32 for F32, F16 for F16, BF16 for BF16, Q8_0 for Q4_0, Q5_0 and Q8_0, Q8_1
// for Q4_1 and Q5_1, Q8_K for the K-quants; nullopt for a type ggml_dequantize does not read.
std::optional<GgmlType> ggml_vec_dot_type(GgmlType weights);
// Rounds `x` (a whole number of blocks of the vec_dot type) in place to what llama.cpp's CPU backend multiplies
// with rows of `weights`: each value replaced by the dequantised value of its quantisation. F16 and BF16 round to
// nearest even; Q8_0 and Q8_1 as the x86 quantize_row_q8_0/q8_1 (ggml-cpu/arch/x86/quants.c: d = max|x| / 127
// stored as f16, q = round-to-even(x 127 / max|x|)); Q8_K as quantize_row_q8_K_ref (float d = 1 / (-127 / x_max),
// x_max the first value of largest magnitude). So a float product of the rounded activations with the dequantised
// weights is ggml's integer block sums, to float rounding (Q8_1's f16 block sum s aside: see the .cpp). false for a
// type without a vec_dot type or a length that is not a whole number of its blocks.
bool ggml_round_activations(GgmlType weights, std::span<float> x);
// Adds to nan and inf the NaN and infinite values the quantised blocks hold, reading only each block's scales (its
// quants are integers, so a block with finite scales has finite values) and dequantising the blocks whose scales are
// not finite. false for a type that is not a readable block type or a span that is not whole blocks.
bool ggml_count_nonfinite(GgmlType type, std::span<const std::byte> blocks, std::int64_t& nan, std::int64_t& inf);
// Q4_1 and Q5_1 products take each weight block's offset m times the activations' Q8_1 block sum s = f16(d sum q)
// (d the unrounded max|x| / 127), not times the sum of the rounded values: out[b] = s - sum of block b's rounded
// values, so that a float product with the rounded activations plus sum_b m_b out[b] is ggml's. false unless x is
// a whole number of 32-value blocks and out has one value per block.
bool ggml_q8_1_offsets(std::span<const float> x, std::span<float> out);
// x quantised into `out` as ggml's blocks of `vec_dot_type` (Q8_0, Q8_1 or Q8_K), as
// ggml_round_activations describes; false for another type or sizes that disagree (out must be ggml_bytes(type,
// x.size()) bytes).
bool ggml_quantize_activations(GgmlType vec_dot_type, std::span<const float> x, std::span<std::byte> out);

// Whether llama.cpp's CPU backend runs its AMX build here (ggml-cpu/amx): an x86 CPU with AMX-INT8 and AVX-512 VNNI
// whose kernel grants this process the tiles' state (arch_prctl ARCH_REQ_XCOMP_PERM, asked once, as ggml asks).
bool cpu_has_amx();

}  // namespace attn::io
