// Multi-step attention of the convolutional sequence-to-sequence model (Gehring et al. 2017, "Convolutional
// Sequence to Sequence Learning", sec. 3.3): every decoder layer attends on its own.
//   encoder:  z = e + GLU(conv_k(e)), centred (one gated convolutional layer over the source embeddings e);
//   decoder layer l over h^{l-1} (h^0 = g, the target embeddings), causal:
//     o^l = GLU(conv_k(h^{l-1}))            (kernel k, the last k - 1 targets and this one)
//     d_i^l = o_i^l W_d^l + b_d^l + g_i      a_ij^l = softmax_j(d_i^l . z_j)
//     c_i^l = sum_j a_ij^l (z_j + e_j)       h_i^l = h_i^{l-1} + o_i^l + c_i^l
// GLU([A B]) = A * sigmoid(B). The paper's sqrt(0.5) scalings of the residual sums are left out (they change
// no weight's meaning), and c goes into the layer's output unprojected (every size here is d).
#pragma once

#include "attn/core.h"
#include "attn/trace.h"

#include <cstdint>
#include <vector>

namespace attn {

struct GatedConv {
  std::vector<Matrix> W;  // k taps of d x 2d (tap t reads position i - t causal, i + t - k/2 centred)
  RowVector b;            // 2d
};
struct ConvS2SWeights {
  GatedConv encoder;
  struct Layer {
    GatedConv conv;
    Matrix Wd;     // d x d
    RowVector bd;  // d
  };
  std::vector<Layer> layers;
};
ConvS2SWeights random_convs2s_weights(Index d, int layers, int kernel, std::uint64_t seed);

// GLU(conv(x)) with zero padding: causal reads positions i - k + 1 .. i, centred i - k/2 .. i + k/2.
Matrix gated_convolution(const MatrixCRef& x, const GatedConv& conv, bool causal);

struct ConvS2SResult {
  Matrix z;                     // n x d: the encoder's output
  std::vector<Matrix> weights;  // per decoder layer: m x n
  Matrix output;                // m x d: the last decoder layer's h
};
// g: the m target embeddings, e: the n source embeddings. Records "attention · decoder layer l" (l from 0).
ConvS2SResult convs2s_attention(const MatrixCRef& g, const MatrixCRef& e, const ConvS2SWeights& w,
                                const TraceTag& tag = {});

}  // namespace attn
