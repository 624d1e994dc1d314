// The decoder's one product: activations times a weight kept as the checkpoint stores it (decoder_impl.h).
#include "decoder_impl.h"

#include <Eigen/Core>

#include <omp.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>

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
// Weight rows per block for the narrow path.
constexpr Index kBlockRows = 64;

void half_to_float(const std::uint16_t* p, float* out, Index n) {
  Index i = 0;
#if defined(__AVX2__) && defined(__F16C__)
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i))));
  }
#endif
  for (; i < n; ++i) {
    Eigen::half h;
    h.x = p[i];
    out[i] = static_cast<float>(h);
  }
}

void bf16_to_float(const std::uint16_t* p, float* out, Index n) {
  for (Index i = 0; i < n; ++i) out[i] = std::bit_cast<float>(static_cast<std::uint32_t>(p[i]) << 16);
}

}  // namespace

void StoredMatrix::rows_to_float(Index r0, Index count, float* out) const {
  const Index n = count * cols;
  switch (dtype) {
    case io::DType::F32: std::memcpy(out, static_cast<const float*>(data) + r0 * cols, sizeof(float) * n); break;
    case io::DType::F16: half_to_float(static_cast<const std::uint16_t*>(data) + r0 * cols, out, n); break;
    case io::DType::BF16: bf16_to_float(static_cast<const std::uint16_t*>(data) + r0 * cols, out, n); break;
    default: std::fill(out, out + n, 0.0f); break;  // the loader keeps only these three
  }
}

void stored_linear(const float* x, Index n, Index ldx, const StoredMatrix& W, float* y, Index ldy,
                   std::vector<float>& scratch) {
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

}  // namespace attn::models
