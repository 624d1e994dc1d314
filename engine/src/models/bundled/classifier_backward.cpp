// Attribution for the review classifiers (attn/models/word_attribution.h): each kind's forward pass again,
// differentiable (it keeps what the backward pass needs, and is built from the forward's own pieces), then
// the gradient of one label's logit with respect to the embedded words, by hand: through the classifier,
// the attention pooling (Yang et al. 2016), the bidirectional GRU (bundled::bigru_backward), the LSTM, or
// the CNN's ReLU and global max pooling (the gradient reaches each channel's winner only).
#include "attn/mechanisms/blocks.h"
#include "attn/models/classifier.h"
#include "attn/models/word_attribution.h"
#include "classifier_impl.h"

#include <new>
#include <string>

namespace attn::models {

namespace {

using ClsImpl = ClassifierModel::Impl;

// d(pooled)/d(x)^T applied to d_context [heads, d], for attention pooling over x [n, d] whose weights are
// alpha [heads, n]: context = alpha x with alpha = softmax(w tanh(x W^T + b)^T) per head.
Matrix cls_pooling_backward(const PoolingWeights& p, const MatrixCRef& x, const Matrix& alpha,
                            const MatrixCRef& d_context) {
  Matrix d_x(x.rows(), x.cols());
  d_x.noalias() = alpha.transpose() * d_context;     // through the weighted sum, alpha fixed
  const Matrix d_alpha = d_context * x.transpose();  // [heads, n]
  // The softmax's Jacobian: ds = alpha * (d_alpha - sum_j alpha_j d_alpha_j), per head.
  const Eigen::VectorXf centre = alpha.cwiseProduct(d_alpha).rowwise().sum();
  const Matrix d_scores = alpha.cwiseProduct(d_alpha - centre.replicate(1, alpha.cols()));
  const Matrix u = linear(x, p.W, p.b).array().tanh().matrix();  // [n, a]
  const Matrix d_pre = ((d_scores.transpose() * p.w).array() * (1.0f - u.array().square())).matrix();
  d_x.noalias() += d_pre * p.W;
  return d_x;
}

// A pooled row [heads d] (the heads' contexts concatenated) as the [heads, d] matrix it flattens.
Matrix cls_as_contexts(const RowVector& pooled, Index heads) {
  return Eigen::Map<const Matrix>(pooled.data(), heads, pooled.size() / heads);
}

// Each kind's logit of `label` (whose classifier column is w_label) for the embedded words x [n, e], and its
// gradient with respect to x into d_x [n, e].
float cls_pooling_gradient(const ClsImpl& m, const RowVector& w_label, int label, const Matrix& x, Matrix& d_x) {
  const PoolingParams params;
  bundled::GruScratch scratch;
  bundled::GruTape tape;
  Matrix encoded;
  bundled::bigru(m.words, x, encoded, scratch, &tape);
  const PoolingResult pool = attention_pooling(encoded, m.word_pool, params);
  const Matrix d_encoded =
      cls_pooling_backward(m.word_pool, encoded, pool.weights, cls_as_contexts(w_label, m.config.heads));
  bundled::bigru_backward(m.words, tape, encoded, d_encoded, d_x);
  return pool.pooled.dot(w_label) + m.classifier_b(label);
}

float cls_hierarchical_gradient(const ClsImpl& m, const std::vector<int>& sentence, const RowVector& w_label, int label,
                                const Matrix& x, Matrix& d_x) {
  const ClassifierConfig& c = m.config;
  const PoolingParams params;
  bundled::GruScratch scratch;
  // Each sentence's word level as the forward runs it (from zero states), kept for the way back.
  struct Level {
    Index begin = 0, end = 0;
    bundled::GruTape tape;
    Matrix encoded, weights;
  };
  const int sentences = sentence.empty() ? 0 : sentence.back() + 1;
  std::vector<Level> levels(static_cast<std::size_t>(sentences));
  Matrix vectors(sentences, c.heads * 2 * static_cast<Index>(c.hidden));
  Index begin = 0;
  for (int k = 0; k < sentences; ++k) {
    Level& l = levels[static_cast<std::size_t>(k)];
    l.begin = begin;
    l.end = classifier_forward::sentence_end(sentence, begin, k);
    bundled::bigru(m.words, x.middleRows(l.begin, l.end - l.begin), l.encoded, scratch, &l.tape);
    PoolingResult pool = attention_pooling(l.encoded, m.word_pool, params);
    l.weights = std::move(pool.weights);
    vectors.row(k) = pool.pooled;
    begin = l.end;
  }
  bundled::GruTape tape;
  Matrix encoded, d_vectors;
  bundled::bigru(m.sentences, vectors, encoded, scratch, &tape);
  const PoolingResult pool = attention_pooling(encoded, m.sentence_pool, params);
  const Matrix d_encoded = cls_pooling_backward(m.sentence_pool, encoded, pool.weights, w_label);
  bundled::bigru_backward(m.sentences, tape, encoded, d_encoded, d_vectors);
  d_x = Matrix::Zero(x.rows(), x.cols());
  Matrix d_words;
  for (int k = 0; k < sentences; ++k) {
    const Level& l = levels[static_cast<std::size_t>(k)];
    const Matrix d_level =
        cls_pooling_backward(m.word_pool, l.encoded, l.weights, cls_as_contexts(d_vectors.row(k), c.heads));
    bundled::bigru_backward(m.words, l.tape, l.encoded, d_level, d_words);
    d_x.middleRows(l.begin, l.end - l.begin) = d_words;
  }
  return pool.pooled.dot(w_label) + m.classifier_b(label);
}

float cls_lstm_gradient(const ClsImpl& m, const RowVector& w_label, int label, const Matrix& x, Matrix& d_x) {
  const ClassifierConfig& c = m.config;
  const Index n = x.rows(), H = c.hidden;
  Matrix pre, cells;
  const RowVector h = classifier_forward::lstm(m, x, pre, &cells);
  const auto sigmoid = [](const auto& v) { return (1.0f + (-v).exp()).inverse(); };
  // Backpropagation through time from h_T = o_T tanh(c_T), with c_t = f_t c_{t-1} + i_t g_t.
  d_x.resize(n, x.cols());
  RowVector dh = w_label, dc = RowVector::Zero(H), d_pre(4 * H);
  for (Index t = n - 1; t >= 0; --t) {
    const auto a = pre.row(t).array();
    const Eigen::Array<float, 1, Eigen::Dynamic> i = sigmoid(a.head(H)), f = sigmoid(a.segment(H, H)),
                                                 g = a.segment(2 * H, H).tanh(), o = sigmoid(a.tail(H)),
                                                 tanh_c = cells.row(t).array().tanh();
    const Eigen::Array<float, 1, Eigen::Dynamic> c_prev =
        t > 0 ? Eigen::Array<float, 1, Eigen::Dynamic>(cells.row(t - 1).array())
              : Eigen::Array<float, 1, Eigen::Dynamic>::Zero(H);
    dc.array() += dh.array() * o * (1.0f - tanh_c.square());
    d_pre.head(H) = (dc.array() * g * i * (1.0f - i)).matrix();
    d_pre.segment(H, H) = (dc.array() * c_prev * f * (1.0f - f)).matrix();
    d_pre.segment(2 * H, H) = (dc.array() * i * (1.0f - g.square())).matrix();
    d_pre.tail(H) = (dh.array() * tanh_c * o * (1.0f - o)).matrix();
    d_x.row(t).noalias() = d_pre * m.lstm.w_ih_t.transpose();
    dh.noalias() = d_pre * m.lstm.w_hh_t.transpose();
    dc.array() *= f;
  }
  return h.dot(w_label) + m.classifier_b(label);
}

float cls_cnn_gradient(const ClsImpl& m, const RowVector& w_label, int label, const Matrix& x, Matrix& d_x) {
  const ClassifierConfig& c = m.config;
  const Index n = x.rows(), e = x.cols(), k = c.kernel, pad = (k - 1) / 2;
  Matrix windows;
  classifier_forward::cnn_windows(x, k, windows);
  const Matrix activations = classifier_forward::cnn_activations(m, windows);
  std::vector<int> winners;
  const RowVector pooled = classifier_forward::cnn_max_pool(activations, winners);
  // Only a winner whose ReLU is open passes the gradient (ReLU's derivative at 0 is 0, as torch's).
  Matrix d_conv = Matrix::Zero(n, c.channels);
  for (Index ch = 0; ch < c.channels; ++ch) {
    if (pooled(ch) > 0.0f) d_conv(winners[static_cast<std::size_t>(ch)], ch) = w_label(ch);
  }
  const Matrix d_windows = d_conv * m.conv_t.transpose();  // [n, k e]
  d_x = Matrix::Zero(n, e);
  for (Index p = 0; p < n; ++p) {
    for (Index t = 0; t < k; ++t) {
      const Index word = p + t - pad;
      if (word >= 0 && word < n) d_x.row(word) += d_windows.block(p, t * e, 1, e);
    }
  }
  return pooled.dot(w_label) + m.classifier_b(label);
}

// The label's logit for the embedded words x [n, e], and its gradient with respect to x into d_x [n, e].
float cls_logit_gradient(const ClsImpl& m, const std::vector<int>& sentence, int label, const Matrix& x, Matrix& d_x) {
  const RowVector w_label = m.classifier_t.col(label).transpose();
  switch (m.config.kind) {
    case ClassifierKind::AttentionPooling: return cls_pooling_gradient(m, w_label, label, x, d_x);
    case ClassifierKind::Hierarchical: return cls_hierarchical_gradient(m, sentence, w_label, label, x, d_x);
    case ClassifierKind::Lstm: return cls_lstm_gradient(m, w_label, label, x, d_x);
    case ClassifierKind::Cnn: return cls_cnn_gradient(m, w_label, label, x, d_x);
  }
  return 0.0f;
}

// Per word, x_i . g_i.
Vector cls_word_scores(const Matrix& x, const Matrix& g) { return x.cwiseProduct(g).rowwise().sum(); }

}  // namespace

Result<WordAttribution> attribute_words(const ClassifierModel& model, const ClassifierRun& run,
                                        const WordAttributionOptions& options) {
  constexpr int kMaxSteps = 1024;
  try {
    const ClsImpl& m = model.impl();
    const ClassifierConfig& c = m.config;
    const int labels = static_cast<int>(c.labels.size());
    const int label = options.label == -1 ? run.predicted : options.label;
    if (label < 0 || label >= labels) {
      return fail(ErrorKind::OutOfRange,
                  "label " + std::to_string(options.label) + " is not one of the model's " + std::to_string(labels) +
                      " labels (0 .. " + std::to_string(labels - 1) + ", or -1 for the prediction)",
                  "attribution");
    }
    if (options.method == WordAttributionMethod::IntegratedGradients &&
        (options.steps < 1 || options.steps > kMaxSteps)) {
      return fail(ErrorKind::OutOfRange,
                  "integrated gradients: steps must be 1 .. " + std::to_string(kMaxSteps) + ", not " +
                      std::to_string(options.steps),
                  "attribution");
    }
    // The run must be one of this model's: its words, ids and sentences agree.
    const std::size_t n = run.ids.size();
    bool consistent = n > 0 && run.input.words.size() == n && run.input.sentence.size() == n;
    for (const int id : run.ids) consistent = consistent && id >= 0 && id < static_cast<int>(c.vocab.size());
    if (!consistent) {
      return fail(ErrorKind::Mismatch, "the run is not one of this classifier's (its words, ids or sentences disagree)",
                  "attribution");
    }

    WordAttribution out;
    out.label = label;
    Matrix x, gradient;
    classifier_forward::embed(m, run.ids, x);
    out.value = cls_logit_gradient(m, run.input.sentence, label, x, gradient);
    if (options.method == WordAttributionMethod::GradientXInput) {
      out.scores = cls_word_scores(x, gradient);
      return out;
    }
    Matrix scaled, sum = Matrix::Zero(x.rows(), x.cols());
    out.baseline_value = cls_logit_gradient(m, run.input.sentence, label, Matrix::Zero(x.rows(), x.cols()), gradient);
    for (int s = 0; s < options.steps; ++s) {
      if (options.cancel && options.cancel->load(std::memory_order_relaxed)) {
        return fail(ErrorKind::Cancelled, "attribution cancelled", "attribution");
      }
      // The midpoint rule: alpha = (s + 1/2) / steps.
      scaled = x * ((static_cast<float>(s) + 0.5f) / static_cast<float>(options.steps));
      cls_logit_gradient(m, run.input.sentence, label, scaled, gradient);
      sum += gradient;
    }
    out.scores = cls_word_scores(x, sum / static_cast<float>(options.steps));
    out.gap = out.scores.sum() - (out.value - out.baseline_value);
    return out;
  } catch (const std::bad_alloc&) {
    return fail(ErrorKind::TooLarge, "out of memory while attributing", "attribution");
  }
}

}  // namespace attn::models
