// A decoder's config.json through parse_config and everything the decoder loader and forward derive from it: the
// context, the rotary frequencies at the shortest, the trained and the longest input, the sliding layers, the token
// ids, and the memory estimate of a run over the whole context. Whatever parse_config accepts must keep the
// invariants those rely on (bounded sizes, finite positive frequencies, no overflow); whatever it refuses names the
// file. The seeds are the real decoder configs of tests/data/decoders.
#include "fuzz_util.h"

#include "attn/models/config.h"
#include "attn/models/transformer.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace attn;
  using namespace attn::models;
  constexpr const char* kName = "config.json";
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  auto parsed = parse_config(text, kName);
  if (!parsed) {
    fuzz::check_error(parsed.error(), kName);
    return 0;
  }
  const TransformerConfig& c = *parsed;
  if (c.family != Family::Decoder) return 0;
  const DecoderSettings& d = c.decoder;
  fuzz::require(c.hidden > 0 && c.heads > 0 && c.layers > 0 && c.intermediate > 0 && c.vocab_size > 0);
  fuzz::require(d.kv_heads > 0 && c.heads % d.kv_heads == 0);
  fuzz::require(d.head_dim > 0 && d.head_dim % 2 == 0);
  const auto rotary = static_cast<Index>(static_cast<double>(d.head_dim) * d.partial_rotary);
  fuzz::require(rotary >= 2 && rotary % 2 == 0 && rotary <= d.head_dim);
  // The context: at least the trained positions, never past the bound.
  const Index context = c.context();
  fuzz::require(context >= c.max_positions && context <= kMaxDecoderContext);
  fuzz::require(std::isfinite(d.rope_factor) && d.rope_factor > 0 && d.rope_factor <= kMaxRopeFactor);
  if (d.rope == RopeScaling::Llama3 || d.rope == RopeScaling::Yarn) {
    fuzz::require(d.original_max_positions >= 1 && d.original_max_positions <= (1 << 20));
  }
  if (d.rope == RopeScaling::Llama3) fuzz::require(d.low_freq_factor < d.high_freq_factor);
  // The rotary frequencies the forward uses, at every length it may run.
  for (const Index n : {Index{1}, static_cast<Index>(c.max_positions), context}) {
    for (const bool local : {false, true}) {
      if (local && !d.local_rope_theta) continue;
      const RopeFrequencies r = rope_frequencies(c, n, local);
      fuzz::require(static_cast<Index>(r.inv.size()) == rotary / 2);
      for (const double f : r.inv) fuzz::require(std::isfinite(f) && f > 0);
      fuzz::require(std::isfinite(r.factor) && r.factor > 0);
    }
  }
  fuzz::require(std::isfinite(d.query_scale) && d.query_scale > 0);
  fuzz::require(d.sliding.size() == static_cast<std::size_t>(c.layers));
  fuzz::require(d.window >= 0 && d.window <= (1 << 20));
  for (const int id : d.eos) fuzz::require(id >= 0 && id < c.vocab_size);
  if (d.bos) fuzz::require(*d.bos >= 0 && *d.bos < c.vocab_size);
  // The memory estimate of a run over the whole context (what the runner checks before allocating): computed
  // without overflow, however large.
  RunOptions options;
  options.keep = RunOptions::Keep::Auto;
  (void)run_bytes(c, context, options);
  options.all_logits = true;
  options.hidden_states = true;
  options.keep = RunOptions::Keep::Both;
  (void)run_bytes(c, context, options);
  return 0;
}
