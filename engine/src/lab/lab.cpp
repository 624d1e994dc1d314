#include "attn/lab/lab.h"
#include "lab_budget.h"

#include "attn/mechanisms/aspect.h"
#include "attn/mechanisms/blocks.h"
#include "attn/mechanisms/composite.h"
#include "attn/mechanisms/convs2s.h"
#include "attn/mechanisms/efficient.h"
#include "attn/mechanisms/multi_head.h"
#include "attn/mechanisms/transformer_xl.h"
#include "attn/random.h"
#include "attn/text/ngram_embedding.h"
#include "attn/text/words.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <optional>
#include <random>
#include <string>

namespace attn::lab {

namespace {

// Designated initializers: a row names the flags it sets, the others are false.
constexpr std::array kCatalogue = {
    MechanismInfo{.id = Mechanism::Global,
                  .key = "global",
                  .name = "Global (soft)",
                  .formula = "a = softmax(score(q_t, k_s) / T),  c_t = sum_s a_ts v_s",
                  .paper = "Luong et al. 2015; Bahdanau et al. 2015",
                  .uses_query = true,
                  .uses_score = true,
                  .uses_normaliser = true},
    MechanismInfo{.id = Mechanism::LocalMonotonic,
                  .key = "local-m",
                  .name = "Local-m (monotonic)",
                  .formula = "p_t = t;  a = softmax over s in [p_t - D, p_t + D]",
                  .paper = "Luong et al. 2015, sec. 3.2",
                  .uses_query = true,
                  .uses_score = true,
                  .uses_window = true,
                  .uses_normaliser = true},
    MechanismInfo{
        .id = Mechanism::LocalPredictive,
        .key = "local-p",
        .name = "Local-p (predictive)",
        .formula = "p_t = S sigmoid(v_p^T tanh(W_p h_t));  a = softmax(window) * exp(-(s - p_t)^2 / 2 sigma^2)",
        .paper = "Luong et al. 2015, eq. 9-10",
        .uses_query = true,
        .uses_score = true,
        .uses_window = true,
        .uses_normaliser = true},
    MechanismInfo{.id = Mechanism::Location,
                  .key = "location",
                  .name = "Location-based",
                  .formula = "a_t = softmax(W_a h_t)",
                  .paper = "Luong et al. 2015, eq. 8",
                  .uses_query = true,
                  .uses_normaliser = true},
    MechanismInfo{.id = Mechanism::HardArgmax,
                  .key = "hard-argmax",
                  .name = "Hard (argmax)",
                  .formula = "s_t = argmax_s a_ts;  c_t = v_{s_t}",
                  .paper = "Xu et al. 2015, sec. 4.1",
                  .uses_query = true,
                  .uses_score = true,
                  .uses_normaliser = true},
    MechanismInfo{.id = Mechanism::HardSample,
                  .key = "hard-sample",
                  .name = "Hard (sampled)",
                  .formula = "s_t ~ Multinoulli(a_t), seeded;  c_t = v_{s_t}",
                  .paper = "Xu et al. 2015, sec. 4.1",
                  .uses_query = true,
                  .uses_score = true,
                  .uses_normaliser = true},
    MechanismInfo{.id = Mechanism::GatedSoft,
                  .key = "gated",
                  .name = "Soft with gate beta",
                  .formula = "beta_t = sigmoid(f_beta(h_t));  c_t = beta_t sum_s a_ts v_s",
                  .paper = "Xu et al. 2015, sec. 4.2.1",
                  .uses_query = true,
                  .uses_score = true,
                  .uses_normaliser = true},
    MechanismInfo{.id = Mechanism::SelfAttention,
                  .key = "self",
                  .name = "Self-attention",
                  .formula = "softmax(X W_q (X W_k)^T / sqrt(d)) X W_v",
                  .paper = "Vaswani et al. 2017",
                  .uses_causal = true,
                  .uses_normaliser = true},
    MechanismInfo{.id = Mechanism::MultiHead,
                  .key = "multi-head",
                  .name = "Multi-head self-attention",
                  .formula = "concat_h softmax(Q_h K_h^T / sqrt(d_h)) V_h  W_O",
                  .paper = "Vaswani et al. 2017, sec. 3.2.2",
                  .uses_heads = true,
                  .uses_causal = true,
                  .uses_normaliser = true},
    MechanismInfo{.id = Mechanism::Pooling,
                  .key = "pooling",
                  .name = "Attention pooling (no query)",
                  .formula = "s_i = w^T tanh(W x_i + b);  a = softmax(s);  c = sum_i a_i x_i",
                  .paper = "Yang et al. 2016",
                  .uses_positions = true,
                  .uses_normaliser = true},
    MechanismInfo{.id = Mechanism::MultiHeadPooling,
                  .key = "multi-head-pooling",
                  .name = "Multi-head pooling",
                  .formula = "A = softmax(W_2 tanh(W_1 X^T));  c = concat rows of A X",
                  .paper = "Lin et al. 2017",
                  .uses_heads = true,
                  .uses_positions = true,
                  .uses_normaliser = true},
    MechanismInfo{.id = Mechanism::MultiHop,
                  .key = "multi-hop",
                  .name = "Multi-hop",
                  .formula = "q(s+1) = q(s) + c(s),  s = 0..S-1",
                  .paper = "Sukhbaatar et al. 2015",
                  .uses_query = true,
                  .uses_score = true,
                  .uses_hops = true,
                  .uses_normaliser = true},
    MechanismInfo{.id = Mechanism::Hierarchical,
                  .key = "hierarchical",
                  .name = "Hierarchical (word -> sentence)",
                  .formula = "words: a_it = softmax(u_w^T tanh(W_w h_it + b_w));  sentences: the same over s_i",
                  .paper = "Yang et al. 2016",
                  .uses_normaliser = true},
    MechanismInfo{.id = Mechanism::AttentionOverAttention,
                  .key = "aoa",
                  .name = "Attention-over-attention",
                  .formula = "M = D Q^T;  alpha = col-softmax(M);  beta = row-softmax(M);  s = alpha mean_t(beta)",
                  .paper = "Cui et al. 2017",
                  .uses_query = true},
    MechanismInfo{.id = Mechanism::Capsule,
                  .key = "capsule",
                  .name = "Capsule attention",
                  .formula = "c_c = sum_i softmax(q_c . x_i) x_i;  p_c = sigmoid(w_c . c_c + b_c);  r_c = p_c c_c",
                  .paper = "one query per class",
                  .uses_classes = true,
                  .uses_normaliser = true},
    MechanismInfo{
        .id = Mechanism::MultiHeadCapsule,
        .key = "capsule-multi-head",
        .name = "Capsule attention, multi-head",
        .formula = "c_c^h = sum_i softmax(q_c^h . x_i^h) x_i^h;  r_c = concat_h c_c^h;  p_c = sigmoid(w_c . r_c + b_c)",
        .paper = "one query per class and head",
        .uses_heads = true,
        .uses_classes = true,
        .uses_normaliser = true},
    MechanismInfo{
        .id = Mechanism::Interactive,
        .key = "ian",
        .name = "Interactive co-attention (target)",
        .formula = "a = softmax(tanh(c_i W_a t_avg + b_a));  b = softmax(tanh(t_j W_b c_avg + b_b));  [c_r; t_r]",
        .paper = "Ma et al. 2017 (IAN)",
        .uses_target = true},
    MechanismInfo{.id = Mechanism::Rotatory,
                  .key = "rot-hop",
                  .name = "Rotatory attention (target)",
                  .formula = "f = tanh(h^T W q + b):  contexts with q = target;  target with q = r^l, r^r;  S hops",
                  .paper = "Wallaart & Frasincar 2019 (LCR-Rot-hop)",
                  .uses_hops = true,
                  .uses_target = true},
    MechanismInfo{
        .id = Mechanism::CapsuleRouting,
        .key = "capsule-routing",
        .name = "Capsule dynamic routing",
        .formula = "u^_j|i = W_ij u_i;  c_i = softmax_j(b_i);  v_j = squash(sum_i c_ij u^_j|i);  b_ij += u^_j|i . v_j",
        .paper = "Sabour et al. 2017",
        .uses_classes = true,
        .uses_iterations = true},
    MechanismInfo{.id = Mechanism::Linformer,
                  .key = "linformer",
                  .name = "Linformer (keys projected to k)",
                  .formula = "P = softmax(Q (E K)^T / sqrt(d)), n x k;  out = P (F V);  n x n map implied: P E",
                  .paper = "Wang et al. 2020",
                  .uses_rank = true},
    MechanismInfo{.id = Mechanism::Reformer,
                  .key = "reformer",
                  .name = "Reformer (LSH attention)",
                  .formula = "k_j = q_j / |q_j|;  h(x) = argmax([x R; -x R]);  sort by (h, i);  chunks of m see "
                             "themselves and the one before;  rounds combined by log-sum-exp",
                  .paper = "Kitaev et al. 2020",
                  .uses_lsh = true},
    MechanismInfo{.id = Mechanism::TransformerXL,
                  .key = "transformer-xl",
                  .name = "Transformer-XL (segments with memory)",
                  .formula = "A_ij = q_i.k_j + q_i.W_R R_(i-j) + u.k_j + v.W_R R_(i-j)  over [memory; segment], causal",
                  .paper = "Dai et al. 2019",
                  .uses_segments = true,
                  .uses_layers = true},
    MechanismInfo{
        .id = Mechanism::ConvS2S,
        .key = "convs2s",
        .name = "Multi-step attention (ConvS2S)",
        .formula = "o^l = GLU(conv(h^(l-1)));  a^l = softmax((o^l W_d + g) . z);  c^l = sum_j a^l_ij (z_j + e_j)",
        .paper = "Gehring et al. 2017, sec. 3.3",
        .uses_query = true,
        .uses_layers = true},
    MechanismInfo{.id = Mechanism::SynthesizerDense,
                  .key = "synth-dense",
                  .name = "Synthesizer: dense",
                  .formula = "B_i = W2 relu(W1 x_i + b1) + b2;  A = softmax(B);  out = A X W_v",
                  .paper = "Tay et al. 2021"},
    MechanismInfo{.id = Mechanism::SynthesizerRandom,
                  .key = "synth-random",
                  .name = "Synthesizer: random",
                  .formula = "A = softmax(R), R a fixed (seeded) n x n matrix;  out = A X W_v",
                  .paper = "Tay et al. 2021"},
    MechanismInfo{.id = Mechanism::SynthesizerFactorizedDense,
                  .key = "synth-dense-factorized",
                  .name = "Synthesizer: factorised dense",
                  .formula = "C_i[p] = (x_i W_a)[p mod a] (x_i W_b)[p div a],  a b >= n;  A = softmax(C)",
                  .paper = "Tay et al. 2021"},
    MechanismInfo{.id = Mechanism::SynthesizerFactorizedRandom,
                  .key = "synth-random-factorized",
                  .name = "Synthesizer: factorised random",
                  .formula = "A = softmax(R1 R2^T),  R1, R2 of n x k",
                  .paper = "Tay et al. 2021",
                  .uses_rank = true},
    MechanismInfo{.id = Mechanism::SynthesizerMixture,
                  .key = "synth-mixture",
                  .name = "Synthesizer: mixture with dot product",
                  .formula = "A = softmax((dense + random + Q K^T / sqrt(d)) / 3)",
                  .paper = "Tay et al. 2021"},
};

constexpr std::array kCountParams = {
    CountParam{"hops", "", "Ho&ps:", "hops", "Attention hops over the memory; each hop gets its own map",
               &LabParams::hops, 1, 32, &MechanismInfo::uses_hops},
    CountParam{"iterations", "", "Iterations:", "routing iterations r",
               "Routing iterations r; each iteration's coupling coefficients get their own map", &LabParams::iterations,
               1, 20, &MechanismInfo::uses_iterations},
    CountParam{"rank", "k", "&k:", "k",
               "k: the length Linformer projects the keys and values to, the rank of a factorised random Synthesizer",
               &LabParams::rank, 1, kMaxTokens, &MechanismInfo::uses_rank},
    CountParam{"buckets", "", "&Buckets:", "LSH buckets",
               "LSH buckets (even): h(x) = argmax([x R; -x R]), R of d x buckets/2", &LabParams::buckets, 2, 1024,
               &MechanismInfo::uses_lsh},
    CountParam{"chunk", "", "Chunk &width m:", "the LSH chunk width m",
               "The sorted order is cut into chunks of m; each chunk attends to itself and the chunk before",
               &LabParams::chunk, 1, kMaxEfficientTokens, &MechanismInfo::uses_lsh},
    CountParam{"hashes", "", "Ro&unds:", "LSH rounds",
               "Hash rounds, each with its own random rotation; combined by log-sum-exp", &LabParams::hashes, 1, 16,
               &MechanismInfo::uses_lsh},
    CountParam{"segment", "", "Segment length L:", "the segment length L",
               "Transformer-XL reads the source L tokens at a time; each segment attends over the previous one's "
               "states (the memory) and its own",
               &LabParams::segment, 1, kMaxTokens, &MechanismInfo::uses_segments},
    CountParam{"layers", "", "Layers:", "layers",
               "Layers: Transformer-XL's, each with its own memory; ConvS2S's decoder, each with its own attention",
               &LabParams::layers, 1, 6, &MechanismInfo::uses_layers},
    CountParam{"classes", "", "Classes:", "classes", "Capsules: one query (or one output capsule) per class",
               &LabParams::classes, 1, 64, &MechanismInfo::uses_classes},
};

constexpr std::array kNormalisers = {Normaliser::Softmax, Normaliser::Sparsemax};
constexpr std::array kPositions = {PositionKind::None, PositionKind::Sinusoidal, PositionKind::Learned};

constexpr std::array kScores = {ScoreKind::Dot,    ScoreKind::ScaledDot, ScoreKind::General,
                                ScoreKind::Concat, ScoreKind::Additive,  ScoreKind::Cosine};

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

Labels texts(const std::vector<WordToken>& words) {
  Labels out;
  out.reserve(words.size());
  for (const auto& w : words) out.push_back(w.text);
  return out;
}

std::vector<std::string_view> views(const std::vector<WordToken>& words) {
  std::vector<std::string_view> out;
  out.reserve(words.size());
  for (const auto& w : words) out.emplace_back(w.text);
  return out;
}

std::vector<Span> spans(const std::vector<WordToken>& words) {
  std::vector<Span> out;
  for (const auto& w : words) out.push_back(w.span);
  return out;
}

// Near-identity projections plus seeded noise: heads see different coordinates of the embedding, so the
// lab's model-free self-attention still links similar words while every head looks different.
MultiHeadWeights lab_projections(Index d, int heads, std::uint64_t seed) {
  MultiHeadWeights w = random_multi_head_weights(d, heads, seed);
  const Matrix eye = Matrix::Identity(d, d);
  w.Wq = eye + 0.5f * w.Wq;
  w.Wk = eye + 0.5f * w.Wk;
  w.Wv = eye + 0.5f * w.Wv;
  w.Wo = eye + 0.5f * w.Wo;
  return w;
}

// The sentence's tokens; past kMaxTokens they are cut off, with a warning worded as the other tabs word it.
Result<std::vector<WordToken>> tokens_of(const std::string& text, std::string_view what, int limit,
                                         std::vector<std::string>& warnings) {
  auto words = split_words(text, what);
  if (!words) return std::unexpected(words.error());
  if (words->empty()) return fail(ErrorKind::OutOfRange, "is empty: type a sentence", std::string(what));
  if (words->size() > static_cast<std::size_t>(limit)) {
    warnings.push_back(std::string(what) + " truncated to " + std::to_string(limit) + " tokens (of " +
                       std::to_string(words->size()) + ")");
    words->resize(static_cast<std::size_t>(limit));
  }
  return words;
}

Result<void> check(const LabParams& p) {
  if (!(p.temperature > 0.0f) || !std::isfinite(p.temperature)) {
    return fail(ErrorKind::OutOfRange, "temperature must be a positive number");
  }
  if (p.window < 0 || p.window > 4096) return fail(ErrorKind::OutOfRange, "window D must be between 0 and 4096");
  if (!std::isfinite(p.sigma)) return fail(ErrorKind::OutOfRange, "sigma must be a number");
  if (p.dim < 2 || p.dim > 1024) return fail(ErrorKind::OutOfRange, "dimension must be between 2 and 1024");
  if (p.heads < 1 || p.heads > 64) return fail(ErrorKind::OutOfRange, "heads must be between 1 and 64");
  for (const CountParam& c : kCountParams) {
    const int v = p.*c.field;
    if (v < c.min || v > c.max) {
      return fail(ErrorKind::OutOfRange, std::string(c.what) + " must be between " + with_commas(c.min) + " and " +
                                             with_commas(c.max) + " (got " + std::to_string(v) + ")");
    }
  }
  if (p.buckets % 2 != 0) {
    return fail(ErrorKind::OutOfRange,
                "LSH buckets must be even: h(x) = argmax([x R; -x R]) has two buckets per "
                "column of R (buckets = " +
                    std::to_string(p.buckets) + ")");
  }
  if (p.dim % p.heads != 0 && (p.mechanism == Mechanism::MultiHead || p.mechanism == Mechanism::MultiHeadCapsule)) {
    return fail(ErrorKind::Mismatch,
                "dimension " + std::to_string(p.dim) + " is not divisible by " + std::to_string(p.heads) + " heads");
  }
  return {};
}

// The words of a marked sentence in three parts, by their byte spans: before the target, in it, after it.
struct TargetParts {
  std::vector<Index> left, target, right;
};
Result<TargetParts> target_parts(const std::vector<WordToken>& words, const TargetMarkup& markup) {
  TargetParts out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    const Span& span = words[i].span;
    auto& part = span.end <= markup.begin ? out.left : span.begin >= markup.end ? out.right : out.target;
    part.push_back(static_cast<Index>(i));
  }
  if (out.target.empty()) {
    return fail(ErrorKind::OutOfRange,
                "the target at byte " + std::to_string(markup.begin - 1) + " has no words (or lies past the " +
                    std::to_string(kMaxTokens) + " words the lab reads)",
                "source", markup.begin - 1);
  }
  return out;
}

Matrix rows_of(const Matrix& x, const std::vector<Index>& rows) {
  Matrix out(static_cast<Index>(rows.size()), x.cols());
  for (std::size_t i = 0; i < rows.size(); ++i) out.row(static_cast<Index>(i)) = x.row(rows[i]);
  return out;
}

std::string join(const Labels& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

std::string short_sentence(const std::vector<WordToken>& words, std::size_t index) {
  std::string s(1, 'S');  // built by appending: GCC 12 reports a false -Wrestrict for "S" + std::string
  s.append(std::to_string(index)).append(1, ':');
  for (std::size_t i = 0; i < words.size() && i < 3; ++i) s += " " + words[i].text;
  if (words.size() > 3) s += " …";
  return s;
}

// The shuffle demonstration: pooling on the words in a seeded random order, with the positions asked for
// (sinusoidal when none) and without any. Without positions the pooled vector is the same (a weighted sum
// over a set); with them it is not. Shuffled maps are put back in the sentence's order to compare cell by cell.
void compare_shuffled(const Matrix& xs, const PoolingWeights& w, const PoolingParams& pp, const PoolingResult& asked,
                      std::uint64_t seed, const TraceTag& tag, LabResult& r) {
  const Index n = xs.rows();
  std::vector<Index> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), Index{0});
  std::mt19937_64 rng(seed);
  std::shuffle(order.begin(), order.end(), rng);
  Matrix shuffled(n, xs.cols());
  for (Index i = 0; i < n; ++i) shuffled.row(i) = xs.row(order[static_cast<std::size_t>(i)]);
  const auto back = [&](const Matrix& weights) {  // column i of a shuffled run is word order[i]
    Matrix out(weights.rows(), n);
    for (Index i = 0; i < n; ++i) out.col(order[static_cast<std::size_t>(i)]) = weights.col(i);
    return out;
  };
  const PositionKind with = pp.positions == PositionKind::None ? PositionKind::Sinusoidal : pp.positions;
  std::string line = "shuffled words, |c' - c| / |c|:";
  for (const PositionKind kind : {PositionKind::None, with}) {
    PoolingParams q = pp;
    q.positions = kind;
    const PoolingResult original = kind == pp.positions ? asked : attention_pooling(xs, w, q);
    const PoolingResult mixed = attention_pooling(shuffled, w, q);
    const std::string name =
        kind == PositionKind::None ? "no positions" : std::string(positions_key(kind)) + " positions";
    const TraceTag t = tag.with_axes("heads", "tokens");
    t.named(name + " \u00b7 sentence order").record(original.weights);
    t.named(name + " \u00b7 shuffled, shown in sentence order").record(back(mixed.weights));
    const float change = (mixed.pooled - original.pooled).norm() / std::max(original.pooled.norm(), 1e-30f);
    line += " " + name + " " + fmt("%.2g", change) + (kind == PositionKind::None ? "," : "");
  }
  r.notes.push_back(line + " (order:");
  for (const Index i : order) r.notes.back() += " " + r.source_tokens[static_cast<std::size_t>(i)];
  r.notes.back() += ")";
}

// The maps that are not attention weights say what they hold (the colour bar's name; no fixed 0..1 range).
void name_quantities(Mechanism mechanism, AttentionTrace& trace) {
  for (AttentionMap& m : trace.maps()) {
    if (mechanism == Mechanism::TransformerXL && m.name.starts_with("(")) {
      m.quantity = "score";  // the four terms of A_ij, before the softmax
    } else if (mechanism == Mechanism::Linformer && m.name == "implied (P E)") {
      m.quantity = "implied weight";  // P E: E's entries are signed
    }
  }
}

}  // namespace

std::span<const MechanismInfo> mechanisms() { return kCatalogue; }
std::span<const CountParam> count_params() { return kCountParams; }

int max_tokens(Mechanism m) {
  return m == Mechanism::Linformer || m == Mechanism::Reformer ? kMaxEfficientTokens : kMaxTokens;
}

const MechanismInfo& info(Mechanism m) {
  for (const auto& mi : kCatalogue) {
    if (mi.id == m) return mi;
  }
  return kCatalogue.front();
}

const MechanismInfo* find_mechanism(std::string_view key) {
  if (key == "additive" || key == "concat" || key == "soft") return &kCatalogue.front();
  for (const auto& mi : kCatalogue) {
    if (mi.key == key) return &mi;
  }
  return nullptr;
}

std::span<const ScoreKind> score_kinds() { return kScores; }

std::string_view score_key(ScoreKind kind) {
  switch (kind) {
    case ScoreKind::Dot: return "dot";
    case ScoreKind::ScaledDot: return "scaled-dot";
    case ScoreKind::General: return "general";
    case ScoreKind::Concat: return "concat";
    case ScoreKind::Additive: return "additive";
    case ScoreKind::Cosine: return "cosine";
  }
  return "scaled-dot";
}

const ScoreKind* find_score(std::string_view key) {
  for (const auto& k : kScores) {
    if (score_key(k) == key) return &k;
  }
  return nullptr;
}

std::span<const Normaliser> normalisers() { return kNormalisers; }
std::span<const PositionKind> position_kinds() { return kPositions; }

bool select_mechanism(LabParams& params, std::string_view key) {
  const MechanismInfo* mechanism = find_mechanism(key);
  const ScoreKind* score = find_score(key);
  if (!mechanism && !score) return false;
  params.mechanism = mechanism ? mechanism->id : Mechanism::Global;
  if (score && params.mechanism == Mechanism::Global) params.score = *score;
  return true;
}

Result<TargetMarkup> parse_target_markup(std::string_view text, std::string_view what) {
  const std::string file(what);
  const auto at = [](std::size_t byte) { return "byte " + std::to_string(byte); };
  std::int64_t open = -1, close = -1;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '[') {
      if (open >= 0 && close < 0) {
        return fail(ErrorKind::Malformed,
                    "nested target: '[' inside the target opened at " + at(static_cast<std::size_t>(open)) +
                        "; mark one phrase",
                    file, static_cast<std::int64_t>(i));
      }
      if (close >= 0) {
        return fail(ErrorKind::Malformed,
                    "a second target; mark one phrase (the first is at " + at(static_cast<std::size_t>(open)) + ")",
                    file, static_cast<std::int64_t>(i));
      }
      open = static_cast<std::int64_t>(i);
    } else if (text[i] == ']') {
      if (open < 0 || close >= 0) {
        return fail(ErrorKind::Malformed, "']' closes no '['", file, static_cast<std::int64_t>(i));
      }
      close = static_cast<std::int64_t>(i);
    }
  }
  if (open < 0) {
    return fail(ErrorKind::Malformed,
                "no target marked: put the target phrase in brackets, e.g. \"" + std::string(kTargetExample) + "\"",
                file);
  }
  if (close < 0) {
    return fail(ErrorKind::Malformed, "'[' is never closed with ']'", file, open);
  }
  TargetMarkup out;
  out.text = std::string(text);
  out.text[static_cast<std::size_t>(open)] = ' ';
  out.text[static_cast<std::size_t>(close)] = ' ';
  out.begin = static_cast<std::int32_t>(open + 1);
  out.end = static_cast<std::int32_t>(close);
  if (out.text.find_first_not_of(" \t\r\n", static_cast<std::size_t>(out.begin)) >= static_cast<std::size_t>(close)) {
    return fail(ErrorKind::Malformed, "the target is empty", file, open);
  }
  return out;
}

std::string_view normaliser_key(Normaliser kind) { return to_string(kind); }

const Normaliser* find_normaliser(std::string_view key) {
  for (const auto& k : normalisers()) {
    if (normaliser_key(k) == key) return &k;
  }
  return nullptr;
}

std::string_view positions_key(PositionKind kind) {
  switch (kind) {
    case PositionKind::Sinusoidal: return "sinusoidal";
    case PositionKind::Learned: return "learned";
    case PositionKind::None: break;
  }
  return "none";
}

const PositionKind* find_positions(std::string_view key) {
  for (const auto& k : position_kinds()) {
    if (positions_key(k) == key) return &k;
  }
  return nullptr;
}

namespace {

// The two sentences a run reads, as words: the source (with its target markup removed, for the mechanisms
// that read a target) and the query (empty for the mechanisms that read none), with the truncation warnings.
struct LabSentences {
  std::optional<TargetMarkup> markup;
  std::vector<WordToken> source;
  std::vector<WordToken> query;
  std::vector<std::string> warnings;
};

Result<LabSentences> read_sentences(const LabRequest& request, const MechanismInfo& mi) {
  LabSentences out;
  if (mi.uses_target) {
    auto parsed = parse_target_markup(request.source, "source");
    if (!parsed) return std::unexpected(parsed.error());
    out.markup = std::move(*parsed);
  }
  auto source = tokens_of(out.markup ? out.markup->text : request.source, "source", max_tokens(mi.id), out.warnings);
  if (!source) return std::unexpected(source.error());
  out.source = std::move(*source);
  if (mi.uses_query) {
    auto q = tokens_of(request.query, "query", kMaxTokens, out.warnings);
    if (!q) return std::unexpected(q.error());
    out.query = std::move(*q);
  }
  return out;
}

// What every mechanism's runner reads: the request, the sentences embedded, the seed of its random
// weights and the tags that label its maps (their labels point into the LabResult being filled).
struct LabInputs {
  const LabRequest& request;
  const LabParams& p;
  const LabSentences& sentences;
  const NgramEmbedding& embedding;
  const Matrix& xs;  // the source, one row per word
  const Matrix& xq;  // the query, one row per word (empty when the mechanism reads none)
  std::uint64_t seed;
  GlobalParams gp;
  TraceTag tag;       // query rows over source columns
  TraceTag self_tag;  // source over source, named "tokens"
  const LabControl& control;
  Index d() const { return p.dim; }
  ScoreWeights score_weights() const { return random_score_weights(p.score, d(), d(), d(), seed); }
};

// Runs one mechanism (or a family of them) on the inputs, recording its maps and notes into the result.
using MechanismRunner = Result<void> (*)(const LabInputs&, LabResult&);

Result<void> run_global(const LabInputs& in, LabResult&) {
  global_attention(in.xq, in.xs, in.xs, in.score_weights(), in.gp, {}, in.tag);
  return {};
}

Result<void> run_local(const LabInputs& in, LabResult& r) {
  const LabParams& p = in.p;
  const LocalKind kind = p.mechanism == Mechanism::LocalMonotonic ? LocalKind::Monotonic : LocalKind::Predictive;
  LocalParams lp = local_defaults(kind);
  lp.score = p.score;
  lp.temperature = p.temperature;
  lp.window = p.window;
  lp.sigma = p.sigma;
  const LocalResult lr = local_attention(in.xq, in.xs, in.xs, in.score_weights(),
                                         random_local_weights(in.d(), in.d(), in.seed), lp, in.tag);
  std::string pos = "p_t:";
  for (Index t = 0; t < lr.positions.size(); ++t) pos += " " + fmt("%.2f", lr.positions(t));
  r.notes.push_back(pos);
  r.notes.push_back("sigma = " + fmt("%.3g", lp.sigma > 0 ? lp.sigma : p.window / 2.0) +
                    (lp.gaussian ? " (Gaussian applied)" : " (window only, as in the paper)"));
  return {};
}

Result<void> run_location(const LabInputs& in, LabResult& r) {
  // W_a has one row per source position: this mechanism cannot look at the source's content.
  const Matrix Wa = random_normal(in.xs.rows(), in.d(), in.seed, 1.0f / std::sqrt(static_cast<float>(in.d())));
  location_attention(in.xq, in.xs, Wa, in.gp, in.tag);
  r.notes.emplace_back("location scores ignore the source words: only their positions matter");
  return {};
}

Result<void> run_hard(const LabInputs& in, LabResult&) {
  const HardMode mode = in.p.mechanism == Mechanism::HardArgmax ? HardMode::Argmax : HardMode::Sample;
  hard_attention(in.xq, in.xs, in.xs, in.score_weights(), in.gp, mode, mix_seed(in.p.seed, 3), in.tag);
  return {};
}

Result<void> run_gated(const LabInputs& in, LabResult& r) {
  const GateWeights gate{
      random_normal(in.d(), 1, mix_seed(in.seed, 4), 1.0f / std::sqrt(static_cast<float>(in.d()))).col(0), 0.0f};
  const GatedResult g = gated_attention(in.xq, in.xs, in.xs, in.score_weights(), in.gp, gate, in.tag);
  std::string betas = "beta:";
  for (Index t = 0; t < g.beta.size(); ++t)
    betas += " " + r.query_tokens[static_cast<std::size_t>(t)] + "=" + fmt("%.2f", g.beta(t));
  r.notes.push_back(betas);
  return {};
}

// Self-attention is multi-head attention with one head (its map then names no head).
Result<void> run_self_attention(const LabInputs& in, LabResult& r) {
  const LabParams& p = in.p;
  const int heads = p.mechanism == Mechanism::SelfAttention ? 1 : p.heads;
  const MultiHeadWeights w = lab_projections(in.d(), heads, in.seed);
  MultiHeadParams mp;
  mp.causal = p.causal;
  mp.temperature = p.temperature;
  mp.normaliser = p.normaliser;
  const TraceTag t = in.self_tag.named("self-attention");
  multi_head_attention(in.xs, in.xs, w, mp, {}, t);
  if (heads == 1) r.trace.maps().back().head = -1;
  return {};
}

Result<void> run_pooling(const LabInputs& in, LabResult& r) {
  const LabParams& p = in.p;
  const int heads = p.mechanism == Mechanism::Pooling ? 1 : p.heads;
  const PoolingWeights w = random_pooling_weights(in.d(), in.d(), heads, in.xs.rows(), in.seed);
  const PoolingParams pp{p.positions, p.temperature, p.normaliser};
  Labels rows;
  for (int h = 0; h < heads; ++h) rows.push_back(heads == 1 ? "pool" : "head " + std::to_string(h));
  r.query_tokens = rows;
  const PoolingResult res =
      attention_pooling(in.xs, w, pp, in.tag.named("pooling weights").with_axes("heads", "tokens"));
  if (p.shuffle) compare_shuffled(in.xs, w, pp, res, mix_seed(p.seed, 5), in.tag, r);
  return {};
}

Result<void> run_multi_hop(const LabInputs& in, LabResult&) {
  MultiHopParams mp;
  mp.hops = in.p.hops;
  mp.attention = in.gp;
  multi_hop_attention(in.xq, in.xs, in.score_weights(), {}, mp, in.tag);
  return {};
}

Result<void> run_hierarchical(const LabInputs& in, LabResult& r) {
  const auto sentences = split_sentences(in.sentences.source, in.request.source);
  std::vector<Matrix> xsent;
  for (const auto& s : sentences) xsent.push_back(in.embedding.embed(views(s)));
  const PoolingParams pp{PositionKind::None, in.p.temperature, in.p.normaliser};
  const auto res = hierarchical_attention(xsent, random_hierarchical_weights(in.d(), in.d(), in.seed), pp, in.tag);
  // The engine recorded one map per sentence, then the sentence map: give them their axes.
  auto& maps = r.trace.maps();
  Labels sentence_labels;
  std::size_t m = 0;
  for (std::size_t i = 0; i < sentences.size(); ++i) {
    sentence_labels.push_back(short_sentence(sentences[i], i));
    maps[m].row_labels = {"sentence " + std::to_string(i)};
    maps[m].col_labels = texts(sentences[i]);
    maps[m].row_axis = "";
    maps[m].col_axis = "words";
    maps[m].col_spans = spans(sentences[i]);
    ++m;
  }
  maps[m].row_labels = {"document"};
  maps[m].col_labels = sentence_labels;
  maps[m].row_axis = "";
  maps[m].col_axis = "sentences";
  std::string sw = "sentence weights:";
  for (Index i = 0; i < res.sentence_weights.size(); ++i) sw += " " + fmt("%.3f", res.sentence_weights(i));
  r.notes.push_back(sw);
  return {};
}

Result<void> run_attention_over_attention(const LabInputs& in, LabResult& r) {
  const TraceTag t = in.tag.with_labels(&r.source_tokens, &r.query_tokens).with_axes("document", "query");
  const AoAResult res = attention_over_attention(in.xs, in.xq, t);
  r.trace.maps().back().row_labels = {"s"};
  r.trace.maps().back().col_labels = r.source_tokens;
  r.trace.maps().back().row_axis = "";
  r.trace.maps().back().col_axis = "document";
  Index best = 0;
  res.s.maxCoeff(&best);
  r.notes.push_back("highest s: \"" + r.source_tokens[static_cast<std::size_t>(best)] + "\" (" +
                    fmt("%.3f", res.s(best)) + ")");
  return {};
}

// One row label per class, "<word> 0" to "<word> n-1".
Labels class_rows(int classes, const std::string& word) {
  Labels rows;
  for (int c = 0; c < classes; ++c) rows.push_back(word + " " + std::to_string(c));
  return rows;
}

std::string class_probabilities(const Vector& probabilities) {
  std::string probs = "p_c:";
  for (Index c = 0; c < probabilities.size(); ++c) probs += " " + fmt("%.3f", probabilities(c));
  return probs;
}

Result<void> run_capsule(const LabInputs& in, LabResult& r) {
  const LabParams& p = in.p;
  r.query_tokens = class_rows(p.classes, "class");
  const GlobalParams cp{ScoreKind::ScaledDot, p.normaliser, p.temperature};
  const CapsuleResult res = capsule_attention(in.xs, random_capsule_weights(p.classes, in.d(), in.seed), cp,
                                              in.tag.named("class attention").with_axes("classes", "tokens"));
  r.notes.push_back(class_probabilities(res.probabilities));
  return {};
}

Result<void> run_multi_head_capsule(const LabInputs& in, LabResult& r) {
  const LabParams& p = in.p;
  r.query_tokens = class_rows(p.classes, "class");
  const GlobalParams cp{ScoreKind::ScaledDot, p.normaliser, p.temperature};
  const auto res = multi_head_capsule_attention(in.xs, random_capsule_weights(p.classes, in.d(), in.seed), p.heads, cp,
                                                in.tag.named("class attention").with_axes("classes", "tokens"));
  r.notes.push_back(class_probabilities(res.probabilities) + " \u00b7 r_c: " + std::to_string(p.heads) + " heads of " +
                    std::to_string(in.d() / p.heads) + " dimensions, concatenated");
  return {};
}

// The relative error of the implied n x n map as k varies: powers of two up to 64 (each costs an n x n
// product of n x k by k x n) and the k asked for.
std::string linformer_error_curve_note(const Matrix& xs, int rank, std::uint64_t seed) {
  std::vector<Index> ks;
  for (Index k = 1; k <= std::min<Index>(xs.rows(), 64); k *= 2) ks.push_back(k);
  if (std::find(ks.begin(), ks.end(), Index{rank}) == ks.end()) ks.push_back(rank);
  std::sort(ks.begin(), ks.end());
  const auto curve = linformer_error_curve(xs, ks, seed);
  std::string out = " \u00b7 as k varies:";
  for (std::size_t i = 0; i < ks.size(); ++i) {
    out += (i ? ", " : " ") + std::to_string(ks[i]) + " \u2192 " + fmt("%.3f", curve[i]);
  }
  return out;
}

Result<void> run_linformer(const LabInputs& in, LabResult& r) {
  const LabParams& p = in.p;
  const Index n = in.xs.rows();
  if (p.rank > n) {
    return fail(ErrorKind::OutOfRange,
                "k = " + std::to_string(p.rank) + " is more than the source's " + std::to_string(n) +
                    " tokens: Linformer projects the n keys to k <= n",
                "source");
  }
  Labels projected;
  for (int j = 0; j < p.rank; ++j) projected.push_back("k" + std::to_string(j));
  const LinformerResult res =
      linformer_attention(in.xs, random_linformer_weights(in.d(), n, p.rank, in.seed), in.self_tag);
  auto& maps = r.trace.maps();
  maps[0].col_labels = projected;
  maps[0].col_axis = "projected keys";
  std::string errors = "|P E - A| / |A| at k = " + std::to_string(p.rank) + ": " + fmt("%.3f", res.error);
  // Past kMaxTokens, seven more n x n products would take seconds.
  if (n <= kMaxTokens) errors += linformer_error_curve_note(in.xs, p.rank, in.seed);
  r.notes.push_back(errors);
  return {};
}

Result<void> run_reformer(const LabInputs& in, LabResult& r) {
  const LabParams& p = in.p;
  const Matrix& xs = in.xs;
  const ReformerParams rp{.buckets = p.buckets, .chunk = p.chunk, .hashes = p.hashes, .full = true};
  const ReformerResult res =
      reformer_attention(xs, random_reformer_weights(xs.cols(), p.buckets, p.hashes, in.seed), rp, in.self_tag);
  const Index n = xs.rows();
  // What each query sees: at most 2m keys per round, against n for full attention.
  const double seen = static_cast<double>((res.weights.array() > 0.0f).count()) / static_cast<double>(n * n);
  Index worst = 0;
  res.missed.maxCoeff(&worst);
  r.notes.push_back("attention mass LSH misses (full attention's mass on keys no round showed the query): mean " +
                    fmt("%.3f", res.missed.mean()) + ", most \"" + r.source_tokens[static_cast<std::size_t>(worst)] +
                    "\" " + fmt("%.3f", res.missed(worst)) +
                    " \u00b7 cells with weight: " + fmt("%.1f%%", 100.0 * seen));
  for (std::size_t k = 0; k < res.rounds.size() && n <= 64; ++k) {
    std::string line = "round " + std::to_string(k) + " buckets:";
    for (const Index i : res.rounds[k].order) {
      line += " " + r.source_tokens[static_cast<std::size_t>(i)] + "=" +
              std::to_string(res.rounds[k].buckets[static_cast<std::size_t>(i)]);
    }
    r.notes.push_back(line);
  }
  return {};
}

Result<void> run_convs2s(const LabInputs& in, LabResult& r) {
  const int layers = in.p.layers;
  // The query is the decoder's target sentence, the source the encoder's; kernel width 3.
  convs2s_attention(in.xq, in.xs, random_convs2s_weights(in.d(), layers, 3, in.seed), in.tag);
  r.notes.push_back(std::to_string(layers) + (layers == 1 ? " decoder layer" : " decoder layers") +
                    " of kernel 3: the top layer's convolutions reach the last " + std::to_string(2 * layers + 1) +
                    " targets, and each layer attends to the source again");
  return {};
}

Result<void> run_transformer_xl(const LabInputs& in, LabResult& r) {
  const LabParams& p = in.p;
  const auto res = transformer_xl(in.xs, random_transformer_xl_weights(in.d(), p.layers, in.seed), p.segment,
                                  in.self_tag, in.control.cancel, in.control.on_progress);
  if (in.control.cancelled()) return fail(ErrorKind::Cancelled, "cancelled");
  const std::size_t segments = res.segments.size();
  // Segment 1's layer 0: the first map with memory columns (segment 0 has none).
  const auto& maps = r.trace.maps();
  const auto second = std::find_if(maps.begin(), maps.end(), [](const AttentionMap& m) {
    return m.name == "attention \u00b7 layer 0 \u00b7 segment 1";
  });
  if (segments > 1 && second != maps.end()) r.opening_map = std::size_t(second - maps.begin());
  r.notes.push_back(std::to_string(segments) + (segments == 1 ? " segment" : " segments") + " of " +
                    std::to_string(p.segment) +
                    " tokens \u00b7 each layer's memory: the previous segment's "
                    "input to it \u00b7 reach after " +
                    std::to_string(p.layers) + " layers: " + std::to_string(p.layers * p.segment) + " tokens back");
  return {};
}

Result<void> run_synthesizer(const LabInputs& in, LabResult& r) {
  const Mechanism m = in.p.mechanism;
  const SynthesizerKind kind = m == Mechanism::SynthesizerDense              ? SynthesizerKind::Dense
                               : m == Mechanism::SynthesizerRandom           ? SynthesizerKind::Random
                               : m == Mechanism::SynthesizerFactorizedDense  ? SynthesizerKind::FactorizedDense
                               : m == Mechanism::SynthesizerFactorizedRandom ? SynthesizerKind::FactorizedRandom
                                                                             : SynthesizerKind::Mixture;
  synthesizer_attention(in.xs, random_synthesizer_weights(in.d(), in.xs.rows(), in.p.rank, in.seed, kind), kind,
                        in.self_tag);
  if (kind == SynthesizerKind::Random || kind == SynthesizerKind::FactorizedRandom) {
    r.notes.emplace_back("random weights ignore the words: only their positions matter");
  }
  return {};
}

Result<void> run_capsule_routing(const LabInputs& in, LabResult& r) {
  const LabParams& p = in.p;
  // Output capsules of 16 dimensions, as the paper's DigitCaps; one per class.
  constexpr Index kCapsuleDim = 16;
  // A W_ij for every word and capsule: their count was checked against the Lab's budget (lab_budget.h).
  const Matrix predictions = capsule_predictions(in.xs, p.classes, kCapsuleDim, in.seed);
  const RoutingResult res =
      dynamic_routing(predictions, p.classes, p.iterations, in.tag.named("coupling").with_axes("capsules", "tokens"));
  const Labels rows = class_rows(p.classes, "capsule");
  r.query_tokens = rows;
  for (auto& m : r.trace.maps()) m.row_labels = rows;
  if (!r.trace.maps().empty()) r.opening_map = r.trace.size() - 1;  // the routed couplings, not the uniform start
  std::string lengths = "|v_j| after " + std::to_string(p.iterations) + " iterations:";
  for (Index j = 0; j < res.lengths.size(); ++j) lengths += " " + fmt("%.3f", res.lengths(j));
  r.notes.push_back(lengths);
  return {};
}

// Labels a recorded map of the aspect mechanisms: one query (its rows) over one part of the sentence (its columns).
void label_part(AttentionMap& m, Labels queries, const std::vector<WordToken>& source, const std::vector<Index>& part,
                std::string axis) {
  m.row_labels = std::move(queries);
  m.row_axis = "query";
  m.col_labels.clear();
  m.col_spans.clear();
  for (const Index i : part) {
    m.col_labels.push_back(source[static_cast<std::size_t>(i)].text);
    m.col_spans.push_back(source[static_cast<std::size_t>(i)].span);
  }
  m.col_axis = std::move(axis);
}

// The marked sentence's parts, with a note naming the target and counting its context.
Result<TargetParts> read_target(const LabInputs& in, LabResult& r) {
  auto parts = target_parts(in.sentences.source, *in.sentences.markup);
  if (!parts) return std::unexpected(parts.error());
  Labels target;
  for (const Index i : parts->target) target.push_back(r.source_tokens[static_cast<std::size_t>(i)]);
  const auto count = [](std::size_t n) { return std::to_string(n) + (n == 1 ? " word" : " words"); };
  r.notes.push_back("target: \"" + join(target) + "\" \u00b7 left context: " + count(parts->left.size()) +
                    " \u00b7 right context: " + count(parts->right.size()));
  return parts;
}

Result<void> run_interactive(const LabInputs& in, LabResult& r) {
  auto parts = read_target(in, r);
  if (!parts) return std::unexpected(parts.error());
  std::vector<Index> context = parts->left;
  context.insert(context.end(), parts->right.begin(), parts->right.end());
  if (context.empty()) {
    return fail(ErrorKind::OutOfRange, "the target is the whole sentence: IAN needs context words around it", "source");
  }
  interactive_attention(rows_of(in.xs, context), rows_of(in.xs, parts->target), random_ian_weights(in.d(), in.seed),
                        in.tag);
  auto& maps = r.trace.maps();
  label_part(maps[0], {"target average"}, in.sentences.source, context, "context");
  label_part(maps[1], {"context average"}, in.sentences.source, parts->target, "target");
  return {};
}

Result<void> run_rotatory(const LabInputs& in, LabResult& r) {
  auto parts = read_target(in, r);
  if (!parts) return std::unexpected(parts.error());
  const int hops = in.p.hops;
  rotatory_attention(rows_of(in.xs, parts->left), rows_of(in.xs, parts->target), rows_of(in.xs, parts->right),
                     random_rotatory_weights(in.d(), hops, in.seed), in.tag);
  // Row s of each map is hop s, labelled by the query it used (hop 0: the target's mean r_t; later hops: the
  // target representations of the hop before; the target's own maps: this hop's r^l or r^r).
  const auto queries = [&](const std::string& first, const std::string& later) {
    Labels out;
    for (int s = 0; s < hops; ++s) out.push_back("hop " + std::to_string(s) + " \u00b7 " + (s ? later : first));
    return out;
  };
  const auto& source = in.sentences.source;
  for (auto& m : r.trace.maps()) {
    if (m.name == "left context") {
      label_part(m, queries("r_t", "r_t^l"), source, parts->left, "left context");
    } else if (m.name == "right context") {
      label_part(m, queries("r_t", "r_t^r"), source, parts->right, "right context");
    } else if (m.name == "target (left query)") {
      label_part(m, queries("r^l", "r^l"), source, parts->target, "target");
    } else {
      label_part(m, queries("r^r", "r^r"), source, parts->target, "target");
    }
  }
  return {};
}

struct RunnerRow {
  Mechanism mechanism;
  MechanismRunner run;
};

constexpr std::array kRunners = {
    RunnerRow{Mechanism::Global, run_global},
    RunnerRow{Mechanism::LocalMonotonic, run_local},
    RunnerRow{Mechanism::LocalPredictive, run_local},
    RunnerRow{Mechanism::Location, run_location},
    RunnerRow{Mechanism::HardArgmax, run_hard},
    RunnerRow{Mechanism::HardSample, run_hard},
    RunnerRow{Mechanism::GatedSoft, run_gated},
    RunnerRow{Mechanism::SelfAttention, run_self_attention},
    RunnerRow{Mechanism::MultiHead, run_self_attention},
    RunnerRow{Mechanism::Pooling, run_pooling},
    RunnerRow{Mechanism::MultiHeadPooling, run_pooling},
    RunnerRow{Mechanism::MultiHop, run_multi_hop},
    RunnerRow{Mechanism::Hierarchical, run_hierarchical},
    RunnerRow{Mechanism::AttentionOverAttention, run_attention_over_attention},
    RunnerRow{Mechanism::Capsule, run_capsule},
    RunnerRow{Mechanism::MultiHeadCapsule, run_multi_head_capsule},
    RunnerRow{Mechanism::Interactive, run_interactive},
    RunnerRow{Mechanism::Rotatory, run_rotatory},
    RunnerRow{Mechanism::CapsuleRouting, run_capsule_routing},
    RunnerRow{Mechanism::Linformer, run_linformer},
    RunnerRow{Mechanism::Reformer, run_reformer},
    RunnerRow{Mechanism::TransformerXL, run_transformer_xl},
    RunnerRow{Mechanism::ConvS2S, run_convs2s},
    RunnerRow{Mechanism::SynthesizerDense, run_synthesizer},
    RunnerRow{Mechanism::SynthesizerRandom, run_synthesizer},
    RunnerRow{Mechanism::SynthesizerFactorizedDense, run_synthesizer},
    RunnerRow{Mechanism::SynthesizerFactorizedRandom, run_synthesizer},
    RunnerRow{Mechanism::SynthesizerMixture, run_synthesizer},
};

// Every mechanism of the catalogue has exactly one runner.
constexpr bool runners_cover_catalogue() {
  if (kRunners.size() != kCatalogue.size()) return false;
  for (const auto& mi : kCatalogue) {
    int found = 0;
    for (const auto& row : kRunners) found += row.mechanism == mi.id ? 1 : 0;
    if (found != 1) return false;
  }
  return true;
}
static_assert(runners_cover_catalogue(), "a mechanism of kCatalogue has no runner in kRunners, or two");

MechanismRunner runner_of(Mechanism m) {
  for (const auto& row : kRunners) {
    if (row.mechanism == m) return row.run;
  }
  return run_global;  // unreachable: the static_assert above
}

// Spans for every map whose axes are the sentences' tokens.
void add_token_spans(const LabSentences& sentences, LabResult& r) {
  const auto source_spans = spans(sentences.source);
  const auto query_spans = spans(sentences.query);
  for (auto& m : r.trace.maps()) {
    if (m.col_spans.empty() && m.col_labels == r.source_tokens) m.col_spans = source_spans;
    if (m.row_spans.empty() && !sentences.query.empty() && m.row_labels == r.query_tokens) m.row_spans = query_spans;
    if (m.row_spans.empty() && m.row_labels == r.source_tokens) m.row_spans = source_spans;
  }
}

}  // namespace

Result<LabResult> run_lab(const LabRequest& request, const LabControl& control, std::string_view what) {
  const auto t0 = std::chrono::steady_clock::now();
  const LabParams& p = request.params;
  if (auto ok = check(p); !ok) return std::unexpected(ok.error());
  auto sentences = read_sentences(request, info(p.mechanism));
  if (!sentences) return std::unexpected(sentences.error());
  // What the mechanism will draw and hold, from the word counts, before anything is embedded or built.
  if (auto fits =
          budget::check_budget(p, std::int64_t(sentences->query.size()), std::int64_t(sentences->source.size()), what);
      !fits)
    return std::unexpected(fits.error());

  LabResult r;
  r.warnings = std::move(sentences->warnings);
  r.source_tokens = texts(sentences->source);
  r.query_tokens = texts(sentences->query);
  const NgramEmbedding embedding({.dim = p.dim, .seed = mix_seed(p.seed, 1)});
  const Matrix xs = embedding.embed(views(sentences->source));
  const Matrix xq = sentences->query.empty() ? Matrix() : embedding.embed(views(sentences->query));
  const TraceTag tag{.trace = &r.trace, .rows = &r.query_tokens, .cols = &r.source_tokens};
  const LabInputs in{.request = request,
                     .p = p,
                     .sentences = *sentences,
                     .embedding = embedding,
                     .xs = xs,
                     .xq = xq,
                     .seed = mix_seed(p.seed, 2),
                     .gp = GlobalParams{p.score, p.normaliser, p.temperature},
                     .tag = tag,
                     .self_tag = tag.with_labels(&r.source_tokens, &r.source_tokens).with_axes("tokens", "tokens"),
                     .control = control};
  if (control.cancelled()) return fail(ErrorKind::Cancelled, "cancelled");
  if (auto ran = runner_of(p.mechanism)(in, r); !ran) return std::unexpected(ran.error());

  name_quantities(p.mechanism, r.trace);
  add_token_spans(*sentences, r);
  r.elapsed_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace attn::lab
