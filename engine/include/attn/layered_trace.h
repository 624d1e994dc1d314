// The attention of a layered model (a transformer, or any model's dump): per layer, every head's map as
// one [heads, rows, cols] stack. Stacks are stored in float32, or in float16 for long inputs (a 12-layer,
// 12-head encoder at 2,048 tokens holds 604 M weights: 2.4 GB in float32, 1.2 GB in float16).
#pragma once

#include "attn/core.h"
#include "attn/trace.h"

#include <Eigen/Core>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace attn {

enum class Precision { F32, F16 };

namespace detail {
// Storage for maps: uninitialised unless asked, and for large stacks 2 MB-aligned and advised for
// transparent huge pages, so that the first touch of a run's 150 MB of maps (BERT-base, 512 tokens)
// faults 512x fewer pages. Copies are deep.
// Or a read-only view of bytes someone else keeps alive (an attention dump's memory-mapped file: a
// 1 GiB dump is not copied, and only the pages a view reads are ever loaded). Copies of a view share it;
// the first mutable access to a view copies it into storage of its own.
class MapBuffer {
 public:
  MapBuffer() = default;
  MapBuffer(std::size_t bytes, bool zeroed);
  MapBuffer(std::shared_ptr<const void> owner, const void* data, std::size_t bytes);
  MapBuffer(const MapBuffer& other);
  MapBuffer& operator=(const MapBuffer& other);
  MapBuffer(MapBuffer&& other) noexcept;
  MapBuffer& operator=(MapBuffer&& other) noexcept;
  ~MapBuffer();
  void* data();
  const void* data() const { return data_; }
  std::size_t size() const { return bytes_; }
  bool is_view() const { return owner_ != nullptr; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  std::shared_ptr<const void> owner_;  // set for a view
};
}  // namespace detail

class HeadStack {
 public:
  enum class Init { Zero, Uninitialised };
  HeadStack() = default;
  // Zeroed by default; a producer that writes every element (a model run) asks for Uninitialised.
  HeadStack(int heads, Index rows, Index cols, Precision precision = Precision::F32, Init init = Init::Zero);
  // A stack over heads x rows x cols little-endian elements at `data` (float, or IEEE half for F16), kept
  // alive by `owner`, not copied; `data` must be aligned for its element type.
  static HeadStack view(int heads, Index rows, Index cols, Precision precision, std::shared_ptr<const void> owner,
                        const void* data);

  int heads() const { return heads_; }
  Index rows() const { return rows_; }
  Index cols() const { return cols_; }
  Precision precision() const { return precision_; }
  bool empty() const { return heads_ == 0; }
  std::size_t bytes() const;
  // Whether the maps are a view of someone else's bytes (a mapped dump) rather than storage of their own.
  bool is_view() const { return storage_.is_view(); }

  // Row-major [rows, cols] storage of one head. f32() only when precision() == F32, f16() only for F16.
  float* f32(int head);
  const float* f32(int head) const;
  Eigen::half* f16(int head);
  const Eigen::half* f16(int head) const;

  float at(int head, Index row, Index col) const;
  // One row of one head as float32 into out[0, cols): how long maps are read without a whole copy.
  void read_row(int head, Index row, float* out) const;
  // One head as a float32 matrix (a copy).
  Matrix head(int head) const;
  // The mean over heads.
  Matrix mean() const;
  // One head (head = -1: the mean over heads) reduced to at most max_rows x max_cols bins (pool_bin_start),
  // each the maximum or the mean of its cells, read row by row: a map of 16,384 x 16,384 never exists as a
  // whole copy. A bin holding a NaN is NaN. Maps that fit are returned whole.
  Matrix pooled(int head, Index max_rows, Index max_cols, Pool pool) const;
  // The first `rows` x `cols` of every head (at most the stack's), in its precision: a copy.
  HeadStack top_left(Index rows, Index cols) const;
  // Stores m (rows x cols) as head `head`, converting to the stack's precision.
  void set_head(int head, const MatrixCRef& m);
  // How many weights of every head are NaN or infinite (from non-finite model weights, or a dump that holds
  // them): the views say so rather than draw such a map as if it were fine.
  std::int64_t nonfinite() const;

 private:
  int heads_ = 0;
  Index rows_ = 0, cols_ = 0;
  Precision precision_ = Precision::F32;
  detail::MapBuffer storage_;
};

struct LayerAttention {
  Stage stage = Stage::Encoder;
  int layer = 0;  // 0-based
  HeadStack maps;
};

// Everything a view of a layered model needs. Encoder/decoder self-attention have rows = cols = tokens;
// cross attention has rows = row_tokens (target) and cols = col_tokens (source).
struct LayeredTrace {
  Labels tokens;            // the input tokens (rows and columns of self-attention)
  std::vector<Span> spans;  // byte span of each token in the input text; {0,0} for special tokens
  Labels cross_rows;        // only for cross attention; empty otherwise
  std::vector<LayerAttention> layers;

  int layer_count(Stage stage = Stage::Encoder) const;
  const LayerAttention* find(Stage stage, int layer) const;
  // One head (head >= 0) or the head average (head = -1) as an AttentionMap for the generic views.
  // max_side > 0 bounds what is drawn: a bigger map comes max-pooled to at most max_side x max_side bins,
  // with AttentionMap::pooled saying so (its source shape and tokens).
  std::shared_ptr<const AttentionMap> map(Stage stage, int layer, int head, Index max_side = 0) const;
  // The first `tokens` tokens and every map's top-left tokens x tokens (self-attention; cross attention keeps its
  // target rows): a causal model's attention as it was when token tokens - 1 was read, e.g. a generation step.
  LayeredTrace prefix(Index tokens) const;
};

}  // namespace attn
