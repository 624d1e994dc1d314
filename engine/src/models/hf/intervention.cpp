// Metrics, ablation edits, patching and sweeps (attn/models/intervention.h).
#include "attn/models/intervention.h"

#include "../../core/try.h"

#include <charconv>
#include <cmath>
#include <limits>

namespace attn::models {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// log softmax of one row, in double.
Eigen::ArrayXd log_softmax(const RowVector& logits) {
  const Eigen::ArrayXd x = logits.transpose().cast<double>().array();
  const double shift = x.maxCoeff();
  return x - shift - std::log((x - shift).exp().sum());
}

bool parse_int(std::string_view text, int& out) {
  if (text.empty()) return false;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), out);
  return r.ec == std::errc{} && r.ptr == text.data() + text.size();
}

}  // namespace

std::optional<Metric> parse_metric(std::string_view name) {
  if (name == "logit") return Metric::Logit;
  if (name == "logprob") return Metric::LogProb;
  if (name == "logit-diff") return Metric::LogitDiff;
  if (name == "kl") return Metric::KL;
  return std::nullopt;
}

const char* metric_name(Metric metric) {
  switch (metric) {
    case Metric::Logit: return "logit";
    case Metric::LogProb: return "logprob";
    case Metric::LogitDiff: return "logit-diff";
    case Metric::KL: return "kl";
  }
  return "?";
}

double metric_value(const MetricSpec& metric, const RowVector& logits, const RowVector& clean) {
  switch (metric.kind) {
    case Metric::Logit: return logits[metric.answer];
    case Metric::LogProb: return log_softmax(logits)[metric.answer];
    case Metric::LogitDiff: return static_cast<double>(logits[metric.answer]) - logits[metric.wrong];
    case Metric::KL: {
      const Eigen::ArrayXd p = log_softmax(clean), q = log_softmax(logits);
      return (p.exp() * (p - q)).sum();
    }
  }
  return kNaN;
}

Result<RowVector> measured_logits(const TransformerRun& run, int position) {
  if (run.logits.rows() == 0)
    return fail(ErrorKind::Unsupported, "the run has no logits (the model has no output head)");
  if (position < 0 || run.logits.rows() == 1) {
    if (position >= 0 && position != run.logits_from)
      return fail(ErrorKind::Mismatch, "the run kept the logits of position " + std::to_string(run.logits_from) +
                                           ", not of position " + std::to_string(position));
    return RowVector(run.logits.row(0));
  }
  const Index row = position - run.logits_from;
  if (row < 0 || row >= run.logits.rows())
    return fail(ErrorKind::OutOfRange, "position " + std::to_string(position) + " is outside the run's logits");
  return RowVector(run.logits.row(row));
}

std::optional<AblationMode> parse_ablation_mode(std::string_view name) {
  if (name == "zero") return AblationMode::Zero;
  if (name == "mean") return AblationMode::Mean;
  if (name == "resample") return AblationMode::Resample;
  return std::nullopt;
}

const char* ablation_mode_name(AblationMode mode) {
  switch (mode) {
    case AblationMode::Zero: return "zero";
    case AblationMode::Mean: return "mean";
    case AblationMode::Resample: return "resample";
  }
  return "?";
}

Result<std::vector<HeadRef>> parse_heads(std::string_view text, const TransformerConfig& config) {
  std::vector<HeadRef> heads;
  std::size_t start = 0;
  int item = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view part = text.substr(start, comma - start);
    ++item;
    const std::size_t dot = part.find('.');
    HeadRef h;
    if (dot == std::string_view::npos || !parse_int(part.substr(0, dot), h.layer) ||
        !parse_int(part.substr(dot + 1), h.head))
      return fail(ErrorKind::Malformed, "\"" + std::string(part) + "\" (item " + std::to_string(item) +
                                            ") is not LAYER.HEAD (e.g. 0.1; indices count from 0)");
    if (h.layer < 0 || h.layer >= config.layers)
      return fail(ErrorKind::OutOfRange, "layer " + std::to_string(h.layer) + " of \"" + std::string(part) +
                                             "\" is outside 0.." + std::to_string(config.layers - 1) +
                                             " (the model's layers)");
    if (h.head < 0 || h.head >= config.heads)
      return fail(ErrorKind::OutOfRange, "head " + std::to_string(h.head) + " of \"" + std::string(part) +
                                             "\" is outside 0.." + std::to_string(config.heads - 1) +
                                             " (the model's heads)");
    if (std::find(heads.begin(), heads.end(), h) == heads.end()) heads.push_back(h);
    start = comma + 1;
  }
  return heads;
}

std::vector<Edit> ablation_edits(const std::vector<HeadRef>& heads, AblationMode mode, const Activations* source) {
  std::vector<Edit> edits;
  for (const HeadRef& h : heads) {
    Edit e;
    e.site = Site::Z;
    e.layer = h.layer;
    e.head = h.head;
    switch (mode) {
      case AblationMode::Zero: e.kind = Edit::Kind::Zero; break;
      case AblationMode::Mean: e.kind = Edit::Kind::Mean; break;
      case AblationMode::Resample:
        e.kind = Edit::Kind::Replace;
        e.source = source ? &source->z[static_cast<std::size_t>(h.layer)] : nullptr;
        break;
    }
    edits.push_back(e);
  }
  return edits;
}

std::optional<Sweep> parse_sweep(std::string_view name) {
  for (Sweep s :
       {Sweep::Heads, Sweep::HeadsPositions, Sweep::LayersPositions, Sweep::AttnOutPositions, Sweep::MlpOutPositions})
    if (name == sweep_name(s)) return s;
  return std::nullopt;
}

const char* sweep_name(Sweep sweep) {
  switch (sweep) {
    case Sweep::Heads: return "heads";
    case Sweep::HeadsPositions: return "heads-positions";
    case Sweep::LayersPositions: return "layers-positions";
    case Sweep::AttnOutPositions: return "attn-out-positions";
    case Sweep::MlpOutPositions: return "mlp-out-positions";
  }
  return "?";
}

Result<Patching> Patching::make(TransformerRun clean, TransformerRun corrupt, const MetricSpec& metric, int position) {
  if (!clean.activations || !corrupt.activations)
    return fail(ErrorKind::Mismatch, "patching needs both runs' activations (run them with capture)");
  const Index n = clean.activations->resid_pre.front().rows(), m = corrupt.activations->resid_pre.front().rows();
  if (n != m)
    return fail(ErrorKind::Mismatch, "patching needs inputs of the same token count: the clean input has " +
                                         std::to_string(n) + " tokens, the corrupted one " + std::to_string(m));
  Patching p;
  p.position_ = position >= 0 ? position : clean.logits_from;
  ATTN_ASSIGN(p.clean_logits_, measured_logits(clean, position));
  RowVector corrupt_logits;
  ATTN_ASSIGN(corrupt_logits, measured_logits(corrupt, position));
  const Index vocab = p.clean_logits_.size();
  const auto check = [&](int id, const char* what) -> Result<void> {
    if (id < 0 || id >= vocab)
      return fail(ErrorKind::OutOfRange, std::string("the ") + what + " token " + std::to_string(id) +
                                             " is outside the model's outputs (0.." + std::to_string(vocab - 1) + ")");
    return {};
  };
  if (metric.kind != Metric::KL) ATTN_TRY(check(metric.answer, "answer"));
  if (metric.kind == Metric::LogitDiff) ATTN_TRY(check(metric.wrong, "wrong"));
  p.metric_ = metric;
  p.clean_metric_ = metric_value(metric, p.clean_logits_, p.clean_logits_);
  p.corrupt_metric_ = metric_value(metric, corrupt_logits, p.clean_logits_);
  if (!std::isfinite(p.clean_metric_) || !std::isfinite(p.corrupt_metric_))
    return fail(ErrorKind::OutOfRange,
                std::string("the ") + metric_name(metric.kind) + " of the clean or the corrupted run is not finite");
  if (!(std::abs(p.clean_metric_ - p.corrupt_metric_) > 1e-6))
    return fail(ErrorKind::Mismatch, std::string("the clean and the corrupted inputs give the same ") +
                                         metric_name(metric.kind) + " (" + std::to_string(p.clean_metric_) +
                                         "): there is nothing for a patch to recover");
  p.clean_ = std::move(clean);
  p.corrupt_ = std::move(corrupt);
  return p;
}

int Patching::tokens() const { return static_cast<int>(clean_.activations->resid_pre.front().rows()); }

Edit Patching::edit(Sweep sweep, const SweepCell& cell) const {
  Edit e;
  e.kind = Edit::Kind::Replace;
  e.layer = cell.layer;
  e.head = cell.head;
  e.position = cell.position;
  switch (sweep) {
    case Sweep::Heads:
    case Sweep::HeadsPositions: e.site = Site::Z; break;
    case Sweep::LayersPositions: e.site = Site::ResidPre; break;
    case Sweep::AttnOutPositions: e.site = Site::AttnOut; break;
    case Sweep::MlpOutPositions: e.site = Site::MlpOut; break;
  }
  e.source = &clean_.activations->at(e.site)[static_cast<std::size_t>(cell.layer)];
  return e;
}

Result<double> Patching::metric_with(TransformerRunner& runner, const std::vector<Edit>& edits,
                                     const std::atomic<bool>* cancel) const {
  RunOptions o;
  o.edits = edits;
  o.top_k = 0;
  o.cancel = cancel;
  o.logits_position = runner.model().config().family == Family::Vit ? -1 : position_;
  // A rerun needs what its base needed, which passed the check: no reading of /proc/meminfo for every cell.
  o.memory_limit = std::numeric_limits<std::size_t>::max() / 2;
  TransformerRun run;
  ATTN_ASSIGN(run, runner.rerun(corrupt_, o));
  RowVector logits;
  ATTN_ASSIGN(logits, measured_logits(run, position_));
  return metric_value(metric_, logits, clean_logits_);
}

double Patching::recovery(double metric) const {
  return (metric - corrupt_metric_) / (clean_metric_ - corrupt_metric_);
}

Result<SweepResult> Patching::sweep(TransformerRunner& runner, Sweep sweep,
                                    const std::function<bool(const SweepCell&, double, const SweepResult&)>& on_cell,
                                    const std::atomic<bool>* cancel) const {
  const auto& c = runner.model().config();
  SweepResult r;
  r.kind = sweep;
  r.layers = c.layers;
  r.heads = sweep == Sweep::Heads || sweep == Sweep::HeadsPositions ? c.heads : 1;
  r.positions = sweep == Sweep::Heads ? 1 : tokens();
  r.values.assign(static_cast<std::size_t>(r.layers) * r.heads * r.positions, kNaN);
  std::vector<SweepCell> order;
  std::vector<std::vector<Edit>> edits;
  for (int l = 0; l < r.layers; ++l) {
    for (int h = 0; h < r.heads; ++h) {
      for (int p = 0; p < r.positions; ++p) {
        const SweepCell cell{l, r.heads > 1 || sweep == Sweep::Heads || sweep == Sweep::HeadsPositions ? h : -1,
                             sweep == Sweep::Heads ? -1 : p};
        order.push_back(cell);
        edits.push_back({edit(sweep, cell)});
      }
    }
  }
  const auto done = [&](std::size_t first, const Matrix& logits) {
    for (Index i = 0; i < logits.rows(); ++i) {
      const SweepCell& cell = order[first + static_cast<std::size_t>(i)];
      const double value = recovery(metric_value(metric_, logits.row(i), clean_logits_));
      r.values[(static_cast<std::size_t>(cell.layer) * r.heads + std::max(cell.head, 0)) * r.positions +
               std::max(cell.position, 0)] = value;
      ++r.done;
      if (on_cell && !on_cell(cell, value, r)) return false;
    }
    return true;
  };
  const int position = runner.model().config().family == Family::Vit ? -1 : position_;
  auto ran = runner.rerun_cells(corrupt_, edits, position, done, cancel);
  if (!ran && ran.error().kind != ErrorKind::Cancelled) return std::unexpected(ran.error());
  return r;
}

}  // namespace attn::models
