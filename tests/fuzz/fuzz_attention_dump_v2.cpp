// Version-2 attention dumps (a run kept on demand) over arbitrary bytes, then what the app does with one it opened:
// every head verified, its map, rows, columns, pooled and preview cells and stored overview read, the streamed
// statistics and the rollout of a row. An input whose last byte is odd has its checksums made right before it is
// read (the container parsed, every tensor's CRC-32 written into the "crc32" entry), so the fuzzer reaches the
// arithmetic with any numbers (NaN, huge, subnormal) instead of stopping at the checksums; even inputs test the
// checksums themselves.
#include "fuzz_util.h"

#include "attn/analysis/attention_analysis.h"
#include "attn/io/attention_dump.h"
#include "attn/io/safetensors.h"

#include <nlohmann/json.hpp>
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

using namespace attn;

// The bytes with their "crc32" entry recomputed, or the bytes as they are when they are not a container.
std::vector<std::uint8_t> with_right_checksums(std::vector<std::uint8_t> bytes) {
  auto st = io::SafeTensors::parse(bytes, "fuzz");
  if (!st || !st->metadata().contains("crc32")) return bytes;
  nlohmann::json crc = nlohmann::json::object();
  std::vector<io::TensorData> tensors;
  for (const io::TensorInfo& t : st->tensors()) {
    const auto data = st->bytes(t);
    char hex[16];
    std::snprintf(hex, sizeof hex, "%08lx",
                  crc32_z(crc32_z(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(data.data()), data.size()));
    crc[t.name] = hex;
    tensors.push_back(io::TensorData{t.name, t.dtype, t.shape, data});
  }
  auto metadata = st->metadata();
  metadata["crc32"] = crc.dump();
  auto out = io::serialize_safetensors(tensors, metadata);
  return out ? std::move(*out) : bytes;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  constexpr const char* kName = "fuzz.attn.safetensors";
  std::vector<std::uint8_t> bytes(data, data + size);
  // The last byte (tensor data in any valid file; the first is the header length's, which must stay as it is).
  if (size > 0 && (data[size - 1] & 1) != 0) bytes = with_right_checksums(std::move(bytes));
  auto dump = io::parse_attention_dump(std::move(bytes), kName);
  if (!dump) {
    fuzz::check_error(dump.error(), kName);
    return 0;
  }
  if (dump->on_demand.empty()) return 0;  // a version-1 dump: fuzz_attention_dump's
  const auto tokens = static_cast<Index>(dump->trace.tokens.size());
  fuzz::require(dump->version == 2 && dump->trace.layers.empty() && tokens > 0);
  bool all_verified = true;
  for (const OnDemandLayer& layer : dump->on_demand) {
    fuzz::require(layer.is_external() && layer.tokens() == tokens && layer.heads() >= 1);
    fuzz::require(layer.overview_factor() >= 1);
    // Recomputing whole maps costs tokens^2 per head: the larger inputs stop at the checks.
    const bool small = tokens <= 64 && layer.head_dim() <= 64;
    for (int h = 0; h < layer.heads(); ++h) {
      auto ok = layer.verify(h);
      if (!ok) {
        fuzz::check_error(ok.error(), kName);
        all_verified = false;
        continue;
      }
      const auto& stats = layer.stats(h);
      fuzz::require(stats.rows == tokens && static_cast<Index>(stats.received.size()) == tokens);
      if (!small) continue;
      const Matrix map = layer.map(h);
      fuzz::require(map.rows() == tokens && map.cols() == tokens);
      std::vector<float> line(static_cast<std::size_t>(tokens));
      layer.row(h, tokens - 1, line.data());
      layer.column(h, 0, line.data());
      for (const Index factor : {Index{1}, Index{2}, Index{8}}) {
        const Index side = (tokens + factor - 1) / factor;
        std::vector<float> cells(static_cast<std::size_t>(side * side));
        for (const auto pooling : {OnDemandLayer::Pooling::Max, OnDemandLayer::Pooling::Mean}) {
          layer.pooled(h, factor, pooling, 0, side, 0, side, cells.data(), side);
          layer.preview(h, factor, pooling, 0, side, 0, side, cells.data(), side);
        }
        (void)layer.overview_pooled(h, factor, 0, side, 0, side, cells.data(), side);
      }
      OnDemandHead head(nullptr, layer, h);
      (void)head.weight(tokens - 1, 0);
    }
  }
  (void)analysis::streamed_statistics(dump->on_demand, {0, static_cast<int>(tokens) - 1});
  if (tokens <= 64) {
    auto row = analysis::rollout_row(dump->on_demand, tokens - 1);
    fuzz::require(static_cast<bool>(row) == all_verified || !row);
    if (!row) fuzz::check_error(row.error(), row.error().file.empty() ? "" : kName);
  }
  return 0;
}
