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

const float* OnDemandLayer::query(int head, Index row) const {
  return queries_.data() + (static_cast<Index>(head) * tokens_ + row) * head_dim_;
}

const float* OnDemandLayer::key(int group, Index row) const {
  return keys_.data() + (static_cast<Index>(group) * tokens_ + row) * head_dim_;
}

void OnDemandLayer::set_row(int head, Index row, float shift, float inv_sum) {
  shift_[static_cast<std::size_t>(head * tokens_ + row)] = shift;
  inv_sum_[static_cast<std::size_t>(head * tokens_ + row)] = inv_sum;
}

Index OnDemandLayer::first_key(Index row) const {
  if (!causal_) return 0;
  return window_ > 0 ? std::max<Index>(0, row - window_ + 1) : 0;
}

void OnDemandLayer::tile(int head, Index r0, Index rows, Index c0, Index cols, float* out, Index ld) const {
  if (head < 0 || head >= heads_ || r0 < 0 || c0 < 0 || rows < 0 || cols < 0 || r0 + rows > tokens_ ||
      c0 + cols > tokens_ || ld < cols) {
    throw std::out_of_range("OnDemandLayer::tile: rows " + std::to_string(r0) + "+" + std::to_string(rows) + ", keys " +
                            std::to_string(c0) + "+" + std::to_string(cols) + " of " + std::to_string(tokens_));
  }
  if (rows == 0 || cols == 0) return;
  const int group = head / (heads_ / kv_heads_);
  // The forward's blocks of query rows, each with the forward's own product over the keys it saw and the softmax's
  // exponential over each row's visible keys: the same numbers as the forward, whatever part is asked for.
  std::vector<float> S;
  for (Index b0 = r0 / kScoreBlock * kScoreBlock; b0 < r0 + rows; b0 += kScoreBlock) {
    const Index block_rows = std::min(kScoreBlock, tokens_ - b0);
    const Index keys = causal_ ? b0 + block_rows : tokens_;
    S.resize(static_cast<std::size_t>(block_rows * keys));
    attention_scores(query(head, b0), head_dim_, key(group, 0), head_dim_, block_rows, keys, head_dim_, S.data(), keys,
                     tokens_ < 8);
    for (Index r = std::max(b0, r0); r < std::min(b0 + block_rows, r0 + rows); ++r) {
      float* scores = S.data() + (r - b0) * keys;
      const Index lo = first_key(r), count = last_key(r) + 1 - lo;
      Eigen::Map<Eigen::ArrayXf> visible(scores + lo, count);
      if (softcap_ > 0.0f) visible = (visible / softcap_).tanh() * softcap_;
      const float shift = this->shift(head, r), inv = inv_sum(head, r);
      if (std::isnan(shift) || std::isnan(inv)) {
        visible.setConstant(std::numeric_limits<float>::quiet_NaN());
      } else {
        detail::exp_shifted_sum(scores + lo, count, shift, 1.0f);
        visible *= inv;
      }
      float* dst = out + (r - r0) * ld;
      for (Index j = 0; j < cols; ++j) {
        const Index key_index = c0 + j;
        dst[j] = key_index >= lo && key_index < lo + count ? scores[key_index] : 0.0f;
      }
    }
  }
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

}  // namespace attn
