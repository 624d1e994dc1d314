// The attention-pooling text classifier of tools/train/MODELS.md section 2: words, config, strict
// loading, and the flat (words -> BiGRU -> pooling) and hierarchical (each sentence's words -> BiGRU ->
// pooling, then the sentence vectors -> BiGRU -> pooling; Yang et al. 2016) forward passes. The pooling
// is the lab's attn::attention_pooling, so the classifier's maps are the mechanism's own.
#include "attn/models/classifier.h"

#include "attn/io/safetensors.h"
#include "attn/mechanisms/pooling.h"
#include "layers.h"
#include "../core/nonfinite.h"

#include <algorithm>
#include <cmath>

namespace attn::models {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

Result<std::vector<std::string>> read_labels(const bundled::ConfigKeys& k) {
  const json* value = k.find("labels");
  if (!value) return k.error(ErrorKind::Malformed, "labels is missing");
  if (!value->is_array()) {
    return k.error(ErrorKind::Malformed, "labels", "labels must be a list of class names, got " + value->dump());
  }
  if (value->size() < 2) {
    return k.error(ErrorKind::OutOfRange, "labels",
                   "labels holds " + std::to_string(value->size()) + " class" + (value->size() == 1 ? "" : "es") +
                       "; a classifier needs at least 2");
  }
  std::vector<std::string> labels;
  for (std::size_t i = 0; i < value->size(); ++i) {
    const json& l = (*value)[i];
    if (!l.is_string()) {
      return k.error(ErrorKind::Malformed, "labels",
                     "labels[" + std::to_string(i) + "] must be a string, got " + l.dump());
    }
    labels.push_back(l.get<std::string>());
  }
  return labels;
}

Result<ClassifierConfig> read_classifier_config(const bundled::ConfigKeys& k) {
  ClassifierConfig c;
  ATTN_TRY(k.architecture("AttnScopeClassifier"));
  ATTN_ASSIGN(c.task, k.text_or("task", ""));
  ATTN_ASSIGN(c.trained_on, k.text_or("trained_on", ""));
  ATTN_ASSIGN(c.labels, read_labels(k));
  ATTN_ASSIGN(c.vocab, k.vocabulary("vocab", {"<pad>", "<unk>"}, 3));
  ATTN_ASSIGN(c.hierarchical, k.boolean_or("hierarchical", false));
  ATTN_ASSIGN(c.heads, k.whole_or("heads", 1, 1, 1024));
  ATTN_ASSIGN(c.embedding_size, k.whole("embedding_size"));
  ATTN_ASSIGN(c.hidden, k.whole("hidden"));
  ATTN_ASSIGN(c.attention_size, k.whole("attention_size"));
  ATTN_ASSIGN(c.max_words, k.whole("max_words"));
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
  if (c.heads < 1 || c.embedding_size < 1 || c.hidden < 1 || c.attention_size < 1 || c.max_words < 1) {
    return bad(ErrorKind::OutOfRange, "heads, embedding_size, hidden, attention_size and max_words must be at least 1");
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

struct ClassifierModel::Impl {
  ClassifierConfig config;
  bundled::VocabMap index;
  std::int64_t parameters = 0;
  std::vector<std::string> warnings;

  Matrix embedding;                 // [V, e]
  bundled::BiGruWeights words;      // e -> h (flat: the only encoder)
  PoolingWeights word_pool;         // W [a, 2h], b [a], w [r, a]
  bundled::BiGruWeights sentences;  // hierarchical: r 2h -> h
  PoolingWeights sentence_pool;     // hierarchical: w [1, a]
  Matrix classifier_t;              // [r 2h (flat) or 2h, labels]
  RowVector classifier_b;
};

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
  ATTN_TRY(check_config(config, weights.name()));
  auto m = std::make_unique<ClassifierModel::Impl>();
  m->config = std::move(config);
  const auto& c = m->config;
  const Index v = static_cast<Index>(c.vocab.size()), e = c.embedding_size, h2 = 2 * static_cast<Index>(c.hidden),
              a = c.attention_size, r = c.heads, labels = static_cast<Index>(c.labels.size());
  bundled::TensorReader reader(weights);
  if (!c.hierarchical) {
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
  if (auto w = reader.unused_warning(c.hierarchical ? "a hierarchical classifier" : "a flat classifier")) {
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

std::string ClassifierModel::description() const {
  const auto& c = impl_->config;
  return bundled::describe(c.task,
                           {c.hierarchical ? "hierarchical attention" : "attention pooling",
                            std::to_string(c.heads) + (c.heads == 1 ? " head" : " heads")},
                           impl_->parameters);
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

std::shared_ptr<const AttentionMap> ClassifierRun::word_map() const {
  auto map = std::make_shared<AttentionMap>();
  map->stage = Stage::Pool;
  map->name = "word attention";
  map->weights = word_attention;
  map->row_axis = "heads";
  map->col_axis = "words";
  for (Index h = 0; h < word_attention.rows(); ++h) map->row_labels.push_back("head " + std::to_string(h));
  map->col_labels = input.words;
  map->col_spans = input.spans;
  return map;
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

void softmax_into(const RowVector& logits, std::vector<float>& out) {
  const float mx = logits.maxCoeff();
  const Eigen::ArrayXf e = (logits.array() - mx).exp().transpose();
  const float sum = e.sum();
  out.resize(static_cast<std::size_t>(logits.size()));
  for (Index i = 0; i < logits.size(); ++i) out[static_cast<std::size_t>(i)] = e(i) / sum;
}

}  // namespace

Result<ClassifierRun> ClassifierRunner::run(std::string_view text) {
  try {
    const auto& m = model_->impl();
    const auto& c = m.config;
    Scratch& s = *scratch_;
    ClassifierRun run;
    WordSplit split = split_words(text);
    if (split.words.empty()) return fail(ErrorKind::OutOfRange, "nothing to classify: the text has no words", "text");
    run.input = truncate(c, std::move(split), run.warnings);
    const auto& words = run.input.words;
    const Index n = static_cast<Index>(words.size());
    for (const auto& w : words) {
      const auto it = m.index.find(w);
      const int id = it == m.index.end() ? bundled::kUnknownId : it->second;
      run.ids.push_back(id);
      run.unknown.push_back(id == bundled::kUnknownId);
    }
    s.embedded.resize(n, c.embedding_size);
    for (Index i = 0; i < n; ++i) s.embedded.row(i) = m.embedding.row(run.ids[static_cast<std::size_t>(i)]);

    const PoolingParams params;
    RowVector pooled;
    if (!c.hierarchical) {
      bundled::bigru(m.words, s.embedded, s.encoded, s.gru);
      PoolingResult p = attention_pooling(s.encoded, m.word_pool, params);
      run.word_attention = std::move(p.weights);
      pooled = std::move(p.pooled);
    } else {
      const int sentences = run.input.sentences;
      const Index h2 = 2 * static_cast<Index>(c.hidden);
      run.word_attention = Matrix::Zero(c.heads, n);
      s.sentence_vectors.resize(sentences, c.heads * h2);
      Index begin = 0;
      for (int k = 0; k < sentences; ++k) {
        Index end = begin;
        while (end < n && run.input.sentence[static_cast<std::size_t>(end)] == k) ++end;
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
    softmax_into(logits, run.probabilities);
    Index best = 0;
    logits.maxCoeff(&best);
    run.predicted = static_cast<int>(best);
    const std::int64_t bad = detail::count_nonfinite(run.word_attention) +
                             (run.sentence_attention.size() ? detail::count_nonfinite(run.sentence_attention) : 0);
    const std::int64_t total = run.word_attention.size() + run.sentence_attention.size();
    if (auto w = detail::nonfinite_attention_warning(bad, total)) run.warnings.push_back(std::move(*w));
    return run;
  } catch (const std::bad_alloc&) {
    return fail(ErrorKind::TooLarge, "out of memory while classifying", "text");
  }
}

}  // namespace attn::models
