// The text classifiers of tools/train/MODELS.md section 2: words, config, strict loading, and the flat
// (words -> BiGRU -> pooling) and hierarchical (each sentence's words -> BiGRU -> pooling, then the
// sentence vectors -> BiGRU -> pooling; Yang et al. 2016) forward passes, whose pooling is the lab's
// attn::attention_pooling, so the classifier's maps are the mechanism's own; and the two readings of
// saliency without a query: an LSTM's gates (the share of the final cell state each word wrote) and a CNN's
// global max pooling (which words the channels' maxima come from).
#include "attn/models/classifier.h"

#include "attn/io/safetensors.h"
#include "classifier_impl.h"
#include "../../core/nonfinite.h"
#include "../../core/try.h"

#include <algorithm>
#include <cmath>

namespace attn::models {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

Result<ClassifierKind> read_kind(const bundled::ConfigKeys& k, bool hierarchical) {
  std::string kind;
  ATTN_ASSIGN(kind, k.text_or("kind", "attention-pooling"));
  if (kind == "attention-pooling")
    return hierarchical ? ClassifierKind::Hierarchical : ClassifierKind::AttentionPooling;
  if (hierarchical) {
    return k.error(ErrorKind::Malformed, "kind",
                   "\"hierarchical\": true needs kind \"attention-pooling\", not \"" + kind + "\"");
  }
  if (kind == "lstm") return ClassifierKind::Lstm;
  if (kind == "cnn") return ClassifierKind::Cnn;
  return k.error(ErrorKind::Unsupported, "kind",
                 "kind \"" + kind + "\" is not one of \"attention-pooling\", \"lstm\", \"cnn\"");
}

Result<ClassifierConfig> read_classifier_config(const bundled::ConfigKeys& k) {
  ClassifierConfig c;
  ATTN_TRY(k.architecture("AttnScopeClassifier"));
  ATTN_ASSIGN(c.task, k.text_or("task", ""));
  ATTN_ASSIGN(c.trained_on, k.text_or("trained_on", ""));
  ATTN_ASSIGN(c.labels, bundled::read_labels(k));
  ATTN_ASSIGN(c.vocab, k.vocabulary("vocab", {"<pad>", "<unk>"}, 3));
  ATTN_ASSIGN(c.hierarchical, k.boolean_or("hierarchical", false));
  ATTN_ASSIGN(c.kind, read_kind(k, c.hierarchical));
  ATTN_ASSIGN(c.embedding_size, k.whole("embedding_size"));
  ATTN_ASSIGN(c.max_words, k.whole("max_words"));
  ATTN_ASSIGN(c.held_out_saliency, k.number_or("saliency_on_deciding_words", -1.0, 0.0, 1.0));
  if (c.kind == ClassifierKind::Lstm) {
    c.heads = 0;
    ATTN_ASSIGN(c.hidden, k.whole("hidden"));
    return c;
  }
  if (c.kind == ClassifierKind::Cnn) {
    c.heads = 0;
    ATTN_ASSIGN(c.channels, k.whole("channels"));
    ATTN_ASSIGN(c.kernel, k.whole("kernel", 1, 63));
    if (c.kernel % 2 == 0) {
      return k.error(ErrorKind::OutOfRange, "kernel",
                     "kernel must be odd (the words are zero-padded by (kernel - 1) / 2 each side), got " +
                         std::to_string(c.kernel));
    }
    return c;
  }
  ATTN_ASSIGN(c.heads, k.whole_or("heads", 1, 1, 1024));
  ATTN_ASSIGN(c.hidden, k.whole("hidden"));
  ATTN_ASSIGN(c.attention_size, k.whole("attention_size"));
  if (c.hierarchical) {
    ATTN_ASSIGN(c.max_sentences, k.whole("max_sentences"));
  } else {
    ATTN_ASSIGN(c.max_sentences, k.whole_or("max_sentences", 0, 0));
  }
  return c;
}

Result<void> check_config(const ClassifierConfig& c, const std::string& file) {
  const auto bad = [&](ErrorKind kind, const std::string& why) { return fail(kind, "config: " + why, file); };
  if (c.labels.size() < 2) return bad(ErrorKind::OutOfRange, "labels must name at least 2 classes");
  if (c.vocab.empty()) return bad(ErrorKind::OutOfRange, "vocab is empty");
  if (c.vocab.size() < 3 || c.vocab[0] != "<pad>" || c.vocab[1] != "<unk>") {
    return bad(ErrorKind::Malformed, "vocab must start with \"<pad>\", \"<unk>\" and hold at least one word");
  }
  if (c.embedding_size < 1 || c.max_words < 1) {
    return bad(ErrorKind::OutOfRange, "embedding_size and max_words must be at least 1");
  }
  switch (c.kind) {
    case ClassifierKind::Lstm:
      if (c.hidden < 1) return bad(ErrorKind::OutOfRange, "an LSTM needs hidden of at least 1");
      break;
    case ClassifierKind::Cnn:
      if (c.channels < 1 || c.kernel < 1 || c.kernel % 2 == 0) {
        return bad(ErrorKind::OutOfRange, "a CNN needs channels of at least 1 and an odd kernel");
      }
      break;
    default:
      if (c.heads < 1 || c.hidden < 1 || c.attention_size < 1) {
        return bad(ErrorKind::OutOfRange, "heads, hidden and attention_size must be at least 1");
      }
  }
  if (c.hierarchical != (c.kind == ClassifierKind::Hierarchical)) {
    return bad(ErrorKind::Malformed, "only attention pooling can be hierarchical, not " + kind_name(c.kind));
  }
  if (c.hierarchical && c.max_sentences < 1) {
    return bad(ErrorKind::OutOfRange, "a hierarchical model needs max_sentences of at least 1");
  }
  return {};
}

// The token character of a byte after ASCII lower-casing (the reference lower-cases the UTF-8 bytes, so
// no non-ASCII character is ever part of a word), or 0 when the byte separates tokens.
char token_char(unsigned char b) {
  if (b >= 'A' && b <= 'Z') return static_cast<char>(b - 'A' + 'a');
  if ((b >= 'a' && b <= 'z') || (b >= '0' && b <= '9') || b == '\'') return static_cast<char>(b);
  return 0;
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------
// Config and words

Result<ClassifierConfig> ClassifierConfig::parse(std::string_view text, const std::string& file) {
  return detail::read_json_config<bundled::ConfigKeys>(
      text, file, [](const bundled::ConfigKeys& k) { return read_classifier_config(k); });
}

WordSplit split_words(std::string_view text) {
  // Byte by byte: every byte of a multi-byte UTF-8 character is >= 0x80 and separates, as does every
  // invalid byte, so spans are byte spans of the input whatever it holds.
  WordSplit out;
  int sentence = 0;
  std::string word;
  std::int32_t begin = 0;
  const auto flush = [&](std::int32_t end) {
    if (word.empty()) return;
    out.words.push_back(std::move(word));
    out.spans.push_back({begin, end});
    out.sentence.push_back(sentence);
    word.clear();
  };
  const auto n = static_cast<std::int32_t>(text.size());
  for (std::int32_t i = 0; i < n; ++i) {
    const auto b = static_cast<unsigned char>(text[static_cast<std::size_t>(i)]);
    if (const char ch = token_char(b)) {
      if (word.empty()) begin = i;
      word += ch;
      continue;
    }
    flush(i);
    if (b == '.' || b == '!' || b == '?') {
      // A terminator is a token of the sentence it ends.
      out.words.push_back(std::string(1, static_cast<char>(b)));
      out.spans.push_back({i, i + 1});
      out.sentence.push_back(sentence++);
    }
  }
  flush(n);
  out.sentences = out.sentence.empty() ? 0 : out.sentence.back() + 1;
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Model

namespace {

Result<PoolingWeights> read_pooling(bundled::TensorReader& r, const std::string& base, Index d, Index a, Index heads) {
  PoolingWeights p;
  ATTN_ASSIGN(p.W, r.matrix(base + ".W.weight", a, d));
  RowVector b;
  ATTN_ASSIGN(b, r.vector(base + ".W.bias", a));
  p.b = b.transpose();
  ATTN_ASSIGN(p.w, r.matrix(base + ".w.weight", heads, a));
  return p;
}

Result<std::unique_ptr<ClassifierModel::Impl>> build(ClassifierConfig config, const io::SafeTensors& weights) {
  // A config built in code may set only `hierarchical` (as before kinds existed).
  if (config.hierarchical && config.kind == ClassifierKind::AttentionPooling)
    config.kind = ClassifierKind::Hierarchical;
  ATTN_TRY(check_config(config, weights.name()));
  auto m = std::make_unique<ClassifierModel::Impl>();
  m->config = std::move(config);
  const auto& c = m->config;
  const Index v = static_cast<Index>(c.vocab.size()), e = c.embedding_size, h2 = 2 * static_cast<Index>(c.hidden),
              a = c.attention_size, r = c.heads, labels = static_cast<Index>(c.labels.size());
  bundled::TensorReader reader(weights);
  if (c.kind == ClassifierKind::Lstm) {
    const Index h = c.hidden;
    ATTN_ASSIGN(m->embedding, reader.matrix("embedding.weight", v, e));
    ATTN_ASSIGN(m->lstm, bundled::read_lstm_cell(reader, "encoder.lstm", e, h));
    ATTN_ASSIGN(m->classifier_t, reader.linear_t("classifier.weight", labels, h));
  } else if (c.kind == ClassifierKind::Cnn) {
    const Index k = c.kernel, ch = c.channels;
    ATTN_ASSIGN(m->embedding, reader.matrix("embedding.weight", v, e));
    Matrix conv;  // [channels, e k] as torch stores [channels, e, k]
    ATTN_ASSIGN(conv, reader.flattened("conv.weight", {ch, e, k}));
    m->conv_t.resize(k * e, ch);
    for (Index t = 0; t < k; ++t) {
      for (Index i = 0; i < e; ++i) m->conv_t.row(t * e + i) = conv.col(i * k + t).transpose();
    }
    ATTN_ASSIGN(m->conv_b, reader.vector("conv.bias", ch));
    ATTN_ASSIGN(m->classifier_t, reader.linear_t("classifier.weight", labels, ch));
  } else if (!c.hierarchical) {
    ATTN_ASSIGN(m->embedding, reader.matrix("embedding.weight", v, e));
    ATTN_ASSIGN(m->words, bundled::read_bigru(reader, "encoder.gru", e, c.hidden));
    ATTN_ASSIGN(m->word_pool, read_pooling(reader, "pool", h2, a, r));
    ATTN_ASSIGN(m->classifier_t, reader.linear_t("classifier.weight", labels, r * h2));
  } else {
    ATTN_ASSIGN(m->embedding, reader.matrix("word.embedding.weight", v, e));
    ATTN_ASSIGN(m->words, bundled::read_bigru(reader, "word.gru", e, c.hidden));
    ATTN_ASSIGN(m->word_pool, read_pooling(reader, "word.pool", h2, a, r));
    ATTN_ASSIGN(m->sentences, bundled::read_bigru(reader, "sentence.gru", r * h2, c.hidden));
    ATTN_ASSIGN(m->sentence_pool, read_pooling(reader, "sentence.pool", h2, a, 1));
    ATTN_ASSIGN(m->classifier_t, reader.linear_t("classifier.weight", labels, h2));
  }
  ATTN_ASSIGN(m->classifier_b, reader.vector("classifier.bias", labels));
  if (auto w = reader.unused_warning("a classifier of kind " + kind_name(c.kind))) {
    m->warnings.push_back(std::move(*w));
  }
  for (const std::string& note : reader.nonfinite()) m->warnings.push_back(note);
  m->parameters = reader.parameters();
  m->index = bundled::index_vocabulary(c.vocab);
  return m;
}

}  // namespace

ClassifierModel::ClassifierModel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ClassifierModel::~ClassifierModel() = default;
const ClassifierConfig& ClassifierModel::config() const { return impl_->config; }
std::int64_t ClassifierModel::parameters() const { return impl_->parameters; }
std::vector<std::string> ClassifierModel::warnings() const { return impl_->warnings; }

std::string kind_name(ClassifierKind kind) {
  switch (kind) {
    case ClassifierKind::AttentionPooling: return "attention pooling";
    case ClassifierKind::Hierarchical: return "hierarchical attention";
    case ClassifierKind::Lstm: return "LSTM forget gate";
    case ClassifierKind::Cnn: return "CNN max pooling";
  }
  return "?";
}

std::string ClassifierModel::description() const {
  const auto& c = impl_->config;
  switch (c.kind) {
    case ClassifierKind::Lstm:
      return bundled::describe(c.task, {"LSTM", std::to_string(c.hidden) + (c.hidden == 1 ? " unit" : " units")},
                               impl_->parameters);
    case ClassifierKind::Cnn:
      return bundled::describe(c.task,
                               {"CNN", std::to_string(c.channels) + " channels of width " + std::to_string(c.kernel)},
                               impl_->parameters);
    default:
      return bundled::describe(c.task,
                               {kind_name(c.kind), std::to_string(c.heads) + (c.heads == 1 ? " head" : " heads")},
                               impl_->parameters);
  }
}

Result<std::shared_ptr<const ClassifierModel>> ClassifierModel::from_parts(ClassifierConfig config,
                                                                           const io::SafeTensors& weights) {
  return bundled::build_model<ClassifierModel>(
      weights, [&] { return build(std::move(config), weights); },
      [](std::unique_ptr<Impl> impl) { return new ClassifierModel(std::move(impl)); });
}

Result<std::shared_ptr<const ClassifierModel>> ClassifierModel::load(const fs::path& folder) {
  return bundled::load_folder<ClassifierModel, ClassifierConfig>(folder);
}

// ---------------------------------------------------------------------------------------------------------
// Run

namespace {

std::shared_ptr<AttentionMap> words_map(const ClassifierRun& run, std::string name, Matrix weights, std::string rows,
                                        const std::string& row_prefix, std::string quantity = "weight") {
  auto map = std::make_shared<AttentionMap>();
  map->quantity = std::move(quantity);
  map->stage = Stage::Pool;
  map->name = std::move(name);
  map->weights = std::move(weights);
  map->row_axis = std::move(rows);
  map->col_axis = "words";
  for (Index r = 0; r < map->weights.rows(); ++r) map->row_labels.push_back(row_prefix + std::to_string(r));
  map->col_labels = run.input.words;
  map->col_spans = run.input.spans;
  return map;
}

}  // namespace

std::shared_ptr<const AttentionMap> ClassifierRun::word_map() const {
  if (word_attention.rows() == 0 && saliency.size() > 0) {
    auto map = words_map(*this, "saliency", saliency.transpose(), "reading", "", "saliency");
    map->row_labels = {"saliency"};
    return map;
  }
  return words_map(*this, "word attention", word_attention, "heads", "head ");
}

std::vector<std::shared_ptr<const AttentionMap>> ClassifierRun::maps() const {
  std::vector<std::shared_ptr<const AttentionMap>> out{word_map()};
  if (forget_gate.size() > 0) {
    out.push_back(words_map(*this, "forget gate f", forget_gate, "units", "unit ", "forget gate"));
    out.push_back(words_map(*this, "input gate i", input_gate, "units", "unit ", "input gate"));
    out.push_back(
        words_map(*this, "written i · ∏ f (share of the final cell state)", written, "units", "unit ", "share"));
    Matrix mean(3, forget_gate.cols());
    mean.row(0) = forget_gate.colwise().mean();
    mean.row(1) = input_gate.colwise().mean();
    mean.row(2) = saliency.transpose();
    auto averaged = words_map(*this, "gates averaged over the units", std::move(mean), "gates", "", "gate, share");
    averaged->row_labels = {"forget gate f (mean)", "input gate i (mean)", "written (share)"};
    out.push_back(std::move(averaged));
  }
  if (activations.size() > 0) {
    out.push_back(words_map(*this, "channel activations (ReLU)", activations, "channels", "channel ", "activation"));
    // Each channel's weight over the window of its winner: the saliency is this matrix's column sums.
    Matrix votes = Matrix::Zero(activations.rows(), activations.cols());
    const Index reach = (activations.cols() > 0 && !winners.empty()) ? cnn_kernel : 0;
    for (Index ch = 0; ch < votes.rows() && reach > 0; ++ch) {
      const Index start = winners[static_cast<std::size_t>(ch)] - (reach - 1) / 2;
      for (Index w = std::max<Index>(0, start); w < std::min(votes.cols(), start + reach); ++w) {
        votes(ch, w) = channel_weights(ch);
      }
    }
    out.push_back(
        words_map(*this, "winning windows, weighted", std::move(votes), "channels", "channel ", "channel weight"));
  }
  return out;
}

struct ClassifierRunner::Scratch {
  bundled::GruScratch gru;
  Matrix embedded;          // [n, e]
  Matrix encoded;           // [n, 2h]
  Matrix sentence_vectors;  // hierarchical: [sentences, r 2h]
  Matrix sentence_encoded;  // hierarchical: [sentences, 2h]
};

ClassifierRunner::ClassifierRunner(std::shared_ptr<const ClassifierModel> model)
    : model_(std::move(model)), scratch_(std::make_unique<Scratch>()) {}
ClassifierRunner::~ClassifierRunner() = default;
ClassifierRunner::ClassifierRunner(ClassifierRunner&&) noexcept = default;
ClassifierRunner& ClassifierRunner::operator=(ClassifierRunner&&) noexcept = default;

namespace {

// Keeps the first max_words words (flat), or the first max_sentences sentences and the first max_words
// words of each (hierarchical), saying so in warnings.
WordSplit truncate(const ClassifierConfig& c, WordSplit in, std::vector<std::string>& warnings) {
  const auto plural = [](std::size_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
  };
  const std::size_t max_words = static_cast<std::size_t>(c.max_words);
  if (!c.hierarchical) {
    if (in.words.size() <= max_words) return in;
    warnings.push_back("input truncated to " + plural(max_words, "word", "words") + " (of " +
                       std::to_string(in.words.size()) + ")");
    in.words.resize(max_words);
    in.spans.resize(max_words);
    in.sentence.resize(max_words);
    in.sentences = in.sentence.back() + 1;
    return in;
  }
  WordSplit out;
  const int kept_sentences = std::min(in.sentences, c.max_sentences);
  if (in.sentences > c.max_sentences) {
    warnings.push_back("input truncated to " +
                       plural(static_cast<std::size_t>(c.max_sentences), "sentence", "sentences") + " (of " +
                       std::to_string(in.sentences) + ")");
  }
  for (std::size_t i = 0; i < in.words.size();) {
    const int k = in.sentence[i];
    std::size_t end = i;
    while (end < in.words.size() && in.sentence[end] == k) ++end;
    if (k >= kept_sentences) break;
    if (end - i > max_words) {
      warnings.push_back("sentence " + std::to_string(k) + " truncated to " + plural(max_words, "word", "words") +
                         " (of " + std::to_string(end - i) + ")");
    }
    for (std::size_t j = i; j < std::min(end, i + max_words); ++j) {
      out.words.push_back(std::move(in.words[j]));
      out.spans.push_back(in.spans[j]);
      out.sentence.push_back(in.sentence[j]);
    }
    i = end;
  }
  out.sentences = kept_sentences;
  return out;
}

// The LSTM's reading: the gates of every word, kept as [units, words], then written_t = i_t * prod_{s>t} f_s
// and the saliency (written's column sums over its sum). Returns the last hidden state.
RowVector run_lstm(const ClassifierModel::Impl& m, const Matrix& embedded, ClassifierRun& run, Matrix& gates) {
  const Index n = embedded.rows(), H = m.config.hidden;
  RowVector h = classifier_forward::lstm(m, embedded, gates, nullptr);
  const auto sigmoid = [](const auto& v) { return (1.0f + (-v).exp()).inverse(); };
  run.input_gate.resize(H, n);
  run.forget_gate.resize(H, n);
  for (Index t = 0; t < n; ++t) {
    run.input_gate.col(t) = sigmoid(gates.row(t).leftCols(H).array()).transpose();
    run.forget_gate.col(t) = sigmoid(gates.row(t).middleCols(H, H).array()).transpose();
  }
  // written_t = i_t * prod_{s > t} f_s, from the last word back (the product for the last word is empty).
  run.written.resize(H, n);
  Vector after = Vector::Ones(H);
  for (Index t = n - 1; t >= 0; --t) {
    run.written.col(t) = run.input_gate.col(t).cwiseProduct(after);
    after = after.cwiseProduct(run.forget_gate.col(t));
  }
  const Vector columns = run.written.colwise().sum().transpose();
  const float total = columns.sum();
  run.saliency = total > 0.0f ? Vector(columns / total) : Vector::Zero(n);
  return h;
}

// The CNN's convolution and ReLU ([channels, words]) and its global max pooling: every channel's maximum
// (the pooled vector) and winner.
RowVector run_cnn(const ClassifierModel::Impl& m, const Matrix& embedded, ClassifierRun& run, Matrix& windows) {
  classifier_forward::cnn_windows(embedded, m.config.kernel, windows);
  run.activations = classifier_forward::cnn_activations(m, windows);
  return classifier_forward::cnn_max_pool(run.activations, run.winners);
}

// The CNN's saliency once the prediction is known (the channel weights need it).
void cnn_saliency(const ClassifierModel::Impl& m, ClassifierRun& run) {
  const Index channels = run.activations.rows(), n = run.activations.cols(), pad = (m.config.kernel - 1) / 2;
  const Matrix& w = m.classifier_t;  // [channels, labels]
  run.channel_weights.resize(channels);
  run.saliency = Vector::Zero(n);
  for (Index ch = 0; ch < channels; ++ch) {
    const float vote = w(ch, run.predicted) - w.row(ch).mean();
    const float weight = run.activations.row(ch).maxCoeff() > 0.0f ? std::max(0.0f, vote) : 0.0f;
    run.channel_weights(ch) = weight;
    const Index start = run.winners[static_cast<std::size_t>(ch)] - pad;
    for (Index word = std::max<Index>(0, start); word < std::min(n, start + m.config.kernel); ++word) {
      run.saliency(word) += weight;
    }
  }
  const float total = run.saliency.sum();
  if (total > 0.0f) run.saliency /= total;
}

}  // namespace

namespace classifier_forward {

void embed(const ClassifierModel::Impl& m, const std::vector<int>& ids, Matrix& out) {
  out.resize(static_cast<Index>(ids.size()), m.config.embedding_size);
  for (Index i = 0; i < out.rows(); ++i) out.row(i) = m.embedding.row(ids[static_cast<std::size_t>(i)]);
}

Index sentence_end(const std::vector<int>& sentence, Index begin, int k) {
  Index end = begin;
  while (end < static_cast<Index>(sentence.size()) && sentence[static_cast<std::size_t>(end)] == k) ++end;
  return end;
}

RowVector lstm(const ClassifierModel::Impl& m, const MatrixCRef& embedded, Matrix& pre, Matrix* cells) {
  const Index n = embedded.rows(), H = m.config.hidden;
  pre.noalias() = embedded * m.lstm.w_ih_t;  // [n, 4H], the input half of every step at once
  pre.rowwise() += m.lstm.b;
  Matrix c = Matrix::Zero(1, H), h = Matrix::Zero(1, H);
  if (cells) cells->resize(n, H);
  for (Index t = 0; t < n; ++t) {
    bundled::multiply(pre.row(t), h, m.lstm.w_hh_t, true);
    bundled::lstm_gates(pre.row(t), c, h);
    if (cells) cells->row(t) = c;
  }
  return h.row(0);
}

void cnn_windows(const MatrixCRef& embedded, Index kernel, Matrix& windows) {
  const Index n = embedded.rows(), e = embedded.cols(), pad = (kernel - 1) / 2;
  windows = Matrix::Zero(n, kernel * e);
  for (Index p = 0; p < n; ++p) {
    for (Index t = 0; t < kernel; ++t) {
      const Index word = p + t - pad;
      if (word >= 0 && word < n) windows.block(p, t * e, 1, e) = embedded.row(word);
    }
  }
}

Matrix cnn_activations(const ClassifierModel::Impl& m, const Matrix& windows) {
  Matrix conv(windows.rows(), m.config.channels);
  conv.noalias() = windows * m.conv_t;
  conv.rowwise() += m.conv_b;
  return conv.cwiseMax(0.0f).transpose();
}

RowVector cnn_max_pool(const Matrix& activations, std::vector<int>& winners) {
  const Index channels = activations.rows();
  RowVector pooled(channels);
  winners.assign(static_cast<std::size_t>(channels), 0);
  for (Index ch = 0; ch < channels; ++ch) {
    Index best = 0;
    pooled(ch) = activations.row(ch).maxCoeff(&best);  // Eigen's maxCoeff keeps the first maximum
    winners[static_cast<std::size_t>(ch)] = static_cast<int>(best);
  }
  return pooled;
}

}  // namespace classifier_forward

Result<ClassifierRun> ClassifierRunner::run(std::string_view text) {
  try {
    const auto& m = model_->impl();
    const auto& c = m.config;
    WordSplit split = split_words(text);
    if (split.words.empty()) return fail(ErrorKind::OutOfRange, "nothing to classify: the text has no words", "text");
    std::vector<std::string> warnings;
    WordSplit input = truncate(c, std::move(split), warnings);
    std::vector<int> ids;
    for (const auto& w : input.words) {
      const auto it = m.index.find(w);
      ids.push_back(it == m.index.end() ? bundled::kUnknownId : it->second);
    }
    ATTN_LET(run, run_ids(std::move(input), std::move(ids)));
    run.warnings.insert(run.warnings.begin(), warnings.begin(), warnings.end());
    return run;
  } catch (const std::bad_alloc&) {
    return fail(ErrorKind::TooLarge, "out of memory while classifying", "text");
  }
}

Result<ClassifierRun> ClassifierRunner::run_ids(WordSplit input, std::vector<int> ids) {
  try {
    const auto& m = model_->impl();
    const auto& c = m.config;
    Scratch& s = *scratch_;
    const auto vocab = static_cast<int>(c.vocab.size());
    if (input.words.empty()) return fail(ErrorKind::OutOfRange, "nothing to classify: the input has no words", "ids");
    if (ids.size() != input.words.size())
      return fail(ErrorKind::Mismatch,
                  std::to_string(ids.size()) + " ids for " + std::to_string(input.words.size()) + " words", "ids");
    bool consecutive = input.sentence.size() == input.words.size() && input.sentence.front() == 0 &&
                       input.sentences == input.sentence.back() + 1;
    for (std::size_t i = 1; consecutive && i < input.sentence.size(); ++i)
      consecutive = input.sentence[i] == input.sentence[i - 1] || input.sentence[i] == input.sentence[i - 1] + 1;
    if (!consecutive) return fail(ErrorKind::Mismatch, "the input's sentence indices do not number its words", "ids");
    std::vector<std::string> longer;
    if (truncate(c, input, longer).words.size() != input.words.size() || !longer.empty())
      return fail(ErrorKind::OutOfRange,
                  "the input has more words than the model reads" +
                      (longer.empty() ? std::string() : " (" + longer.front() + ")"),
                  "ids");
    for (std::size_t i = 0; i < ids.size(); ++i)
      if (ids[i] < 0 || ids[i] >= vocab)
        return fail(ErrorKind::OutOfRange,
                    "id " + std::to_string(ids[i]) + " of word " + std::to_string(i) +
                        " is out of the vocabulary (0 .. " + std::to_string(vocab - 1) + ")",
                    "ids");
    ClassifierRun run;
    run.input = std::move(input);
    run.ids = std::move(ids);
    for (const int id : run.ids) run.unknown.push_back(id == bundled::kUnknownId);
    const Index n = static_cast<Index>(run.ids.size());
    classifier_forward::embed(m, run.ids, s.embedded);

    const PoolingParams params;
    RowVector pooled;
    if (c.kind == ClassifierKind::Lstm) {
      pooled = run_lstm(m, s.embedded, run, s.encoded);
    } else if (c.kind == ClassifierKind::Cnn) {
      pooled = run_cnn(m, s.embedded, run, s.encoded);
    } else if (!c.hierarchical) {
      bundled::bigru(m.words, s.embedded, s.encoded, s.gru);
      PoolingResult p = attention_pooling(s.encoded, m.word_pool, params);
      run.word_attention = std::move(p.weights);
      run.saliency = run.word_attention.colwise().mean().transpose();
      pooled = std::move(p.pooled);
    } else {
      const int sentences = run.input.sentences;
      const Index h2 = 2 * static_cast<Index>(c.hidden);
      run.word_attention = Matrix::Zero(c.heads, n);
      s.sentence_vectors.resize(sentences, c.heads * h2);
      Index begin = 0;
      for (int k = 0; k < sentences; ++k) {
        const Index end = classifier_forward::sentence_end(run.input.sentence, begin, k);
        // Each sentence is encoded on its own, from zero states (Yang et al.: the word level sees one
        // sentence at a time).
        bundled::bigru(m.words, s.embedded.middleRows(begin, end - begin), s.encoded, s.gru);
        PoolingResult p = attention_pooling(s.encoded, m.word_pool, params);
        run.word_attention.middleCols(begin, end - begin) = p.weights;
        s.sentence_vectors.row(k) = p.pooled;
        begin = end;
      }
      bundled::bigru(m.sentences, s.sentence_vectors, s.sentence_encoded, s.gru);
      PoolingResult p = attention_pooling(s.sentence_encoded, m.sentence_pool, params);
      run.sentence_attention = p.weights.row(0).transpose();
      pooled = std::move(p.pooled);
    }
    RowVector logits = pooled * m.classifier_t;
    logits += m.classifier_b;
    bundled::softmax_into(logits, run.probabilities);
    Index best = 0;
    logits.maxCoeff(&best);
    run.predicted = static_cast<int>(best);
    if (c.kind == ClassifierKind::Cnn) {
      cnn_saliency(m, run);
      run.cnn_kernel = c.kernel;
    }
    const std::int64_t bad = detail::count_nonfinite(run.word_attention) +
                             (run.sentence_attention.size() ? detail::count_nonfinite(run.sentence_attention) : 0) +
                             (run.saliency.size() ? detail::count_nonfinite(run.saliency) : 0);
    const std::int64_t total = run.word_attention.size() + run.sentence_attention.size() + run.saliency.size();
    if (auto w = detail::nonfinite_attention_warning(bad, total)) run.warnings.push_back(std::move(*w));
    return run;
  } catch (const std::bad_alloc&) {
    return fail(ErrorKind::TooLarge, "out of memory while classifying", "text");
  }
}

}  // namespace attn::models
