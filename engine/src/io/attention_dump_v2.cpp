// Version 2 of the attention-dump format (attn/io/attention_dump.h): a run kept on demand, written and read back
// as memory-mapped OnDemandLayers. The checksums are zlib's CRC-32 (about 5 GB/s here: a head of a 32,768-token
// SmolLM2 run, 16 MB, in 3 ms).
#include "attn/io/attention_dump.h"

#include "attn/io/safetensors.h"

#include "../core/json_config.h"
#include "attention_dump_parts.h"

#include <nlohmann/json.hpp>
#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>

namespace attn::io {

static_assert(std::endian::native == std::endian::little, "version-2 dumps are read in place: little-endian only");

namespace {

using json = nlohmann::json;
using attn::detail::quote;
using dump_format::kDumpHeaderOffset;

using dump_format::kOnDemandVersion;
constexpr Index kOverviewCells = 512;  // an overview's side at most
constexpr int kStatsColumns = 5;       // entropy, distance, first-token mass, largest weight, rows
// Bounds of the layout: more than any published model has; the tensors' sizes are bounded by the file itself.
constexpr std::int64_t kV2MaxLayers = 1024, kV2MaxHeads = 4096, kV2MaxHeadDim = 4096;

std::string layer_tensor(int l, const char* part) { return "layer." + std::to_string(l) + "." + part; }
std::string head_tensor(int l, int h, const char* part) {
  return "layer." + std::to_string(l) + ".head." + std::to_string(h) + "." + part;
}
std::string group_tensor(int l, int g) {
  return "layer." + std::to_string(l) + ".group." + std::to_string(g) + ".keys";
}

std::uint32_t crc_of(std::span<const std::byte> bytes) {
  uLong crc = crc32_z(0L, Z_NULL, 0);
  return static_cast<std::uint32_t>(crc32_z(crc, reinterpret_cast<const Bytef*>(bytes.data()), bytes.size()));
}

std::string hex8(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08x", v);
  return buf;
}

// The layout entry, checked.
struct DumpLayout {
  int layers = 0, heads = 0, kv_heads = 0;
  Index head_dim = 0, overview_factor = 1;
  bool causal = true;
  std::vector<Index> windows;
  float softcap = 0;
};

Result<DumpLayout> read_layout(const std::map<std::string, std::string>& metadata, const std::string& file) {
  const auto bad = [&](ErrorKind kind, const std::string& why) {
    return fail(kind, "metadata \"layout\" " + why + " (a version-2 dump's layout: docs/USING.md, \"Attention dumps\")",
                file, kDumpHeaderOffset);
  };
  const auto it = metadata.find("layout");
  if (it == metadata.end()) return bad(ErrorKind::Malformed, "is missing");
  auto parsed = attn::detail::parse_json(it->second, file, kDumpHeaderOffset);
  if (!parsed) return bad(parsed.error().kind, "is not JSON");
  const json& v = *parsed;
  if (!v.is_object()) return bad(ErrorKind::Malformed, "is not a JSON object");
  const auto whole = [&](const char* key, std::int64_t lo, std::int64_t hi) -> Result<std::int64_t> {
    if (!v.contains(key) || !v[key].is_number_integer())
      return bad(ErrorKind::Malformed, quote(key) + " is not a whole number");
    const auto n = v[key].get<std::int64_t>();
    if (n < lo || n > hi) {
      return bad(ErrorKind::OutOfRange, quote(key) + " is " + std::to_string(n) + ", outside " + std::to_string(lo) +
                                            " to " + std::to_string(hi));
    }
    return n;
  };
  DumpLayout out;
  auto layers = whole("layers", 1, kV2MaxLayers);
  if (!layers) return std::unexpected(layers.error());
  auto heads = whole("heads", 1, kV2MaxHeads);
  if (!heads) return std::unexpected(heads.error());
  auto kv = whole("kv_heads", 1, *heads);
  if (!kv) return std::unexpected(kv.error());
  if (*heads % *kv != 0) {
    return bad(ErrorKind::Mismatch,
               std::to_string(*heads) + " heads do not share " + std::to_string(*kv) + " key heads evenly");
  }
  auto dim = whole("head_dim", 1, kV2MaxHeadDim);
  if (!dim) return std::unexpected(dim.error());
  auto factor = whole("overview_factor", 1, std::int64_t{1} << 40);
  if (!factor) return std::unexpected(factor.error());
  if (!std::has_single_bit(static_cast<std::uint64_t>(*factor))) {
    return bad(ErrorKind::OutOfRange, "\"overview_factor\" is " + std::to_string(*factor) + ", not a power of two");
  }
  if (!v.contains("causal") || !v["causal"].is_boolean())
    return bad(ErrorKind::Malformed, "\"causal\" is not true or false");
  if (!v.contains("softcap") || !v["softcap"].is_number() || !std::isfinite(v["softcap"].get<double>()) ||
      v["softcap"].get<double>() < 0) {
    return bad(ErrorKind::Malformed, "\"softcap\" is not a number from 0");
  }
  if (!v.contains("windows") || !v["windows"].is_array() || v["windows"].size() != static_cast<std::size_t>(*layers)) {
    return bad(ErrorKind::Malformed, "\"windows\" is not an array of one whole number per layer");
  }
  out.layers = static_cast<int>(*layers);
  out.heads = static_cast<int>(*heads);
  out.kv_heads = static_cast<int>(*kv);
  out.head_dim = *dim;
  out.overview_factor = *factor;
  out.causal = v["causal"].get<bool>();
  out.softcap = static_cast<float>(v["softcap"].get<double>());
  for (const json& w : v["windows"]) {
    if (!w.is_number_integer() || w.get<std::int64_t>() < 0) {
      return bad(ErrorKind::Malformed, "\"windows\" holds " + w.dump() + ", not a whole number from 0");
    }
    out.windows.push_back(w.get<std::int64_t>());
  }
  return out;
}

Result<std::map<std::string, std::uint32_t>> read_checksums(const std::map<std::string, std::string>& metadata,
                                                            const std::string& file) {
  const auto bad = [&](const std::string& why) {
    return fail(ErrorKind::Malformed, "metadata \"crc32\" " + why, file, kDumpHeaderOffset);
  };
  const auto it = metadata.find("crc32");
  if (it == metadata.end()) return bad("is missing: a version-2 dump has a checksum for every tensor");
  auto parsed = attn::detail::parse_json(it->second, file, kDumpHeaderOffset);
  if (!parsed || !parsed->is_object()) return bad("is not a JSON object of tensor names and checksums");
  std::map<std::string, std::uint32_t> out;
  for (const auto& [name, value] : parsed->items()) {
    const std::string s = value.is_string() ? value.get<std::string>() : std::string();
    if (s.size() != 8 ||
        !std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); })) {
      return bad("entry " + quote(name) + " is " + value.dump() + ", not 8 lower-case hex digits");
    }
    out[name] = static_cast<std::uint32_t>(std::stoul(s, nullptr, 16));
  }
  return out;
}

// One head's tensors and the layout they are read with, for the check of its rows (check_head_rows).
struct HeadRows {
  const TensorInfo *queries = nullptr, *keys = nullptr, *shift = nullptr, *inv_sum = nullptr;
  Index tokens = 0, dim = 0, window = 0;
  bool causal = true;
  float softcap = 0;
};

Result<void> check_head_rows(const SafeTensors& file, const HeadRows& h);

// The checksums checked lazily, each tensor once, and each head's rows once: shared by the layers (and their copies)
// of one opened dump.
struct LazyChecks {
  SafeTensors file;
  std::map<std::string, std::uint32_t> crc;
  std::mutex mutex;
  std::map<std::string, Result<void>> done;
  std::map<std::pair<int, int>, Result<void>> rows_done;  // (layer, head)

  Result<void> rows(int layer, int head, const HeadRows& h) {
    std::lock_guard lock(mutex);
    const auto key = std::pair{layer, head};
    if (const auto it = rows_done.find(key); it != rows_done.end()) return it->second;
    return rows_done.emplace(key, check_head_rows(file, h)).first->second;
  }

  Result<void> check(const TensorInfo& t) {
    std::lock_guard lock(mutex);
    if (const auto it = done.find(t.name); it != done.end()) return it->second;
    return done.emplace(t.name, checked(t)).first->second;
  }
  Result<void> checked(const TensorInfo& t) const {
    const std::uint32_t want = crc.at(t.name), got = crc_of(file.bytes(t));
    if (want == got) return {};
    return std::unexpected(file.error(t, ErrorKind::Mismatch,
                                      "tensor " + quote(t.name) + " (" + with_commas(t.end - t.begin) +
                                          " bytes) fails its checksum: CRC-32 " + hex8(got) + ", the header says " +
                                          hex8(want) + "; the file is damaged (a changed byte or a partial copy)"));
  }
};

float float_at(const SafeTensors& file, const TensorInfo& t, Index i) {
  float v = 0;
  std::memcpy(&v, file.bytes(t).data() + i * static_cast<Index>(sizeof(float)), sizeof v);
  return v;
}

std::string number_text(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+inf" : "-inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// A head's row statistics as a forward writes them (models/hf/row_streams.h's softmax_row): a finite shift (the row's
// largest visible score) and a 1 / sum in [1 / tokens, 1] (a sum of at most `tokens` terms, the largest of them
// exp(0) = 1), or both NaN for a row of non-finite scores (counted). Anything else no forward wrote, whatever its
// checksum says: refused, naming the tensor, the row, the value and its range.
Result<std::int64_t> check_row_statistics(const SafeTensors& file, const TensorInfo& shift, const TensorInfo& inv,
                                          Index n) {
  constexpr double kSlack = 1e-4;  // the forward's float exponentials
  const double lo = 1.0 / (static_cast<double>(n) * (1.0 + kSlack)), hi = 1.0 + kSlack;
  std::int64_t nan_rows = 0;
  for (Index i = 0; i < n; ++i) {
    const float s = float_at(file, shift, i), v = float_at(file, inv, i);
    if (std::isnan(s) && std::isnan(v)) {
      ++nan_rows;
      continue;
    }
    if (!std::isfinite(s)) {
      return std::unexpected(file.error(shift, ErrorKind::OutOfRange,
                                        "tensor " + quote(shift.name) + ": row " + with_commas(i) + "'s shift is " +
                                            number_text(s) + " with a 1 / sum of " + number_text(v) +
                                            "; a row's shift is its largest score, finite (or NaN with its 1 / sum "
                                            "for a row of non-finite scores)"));
    }
    if (!(v >= lo && v <= hi)) {
      return std::unexpected(file.error(
          inv, ErrorKind::OutOfRange,
          "tensor " + quote(inv.name) + ": row " + with_commas(i) + "'s 1 / sum is " + number_text(v) +
              "; it lies from 1/" + with_commas(n) + " to 1 (a sum of at most " + with_commas(n) +
              " exponentials, the largest of them 1), or is NaN with its shift for a row of non-finite scores"));
    }
  }
  return nan_rows;
}

// What the checksums cannot see (they are of whatever bytes the writer had): whether the head's row statistics are
// what a forward writes (check_row_statistics), and whether its queries and keys give them, as the layout's mask
// (causal, window) and soft cap say. Checked once, when the head is first shown, after its checksums. A row whose
// query, or a key it sees, holds a non-finite value must be a NaN row; and a few rows (the first ones, where a causal
// and a bidirectional mask differ most, and some further on) are recomputed: their largest score must be the stored
// shift and their exponentials must sum to 1 / the stored 1 / sum. A flipped "causal" flag, altered queries or
// statistics fail here, before anything is drawn from them.
Result<void> check_head_rows(const SafeTensors& file, const HeadRows& h) {
  const Index n = h.tokens, D = h.dim;
  if (auto stats = check_row_statistics(file, *h.shift, *h.inv_sum, n); !stats) return std::unexpected(stats.error());
  const auto* q = reinterpret_cast<const float*>(file.bytes(*h.queries).data());
  const auto* k = reinterpret_cast<const float*>(file.bytes(*h.keys).data());
  const auto first_key = [&](Index row) {
    return h.causal && h.window > 0 ? std::max<Index>(0, row - h.window + 1) : 0;
  };
  const auto last_key = [&](Index row) { return h.causal ? row : n - 1; };
  const auto finite_row = [&](const float* p) {
    return std::all_of(p, p + D, [](float x) { return std::isfinite(x); });
  };
  const auto nan_row = [&](Index i) { return std::isnan(float_at(file, *h.inv_sum, i)); };
  const auto unmatched = [&](const TensorInfo& t, Index row, Index stats_row) {
    return std::unexpected(file.error(t, ErrorKind::Mismatch,
                                      "tensor " + quote(t.name) + ": row " + with_commas(row) +
                                          " holds a non-finite value, but row " + with_commas(stats_row) +
                                          "'s statistics (" + quote(h.shift->name) + ", " + quote(h.inv_sum->name) +
                                          ") are finite: they were not computed from these queries and keys"));
  };
  for (Index i = 0; i < n; ++i) {
    if (!finite_row(q + i * D) && !nan_row(i)) return unmatched(*h.queries, i, i);
  }
  for (Index j = 0; j < n; ++j) {
    const Index sees = h.causal ? j : 0;  // the first row that sees key j
    if (!finite_row(k + j * D) && !nan_row(sees)) return unmatched(*h.keys, j, sees);
  }
  std::set<Index> sample;
  for (const Index r : {Index{0}, Index{1}, Index{2}, n / 4, n / 2, 3 * n / 4, n - 1}) {
    if (r >= 0 && r < n) sample.insert(r);
  }
  for (const Index i : sample) {
    if (nan_row(i)) continue;
    const double shift = float_at(file, *h.shift, i), inv = float_at(file, *h.inv_sum, i);
    const Index lo = first_key(i), hi = last_key(i);
    std::vector<double> scores;
    double magnitude = 0;  // how large the terms of the products are: the forward's float rounding scales with it
    for (Index j = lo; j <= hi; ++j) {
      double dot = 0, abs = 0;
      for (Index d = 0; d < D; ++d) {
        dot += static_cast<double>(q[i * D + d]) * static_cast<double>(k[j * D + d]);
        abs += std::abs(static_cast<double>(q[i * D + d]) * static_cast<double>(k[j * D + d]));
      }
      if (h.softcap > 0) dot = h.softcap * std::tanh(dot / h.softcap);
      scores.push_back(dot);
      magnitude = std::max(magnitude, abs);
    }
    const double largest = *std::max_element(scores.begin(), scores.end());
    double sum = 0;
    for (const double x : scores) sum += std::exp(x - shift);
    const bool shift_ok = std::abs(largest - shift) <= 1e-3 * (1.0 + magnitude);
    const bool sum_ok = std::abs(sum * inv - 1.0) <= 1e-2;
    if (!shift_ok || !sum_ok) {
      return std::unexpected(file.error(
          *h.shift, ErrorKind::Mismatch,
          "row " + with_commas(i) + " of " + quote(h.shift->name) + " and " + quote(h.inv_sum->name) + " (shift " +
              number_text(shift) + ", 1 / sum " + number_text(inv) + ") are not those of its scores over keys " +
              with_commas(lo) + " to " + with_commas(hi) + " (largest " + number_text(largest) + ", 1 / sum " +
              number_text(1.0 / (sum * std::exp(shift - largest))) +
              "), as the layout's \"causal\": " + (h.causal ? "true" : "false") + " and window " +
              with_commas(h.window) + " give them: the layout or the rows were altered"));
    }
  }
  return {};
}

// The overview's side for n tokens, and the number of tensors named "layer.", checked against the layout before
// anything is looked up, so a layout claiming more than the file holds is refused at once.
Result<void> check_layout_fits(const SafeTensors& st, const DumpLayout& L, Index n) {
  const std::string& file = st.name();
  const Index factor = L.overview_factor, side = (n + factor - 1) / factor;
  if (side > 4 * kOverviewCells) {
    return fail(ErrorKind::OutOfRange,
                "metadata \"layout\": an overview factor of " + std::to_string(factor) + " gives overviews of " +
                    with_commas(side) + " x " + with_commas(side) + " cells for " + with_commas(n) +
                    " tokens (at most " + std::to_string(4 * kOverviewCells) + ")",
                file, kDumpHeaderOffset);
  }
  // Every tensor of the layout, and nothing else named "layer.".
  const std::int64_t per_layer = std::int64_t{5} * L.heads + L.kv_heads + 1;
  std::int64_t named = 0;
  for (const TensorInfo& t : st.tensors()) named += t.name.starts_with("layer.") ? 1 : 0;
  if (named != per_layer * L.layers) {
    return fail(ErrorKind::Mismatch,
                "the layout (" + std::to_string(L.layers) + " layers of " + std::to_string(L.heads) + " heads over " +
                    std::to_string(L.kv_heads) + " key heads) needs " + with_commas(per_layer * L.layers) +
                    " tensors named layer.*; the file has " + with_commas(named),
                file, kDumpHeaderOffset);
  }
  return {};
}

// The tensors of an opened version-2 dump, each looked up as the layout needs it: its dtype and shape, a
// checksum for it, its alignment in the file.
struct DumpTensors {
  std::shared_ptr<LazyChecks> checks;  // its file's TensorInfos outlive the SafeTensors opened: the checks keep them
  DumpLayout layout;
  Index tokens = 0, overview_side = 0;

  const SafeTensors& mapped() const { return checks->file; }
  const float* floats(const TensorInfo* t) const { return reinterpret_cast<const float*>(mapped().bytes(*t).data()); }

  Result<const TensorInfo*> find(const std::string& name, DType dtype, const std::vector<std::int64_t>& shape) const {
    const SafeTensors& m = mapped();
    const TensorInfo* t = m.find(name);
    if (!t) {
      return fail(ErrorKind::Malformed, "no tensor " + quote(name) + ", which the layout needs", m.name(),
                  kDumpHeaderOffset);
    }
    if (t->dtype != dtype || t->shape != shape) {
      return std::unexpected(m.error(*t, ErrorKind::Mismatch,
                                     "tensor " + quote(name) + " is " + std::string(to_string(t->dtype)) + " " +
                                         shape_text(t->shape) + "; the layout needs " + std::string(to_string(dtype)) +
                                         " " + shape_text(shape)));
    }
    if (!checks->crc.contains(name)) {
      return fail(ErrorKind::Malformed, "metadata \"crc32\" has no checksum for tensor " + quote(name), m.name(),
                  kDumpHeaderOffset);
    }
    if (reinterpret_cast<std::uintptr_t>(m.bytes(*t).data()) % dtype_size(dtype) != 0) {
      return std::unexpected(m.error(
          *t, ErrorKind::Unsupported,
          "tensor " + quote(name) + " is not aligned to " + std::to_string(dtype_size(dtype)) + " bytes in the file"));
    }
    return t;
  }
};

// One layer as it is read: the memory it keeps, the tensors each head checks before it is read, its heads'
// statistics (from the layer's table, checked when read).
struct LayerParts {
  OnDemandLayer::External ext;
  std::vector<std::vector<const TensorInfo*>> lazy;  // per head
  std::vector<HeadRows> rows;                        // per head
  std::vector<const TensorInfo*> keys;               // per key group
  const TensorInfo* stats_tensor = nullptr;
  std::vector<double> table;  // heads x kStatsColumns
  std::vector<StreamedHeadStats> stats;
};

// The keys of every group of layer l, and its statistics table (checked at once: it is small).
Result<void> read_keys_and_stats(const DumpTensors& in, int l, LayerParts& parts) {
  const DumpLayout& L = in.layout;
  parts.keys.resize(static_cast<std::size_t>(L.kv_heads));
  for (int g = 0; g < L.kv_heads; ++g) {
    auto k = in.find(group_tensor(l, g), DType::F32, {in.tokens, L.head_dim});
    if (!k) return std::unexpected(k.error());
    parts.keys[static_cast<std::size_t>(g)] = *k;
    parts.ext.keys.push_back(in.floats(*k));
  }
  auto stats_tensor = in.find(layer_tensor(l, "stats"), DType::F64, {L.heads, kStatsColumns});
  if (!stats_tensor) return std::unexpected(stats_tensor.error());
  if (auto ok = in.checks->check(**stats_tensor); !ok) return std::unexpected(ok.error());
  parts.stats_tensor = *stats_tensor;
  parts.table.resize(static_cast<std::size_t>(L.heads * kStatsColumns));
  std::memcpy(parts.table.data(), in.mapped().bytes(**stats_tensor).data(), parts.table.size() * sizeof(double));
  return {};
}

// Head h of layer l: its queries, softmax statistics, received attention and overview, and its row of the table.
Result<void> read_head(const DumpTensors& in, int l, int h, LayerParts& parts, std::vector<std::string>& warnings) {
  const DumpLayout& L = in.layout;
  const Index n = in.tokens;
  auto q = in.find(head_tensor(l, h, "queries"), DType::F32, {n, L.head_dim});
  if (!q) return std::unexpected(q.error());
  auto shift = in.find(head_tensor(l, h, "shift"), DType::F32, {n});
  if (!shift) return std::unexpected(shift.error());
  auto inv = in.find(head_tensor(l, h, "inv_sum"), DType::F32, {n});
  if (!inv) return std::unexpected(inv.error());
  auto received = in.find(head_tensor(l, h, "received"), DType::F32, {n});
  if (!received) return std::unexpected(received.error());
  auto overview = in.find(head_tensor(l, h, "overview"), DType::F16, {in.overview_side, in.overview_side});
  if (!overview) return std::unexpected(overview.error());
  for (const TensorInfo* t : {*received, *overview}) {
    if (auto ok = in.checks->check(*t); !ok) return std::unexpected(ok.error());
  }
  // Rows of non-finite scores, for the warning version 1 gives of NaN maps (the rows themselves are checked, with
  // their checksums, when the head is first shown: check_head_rows).
  std::int64_t nan_rows = 0;
  for (Index i = 0; i < n; ++i) {
    nan_rows += std::isnan(float_at(in.mapped(), **shift, i)) && std::isnan(float_at(in.mapped(), **inv, i)) ? 1 : 0;
  }
  if (nan_rows > 0) {
    warnings.push_back(in.mapped().name() + ": layer " + std::to_string(l) + " head " + std::to_string(h) + " has " +
                       with_commas(nan_rows) + " row" + (nan_rows == 1 ? "" : "s") + " of " + with_commas(n) +
                       " with non-finite scores (NaN weights); its maps are marked as not finite");
  }
  const TensorInfo* keys = parts.keys[static_cast<std::size_t>(h / (L.heads / L.kv_heads))];
  parts.rows[static_cast<std::size_t>(h)] =
      HeadRows{*q, keys, *shift, *inv, n, L.head_dim, L.windows[static_cast<std::size_t>(l)], L.causal, L.softcap};
  parts.ext.queries.push_back(in.floats(*q));
  parts.ext.shifts.push_back(in.floats(*shift));
  parts.ext.inv_sums.push_back(in.floats(*inv));
  parts.ext.overviews.push_back(reinterpret_cast<const Eigen::half*>(in.mapped().bytes(**overview).data()));
  parts.lazy[static_cast<std::size_t>(h)] = {*q, *shift, *inv,
                                             parts.keys[static_cast<std::size_t>(h / (L.heads / L.kv_heads))]};

  StreamedHeadStats& s = parts.stats[static_cast<std::size_t>(h)];
  const double* row = parts.table.data() + h * kStatsColumns;
  s.entropy = row[0];
  s.distance = row[1];
  s.first_mass = row[2];
  s.max_weight = static_cast<float>(row[3]);
  if (row[4] != static_cast<double>(n)) {
    return std::unexpected(in.mapped().error(*parts.stats_tensor, ErrorKind::Mismatch,
                                             "tensor " + quote(parts.stats_tensor->name) + ": head " +
                                                 std::to_string(h) + " counts " + json(row[4]).dump() + " rows for " +
                                                 with_commas(n) + " tokens"));
  }
  s.rows = n;
  s.received.assign(in.floats(*received), in.floats(*received) + n);
  return {};
}

// Layer l over the mapped file, added to `layers`.
Result<void> read_dump_layer(const DumpTensors& in, int l, std::vector<OnDemandLayer>& layers,
                             std::vector<std::string>& warnings) {
  const DumpLayout& L = in.layout;
  LayerParts parts;
  parts.ext.keeper = in.mapped().keeper();
  parts.ext.overview_factor = L.overview_factor;
  parts.ext.overview_side = in.overview_side;
  parts.lazy.resize(static_cast<std::size_t>(L.heads));
  parts.stats.resize(static_cast<std::size_t>(L.heads));
  parts.rows.resize(static_cast<std::size_t>(L.heads));
  if (auto ok = read_keys_and_stats(in, l, parts); !ok) return ok;
  for (int h = 0; h < L.heads; ++h) {
    if (auto ok = read_head(in, l, h, parts, warnings); !ok) return ok;
  }
  // Every call (each time a view shows the head) asks whether the mapped file is still as it was opened: the checksums
  // and rows are checked once, but another process may truncate the file at any time after.
  parts.ext.check = [checks = in.checks, lazy = std::move(parts.lazy), rows = std::move(parts.rows),
                     l](int head) -> Result<void> {
    if (auto ok = checks->file.intact(); !ok) return ok;
    for (const TensorInfo* t : lazy[static_cast<std::size_t>(head)]) {
      if (auto ok = checks->check(*t); !ok) return checks->file.intact() ? ok : checks->file.intact();
    }
    if (auto ok = checks->rows(l, head, rows[static_cast<std::size_t>(head)]); !ok) {
      return checks->file.intact() ? ok : checks->file.intact();
    }
    return checks->file.intact();
  };
  layers.emplace_back(L.heads, L.kv_heads, L.head_dim, in.tokens, L.causal, L.windows[static_cast<std::size_t>(l)],
                      L.softcap, std::move(parts.ext), std::move(parts.stats));
  return {};
}

}  // namespace

Index dump_overview_factor(Index tokens) {
  Index f = 1;
  while ((tokens + f - 1) / f > kOverviewCells) f *= 2;
  return f;
}

namespace dump_format {

Result<void> read_on_demand_layers(const SafeTensors& st, AttentionDump& dump) {
  const std::string& file = st.name();
  auto layout = read_layout(st.metadata(), file);
  if (!layout) return std::unexpected(layout.error());
  auto crc = read_checksums(st.metadata(), file);
  if (!crc) return std::unexpected(crc.error());
  const Index n = static_cast<Index>(dump.trace.tokens.size());
  if (auto ok = check_layout_fits(st, *layout, n); !ok) return ok;
  DumpTensors in;
  in.checks = std::make_shared<LazyChecks>();
  in.checks->file = st;
  in.checks->crc = std::move(*crc);
  in.layout = std::move(*layout);
  in.tokens = n;
  in.overview_side = (n + in.layout.overview_factor - 1) / in.layout.overview_factor;
  dump.on_demand.reserve(static_cast<std::size_t>(in.layout.layers));
  for (int l = 0; l < in.layout.layers; ++l) {
    if (auto ok = read_dump_layer(in, l, dump.on_demand, dump.warnings); !ok) return ok;
  }
  return {};
}

}  // namespace dump_format

Result<void> write_attention_dump(const std::filesystem::path& path, const LayeredTrace& trace,
                                  const std::vector<OnDemandLayer>& layers, const std::string& model,
                                  const std::vector<int>& ids,
                                  const std::function<bool(double, const std::string&)>& progress,
                                  const Matrix* logits) {
  const std::string file = path.string();
  auto metadata = dump_format::dump_metadata(trace, model, ids, file, kOnDemandVersion);
  if (!metadata) return std::unexpected(metadata.error());
  if (layers.empty())
    return fail(ErrorKind::OutOfRange, "nothing to write: the run has no layers kept on demand", file);
  const OnDemandLayer& first = layers.front();
  const Index n = static_cast<Index>(trace.tokens.size());
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const OnDemandLayer& layer = layers[l];
    if (layer.tokens() != n || layer.heads() != first.heads() || layer.kv_heads() != first.kv_heads() ||
        layer.head_dim() != first.head_dim() || layer.causal() != first.causal() ||
        layer.softcap() != first.softcap()) {
      return fail(ErrorKind::Mismatch,
                  "layer " + std::to_string(l) + " has " + std::to_string(layer.heads()) + " heads of " +
                      std::to_string(layer.head_dim()) + " over " + with_commas(layer.tokens()) +
                      " tokens; a version-2 dump's layers are alike, with one row per token (" + with_commas(n) + ")",
                  file);
    }
    for (int h = 0; h < layer.heads(); ++h) {
      if (auto ok = layer.verify(h); !ok) return std::unexpected(ok.error());
    }
  }
  const int H = first.heads(), G = first.kv_heads();
  const Index D = first.head_dim(), factor = dump_overview_factor(n), side = (n + factor - 1) / factor;

  // The overviews: a whole map per head, the time this takes.
  std::vector<std::vector<Eigen::half>> overviews;
  std::vector<std::vector<double>> stats;
  std::vector<float> pooled(static_cast<std::size_t>(side * side));
  const double total = static_cast<double>(layers.size()) * H;
  for (std::size_t l = 0; l < layers.size(); ++l) {
    std::vector<double>& table = stats.emplace_back(static_cast<std::size_t>(H * kStatsColumns));
    for (int h = 0; h < H; ++h) {
      layers[l].pooled(h, factor, OnDemandLayer::Pooling::Max, 0, side, 0, side, pooled.data(), side);
      auto& cells = overviews.emplace_back(pooled.size());
      std::transform(pooled.begin(), pooled.end(), cells.begin(), [](float w) { return Eigen::half(w); });
      const StreamedHeadStats& s = layers[l].stats(h);
      double* row = table.data() + h * kStatsColumns;
      row[0] = s.entropy;
      row[1] = s.distance;
      row[2] = s.first_mass;
      row[3] = s.max_weight;
      row[4] = static_cast<double>(s.rows);
      const double done = (static_cast<double>(l) * H + h + 1) / total;
      if (progress && !progress(done, "overview of layer " + std::to_string(l) + " head " + std::to_string(h))) {
        return fail(ErrorKind::Cancelled, "cancelled", file);
      }
    }
  }

  std::vector<TensorData> tensors;
  const auto add = [&](std::string name, std::vector<std::int64_t> shape, DType dtype,
                       std::span<const std::byte> data) {
    tensors.push_back(TensorData{std::move(name), dtype, std::move(shape), data});
  };
  const auto f32 = [](const float* p, Index count) {
    return std::as_bytes(std::span<const float>(p, static_cast<std::size_t>(count)));
  };
  for (std::size_t li = 0; li < layers.size(); ++li) {
    const OnDemandLayer& layer = layers[li];
    const int l = static_cast<int>(li);
    add(layer_tensor(l, "stats"), {H, kStatsColumns}, DType::F64, std::as_bytes(std::span<const double>(stats[li])));
    for (int g = 0; g < G; ++g) add(group_tensor(l, g), {n, D}, DType::F32, f32(layer.key(g, 0), n * D));
    for (int h = 0; h < H; ++h) {
      add(head_tensor(l, h, "queries"), {n, D}, DType::F32, f32(layer.query(h, 0), n * D));
      add(head_tensor(l, h, "shift"), {n}, DType::F32, f32(layer.shifts(h), n));
      add(head_tensor(l, h, "inv_sum"), {n}, DType::F32, f32(layer.inv_sums(h), n));
      add(head_tensor(l, h, "received"), {n}, DType::F32, f32(layer.stats(h).received.data(), n));
      add(head_tensor(l, h, "overview"), {side, side}, DType::F16,
          std::as_bytes(
              std::span<const Eigen::half>(overviews[li * static_cast<std::size_t>(H) + static_cast<std::size_t>(h)])));
    }
  }
  if (auto ok = dump_format::add_logits(logits, n, file, tensors); !ok) return ok;
  json crc = json::object();
  for (const TensorData& t : tensors) crc[t.name] = hex8(crc_of(t.data));
  std::vector<Index> windows;
  for (const OnDemandLayer& layer : layers) windows.push_back(layer.window());
  (*metadata)["layout"] = json{
      {"layers", layers.size()},
      {"heads", H},
      {"kv_heads", G},
      {"head_dim", D},
      {"causal", first.causal()},
      {"windows", windows},
      {"softcap", first.softcap()},
      {"overview_factor",
       factor}}.dump();
  (*metadata)["crc32"] = crc.dump();
  return write_safetensors(path, tensors, *metadata);
}

}  // namespace attn::io
