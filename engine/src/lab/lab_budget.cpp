// The Lab's budgets checked before a mechanism is built (lab_budget.h). Each row counts what the mechanism's code
// allocates at its largest: its random weights, and the maps it keeps plus the copies the trace records and the
// intermediates of the same order (an n x n score matrix, an n x d projection). Small vectors are left out.
#include "lab_budget.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace attn::lab::budget {

namespace {

// The score function's weights (scores.cpp: General d x d, Concat d x 2d + d, Additive 2 d x d + d).
double score_weight_count(ScoreKind kind, double d) {
  switch (kind) {
    case ScoreKind::General: return d * d;
    case ScoreKind::Concat: return 2 * d * d + d;
    case ScoreKind::Additive: return 2 * d * d + d;
    case ScoreKind::Dot:
    case ScoreKind::ScaledDot:
    case ScoreKind::Cosine: break;
  }
  return 0;
}

// "2.1 GB"
std::string gigabytes_text(double floats) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GB", floats * 4 / 1e9);
  return text;
}

std::string count_text(double n) { return with_commas(static_cast<long long>(std::llround(n))); }

// What to lower, for the message: the request's own knobs that grow the cost.
std::string what_to_lower(const MechanismInfo& mi) {
  std::string out;
  const auto add = [&](bool used, const char* what) {
    if (used) out += std::string(out.empty() ? "" : ", ") + what;
  };
  add(mi.uses_heads, "fewer heads");
  add(mi.uses_hops, "fewer hops");
  add(mi.uses_classes, "fewer classes");
  add(mi.uses_iterations, "fewer iterations");
  add(mi.uses_lsh, "fewer hash rounds or a narrower chunk");
  add(mi.uses_rank, "a smaller k");
  add(mi.uses_layers, "fewer layers");
  add(mi.uses_segments, "a shorter segment");
  add(true, "a smaller dimension");
  return out + " or a shorter " + (mi.uses_query ? "query or source" : "source");
}

// The sizes every row reads: the query's and the source's words, the dimension, the heads; a query x source map with
// its recorded copy and the scores it came from; the embedded sentences and their projections.
struct Sizes {
  double Q, S, d, H, maps, rows;
};

// The attention of the first papers (Luong, Bahdanau, Xu), self-attention, pooling and the hops.
LabCost sequence_cost(const LabParams& p, const Sizes& z) {
  const double S = z.S, d = z.d;
  LabCost c;
  switch (p.mechanism) {
    case Mechanism::LocalMonotonic:
    case Mechanism::LocalPredictive:
      c.weights = score_weight_count(p.score, d) + d * d + d;
      c.working = z.maps + z.rows + S * d;
      break;
    case Mechanism::Location:
      c.weights = S * d;  // W_a: a row per source position
      c.working = z.maps + z.rows;
      break;
    case Mechanism::SelfAttention:
    case Mechanism::MultiHead: {
      const double heads = p.mechanism == Mechanism::SelfAttention ? 1 : z.H;
      c.weights = 4 * d * d;
      // Each head's weights kept, recorded, and a block of scores per thread.
      c.working = (2 * heads + 1) * S * S + 6 * S * d;
      break;
    }
    case Mechanism::Pooling:
    case Mechanism::MultiHeadPooling: {
      const double heads = p.mechanism == Mechanism::Pooling ? 1 : z.H;
      c.weights = d * d + heads * d + S * d;  // W, w per head, learned positions
      c.working = (p.shuffle ? 6 : 2) * heads * S + (p.shuffle ? 3 : 1) * 3 * S * d;
      break;
    }
    case Mechanism::MultiHop:
      c.weights = score_weight_count(p.score, d) + d;
      c.working = double(p.hops) * z.maps + z.rows + S * d;
      break;
    default:  // Global, HardArgmax, HardSample, GatedSoft (estimate_cost sends no other here)
      c.weights = score_weight_count(p.score, d) + d;
      c.working = z.maps + z.rows + S * d;  // additive and concat scores: one query's keys projected at a time
      break;
  }
  return c;
}

// The composites: hierarchical, attention-over-attention, capsules, the target's mechanisms, capsule routing.
LabCost composite_cost(const LabParams& p, const Sizes& z) {
  const double Q = z.Q, S = z.S, d = z.d, classes = double(p.classes);
  LabCost c;
  switch (p.mechanism) {
    case Mechanism::Hierarchical:
      c.weights = 2 * (d * d + d);
      c.working = 4 * S + z.rows;
      break;
    case Mechanism::AttentionOverAttention:
      c.working = 4 * Q * S + z.rows;  // M, its two softmaxes, the recorded map
      break;
    case Mechanism::Capsule:
    case Mechanism::MultiHeadCapsule:
      c.weights = 2 * classes * d + classes;
      c.working = 3 * (p.mechanism == Mechanism::Capsule ? 1 : z.H) * classes * S + z.rows;
      break;
    case Mechanism::Interactive:
      c.weights = 2 * (d * d + 1);
      c.working = 4 * S + z.rows;
      break;
    case Mechanism::Rotatory:
      c.weights = double(p.hops) * 4 * (d * d + 1);
      c.working = double(p.hops) * 8 * S + z.rows;
      break;
    default: {  // CapsuleRouting (estimate_cost sends no other here)
      constexpr double kCapsuleDim = 16;
      c.weights = classes * S * kCapsuleDim * d;  // a W_ij for every word and capsule
      c.working = classes * S * kCapsuleDim * 2 + double(p.iterations) * classes * S * 2 + z.rows;
      break;
    }
  }
  return c;
}

// The efficient transformers, Transformer-XL, ConvS2S and the Synthesizers: the n x n maps they keep.
LabCost efficient_cost(const LabParams& p, const Sizes& z) {
  const double S = z.S, d = z.d;
  LabCost c;
  switch (p.mechanism) {
    case Mechanism::Linformer: {
      const double k = std::min(double(p.rank), S);
      c.weights = 2 * k * S + 3 * d * d;  // E and F
      // P (n x k), the implied P E and the full map, each recorded; the error curve's products up to kMaxTokens.
      c.working = 2 * (S * k + 2 * S * S) + (S <= kMaxTokens ? 3 * S * S : 0) + z.rows;
      break;
    }
    case Mechanism::Reformer: {
      const double rounds = double(p.hashes), local = S * std::min(S, 2.0 * p.chunk);
      c.weights = 2 * d * d + rounds * d * std::max(1, p.buckets / 2);
      // Per round its chunked weights and its map sorted by bucket (recorded); the combined and the full map, each
      // recorded, and the sorted map being built.
      c.working = rounds * (local + S * S) + 5 * S * S + z.rows;
      break;
    }
    case Mechanism::TransformerXL: {
      const double L = std::min(double(p.segment), S), segments = std::ceil(S / std::max(1.0, L));
      c.weights = double(p.layers) * (5 * d * d + 2 * d);
      // Per segment and layer: the weights over [memory; segment] and the four terms of A_ij, each recorded.
      c.working = segments * double(p.layers) * 5 * 2 * L * (2 * L) + 2 * L * d + z.rows;
      break;
    }
    case Mechanism::ConvS2S:
      c.weights = (double(p.layers) + 1) * 3 * d * 2 * d + double(p.layers) * d * d;  // kernel 3, GLU's 2d
      c.working = double(p.layers) * z.maps + z.rows;
      break;
    case Mechanism::SynthesizerDense:
      c.weights = d * d + d * S;
      c.working = 3 * S * S + z.rows;
      break;
    case Mechanism::SynthesizerRandom:
      c.weights = S * S;
      c.working = 3 * S * S + z.rows;
      break;
    case Mechanism::SynthesizerFactorizedDense: {
      const double a = std::ceil(std::sqrt(S));
      c.weights = d * (a + std::ceil(S / a));
      c.working = 3 * S * S + z.rows;
      break;
    }
    case Mechanism::SynthesizerFactorizedRandom:
      c.weights = 2 * S * std::min(double(p.rank), S);
      c.working = 3 * S * S + z.rows;
      break;
    default:  // SynthesizerMixture (estimate_cost sends no other here)
      c.weights = d * d + d * S + S * S + 2 * d * d;
      c.working = 9 * S * S + z.rows;  // three parts, their sum, each recorded
      break;
  }
  return c;
}

}  // namespace

LabCost estimate_cost(const LabParams& p, std::int64_t query, std::int64_t source) {
  const double Q = double(query), S = double(source), d = double(p.dim);
  const Sizes z{Q, S, d, double(p.heads), 3 * Q * S, 4 * (Q + S) * d};
  // Every mechanism named, no default: a new one does not build until it has its row.
  switch (p.mechanism) {
    case Mechanism::Global:
    case Mechanism::LocalMonotonic:
    case Mechanism::LocalPredictive:
    case Mechanism::Location:
    case Mechanism::HardArgmax:
    case Mechanism::HardSample:
    case Mechanism::GatedSoft:
    case Mechanism::SelfAttention:
    case Mechanism::MultiHead:
    case Mechanism::Pooling:
    case Mechanism::MultiHeadPooling:
    case Mechanism::MultiHop: return sequence_cost(p, z);
    case Mechanism::Hierarchical:
    case Mechanism::AttentionOverAttention:
    case Mechanism::Capsule:
    case Mechanism::MultiHeadCapsule:
    case Mechanism::Interactive:
    case Mechanism::Rotatory:
    case Mechanism::CapsuleRouting: return composite_cost(p, z);
    case Mechanism::Linformer:
    case Mechanism::Reformer:
    case Mechanism::TransformerXL:
    case Mechanism::ConvS2S:
    case Mechanism::SynthesizerDense:
    case Mechanism::SynthesizerRandom:
    case Mechanism::SynthesizerFactorizedDense:
    case Mechanism::SynthesizerFactorizedRandom:
    case Mechanism::SynthesizerMixture: return efficient_cost(p, z);
  }
  return {};
}

Result<void> check_budget(const LabParams& p, std::int64_t query, std::int64_t source, std::string_view what) {
  const LabCost c = estimate_cost(p, query, source);
  const MechanismInfo& mi = info(p.mechanism);
  if (c.weights > kMaxLabWeights) {
    // Capsule routing's wording, as it has always said it.
    const std::string drawn = p.mechanism == Mechanism::CapsuleRouting
                                  ? "capsule routing draws a 16 x " + std::to_string(p.dim) + " W_ij for each of " +
                                        std::to_string(p.classes) + " capsules and " + std::to_string(source) + " words"
                                  : std::string(mi.name) + " over " + std::to_string(source) + " words at dimension " +
                                        std::to_string(p.dim) + " draws its random weights";
    return fail(ErrorKind::TooLarge,
                drawn + ": " + count_text(c.weights) + " weights, over the " + count_text(kMaxLabWeights) +
                    " the Lab draws; " +
                    (p.mechanism == Mechanism::CapsuleRouting
                         ? std::string("fewer classes, a smaller dimension or a shorter source")
                         : what_to_lower(mi)),
                std::string(what));
  }
  if (c.working > kMaxLabWorkingFloats) {
    return fail(ErrorKind::TooLarge,
                std::string(mi.name) + " over " + std::to_string(source) + " words" +
                    (mi.uses_query ? " and a query of " + std::to_string(query) : std::string()) +
                    ": its maps and working memory come to about " + count_text(c.working) + " floats (" +
                    gigabytes_text(c.working) + "), over the " + count_text(kMaxLabWorkingFloats) + " (" +
                    gigabytes_text(kMaxLabWorkingFloats) + ") a Lab run may hold; " + what_to_lower(mi),
                std::string(what));
  }
  return {};
}

}  // namespace attn::lab::budget
