// Recomputing a head's weights from its queries, keys and row statistics (attn/on_demand_attention.h). The scores
// are one sgemm of a block of queries against a block of keys, as the forward's; then, per row, the visible keys
// are soft-capped, passed through the forward's exponential kernel with the row's shift and multiplied by its
// 1 / sum; every other key is exactly 0.
#include "attn/on_demand_attention.h"

#include "../mechanisms/exp_kernel.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

namespace attn {

namespace {

using OnDemandRows = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Query rows per score product in the whole-map and whole-column reads.
constexpr Index kOnDemandBlock = 256;

}  // namespace

void attention_scores(const float* q, Index q_stride, const float* k, Index k_stride, Index rows, Index keys, Index dim,
                      float* out, Index ld, bool few) {
  using Strided = Eigen::OuterStride<>;
  Eigen::Map<const OnDemandRows, 0, Strided> Q(q, rows, dim, Strided(q_stride));
  Eigen::Map<const OnDemandRows, 0, Strided> K(k, keys, dim, Strided(k_stride));
  Eigen::Map<OnDemandRows, 0, Strided> S(out, rows, keys, Strided(ld));
  if (few) {
    S.noalias() = Q.lazyProduct(K.transpose());
  } else {
    S.noalias() = Q * K.transpose();
  }
}

OnDemandLayer::OnDemandLayer(int heads, int kv_heads, Index head_dim, Index tokens, bool causal, Index window,
                             float softcap)
    : heads_(heads), kv_heads_(kv_heads), head_dim_(head_dim), tokens_(tokens), window_(causal ? window : 0),
      causal_(causal), softcap_(softcap) {
  if (heads <= 0 || kv_heads <= 0 || heads % kv_heads != 0 || head_dim <= 0 || tokens < 0) {
    throw std::invalid_argument("OnDemandLayer: " + std::to_string(heads) + " heads over " + std::to_string(kv_heads) +
                                " key heads of " + std::to_string(head_dim));
  }
  queries_.resize(static_cast<std::size_t>(heads * tokens * head_dim));
  keys_.resize(static_cast<std::size_t>(kv_heads * tokens * head_dim));
  shift_.resize(static_cast<std::size_t>(heads * tokens));
  inv_sum_.resize(static_cast<std::size_t>(heads * tokens));
  stats_.resize(static_cast<std::size_t>(heads));
  for (auto& s : stats_) s.received.assign(static_cast<std::size_t>(tokens), 0.0f);
}

std::size_t OnDemandLayer::bytes() const {
  std::size_t b = (queries_.size() + keys_.size() + shift_.size() + inv_sum_.size()) * sizeof(float);
  for (const auto& s : stats_) b += s.received.size() * sizeof(float);
  return b;
}

OnDemandLayer::OnDemandLayer(int heads, int kv_heads, Index head_dim, Index tokens, bool causal, Index window,
                             float softcap, External external, std::vector<StreamedHeadStats> stats)
    : heads_(heads), kv_heads_(kv_heads), head_dim_(head_dim), tokens_(tokens), window_(causal ? window : 0),
      causal_(causal), softcap_(softcap), stats_(std::move(stats)) {
  const auto h = static_cast<std::size_t>(heads), g = static_cast<std::size_t>(kv_heads);
  if (heads <= 0 || kv_heads <= 0 || heads % kv_heads != 0 || head_dim <= 0 || tokens < 0 ||
      external.queries.size() != h || external.shifts.size() != h || external.inv_sums.size() != h ||
      external.keys.size() != g || (!external.overviews.empty() && external.overviews.size() != h) ||
      (!external.overviews.empty() &&
       (external.overview_factor < 1 ||
        external.overview_side != (tokens + external.overview_factor - 1) / external.overview_factor)) ||
      stats_.size() != h) {
    throw std::invalid_argument("OnDemandLayer: external memory for " + std::to_string(heads) + " heads over " +
                                std::to_string(kv_heads) + " key heads does not match");
  }
  external_ = std::make_shared<const External>(std::move(external));
}

Result<void> OnDemandLayer::verify(int head) const {
  if (head < 0 || head >= heads_) {
    return fail(ErrorKind::OutOfRange, "head " + std::to_string(head) + " of " + std::to_string(heads_));
  }
  if (!external_ || !external_->check) return {};
  return external_->check(head);
}

bool OnDemandLayer::overview_pooled(int head, Index factor, Index r0, Index rows, Index c0, Index cols, float* out,
                                    Index ld) const {
  const Index f = overview_factor();
  if (f == 0 || factor < f || factor % f != 0 || r0 % f != 0 || c0 % f != 0) return false;
  const auto [in_rows, in_cols] = start_pooled("overview_pooled", head, factor, r0, rows, c0, cols, out, ld);
  const Eigen::half* cells = external_->overviews[static_cast<std::size_t>(head)];
  const Index side = external_->overview_side, per = factor / f;
  for (Index i = 0; i < in_rows; ++i) {
    const Index a = r0 / f + i * per, a_end = std::min(side, a + per);
    for (Index j = 0; j < in_cols; ++j) {
      const Index b = c0 / f + j * per, b_end = std::min(side, b + per);
      float m = 0.0f;
      for (Index r = a; r < a_end; ++r) {
        for (Index c = b; c < b_end; ++c) m = std::max(m, static_cast<float>(cells[r * side + c]));
      }
      out[i * ld + j] = m;
    }
  }
  return true;
}

void OnDemandLayer::set_row(int head, Index row, float shift, float inv_sum) {
  shift_[static_cast<std::size_t>(head * tokens_ + row)] = shift;
  inv_sum_[static_cast<std::size_t>(head * tokens_ + row)] = inv_sum;
}

Index OnDemandLayer::first_key(Index row) const {
  if (!causal_) return 0;
  return window_ > 0 ? std::max<Index>(0, row - window_ + 1) : 0;
}

void OnDemandLayer::check_block(const char* what, int head, Index r0, Index rows, Index c0, Index cols,
                                Index ld) const {
  if (head < 0 || head >= heads_ || r0 < 0 || c0 < 0 || rows < 0 || cols < 0 || r0 + rows > tokens_ ||
      c0 + cols > tokens_ || ld < cols) {
    throw std::out_of_range(std::string("OnDemandLayer::") + what + ": head " + std::to_string(head) + ", rows " +
                            std::to_string(r0) + "+" + std::to_string(rows) + ", keys " + std::to_string(c0) + "+" +
                            std::to_string(cols) + " of " + std::to_string(tokens_));
  }
}

void OnDemandLayer::weights(int head, Index r0, Index stride, Index rows, Index c0, Index cols, float* out, Index ld,
                            Index forward_keys) const {
  if (rows == 0 || cols == 0) return;
  const int group = head / (heads_ / kv_heads_);
  const Index last_row = r0 + (rows - 1) * stride;
  // The keys any of the rows sees, within [c0, c0 + cols): only those are multiplied.
  Index k0 = std::max(c0, first_key(r0)), k1 = std::min(c0 + cols, last_key(last_row) + 1);
  thread_local std::vector<float> S;
  if (k1 > k0) {
    if (forward_keys > 0) {
      // The forward's block multiplied keys [0, forward_keys): the library's kernel takes keys in panels from 0 and
      // sums a panel's last, partial one in another order. Keys from a multiple of 16 (a multiple of every panel
      // width) and to one, or to forward_keys when in its last 16, reproduce the forward's sums exactly.
      k0 = k0 / 16 * 16;
      k1 = (k1 + 15) / 16 * 16;
      if (k1 > forward_keys - forward_keys % 16) k1 = forward_keys;
    } else if (k1 - k0 < 16) {
      // A product of a few keys would go to the library's matrix-vector kernel (another order again).
      k1 = std::min(tokens_, k0 + 16);
      k0 = std::max<Index>(0, k1 - 16);
    }
    S.resize(static_cast<std::size_t>(rows * (k1 - k0)));
    attention_scores(query(head, r0), stride * head_dim_, key(group, k0), head_dim_, rows, k1 - k0, head_dim_, S.data(),
                     k1 - k0, tokens_ < 8);
  }
  for (Index i = 0; i < rows; ++i) {
    const Index r = r0 + i * stride;
    float* dst = out + i * ld;
    const Index lo = std::max(first_key(r), c0), hi = std::min(last_key(r) + 1, c0 + cols);
    if (hi <= lo) {
      std::fill(dst, dst + cols, 0.0f);
      continue;
    }
    std::fill(dst, dst + (lo - c0), 0.0f);
    std::fill(dst + (hi - c0), dst + cols, 0.0f);
    float* w = dst + (lo - c0);
    std::copy_n(S.data() + i * (k1 - k0) + (lo - k0), hi - lo, w);
    Eigen::Map<Eigen::ArrayXf> visible(w, hi - lo);
    if (softcap_ > 0.0f) visible = (visible / softcap_).tanh() * softcap_;
    const float shift = this->shift(head, r), inv = inv_sum(head, r);
    if (std::isnan(shift) || std::isnan(inv)) {
      visible.setConstant(std::numeric_limits<float>::quiet_NaN());
    } else {
      detail::exp_shifted_sum(w, hi - lo, shift, 1.0f);
      visible *= inv;
    }
  }
}

void OnDemandLayer::tile(int head, Index r0, Index rows, Index c0, Index cols, float* out, Index ld) const {
  check_block("tile", head, r0, rows, c0, cols, ld);
  // In the forward's blocks of query rows (aligned at 0), each block's scores one product as the forward's.
  for (Index b0 = r0 / kScoreBlock * kScoreBlock; b0 < r0 + rows; b0 += kScoreBlock) {
    const Index block_rows = std::min(kScoreBlock, tokens_ - b0);
    const Index keys = causal_ ? b0 + block_rows : tokens_;  // what the forward multiplied this block by
    const Index from = std::max(b0, r0), to = std::min(b0 + block_rows, r0 + rows);
    if (from == b0 && to == b0 + block_rows) {
      weights(head, b0, 1, block_rows, c0, cols, out + (b0 - r0) * ld, ld, keys);
    } else {
      thread_local std::vector<float> part;
      part.resize(static_cast<std::size_t>(block_rows * cols));
      weights(head, b0, 1, block_rows, c0, cols, part.data(), cols, keys);
      for (Index r = from; r < to; ++r) std::copy_n(part.data() + (r - b0) * cols, cols, out + (r - r0) * ld);
    }
  }
}

namespace {

// Pools one row of weights, keys starting `offset` keys into out cell 0, into out's cells of `factor` keys (Max: the
// larger of what is there and the keys'; Mean: adds their sum).
void pool_row(const float* w, Index n, Index offset, Index factor, OnDemandLayer::Pooling pooling, float* out) {
  for (Index j = 0; j < n;) {
    const Index cell = (offset + j) / factor, end = std::min(n, (cell + 1) * factor - offset);
    Eigen::Map<const Eigen::ArrayXf> part(w + j, end - j);
    if (pooling == OnDemandLayer::Pooling::Max) {
      out[cell] = std::max(out[cell], part.maxCoeff());
    } else {
      out[cell] += part.sum();
    }
    j = end;
  }
}

// Mean pooling's divisor: the cells of out cell (i, j) inside the map (`row_cells` rows each, or all of the
// cell's rows inside the map when 0).
void divide_by_cells(float* out, Index rows, Index cols, Index ld, Index r0, Index c0, Index factor, Index row_cells,
                     Index tokens) {
  for (Index i = 0; i < rows; ++i) {
    const Index rr = row_cells > 0 ? row_cells : std::min(factor, tokens - (r0 + i * factor));
    for (Index j = 0; j < cols; ++j) {
      const Index cc = std::min(factor, tokens - (c0 + j * factor));
      out[i * ld + j] /= static_cast<float>(std::max<Index>(1, rr * cc));
    }
  }
}

// Keys per score product in the pooled reads (a block of 256 query rows by this many keys: 4 MiB), rounded down
// to whole cells of `factor` keys where a cell is smaller.
Index pool_keys(Index factor) {
  constexpr Index kPoolKeys = 4096;
  return factor >= kPoolKeys ? kPoolKeys : kPoolKeys / factor * factor;
}

// The out cells of [r0, r0 + rows * factor) x [c0, c0 + cols * factor) that start inside a map of `tokens`.
Index cells_inside(Index tokens, Index start, Index count, Index factor) {
  return std::clamp<Index>((tokens - start + factor - 1) / factor, 0, count);
}

}  // namespace

std::pair<Index, Index> OnDemandLayer::start_pooled(const char* what, int head, Index factor, Index r0, Index rows,
                                                    Index c0, Index cols, float* out, Index ld) const {
  if (factor < 1 || head < 0 || head >= heads_ || r0 < 0 || c0 < 0 || rows < 0 || cols < 0 || ld < cols) {
    throw std::out_of_range(std::string("OnDemandLayer::") + what + ": head " + std::to_string(head) + ", factor " +
                            std::to_string(factor) + ", " + std::to_string(rows) + " x " + std::to_string(cols) +
                            " cells at " + std::to_string(r0) + ", " + std::to_string(c0));
  }
  for (Index i = 0; i < rows; ++i) std::fill(out + i * ld, out + i * ld + cols, 0.0f);
  return {cells_inside(tokens_, r0, rows, factor), cells_inside(tokens_, c0, cols, factor)};
}

void OnDemandLayer::pooled(int head, Index factor, Pooling pooling, Index r0, Index rows, Index c0, Index cols,
                           float* out, Index ld) const {
  const auto [in_rows, in_cols] = start_pooled("pooled", head, factor, r0, rows, c0, cols, out, ld);
  if (in_rows == 0 || in_cols == 0) return;
  const Index q1 = std::min(tokens_, r0 + in_rows * factor), k1 = std::min(tokens_, c0 + in_cols * factor);
  const Index chunk = pool_keys(factor);
  // Tasks: groups of out rows covering about kOnDemandBlock query rows (one out row when factor is larger); no two
  // tasks write the same out row.
  const Index group = std::max<Index>(1, kOnDemandBlock / factor);
  const Index tasks = (in_rows + group - 1) / group;
#pragma omp parallel for schedule(dynamic) if (tasks > 1 && (q1 - r0) * (k1 - c0) > (1 << 20))
  for (Index t = 0; t < tasks; ++t) {
    thread_local std::vector<float> w;
    const Index a = r0 + t * group * factor, b = std::min(q1, a + group * factor);  // the task's query rows
    for (Index q = a; q < b; q += kOnDemandBlock) {
      const Index qn = std::min(kOnDemandBlock, b - q);
      // Only the keys these rows see: the rest of their cells stay 0 (a causal map's upper half costs nothing).
      const Index k_end = std::min(k1, last_key(q + qn - 1) + 1);
      for (Index k = std::max(c0, first_key(q)); k < k_end; k += chunk) {
        const Index kn = std::min(chunk, k_end - k);
        w.resize(static_cast<std::size_t>(qn * kn));
        tile(head, q, qn, k, kn, w.data(), kn);
        for (Index i = 0; i < qn; ++i) {
          pool_row(w.data() + i * kn, kn, (k - c0) % factor, factor, pooling,
                   out + ((q + i - r0) / factor) * ld + (k - c0) / factor);
        }
      }
    }
  }
  if (pooling == Pooling::Mean) divide_by_cells(out, in_rows, in_cols, ld, r0, c0, factor, 0, tokens_);
}

void OnDemandLayer::preview(int head, Index factor, Pooling pooling, Index r0, Index rows, Index c0, Index cols,
                            float* out, Index ld) const {
  const auto [in_rows, in_cols] = start_pooled("preview", head, factor, r0, rows, c0, cols, out, ld);
  if (in_rows == 0 || in_cols == 0) return;
  const Index k1 = std::min(tokens_, c0 + in_cols * factor), chunk = pool_keys(factor);
  // The sampled rows: r0 + factor / 2 at a stride of factor (one score product for all of them); a last cell
  // whose middle row is past the map samples the map's last row.
  const Index first = r0 + factor / 2;
  const Index strided = first < tokens_ ? std::min(in_rows, (tokens_ - 1 - first) / factor + 1) : 0;
  std::vector<float> w;
  for (Index k = c0; k < k1; k += chunk) {
    const Index kn = std::min(chunk, k1 - k);
    w.resize(static_cast<std::size_t>(in_rows * kn));
    weights(head, first, factor, strided, k, kn, w.data(), kn);
    for (Index i = strided; i < in_rows; ++i) weights(head, tokens_ - 1, 1, 1, k, kn, w.data() + i * kn, kn);
    for (Index i = 0; i < in_rows; ++i) {
      pool_row(w.data() + i * kn, kn, (k - c0) % factor, factor, pooling, out + i * ld + (k - c0) / factor);
    }
  }
  if (pooling == Pooling::Mean) divide_by_cells(out, in_rows, in_cols, ld, r0, c0, factor, 1, tokens_);
}

void OnDemandLayer::row(int head, Index r, float* out) const { tile(head, r, 1, 0, tokens_, out, tokens_); }

void OnDemandLayer::column(int head, Index c, float* out) const {
  // Blocks of queries against the one key: only the rows that can see key c are computed.
  std::fill(out, out + tokens_, 0.0f);
  const Index first = causal_ ? c : 0;
  const Index last = causal_ && window_ > 0 ? std::min(tokens_, c + window_) : tokens_;
  for (Index r0 = first; r0 < last; r0 += kOnDemandBlock) {
    const Index rows = std::min(kOnDemandBlock, last - r0);
    tile(head, r0, rows, c, 1, out + r0, 1);
  }
}

Matrix OnDemandLayer::map(int head) const {
  Matrix m(tokens_, tokens_);
  for (Index r0 = 0; r0 < tokens_; r0 += kOnDemandBlock) {
    const Index rows = std::min(kOnDemandBlock, tokens_ - r0);
    tile(head, r0, rows, 0, tokens_, m.data() + r0 * tokens_, tokens_);
  }
  return m;
}

OnDemandHead::OnDemandHead(std::shared_ptr<const void> owner, const OnDemandLayer& layer, int head)
    : owner_(std::move(owner)), layer_(layer), head_(head) {
  if (head < 0 || head >= layer.heads()) {
    throw std::out_of_range("OnDemandHead: head " + std::to_string(head) + " of " + std::to_string(layer.heads()));
  }
}

float OnDemandHead::weight(Index r, Index c) const {
  float w = 0.0f;
  layer_.tile(head_, r, 1, c, 1, &w, 1);
  return w;
}

}  // namespace attn
