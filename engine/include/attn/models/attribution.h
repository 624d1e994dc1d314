// Attribution: which input tokens a prediction depends on, from a backward pass through the model.
//
// backward() is the gradient of one scalar F of a run (a token's logit or log-probability at a position, a logit
// difference, a ViT class logit) with respect to the embedding layer's output, every layer's residual stream, every
// head's output and every attention weight, for every family the engine runs (BERT, DistilBERT, GPT-2, ViT, every
// decoder type; 16-bit weights included), in float32. It is written by hand (Debian has no C++ autograd library): a
// differentiable forward over the run's tokens that keeps what the backward needs per layer (never an attention
// map: the weights are recomputed a block of query rows at a time, forward and backward, as FlashAttention does),
// then the layers' backward from the last to the first. No weight gradient is formed: a linear map's backward is
// one product, the forward's cost.
//
// The same pass with Rule::AttnLrp is AttnLRP (Achtibat et al., ICML 2024) in its gradient x input form (the
// authors' LXT "efficient" rules): the normalisations' variance is held constant (identity rule on LayerNorm and
// RMSNorm, q/k norms included), element-wise nonlinearities (GELU, SiLU, the tanh soft-caps) pass relevance through
// (their local gradient replaced by f(x) / x), the gated MLP's product and attention's P V split relevance evenly
// between their two factors (the uniform rule: gradient / 2), and q and k get a quarter (the uniform rule on q k^T
// after the half P received). Relevance at any activation is then the activation times this modified gradient.
#pragma once

#include "attn/error.h"
#include "attn/models/transformer.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace attn::models {

// The scalar a backward pass starts from.
struct AttributionTarget {
  enum class Kind {
    Logit,      // the logit of `token` at `position` (ViT: class `token`'s logit)
    LogProb,    // log softmax of the logits at `position`, entry `token`
    LogitDiff,  // logit of `token` minus logit of `other`
  };
  Kind kind = Kind::Logit;
  // The position whose prediction is explained; -1: the family's own (the last token of a causal model, the first
  // [MASK] of BERT/DistilBERT, ViT's class token).
  int position = -1;
  // The token (vocabulary id; ViT: class id); -1: the model's most likely one at `position`.
  int token = -1;
  int other = -1;  // LogitDiff only
};

enum class BackwardRule { Gradient, AttnLrp };

struct BackwardOptions {
  BackwardRule rule = BackwardRule::Gradient;
  // Called during the backward for every block of query rows of every head of every layer (from any of the pass's
  // threads, never two at once for one (layer, head)): P the attention weights [rows, keys], dP the gradient of F
  // (or, for AttnLRP, the modified gradient) with respect to them, both with row stride `ld`, rows r0 .. r0 + rows - 1,
  // keys 0 .. keys - 1 (a causal block's later keys are not given: their weights and gradients are 0).
  using AttentionBlock = std::function<void(int layer, int head, Index r0, Index rows, Index keys, const float* P,
                                            const float* dP, Index ld)>;
  AttentionBlock on_attention;
  // Keep every head's gradient with respect to its attention weights in Gradients::attention (layers x heads x
  // tokens^2 floats; refused past kMaxKeptAttentionBytes).
  bool keep_attention = false;
  const std::atomic<bool>* cancel = nullptr;
  // Bytes of per-layer caches a pass may keep (0: kPassBudget); past it each layer's input alone is kept and the
  // layer run again before its backward.
  std::size_t budget = 0;
};
inline constexpr std::size_t kPassBudget = std::size_t{2} << 30;
inline constexpr std::size_t kMaxKeptAttentionBytes = std::size_t{1} << 30;

// What one backward pass gives. Rows are token positions of the run; for post-LN families (BERT, DistilBERT) the
// residual stream entering a layer is the previous layer's normalised output (Site::ResidPre's convention).
struct Gradients {
  int position = 0;  // the explained position
  int token = 0;     // the explained token (class)
  float value = 0;   // F at the run's input
  // [layers + 1]: the residual stream entering each layer (values and gradients), the last entry the stream after
  // the last layer (before the final norm). Entry 0 is the embedding layer's output (x0).
  std::vector<Matrix> resid, resid_grad;
  std::vector<Matrix> z_grad;  // [layers]: each head's output before the output projection, [tokens, heads x dim]
  // keep_attention: [layer][head] the gradient with respect to the attention weights [tokens, tokens].
  std::vector<std::vector<Matrix>> attention;
};

// The gradient of `target` for the input of `run` (its ids and type ids; ViT: the run must have been made with
// RunOptions::capture, whose embeddings it starts from). Errors: a position out of range or without a prediction
// (BERT without [MASK] and no position given), a token out of the vocabulary, a model without its prediction head,
// a BERT run with padding.
Result<Gradients> backward(const TransformerModel& model, const TransformerRun& run, const AttributionTarget& target,
                           const BackwardOptions& options = {});

// ---- Attribution methods: a score per input token for one target ----

enum class AttributionMethod {
  GradXInput,           // s_i = sum_d x0_id dF/dx0_id
  IntegratedGradients,  // Sundararajan et al. 2017: right Riemann sum over `steps` points from the baseline
  AttnGrad,             // Chefer et al. 2021 (generic rule): R += mean_h (dF/dA ⊙ A)^+ R, layer by layer; row t of R
  AttnLrp,              // Achtibat et al. 2024: relevance at x0 (see above), summed over d
  Rollout,              // Abnar and Zuidema 2020: row t of the attention rollout (heads' mean, residual 0.5)
  Flow,                 // Abnar and Zuidema 2020: max-flow from each input token to the target row
  Attention,            // raw attention: the last layer's row t, mean over heads (a floor for faithfulness)
  Random,               // uniform random scores (seeded): the floor
};
// "grad-x-input", "integrated-gradients", "attn-grad", "attnlrp", "rollout", "flow", "attention", "random".
std::string_view method_name(AttributionMethod method);
Result<AttributionMethod> parse_method(std::string_view name);
// Every method, in the order above.
const std::vector<AttributionMethod>& all_methods();

struct AttributeOptions {
  AttributionMethod method = AttributionMethod::GradXInput;
  int steps = 32;  // integrated gradients: 1 .. kMaxSteps
  enum class Baseline { Zero, Pad } baseline = Baseline::Zero;
  std::uint64_t seed = 0;  // Random
  std::size_t budget = 0;  // BackwardOptions::budget; integrated gradients stacks as many steps as fit in it
  const std::atomic<bool>* cancel = nullptr;
  std::function<void(int done, int of)> progress;
};
inline constexpr int kMaxSteps = 1024;

struct Attribution {
  AttributionMethod method = AttributionMethod::GradXInput;
  std::vector<float> scores;  // one per token of the run
  int position = 0, token = 0;
  // F at the input; the attention-only methods (rollout, flow, attention, random) read it from the run's logits at
  // the position (NaN when the run kept none there), and take the token from them when it was not given.
  float value = 0;
  // Integrated gradients: |sum s - (F(x0) - F(baseline))|; AttnLRP: |sum s - F(x0)| (the conservation gap). NaN for
  // the methods without one.
  double gap = 0;
  float baseline_value = 0;  // integrated gradients: F at the baseline
  // Gradient x input and AttnLRP: [layers + 1, tokens], row l the relevance (activation x (modified) gradient summed
  // over d) at the residual stream entering layer l (the last row: after the last layer). Attention x gradient:
  // [layers + 1, tokens], row l the target's row of (I + Ā_{L-1}) ... (I + Ā_l) (row L: the target alone; row 0: the
  // scores). Empty for the others.
  Matrix per_layer;
  // Attention x gradient: [layers x heads, tokens], row l * heads + h the target row of (dF/dA ⊙ A)^+ of that head.
  Matrix per_head;
  double seconds = 0;
  std::string note;  // e.g. what the baseline was
};

// One method for `target` on the input of `run` (text: its ids; ViT: a run made with capture). The attention-only
// methods (rollout, flow, attention) read the run's maps (made with Keep::Maps); flow is refused past
// analysis::kFlowMaxTokens with the bound and an estimate.
Result<Attribution> attribute(const TransformerModel& model, const TransformerRun& run, const AttributionTarget& target,
                              const AttributeOptions& options);

}  // namespace attn::models
