// The word-by-word entailment model of tools/train/MODELS.md section 5 (Rocktaeschel et al. 2016): config,
// strict loading and the forward pass of one (premise, hypothesis) pair, in the order of
// tools/train/entailment_torch.py's equations.
#include "attn/models/entailment.h"

#include "attn/io/safetensors.h"
#include "attn/mechanisms/normalise.h"
#include "entailment_impl.h"
#include "layers.h"
#include "../../core/nonfinite.h"
#include "../../core/try.h"

#include <algorithm>

namespace attn::models {

namespace fs = std::filesystem;

namespace {

Result<EntailmentConfig> read_entailment_config(const bundled::ConfigKeys& k) {
  EntailmentConfig c;
  ATTN_TRY(k.architecture("AttnScopeEntailment"));
  ATTN_ASSIGN(c.task, k.text_or("task", ""));
  ATTN_ASSIGN(c.trained_on, k.text_or("trained_on", ""));
  ATTN_ASSIGN(c.labels, bundled::read_labels(k));
  ATTN_ASSIGN(c.vocab, k.vocabulary("vocab", {"<pad>", "<unk>"}, 3));
  ATTN_ASSIGN(c.embedding_size, k.whole("embedding_size"));
  ATTN_ASSIGN(c.hidden, k.whole("hidden"));
  ATTN_ASSIGN(c.max_words, k.whole("max_words"));
  return c;
}

Result<void> check_config(const EntailmentConfig& c, const std::string& file) {
  const auto bad = [&](ErrorKind kind, const std::string& why) { return fail(kind, "config: " + why, file); };
  if (c.labels.size() < 2) return bad(ErrorKind::OutOfRange, "labels must name at least 2 classes");
  if (c.vocab.size() < 3 || c.vocab[0] != "<pad>" || c.vocab[1] != "<unk>") {
    return bad(ErrorKind::Malformed, "vocab must start with \"<pad>\", \"<unk>\" and hold at least one word");
  }
  if (c.embedding_size < 1 || c.hidden < 1 || c.max_words < 1) {
    return bad(ErrorKind::OutOfRange, "embedding_size, hidden and max_words must be at least 1");
  }
  return {};
}

// The words of one sentence as the model reads them: split_words without the terminators, the first
// max_words kept (a warning naming `which` says how many were dropped).
WordSplit model_words(std::string_view text, int max_words, const char* which, std::vector<std::string>& warnings) {
  WordSplit all = split_words(text);
  WordSplit out;
  for (std::size_t i = 0; i < all.words.size(); ++i) {
    const std::string& w = all.words[i];
    if (w == "." || w == "!" || w == "?") continue;
    out.words.push_back(w);
    out.spans.push_back(all.spans[i]);
    out.sentence.push_back(0);
  }
  const auto keep = static_cast<std::size_t>(max_words);
  if (out.words.size() > keep) {
    warnings.push_back(std::string("the ") + which + " has " + std::to_string(out.words.size()) +
                       " words; the model reads the first " + std::to_string(keep));
    out.words.resize(keep);
    out.spans.resize(keep);
    out.sentence.resize(keep);
  }
  out.sentences = out.words.empty() ? 0 : 1;
  return out;
}

}  // namespace

Result<EntailmentConfig> EntailmentConfig::parse(std::string_view text, const std::string& file) {
  return detail::read_json_config<bundled::ConfigKeys>(
      text, file, [](const bundled::ConfigKeys& k) { return read_entailment_config(k); });
}

// ---------------------------------------------------------------------------------------------------------
// Model

namespace {

Result<std::unique_ptr<EntailmentModel::Impl>> build(EntailmentConfig config, const io::SafeTensors& weights) {
  ATTN_TRY(check_config(config, weights.name()));
  auto m = std::make_unique<EntailmentModel::Impl>();
  m->config = std::move(config);
  const auto& c = m->config;
  const Index v = static_cast<Index>(c.vocab.size()), e = c.embedding_size, k = c.hidden,
              labels = static_cast<Index>(c.labels.size());
  bundled::TensorReader r(weights);
  ATTN_ASSIGN(m->embedding, r.matrix("embedding.weight", v, e));
  ATTN_ASSIGN(m->premise, bundled::read_lstm_cell(r, "premise", e, k));
  ATTN_ASSIGN(m->hypothesis, bundled::read_lstm_cell(r, "hypothesis", e, k));
  ATTN_ASSIGN(m->W_y_t, r.linear_t("attention.W_y.weight", k, k));
  ATTN_ASSIGN(m->W_h_t, r.linear_t("attention.W_h.weight", k, k));
  ATTN_ASSIGN(m->W_r_t, r.linear_t("attention.W_r.weight", k, k));
  ATTN_ASSIGN(m->W_t_t, r.linear_t("attention.W_t.weight", k, k));
  Matrix w;
  ATTN_ASSIGN(w, r.matrix("attention.w.weight", 1, k));
  m->w = w.row(0);
  ATTN_ASSIGN(m->W_p_t, r.linear_t("final.W_p.weight", k, k));
  ATTN_ASSIGN(m->W_x_t, r.linear_t("final.W_x.weight", k, k));
  ATTN_ASSIGN(m->classifier_t, r.linear_t("classifier.weight", labels, k));
  ATTN_ASSIGN(m->classifier_b, r.vector("classifier.bias", labels));
  if (auto w = r.unused_warning("the word-by-word entailment model")) m->warnings.push_back(std::move(*w));
  for (const std::string& note : r.nonfinite()) m->warnings.push_back(note);
  m->parameters = r.parameters();
  m->index = bundled::index_vocabulary(c.vocab);
  return m;
}

}  // namespace

EntailmentModel::EntailmentModel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
EntailmentModel::~EntailmentModel() = default;
const EntailmentConfig& EntailmentModel::config() const { return impl_->config; }
std::int64_t EntailmentModel::parameters() const { return impl_->parameters; }
std::vector<std::string> EntailmentModel::warnings() const { return impl_->warnings; }

std::string EntailmentModel::description() const {
  const auto& c = impl_->config;
  return bundled::describe(c.task, {"word-by-word attention", std::to_string(c.hidden) + " units"}, impl_->parameters);
}

Result<std::shared_ptr<const EntailmentModel>> EntailmentModel::from_parts(EntailmentConfig config,
                                                                           const io::SafeTensors& weights) {
  return bundled::build_model<EntailmentModel>(
      weights, [&] { return build(std::move(config), weights); },
      [](std::unique_ptr<Impl> impl) { return new EntailmentModel(std::move(impl)); });
}

Result<std::shared_ptr<const EntailmentModel>> EntailmentModel::load(const fs::path& folder) {
  return bundled::load_folder<EntailmentModel, EntailmentConfig>(folder);
}

// ---------------------------------------------------------------------------------------------------------
// Run

std::shared_ptr<const AttentionMap> EntailmentRun::map() const {
  auto map = std::make_shared<AttentionMap>();
  map->stage = Stage::Cross;
  map->name = "word-by-word attention";
  map->weights = attention;
  map->row_axis = "hypothesis";
  map->col_axis = "premise";
  const auto marked = [](const Labels& words, const std::vector<bool>& unknown) {
    Labels out;
    for (std::size_t i = 0; i < words.size(); ++i) out.push_back(unknown[i] ? words[i] + " (unk)" : words[i]);
    return out;
  };
  map->row_labels = marked(hypothesis.words, hypothesis_unknown);
  map->col_labels = marked(premise.words, premise_unknown);
  map->col_spans = premise.spans;
  return map;
}

struct EntailmentRunner::Scratch : entailment::Buffers {};

EntailmentRunner::EntailmentRunner(std::shared_ptr<const EntailmentModel> model)
    : model_(std::move(model)), scratch_(std::make_unique<Scratch>()) {}
EntailmentRunner::~EntailmentRunner() = default;
EntailmentRunner::EntailmentRunner(EntailmentRunner&&) noexcept = default;
EntailmentRunner& EntailmentRunner::operator=(EntailmentRunner&&) noexcept = default;

namespace {

// Ids of the words, <unk> for any the vocabulary lacks.
void look_up(const bundled::VocabMap& index, const Labels& words, std::vector<int>& ids, std::vector<bool>& unknown) {
  for (const auto& w : words) {
    const auto it = index.find(w);
    const int id = it == index.end() ? bundled::kUnknownId : it->second;
    ids.push_back(id);
    unknown.push_back(id == bundled::kUnknownId);
  }
}

// An LSTMCell over the embedded words x [n, e] from the state (h, c), each step's h into the rows of `out`; (h, c)
// end as the last word's state. With `gates_out` and `cells_out`, each step's pre-activations and c too.
void run_lstm(const bundled::LstmWeights& w, const MatrixCRef& x, Matrix& out, Matrix& gates, Matrix& step, Matrix& h,
              Matrix& c, Matrix* gates_out, Matrix* cells_out) {
  const Index n = x.rows();
  gates.resize(n, w.w_ih_t.cols());
  gates.noalias() = x * w.w_ih_t;  // the input half of every step at once
  gates.rowwise() += w.b;
  out.resize(n, w.hidden());
  if (gates_out) gates_out->resize(n, gates.cols());
  if (cells_out) cells_out->resize(n, w.hidden());
  for (Index t = 0; t < n; ++t) {
    step = gates.row(t);
    bundled::multiply(step, h, w.w_hh_t, true);
    if (gates_out) gates_out->row(t) = step.row(0);
    bundled::lstm_gates(step, c, h);
    out.row(t) = h.row(0);
    if (cells_out) cells_out->row(t) = c.row(0);
  }
}

}  // namespace

namespace entailment {

Matrix embed(const EntailmentModel::Impl& m, const std::vector<int>& ids) {
  Matrix x(static_cast<Index>(ids.size()), m.embedding.cols());
  for (Index i = 0; i < x.rows(); ++i) x.row(i) = m.embedding.row(ids[static_cast<std::size_t>(i)]);
  return x;
}

RowVector forward(const EntailmentModel::Impl& m, const MatrixCRef& premise, const MatrixCRef& hypothesis, Buffers& s,
                  Matrix& attention, Tape* tape) {
  const Index k = m.config.hidden, L = premise.rows(), N = hypothesis.rows();
  // The premise from zero states; the hypothesis from the premise's final (h, c).
  s.h = Matrix::Zero(1, k);
  s.c = Matrix::Zero(1, k);
  run_lstm(m.premise, premise, s.Y, s.gates, s.step, s.h, s.c, tape ? &tape->premise_gates : nullptr,
           tape ? &tape->premise_cells : nullptr);
  run_lstm(m.hypothesis, hypothesis, s.H, s.gates, s.step, s.h, s.c, tape ? &tape->hypothesis_gates : nullptr,
           tape ? &tape->hypothesis_cells : nullptr);

  // Word by word: M_t = tanh(Y W^y + h_t W^h + r_{t-1} W^r), alpha_t = softmax(M_t w),
  // r_t = alpha_t Y + tanh(r_{t-1} W^t).
  s.Yw.resize(L, k);
  s.Yw.noalias() = s.Y * m.W_y_t;
  s.r = Matrix::Zero(1, k);
  s.query.resize(1, k);
  s.recurrent.resize(1, k);
  s.scores.resize(1, L);
  attention.resize(N, L);
  if (tape) {
    tape->tanh_rows.resize(static_cast<std::size_t>(N));
    tape->recurrent.resize(N, k);
    tape->r.resize(N + 1, k);
    tape->r.row(0) = s.r.row(0);
  }
  for (Index t = 0; t < N; ++t) {
    bundled::multiply(s.query, s.H.row(t), m.W_h_t);
    bundled::multiply(s.query, s.r, m.W_r_t, true);
    bundled::additive_scores(s.query, s.Yw, m.w, 1, s.tanh_rows, s.scores);
    softmax_rows_inplace(s.scores);
    attention.row(t) = s.scores.row(0);
    bundled::multiply(s.recurrent, s.r, m.W_t_t);
    s.recurrent = s.recurrent.array().tanh().matrix();
    s.r.noalias() = s.scores * s.Y;
    s.r += s.recurrent;
    if (tape) {
      tape->tanh_rows[static_cast<std::size_t>(t)] = s.tanh_rows;
      tape->recurrent.row(t) = s.recurrent.row(0);
      tape->r.row(t + 1) = s.r.row(0);
    }
  }
  // h* = tanh(r_N W^p + h_N W^x); the labels' logits.
  Matrix hstar(1, k);
  bundled::multiply(hstar, s.r, m.W_p_t);
  bundled::multiply(hstar, s.H.row(N - 1), m.W_x_t, true);
  hstar = hstar.array().tanh().matrix();
  if (tape) tape->hstar = hstar.row(0);
  RowVector logits = hstar.row(0) * m.classifier_t;
  logits += m.classifier_b;
  return logits;
}

}  // namespace entailment

Result<EntailmentRun> EntailmentRunner::run(std::string_view premise, std::string_view hypothesis) {
  try {
    const auto& m = model_->impl();
    const auto& cfg = m.config;
    std::vector<std::string> warnings;
    WordSplit p = model_words(premise, cfg.max_words, "premise", warnings);
    WordSplit h = model_words(hypothesis, cfg.max_words, "hypothesis", warnings);
    if (p.words.empty()) return fail(ErrorKind::OutOfRange, "the premise has no words", "premise");
    if (h.words.empty()) return fail(ErrorKind::OutOfRange, "the hypothesis has no words", "hypothesis");
    std::vector<int> premise_ids, hypothesis_ids;
    std::vector<bool> unknown;
    look_up(m.index, p.words, premise_ids, unknown);
    look_up(m.index, h.words, hypothesis_ids, unknown);
    ATTN_LET(run, run_ids(std::move(p), std::move(h), std::move(premise_ids), std::move(hypothesis_ids)));
    run.warnings.insert(run.warnings.begin(), warnings.begin(), warnings.end());
    return run;
  } catch (const std::bad_alloc&) {
    return fail(ErrorKind::TooLarge, "out of memory while running the entailment model", "premise and hypothesis");
  }
}

Result<EntailmentRun> EntailmentRunner::run_ids(WordSplit premise, WordSplit hypothesis, std::vector<int> premise_ids,
                                                std::vector<int> hypothesis_ids) {
  try {
    const auto& m = model_->impl();
    const auto& cfg = m.config;
    Scratch& s = *scratch_;
    const auto vocab = static_cast<int>(cfg.vocab.size());
    const auto check = [&](const WordSplit& words, const std::vector<int>& ids, const char* which) -> Result<void> {
      if (words.words.empty()) return fail(ErrorKind::OutOfRange, std::string("the ") + which + " has no words", which);
      if (ids.size() != words.words.size())
        return fail(ErrorKind::Mismatch,
                    std::to_string(ids.size()) + " ids for the " + std::to_string(words.words.size()) + " words",
                    which);
      if (static_cast<int>(ids.size()) > cfg.max_words)
        return fail(ErrorKind::OutOfRange,
                    std::to_string(ids.size()) + " words; the model reads " + std::to_string(cfg.max_words), which);
      for (std::size_t i = 0; i < ids.size(); ++i)
        if (ids[i] < 0 || ids[i] >= vocab)
          return fail(ErrorKind::OutOfRange,
                      "id " + std::to_string(ids[i]) + " of word " + std::to_string(i) +
                          " is out of the vocabulary (0 .. " + std::to_string(vocab - 1) + ")",
                      which);
      return {};
    };
    ATTN_TRY(check(premise, premise_ids, "premise"));
    ATTN_TRY(check(hypothesis, hypothesis_ids, "hypothesis"));
    EntailmentRun run;
    run.premise = std::move(premise);
    run.hypothesis = std::move(hypothesis);
    run.premise_ids = std::move(premise_ids);
    run.hypothesis_ids = std::move(hypothesis_ids);
    for (const int id : run.premise_ids) run.premise_unknown.push_back(id == bundled::kUnknownId);
    for (const int id : run.hypothesis_ids) run.hypothesis_unknown.push_back(id == bundled::kUnknownId);
    const RowVector logits = entailment::forward(m, entailment::embed(m, run.premise_ids),
                                                 entailment::embed(m, run.hypothesis_ids), s, run.attention);
    bundled::softmax_into(logits, run.probabilities);
    Index best = 0;
    logits.maxCoeff(&best);
    run.predicted = static_cast<int>(best);
    if (auto w = detail::nonfinite_attention_warning(detail::count_nonfinite(run.attention), run.attention.size())) {
      run.warnings.push_back(std::move(*w));
    }
    return run;
  } catch (const std::bad_alloc&) {
    return fail(ErrorKind::TooLarge, "out of memory while running the entailment model", "premise and hypothesis");
  }
}

}  // namespace attn::models
