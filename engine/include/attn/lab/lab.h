// The Mechanism Lab: run any mechanism of the catalogue on two sentences with model-free embeddings and
// seeded random weights. Pure engine code: the GUI and attnscope-cli both call run_lab().
#pragma once

#include "attn/error.h"
#include "attn/mechanisms/attention.h"
#include "attn/mechanisms/pooling.h"
#include "attn/trace.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace attn::lab {

enum class Mechanism {
  Global,
  LocalMonotonic,
  LocalPredictive,
  Location,
  HardArgmax,
  HardSample,
  GatedSoft,
  SelfAttention,
  MultiHead,
  Pooling,
  MultiHeadPooling,
  MultiHop,
  Hierarchical,
  AttentionOverAttention,
  Capsule,
  Interactive,     // IAN: context and target attend to each other's average
  Rotatory,        // LCR-Rot-hop
  CapsuleRouting,  // Sabour et al. 2017's routing by agreement
  MultiHeadCapsule,
  Linformer,
  Reformer,  // LSH attention
  TransformerXL,
  ConvS2S,  // multi-step attention
  SynthesizerDense,
  SynthesizerRandom,
  SynthesizerFactorizedDense,
  SynthesizerFactorizedRandom,
  SynthesizerMixture,
};

struct MechanismInfo {
  Mechanism id;
  std::string_view key;      // command-line name, e.g. "local-p"
  std::string_view name;     // shown in the UI
  std::string_view formula;  // one line
  std::string_view paper;
  bool uses_query = false;   // needs the query sentence
  bool uses_score = false;   // the score function is selectable
  bool uses_window = false;  // D and sigma
  bool uses_heads = false;
  bool uses_hops = false;
  bool uses_causal = false;
  bool uses_classes = false;
  bool uses_positions = false;
  bool uses_target = false;      // the source marks a target phrase with brackets: "the [battery life] is great"
  bool uses_iterations = false;  // routing iterations r
  bool uses_rank = false;        // Linformer's projected length k, the factorised Synthesizer's k
  bool uses_lsh = false;         // the Reformer's buckets, chunk length m and hash rounds
  bool uses_segments = false;    // Transformer-XL's segment length L
  bool uses_normaliser = false;  // the normaliser and the temperature apply
  bool uses_layers = false;      // a stack of layers (Transformer-XL, ConvS2S's decoder)
};
std::span<const MechanismInfo> mechanisms();
const MechanismInfo& info(Mechanism m);
// Looks a mechanism up by its key ("additive" is accepted for Global with the additive score).
const MechanismInfo* find_mechanism(std::string_view key);
// Score kinds by command-line name: dot, scaled-dot, general, concat, additive, cosine.
std::span<const ScoreKind> score_kinds();
std::string_view score_key(ScoreKind kind);
const ScoreKind* find_score(std::string_view key);
// Normalisers (softmax, sparsemax) and positions (none, sinusoidal, learned) by command-line name.
std::span<const Normaliser> normalisers();
std::span<const PositionKind> position_kinds();
std::string_view normaliser_key(Normaliser kind);
const Normaliser* find_normaliser(std::string_view key);
std::string_view positions_key(PositionKind kind);
const PositionKind* find_positions(std::string_view key);

struct LabParams {
  Mechanism mechanism = Mechanism::Global;
  ScoreKind score = ScoreKind::ScaledDot;
  Normaliser normaliser = Normaliser::Softmax;
  float temperature = 1.0f;
  int window = 2;       // D
  float sigma = -1.0f;  // <= 0: D / 2
  int heads = 4;
  int hops = 3;
  int classes = 3;
  int iterations = 3;  // capsule routing's r
  int rank = 8;        // k
  int buckets = 4;     // LSH buckets (even)
  int chunk = 4;       // LSH chunk length m
  int hashes = 2;      // LSH rounds
  int segment = 6;     // Transformer-XL's segment length L
  int layers = 2;      // Transformer-XL's and ConvS2S's decoder layers
  bool causal = false;
  // Pooling: also run on the words in a seeded random order, with and without positions, to show that
  // pooling without positions ignores word order.
  bool shuffle = false;
  PositionKind positions = PositionKind::None;
  std::uint64_t seed = 42;
  int dim = 64;  // embedding and model size
  friend bool operator==(const LabParams&, const LabParams&) = default;
};

// The plain counts among the parameters, each with its range and the mechanisms that read it: one table
// for the check, the JSON keys, the command-line options and the Lab's spin boxes.
struct CountParam {
  std::string_view key;    // JSON key, command-line option (--key) and widget name
  std::string_view alias;  // a second, short option name ("k"), or empty
  std::string_view label;  // the Lab's form label, with its mnemonic
  std::string_view what;   // in messages: "routing iterations r"
  std::string_view help;   // tool tip and option help
  int LabParams::*field;
  int min, max;
  bool MechanismInfo::*used;
};
std::span<const CountParam> count_params();

// Sets params.mechanism from a mechanism key; a score name on its own ("dot", "additive", ...) means
// global attention with that score. False, and params unchanged, when the key names neither.
bool select_mechanism(LabParams& params, std::string_view key);

struct LabRequest {
  std::string query;
  std::string source;
  LabParams params;
};

inline constexpr int kMaxTokens = 2048;  // per sentence; longer input is truncated, with a warning
// The efficient transformers (Linformer, Reformer) exist for long inputs: they read this many.
inline constexpr int kMaxEfficientTokens = 8192;
int max_tokens(Mechanism m);

struct LabResult {
  AttentionTrace trace;  // every map the mechanism produced, axes labelled with tokens
  Labels query_tokens;
  Labels source_tokens;
  std::vector<std::string> notes;     // facts about the run shown beside the map (gates, probabilities, p_t)
  std::vector<std::string> warnings;  // "source truncated to 2048 tokens (of 12707)"
  double elapsed_ms = 0.0;            // engine time of the run
  // The map a view opens on when the user has chosen none: the first, except where the first says nothing of the
  // mechanism (capsule routing's first iteration is uniform by definition: its last, the routed result;
  // Transformer-XL's segment 0 has no memory: segment 1's layer 0). Every index in map names and labels counts
  // from 0, as everywhere in AttnScope ("iteration 0", "hop 0", "capsule 0", "k0", "round 0", "segment 1").
  std::size_t opening_map = 0;
};

// How a long Lab run reports and stops, as RunOptions::on_progress and cancel do for a transformer. `cancel` is read
// between steps: the run then fails with kind Cancelled ("cancelled"). `on_progress(done, steps)` is called on the
// calling thread after each step of a mechanism that has steps (Transformer-XL: its segments); the others are one
// step, with `cancel` read before it (a run that ends is returned: the caller drops what it no longer wants).
struct LabControl {
  const std::atomic<bool>* cancel = nullptr;
  std::function<void(int done, int steps)> on_progress;
  bool cancelled() const { return cancel != nullptr && cancel->load(std::memory_order_relaxed); }
};

// What a refusal of the request as a whole (the Lab's budgets) names as its file when the request was typed,
// not read from one.
inline constexpr std::string_view kInMemoryRequest = "lab request";

// Validates both sentences (UTF-8, not empty when used; past kMaxTokens tokens truncated with a warning) and
// runs the mechanism. `what` names where the request came from: the file `attnscope-cli lab --input` read.
Result<LabResult> run_lab(const LabRequest& request, const LabControl& control = {},
                          std::string_view what = kInMemoryRequest);

// The request as JSON (sentences and every parameter, mechanisms and scores by their command-line keys),
// for settings and session files; and back, refusing unknown keys' values with a reason. Fields that
// are absent keep their defaults, so files from older versions still load.
std::string to_json(const LabRequest& request);
Result<LabRequest> lab_request_from_json(std::string_view json, std::string_view what = "lab settings");

// A sentence with one target phrase marked by brackets, "the [battery life] is great": the text with the two
// brackets blanked (so byte offsets still point into what the user typed) and the target's bytes [begin, end).
// A missing, empty, nested, repeated or unbalanced bracket is an error naming its byte; `what` names the input.
struct TargetMarkup {
  std::string text;
  std::int32_t begin = 0;
  std::int32_t end = 0;
};
Result<TargetMarkup> parse_target_markup(std::string_view text, std::string_view what = "source");

// Example sentences the lab opens with.
inline constexpr std::string_view kDefaultQuery = "she ate the apples in the garden";
inline constexpr std::string_view kDefaultSource =
    "The apple fell from the tree. She picked it up in the garden and ate it.";
// The example for the mechanisms that attend around a target phrase.
inline constexpr std::string_view kTargetExample =
    "after a week of daily use the [battery life] is great but the screen is dim";

}  // namespace attn::lab
