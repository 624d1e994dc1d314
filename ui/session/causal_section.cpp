#include "session/causal_section.h"

#include "core/try.h"

#include <array>
#include <cmath>
#include <limits>
#include <string_view>
#include <type_traits>

namespace attn::ui {

namespace {
using json = nlohmann::json;
using ojson = nlohmann::ordered_json;
constexpr std::array<std::string_view, 4> kMetrics = {"logit-diff", "logprob", "logit", "kl"};
constexpr std::array<std::string_view, 5> kSweeps = {"heads", "heads-positions", "layers-positions",
                                                     "attn-out-positions", "mlp-out-positions"};
// attn::models::method_name of every method (attribution.h), and the target's kinds and baselines the view offers.
constexpr std::array<std::string_view, 8> kMethods = {
    "grad-x-input", "integrated-gradients", "attn-grad", "attnlrp", "rollout", "flow", "attention", "random"};
constexpr std::array<std::string_view, 2> kKinds = {"logit", "logprob"};
constexpr std::array<std::string_view, 2> kBaselines = {"zero", "pad"};

ojson numbers(const std::vector<double>& values) {
  ojson out = ojson::array();
  for (double v : values) out.push_back(std::isfinite(v) ? ojson(v) : ojson(nullptr));
  return out;
}

// An array of `count` numbers (null: NaN when `nulls`), or of whole numbers in [lo, hi].
template <class T>
Result<void> read_numbers(io::SessionMembers& m, std::string_view key, std::size_t count, bool nulls, double lo,
                          double hi, std::vector<T>& out) {
  const json* v = m.find(key);
  if (!v) return {};
  if (!v->is_array())
    return m.error(ErrorKind::Malformed, key, "expected an array, found " + io::SessionMembers::type(*v));
  if (v->size() != count)
    return m.error(ErrorKind::Mismatch, key,
                   "holds " + std::to_string(v->size()) + " values where its sizes say " + std::to_string(count));
  out.clear();
  out.reserve(count);
  for (const auto& x : *v) {
    if constexpr (std::is_floating_point_v<T>) {
      if (x.is_null() && nulls) {
        out.push_back(std::numeric_limits<T>::quiet_NaN());
        continue;
      }
    }
    if (!x.is_number())
      return m.error(ErrorKind::Malformed, key, "expected numbers, found " + io::SessionMembers::type(x));
    const double d = x.get<double>();
    if (!(d >= lo && d <= hi))
      return m.error(ErrorKind::OutOfRange, key, "a value outside " + std::to_string(lo) + ".." + std::to_string(hi));
    out.push_back(T(d));
  }
  return {};
}

Result<void> read_sweep(const io::SessionReader& reader, const json& j, PatchingSweepState& r,
                        std::vector<Error>& warnings) {
  io::SessionMembers m(reader, j, "tabs.transformer.causal.result");
  std::size_t kind = 0;
  ATTN_TRY(m.choice("kind", kSweeps, kind));
  r.kind = kSweeps[kind];
  ATTN_TRY(m.whole("layers", 0, io::kMaxSessionIndex, r.layers));
  ATTN_TRY(m.whole("heads", 1, io::kMaxSessionIndex, r.heads));
  ATTN_TRY(m.whole("positions", 1, io::kMaxSessionIndex, r.positions));
  const double cells = double(r.layers) * r.heads * r.positions;
  if (cells > kMaxSessionCells)
    return m.error(
        ErrorKind::TooLarge, "layers",
        std::to_string(std::int64_t(cells)) + " cells, over the limit of " + std::to_string(kMaxSessionCells));
  ATTN_TRY(m.whole("done", 0, std::int64_t(cells), r.done));
  ATTN_TRY(read_numbers(m, "values", std::size_t(cells), true, -1e300, 1e300, r.values));
  const json* tokens = m.find("tokens");
  if (tokens) {
    if (!tokens->is_array() || tokens->size() > std::size_t(io::kMaxSessionIndex))
      return m.error(ErrorKind::Malformed, "tokens", "expected an array of at most 2^20 strings");
    for (const auto& t : *tokens) {
      std::string s;
      ATTN_TRY(m.string_value(t, "tokens", io::kMaxSessionName, s, false, false));
      r.tokens.push_back(std::move(s));
    }
  }
  ATTN_TRY(m.number("clean_metric", -1e300, 1e300, r.clean_metric));
  ATTN_TRY(m.number("corrupt_metric", -1e300, 1e300, r.corrupt_metric));
  m.warn_unknown(warnings);
  return {};
}

Result<void> read_heads(const io::SessionReader& reader, const json& j, HeadDetectionState& h,
                        std::vector<Error>& warnings) {
  io::SessionMembers m(reader, j, "tabs.transformer.causal.heads");
  ATTN_TRY(m.whole("layers", 0, 4096, h.layers));
  ATTN_TRY(m.whole("heads", 0, 4096, h.heads));
  ATTN_TRY(m.whole("sequences", 0, 256, h.sequences));
  ATTN_TRY(m.whole("length", 0, io::kMaxSessionIndex, h.length));
  ATTN_TRY(m.whole("max_offset", 0, io::kMaxSessionIndex, h.max_offset));
  ATTN_TRY(m.text("pool", io::kMaxSessionName, h.pool));
  const std::size_t n = std::size_t(h.layers) * std::size_t(h.heads);
  ATTN_TRY(read_numbers(m, "previous_token", n, false, 0.0, 1.0, h.previous_token));
  ATTN_TRY(read_numbers(m, "duplicate_token", n, false, 0.0, 1.0, h.duplicate_token));
  ATTN_TRY(read_numbers(m, "induction", n, false, 0.0, 1.0, h.induction));
  ATTN_TRY(read_numbers(m, "induction_offset", n, false, 0.0, double(io::kMaxSessionIndex), h.induction_offset));
  ATTN_TRY(read_numbers(m, "sink", n, false, 0.0, 1.0, h.sink));
  m.warn_unknown(warnings);
  return {};
}

Result<void> read_attribution(const io::SessionReader& reader, const json& j, AttributionState& a,
                              std::vector<Error>& warnings) {
  io::SessionMembers m(reader, j, "tabs.transformer.causal.attribution");
  std::size_t choice = 0;
  if (m.find("method")) {
    ATTN_TRY(m.choice("method", kMethods, choice));
    a.method = kMethods[choice];
  }
  if (m.find("kind")) {
    ATTN_TRY(m.choice("kind", kKinds, choice));
    a.kind = kKinds[choice];
  }
  ATTN_TRY(m.text("token", io::kMaxSessionName, a.token));
  ATTN_TRY(m.whole("steps", 1, 1024, a.steps));
  if (m.find("baseline")) {
    ATTN_TRY(m.choice("baseline", kBaselines, choice));
    a.baseline = kBaselines[choice];
  }
  m.warn_unknown(warnings);
  return {};
}

}  // namespace

bool operator==(const PatchingSweepState& a, const PatchingSweepState& b) {
  if (a.kind != b.kind || a.layers != b.layers || a.heads != b.heads || a.positions != b.positions ||
      a.done != b.done || a.tokens != b.tokens || a.clean_metric != b.clean_metric ||
      a.corrupt_metric != b.corrupt_metric || a.values.size() != b.values.size())
    return false;
  for (std::size_t i = 0; i < a.values.size(); ++i) {
    if (!(a.values[i] == b.values[i] || (std::isnan(a.values[i]) && std::isnan(b.values[i])))) return false;
  }
  return true;
}

ojson to_json(const CausalSection& c) {
  ojson out = {
      {"corrupt", c.corrupt}, {"metric", c.metric}, {"answer", c.answer}, {"wrong", c.wrong}, {"sweep", c.sweep}};
  if (c.result) {
    const auto& r = *c.result;
    out["result"] = {{"kind", r.kind},
                     {"layers", r.layers},
                     {"heads", r.heads},
                     {"positions", r.positions},
                     {"done", r.done},
                     {"values", numbers(r.values)},
                     {"tokens", r.tokens},
                     {"clean_metric", r.clean_metric},
                     {"corrupt_metric", r.corrupt_metric}};
  }
  if (c.heads) {
    const auto& h = *c.heads;
    out["heads"] = {{"layers", h.layers},
                    {"heads", h.heads},
                    {"sequences", h.sequences},
                    {"length", h.length},
                    {"max_offset", h.max_offset},
                    {"pool", h.pool},
                    {"previous_token", numbers(h.previous_token)},
                    {"duplicate_token", numbers(h.duplicate_token)},
                    {"induction", numbers(h.induction)},
                    {"induction_offset", h.induction_offset},
                    {"sink", numbers(h.sink)}};
  }
  const auto& a = c.attribution;
  out["attribution"] = {
      {"method", a.method}, {"kind", a.kind}, {"token", a.token}, {"steps", a.steps}, {"baseline", a.baseline}};
  return out;
}

Result<CausalSection> read_causal_section(const io::SessionReader& reader, const json& j,
                                          std::vector<Error>& warnings) {
  io::SessionMembers m(reader, j, "tabs.transformer.causal");
  CausalSection c;
  ATTN_TRY(m.text("corrupt", io::kMaxSessionText, c.corrupt));
  std::size_t metric = 0, sweep = 0;
  if (m.find("metric")) {
    ATTN_TRY(m.choice("metric", kMetrics, metric));
    c.metric = kMetrics[metric];
  }
  ATTN_TRY(m.text("answer", io::kMaxSessionName, c.answer));
  ATTN_TRY(m.text("wrong", io::kMaxSessionName, c.wrong));
  if (m.find("sweep")) {
    ATTN_TRY(m.choice("sweep", kSweeps, sweep));
    c.sweep = kSweeps[sweep];
  }
  const json* result = nullptr;
  ATTN_ASSIGN(result, m.object("result"));
  if (result) {
    c.result.emplace();
    ATTN_TRY(read_sweep(reader, *result, *c.result, warnings));
  }
  const json* heads = nullptr;
  ATTN_ASSIGN(heads, m.object("heads"));
  if (heads) {
    c.heads.emplace();
    ATTN_TRY(read_heads(reader, *heads, *c.heads, warnings));
  }
  const json* attribution = nullptr;
  ATTN_ASSIGN(attribution, m.object("attribution"));
  if (attribution) ATTN_TRY(read_attribution(reader, *attribution, c.attribution, warnings));
  m.warn_unknown(warnings);
  return c;
}

}  // namespace attn::ui
