// Attention kept as what makes it rather than as maps (long inputs). A layer run this way stores every head's
// queries and its key/value group's keys as the forward used them (float32: after the norms, RoPE and the query
// scale), and per query row the softmax's shift (the row's largest visible score) and 1 / its sum of exponentials.
// Any cell, tile, row or column of any head is recomputed from them with the forward's own arithmetic (the same
// score products, soft-capping and exponential kernel, the same 1 / sum), so it equals the map a stored run holds
// within 1e-6 (tests/unit/test_on_demand_attention.cpp). Memory grows with tokens x width, not tokens^2 per head:
// at 32,768 tokens one head's map is 4 GiB of float32, its queries 8 MiB.
//
// Why float32 and not 16-bit queries and keys: with q and k rounded to float16, scores of 10 move by 0.0024 (median;
// bfloat16 0.019), and a weight by that relative amount; the recomputed maps would then not be the maps.
//
// The forward also streams each head's statistics over every row (entropy, attention distance, the mass on the
// first token, what every key receives) into StreamedHeadStats while the rows pass, so the statistics table needs
// no map at all.
#pragma once

#include "attn/core.h"
#include "attn/error.h"

#include <cstddef>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

namespace attn {

namespace detail {
// An allocator whose resize leaves new elements uninitialised (default-initialised: for float, no write): for large
// buffers the code writes before it reads, so that growing one touches no page (a page is first touched, and
// faulted in, by what writes it, in slices that read a cancel flag between them).
template <typename T>
struct Uninitialised : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = Uninitialised<U>;
  };
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
}  // namespace detail

// The score product of one block of query rows as every decoder forward computes it, shared with the recomputation
// so that both produce the same numbers: out[rows x keys] (row stride ld) = q k^T, q rows of `dim` floats at stride
// q_stride, k rows at stride k_stride. The forward runs blocks of kScoreBlock query rows aligned at 0; `few` (a
// generation step or a keystroke: fewer than 8 new rows) multiplies with Eigen's own kernel instead of the
// library's GEMM, whose threads cost more than such products.
inline constexpr Index kScoreBlock = 32;
void attention_scores(const float* q, Index q_stride, const float* k, Index k_stride, Index rows, Index keys, Index dim,
                      float* out, Index ld, bool few);

// One head's statistics over every query row, gathered as the rows are computed. Divide by `rows` for the means.
struct StreamedHeadStats {
  double entropy = 0;           // sum over rows of each row's entropy (nats)
  double distance = 0;          // sum over rows of the attention-weighted |i - j| (tokens)
  double first_mass = 0;        // sum over rows of the weight on token 0 (the attention sink)
  float max_weight = 0;         // the largest single weight
  std::vector<float> received;  // per key: the attention it receives, summed over every query
  Index rows = 0;
};

class OnDemandLayer {
 public:
  // What a layer read from memory it does not own holds (a version-2 attention dump, memory-mapped): per head its
  // queries (tokens x head_dim floats), row shifts and 1 / sums (tokens floats each) and, optionally, its whole map
  // max-pooled in cells of overview_factor x overview_factor weights (overview_side^2 float16 values, row-major); per
  // key group its keys. `keeper` keeps that memory alive; `check(head)` verifies a head's memory (its checksums) and
  // is what verify() calls.
  struct External {
    std::shared_ptr<const void> keeper;
    std::vector<const float*> queries, shifts, inv_sums;  // per head
    std::vector<const float*> keys;                       // per key group
    std::vector<const Eigen::half*> overviews;            // per head, or empty
    Index overview_factor = 0, overview_side = 0;
    std::function<Result<void>(int head)> check;
  };

  OnDemandLayer() = default;
  // `heads` query heads share `kv_heads` key heads (head h reads group h / (heads / kv_heads)). Causal: query i sees
  // keys j <= i, and with window > 0 only i - window < j <= i; bidirectional: every key. softcap > 0: a score s
  // becomes softcap * tanh(s / softcap) before the softmax (Gemma 2).
  OnDemandLayer(int heads, int kv_heads, Index head_dim, Index tokens, bool causal, Index window, float softcap);
  // A layer over `external` memory (sizes as above; the pointer vectors must have one entry per head and group) with
  // the statistics its forward streamed. Writing (query(), key(), set_row(), stats()) is for a forward's own layer.
  OnDemandLayer(int heads, int kv_heads, Index head_dim, Index tokens, bool causal, Index window, float softcap,
                External external, std::vector<StreamedHeadStats> stats);
  bool is_external() const { return external_ != nullptr; }
  // Whether head `head`'s memory can be trusted: always for a forward's layer; for an external one, External::check
  // (a dump's checksums, computed the first time and remembered). Call before reading a head of a dump.
  Result<void> verify(int head) const;

  int heads() const { return heads_; }
  int kv_heads() const { return kv_heads_; }
  Index head_dim() const { return head_dim_; }
  Index tokens() const { return tokens_; }
  bool causal() const { return causal_; }
  Index window() const { return window_; }
  float softcap() const { return softcap_; }
  std::size_t bytes() const;

  // What the forward writes: head_dim floats per query row of a head and per key row of a group; per query row its
  // shift and 1 / sum (NaN for a row of non-finite scores: recomputed weights are then NaN, as the stored row).
  float* query(int head, Index row) { return queries_.data() + (static_cast<Index>(head) * tokens_ + row) * head_dim_; }
  float* key(int group, Index row) { return keys_.data() + (static_cast<Index>(group) * tokens_ + row) * head_dim_; }
  const float* query(int head, Index row) const {
    return (external_ ? external_->queries[static_cast<std::size_t>(head)]
                      : queries_.data() + static_cast<Index>(head) * tokens_ * head_dim_) +
           row * head_dim_;
  }
  const float* key(int group, Index row) const {
    return (external_ ? external_->keys[static_cast<std::size_t>(group)]
                      : keys_.data() + static_cast<Index>(group) * tokens_ * head_dim_) +
           row * head_dim_;
  }
  void set_row(int head, Index row, float shift, float inv_sum);
  // A head's shifts and 1 / sums, tokens() floats each.
  const float* shifts(int head) const {
    return external_ ? external_->shifts[static_cast<std::size_t>(head)] : shift_.data() + head * tokens_;
  }
  const float* inv_sums(int head) const {
    return external_ ? external_->inv_sums[static_cast<std::size_t>(head)] : inv_sum_.data() + head * tokens_;
  }
  float shift(int head, Index row) const { return shifts(head)[row]; }
  float inv_sum(int head, Index row) const { return inv_sums(head)[row]; }
  StreamedHeadStats& stats(int head) { return stats_[static_cast<std::size_t>(head)]; }
  const StreamedHeadStats& stats(int head) const { return stats_[static_cast<std::size_t>(head)]; }

  // The keys query row `row` sees: [first_key(row), last_key(row)].
  Index first_key(Index row) const;
  Index last_key(Index row) const { return causal_ ? row : tokens_ - 1; }

  // Rows [r0, r0 + rows) x keys [c0, c0 + cols) of head `head` into out (row stride ld): the weights, exactly 0
  // where a key is not visible. The block is clipped to the tokens by the caller (checked).
  void tile(int head, Index r0, Index rows, Index c0, Index cols, float* out, Index ld) const;
  // One query row over every key (tokens() floats).
  void row(int head, Index r, float* out) const;
  // Every query's weight on key c (tokens() floats).
  void column(int head, Index c, float* out) const;
  // The whole map of one head (tokens x tokens): for tests and small inputs only.
  Matrix map(int head) const;

  // The map seen from afar: out (rows x cols, row stride ld) cell (i, j) pools the weights of query rows
  // [r0 + i factor, + factor) and keys [c0 + j factor, + factor), clipped to the map. Max: the largest of them (one
  // sharp weight is never averaged away); Mean: their mean over the cells inside the map (future and out-of-window
  // keys count as the 0 they are). Exact: every cell is recomputed, pooled cells are the pooled weights. Runs on
  // the engine's threads (OpenMP): a whole 32,768-token head at factor 32 is 537 million weights.
  enum class Pooling { Max, Mean };
  void pooled(int head, Index factor, Pooling pooling, Index r0, Index rows, Index c0, Index cols, float* out,
              Index ld) const;
  // A first picture of the same cells, quick: out row i holds only query row r0 + i factor + factor / 2 (clipped
  // to the map), its weights max-pooled over each cell's `factor` keys (Mean: averaged). 1 / factor of the work.
  void preview(int head, Index factor, Pooling pooling, Index r0, Index rows, Index c0, Index cols, float* out,
               Index ld) const;
  // The same cells as pooled(head, factor, Max, ...) read from the head's stored overview (a version-2 dump's,
  // float16: within a relative 2^-11 of the weight,
  // 2^-25 under float16's normal range), when it has one that covers them: factor a multiple of the overview's and
  // r0, c0 multiples of it. False (out untouched) otherwise.
  bool overview_pooled(int head, Index factor, Index r0, Index rows, Index c0, Index cols, float* out, Index ld) const;
  Index overview_factor() const { return external_ && !external_->overviews.empty() ? external_->overview_factor : 0; }

 private:
  // Query rows r0, r0 + stride, ... (rows of them) x keys [c0, c0 + cols) into out (row stride ld): one score
  // product over the keys the rows can see within [c0, c0 + cols), then each row's exponential, shift and 1 / sum.
  // forward_keys > 0: the rows are one of the forward's blocks, which multiplied that many keys; the product then
  // sums as the forward's did.
  void weights(int head, Index r0, Index stride, Index rows, Index c0, Index cols, float* out, Index ld,
               Index forward_keys = 0) const;
  void check_block(const char* what, int head, Index r0, Index rows, Index c0, Index cols, Index ld) const;
  // pooled's and preview's start: the arguments checked (out_of_range), out zeroed; the out rows and columns whose
  // cells start inside the map.
  std::pair<Index, Index> start_pooled(const char* what, int head, Index factor, Index r0, Index rows, Index c0,
                                       Index cols, float* out, Index ld) const;

  int heads_ = 0, kv_heads_ = 0;
  Index head_dim_ = 0, tokens_ = 0, window_ = 0;
  bool causal_ = true;
  float softcap_ = 0;
  // Left uninitialised until the forward writes them: zeroing 3 GB at 32,768 tokens first would touch every page
  // twice (and hold up a cancelled run for seconds where page faults are slow).
  std::vector<float, detail::Uninitialised<float>> queries_;  // [heads][tokens][head_dim]
  std::vector<float, detail::Uninitialised<float>> keys_;     // [kv_heads][tokens][head_dim]
  std::vector<float> shift_, inv_sum_;                        // [heads][tokens]
  std::vector<StreamedHeadStats> stats_;
  std::shared_ptr<const External> external_;  // set: the layer reads this memory instead of its vectors
};

// One head's map read in blocks, from any thread, whatever keeps it (a run on demand; a version-2 dump): what the
// long-map view draws.
class HeadMapReader {
 public:
  using Pooling = OnDemandLayer::Pooling;
  virtual ~HeadMapReader() = default;
  virtual Index tokens() const = 0;
  // OnDemandLayer::pooled and ::preview's blocks.
  virtual void pooled(Index factor, Pooling pooling, Index r0, Index rows, Index c0, Index cols, float* out,
                      Index ld) const = 0;
  virtual void preview(Index factor, Pooling pooling, Index r0, Index rows, Index c0, Index cols, float* out,
                       Index ld) const = 0;
  // Query row r over every key (tokens() floats); one weight.
  virtual void row(Index r, float* out) const = 0;
  virtual float weight(Index r, Index c) const = 0;
  // The largest weight of the map (for the colour scale).
  virtual float max_weight() const = 0;
};

// A head of an on-demand layer; `owner` keeps the layer alive (the run holding it).
class OnDemandHead final : public HeadMapReader {
 public:
  OnDemandHead(std::shared_ptr<const void> owner, const OnDemandLayer& layer, int head);
  Index tokens() const override { return layer_.tokens(); }
  // Max-pooled cells (factor 2 and more) come from a dump's stored overview where it covers them
  // (OnDemandLayer::overview_pooled).
  void pooled(Index factor, Pooling pooling, Index r0, Index rows, Index c0, Index cols, float* out,
              Index ld) const override {
    if (pooling == Pooling::Max && factor > 1 && layer_.overview_pooled(head_, factor, r0, rows, c0, cols, out, ld))
      return;
    layer_.pooled(head_, factor, pooling, r0, rows, c0, cols, out, ld);
  }
  void preview(Index factor, Pooling pooling, Index r0, Index rows, Index c0, Index cols, float* out,
               Index ld) const override {
    layer_.preview(head_, factor, pooling, r0, rows, c0, cols, out, ld);
  }
  void row(Index r, float* out) const override { layer_.row(head_, r, out); }
  float weight(Index r, Index c) const override;
  float max_weight() const override { return layer_.stats(head_).max_weight; }

 private:
  std::shared_ptr<const void> owner_;
  const OnDemandLayer& layer_;
  int head_;
};

}  // namespace attn
