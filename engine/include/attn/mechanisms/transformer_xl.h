// Transformer-XL (Dai et al. 2019, "Transformer-XL: Attentive Language Models Beyond a Fixed-Length Context"):
// the sequence is read in segments of L tokens; each layer attends over [memory; segment], the memory being
// the previous segment's input to that layer (kept, not recomputed), with relative positions (sec. 3.3):
//   A_ij = q_i . k_j  (a, content)  +  q_i . W_R R_{i-j}  (b, content-position)
//        + u . k_j  (c, global content bias)  +  v . W_R R_{i-j}  (d, global position bias),
// q_i = h_i W_q, k_j = [m; h]_j W_k, R the sinusoidal encoding of the distance (sin then cos, as the reference
// code), scaled by 1/sqrt(d), causal. A layer here is attention, W_o and a residual LayerNorm (no FFN: the Lab
// shows attention, and the memory already carries what the layer below computed).
#pragma once

#include "attn/core.h"
#include "attn/trace.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

namespace attn {

struct TransformerXLLayer {
  Matrix Wq, Wk, Wr, Wv, Wo;  // d x d (rows times W); Wr projects R_{i-j}
  RowVector u, v;             // the global content and position biases
};
std::vector<TransformerXLLayer> random_transformer_xl_weights(Index d, int layers, std::uint64_t seed);

// The distance encodings R_0 ... R_{count-1}: row k is [sin(k f); cos(k f)], f_i = 10000^(-2i/d).
Matrix relative_encodings(Index count, Index d);

inline constexpr const char* kXLTermNames[4] = {"(a) content", "(b) content-position", "(c) global content bias",
                                                "(d) global position bias"};
struct XLAttention {
  Index memory = 0;             // M: the memory's length (0 for the first segment)
  Matrix weights;               // L x (M + L): softmax of the four terms' sum, zero where causal masks
  std::array<Matrix, 4> terms;  // each L x (M + L), scaled by 1/sqrt(d); NaN where causal masks
};
struct TransformerXLResult {
  std::vector<std::vector<XLAttention>> segments;  // [segment][layer]
  Matrix output;                                   // n x d: the last layer's hidden states
};
// Records per segment s (from 1) and layer l (from 0, also the map's layer): "attention · layer l · segment s"
// and each term, "(a) content · layer l · segment s", ... Rows are the segment's tokens, columns [memory; segment]
// (labels from the tag's, the memory's marked "[m] word"). Requires segment_length >= 1 and at least one layer.
// `progress(done, segments)` is called after each segment; `cancel` is read between segments, and a cancelled run
// returns the segments read so far (the caller, seeing the flag, reports Cancelled).
TransformerXLResult transformer_xl(const MatrixCRef& x, const std::vector<TransformerXLLayer>& layers,
                                   Index segment_length, const TraceTag& tag = {},
                                   const std::atomic<bool>* cancel = nullptr,
                                   const std::function<void(int, int)>& progress = {});

}  // namespace attn
