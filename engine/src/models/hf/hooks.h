// The interventions' side of a forward pass (attn/models/activations.h): one Hooks object per run, called by the
// forward at each site of each layer on the rows it computes; it keeps the activations when the run captures them
// and applies the run's edits. Shared by every family's forward (transformer_run.cpp, decoder_run.cpp). Internal
// to engine/models.
#pragma once

#include "attn/models/transformer.h"

#include <memory>
#include <vector>

namespace attn::models {

// The edits checked against the model and the token count before anything runs: each names its index, the field, the
// value and the range (a layer or head outside the model, a position outside the input, a source of another shape,
// Mean on a site other than Z).
Result<void> check_edits(const TransformerConfig& c, Index tokens, const std::vector<Edit>& edits);

class Hooks {
 public:
  // `capture`: the activations are kept in a new Activations (taken with take()).
  Hooks(const TransformerConfig& c, Index tokens, const std::vector<Edit>& edits, bool capture);

  bool active() const { return capture_ != nullptr || !edits_.empty(); }
  bool edits() const { return !edits_.empty(); }

  // Site `site` of layer `layer`: rows [p0, p0 + count) of the run, at `rows` with row stride `ld`. Kept when
  // capturing (before any edit), then edited. True when an edit changed these rows.
  bool at(Site site, int layer, float* rows, Index p0, Index count, Index ld);
  // Decoders: layer `layer`'s keys and values of rows [p0, p0 + count), from the cache's layout [kv_heads][capacity]
  // [head_dim].
  void keep_cache(int layer, const float* keys, const float* values, Index capacity, Index p0, Index count);

  // Where a re-run may start: the first edited layer; the first row any edit changes in a causal model (0 when an
  // edit covers every position, or for a bidirectional one); whether that layer's attention is unchanged (no
  // ResidPre edit there), so that its head outputs can be taken from the base run.
  int first_layer() const;
  Index first_position(bool causal) const;
  bool attention_unchanged_at_first() const;

  std::shared_ptr<Activations> take() { return std::move(capture_); }

 private:
  void edit(const Edit& e, float* rows, Index p0, Index count, Index ld) const;
  Index width(Site site) const;

  const TransformerConfig& c_;
  Index tokens_;
  const std::vector<Edit>& edits_;
  std::shared_ptr<Activations> capture_;
};

}  // namespace attn::models
