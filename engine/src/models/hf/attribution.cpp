// Attribution (attn/models/attribution.h): the checks of a request, the embedding layer's output of a run, the
// backward pass behind backward(), and the methods over it.
#include "attn/models/attribution.h"

#include "attn/analysis/attention_analysis.h"
#include "attn/analysis/attention_flow.h"
#include "attn/random.h"
#include "backward.h"
#include "norm_math.h"
#include "transformer_impl.h"
#include "../../core/try.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>

namespace attn::models {

namespace {

std::size_t budget_of(std::size_t asked) { return asked ? asked : kPassBudget; }

struct MethodName {
  AttributionMethod method;
  std::string_view name;
};
constexpr MethodName kMethods[] = {
    {AttributionMethod::GradXInput, "grad-x-input"}, {AttributionMethod::IntegratedGradients, "integrated-gradients"},
    {AttributionMethod::AttnGrad, "attn-grad"},      {AttributionMethod::AttnLrp, "attnlrp"},
    {AttributionMethod::Rollout, "rollout"},         {AttributionMethod::Flow, "flow"},
    {AttributionMethod::Attention, "attention"},     {AttributionMethod::Random, "random"},
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

Index run_tokens(const TransformerModel::Impl& m, const TransformerRun& run) {
  if (m.config.family == Family::Vit) {
    return run.activations && !run.activations->resid_pre.empty() ? run.activations->resid_pre[0].rows() : 0;
  }
  return static_cast<Index>(run.ids.size());
}

// The embedding layer's output for `ids` (every position's token replaced when `all` >= 0).
Matrix embeddings(const TransformerModel::Impl& m, const TransformerRun& run, int all = -1) {
  const TransformerConfig& c = m.config;
  const Index T = run_tokens(m, run), d = c.hidden;
  if (c.family == Family::Vit) return run.activations->resid_pre[0];
  Matrix x(T, d);
  for (Index i = 0; i < T; ++i) {
    const int id = all >= 0 ? all : run.ids[static_cast<std::size_t>(i)];
    if (c.family == Family::Decoder) {
      m.lm_weights->embed_token(c.decoder, id, i, x.row(i).data());
      continue;
    }
    x.row(i) = m.word.row(id) + m.positions.row(i);
    if (c.family == Family::Bert) {
      const int t = run.type_ids.empty() ? 0 : run.type_ids[static_cast<std::size_t>(i)];
      x.row(i) += m.types.row(t);
    }
    if (m.post_ln()) layer_norm_row(x.row(i).data(), x.row(i).data(), m.embed_gamma, m.embed_beta, d, c.layer_norm_eps);
  }
  return x;
}

struct Checked {
  Index T = 0;
  int position = 0;
};

// The request against the model and the run: the position explained, every id in range.
Result<Checked> check_request(const TransformerModel::Impl& m, const TransformerRun& run, const AttributionTarget& t) {
  const TransformerConfig& c = m.config;
  Checked k;
  k.T = run_tokens(m, run);
  if (c.family == Family::Vit && k.T == 0)
    return fail(ErrorKind::OutOfRange, "attribute: a ViT run must be made with capture (its embeddings)");
  if (k.T == 0) return fail(ErrorKind::OutOfRange, "attribute: the run has no tokens");
  const bool head = c.family == Family::Decoder || m.has_head;
  if (!head)
    return fail(ErrorKind::Unsupported,
                "attribute: the model has no prediction head (" + c.architecture + "): there is no logit to explain");
  int position = t.position;
  if (position < 0) {
    if (c.causal()) {
      position = static_cast<int>(k.T - 1);
    } else if (c.family == Family::Vit) {
      position = 0;
    } else {
      const auto* tok = m.tokenizer.get();
      const auto mask = tok && tok->specials().mask ? std::find(run.ids.begin(), run.ids.end(), *tok->specials().mask)
                                                    : run.ids.end();
      if (mask == run.ids.end())
        return fail(ErrorKind::OutOfRange,
                    "attribute: the input has no [MASK] token, so there is no prediction to explain; add one or "
                    "give the position");
      position = static_cast<int>(mask - run.ids.begin());
    }
  }
  if (position >= k.T || (c.family == Family::Vit && position != 0))
    return fail(ErrorKind::OutOfRange, "attribute: position " + std::to_string(position) + " is out of range (" +
                                           (c.family == Family::Vit ? std::string("ViT explains its class token, 0")
                                                                    : "0 .. " + std::to_string(k.T - 1)) +
                                           ")");
  const Index outputs = c.family == Family::Vit ? m.classifier.cols() : c.vocab_size;
  for (const int id : {t.token, t.kind == AttributionTarget::Kind::LogitDiff ? t.other : -1}) {
    if (id >= outputs)
      return fail(ErrorKind::OutOfRange, "attribute: token " + std::to_string(id) + " is out of the model's " +
                                             std::to_string(outputs) + " outputs");
  }
  if (t.kind == AttributionTarget::Kind::LogitDiff && t.other < 0)
    return fail(ErrorKind::OutOfRange, "attribute: a logit difference needs the second token");
  k.position = position;
  return k;
}

PassRequest request_for(const Checked& k, const AttributionTarget& t, BackwardRule rule, const BackwardOptions& o) {
  PassRequest q;
  q.T = k.T;
  q.position = k.position;
  q.token = t.token;
  q.target = t;
  q.rule = rule;
  q.options = o;
  return q;
}

}  // namespace

Result<Gradients> backward(const TransformerModel& model, const TransformerRun& run, const AttributionTarget& target,
                           const BackwardOptions& options) {
  const TransformerModel::Impl& m = model.impl();
  ATTN_LET(k, check_request(m, run, target));
  const TransformerConfig& c = m.config;
  const std::size_t kept = static_cast<std::size_t>(c.layers) * static_cast<std::size_t>(c.heads) *
                           static_cast<std::size_t>(k.T) * static_cast<std::size_t>(k.T) * sizeof(float);
  if (options.keep_attention && kept > kMaxKeptAttentionBytes)
    return fail(ErrorKind::TooLarge, "backward: keeping every head's attention gradient at " + std::to_string(k.T) +
                                         " tokens takes " + std::to_string(kept >> 20) + " MiB, over the " +
                                         std::to_string(kMaxKeptAttentionBytes >> 20) + " MiB bound");
  const auto plans = make_plans(m, k.T, 1);
  Gradients g;
  PassRequest q = request_for(k, target, options.rule, options);
  q.checkpointed = pass_bytes(*plans, k.T, false) > budget_of(options.budget);
  q.keep = &g;
  if (options.keep_attention) {
    g.attention.assign(static_cast<std::size_t>(c.layers),
                       std::vector<Matrix>(static_cast<std::size_t>(c.heads), Matrix::Zero(k.T, k.T)));
    q.options.on_attention = [&g, user = options.on_attention](int l, int h, Index r0, Index rows, Index keys,
                                                               const float* P, const float* dP, Index ld) {
      Matrix& dst = g.attention[static_cast<std::size_t>(l)][static_cast<std::size_t>(h)];
      dst.block(r0, 0, rows, keys) =
          Eigen::Map<const Matrix, 0, Eigen::OuterStride<>>(dP, rows, keys, Eigen::OuterStride<>(ld));
      if (user) user(l, h, r0, rows, keys, P, dP, ld);
    };
  }
  ATTN_LET(r, run_pass(*plans, embeddings(m, run), q));
  g.position = k.position;
  g.token = r.token;
  g.value = r.values.front();
  return g;
}

std::string_view method_name(AttributionMethod method) {
  for (const MethodName& n : kMethods)
    if (n.method == method) return n.name;
  return "?";
}

Result<AttributionMethod> parse_method(std::string_view name) {
  for (const MethodName& n : kMethods)
    if (n.name == name) return n.method;
  std::string names;
  for (const MethodName& n : kMethods) names += (names.empty() ? "" : ", ") + std::string(n.name);
  return fail(ErrorKind::OutOfRange, "unknown attribution method '" + std::string(name) + "' (" + names + ")");
}

const std::vector<AttributionMethod>& all_methods() {
  static const std::vector<AttributionMethod> methods = [] {
    std::vector<AttributionMethod> v;
    for (const MethodName& n : kMethods) v.push_back(n.method);
    return v;
  }();
  return methods;
}

namespace {

// Row sums of a ⊙ b.
std::vector<float> row_dots(const Matrix& a, const Matrix& b) {
  std::vector<float> s(static_cast<std::size_t>(a.rows()));
  for (Index i = 0; i < a.rows(); ++i) s[static_cast<std::size_t>(i)] = (a.row(i).array() * b.row(i).array()).sum();
  return s;
}

// Gradient x input and AttnLRP: the relevance at x0 and at every layer's residual stream.
Result<Attribution> relevance(const TransformerModel& model, const TransformerRun& run, const AttributionTarget& t,
                              const AttributeOptions& o, BackwardRule rule) {
  BackwardOptions bo;
  bo.rule = rule;
  bo.cancel = o.cancel;
  bo.budget = o.budget;
  ATTN_LET(g, backward(model, run, t, bo));
  Attribution a;
  a.position = g.position;
  a.token = g.token;
  a.value = g.value;
  a.scores = row_dots(g.resid[0], g.resid_grad[0]);
  a.per_layer.resize(static_cast<Index>(g.resid.size()), g.resid[0].rows());
  for (std::size_t l = 0; l < g.resid.size(); ++l) {
    const auto row = row_dots(g.resid[l], g.resid_grad[l]);
    a.per_layer.row(static_cast<Index>(l)) = Eigen::Map<const RowVector>(row.data(), static_cast<Index>(row.size()));
  }
  const double total = std::accumulate(a.scores.begin(), a.scores.end(), 0.0);
  a.gap = rule == BackwardRule::AttnLrp ? std::abs(total - static_cast<double>(a.value))
                                        : std::numeric_limits<double>::quiet_NaN();
  return a;
}

Result<int> pad_token(const TransformerModel::Impl& m) {
  const auto* tok = m.tokenizer.get();
  if (tok && m.post_ln() && tok->specials().mask) return *tok->specials().mask;
  if (tok && tok->specials().pad) return *tok->specials().pad;
  return fail(
      ErrorKind::Unsupported,
      std::string("integrated gradients: ") +
          (m.config.family == Family::Vit ? "ViT has no pad token" : "the tokenizer names no pad or mask token") +
          "; use the zero baseline");
}

Result<Attribution> integrated_gradients(const TransformerModel& model, const TransformerRun& run,
                                         const AttributionTarget& t, const AttributeOptions& o) {
  const TransformerModel::Impl& m = model.impl();
  if (o.steps < 1 || o.steps > kMaxSteps)
    return fail(ErrorKind::OutOfRange, "integrated gradients: steps must be 1 .. " + std::to_string(kMaxSteps) +
                                           ", not " + std::to_string(o.steps));
  ATTN_LET(k, check_request(m, run, t));
  const Matrix x0 = embeddings(m, run);
  Matrix base = Matrix::Zero(x0.rows(), x0.cols());
  Attribution a;
  a.note = "baseline: zero";
  if (o.baseline == AttributeOptions::Baseline::Pad) {
    ATTN_LET(pad, pad_token(m));
    base = embeddings(m, run, pad);
    a.note = "baseline: every token replaced by " + token_label(m.tokenizer.get(), pad);
  }
  const Matrix diff = x0 - base;
  // Sequences alpha = 1, (m - 1) / m, ..., 1 / m, then 0 (the baseline, for the completeness gap), stacked in as few
  // passes as the budget allows.
  const int count = o.steps + 1;
  const auto one = make_plans(m, k.T, 1);
  const std::size_t budget = budget_of(o.budget);
  const bool checkpointed = pass_bytes(*one, k.T * count, false) > budget;
  const Index per_pass = std::clamp<Index>(
      static_cast<Index>(budget / std::max<std::size_t>(1, pass_bytes(*one, k.T, checkpointed))), 1, count);
  Matrix sum = Matrix::Zero(x0.rows(), x0.cols());
  int token = t.token;
  for (int first = 0; first < count; first += static_cast<int>(per_pass)) {
    const Index B = std::min<Index>(per_pass, count - first);
    Matrix xs(B * k.T, x0.cols());
    for (Index b = 0; b < B; ++b) {
      const double alpha = static_cast<double>(o.steps - (first + b)) / o.steps;
      xs.middleRows(b * k.T, k.T) = base + static_cast<float>(alpha) * diff;
    }
    PassRequest q = request_for(k, t, BackwardRule::Gradient, {});
    q.options.cancel = o.cancel;
    q.token = token;
    q.checkpointed = checkpointed;
    ATTN_LET(r, run_pass(*make_plans(m, k.T, B), std::move(xs), q));
    token = r.token;
    for (Index b = 0; b < B; ++b) {
      const int step = first + static_cast<int>(b);
      if (step == 0) a.value = r.values[static_cast<std::size_t>(b)];
      if (step == o.steps) {
        a.baseline_value = r.values[static_cast<std::size_t>(b)];
        continue;  // alpha = 0 is not a point of the right Riemann sum
      }
      sum += r.dx0.middleRows(b * k.T, k.T);
    }
    if (o.progress) o.progress(std::min(first + static_cast<int>(B), count), count);
  }
  sum /= static_cast<float>(o.steps);
  a.scores = row_dots(diff, sum);
  a.position = k.position;
  a.token = token;
  const double total = std::accumulate(a.scores.begin(), a.scores.end(), 0.0);
  a.gap = std::abs(total - (static_cast<double>(a.value) - static_cast<double>(a.baseline_value)));
  return a;
}

// Attention x gradient (Chefer et al. 2021, the generic rule): R = I, then R += mean_h (dF/dA ⊙ A)^+ R for each layer
// from the first; the score is row t of R, carried here as a row vector from the last layer down while the backward
// passes each layer (v <- v + v Ā_l), so no [tokens, tokens] matrix is formed.
Result<Attribution> attention_gradient(const TransformerModel& model, const TransformerRun& run,
                                       const AttributionTarget& t, const AttributeOptions& o) {
  const TransformerModel::Impl& m = model.impl();
  ATTN_LET(k, check_request(m, run, t));
  const int L = m.config.layers, H = m.config.heads;
  const Index T = k.T;
  Attribution a;
  a.per_layer = Matrix::Zero(L + 1, T);
  a.per_head = Matrix::Zero(static_cast<Index>(L) * H, T);
  RowVector v = RowVector::Zero(T);
  v(k.position) = 1.0f;
  a.per_layer.row(L) = v;
  // Per head, what v Ā_h adds (each head runs on one thread at a time).
  Matrix added = Matrix::Zero(H, T);
  PassRequest q = request_for(k, t, BackwardRule::Gradient, {});
  q.options.cancel = o.cancel;
  q.options.on_attention = [&](int l, int h, Index r0, Index rows, Index keys, const float* P, const float* dP,
                               Index ld) {
    for (Index i = 0; i < rows; ++i) {
      const Index row = r0 + i;
      const auto w =
          (Eigen::Map<const Eigen::ArrayXf>(dP + i * ld, keys) * Eigen::Map<const Eigen::ArrayXf>(P + i * ld, keys))
              .max(0.0f);
      if (row == k.position) a.per_head.row(static_cast<Index>(l) * H + h).head(keys) = w.transpose();
      if (v(row) != 0.0f) added.row(h).head(keys) += v(row) * w.transpose().matrix();
    }
  };
  q.on_layer = [&](int done, int of) {
    v += added.colwise().sum() / static_cast<float>(H);
    added.setZero();
    a.per_layer.row(of - done) = v;
    if (o.progress) o.progress(done, of);
  };
  ATTN_LET(r, run_pass(*make_plans(m, T, 1), embeddings(m, run), q));
  a.scores.assign(v.data(), v.data() + T);
  a.position = k.position;
  a.token = r.token;
  a.value = r.values.front();
  a.gap = std::numeric_limits<double>::quiet_NaN();
  return a;
}

// The attention-only methods run no head: the target's token and F come from the run's logits when it kept the
// explained position's (the family's own position, as a run keeps by default), else F is NaN.
void target_from_run(const TransformerRun& run, const Checked& k, const AttributionTarget& t, Attribution& a) {
  a.position = k.position;
  a.token = t.token;
  a.value = std::numeric_limits<float>::quiet_NaN();
  const Index row = k.position - run.logits_from;
  if (run.logits.rows() == 0 || row < 0 || row >= run.logits.rows()) return;
  const RowVector logits = run.logits.row(row);
  if (a.token < 0) logits.maxCoeff(&a.token);
  float value = logits(a.token);
  if (t.kind == AttributionTarget::Kind::LogitDiff) value -= logits(t.other);
  if (t.kind == AttributionTarget::Kind::LogProb) {
    const float mx = logits.maxCoeff();
    value -= mx + std::log((logits.array() - mx).exp().sum());
  }
  a.value = value;
}

// The attention-only methods read the run's maps.
Result<void> check_maps(const TransformerRun& run, AttributionMethod method) {
  if (!run.attention.layers.empty() || !run.on_demand.empty()) return {};
  return fail(ErrorKind::OutOfRange, std::string("attribute: ") + std::string(method_name(method)) +
                                         " reads the run's attention maps, and "
                                         "the run kept none");
}

Result<Attribution> from_maps(const TransformerModel& model, const TransformerRun& run, const AttributionTarget& t,
                              const AttributeOptions& o) {
  const TransformerModel::Impl& m = model.impl();
  ATTN_LET(k, check_request(m, run, t));
  ATTN_TRY(check_maps(run, o.method));
  Attribution a;
  target_from_run(run, k, t, a);
  a.gap = std::numeric_limits<double>::quiet_NaN();
  const Index T = k.T;
  if (o.method == AttributionMethod::Attention) {
    if (run.attention.layers.empty()) {
      a.scores.assign(static_cast<std::size_t>(T), 0.0f);
      const OnDemandLayer& last = run.on_demand.back();
      std::vector<float> row(static_cast<std::size_t>(T));
      for (int h = 0; h < last.heads(); ++h) {
        last.row(h, k.position, row.data());
        for (Index j = 0; j < T; ++j)
          a.scores[static_cast<std::size_t>(j)] += row[static_cast<std::size_t>(j)] / last.heads();
      }
      return a;
    }
    const HeadStack& maps = run.attention.layers.back().maps;
    std::vector<float> row(static_cast<std::size_t>(maps.cols()));
    a.scores.assign(static_cast<std::size_t>(T), 0.0f);
    for (int h = 0; h < maps.heads(); ++h) {
      maps.read_row(h, k.position, row.data());
      for (Index j = 0; j < T; ++j)
        a.scores[static_cast<std::size_t>(j)] += row[static_cast<std::size_t>(j)] / maps.heads();
    }
    return a;
  }
  analysis::RolloutOptions ro;
  ro.stage = m.config.causal() ? Stage::Decoder : Stage::Encoder;
  if (run.attention.layers.empty()) {
    ATTN_ASSIGN(a.scores, analysis::rollout_row(run.on_demand, k.position, ro, o.cancel));
    return a;
  }
  ATTN_LET(R, analysis::rollout(run.attention, ro));
  a.scores.assign(R.row(k.position).data(), R.row(k.position).data() + R.cols());
  return a;
}

// Attention flow (Abnar and Zuidema 2020) over the run's maps (analysis/attention_flow.h: one max-flow per input
// token; refused past kFlowMaxTokens with the estimate).
Result<Attribution> flow(const TransformerModel& model, const TransformerRun& run, const AttributionTarget& t,
                         const AttributeOptions& o) {
  ATTN_LET(k, check_request(model.impl(), run, t));
  if (run.attention.layers.empty())
    return fail(ErrorKind::Unsupported,
                "attribute: attention flow needs every layer's maps, and the run kept its "
                "attention on demand (a long input); flow is computed up to " +
                    std::to_string(analysis::kFlowMaxTokens) + " tokens");
  analysis::RolloutOptions ro;
  ro.stage = model.config().causal() ? Stage::Decoder : Stage::Encoder;
  ATTN_LET(f, analysis::attention_flow(run.attention, k.position, ro, o.cancel, o.progress));
  Attribution a;
  target_from_run(run, k, t, a);
  a.gap = std::numeric_limits<double>::quiet_NaN();
  a.scores = std::move(f.scores);
  a.note = "attention flow: " + std::to_string(f.edges) + " edges, one max-flow per input token";
  return a;
}

}  // namespace

Result<Attribution> attribute(const TransformerModel& model, const TransformerRun& run, const AttributionTarget& target,
                              const AttributeOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  Result<Attribution> a = fail(ErrorKind::OutOfRange, "attribute: no method");
  switch (options.method) {
    case AttributionMethod::GradXInput: a = relevance(model, run, target, options, BackwardRule::Gradient); break;
    case AttributionMethod::AttnLrp: a = relevance(model, run, target, options, BackwardRule::AttnLrp); break;
    case AttributionMethod::IntegratedGradients: a = integrated_gradients(model, run, target, options); break;
    case AttributionMethod::AttnGrad: a = attention_gradient(model, run, target, options); break;
    case AttributionMethod::Rollout:
    case AttributionMethod::Attention: a = from_maps(model, run, target, options); break;
    case AttributionMethod::Flow: a = flow(model, run, target, options); break;
    case AttributionMethod::Random: {
      ATTN_LET(k, check_request(model.impl(), run, target));
      Attribution r;
      target_from_run(run, k, target, r);
      r.gap = std::numeric_limits<double>::quiet_NaN();
      SplitMix64 rng(options.seed);
      for (Index i = 0; i < k.T; ++i) r.scores.push_back(rng.uniform());
      a = std::move(r);
      break;
    }
  }
  if (a) {
    a->method = options.method;
    a->seconds = seconds_since(t0);
  }
  return a;
}

}  // namespace attn::models
