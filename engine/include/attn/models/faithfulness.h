// Faithfulness of an attribution: does the model's prediction fall when the tokens it ranks highest are taken away,
// and come back when only they are given?
//
// Deletion curve (Samek et al., "Evaluating the visualization of what a deep neural network has learned", IEEE TNNLS
// 2017, the "most relevant first" perturbation; Petsiuk et al. 2018 name the pair deletion/insertion): rank the
// removable tokens by score, highest first (ties: the earlier position first), and for k = 0 .. K remove the top k;
// point k is p_k, the probability (softmax of the logits at the explained position) of the explained token.
// Insertion curve: the same ranking, every removable token removed except the top k.
//
// AOPC, the area over the perturbation curve (Samek et al. 2017, eq. 12, one input): (1 / (K + 1)) sum_{k=0..K}
// (p_0 - p_k) for deletion; a faithful ranking makes p fall fast, so higher is more faithful. For insertion the area
// under the curve, (1 / (K + 1)) sum_{k=0..K} p_k: higher is more faithful. With a step count the sums run over the
// curve's points (k evenly spaced from 0 to K) instead of every k.
//
// Removal either replaces the token (Replace: by the tokenizer's [MASK] for BERT and DistilBERT, else its pad token,
// else its unknown token, else the end-of-text token, the tokenizer's or config.json's, as transformers pads
// GPT-2; the curve says which) or deletes it
// (Delete: the sequence shortens and the explained position moves left by the tokens deleted before it). Never
// removed: the explained position itself (a causal model's prediction needs its query; BERT's is the [MASK] being
// filled), the special tokens the run marks ([CLS], [SEP], BOS) and, in a causal model, every token after the
// explained position (it cannot change the prediction). K is the number of the other tokens.
//
// Each point is one run_ids of the perturbed ids on the caller's runner (one runner reused: its buffers stay grown),
// keeping only the logits at the explained position. Text models only.
#pragma once

#include "attn/error.h"
#include "attn/models/transformer.h"

#include <atomic>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace attn::models {

struct FaithfulnessOptions {
  enum class Removal { Replace, Delete };
  Removal removal = Removal::Replace;
  int position = -1;  // the explained position; -1: the family's own (a causal model's last token, BERT's first [MASK])
  int token = -1;     // the explained token; -1: the model's most likely one at the position on the full input
  int steps = 0;      // 0: a point for every k = 0 .. K; else at most steps + 1 points, k evenly spaced over 0 .. K
  int replacement = -1;  // Replace: this id instead of the tokenizer's choice (-1)
  const std::atomic<bool>* cancel = nullptr;
};

struct FaithfulnessCurve {
  bool insertion = false;
  int position = 0;  // the explained position in the full input (the word models: -1, they predict one label)
  int token = 0;     // the explained token (the word models: the label)
  // The removable positions, ranked (highest score first); K = ranked.size().
  std::vector<int> ranked;
  std::vector<int> k;               // the tokens removed (deletion) or kept (insertion) at each point
  std::vector<double> probability;  // p at each point
  int replacement = -1;             // Replace: the id put in; Delete: -1
  std::string removal;              // e.g. "replaced by [MASK] (id 103; BERT's mask token)" or "deleted"
};

// The curves of one input (`run`: a run of a text model; its ids, type ids and special positions are read), one
// ranking (`scores`: one per token of the run) and one target. Errors: scores of another length, a non-finite score, a
// position out of range or without a prediction, a token out of the vocabulary, no token to replace with, ViT.
Result<FaithfulnessCurve> deletion_curve(TransformerRunner& runner, const TransformerRun& run,
                                         std::span<const float> scores, const FaithfulnessOptions& options = {});
Result<FaithfulnessCurve> insertion_curve(TransformerRunner& runner, const TransformerRun& run,
                                          std::span<const float> scores, const FaithfulnessOptions& options = {});

// The model-independent steps every curve shares (the word models' curves of attn/models/word_faithfulness.h too):
// the positions not `fixed` (a flag per position; positions past its end are removable), highest score first, ties
// the earlier position first;
std::vector<int> rank_removable(std::span<const float> scores, const std::vector<bool>& fixed);
// the points k of a curve over K ranked positions: every k = 0 .. K, or with steps > 0 at most steps + 1 evenly
// spaced (rounded, duplicates dropped);
std::vector<int> curve_points(int K, int steps);
// and the probability at each point, from `probability`, given a flag per position (n of them) for the positions
// removed: the top k for deletion, all the ranked ones but the top k for insertion. Cancelled between points.
using RemovedProbability = std::function<Result<double>(const std::vector<bool>& removed)>;
Result<std::vector<double>> curve_probabilities(const std::vector<int>& ranked, const std::vector<int>& k, int n,
                                                bool insertion, const RemovedProbability& probability,
                                                const std::atomic<bool>* cancel);

// Deletion: mean over the points of (p_0 - p_k), p_0 the first point's probability. Insertion: mean p_k. NaN for
// an empty curve.
double aopc(const FaithfulnessCurve& curve);
double deletion_aopc(std::span<const double> probability);
double insertion_area(std::span<const double> probability);

}  // namespace attn::models
