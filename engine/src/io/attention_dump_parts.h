// What the two versions of the attention-dump format share (attn/io/attention_dump.h), and version 2's reader:
// private to engine/src/io.
#pragma once

#include "attn/io/attention_dump.h"
#include "attn/io/safetensors.h"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace attn::io::dump_format {

inline constexpr std::string_view kDumpFormat = "attnscope.attn";
inline constexpr std::string_view kOnDemandVersion = "2";
inline constexpr std::int64_t kDumpHeaderOffset = 8;  // metadata errors point at the header

// The metadata every version writes: "format", "version", "tokens", and "cross_rows", "spans", "model", "ids" when
// there are any (spans and ids one per token, else an error naming `file`).
Result<std::map<std::string, std::string>> dump_metadata(const LayeredTrace& trace, const std::string& model,
                                                         const std::vector<int>& ids, const std::string& file,
                                                         std::string_view version);

// The "logits" tensor (F32 [tokens or 1, outputs]) added to a dump's tensors when `logits` is given and not empty,
// and read back into dump.logits when the file has one (another dtype or shape: an error naming the file and offset).
Result<void> add_logits(const Matrix* logits, Index tokens, const std::string& file, std::vector<TensorData>& tensors);
Result<void> read_logits(const SafeTensors& st, Index tokens, AttentionDump& dump);

// Version 2's layers into dump.on_demand, after the shared metadata (dump.trace.tokens) has been read: the layout,
// every tensor's name, dtype and shape, the checksums of the statistics and overviews (the rest is checked lazily).
Result<void> read_on_demand_layers(const SafeTensors& st, AttentionDump& dump);

}  // namespace attn::io::dump_format
