// The character seq2seq models of tools/train/MODELS.md section 1: config, strict loading, the
// bidirectional GRU encoder, the Bahdanau and Luong decoders, greedy and beam-search decoding.
//
// Speed: a decode is a few dozen small steps, so everything that does not depend on the step is done
// once. At load time the decoder GRU's embedding half and (Bahdanau) the output layer's embedding part
// become per-token tables; per input the encoder-side projections (U H, W H, the concat key half) are
// computed once; per step all live hypotheses of the beam go through every product as the rows of one
// matrix. No product is a BLAS call (bundled::multiply says why).
#include "attn/models/seq2seq.h"

#include "attn/io/safetensors.h"
#include "attn/mechanisms/attention.h"
#include "attn/mechanisms/normalise.h"
#include "attn/models/classifier.h"
#include "../../text/unicode.h"
#include "beam_search.h"
#include "layers.h"
#include "seq2seq_impl.h"
#include "../../core/nonfinite.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attn::models {

namespace fs = std::filesystem;
namespace unicode = text::unicode;
using detail::quote;
using nlohmann::json;

namespace {

constexpr int kMaxSeq2SeqBeam = 256;  // far beyond any use; keeps a typo from reserving gigabytes

// Every vocabulary entry after the special ones must be one code point: the source is split into code
// points, so a longer entry could never be looked up, and the target side is the same contract.
Result<void> check_characters(const bundled::ConfigKeys& keys, std::string_view key,
                              const std::vector<std::string>& vocab, std::size_t specials) {
  for (std::size_t i = specials; i < vocab.size(); ++i) {
    const auto cps = unicode::code_points(vocab[i]);
    if (cps.size() != 1 || !cps[0].valid) {
      return keys.error(ErrorKind::Malformed, key,
                        std::string(key) + "[" + std::to_string(i) + "] is " + json(vocab[i]).dump() +
                            "; after the special entries every entry is one character");
    }
  }
  return {};
}

// A word model's entries after the special ones are words as split_words makes them: [a-z0-9']+.
Result<void> check_words(const bundled::ConfigKeys& k, std::string_view key, const std::vector<std::string>& vocab,
                         std::size_t specials) {
  for (std::size_t i = specials; i < vocab.size(); ++i) {
    const std::string& w = vocab[i];
    const bool word = !w.empty() && std::all_of(w.begin(), w.end(), [](char ch) {
      return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '\'';
    });
    if (!word) {
      return k.error(ErrorKind::Malformed, key,
                     std::string(key) + "[" + std::to_string(i) + "] is " + json(w).dump() +
                         "; a word model's entries are words: lower case letters, digits and '");
    }
  }
  return {};
}

// "unit", then both vocabularies, each entry one character or one word.
Result<void> read_vocabularies(const bundled::ConfigKeys& k, Seq2SeqConfig& c) {
  std::string unit;
  ATTN_ASSIGN(unit, k.text_or("unit", "character"));
  if (unit != "character" && unit != "word") {
    return k.error(ErrorKind::Unsupported, "unit",
                   "unit " + quote(unit) + " is not supported; use \"character\" or \"word\"");
  }
  c.words = unit == "word";
  const auto check = c.words ? check_words : check_characters;
  ATTN_ASSIGN(c.source_vocab, k.vocabulary("source_vocab", {"<pad>", "<unk>"}, 3));
  ATTN_TRY(check(k, "source_vocab", c.source_vocab, 2));
  ATTN_ASSIGN(c.target_vocab, k.vocabulary("target_vocab", {"<pad>", "<s>", "</s>"}, 4));
  ATTN_TRY(check(k, "target_vocab", c.target_vocab, 3));
  return {};
}

constexpr int kMaxConvLayers = 64, kMaxConvKernel = 63;

// ConvS2S's keys: one width, the layers and kernels; a GRU model's keys are refused by name.
Result<Seq2SeqConfig> read_convs2s_config(const bundled::ConfigKeys& k, Seq2SeqConfig c) {
  c.attention = Seq2SeqAttention::ConvS2S;
  for (const char* key : {"score", "local", "encoder_hidden", "decoder_hidden", "attention_size"}) {
    if (k.find(key)) {
      return k.error(ErrorKind::Mismatch, key,
                     std::string(key) +
                         " does not go with convs2s attention (one width, embedding_size; each "
                         "decoder layer scores with a dot product)");
    }
  }
  ATTN_TRY(read_vocabularies(k, c));
  ATTN_ASSIGN(c.embedding_size, k.whole("embedding_size"));
  ATTN_ASSIGN(c.encoder_layers, k.whole("encoder_layers", 0, kMaxConvLayers));
  ATTN_ASSIGN(c.encoder_kernel, k.whole("encoder_kernel", 1, kMaxConvKernel));
  if (c.encoder_kernel % 2 == 0) {
    return k.error(ErrorKind::OutOfRange, "encoder_kernel",
                   "encoder_kernel is " + std::to_string(c.encoder_kernel) +
                       "; the encoder's convolutions are centred, so the kernel must be odd");
  }
  ATTN_ASSIGN(c.decoder_layers, k.whole("decoder_layers", 1, kMaxConvLayers));
  ATTN_ASSIGN(c.decoder_kernel, k.whole("decoder_kernel", 1, kMaxConvKernel));
  ATTN_ASSIGN(c.max_source_length, k.whole("max_source_length"));
  ATTN_ASSIGN(c.max_target_length, k.whole("max_target_length"));
  return c;
}

// "score": Bahdanau's is "additive" (and may go unsaid); Luong's is "dot", "general" or "concat". Returns the text
// as written.
Result<std::string> read_score(const bundled::ConfigKeys& k, Seq2SeqConfig& c) {
  std::string score;
  ATTN_ASSIGN(score, k.text_or("score", ""));
  if (c.attention == Seq2SeqAttention::Bahdanau) {
    if (!score.empty() && score != "additive") {
      return k.error(ErrorKind::Mismatch, "score",
                     "score " + quote(score) + " does not go with bahdanau attention, whose score is \"additive\"");
    }
    c.score = Seq2SeqScore::Additive;
  } else if (score == "dot") {
    c.score = Seq2SeqScore::Dot;
  } else if (score == "general") {
    c.score = Seq2SeqScore::General;
  } else if (score == "concat") {
    c.score = Seq2SeqScore::Concat;
  } else if (score.empty()) {
    return k.error(ErrorKind::Malformed, "score is missing; luong attention takes \"dot\", \"general\" or \"concat\"");
  } else {
    return k.error(
        ErrorKind::Mismatch, "score",
        "score " + quote(score) + " does not go with luong attention; use \"dot\", \"general\" or \"concat\"");
  }
  return score;
}

// "local": {"kind": "predictive", "window": D}, Luong's local-p attention with the general score, or absent.
Result<void> read_local(const bundled::ConfigKeys& k, const std::string& score, Seq2SeqConfig& c) {
  const json* local = k.find("local");
  if (!local) return {};
  if (c.attention != Seq2SeqAttention::Luong) {
    return k.error(ErrorKind::Mismatch, "local", "local attention is Luong's; it needs \"attention\": \"luong\"");
  }
  if (!local->is_object()) {
    return k.error(ErrorKind::Malformed, "local",
                   "local must be an object {\"kind\": \"predictive\", \"window\": D}, got " + local->dump());
  }
  const auto kind_it = local->find("kind");
  if (kind_it == local->end() || !kind_it->is_string() || kind_it->get<std::string>() != "predictive") {
    return k.error(ErrorKind::Unsupported, "local",
                   "local kind " + (kind_it == local->end() ? std::string("(missing)") : kind_it->dump()) +
                       " is not supported; the models use local-p: {\"kind\": \"predictive\", \"window\": D}");
  }
  const auto window = local->find("window");
  if (window == local->end() || !window->is_number_integer() || window->get<std::int64_t>() < 1 ||
      window->get<std::int64_t>() > detail::kMaxConfigSize) {
    return k.error(ErrorKind::OutOfRange, "local",
                   "local window must be a whole number from 1 to " + std::to_string(detail::kMaxConfigSize) +
                       ", got " + (window == local->end() ? std::string("nothing") : window->dump()));
  }
  if (c.score != Seq2SeqScore::General) {
    return k.error(ErrorKind::Mismatch, "local", "local-p attention scores with \"general\"; score is " + quote(score));
  }
  c.local = true;
  c.window = static_cast<int>(window->get<std::int64_t>());
  return {};
}

// A GRU model's sizes and lengths; attention_size is needed by the scores with a hidden layer (and local-p).
Result<void> read_gru_sizes(const bundled::ConfigKeys& k, Seq2SeqConfig& c) {
  ATTN_ASSIGN(c.embedding_size, k.whole("embedding_size"));
  ATTN_ASSIGN(c.encoder_hidden, k.whole("encoder_hidden"));
  ATTN_ASSIGN(c.decoder_hidden, k.whole("decoder_hidden"));
  const bool uses_attention_size = c.score == Seq2SeqScore::Additive || c.score == Seq2SeqScore::Concat || c.local;
  if (uses_attention_size) {
    ATTN_ASSIGN(c.attention_size, k.whole("attention_size"));
  } else {
    ATTN_ASSIGN(c.attention_size, k.whole_or("attention_size", 0, 0));
  }
  ATTN_ASSIGN(c.max_source_length, k.whole("max_source_length"));
  ATTN_ASSIGN(c.max_target_length, k.whole("max_target_length"));
  if (c.score == Seq2SeqScore::Dot && c.decoder_hidden != 2 * c.encoder_hidden) {
    return k.error(ErrorKind::Mismatch, "decoder_hidden",
                   "the dot score compares the decoder state with the annotations: decoder_hidden "
                   "must be 2 x encoder_hidden = " +
                       std::to_string(2 * c.encoder_hidden) + ", got " + std::to_string(c.decoder_hidden));
  }
  return {};
}

// The GRU models' keys after "attention" (Bahdanau or Luong): the score, local-p, the vocabularies, the sizes.
Result<Seq2SeqConfig> read_gru_config(const bundled::ConfigKeys& k, Seq2SeqConfig c) {
  std::string score;
  ATTN_ASSIGN(score, read_score(k, c));
  ATTN_TRY(read_local(k, score, c));
  ATTN_TRY(read_vocabularies(k, c));
  ATTN_TRY(read_gru_sizes(k, c));
  return c;
}

Result<Seq2SeqConfig> read_seq2seq_config(const bundled::ConfigKeys& k) {
  Seq2SeqConfig c;
  ATTN_TRY(k.architecture("AttnScopeSeq2Seq"));
  ATTN_ASSIGN(c.task, k.text_or("task", ""));
  ATTN_ASSIGN(c.trained_on, k.text_or("trained_on", ""));

  const json* attention = k.find("attention");
  if (!attention) {
    return k.error(ErrorKind::Malformed,
                   "attention is missing; use \"bahdanau\", \"luong\", \"convs2s\" or \"location\"");
  }
  if (!attention->is_string()) {
    return k.error(ErrorKind::Malformed, "attention", "attention must be a string, got " + attention->dump());
  }
  const std::string kind = attention->get<std::string>();
  if (kind == "bahdanau") {
    c.attention = Seq2SeqAttention::Bahdanau;
    return read_gru_config(k, std::move(c));
  }
  if (kind == "luong") {
    c.attention = Seq2SeqAttention::Luong;
    return read_gru_config(k, std::move(c));
  }
  if (kind == "convs2s") return read_convs2s_config(k, std::move(c));
  if (kind == "location") return bundled::speech::read_config(k, std::move(c));
  return k.error(
      ErrorKind::Unsupported, "attention",
      "attention " + attention->dump() + " is not supported; use \"bahdanau\", \"luong\", \"convs2s\" or \"location\"");
}

// The same rules for a config built in code (from_parts), without lines to name.
Result<void> check_config(const Seq2SeqConfig& c, const std::string& file) {
  const auto bad = [&](ErrorKind kind, const std::string& why) { return fail(kind, "config: " + why, file); };
  const bool convs2s = c.attention == Seq2SeqAttention::ConvS2S;
  if (convs2s) {
    if (c.embedding_size < 1 || c.encoder_layers < 0 || c.decoder_layers < 1 || c.encoder_kernel < 1 ||
        c.decoder_kernel < 1 || c.encoder_layers > kMaxConvLayers || c.decoder_layers > kMaxConvLayers ||
        c.encoder_kernel > kMaxConvKernel || c.decoder_kernel > kMaxConvKernel) {
      return bad(ErrorKind::OutOfRange,
                 "convs2s needs embedding_size >= 1, 0 to 64 encoder layers, 1 to 64 decoder layers and kernels "
                 "of 1 to 63");
    }
    if (c.encoder_kernel % 2 == 0) return bad(ErrorKind::OutOfRange, "the encoder's kernel must be odd");
  } else if (c.embedding_size < 1 || c.encoder_hidden < 1 || c.decoder_hidden < 1) {
    return bad(ErrorKind::OutOfRange, "embedding_size, encoder_hidden and decoder_hidden must be at least 1");
  }
  if (c.max_source_length < 1 || c.max_target_length < 1) {
    return bad(ErrorKind::OutOfRange, "max_source_length and max_target_length must be at least 1");
  }
  const bool location = c.attention == Seq2SeqAttention::Location;
  if (location != c.frames) return bad(ErrorKind::Mismatch, "location attention goes with \"unit\": \"frame\" alone");
  if (location && (c.feature_bands != 80 || c.feature_stack < 1 || c.encoder_layers < 1 || c.location_filters < 1 ||
                   c.location_width < 1 || c.location_width % 2 == 0 || c.attention_size < 1)) {
    return bad(
        ErrorKind::OutOfRange,
        "a speech model needs 80 bands, a stack of at least 1 frame, at least one encoder layer and one location "
        "filter of odd width");
  }
  if (location && !c.source_vocab.empty()) return bad(ErrorKind::Mismatch, "a speech model has no source_vocab");
  if (c.source_vocab.empty() && !location) return bad(ErrorKind::OutOfRange, "source_vocab is empty");
  if (c.target_vocab.empty()) return bad(ErrorKind::OutOfRange, "target_vocab is empty");
  if (!location && (c.source_vocab.size() < 3 || c.source_vocab[0] != "<pad>" || c.source_vocab[1] != "<unk>")) {
    return bad(ErrorKind::Malformed,
               "source_vocab must start with \"<pad>\", \"<unk>\" and hold at least one character");
  }
  if (c.target_vocab.size() < 4 || c.target_vocab[0] != "<pad>" || c.target_vocab[1] != "<s>" ||
      c.target_vocab[2] != "</s>") {
    return bad(ErrorKind::Malformed,
               "target_vocab must start with \"<pad>\", \"<s>\", \"</s>\" and hold at least one character");
  }
  if (convs2s) return {};
  const bool bahdanau = c.attention == Seq2SeqAttention::Bahdanau || location;
  if (bahdanau != (c.score == Seq2SeqScore::Additive)) {
    return bad(ErrorKind::Mismatch,
               "bahdanau attention scores with \"additive\", luong with \"dot\", \"general\" or \"concat\"");
  }
  if (c.local && (c.score != Seq2SeqScore::General || c.window < 1)) {
    return bad(ErrorKind::Mismatch, "local-p needs the general score and a window of at least 1");
  }
  if ((c.score == Seq2SeqScore::Additive || c.score == Seq2SeqScore::Concat || c.local) && c.attention_size < 1) {
    return bad(ErrorKind::OutOfRange, "attention_size must be at least 1");
  }
  if (c.score == Seq2SeqScore::Dot && c.decoder_hidden != 2 * c.encoder_hidden) {
    return bad(ErrorKind::Mismatch,
               "the dot score needs decoder_hidden = 2 x encoder_hidden = " + std::to_string(2 * c.encoder_hidden) +
                   ", got " + std::to_string(c.decoder_hidden));
  }
  return {};
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------
// Config

Result<Seq2SeqConfig> Seq2SeqConfig::parse(std::string_view text, const std::string& file) {
  return detail::read_json_config<bundled::ConfigKeys>(
      text, file, [](const bundled::ConfigKeys& k) { return read_seq2seq_config(k); });
}

std::string Seq2SeqConfig::variant_name() const {
  if (attention == Seq2SeqAttention::ConvS2S) {
    return "ConvS2S (" + std::to_string(decoder_layers) + " decoder layer" + (decoder_layers == 1 ? "" : "s") + ")";
  }
  if (attention == Seq2SeqAttention::Bahdanau) return "Bahdanau (additive)";
  if (attention == Seq2SeqAttention::Location) {
    return "location-aware (" + std::to_string(location_filters) + " filters of " + std::to_string(location_width) +
           " steps)";
  }
  if (local) return "Luong local-p (D = " + std::to_string(window) + ")";
  switch (score) {
    case Seq2SeqScore::Dot: return "Luong global (dot)";
    case Seq2SeqScore::General: return "Luong global (general)";
    case Seq2SeqScore::Concat: return "Luong global (concat)";
    case Seq2SeqScore::Additive: break;
  }
  return "Luong global (additive)";
}

std::string config_architecture(const fs::path& folder) {
  auto text = detail::read_config_text(folder / "config.json");
  if (!text) return {};
  const auto parsed = detail::parse_json(*text, {});
  if (!parsed || !parsed->is_object()) return {};
  const json& root = *parsed;
  const auto it = root.find("architectures");
  if (it == root.end() || !it->is_array() || it->empty() || !(*it)[0].is_string()) return {};
  return (*it)[0].get<std::string>();
}

// ---------------------------------------------------------------------------------------------------------
// Model

namespace {

// The load-time notes, the parameter count and the source index, once the tensors are read.
std::unique_ptr<Seq2SeqModel::Impl> finish(std::unique_ptr<Seq2SeqModel::Impl> m, const bundled::TensorReader& r) {
  const auto& c = m->config;
  if (auto w = r.unused_warning("a " + c.variant_name() + " model")) m->warnings.push_back(std::move(*w));
  for (const std::string& note : r.nonfinite()) m->warnings.push_back(note);
  m->parameters = r.parameters();
  m->source_index = bundled::index_vocabulary(c.source_vocab);
  return m;
}

Result<std::unique_ptr<Seq2SeqModel::Impl>> build(Seq2SeqConfig config, const io::SafeTensors& weights) {
  ATTN_TRY(check_config(config, weights.name()));
  auto m = std::make_unique<Seq2SeqModel::Impl>();
  m->config = std::move(config);
  const auto& c = m->config;
  const Index e = c.embedding_size, h2 = 2 * static_cast<Index>(c.encoder_hidden), d = c.decoder_hidden,
              a = c.attention_size;
  const Index vs = static_cast<Index>(c.source_vocab.size()), vt = static_cast<Index>(c.target_vocab.size());
  // The speech model's decoder is Bahdanau's; its encoder and location filters are seq2seq_speech.cpp's.
  const bool bahdanau = c.attention == Seq2SeqAttention::Bahdanau || c.attention == Seq2SeqAttention::Location;

  bundled::TensorReader r(weights);
  if (c.attention == Seq2SeqAttention::ConvS2S) {
    ATTN_TRY(bundled::convs2s::read(*m, r));
    return finish(std::move(m), r);
  }
  if (c.frames) {
    ATTN_TRY(bundled::speech::read(*m, r));
  } else {
    ATTN_ASSIGN(m->source_embedding, r.matrix("encoder.embedding.weight", vs, e));
    ATTN_ASSIGN(m->encoder, bundled::read_bigru(r, "encoder.gru", e, c.encoder_hidden));
  }
  ATTN_ASSIGN(m->init_t, r.linear_t("decoder.init.weight", d, h2));
  ATTN_ASSIGN(m->init_b, r.vector("decoder.init.bias", d));

  Matrix target_embedding;
  ATTN_ASSIGN(target_embedding, r.matrix("decoder.embedding.weight", vt, e));
  const Index feed = bahdanau ? h2 : d;
  ATTN_ASSIGN(m->cell, bundled::read_gru_cell(r, "decoder.gru", e + feed, d));
  m->embedding_gates.resize(vt, 3 * d);
  m->embedding_gates.noalias() = target_embedding * m->cell.w_ih_t.topRows(e);
  m->embedding_gates.rowwise() += m->cell.b_ih;
  m->feed_gates_t = m->cell.w_ih_t.bottomRows(feed);

  if (bahdanau) {
    ATTN_ASSIGN(m->query_t, r.linear_t("attention.W.weight", a, d));
    ATTN_ASSIGN(m->key_t, r.linear_t("attention.U.weight", a, h2));
    ATTN_ASSIGN(m->v, r.matrix("attention.v.weight", 1, a));
    Matrix out_t;
    ATTN_ASSIGN(out_t, r.linear_t("decoder.out.weight", vt, d + h2 + e));
    RowVector bias;
    ATTN_ASSIGN(bias, r.vector("decoder.out.bias", vt));
    m->out_state_t = out_t.topRows(d);
    m->out_context_t = out_t.middleRows(d, h2);
    m->out_embedding.resize(vt, vt);
    m->out_embedding.noalias() = target_embedding * out_t.bottomRows(e);
    m->out_embedding.rowwise() += bias;
  } else {
    if (c.score == Seq2SeqScore::General) {
      Matrix W;
      ATTN_ASSIGN(W, r.matrix("attention.W.weight", d, h2));
      m->key_t = W.transpose();
    } else if (c.score == Seq2SeqScore::Concat) {
      Matrix w_t;
      ATTN_ASSIGN(w_t, r.linear_t("attention.W.weight", a, d + h2));
      m->query_t = w_t.topRows(d);
      m->key_t = w_t.bottomRows(h2);
      ATTN_ASSIGN(m->v, r.matrix("attention.v.weight", 1, a));
    }
    if (c.local) {
      ATTN_ASSIGN(m->local.Wp, r.matrix("local.W.weight", a, d));
      Matrix vp;
      ATTN_ASSIGN(vp, r.matrix("local.v.weight", 1, a));
      m->local.vp = vp.row(0).transpose();
    }
    Matrix combine_t;
    ATTN_ASSIGN(combine_t, r.linear_t("decoder.combine.weight", d, h2 + d));
    m->combine_c_t = combine_t.topRows(h2);
    m->combine_s_t = combine_t.bottomRows(d);
    ATTN_ASSIGN(m->out_state_t, r.linear_t("decoder.out.weight", vt, d));
    ATTN_ASSIGN(m->out_b, r.vector("decoder.out.bias", vt));
  }

  return finish(std::move(m), r);
}

}  // namespace

Seq2SeqModel::Seq2SeqModel(std::unique_ptr<Seq2SeqModel::Impl> impl) : impl_(std::move(impl)) {}
Seq2SeqModel::~Seq2SeqModel() = default;
const Seq2SeqConfig& Seq2SeqModel::config() const { return impl_->config; }
std::vector<std::string> Seq2SeqModel::warnings() const { return impl_->warnings; }
std::int64_t Seq2SeqModel::parameters() const { return impl_->parameters; }

std::string Seq2SeqModel::description() const {
  const auto& c = impl_->config;
  return bundled::describe(c.task, {c.variant_name()}, impl_->parameters);
}

Result<std::shared_ptr<const Seq2SeqModel>> Seq2SeqModel::from_parts(Seq2SeqConfig config,
                                                                     const io::SafeTensors& weights) {
  return bundled::build_model<Seq2SeqModel>(
      weights, [&] { return build(std::move(config), weights); },
      [](std::unique_ptr<Seq2SeqModel::Impl> impl) { return new Seq2SeqModel(std::move(impl)); });
}

Result<std::shared_ptr<const Seq2SeqModel>> Seq2SeqModel::load(const fs::path& folder) {
  return bundled::load_folder<Seq2SeqModel, Seq2SeqConfig>(folder);
}

// ---------------------------------------------------------------------------------------------------------
// Run

std::shared_ptr<const AttentionMap> Seq2SeqRun::alignment(std::size_t hypothesis) const {
  if (hypothesis >= hypotheses.size()) return nullptr;
  const Hypothesis& h = hypotheses[hypothesis];
  auto map = std::make_shared<AttentionMap>();
  map->stage = Stage::Cross;
  map->name = "alignment";
  map->weights = h.attention;
  map->row_axis = "output";
  map->col_axis = "source";
  map->row_labels = h.labels;
  map->col_labels = source;
  map->col_spans = spans;
  return map;
}

std::shared_ptr<const AttentionMap> Seq2SeqRun::layer_alignment(std::size_t layer, std::size_t hypothesis) const {
  if (hypothesis >= hypotheses.size() || layer >= hypotheses[hypothesis].layers.size()) return nullptr;
  auto whole = alignment(hypothesis);
  auto map = std::make_shared<AttentionMap>(*whole);
  map->name = "decoder layer " + std::to_string(layer);
  map->weights = hypotheses[hypothesis].layers[layer];
  return map;
}

struct Seq2SeqRunner::Scratch : Seq2SeqBuffers {};

void bundled::initial_state(const Seq2SeqModel::Impl& m, Seq2SeqBuffers& s) {
  // s_0 = tanh(W_init [fwd_{S-1} ; bwd_0] + b).
  const Index S = s.H.rows(), h = m.config.encoder_hidden;
  RowVector last(2 * h);
  last.head(h) = s.H.row(S - 1).head(h);
  last.tail(h) = s.H.row(0).tail(h);
  s.state.resize(1, m.config.decoder_hidden);
  bundled::multiply(s.state, last, m.init_t);
  s.state = (s.state + m.init_b).array().tanh().matrix();
}

Seq2SeqRunner::Seq2SeqRunner(std::shared_ptr<const Seq2SeqModel> model)
    : model_(std::move(model)), scratch_(std::make_unique<Scratch>()) {}
Seq2SeqRunner::~Seq2SeqRunner() = default;
Seq2SeqRunner::Seq2SeqRunner(Seq2SeqRunner&&) noexcept = default;
Seq2SeqRunner& Seq2SeqRunner::operator=(Seq2SeqRunner&&) noexcept = default;

namespace {

// The encoder and everything per input that the steps share: H, s_0, the key projections.
void encode(const Seq2SeqModel::Impl& m, Seq2SeqBuffers& s, const std::vector<int>& ids) {
  const auto& c = m.config;
  if (c.attention == Seq2SeqAttention::ConvS2S) return bundled::convs2s::encode(m, s, ids);
  const Index S = static_cast<Index>(ids.size()), e = c.embedding_size;
  s.embedded.resize(S, e);
  for (Index j = 0; j < S; ++j) s.embedded.row(j) = m.source_embedding.row(ids[static_cast<std::size_t>(j)]);
  bundled::bigru(m.encoder, s.embedded, s.H, s.gru);
  bundled::initial_state(m, s);

  switch (c.score) {
    case Seq2SeqScore::Additive:
    case Seq2SeqScore::Concat:
      s.keys.resize(S, c.attention_size);
      bundled::multiply(s.keys, s.H, m.key_t);
      break;
    case Seq2SeqScore::General:
      s.keys.resize(S, c.decoder_hidden);
      bundled::multiply(s.keys, s.H, m.key_t);
      break;
    case Seq2SeqScore::Dot: break;
  }
}

// One decoder step for the first B rows of s.state (and s.feed, the search's tokens): leaves the step's attention
// rows in s.alpha, p_t in s.positions (local-p), the new states in s.state / s.feed and the logits in
// s.logits.
void step(const Seq2SeqModel::Impl& m, Seq2SeqBuffers& s, Index B) {
  const auto& c = m.config;
  auto state = s.state.topRows(B);
  auto alpha = s.alpha.topRows(B);
  auto context = s.context.topRows(B);
  auto gi = s.gi.topRows(B);
  auto gh = s.gh.topRows(B);
  auto logits = s.logits.topRows(B);

  const auto& tokens = s.search.tokens();
  const auto gates_from_tokens = [&] {
    for (Index b = 0; b < B; ++b) gi.row(b) = m.embedding_gates.row(tokens[static_cast<std::size_t>(b)]);
  };
  const auto recurrent = [&] {
    bundled::multiply(gh, state, m.cell.w_hh_t);
    gh.rowwise() += m.cell.b_hh;
  };

  if (c.attention == Seq2SeqAttention::Bahdanau || c.attention == Seq2SeqAttention::Location) {
    // e_j = v . tanh(W s_{t-1} + U H_j) (+ the location term): the query is the previous state.
    bundled::multiply(s.query.topRows(B), state, m.query_t);
    if (c.frames) {
      bundled::speech::scores(m, s, B);
    } else {
      bundled::additive_scores(s.query, s.keys, m.v, B, s.tanh_rows, s.alpha);
    }
    if (c.frames && s.shaping.shaped()) {
      bundled::speech::weights(s, B);  // sharpened, smoothed, top k or windowed
    } else {
      softmax_rows_inplace(alpha);
    }
    if (c.frames) s.feed.topRows(B) = alpha;  // the next step's previous alignment
    bundled::multiply(context, alpha, s.H);
    // s_t = GRUCell([emb(y) ; c_t], s_{t-1}).
    gates_from_tokens();
    bundled::multiply(gi, context, m.feed_gates_t, true);
    recurrent();
    bundled::gru_gates(gi, gh, state, state);
    // logits = W_out [s_t ; c_t ; emb(y)] + b.
    bundled::multiply(logits, state, m.out_state_t);
    bundled::multiply(logits, context, m.out_context_t, true);
    for (Index b = 0; b < B; ++b) logits.row(b) += m.out_embedding.row(tokens[static_cast<std::size_t>(b)]);
  } else {
    // s_t = GRUCell([emb(y) ; h~_{t-1}], s_{t-1}) (input feeding); the query is the new state.
    gates_from_tokens();
    bundled::multiply(gi, s.feed.topRows(B), m.feed_gates_t, true);
    recurrent();
    bundled::gru_gates(gi, gh, state, state);
    if (c.local) {
      // The general score s_t . (W H_j) is the dot score against the keys W H_j computed once per input
      // (as the reference computes it), so local_attention gets those keys and the dot score.
      LocalParams p = local_defaults(LocalKind::Predictive);
      p.score = ScoreKind::Dot;
      p.window = c.window;
      const LocalResult r = local_attention(state, s.keys, s.H, ScoreWeights{}, m.local, p);
      alpha = r.weights;
      context = r.context;
      s.positions.head(B) = r.positions;
    } else {
      switch (c.score) {
        case Seq2SeqScore::Dot: alpha = state.lazyProduct(s.H.transpose()); break;
        case Seq2SeqScore::General: alpha = state.lazyProduct(s.keys.transpose()); break;
        case Seq2SeqScore::Concat:
          bundled::multiply(s.query.topRows(B), state, m.query_t);
          bundled::additive_scores(s.query, s.keys, m.v, B, s.tanh_rows, s.alpha);
          break;
        case Seq2SeqScore::Additive: break;  // not a Luong score (refused at load)
      }
      softmax_rows_inplace(alpha);
      bundled::multiply(context, alpha, s.H);
    }
    // h~_t = tanh(W_c [c_t ; s_t]); logits = W_out h~_t + b.
    auto feed = s.feed.topRows(B);
    bundled::multiply(feed, context, m.combine_c_t);
    bundled::multiply(feed, state, m.combine_s_t, true);
    feed = feed.array().tanh().matrix();
    bundled::multiply(logits, feed, m.out_state_t);
    logits.rowwise() += m.out_b;
  }
}

// Truncates to max_source_length with a warning.
void truncate_source(const Seq2SeqConfig& c, Seq2SeqRun& run) {
  const std::size_t n = run.source_ids.size(), keep = static_cast<std::size_t>(c.max_source_length);
  if (n <= keep) return;
  const char* units = c.words ? " words (of " : " characters (of ";
  run.warnings.push_back("input truncated to " + std::to_string(keep) + units + std::to_string(n) + ")");
  run.source_ids.resize(keep);
  run.source.resize(keep);
  run.spans.resize(keep);
  run.unknown.resize(keep);
}

// The beam width and step count asked for, and the shaping, checked against the model.
Result<void> check_decode_options(const Seq2SeqConfig& c, const DecodeOptions& options, int max_steps) {
  const int k = options.beam;
  if (k < 1 || k > kMaxSeq2SeqBeam) {
    return fail(ErrorKind::OutOfRange,
                "beam width " + std::to_string(k) + " is not from 1 to " + std::to_string(kMaxSeq2SeqBeam));
  }
  if (max_steps < 1) {
    return fail(ErrorKind::OutOfRange, "max_steps is " + std::to_string(max_steps) + "; at least one step is needed");
  }
  if (options.shaping.shaped() && !c.frames) {
    return fail(ErrorKind::Mismatch,
                "sharpening, smoothing, top k and windowing are for location-aware (speech) models; this one is " +
                    c.variant_name());
  }
  if (const std::string why = options.shaping.problem(); !why.empty()) {
    return fail(ErrorKind::OutOfRange, why);
  }
  if (c.attention == Seq2SeqAttention::ConvS2S && max_steps > c.max_target_length) {
    return fail(ErrorKind::OutOfRange, "max_steps is " + std::to_string(max_steps) +
                                           "; a ConvS2S model has position embeddings for max_target_length = " +
                                           std::to_string(c.max_target_length) + " output characters");
  }
  return {};
}

// The per-step buffers sized for k hypotheses over S source positions (the GRU state's first row is s_0 from
// encode()), and the search started.
void start_search(const Seq2SeqConfig& c, Seq2SeqBuffers& s, int k, int max_steps, Index S) {
  const bool convs2s = c.attention == Seq2SeqAttention::ConvS2S;
  // GRU: the state s [k, d]; ConvS2S: every layer's inputs at every position [k, L T d], and L rows of attention.
  const Index d = convs2s ? c.embedding_size : c.decoder_hidden;
  const Index state_size = convs2s ? Index{c.decoder_layers} * max_steps * d : d;
  const Index maps = convs2s ? c.decoder_layers : 1;
  if (convs2s) {
    s.state.setZero(k, state_size);
  } else {
    const RowVector s0 = s.state.row(0);
    s.state.resize(k, d);
    s.state.row(0) = s0;
  }
  s.state_next.resize(k, state_size);
  // Luong's h~_0 = 0; a speech model's previous alignment, alpha_0 one-hot on the first step.
  const Index feed = c.frames ? S : d;
  s.feed = Matrix::Zero(k, feed);
  if (c.frames) s.feed(0, 0) = 1.0f;
  s.feed_next.resize(k, feed);
  s.query.resize(k, std::max<Index>(1, c.attention_size));
  s.alpha.resize(k, maps * S);
  s.context.resize(k, convs2s ? d : s.H.cols());
  s.gi.resize(k, 3 * d);
  s.gh.resize(k, 3 * d);
  s.logits.resize(k, static_cast<Index>(c.target_vocab.size()));
  s.positions = Vector::Zero(k);
  s.rows.clear();
  s.node_positions.clear();
  s.search.start(k, max_steps, bundled::kStartId, bundled::kEndId);
}

// Steps until every hypothesis has ended or the steps run out; each kept node records its attention row and p_t.
void run_search(const Seq2SeqModel::Impl& m, Seq2SeqBuffers& s) {
  const bool convs2s = m.config.attention == Seq2SeqAttention::ConvS2S;
  int t = 0;
  for (bool more = true; more; ++t) {
    // Alive hypothesis i is row i of state / feed; each holds t ids.
    const Index B = s.search.alive();
    if (convs2s) {
      bundled::convs2s::step(m, s, B, t);
    } else {
      step(m, s, B);
    }
    bundled::log_softmax_rows(s.logits.topRows(B));
    more = s.search.advance(s.logits.topRows(B));
    for (const auto& kept : s.search.kept()) {
      const auto row = s.alpha.row(kept.row);
      s.rows.insert(s.rows.end(), row.data(), row.data() + row.size());
      s.node_positions.push_back(s.positions(kept.row));
    }
    const auto& parents = s.search.parents();
    for (std::size_t r = 0; r < parents.size(); ++r) {
      s.state_next.row(static_cast<Index>(r)) = s.state.row(parents[r]);
      s.feed_next.row(static_cast<Index>(r)) = s.feed.row(parents[r]);
    }
    std::swap(s.state, s.state_next);
    std::swap(s.feed, s.feed_next);
  }
}

// Ended hypothesis i of the search (0: the best) from the tree: its ids, labels, text and attention rows over
// the S source positions (a ConvS2S model's per layer too, their mean as the alignment).
Hypothesis hypothesis_of(const Seq2SeqConfig& c, Seq2SeqBuffers& s, std::size_t i, Index S) {
  const bool convs2s = c.attention == Seq2SeqAttention::ConvS2S;
  const Index maps = convs2s ? c.decoder_layers : 1;
  s.search.path(i, s.path);
  Hypothesis h;
  const auto steps = static_cast<Index>(s.path.size());
  h.attention.resize(steps, S);
  if (convs2s) h.layers.assign(static_cast<std::size_t>(maps), Matrix(steps, S));
  for (Index j = 0; j < steps; ++j) {
    const auto n = static_cast<std::size_t>(s.path[static_cast<std::size_t>(j)]);
    h.ids.push_back(s.search.token(static_cast<int>(n)));
    const float* rows = s.rows.data() + n * static_cast<std::size_t>(maps * S);
    if (convs2s) {
      h.attention.row(j).setZero();
      for (Index l = 0; l < maps; ++l) {
        const Eigen::Map<const RowVector> row(rows + l * S, S);
        h.layers[static_cast<std::size_t>(l)].row(j) = row;
        h.attention.row(j) += row;
      }
      h.attention.row(j) /= static_cast<float>(maps);
    } else {
      h.attention.row(j) = Eigen::Map<const RowVector>(rows, S);
    }
    if (c.local) h.positions.push_back(s.node_positions[n]);
  }
  for (const int id : h.ids) {
    const std::string& label = c.target_vocab[static_cast<std::size_t>(id)];
    // The reference's target_text: every id but </s> as its vocabulary string (words, phonemes: a space between).
    if (id != bundled::kEndId) h.text += ((c.words || c.frames) && !h.text.empty() ? " " : "") + label;
    h.labels.push_back(label);
  }
  h.log_prob = static_cast<float>(s.search.log_prob(i));
  h.finished = h.ids.back() == bundled::kEndId;
  return h;
}

// The source truncated to max_source_length, then bundled::BeamSearch (greedy is a beam of 1), every
// node keeping its step's attention row and p_t.
Result<Seq2SeqRun> decode(const Seq2SeqModel::Impl& m, Seq2SeqBuffers& s, Seq2SeqRun run, const DecodeOptions& options,
                          const Matrix* frames = nullptr) {
  const auto& c = m.config;
  run.words = c.words;
  truncate_source(c, run);
  const int max_steps = options.max_steps.value_or(c.max_target_length);
  ATTN_TRY(check_decode_options(c, options, max_steps));
  s.shaping = options.shaping;
  if (frames) {
    bundled::speech::encode(m, s, *frames);
  } else {
    encode(m, s, run.source_ids);
  }
  const auto S = static_cast<Index>(run.source_ids.size());
  start_search(c, s, options.beam, max_steps, S);
  run_search(m, s);
  // The k best ended hypotheses, best first.
  for (std::size_t i = 0; i < s.search.results(); ++i) run.hypotheses.push_back(hypothesis_of(c, s, i, S));
  std::int64_t bad = 0, total = 0;
  for (const Hypothesis& h : run.hypotheses) {
    bad += detail::count_nonfinite(h.attention);
    total += h.attention.size();
  }
  if (auto w = detail::nonfinite_attention_warning(bad, total)) run.warnings.push_back(std::move(*w));
  return run;
}

}  // namespace

namespace {

// The source's units: code points, or split_words' words without the terminators.
Seq2SeqRun split_source(const Seq2SeqModel::Impl& m, std::string_view text) {
  Seq2SeqRun run;
  const auto add = [&](std::string label, Span span, bool valid) {
    int id = bundled::kUnknownId;
    if (valid) {
      // An invalid byte is U+FFFD but never the vocabulary's U+FFFD: it was not that character.
      if (const auto it = m.source_index.find(label); it != m.source_index.end()) id = it->second;
    }
    run.source.push_back(std::move(label));
    run.spans.push_back(span);
    run.source_ids.push_back(id);
    run.unknown.push_back(id == bundled::kUnknownId);
  };
  if (m.config.words) {
    WordSplit split = split_words(text);
    for (std::size_t i = 0; i < split.words.size(); ++i) {
      const std::string& w = split.words[i];
      if (w != "." && w != "!" && w != "?") add(std::move(split.words[i]), split.spans[i], true);
    }
    return run;
  }
  for (const auto& cp : unicode::code_points(text)) {
    std::string label;
    unicode::append_utf8(label, cp.value);
    add(std::move(label), cp.span, cp.valid);
  }
  return run;
}

}  // namespace

Result<Seq2SeqRun> Seq2SeqRunner::run(std::string_view text, const DecodeOptions& options) {
  try {
    const Seq2SeqModel::Impl& m = model_->impl();
    if (m.config.frames) return fail(ErrorKind::Mismatch, "a speech model reads audio, not text", "text");
    if (text.empty()) return fail(ErrorKind::OutOfRange, "nothing to decode: the text is empty", "text");
    Seq2SeqRun run = split_source(m, text);
    if (run.source.empty()) {
      return fail(ErrorKind::OutOfRange,
                  "nothing to decode: the text has no word (letters a-z, digits or ') for this word model", "text");
    }
    return decode(m, *scratch_, std::move(run), options);
  } catch (const std::bad_alloc&) {
    return fail(ErrorKind::TooLarge, "out of memory while decoding", "text");
  }
}

Result<Seq2SeqRun> Seq2SeqRunner::run_ids(const std::vector<int>& source_ids, const DecodeOptions& options) {
  try {
    const Seq2SeqModel::Impl& m = model_->impl();
    const auto& vocab = m.config.source_vocab;
    if (m.config.frames) return fail(ErrorKind::Mismatch, "a speech model reads audio, not ids", "source ids");
    if (source_ids.empty()) return fail(ErrorKind::OutOfRange, "nothing to decode: no source ids", "source ids");
    Seq2SeqRun run;
    std::int32_t offset = 0;
    for (std::size_t i = 0; i < source_ids.size(); ++i) {
      const int id = source_ids[i];
      if (id < 0 || static_cast<std::size_t>(id) >= vocab.size()) {
        return fail(ErrorKind::OutOfRange,
                    "source id " + std::to_string(id) + " at position " + std::to_string(i) +
                        " is outside the vocabulary (0 to " + std::to_string(vocab.size() - 1) + ")",
                    "source ids");
      }
      const std::string& label = vocab[static_cast<std::size_t>(id)];
      // Spans index the labels written one after the other: there is no typed text.
      const auto length = static_cast<std::int32_t>(label.size());
      run.spans.push_back({offset, offset + length});
      offset += length;
      run.source.push_back(label);
      run.source_ids.push_back(id);
      run.unknown.push_back(id == bundled::kUnknownId);
    }
    return decode(m, *scratch_, std::move(run), options);
  } catch (const std::bad_alloc&) {
    return fail(ErrorKind::TooLarge, "out of memory while decoding", "source ids");
  }
}

Result<Seq2SeqRun> Seq2SeqRunner::run_frames(const Matrix& log_mel, const DecodeOptions& options) {
  try {
    const Seq2SeqModel::Impl& m = model_->impl();
    const auto& c = m.config;
    if (!c.frames) {
      return fail(ErrorKind::Mismatch,
                  "this model reads " + std::string(c.words ? "words" : "characters") + ", not audio", "audio");
    }
    if (log_mel.cols() != c.feature_bands) {
      return fail(
          ErrorKind::Mismatch,
          "frames of " + std::to_string(log_mel.cols()) + " bands; the model reads " + std::to_string(c.feature_bands),
          "audio");
    }
    const Index stack = c.feature_stack, steps = log_mel.rows() / stack;
    const auto hundredths = [](double x) {
      char text[32];
      std::snprintf(text, sizeof text, "%.2f s", x);
      return std::string(text);
    };
    // Frames are 10 ms apart: `frames` of them stand for frames x 10 ms of audio.
    const auto seconds = [&](Index frames) { return hundredths(double(frames) * 0.01); };
    if (steps < 1) {
      return fail(ErrorKind::OutOfRange,
                  "nothing to decode: the audio is shorter than one step of the model (" + std::to_string(stack) +
                      " log-mel frames, " + hundredths(double(stack - 1) * 0.01 + 0.025) + " of audio)",
                  "audio");
    }
    Seq2SeqRun run;
    run.frames = true;
    const Index kept = std::min<Index>(steps, c.max_source_length);
    if (kept < steps) {
      run.warnings.push_back("audio cut at " + seconds(kept * stack) + " (of " + seconds(log_mel.rows()) +
                             "): the model reads at most " + std::to_string(c.max_source_length) + " steps");
    }
    for (Index j = 0; j < kept; ++j) {
      run.source.push_back(hundredths(double(j * stack) * 0.01));
      run.spans.push_back({static_cast<std::int32_t>(j * stack), static_cast<std::int32_t>((j + 1) * stack)});
      run.source_ids.push_back(0);
      run.unknown.push_back(false);
    }
    const Matrix frames = log_mel.topRows(kept * stack);
    return decode(m, *scratch_, std::move(run), options, &frames);
  } catch (const std::bad_alloc&) {
    return fail(ErrorKind::TooLarge, "out of memory while decoding", "audio");
  }
}

}  // namespace attn::models
