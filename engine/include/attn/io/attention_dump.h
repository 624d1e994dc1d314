// The attention-dump format (`*.attn.safetensors`): any model's attention maps, viewable without the
// engine being able to run the model. A safetensors file with one tensor per (stage, layer), shaped
// [heads, rows, cols] (or [rows, cols] for a single head; a leading batch dimension of 1 is accepted),
// named `attn.<stage>.<layer>` with stage one of encoder, decoder, cross and layer 0-based, in F32, F16
// or BF16. `__metadata__` holds:
//   "format": "attnscope.attn" (optional when reading), "version": "1",
//   "tokens": JSON array of strings, the rows and columns of self-attention (required),
//   "cross_rows": JSON array, the rows of cross attention (when there is any),
//   "spans": JSON array of [begin, end] byte spans (optional), "model": free text (optional),
//   "ids": JSON array of the tokens' vocabulary ids, one per token (optional; written for model runs).
// A tensor `logits`, F32 [tokens, outputs], may ride along (both versions): the model's logits at every position,
// written for a model run with an output head (ViT: one row, the class token's).
// The ten lines of Python that write one from Hugging Face's output_attentions are in docs/USING.md ("Attention
// dumps").
//
// Version 2 (long inputs; written for a decoder run whose attention is kept on demand): no maps at all, but what
// recomputes every weight of every head exactly (attn/on_demand_attention.h), plus each head's whole map
// max-pooled for the first picture. The same container; `__metadata__` holds "format", "version": "2", "tokens",
// and optionally "spans", "ids", "model" as above, and:
//   "layout": JSON {"layers": L, "heads": H, "kv_heads": G, "head_dim": D, "causal": true|false,
//                   "windows": [L whole numbers, 0 = no sliding window], "softcap": S (0 = none),
//                   "overview_factor": F (a power of two: the overviews' cells are F x F weights)};
//   "crc32": JSON {tensor name: 8 lower-case hex digits}, the CRC-32 (zlib's) of every tensor below.
// Tensors, for every layer l < L, head h < H and key group g < G (head h reads group h / (H / G)); n = tokens,
// m = ceil(n / F):
//   layer.<l>.head.<h>.queries   F32 [n, D]  the head's queries as the forward used them (after norms, RoPE, scale)
//   layer.<l>.group.<g>.keys     F32 [n, D]  the group's keys, likewise
//   layer.<l>.head.<h>.shift     F32 [n]     each row's softmax shift (its largest visible score)
//   layer.<l>.head.<h>.inv_sum   F32 [n]     each row's 1 / sum of exponentials (NaN: a row of non-finite scores)
//   layer.<l>.head.<h>.received  F32 [n]     the attention each key receives, summed over every query
//   layer.<l>.head.<h>.overview  F16 [m, m]  the whole map max-pooled in cells of F x F weights
//   layer.<l>.stats              F64 [H, 5]  per head: entropy summed over rows (nats), attention distance summed
//                                            over rows (tokens), weight on token 0 summed over rows, the largest
//                                            weight, the number of rows
// Opening reads the header, the statistics and the overviews (their checksums checked then), and counts the rows of
// non-finite scores for a warning; the queries, keys and row statistics of a head stay in the mapped file until the
// head is first shown, when their checksums are checked (OnDemandLayer::verify), then their contents: each row's
// statistics as a forward writes them, and a few rows recomputed from the queries and keys under the layout's mask.
// A 32,768-token dump of SmolLM2-135M's shape is 3 GB and opens in well under 2 s.
#pragma once

#include "attn/error.h"
#include "attn/layered_trace.h"
#include "attn/on_demand_attention.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace attn::io {

struct AttentionDump {
  LayeredTrace trace;
  std::string model;     // the "model" metadata entry, when present
  std::vector<int> ids;  // the "ids" entry: each token's vocabulary id (empty when the dump has none)
  Matrix logits;         // the "logits" tensor [rows, outputs] (empty when the dump has none)
  // Non-fatal problems, each naming the file and the map: a map holding NaN or infinite weights loads (the
  // user may want to see it) with a warning here, and the views mark it.
  std::vector<std::string> warnings;
  int version = 1;
  // Version 2: every layer, reading the mapped file (trace then has tokens and spans, and no layers).
  std::vector<OnDemandLayer> on_demand;
  // Whether the mapped file the maps (version 1) or layers (version 2) read is unchanged since it was opened: another
  // process may truncate it while it is open, and the pages it lost then read as zeros instead of faulting (SIGBUS).
  // Whoever draws from the dump asks after reading and refuses what it read otherwise: an Io error naming the file,
  // "changed on disk while open: it is now N bytes, was M; reopen it". (A version-2 layer's verify(head) asks too.)
  std::function<Result<void>()> file_intact;
  Result<void> intact() const { return file_intact ? file_intact() : Result<void>{}; }
};

Result<AttentionDump> read_attention_dump(const std::filesystem::path& path);
// The same checks over bytes in memory (tests, fuzzing); `name` stands for the file in errors.
Result<AttentionDump> parse_attention_dump(std::vector<std::uint8_t> bytes, std::string name);
// Maps are written in their stack's precision (F32 or F16).
// `ids`, when given, has one vocabulary id per token (a model run's TransformerRun::ids).
// `logits`, when given, is written as the "logits" tensor (rows: the tokens, or 1).
Result<void> write_attention_dump(const std::filesystem::path& path, const LayeredTrace& trace,
                                  const std::string& model = {}, const std::vector<int>& ids = {},
                                  const Matrix* logits = nullptr);
// A version-2 dump of a run kept on demand: `trace` gives the tokens and spans (its layers are not read), `layers`
// the run's OnDemandLayer per layer (all the same heads, groups and head size). Computing the overviews is most of
// the time (a whole map per head: about a second per head at 32,768 tokens); `progress(fraction, what)` is called
// after each head and stops the write (failing with reason "cancelled", nothing written) when it returns false.
Result<void> write_attention_dump(const std::filesystem::path& path, const LayeredTrace& trace,
                                  const std::vector<OnDemandLayer>& layers, const std::string& model = {},
                                  const std::vector<int>& ids = {},
                                  const std::function<bool(double, const std::string&)>& progress = {},
                                  const Matrix* logits = nullptr);
// The overview's cell side for a map of `tokens`: the smallest power of two that puts it in 512 x 512 cells.
Index dump_overview_factor(Index tokens);
// True for names ending in ".attn.safetensors".
bool is_attention_dump_name(const std::filesystem::path& path);

}  // namespace attn::io
