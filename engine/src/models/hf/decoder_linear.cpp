// The decoder's one product: activations times a weight kept as the checkpoint stores it (decoder_impl.h).
#include "decoder_impl.h"
#include "amx_bf16.h"
#include "ggml_products.h"

#include "attn/io/ggml_types.h"
#include "../../io/half.h"

#include <Eigen/Core>

#include <omp.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cmath>
#include <cstring>
#include <type_traits>

#if defined(__AVX2__) && defined(__F16C__)
#include <immintrin.h>
#endif

namespace attn::models {

namespace {

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Strided = Eigen::OuterStride<>;

// From this many activation rows on, a 16-bit matrix is widened in large chunks, each handed whole to a
// multi-threaded sgemm; below it (generation's one row) the threads share blocks of weight rows, each block
// widened into a buffer that stays in L2 and multiplied there.
constexpr Index kWideRows = 16;
// Floats per widened chunk for the wide path (16 MiB): bounded scratch, whatever the matrix.
constexpr Index kChunkFloats = Index{1} << 22;
// Weight rows per block for the wide path's parallel widening.
constexpr Index kBlockRows = 64;

void bf16_to_float(const std::uint16_t* p, float* out, Index n) {
  for (Index i = 0; i < n; ++i) out[i] = std::bit_cast<float>(static_cast<std::uint32_t>(p[i]) << 16);
}

float widen_one(const void* w, io::DType dtype, Index j) {
  switch (dtype) {
    case io::DType::BF16:
      return std::bit_cast<float>(static_cast<std::uint32_t>(static_cast<const std::uint16_t*>(w)[j]) << 16);
    case io::DType::F16: {
      Eigen::half h;
      h.x = static_cast<const std::uint16_t*>(w)[j];
      return static_cast<float>(h);
    }
    default: return static_cast<const float*>(w)[j];
  }
}

// dot(x, w) with w's 16-bit or 32-bit elements widened as they are loaded.
inline float fused_dot(const float* x, const void* w, io::DType dtype, Index n) {
  Index j = 0;
  float sum = 0.0f;
#if defined(__AVX2__) && defined(__F16C__) && defined(__FMA__)
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  const auto* h = static_cast<const std::uint16_t*>(w);
  const auto* f = static_cast<const float*>(w);
  const auto widen = [&](Index at) -> __m256 {
    switch (dtype) {
      case io::DType::BF16: {
        const __m256i u = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + at)));
        return _mm256_castsi256_ps(_mm256_slli_epi32(u, 16));
      }
      case io::DType::F16: return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + at)));
      default: return _mm256_loadu_ps(f + at);
    }
  };
  for (; j + 16 <= n; j += 16) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + j), widen(j), acc0);
    acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(x + j + 8), widen(j + 8), acc1);
  }
  for (; j + 8 <= n; j += 8) acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + j), widen(j), acc0);
  const __m256 acc = _mm256_add_ps(acc0, acc1);
  __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
  s4 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
  s4 = _mm_add_ss(s4, _mm_movehdup_ps(s4));
  sum = _mm_cvtss_f32(s4);
#endif
  for (; j < n; ++j) sum += x[j] * widen_one(w, dtype, j);
  return sum;
}

}  // namespace

void StoredMatrix::rows_to_float(Index r0, Index count, float* out) const {
  if (!file_rows.empty()) {
    for (Index k = 0; k < count; ++k)
      in_stored_order().rows_to_float(file_rows[static_cast<std::size_t>(r0 + k)], 1, out + k * cols);
    return;
  }
  const Index n = count * cols;
  switch (dtype) {
    case io::DType::F32: std::memcpy(out, static_cast<const float*>(data) + r0 * cols, sizeof(float) * n); break;
    case io::DType::F16: io::half_to_float(static_cast<const std::uint16_t*>(data) + r0 * cols, out, n); break;
    case io::DType::BF16: bf16_to_float(static_cast<const std::uint16_t*>(data) + r0 * cols, out, n); break;
    case io::DType::GGML: {
      // The loader checked that every row is a whole number of blocks of a type ggml_dequantize reads.
      const auto row_bytes = static_cast<std::size_t>(io::ggml_bytes(ggml_type, cols).value_or(0));
      const auto* begin = static_cast<const std::byte*>(data) + static_cast<std::size_t>(r0) * row_bytes;
      io::ggml_dequantize(static_cast<io::GgmlType>(ggml_type), {begin, static_cast<std::size_t>(count) * row_bytes},
                          {out, static_cast<std::size_t>(n)});
      break;
    }
    default: std::fill(out, out + n, 0.0f); break;  // the loader keeps only these four
  }
}

namespace {

// x's n rows (stride ldx) rounded as ggml rounds the activations of a product with W (io::ggml_round_activations)
// into `out` (stride W.cols); false when W's products are not rounded (float32 weights, rounding off).
bool round_activations(const float* x, Index n, Index ldx, const StoredMatrix& W, std::vector<float>& out) {
  // llama.cpp's AMX build multiplies F16 matrices with the float activations (ggml_products.cpp).
  if (!W.ggml_rounding || W.dtype == io::DType::F32 || (W.ggml_amx && W.dtype == io::DType::F16)) return false;
  const io::GgmlType type = W.dtype == io::DType::GGML  ? static_cast<io::GgmlType>(W.ggml_type)
                            : W.dtype == io::DType::F16 ? io::GgmlType::F16
                                                        : io::GgmlType::BF16;
  if (out.size() < static_cast<std::size_t>(n * W.cols)) out.resize(static_cast<std::size_t>(n * W.cols));
  bool rounded = true;
#pragma omp parallel for schedule(static) reduction(&& : rounded) if (n * W.cols >= (1 << 16))
  for (Index i = 0; i < n; ++i) {
    float* row = out.data() + i * W.cols;
    std::copy(x + i * ldx, x + i * ldx + W.cols, row);
    rounded = io::ggml_round_activations(type, {row, static_cast<std::size_t>(W.cols)}) && rounded;
  }
  return rounded;
}

// Q4_1 and Q5_1: y += sum_b m_b (s_b - sum of the rounded block b) per row (io::ggml_q8_1_offsets): the weights'
// offsets times the activations' block sums as ggml keeps them. x is the activations before rounding.
void add_q8_1_offsets(const float* x, Index n, Index ldx, const StoredMatrix& W, float* y, Index ldy) {
  const auto type = static_cast<io::GgmlType>(W.ggml_type);
  if (W.dtype != io::DType::GGML || !W.ggml_rounding || (type != io::GgmlType::Q4_1 && type != io::GgmlType::Q5_1))
    return;
  const Index blocks = W.cols / 32;
  const std::size_t block_bytes = type == io::GgmlType::Q4_1 ? 20 : 24;
  std::vector<float> offsets(static_cast<std::size_t>(n * blocks));
  for (Index i = 0; i < n; ++i) {
    io::ggml_q8_1_offsets({x + i * ldx, static_cast<std::size_t>(W.cols)},
                          {offsets.data() + i * blocks, static_cast<std::size_t>(blocks)});
  }
  const auto* base = static_cast<const std::uint8_t*>(W.data);
#pragma omp parallel for schedule(static) if (W.rows * n >= (1 << 14))
  for (Index o = 0; o < W.rows; ++o) {
    const std::uint8_t* row = base + static_cast<std::size_t>(o * blocks) * block_bytes;
    for (Index i = 0; i < n; ++i) {
      float sum = 0.0f;
      for (Index b = 0; b < blocks; ++b) {
        std::uint16_t m;
        std::memcpy(&m, row + static_cast<std::size_t>(b) * block_bytes + 2, 2);
        sum += io::half_to_float(m) * offsets[static_cast<std::size_t>(i * blocks + b)];
      }
      y[i * ldy + o] += sum;
    }
  }
}

// The fused product for ggml blocks: each weight row dequantised into a buffer in L1 and dotted with every row.
void fused_blocks(const float* x, Index n, Index ldx, const StoredMatrix& W, float* y, Index ldy) {
#pragma omp parallel if (W.rows * W.cols >= kFusedParallelWeights)
  {
    thread_local std::vector<float> row;
    if (row.size() < static_cast<std::size_t>(W.cols)) row.resize(static_cast<std::size_t>(W.cols));
#pragma omp for schedule(static)
    for (Index o = 0; o < W.rows; ++o) {
      W.rows_to_float(o, 1, row.data());
      for (Index i = 0; i < n; ++i) y[i * ldy + o] = fused_dot(x + i * ldx, row.data(), io::DType::F32, W.cols);
    }
  }
}

}  // namespace

namespace {

// The product itself, x as given (stored_linear rounds it first where llama.cpp does).
void product(const float* x, Index n, Index ldx, const StoredMatrix& W, float* y, Index ldy,
             std::vector<float>& scratch) {
  if (ggml::float_product(x, n, ldx, W, y, ldy)) return;  // a GGUF file's F32 or F16 matrix: llama.cpp's sums
  if (ggml::bf16_product(x, n, ldx, W, y, ldy)) return;   // its BF16 matrix, where the CPU multiplies BF16
  if (amx_bf16_product(x, n, ldx, W, y, ldy)) return;     // BF16 rows on AMX tiles, where the CPU has them
  Eigen::Map<const RowMajor, 0, Strided> X(x, n, W.cols, Strided(ldx));
  Eigen::Map<RowMajor, 0, Strided> Y(y, n, W.rows, Strided(ldy));
  if (const float* w = W.f32()) {
    Y.noalias() = X * Eigen::Map<const RowMajor>(w, W.rows, W.cols).transpose();
    return;
  }
  if (n >= kWideRows) {
    const Index chunk = std::max<Index>(kBlockRows, kChunkFloats / std::max<Index>(W.cols, 1));
    const Index rows = std::min(chunk, W.rows);
    if (scratch.size() < static_cast<std::size_t>(rows * W.cols))
      scratch.resize(static_cast<std::size_t>(rows * W.cols));
    for (Index r0 = 0; r0 < W.rows; r0 += rows) {
      const Index count = std::min(rows, W.rows - r0);
      const Index blocks = (count + kBlockRows - 1) / kBlockRows;
#pragma omp parallel for schedule(static) if (count * W.cols >= (1 << 16))
      for (Index b = 0; b < blocks; ++b) {
        const Index b0 = b * kBlockRows;
        W.rows_to_float(r0 + b0, std::min(kBlockRows, count - b0), scratch.data() + b0 * W.cols);
      }
      Y.middleCols(r0, count).noalias() = X * Eigen::Map<const RowMajor>(scratch.data(), count, W.cols).transpose();
    }
    return;
  }
  if (n <= kFusedRows && W.dtype == io::DType::GGML) {
    fused_blocks(x, n, ldx, W, y, ldy);
    return;
  }
  if (n <= kFusedRows) {
    const std::size_t element = io::dtype_size(W.dtype);
    const auto* base = static_cast<const std::byte*>(W.data);
#pragma omp parallel for schedule(static) if (W.rows * W.cols >= kFusedParallelWeights)
    for (Index o = 0; o < W.rows; ++o) {
      const void* row = base + static_cast<std::size_t>(o * W.cols) * element;
      const std::size_t row_bytes = static_cast<std::size_t>(W.cols) * element;
      if (o + kFusedPrefetchRows < W.rows)
        prefetch_bytes(base + (o + kFusedPrefetchRows) * W.cols * element, row_bytes);
      for (Index i = 0; i < n; ++i) y[i * ldy + o] = fused_dot(x + i * ldx, row, W.dtype, W.cols);
    }
    return;
  }
  const Index blocks = (W.rows + kBlockRows - 1) / kBlockRows;
#pragma omp parallel if (W.rows * W.cols >= (1 << 16))
  {
    thread_local std::vector<float> buffer;
    if (buffer.size() < static_cast<std::size_t>(kBlockRows * W.cols)) {
      buffer.resize(static_cast<std::size_t>(kBlockRows * W.cols));
    }
#pragma omp for schedule(static)
    for (Index b = 0; b < blocks; ++b) {
      const Index r0 = b * kBlockRows, count = std::min(kBlockRows, W.rows - r0);
      W.rows_to_float(r0, count, buffer.data());
      Y.middleCols(r0, count).noalias() = X * Eigen::Map<const RowMajor>(buffer.data(), count, W.cols).transpose();
    }
  }
}

}  // namespace

void stored_linear(const float* x, Index n, Index ldx, const StoredMatrix& W, float* y, Index ldy,
                   std::vector<float>& scratch) {
  if (!W.file_rows.empty()) {
    // The stored rows' outputs, then each of the matrix's rows gathered from its stored row's.
    thread_local std::vector<float> stored;
    if (stored.size() < static_cast<std::size_t>(n * W.rows)) stored.resize(static_cast<std::size_t>(n * W.rows));
    stored_linear(x, n, ldx, W.in_stored_order(), stored.data(), W.rows, scratch);
    for (Index i = 0; i < n; ++i) {
      const float* from = stored.data() + i * W.rows;
      float* to = y + i * ldy;
      for (Index m = 0; m < W.rows; ++m) to[m] = from[W.file_rows[static_cast<std::size_t>(m)]];
    }
    return;
  }
  if (ggml::integer_product(x, n, ldx, W, y, ldy)) return;  // a GGUF file's quantised matrix: ggml's integer sums
  thread_local std::vector<float> rounded;
  if (round_activations(x, n, ldx, W, rounded)) {
    product(rounded.data(), n, W.cols, W, y, ldy, scratch);
    add_q8_1_offsets(x, n, ldx, W, y, ldy);
  } else {
    product(x, n, ldx, W, y, ldy, scratch);
  }
}

}  // namespace attn::models
