#include "attn/io/attention_dump.h"

#include "attn/io/safetensors.h"

#include "../core/json_config.h"
#include "../core/try.h"
#include "attention_dump_parts.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <set>

namespace attn::io {

namespace {

using json = nlohmann::json;
using detail::quote;

using dump_format::kDumpFormat;
constexpr std::string_view kDumpVersion = "1";
using dump_format::kOnDemandVersion;
constexpr std::string_view kPrefix = "attn.";
constexpr std::int64_t kHeaderOffset = dump_format::kDumpHeaderOffset;
// More heads than any published model has; the maps' sizes themselves are bounded by the file's bytes.
constexpr std::int64_t kMaxHeads = 4096;

std::optional<Stage> dump_stage(std::string_view s) {
  if (s == "encoder") return Stage::Encoder;
  if (s == "decoder") return Stage::Decoder;
  if (s == "cross") return Stage::Cross;
  return std::nullopt;
}

int stage_order(Stage s) { return s == Stage::Encoder ? 0 : s == Stage::Decoder ? 1 : 2; }

std::string tensor_name(Stage stage, int layer) {
  return std::string(kPrefix) + std::string(to_string(stage)) + "." + std::to_string(layer);
}

// A canonical non-negative decimal ("0", "12"; not "012", "+1", "1e2").
std::optional<int> layer_number(std::string_view s) {
  if (s.empty() || (s.size() > 1 && s[0] == '0')) return std::nullopt;
  int v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

// Finite weights below 0 or above 1 (with a little slack for rounding, more for F16): a softmax never gives
// them, so the dump holds something else (scores, logits) or is broken.
struct OutsideUnit {
  std::int64_t count = 0;
  float lo = 0.0f, hi = 0.0f;  // the smallest and largest of those weights
};

OutsideUnit outside_unit(const HeadStack& maps) {
  const float slack = maps.precision() == Precision::F16 ? 1e-3f : 1e-5f;
  const auto n = static_cast<std::size_t>(maps.rows()) * static_cast<std::size_t>(maps.cols());
  OutsideUnit out;
  const auto check = [&](float v) {
    if (!std::isfinite(v) || (v >= -slack && v <= 1.0f + slack)) return;
    out.lo = out.count == 0 ? v : std::min(out.lo, v);
    out.hi = out.count == 0 ? v : std::max(out.hi, v);
    ++out.count;
  };
  for (int h = 0; h < maps.heads(); ++h) {
    if (maps.precision() == Precision::F32) {
      const float* p = maps.f32(h);
      for (std::size_t i = 0; i < n; ++i) check(p[i]);
    } else {
      const Eigen::half* p = maps.f16(h);
      for (std::size_t i = 0; i < n; ++i) check(static_cast<float>(p[i]));
    }
  }
  return out;
}

// 4 significant digits: -3.25, 1e+30.
std::string short_number(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", static_cast<double>(v));
  return buf;
}

Result<Labels> string_list(const std::map<std::string, std::string>& metadata, const std::string& key,
                           const std::string& file) {
  const auto it = metadata.find(key);
  if (it == metadata.end()) return Labels{};
  auto parsed = detail::parse_json(it->second, file, kHeaderOffset);
  if (!parsed) {
    return fail(parsed.error().kind, "metadata " + quote(key) + " is not a JSON array of strings", file, kHeaderOffset);
  }
  const json& value = *parsed;
  if (!value.is_array()) {
    return fail(ErrorKind::Malformed, "metadata " + quote(key) + " is not a JSON array of strings", file,
                kHeaderOffset);
  }
  Labels out;
  out.reserve(value.size());
  for (std::size_t i = 0; i < value.size(); ++i) {
    if (!value[i].is_string()) {
      return fail(
          ErrorKind::Malformed,
          "metadata " + quote(key) + " entry " + std::to_string(i) + " is " + value[i].type_name() + ", not a string",
          file, kHeaderOffset);
    }
    out.push_back(value[i].get<std::string>());
  }
  return out;
}

// A per-token metadata entry ("ids", "spans"): absent (empty), or a JSON array with one entry per token, each
// read by `read` (nullopt: refused, naming the entry). `what` says what the array holds.
template <class T, class Read>
Result<std::vector<T>> per_token_list(const std::map<std::string, std::string>& metadata, const std::string& key,
                                      const std::string& what, std::size_t tokens, const std::string& file,
                                      const Read& read) {
  const auto it = metadata.find(key);
  if (it == metadata.end()) return std::vector<T>{};
  const auto bad = [&](ErrorKind kind, const std::string& why) {
    return fail(kind, "metadata \"" + key + "\" " + why + "; it is a JSON array of " + what + ", one per token", file,
                kHeaderOffset);
  };
  auto parsed = detail::parse_json(it->second, file, kHeaderOffset);
  if (!parsed)
    return bad(parsed.error().kind, parsed.error().kind == ErrorKind::TooLarge ? "nests too deep" : "is not JSON");
  const json& value = *parsed;
  if (!value.is_array()) return bad(ErrorKind::Malformed, "is not an array");
  if (value.size() != tokens) {
    return bad(ErrorKind::Mismatch,
               "has " + std::to_string(value.size()) + " entries for " + std::to_string(tokens) + " tokens");
  }
  std::vector<T> out;
  for (std::size_t i = 0; i < value.size(); ++i) {
    const std::optional<T> entry = read(value[i]);
    if (!entry) return bad(ErrorKind::Malformed, "entry " + std::to_string(i) + " is " + value[i].dump());
    out.push_back(*entry);
  }
  return out;
}

// A whole number in 0 .. INT32_MAX.
std::optional<std::int32_t> small_whole(const json& v) {
  if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > INT32_MAX) return std::nullopt;
  return static_cast<std::int32_t>(v.get<std::int64_t>());
}

// "ids": one whole number from 0 per token, or absent.
Result<std::vector<int>> id_list(const std::map<std::string, std::string>& metadata, std::size_t tokens,
                                 const std::string& file) {
  return per_token_list<int>(metadata, "ids", "token ids", tokens, file,
                             [](const json& v) -> std::optional<int> { return small_whole(v); });
}

// "spans": one [begin, end] byte span per token, or absent.
Result<std::vector<Span>> span_list(const std::map<std::string, std::string>& metadata, std::size_t tokens,
                                    const std::string& file) {
  return per_token_list<Span>(metadata, "spans", "[begin, end] byte spans", tokens, file,
                              [](const json& s) -> std::optional<Span> {
                                if (!s.is_array() || s.size() != 2) return std::nullopt;
                                const auto begin = small_whole(s[0]), end = small_whole(s[1]);
                                if (!begin || !end || *begin > *end) return std::nullopt;
                                return Span{*begin, *end};
                              });
}

// The first missing layer when the layers of a stage are not numbered 0, 1, ... without gaps.
// A set of layer numbers as a short line however many there are: "3 layers: 0, 1 and 3", or
// "100,000 layers: 1 to 100,000", or the first runs and how many more: "..., 8 to 9 and 4,996 more runs".
std::string number_ranges(const std::set<int>& numbers) {
  std::vector<std::pair<int, int>> runs;
  for (const int n : numbers) {
    if (!runs.empty() && runs.back().second + 1 == n) {
      runs.back().second = n;
    } else {
      runs.emplace_back(n, n);
    }
  }
  constexpr std::size_t kShown = 4;
  std::string out =
      with_commas(static_cast<long long>(numbers.size())) + (numbers.size() == 1 ? " layer: " : " layers: ");
  for (std::size_t i = 0; i < runs.size() && i < kShown; ++i) {
    if (i > 0) out += i + 1 == runs.size() ? " and " : ", ";
    const auto [first, last] = runs[i];
    out += first == last ? with_commas(first) : with_commas(first) + " to " + with_commas(last);
  }
  if (runs.size() > kShown) out += " and " + with_commas(static_cast<long long>(runs.size() - kShown)) + " more runs";
  return out;
}

std::optional<std::string> missing_layer(const std::vector<LayerAttention>& layers) {
  std::map<int, std::pair<Stage, std::set<int>>> by_stage;
  for (const auto& l : layers) {
    auto& [stage, numbers] = by_stage[stage_order(l.stage)];
    stage = l.stage;
    numbers.insert(l.layer);
  }
  for (const auto& [order, entry] : by_stage) {
    const auto& [stage, numbers] = entry;
    int expected = 0;
    for (const int n : numbers) {
      if (n != expected) {
        return tensor_name(stage, expected) +
               " is missing: the layers of a stage are numbered from 0 without gaps (found " + number_ranges(numbers) +
               ")";
      }
      ++expected;
    }
  }
  return std::nullopt;
}

}  // namespace

bool is_attention_dump_name(const std::filesystem::path& path) {
  std::string name = path.filename().string();
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return name.ends_with(".attn.safetensors");
}

namespace {

// "format" and "version", when given, name an attention dump this reader knows; true for a version-2
// (on-demand) dump.
Result<bool> read_format_version(const std::map<std::string, std::string>& metadata, const std::string& file) {
  if (const auto it = metadata.find("format"); it != metadata.end() && it->second != kDumpFormat) {
    return fail(
        ErrorKind::Unsupported,
        "metadata \"format\" is " + quote(it->second) + ", not " + quote(kDumpFormat) + ": not an attention dump", file,
        kHeaderOffset);
  }
  const auto version = metadata.find("version");
  if (version != metadata.end() && version->second != kDumpVersion && version->second != kOnDemandVersion) {
    return fail(ErrorKind::Unsupported,
                "attention dump version " + quote(version->second) + "; this AttnScope reads versions " +
                    std::string(kDumpVersion) + " and " + std::string(kOnDemandVersion),
                file, kHeaderOffset);
  }
  return version != metadata.end() && version->second == kOnDemandVersion;
}

// The tokens and what comes with them: the cross-attention rows, the byte spans, the model's name, the ids.
Result<void> read_token_lists(const std::map<std::string, std::string>& metadata, const std::string& file,
                              AttentionDump& dump) {
  if (!metadata.contains("tokens")) {
    return fail(ErrorKind::Malformed,
                "no \"tokens\" in the metadata: an attention dump lists its tokens in __metadata__ as a JSON array "
                "of strings",
                file, kHeaderOffset);
  }
  LayeredTrace& trace = dump.trace;
  auto tokens = string_list(metadata, "tokens", file);
  if (!tokens) return std::unexpected(tokens.error());
  if (tokens->empty()) return fail(ErrorKind::Malformed, "metadata \"tokens\" is empty", file, kHeaderOffset);
  trace.tokens = std::move(*tokens);
  auto cross_rows = string_list(metadata, "cross_rows", file);
  if (!cross_rows) return std::unexpected(cross_rows.error());
  trace.cross_rows = std::move(*cross_rows);
  auto spans = span_list(metadata, trace.tokens.size(), file);
  if (!spans) return std::unexpected(spans.error());
  trace.spans = std::move(*spans);
  if (const auto it = metadata.find("model"); it != metadata.end()) dump.model = it->second;
  auto ids = id_list(metadata, trace.tokens.size(), file);
  if (!ids) return std::unexpected(ids.error());
  dump.ids = std::move(*ids);
  return {};
}

// The dimensions of one tensor of maps: [heads, rows, cols], [rows, cols] (one head) or [1, heads, rows, cols].
struct MapShape {
  std::int64_t heads = 1, rows = 0, cols = 0;
};

// The stage, layer and shape of an attn.<stage>.<layer> tensor, checked against the tokens of the metadata.
Result<MapShape> read_map_shape(const SafeTensors& st, const TensorInfo& t, Stage stage, const LayeredTrace& trace) {
  const auto bad = [&](ErrorKind kind, const std::string& why) {
    return std::unexpected(st.error(t, kind, "tensor " + quote(t.name) + ": " + why));
  };
  if (t.dtype != DType::F32 && t.dtype != DType::F16 && t.dtype != DType::BF16 && t.dtype != DType::F64) {
    return bad(ErrorKind::Unsupported,
               "dtype " + std::string(to_string(t.dtype)) + "; attention maps are F32, F16, BF16 or F64");
  }
  const auto& s = t.shape;
  MapShape shape;
  if (s.size() == 2) {
    shape.rows = s[0];
    shape.cols = s[1];
  } else if (s.size() == 3 || (s.size() == 4 && s[0] == 1)) {
    shape.heads = s[s.size() - 3];
    shape.rows = s[s.size() - 2];
    shape.cols = s[s.size() - 1];
  } else {
    std::string dims;
    for (const auto d : s) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
    return bad(ErrorKind::Malformed,
               "shape [" + dims + "]; an attention map is [heads, rows, cols], [rows, cols] or [1, heads, rows, cols]");
  }
  if (shape.heads < 1) return bad(ErrorKind::OutOfRange, std::to_string(shape.heads) + " heads");
  if (shape.heads > kMaxHeads) {
    return bad(ErrorKind::TooLarge,
               std::to_string(shape.heads) + " heads; at most " + std::to_string(kMaxHeads) + " are read");
  }
  const bool cross = stage == Stage::Cross;
  if (cross && trace.cross_rows.empty()) {
    return bad(ErrorKind::Malformed, "cross attention needs its rows' tokens in the metadata as \"cross_rows\"");
  }
  const auto n_tokens = static_cast<std::int64_t>(trace.tokens.size());
  const std::int64_t want_rows = cross ? static_cast<std::int64_t>(trace.cross_rows.size()) : n_tokens;
  if (shape.rows != want_rows || shape.cols != n_tokens) {
    return bad(ErrorKind::Mismatch, "maps of " + std::to_string(shape.rows) + " x " + std::to_string(shape.cols) +
                                        " but the metadata lists " + std::to_string(want_rows) +
                                        (cross ? " cross_rows" : " tokens") + " x " + std::to_string(n_tokens) +
                                        " tokens");
  }
  return shape;
}

// The maps of one tensor. F32 and F16 maps are views of the mapped file, not copies: a 1 GiB dump costs the
// pages a view reads. (safetensors aligns nothing; a tensor at an odd offset, and BF16 or F64, are converted.)
Result<HeadStack> read_maps(const SafeTensors& st, const TensorInfo& t, const MapShape& shape) {
  const auto bad = [&](ErrorKind kind, const std::string& why) {
    return std::unexpected(st.error(t, kind, "tensor " + quote(t.name) + ": " + why));
  };
  const auto [heads, rows, cols] = shape;
  const auto bytes = st.bytes(t);
  const auto aligned = [&](std::size_t size) { return reinterpret_cast<std::uintptr_t>(bytes.data()) % size == 0; };
  try {
    if (t.dtype == DType::F32 && aligned(sizeof(float))) {
      return HeadStack::view(static_cast<int>(heads), rows, cols, Precision::F32, st.keeper(), bytes.data());
    }
    if (t.dtype == DType::F16 && aligned(sizeof(Eigen::half))) {
      return HeadStack::view(static_cast<int>(heads), rows, cols, Precision::F16, st.keeper(), bytes.data());
    }
    if (t.dtype == DType::F16) {
      HeadStack maps(static_cast<int>(heads), rows, cols, Precision::F16);
      if (!bytes.empty()) std::memcpy(maps.f16(0), bytes.data(), bytes.size());
      return maps;
    }
    HeadStack maps(static_cast<int>(heads), rows, cols, Precision::F32);
    const auto n = static_cast<std::size_t>(heads * rows * cols);
    if (!convert_to_float(t.dtype, bytes, std::span<float>(maps.f32(0), n))) {
      return bad(ErrorKind::Mismatch, "could not convert the data");
    }
    return maps;
  } catch (const std::bad_alloc&) {
    return bad(ErrorKind::TooLarge, "not enough memory for " + std::to_string(heads) + " maps of " +
                                        std::to_string(rows) + " x " + std::to_string(cols));
  }
}

// Warnings for weights no softmax gives: outside [0, 1], or not finite.
void warn_about_weights(const std::string& file, const TensorInfo& t, const HeadStack& maps,
                        std::vector<std::string>& warnings) {
  if (const OutsideUnit outside = outside_unit(maps); outside.count > 0) {
    warnings.push_back(file + ": " + t.name + " holds " + std::to_string(outside.count) + " weight" +
                       (outside.count == 1 ? "" : "s") + " outside [0, 1] (from " + short_number(outside.lo) + " to " +
                       short_number(outside.hi) +
                       "): these are not attention probabilities (scores or logits?), and the colours show "
                       "their range, not a distribution");
  }
  if (const std::int64_t bad = maps.nonfinite(); bad > 0) {
    const auto cells = static_cast<std::int64_t>(maps.heads()) * maps.rows() * maps.cols();
    warnings.push_back(file + ": " + t.name + " holds " + std::to_string(bad) + " non-finite weight" +
                       (bad == 1 ? "" : "s") + " (NaN or infinite) of " + std::to_string(cells) +
                       "; its maps are marked as not finite");
  }
}

// One attn.<stage>.<layer> tensor of a version-1 dump, added to the dump's trace.
Result<void> read_layer_tensor(const SafeTensors& st, const TensorInfo& t, AttentionDump& dump) {
  const std::string_view rest = std::string_view(t.name).substr(kPrefix.size());
  const auto dot = rest.find('.');
  const auto stage = dot == std::string_view::npos ? std::nullopt : dump_stage(rest.substr(0, dot));
  const auto layer = dot == std::string_view::npos ? std::nullopt : layer_number(rest.substr(dot + 1));
  if (!stage || !layer) {
    return std::unexpected(st.error(
        t, ErrorKind::Malformed,
        "tensor " + quote(t.name) +
            ": an attention map is named attn.<stage>.<layer>, stage encoder, decoder or cross and layer 0, 1, ..."));
  }
  const auto shape = read_map_shape(st, t, *stage, dump.trace);
  if (!shape) return std::unexpected(shape.error());
  auto maps = read_maps(st, t, *shape);
  if (!maps) return std::unexpected(maps.error());
  warn_about_weights(st.name(), t, *maps, dump.warnings);
  LayerAttention layer_maps;
  layer_maps.stage = *stage;
  layer_maps.layer = *layer;
  layer_maps.maps = std::move(*maps);
  dump.trace.layers.push_back(std::move(layer_maps));
  return {};
}

// Everything after the container's own checks: the metadata, the names and shapes of the maps. The file and
// the in-memory reader share it, so fuzzing the one tests the other.
Result<AttentionDump> dump_from(const SafeTensors& st) {
  const std::string& file = st.name();
  const auto& metadata = st.metadata();
  const auto on_demand = read_format_version(metadata, file);
  if (!on_demand) return std::unexpected(on_demand.error());
  AttentionDump dump;
  if (auto read = read_token_lists(metadata, file, dump); !read) return std::unexpected(read.error());
  LayeredTrace& trace = dump.trace;
  if (*on_demand) {
    dump.version = 2;
    if (!trace.cross_rows.empty()) {
      return fail(ErrorKind::Unsupported, "a version-2 dump holds a decoder's self-attention; it has \"cross_rows\"",
                  file, kHeaderOffset);
    }
    if (auto read = dump_format::read_on_demand_layers(st, dump); !read) return std::unexpected(read.error());
    ATTN_TRY(dump_format::read_logits(st, static_cast<Index>(trace.tokens.size()), dump));
    return dump;
  }
  ATTN_TRY(dump_format::read_logits(st, static_cast<Index>(trace.tokens.size()), dump));
  for (const TensorInfo& t : st.tensors()) {
    if (!t.name.starts_with(kPrefix)) continue;  // other tensors may ride along (e.g. logits)
    if (auto read = read_layer_tensor(st, t, dump); !read) return std::unexpected(read.error());
  }
  if (trace.layers.empty()) {
    return fail(ErrorKind::Malformed, "holds no attention maps (tensors named attn.<stage>.<layer>)", file,
                kHeaderOffset);
  }
  if (const auto missing = missing_layer(trace.layers)) {
    return fail(ErrorKind::Malformed, *missing, file, kHeaderOffset);
  }
  std::sort(trace.layers.begin(), trace.layers.end(), [](const LayerAttention& a, const LayerAttention& b) {
    return stage_order(a.stage) != stage_order(b.stage) ? stage_order(a.stage) < stage_order(b.stage)
                                                        : a.layer < b.layer;
  });
  return dump;
}

}  // namespace

Result<AttentionDump> read_attention_dump(const std::filesystem::path& path) {
  auto st = SafeTensors::open(path);
  if (!st) return std::unexpected(st.error());
  auto dump = dump_from(*st);
  // Opening read the maps (version 1: their weights scanned) or the statistics and overviews (version 2): a file cut
  // short meanwhile read zeros, and whatever they made of it is refused.
  if (auto ok = st->intact(); !ok) return std::unexpected(ok.error());
  if (dump) dump->file_intact = [file = *st] { return file.intact(); };
  return dump;
}

Result<AttentionDump> parse_attention_dump(std::vector<std::uint8_t> bytes, std::string name) {
  auto st = SafeTensors::parse(std::move(bytes), std::move(name));
  if (!st) return std::unexpected(st.error());
  return dump_from(*st);
}

Result<void> write_attention_dump(const std::filesystem::path& path, const LayeredTrace& trace,
                                  const std::string& model, const std::vector<int>& ids, const Matrix* logits) {
  const std::string file = path.string();
  auto metadata = dump_format::dump_metadata(trace, model, ids, file, kDumpVersion);
  if (!metadata) return std::unexpected(metadata.error());
  if (trace.layers.empty()) {
    return fail(ErrorKind::OutOfRange, "nothing to write: the trace has no attention maps", file);
  }
  const auto n_tokens = static_cast<Index>(trace.tokens.size());
  std::vector<TensorData> tensors;
  for (const LayerAttention& l : trace.layers) {
    const std::string name = tensor_name(l.stage, l.layer);
    if (!dump_stage(to_string(l.stage))) {
      return fail(ErrorKind::Unsupported,
                  "a " + std::string(to_string(l.stage)) +
                      " map cannot go into an attention dump, which holds encoder, decoder and cross attention",
                  file);
    }
    if (l.layer < 0) {
      return fail(ErrorKind::OutOfRange,
                  "layer " + std::to_string(l.layer) + " of the " + std::string(to_string(l.stage)) + " is negative",
                  file);
    }
    const HeadStack& m = l.maps;
    const bool cross = l.stage == Stage::Cross;
    const auto want_rows = static_cast<Index>(cross ? trace.cross_rows.size() : trace.tokens.size());
    if (m.empty() || m.rows() != want_rows || m.cols() != n_tokens) {
      return fail(ErrorKind::Mismatch,
                  name + ": " + std::to_string(m.heads()) + " maps of " + std::to_string(m.rows()) + " x " +
                      std::to_string(m.cols()) + " but the trace has " + std::to_string(want_rows) +
                      (cross ? " cross rows" : " tokens") + " x " + std::to_string(n_tokens) + " tokens",
                  file);
    }
    const auto n =
        static_cast<std::size_t>(m.heads()) * static_cast<std::size_t>(m.rows()) * static_cast<std::size_t>(m.cols());
    TensorData t;
    t.name = name;
    t.shape = {m.heads(), m.rows(), m.cols()};
    if (m.precision() == Precision::F16) {
      t.dtype = DType::F16;
      t.data = std::as_bytes(std::span<const Eigen::half>(m.f16(0), n));
    } else {
      t.dtype = DType::F32;
      t.data = std::as_bytes(std::span<const float>(m.f32(0), n));
    }
    tensors.push_back(std::move(t));
  }
  if (const auto missing = missing_layer(trace.layers)) return fail(ErrorKind::Malformed, *missing, file);
  ATTN_TRY(dump_format::add_logits(logits, n_tokens, file, tensors));
  return write_safetensors(path, tensors, *metadata);
}

namespace dump_format {

Result<void> add_logits(const Matrix* logits, Index tokens, const std::string& file, std::vector<TensorData>& tensors) {
  if (!logits || logits->size() == 0) return {};
  if (logits->rows() != tokens && logits->rows() != 1)
    return fail(ErrorKind::Mismatch,
                "logits of " + std::to_string(logits->rows()) + " rows for " + std::to_string(tokens) + " tokens",
                file);
  TensorData t;
  t.name = "logits";
  t.shape = {logits->rows(), logits->cols()};
  t.dtype = DType::F32;
  t.data = std::as_bytes(std::span<const float>(logits->data(), static_cast<std::size_t>(logits->size())));
  tensors.push_back(std::move(t));
  return {};
}

Result<void> read_logits(const SafeTensors& st, Index tokens, AttentionDump& dump) {
  const TensorInfo* t = st.find("logits");
  if (!t) return {};
  if (t->dtype != DType::F32 || t->shape.size() != 2 || (t->shape[0] != tokens && t->shape[0] != 1) ||
      t->shape[1] < 1) {
    // Another writer's tensor of that name: it rides along unread, as any other tensor.
    dump.warnings.push_back(st.name() + ": its \"logits\" tensor, " + std::string(to_string(t->dtype)) + " " +
                            shape_text(t->shape) + ", is not F32 [" + std::to_string(tokens) +
                            " tokens (or 1), outputs]: not read");
    return {};
  }
  auto values = st.to_float(*t);
  if (!values) return std::unexpected(values.error());
  dump.logits = Eigen::Map<const Matrix>(values->data(), t->shape[0], t->shape[1]);
  return {};
}

Result<std::map<std::string, std::string>> dump_metadata(const LayeredTrace& trace, const std::string& model,
                                                         const std::vector<int>& ids, const std::string& file,
                                                         std::string_view version) {
  if (trace.tokens.empty()) return fail(ErrorKind::OutOfRange, "nothing to write: the trace has no tokens", file);
  if (!trace.spans.empty() && trace.spans.size() != trace.tokens.size()) {
    return fail(ErrorKind::Mismatch,
                "the trace has " + std::to_string(trace.spans.size()) + " spans for " +
                    std::to_string(trace.tokens.size()) + " tokens",
                file);
  }
  if (!ids.empty() && ids.size() != trace.tokens.size()) {
    return fail(ErrorKind::Mismatch,
                std::to_string(ids.size()) + " token ids for " + std::to_string(trace.tokens.size()) + " tokens", file);
  }
  std::map<std::string, std::string> metadata{{"format", std::string(kDumpFormat)}, {"version", std::string(version)}};
  try {
    metadata["tokens"] = json(trace.tokens).dump();
    if (!trace.cross_rows.empty()) metadata["cross_rows"] = json(trace.cross_rows).dump();
    if (!trace.spans.empty()) {
      json spans = json::array();
      for (const Span& s : trace.spans) spans.push_back({s.begin, s.end});
      metadata["spans"] = spans.dump();
    }
  } catch (const json::exception&) {
    return fail(ErrorKind::Encoding, "a token is not valid UTF-8", file);
  }
  if (!model.empty()) metadata["model"] = model;
  if (!ids.empty()) metadata["ids"] = json(ids).dump();
  return metadata;
}

}  // namespace dump_format

}  // namespace attn::io
