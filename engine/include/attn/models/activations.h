// Interventions inside a transformer's forward pass: the activations a run can keep, and the edits a run can make
// to them as it passes (TransformerLens's hook points, by the same names).
//
// Sites of layer l, every family (BERT, DistilBERT, GPT-2, ViT, every decoder type):
//   ResidPre  the residual stream entering layer l, [tokens, d]: layer 0 receives the embeddings as the first layer
//             reads them (BERT/DistilBERT after the embedding LayerNorm, Gemma after the sqrt(d) scale, ViT the patch,
//             class and position embeddings); for post-LN families this is the previous layer's normalised output.
//   Z         each head's output before the output projection, z_h = softmax(scores_h) V_h, [tokens, heads x
//             head_dim], head h in columns [h head_dim, (h + 1) head_dim) (grouped-query decoders: per query head).
//   AttnOut   what the attention block adds to the residual stream: the output projection of z plus its bias
//             (Gemma: after its post-attention norm; BERT/DistilBERT: before the add-and-LayerNorm).
//   MlpOut    what the MLP adds to the residual stream (Gemma: after its post-FFN norm; BERT/DistilBERT: before the
//             add-and-LayerNorm).
// Positions and layers count from 0.
#pragma once

#include "attn/core.h"

#include <vector>

namespace attn::models {

enum class Site { ResidPre, Z, AttnOut, MlpOut };

// "resid_pre", "z", "attn_out", "mlp_out" (TransformerLens's hook names).
const char* site_name(Site site);

// One edit of an activation, applied where the run passes it.
struct Edit {
  enum class Kind {
    Zero,     // the values set to 0
    Mean,     // Site::Z only: the head's z replaced by its mean over the run's positions (every position computed)
    Replace,  // the values taken from `source`, at the same positions
  };
  Site site = Site::Z;
  int layer = 0;
  int head = -1;      // Site::Z: the head (0 .. heads - 1); the other sites take the whole row (-1)
  int position = -1;  // one position, or -1: every position
  Kind kind = Kind::Zero;
  // Kind::Replace: the same site of another run of the same token count, laid out as Activations holds it
  // ([tokens, width], width = heads x head_dim for Z, d otherwise); its rows at the edited positions (and, for Z,
  // the head's columns) are taken. Must outlive the run.
  const Matrix* source = nullptr;
};

// The activations of a run made with RunOptions::capture, one matrix per layer at each site (layout as above).
struct Activations {
  std::vector<Matrix> resid_pre, z, attn_out, mlp_out;
  // Decoders: each layer's keys and values as the cache holds them (after q/k norms and RoPE), [tokens, kv_heads x
  // head_dim]: a re-run from this run (TransformerRunner::rerun) starts its cache from them.
  std::vector<Matrix> keys, values;

  const std::vector<Matrix>& at(Site site) const;
  std::vector<Matrix>& at(Site site);
};

}  // namespace attn::models
