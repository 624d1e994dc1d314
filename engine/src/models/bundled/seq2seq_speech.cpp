// The speech recogniser of tools/train/MODELS.md section 6 (Chorowski et al. 2015), as speech_torch.py has it: log-mel
// frames normalised per band, `stack` of them concatenated to an encoder step, bidirectional GRU layers, and the
// Bahdanau decoder of seq2seq.cpp whose additive score adds the location term L (F * alpha_{t-1})_j. F (k filters of
// odd width r, centred, zero beyond the ends) and L (k -> a) are one linear map of each window of r previous weights,
// so they are kept as one matrix (L F)^T [r, a]: the term for step j is the window alpha_{t-1}[j - r/2, j + r/2]
// times it.
#include "attn/audio/audio.h"
#include "seq2seq_impl.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace attn::models::bundled::speech {

namespace {

constexpr int kMaxEncoderLayers = 16, kMaxLocationWidth = 255, kMaxStack = 64;

// Entries after the special ones: espeak-ng's mnemonics, any text without white space.
Result<void> check_phonemes(const ConfigKeys& k, const std::vector<std::string>& vocab) {
  for (std::size_t i = 3; i < vocab.size(); ++i) {
    const std::string& p = vocab[i];
    if (p.empty() || std::any_of(p.begin(), p.end(), [](char ch) { return ch == ' ' || ch == '\t' || ch == '\n'; }))
      return k.error(ErrorKind::Malformed, "target_vocab",
                     "target_vocab[" + std::to_string(i) + "] is \"" + p +
                         "\"; a speech model's entries are phonemes: text without white space");
  }
  return {};
}

}  // namespace

Result<Seq2SeqConfig> read_config(const ConfigKeys& k, Seq2SeqConfig c) {
  c.attention = Seq2SeqAttention::Location;
  c.score = Seq2SeqScore::Additive;
  std::string unit;
  ATTN_ASSIGN(unit, k.text_or("unit", ""));
  if (unit != "frame")
    return k.error(ErrorKind::Mismatch, "unit",
                   "location attention is the speech models': it needs \"unit\": \"frame\", got \"" + unit + "\"");
  c.frames = true;
  if (const auto* source = k.find("source_vocab"); source && !(source->is_array() && source->empty()))
    return k.error(ErrorKind::Mismatch, "source_vocab", "a speech model reads log-mel frames: source_vocab must be []");
  const auto* features = k.find("features");
  if (!features || !features->is_object())
    return k.error(ErrorKind::Malformed,
                   "features is missing; a speech model says its log-mel frames: {\"sample_rate\": "
                   "16000, \"window\": 400, \"hop\": 160, \"fft\": 512, \"bands\": 80, \"stack\": 3}");
  const audio::MelSettings mel;
  const auto number = [&](const char* key) -> std::int64_t {
    const auto it = features->find(key);
    return it != features->end() && it->is_number_integer() ? it->get<std::int64_t>() : -1;
  };
  for (const auto& [key, want] : {std::pair{"sample_rate", std::int64_t{audio::kSampleRate}},
                                  {"window", std::int64_t{mel.window}},
                                  {"hop", std::int64_t{mel.hop}},
                                  {"fft", std::int64_t{mel.fft}},
                                  {"bands", std::int64_t{mel.bands}}}) {
    if (number(key) != want)
      return k.error(ErrorKind::Unsupported, "features",
                     std::string("features.") + key + " is " + std::to_string(number(key)) + "; AttnScope computes " +
                         std::to_string(want) + " (16 kHz, 25 ms windows every 10 ms, 80 mel bands)");
  }
  c.feature_bands = mel.bands;
  c.feature_stack = int(number("stack"));
  if (c.feature_stack < 1 || c.feature_stack > kMaxStack)
    return k.error(ErrorKind::OutOfRange, "features", "features.stack must be from 1 to 64 frames");
  ATTN_ASSIGN(c.target_vocab, k.vocabulary("target_vocab", {"<pad>", "<s>", "</s>"}, 4));
  ATTN_TRY(check_phonemes(k, c.target_vocab));
  ATTN_ASSIGN(c.embedding_size, k.whole("embedding_size"));
  ATTN_ASSIGN(c.encoder_hidden, k.whole("encoder_hidden"));
  ATTN_ASSIGN(c.encoder_layers, k.whole("encoder_layers", 1, kMaxEncoderLayers));
  ATTN_ASSIGN(c.decoder_hidden, k.whole("decoder_hidden"));
  ATTN_ASSIGN(c.attention_size, k.whole("attention_size"));
  ATTN_ASSIGN(c.location_filters, k.whole("location_filters"));
  ATTN_ASSIGN(c.location_width, k.whole("location_width", 1, kMaxLocationWidth));
  if (c.location_width % 2 == 0)
    return k.error(
        ErrorKind::OutOfRange, "location_width",
        "location_width is " + std::to_string(c.location_width) + "; the filters are centred: it must be odd");
  ATTN_ASSIGN(c.max_source_length, k.whole("max_source_length"));
  ATTN_ASSIGN(c.max_target_length, k.whole("max_target_length"));
  return c;
}

Result<void> read(Seq2SeqModel::Impl& m, TensorReader& r) {
  const auto& c = m.config;
  auto& p = m.speech;
  const Index bands = c.feature_bands, h = c.encoder_hidden, a = c.attention_size, k = c.location_filters,
              width = c.location_width;
  ATTN_ASSIGN(p.mean, r.vector("encoder.feature_mean", bands));
  RowVector deviation;
  ATTN_ASSIGN(deviation, r.vector("encoder.feature_std", bands));
  if ((deviation.array() <= 0.0f).any() || !deviation.allFinite())
    return fail(ErrorKind::OutOfRange, "encoder.feature_std: every band's deviation must be positive", r.file_name());
  p.inverse_std = deviation.cwiseInverse();
  for (int layer = 0; layer < c.encoder_layers; ++layer) {
    BiGruWeights w;
    ATTN_ASSIGN(w, read_bigru(r, "encoder.gru", layer == 0 ? bands * c.feature_stack : 2 * h, h, layer));
    p.layers.push_back(std::move(w));
  }
  Matrix filters, project_t;
  ATTN_ASSIGN(filters, r.flattened("attention.F.weight", {k, 1, width}));  // [k, r]
  ATTN_ASSIGN(project_t, r.linear_t("attention.L.weight", a, k));          // [k, a]
  p.location_t = (filters.cast<double>().transpose() * project_t.cast<double>()).cast<float>();
  return {};
}

void encode(const Seq2SeqModel::Impl& m, Seq2SeqBuffers& s, const Matrix& frames) {
  const auto& c = m.config;
  const auto& p = m.speech;
  const Index bands = c.feature_bands, stack = c.feature_stack, S = frames.rows() / stack;
  // Row j of the stacked input is frames 3j, 3j + 1, 3j + 2 side by side: the row-major frames reshaped.
  s.embedded.resize(S, stack * bands);
  for (Index t = 0; t < S * stack; ++t)
    s.embedded.block(t / stack, (t % stack) * bands, 1, bands) = (frames.row(t) - p.mean).cwiseProduct(p.inverse_std);
  bundled::bigru(p.layers[0], s.embedded, s.H, s.gru);
  for (std::size_t layer = 1; layer < p.layers.size(); ++layer) {
    std::swap(s.H, s.layer_out);
    bundled::bigru(p.layers[layer], s.layer_out, s.H, s.gru);
  }
  bundled::initial_state(m, s);  // from the last layer
  s.keys.resize(S, c.attention_size);
  bundled::multiply(s.keys, s.H, m.key_t);
}

void scores(const Seq2SeqModel::Impl& m, Seq2SeqBuffers& s, Index B) {
  const Index S = s.keys.rows(), width = m.config.location_width, half = width / 2;
  s.windows.resize(S, width);
  for (Index b = 0; b < B; ++b) {
    const auto previous = s.feed.row(b);
    s.windows.setZero();
    for (Index j = 0; j < S; ++j) {
      const Index from = std::max<Index>(0, j - half), to = std::min<Index>(S, j + half + 1);
      s.windows.row(j).segment(from - (j - half), to - from) = previous.segment(from, to - from);
    }
    s.tanh_rows.resize(S, m.config.attention_size);
    s.tanh_rows = s.keys.rowwise() + s.query.row(b);
    bundled::multiply(s.tanh_rows, s.windows, m.speech.location_t, true);
    s.tanh_rows = s.tanh_rows.array().tanh().matrix();
    s.alpha.row(b) = s.tanh_rows.lazyProduct(m.v.transpose()).transpose();
  }
}

void weights(Seq2SeqBuffers& s, Index B) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const AttentionShaping& a = s.shaping;
  const Index S = s.alpha.cols();
  for (Index b = 0; b < B; ++b) {
    auto e = s.alpha.row(b);
    Index lo = 0, hi = S;  // the steps that may be attended, [lo, hi)
    if (a.window > 0) {
      // The median of the previous alignment: the first step where its running sum reaches one half.
      const auto previous = s.feed.row(b);
      Index median = 0;
      for (float sum = 0.0f; median < S && (sum += previous(median)) < 0.5f;) ++median;
      median = std::min(median, S - 1);
      lo = std::max<Index>(0, median - a.window);
      hi = std::min<Index>(S, median + a.window + 1);
    }
    if (a.top_k > 0 && a.top_k < hi - lo) {
      // The k highest scores in [lo, hi) stay; the others are set to -inf, which both weightings read as 0.
      s.order.resize(std::size_t(hi - lo));
      for (Index j = lo; j < hi; ++j) s.order[std::size_t(j - lo)] = j;
      const auto higher = [&](Index x, Index y) { return e(x) > e(y) || (e(x) == e(y) && x < y); };
      std::nth_element(s.order.begin(), s.order.begin() + a.top_k - 1, s.order.end(), higher);
      for (auto it = s.order.begin() + a.top_k; it != s.order.end(); ++it) e(*it) = -kInf;
    }
    e.head(lo).setConstant(-kInf);
    e.tail(S - hi).setConstant(-kInf);
    auto kept = e.segment(lo, hi - lo);
    if (a.smooth) {
      kept = kept.unaryExpr([](float x) { return x == -kInf ? 0.0f : 1.0f / (1.0f + std::exp(-x)); });
    } else {
      const float top = kept.maxCoeff();
      kept = kept.unaryExpr([&](float x) { return x == -kInf ? 0.0f : std::exp(a.sharpen * (x - top)); });
    }
    e.head(lo).setZero();
    e.tail(S - hi).setZero();
    kept /= kept.sum();
  }
}

}  // namespace attn::models::bundled::speech

namespace attn::models {

std::string AttentionShaping::problem() const {
  const AttentionShaping& a = *this;
  if (!std::isfinite(a.sharpen) || a.sharpen <= 0.0f || a.sharpen > 100.0f) {
    char beta[32];
    std::snprintf(beta, sizeof beta, "%g", double(a.sharpen));
    return std::string("sharpening beta is ") + beta + "; it is above 0 and at most 100";
  }
  if (a.smooth && a.sharpen != 1.0f) return "smoothing (the sigmoid) and sharpening (beta) do not go together";
  if (a.top_k < 0) return "top k is " + std::to_string(a.top_k) + "; 0 (every step) or more";
  if (a.window < 0) return "the window is " + std::to_string(a.window) + "; 0 (every step) or more";
  return {};
}

}  // namespace attn::models
