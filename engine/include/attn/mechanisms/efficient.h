// Transformers that avoid (or replace) the n x n dot-product map:
//   - Linformer (Wang et al. 2020, "Linformer: Self-Attention with Linear Complexity"): keys and values
//     projected along the sequence, K' = E K and V' = F V with E, F of k x n (k << n), so the map is
//     P = softmax(Q K'^T / sqrt(d)), n x k; the n x n map it stands for is P E;
//   - Synthesizer (Tay et al. 2021, "Synthesizer: Rethinking Self-Attention for Transformer Models"): weights
//     synthesised without token-token dot products. Dense: B_i = W2 relu(W1 x_i + b1) + b2 (a row of n logits
//     per token); Random: a fixed n x n matrix R; their factorised forms (Dense: two narrower projections A_i
//     and B_i whose outer product is tiled; Random: R = R1 R2^T with R1, R2 of n x k); and the mixture
//     softmax(a_1 S_1 + ... ) with dot-product attention;
//   - Reformer (Kitaev et al. 2020, "Reformer: The Efficient Transformer"), LSH attention: shared QK (the keys
//     are the queries scaled to unit length), each round hashes them by a random rotation,
//     h(x) = argmax([x R; -x R]), sorts the tokens by (bucket, position) and cuts the order into chunks of m;
//     a query sees its own chunk and the one before (never itself, unless it sees nothing else); the rounds
//     are combined by their log-sum-exp (eq. 5 without the duplicate correction, as the reference code).
// Projections and synthesiser weights are seeded; the Lab draws them, the tests give them.
#pragma once

#include "attn/core.h"
#include "attn/trace.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace attn {

// ---- Linformer
struct LinformerWeights {
  Matrix Wq, Wk, Wv;  // d x d (x W: rows of x times W)
  Matrix E, F;        // k x n: the sequence projections of keys and values
};
LinformerWeights random_linformer_weights(Index d, Index n, Index k, std::uint64_t seed);
struct LinformerResult {
  Matrix P;         // n x k: softmax(Q (E K)^T / sqrt(d))
  Matrix implied;   // n x n: P E, what P stands for over the tokens (not a distribution: E has signed entries)
  Matrix full;      // n x n: softmax(Q K^T / sqrt(d)), the map Linformer approximates
  Matrix output;    // n x d: P (F V)
  float error = 0;  // |P E - full|_F / |full|_F
};
// Records "projected (n x k)", "implied (P E)" and "full attention". Requires 1 <= k.
LinformerResult linformer_attention(const MatrixCRef& x, const LinformerWeights& w, const TraceTag& tag = {});
// The relative error |P E - A|_F / |A|_F of Linformer with each k in `ks` (projections drawn from the seed for
// each k), for the error-against-k curve.
std::vector<float> linformer_error_curve(const MatrixCRef& x, const std::vector<Index>& ks, std::uint64_t seed);

// ---- Synthesizer
enum class SynthesizerKind { Dense, Random, FactorizedDense, FactorizedRandom, Mixture };
struct SynthesizerWeights {
  Matrix W1;          // d x d   (Dense: the hidden layer)
  RowVector b1;       // d
  Matrix W2;          // d x n   (Dense: one logit per position)
  RowVector b2;       // n
  Matrix R;           // n x n   (Random)
  Matrix R1, R2;      // n x k   (Factorized Random: R = R1 R2^T)
  Matrix Wa, Wb;      // d x a, d x b with a * b >= n (Factorized Dense)
  Matrix Wq, Wk, Wv;  // d x d: dot-product attention (Mixture) and the values G(X) = X Wv
};
// Every weight; or, given a kind, only those it reads (the others left empty): a 512 x 512 R is 262,144 draws.
// A weight drawn either way has the same values.
SynthesizerWeights random_synthesizer_weights(Index d, Index n, Index k, std::uint64_t seed,
                                              std::optional<SynthesizerKind> only = std::nullopt);
struct SynthesizerResult {
  Matrix logits;   // n x n before the softmax (for Mixture, the weighted sum)
  Matrix weights;  // n x n: softmax over each row
  Matrix output;   // n x d: weights (X Wv)
};
// Records "synthesised" (and, for Mixture, then its parts "dense", "random" and "dot product", each softmaxed).
// Mixture weighs dense, random and dot-product logits equally.
SynthesizerResult synthesizer_attention(const MatrixCRef& x, const SynthesizerWeights& w, SynthesizerKind kind,
                                        const TraceTag& tag = {});

// ---- Reformer
struct ReformerParams {
  int buckets = 4;   // even, >= 2: R has buckets / 2 columns
  int chunk = 4;     // m
  int hashes = 2;    // rounds
  bool full = true;  // also compute full attention over the same logits, and the mass LSH misses
};
struct ReformerWeights {
  Matrix Wqk, Wv;                 // d x d
  std::vector<Matrix> rotations;  // one d x buckets/2 per round
};
ReformerWeights random_reformer_weights(Index d, int buckets, int hashes, std::uint64_t seed);
// The self logit: large and negative, not -inf, so a query that sees only itself still attends somewhere.
inline constexpr float kReformerSelfLogit = -1e5f;
struct LshRound {
  std::vector<int> buckets;  // per token
  std::vector<Index> order;  // sorted position -> token: by bucket, then position
  // Row s: the query at sorted position s over the keys at sorted positions [key_begin(s), key_begin(s) +
  // cols), zero past the chunk's end. key_begin(s) = max(0, (s / m - 1) m).
  Matrix local;
  Vector lse;  // per token: log-sum-exp of its logits over what it saw this round
};
struct ReformerResult {
  std::vector<LshRound> rounds;
  Matrix weights;  // n x n, token order: sum over rounds of exp(lse_r - logsumexp_r lse_r) times the round's map
  Matrix full;     // n x n: softmax over every key of the same logits (params.full)
  Vector missed;   // per query: the full map's mass on keys no round showed it (params.full)
  Matrix output;   // n x d: weights (X W_v)
  Index key_begin(Index sorted_position, int chunk) const;
};
// Records "LSH attention" (token order), "full attention" (params.full), and per round "sorted by bucket ·
// round r" (rows and columns in that round's sorted order, the chunk bands on the diagonal).
// Requires an even params.buckets >= 2, params.chunk >= 1, one rotation per round.
ReformerResult reformer_attention(const MatrixCRef& x, const ReformerWeights& w, const ReformerParams& params,
                                  const TraceTag& tag = {});

}  // namespace attn
