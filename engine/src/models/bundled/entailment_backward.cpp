// Attribution for the word-by-word entailment model (attn/models/word_attribution.h): entailment_impl.h's forward
// with a tape, then its backward pass written out by hand in float32, from one label's logit through the classifier,
// the attention's recurrence over the hypothesis words and both LSTMs to the embedded words of both sentences.
// tests/parity/test_entailment_attribution_parity.cpp checks it against torch autograd.
#include "attn/models/entailment.h"

#include "entailment_impl.h"

#include <new>
#include <string>
#include <utility>

namespace attn::models {

namespace {

constexpr int kMaxEntailmentSteps = 1024;

using EntailmentRowArray = Eigen::Array<float, 1, Eigen::Dynamic>;

// dF/dx of one label's logit F for both sentences' embedded words, and F.
struct EntailmentGradients {
  Matrix premise, hypothesis;  // [L, e], [N, e]
  float value = 0;
};

// The buffers a pass reuses between the steps of integrated gradients.
struct EntailmentPass {
  entailment::Buffers buffers;
  entailment::Tape tape;
  Matrix attention;
};

// Back through an LSTMCell run (the forward's run_lstm) whose pre-activations and cells the tape holds, from the
// gradients with respect to each step's output h (`dout` [n, k]) and to the final state (dh, dc). On return (dh, dc)
// are the gradients with respect to the initial state, whose cell was `c0`; the result is dF/dx [n, e].
Matrix entailment_lstm_backward(const bundled::LstmWeights& w, const Matrix& gates, const Matrix& cells,
                                const RowVector& c0, const MatrixCRef& dout, RowVector& dh, RowVector& dc) {
  const Index n = gates.rows(), k = w.hidden();
  const auto sigmoid = [](const auto& v) { return (1.0f + (-v).exp()).inverse(); };
  Matrix dgates(n, 4 * k);
  for (Index t = n - 1; t >= 0; --t) {
    const auto pre = gates.row(t).array();
    const EntailmentRowArray i = sigmoid(pre.leftCols(k)), f = sigmoid(pre.middleCols(k, k)),
                             g = pre.middleCols(2 * k, k).tanh(), o = sigmoid(pre.rightCols(k));
    const EntailmentRowArray c_prev =
        t > 0 ? EntailmentRowArray(cells.row(t - 1).array()) : EntailmentRowArray(c0.array());
    const EntailmentRowArray tanh_c = cells.row(t).array().tanh();
    dh += dout.row(t);
    // h = o tanh(c), c = f c_prev + i g.
    const EntailmentRowArray dcell = dc.array() + dh.array() * o * (1 - tanh_c.square());
    dgates.row(t).segment(0, k) = (dcell * g * i * (1 - i)).matrix();
    dgates.row(t).segment(k, k) = (dcell * c_prev * f * (1 - f)).matrix();
    dgates.row(t).segment(2 * k, k) = (dcell * i * (1 - g.square())).matrix();
    dgates.row(t).segment(3 * k, k) = (dh.array() * tanh_c * o * (1 - o)).matrix();
    dc = (dcell * f).matrix();
    dh.noalias() = dgates.row(t) * w.w_hh_t.transpose();
  }
  return dgates * w.w_ih_t.transpose();
}

// The forward at the embedded words (premise, hypothesis) and the gradient of logit `label` there.
EntailmentGradients entailment_gradients(const EntailmentModel::Impl& m, const MatrixCRef& premise,
                                         const MatrixCRef& hypothesis, int label, EntailmentPass& p) {
  entailment::Tape& tape = p.tape;
  const entailment::Buffers& s = p.buffers;
  const RowVector logits = entailment::forward(m, premise, hypothesis, p.buffers, p.attention, &tape);
  const Index k = m.config.hidden, L = premise.rows(), N = hypothesis.rows();
  // F = h* W_c[label] + b, h* = tanh(r_N W^p + h_N W^x).
  const RowVector dpre = m.classifier_t.col(label).transpose().array() * (1 - tape.hstar.array().square());
  RowVector dr = dpre * m.W_p_t.transpose();
  Matrix dH = Matrix::Zero(N, k), dY = Matrix::Zero(L, k), dYw = Matrix::Zero(L, k);
  dH.row(N - 1) = dpre * m.W_x_t.transpose();
  // Hypothesis word t, last first: M_t = tanh(Y W^y + q_t) with q_t = h_t W^h + r_{t-1} W^r, the scores M_t w,
  // alpha_t their softmax, r_t = alpha_t Y + u_t with u_t = tanh(r_{t-1} W^t).
  Matrix dZ(L, k);
  for (Index t = N - 1; t >= 0; --t) {
    const auto alpha = p.attention.row(t);
    const RowVector dalpha = dr * s.Y.transpose();
    dY.noalias() += alpha.transpose() * dr;
    const RowVector du = dr.array() * (1 - tape.recurrent.row(t).array().square());
    RowVector dr_prev = du * m.W_t_t.transpose();
    const RowVector dscores = alpha.array() * (dalpha.array() - alpha.dot(dalpha));
    const Matrix& M = tape.tanh_rows[static_cast<std::size_t>(t)];
    dZ = ((dscores.transpose() * m.w).array() * (1 - M.array().square())).matrix();
    dYw += dZ;
    const RowVector dq = dZ.colwise().sum();
    dH.row(t) += dq * m.W_h_t.transpose();
    dr_prev.noalias() += dq * m.W_r_t.transpose();
    dr = dr_prev;
  }
  dY.noalias() += dYw * m.W_y_t.transpose();
  // The hypothesis LSTM started from the premise's final state, so its initial state's gradient is the premise
  // LSTM's final one; the premise started from zeros.
  EntailmentGradients out;
  RowVector dh = RowVector::Zero(k), dc = RowVector::Zero(k);
  out.hypothesis = entailment_lstm_backward(m.hypothesis, tape.hypothesis_gates, tape.hypothesis_cells,
                                            tape.premise_cells.row(L - 1), dH, dh, dc);
  out.premise =
      entailment_lstm_backward(m.premise, tape.premise_gates, tape.premise_cells, RowVector::Zero(k), dY, dh, dc);
  out.value = logits(label);
  return out;
}

// The run's label to explain (-1: its prediction) and ids the model can read, or an error saying which is wrong.
Result<int> checked_entailment_label(const EntailmentModel::Impl& m, const EntailmentRun& run, int label) {
  const int labels = static_cast<int>(m.config.labels.size());
  if (label == -1) label = run.predicted;
  if (label < 0 || label >= labels) {
    return fail(ErrorKind::OutOfRange, "label " + std::to_string(label) + " is out of range: the model has " +
                                           std::to_string(labels) + " labels (0 .. " + std::to_string(labels - 1) +
                                           ", or -1 for the prediction)");
  }
  if (run.premise_ids.empty() || run.hypothesis_ids.empty()) {
    return fail(ErrorKind::OutOfRange, "the run has no premise or no hypothesis words");
  }
  const int vocab = static_cast<int>(m.config.vocab.size());
  for (const auto* ids : {&run.premise_ids, &run.hypothesis_ids}) {
    for (const int id : *ids) {
      if (id < 0 || id >= vocab) {
        return fail(ErrorKind::OutOfRange, "word id " + std::to_string(id) + " is not in the model's vocabulary of " +
                                               std::to_string(vocab) + " (a run of another model?)");
      }
    }
  }
  return label;
}

// Integrated gradients from the zero embedding, the midpoint rule over `steps`: the mean gradient into `premise`
// and `hypothesis`; the logits at the input and at the baseline into `a`.
Result<void> integrated_entailment_gradients(const EntailmentModel::Impl& m, const Matrix& xp, const Matrix& xh,
                                             const WordAttributionOptions& o, EntailmentPass& p, WordAttribution& a,
                                             Matrix& premise, Matrix& hypothesis) {
  if (o.steps < 1 || o.steps > kMaxEntailmentSteps) {
    return fail(ErrorKind::OutOfRange, "integrated gradients: steps must be 1 .. " +
                                           std::to_string(kMaxEntailmentSteps) + ", not " + std::to_string(o.steps));
  }
  premise = Matrix::Zero(xp.rows(), xp.cols());
  hypothesis = Matrix::Zero(xh.rows(), xh.cols());
  for (int step = 0; step < o.steps; ++step) {
    if (o.cancel && o.cancel->load()) return fail(ErrorKind::Cancelled, "integrated gradients: cancelled");
    const float alpha = (static_cast<float>(step) + 0.5f) / static_cast<float>(o.steps);
    const EntailmentGradients g = entailment_gradients(m, alpha * xp, alpha * xh, a.label, p);
    premise += g.premise;
    hypothesis += g.hypothesis;
  }
  premise /= static_cast<float>(o.steps);
  hypothesis /= static_cast<float>(o.steps);
  a.value = entailment::forward(m, xp, xh, p.buffers, p.attention)(a.label);
  a.baseline_value = entailment::forward(m, Matrix::Zero(xp.rows(), xp.cols()), Matrix::Zero(xh.rows(), xh.cols()),
                                         p.buffers, p.attention)(a.label);
  return {};
}

}  // namespace

Result<WordAttribution> attribute_words(const EntailmentModel& model, const EntailmentRun& run,
                                        const WordAttributionOptions& options) {
  try {
    const EntailmentModel::Impl& m = model.impl();
    WordAttribution a;
    ATTN_ASSIGN(a.label, checked_entailment_label(m, run, options.label));
    const Matrix xp = entailment::embed(m, run.premise_ids), xh = entailment::embed(m, run.hypothesis_ids);
    EntailmentPass p;
    Matrix gp, gh;
    if (options.method == WordAttributionMethod::GradientXInput) {
      EntailmentGradients g = entailment_gradients(m, xp, xh, a.label, p);
      a.value = g.value;
      gp = std::move(g.premise);
      gh = std::move(g.hypothesis);
    } else {
      ATTN_TRY(integrated_entailment_gradients(m, xp, xh, options, p, a, gp, gh));
    }
    a.premise_words = static_cast<int>(xp.rows());
    a.scores.resize(xp.rows() + xh.rows());
    a.scores.head(xp.rows()) = (xp.array() * gp.array()).rowwise().sum().matrix();
    a.scores.tail(xh.rows()) = (xh.array() * gh.array()).rowwise().sum().matrix();
    if (options.method == WordAttributionMethod::IntegratedGradients) {
      a.gap = static_cast<float>(static_cast<double>(a.scores.sum()) -
                                 (static_cast<double>(a.value) - static_cast<double>(a.baseline_value)));
    }
    return a;
  } catch (const std::bad_alloc&) {
    return fail(ErrorKind::TooLarge, "out of memory while attributing the entailment model's label");
  }
}

}  // namespace attn::models
