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
// The ten lines of Python that write one from Hugging Face's output_attentions are in README.md.
#pragma once

#include "attn/error.h"
#include "attn/layered_trace.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace attn::io {

struct AttentionDump {
  LayeredTrace trace;
  std::string model;     // the "model" metadata entry, when present
  std::vector<int> ids;  // the "ids" entry: each token's vocabulary id (empty when the dump has none)
  // Non-fatal problems, each naming the file and the map: a map holding NaN or infinite weights loads (the
  // user may want to see it) with a warning here, and the views mark it.
  std::vector<std::string> warnings;
};

Result<AttentionDump> read_attention_dump(const std::filesystem::path& path);
// The same checks over bytes in memory (tests, fuzzing); `name` stands for the file in errors.
Result<AttentionDump> parse_attention_dump(std::vector<std::uint8_t> bytes, std::string name);
// Maps are written in their stack's precision (F32 or F16).
// `ids`, when given, has one vocabulary id per token (a model run's TransformerRun::ids).
Result<void> write_attention_dump(const std::filesystem::path& path, const LayeredTrace& trace,
                                  const std::string& model = {}, const std::vector<int>& ids = {});
// True for names ending in ".attn.safetensors".
bool is_attention_dump_name(const std::filesystem::path& path);

}  // namespace attn::io
