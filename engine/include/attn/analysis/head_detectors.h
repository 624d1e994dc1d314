// Head detectors: what each head of a text transformer does, scored on a repeated random sequence (TransformerLens's
// head detector, extended; the induction stripe of Olsson et al. 2022, "In-context Learning and Induction Heads").
//
// The detection input. S is a random sequence of R distinct ordinary tokens (not special or added tokens), drawn
// with a generator seeded by `seed`; the model reads [prefix] S S [suffix]: BERT and DistilBERT [CLS] S S [SEP];
// GPT-2 and the decoders the BOS token when the tokenizer (or config.json) has one, else nothing. P is the prefix's
// length, so the first copy is at positions P .. P+R-1 and the second at P+R .. P+2R-1. B such inputs are run, each
// with its own S (all from the one seeded generator: the same options give the same scores), and every score is the
// mean of its B values. A = one head's attention map of one input (row i = query, column j = key).
//   previous_token = mean over i in [P+1, P+2R) of A[i, i-1]          (both i and i-1 in S S)
//   sink           = mean over i in [max(P, 1), P+2R) of A[i, 0]      (the rows of S S; position 0 is [CLS] / BOS, or
//                                                                     S's first token: its own row, which a causal
//                                                                     model fills with 1, is left out)
//   stripe(k)      = mean over i in [P+R, P+2R) of A[i, i-R+k]        (the second copy's rows; i-R is the earlier
//                                                                     occurrence of the same token, i-R+k the k-th
//                                                                     token after it)
//   duplicate_token = stripe(0)
//   induction = max over k = 1..K of stripe(k); induction_offset = the smallest k where it is reached.
// K < R, so every target i-R+k is before row i: visible to a causal model too, never a masked cell. The textbook
// induction head reads offset +1; the bundled induction-gpt2's copying heads read +2 (its MODEL_CARD.md).
//
// Which tokens S is drawn from: the distinct tokens of `alphabet` when it is given; else, in a character-level
// vocabulary (at most kCharacterVocabulary tokens, such as a byte-level model's 256), the tokens of the letters a-z,
// the text such small models are trained on (random bytes are inputs they never saw); else every ordinary token.
#pragma once

#include "attn/error.h"
#include "attn/layered_trace.h"
#include "attn/models/transformer.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace attn::analysis {

enum class HeadDetector : std::uint8_t { PreviousToken, DuplicateToken, Induction, Sink };
// "previous-token", "duplicate-token", "induction", "sink": the command line's names.
std::string_view to_string(HeadDetector detector);
std::optional<HeadDetector> find_head_detector(std::string_view name);
// Every detector, in the order above.
std::span<const HeadDetector> head_detectors();

inline constexpr int kCharacterVocabulary = 512;

struct HeadDetectionOptions {
  int sequence_length = 20;  // R, at least 2
  int sequences = 4;         // B, 1 to kMaxDetectionSequences
  std::uint64_t seed = 0;
  int max_offset = 3;      // K, 1 to R-1
  std::string alphabet;    // non-empty: S is drawn from this text's distinct tokens
  std::string model_name;  // what refusals call the model (its folder); empty: its description()
};
inline constexpr int kMaxDetectionSequences = 256;

// Where the parts of a detection input are: [prefix] S S [suffix].
struct DetectionLayout {
  int prefix = 0;  // P
  int length = 0;  // R
  int suffix = 0;  // BERT's [SEP]
  int tokens() const { return prefix + 2 * length + suffix; }
};

struct HeadScore {
  int layer = 0, head = 0;  // from 0
  float previous_token = 0;
  float duplicate_token = 0;
  float induction = 0;
  int induction_offset = 1;  // k of the induction score
  float sink = 0;
  std::vector<float> stripes;  // stripe(k) for k = 0..K (stripes[0] is duplicate_token)
};

struct HeadDetection {
  std::vector<HeadScore> scores;  // layer-major: layers x heads
  int layers = 0, heads = 0;
  DetectionLayout layout;
  int sequences = 0;
  int max_offset = 0;
  std::string pool;                      // what S was drawn from, e.g. "26 tokens of the letters a-z"
  std::vector<std::vector<int>> inputs;  // the ids of each detection input, as run
};

// The scores of one detection input's maps (trace.layers' self-attention stacks, rows = cols = layout.tokens()),
// max_offset = K. Scores are left at 0 for a layer whose maps are not that shape.
std::vector<HeadScore> score_heads(const LayeredTrace& trace, const DetectionLayout& layout, int max_offset);

// Runs `model` on options.sequences detection inputs and scores every head. Refused: a ViT (no tokens to repeat) or a
// model without a tokenizer (Unsupported, naming the model); R, B or K out of range; fewer distinct tokens to draw
// from than R; an input longer than the model's positions (TooLarge, with the figures). `progress(fraction)` is
// called on the calling thread after each layer of each input; `cancel` is read between layers and inputs (then the
// result is an error of kind Cancelled).
Result<HeadDetection> detect_heads(const std::shared_ptr<const models::TransformerModel>& model,
                                   const HeadDetectionOptions& options = {}, const std::atomic<bool>* cancel = nullptr,
                                   const std::function<void(double fraction)>& progress = {});

}  // namespace attn::analysis
