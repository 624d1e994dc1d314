// The Show, Attend and Tell captioner of tools/train/MODELS.md section 4: config, strict loading, the CNN
// encoder (3x3 convolutions as im2col + one product per layer, ReLU, 2x2 max pooling), the decoder (MLP
// attention, the gate beta, an LSTM cell, the deep output layer; soft or hard attention) and greedy and
// beam-search decoding (bundled::BeamSearch, shared with the seq2seq models).
//
// Speed: the encoder runs once per image; per step the live hypotheses of the beam go through every
// product as the rows of one matrix, and the attention's image-side projection W_a a_i + b is computed once
// per image. No decoder product is a BLAS call (bundled::multiply says why); the encoder's convolutions
// are large enough for one.
#include "attn/models/captioner.h"

#include "attn/io/safetensors.h"
#include "attn/mechanisms/normalise.h"
#include "beam_search.h"
#include "layers.h"
#include "../../core/nonfinite.h"

#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>

namespace attn::models {

namespace fs = std::filesystem;
using detail::quote;
using nlohmann::json;

namespace {

constexpr int kMaxCaptionBeam = 64;

// Bounds that keep a small config.json from asking for a huge allocation: every buffer a run makes is
// bounded by them before anything is read or allocated.
constexpr int kMaxCaptionImageSize = 4096;  // S
constexpr int kMaxCaptionLayers = 8;        // K
constexpr int kMaxChannels = 4096;          // any C_k
constexpr int kMaxWidth = 16384;            // E, H, A
constexpr int kMaxVocabulary = 65536;
constexpr int kMaxCaptionLength = 1024;
constexpr std::int64_t kMaxActivation = std::int64_t{1} << 26;   // floats of one layer's im2col or output
constexpr std::int64_t kMaxGrid = 64;                            // G: L = G^2 cells
constexpr std::int64_t kMaxGridProduct = std::int64_t{1} << 24;  // L x A
constexpr std::int64_t kMaxKept = std::int64_t{1} << 27;         // floats a search keeps (beam x words x (L + V))

// A failed rule of the config: what kind, the key it is about and why.
struct ConfigProblem {
  ErrorKind kind;
  std::string key;
  std::string reason;
};

// Every rule a config must meet, for parse() (which names the key's line) and from_parts() alike. The
// sizes are checked in an order that keeps every product below from overflowing.
std::optional<ConfigProblem> check_rules(const CaptionerConfig& c) {
  const auto problem = [](ErrorKind kind, std::string key, std::string reason) {
    return std::optional<ConfigProblem>(ConfigProblem{kind, std::move(key), std::move(reason)});
  };
  const auto range = [&](const char* key, std::int64_t v, std::int64_t hi) -> std::optional<ConfigProblem> {
    if (v < 1 || v > hi) {
      return problem(v < 1 ? ErrorKind::OutOfRange : ErrorKind::TooLarge, key,
                     std::string(key) + " is " + std::to_string(v) + "; it must be from 1 to " + std::to_string(hi));
    }
    return std::nullopt;
  };
  if (auto p = range("image_size", c.image_size, kMaxCaptionImageSize)) return p;
  if (auto p = range("embedding_size", c.embedding_size, kMaxWidth)) return p;
  if (auto p = range("hidden", c.hidden, kMaxWidth)) return p;
  if (auto p = range("attention_size", c.attention_size, kMaxWidth)) return p;
  if (auto p = range("max_caption_length", c.max_caption_length, kMaxCaptionLength)) return p;
  for (int i = 0; i < 3; ++i) {
    if (!std::isfinite(c.mean[i])) {
      return problem(ErrorKind::OutOfRange, "mean", "mean holds a value that is not finite");
    }
    if (!std::isfinite(c.std[i]) || c.std[i] <= 0.0f) {
      return problem(ErrorKind::OutOfRange, "std", "std must be 3 finite numbers above 0");
    }
  }

  const auto K = static_cast<std::int64_t>(c.channels.size());
  if (K < 1 || K > kMaxCaptionLayers) {
    return problem(K < 1 ? ErrorKind::OutOfRange : ErrorKind::TooLarge, "channels",
                   "channels holds " + std::to_string(K) + " widths; from 1 to " + std::to_string(kMaxCaptionLayers) +
                       " convolution layers are supported");
  }
  for (std::size_t k = 0; k < c.channels.size(); ++k) {
    if (c.channels[k] < 1 || c.channels[k] > kMaxChannels) {
      return problem(c.channels[k] < 1 ? ErrorKind::OutOfRange : ErrorKind::TooLarge, "channels",
                     "channels[" + std::to_string(k) + "] is " + std::to_string(c.channels[k]) +
                         "; every width must be from 1 to " + std::to_string(kMaxChannels));
    }
  }
  const std::int64_t pooling = std::int64_t{1} << K;
  if (c.image_size % pooling != 0) {
    return problem(ErrorKind::OutOfRange, "image_size",
                   "image_size " + std::to_string(c.image_size) + " is not divisible by 2^" + std::to_string(K) +
                       " = " + std::to_string(pooling) + " (one 2x2 pooling per layer of channels)");
  }
  std::int64_t side = c.image_size, in = 3;
  for (std::size_t k = 0; k < c.channels.size(); ++k) {
    const std::int64_t elements = side * side * std::max<std::int64_t>(9 * in, c.channels[k]);
    if (elements > kMaxActivation) {
      return problem(ErrorKind::TooLarge, "image_size",
                     "layer " + std::to_string(k) + " would hold " + std::to_string(elements) +
                         " values at image_size " + std::to_string(c.image_size) + "; at most " +
                         std::to_string(kMaxActivation) + " are supported");
    }
    in = c.channels[k];
    side /= 2;
  }
  const std::int64_t G = side, L = G * G;
  if (G > kMaxGrid) {
    return problem(ErrorKind::TooLarge, "image_size",
                   "image_size " + std::to_string(c.image_size) + " over " + std::to_string(K) + " poolings gives a " +
                       std::to_string(G) + " x " + std::to_string(G) + " grid; at most " + std::to_string(kMaxGrid) +
                       " x " + std::to_string(kMaxGrid) + " is supported");
  }
  // (L x D is bounded already: the last layer's output holds 4 L D values.)
  if (L * c.attention_size > kMaxGridProduct) {
    return problem(ErrorKind::TooLarge, "attention_size",
                   "attention_size " + std::to_string(c.attention_size) + " times the " + std::to_string(L) +
                       " grid cells exceeds " + std::to_string(kMaxGridProduct) + " values");
  }

  if (c.vocab.size() > static_cast<std::size_t>(kMaxVocabulary)) {
    return problem(ErrorKind::TooLarge, "vocab",
                   "vocab has " + std::to_string(c.vocab.size()) + " entries; at most " +
                       std::to_string(kMaxVocabulary) + " are supported");
  }
  static constexpr const char* kSpecial[] = {"<pad>", "<start>", "<end>", "<unk>"};
  for (std::size_t i = 0; i < 4; ++i) {
    if (i >= c.vocab.size() || c.vocab[i] != kSpecial[i]) {
      return problem(ErrorKind::Malformed, "vocab",
                     "vocab[" + std::to_string(i) + "] must be " + quote(kSpecial[i]) + ", got " +
                         (i < c.vocab.size() ? json(c.vocab[i]).dump() : std::string("nothing")));
    }
  }
  if (c.vocab.size() < 5) {
    return problem(ErrorKind::OutOfRange, "vocab", "vocab holds only the special words; it needs at least one more");
  }
  return std::nullopt;
}

// `key`: a list of whole numbers.
Result<std::vector<int>> read_widths(const bundled::ConfigKeys& k, std::string_view key) {
  const json* value = k.find(key);
  if (!value) return k.error(ErrorKind::Malformed, std::string(key) + " is missing");
  if (!value->is_array() || value->empty()) {
    return k.error(ErrorKind::Malformed, key,
                   std::string(key) + " must be a non-empty list of whole numbers, got " + value->dump());
  }
  if (value->size() > static_cast<std::size_t>(kMaxCaptionLayers)) {
    return k.error(ErrorKind::TooLarge, key,
                   std::string(key) + " holds " + std::to_string(value->size()) + " widths; from 1 to " +
                       std::to_string(kMaxCaptionLayers) + " convolution layers are supported");
  }
  std::vector<int> out;
  for (const json& v : *value) {
    if (!v.is_number_integer() || v.get<std::int64_t>() < 1 || v.get<std::int64_t>() > kMaxChannels) {
      const ErrorKind kind = !v.is_number_integer()      ? ErrorKind::Malformed
                             : v.get<std::int64_t>() < 1 ? ErrorKind::OutOfRange
                                                         : ErrorKind::TooLarge;
      return k.error(kind, key,
                     std::string(key) + " " + value->dump() + " holds " + v.dump() +
                         "; every width must be a whole number from 1 to " + std::to_string(kMaxChannels));
    }
    out.push_back(static_cast<int>(v.get<std::int64_t>()));
  }
  return out;
}

Result<CaptionerConfig> read_captioner_config(const bundled::ConfigKeys& k) {
  CaptionerConfig c;
  ATTN_TRY(k.architecture("AttnScopeCaptioner"));
  ATTN_ASSIGN(c.task, k.text_or("task", ""));

  const json* attention = k.find("attention");
  if (!attention) return k.error(ErrorKind::Malformed, "attention is missing; use \"soft\" or \"hard\"");
  if (!attention->is_string()) {
    return k.error(ErrorKind::Malformed, "attention", "attention must be a string, got " + attention->dump());
  }
  const std::string kind = attention->get<std::string>();
  if (kind == "soft") {
    c.attention = CaptionAttention::Soft;
  } else if (kind == "hard") {
    c.attention = CaptionAttention::Hard;
  } else {
    return k.error(ErrorKind::Unsupported, "attention",
                   "attention " + attention->dump() + " is not supported; use \"soft\" or \"hard\"");
  }

  ATTN_ASSIGN(c.image_size, k.whole("image_size", 1, kMaxCaptionImageSize));
  std::vector<float> mean, std;
  ATTN_ASSIGN(mean, k.per_channel("mean", 3, false));
  ATTN_ASSIGN(std, k.per_channel("std", 3, true));
  std::copy(mean.begin(), mean.end(), c.mean);
  std::copy(std.begin(), std.end(), c.std);
  ATTN_ASSIGN(c.channels, read_widths(k, "channels"));
  ATTN_ASSIGN(c.vocab, k.vocabulary("vocab", {"<pad>", "<start>", "<end>", "<unk>"}, 5));
  ATTN_ASSIGN(c.embedding_size, k.whole("embedding_size", 1, kMaxWidth));
  ATTN_ASSIGN(c.hidden, k.whole("hidden", 1, kMaxWidth));
  ATTN_ASSIGN(c.attention_size, k.whole("attention_size", 1, kMaxWidth));
  ATTN_ASSIGN(c.max_caption_length, k.whole("max_caption_length", 1, kMaxCaptionLength));
  if (auto p = check_rules(c)) return k.error(p->kind, p->key, p->reason);
  return c;
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------
// Config

int CaptionerConfig::grid() const {
  if (channels.empty() || channels.size() >= 31) return 0;
  return image_size >> static_cast<int>(channels.size());
}

Result<CaptionerConfig> CaptionerConfig::parse(std::string_view text, const std::string& file) {
  return detail::read_json_config<bundled::ConfigKeys>(
      text, file, [](const bundled::ConfigKeys& k) { return read_captioner_config(k); });
}

// ---------------------------------------------------------------------------------------------------------
// Model

struct CaptionerModel::Impl {
  CaptionerConfig config;
  std::int64_t parameters = 0;
  std::vector<std::string> warnings;

  // Encoder: per layer the torch weight [C_k, C_{k-1}, 3, 3] as [C_k, 9 C_{k-1}] (im2col's row order).
  struct Conv {
    Matrix weight;
    Vector bias;
  };
  std::vector<Conv> convs;

  // Decoder, transposed for row-vector products.
  Matrix init_h_t, init_c_t;  // [D, H]
  RowVector init_h_b, init_c_b;
  Matrix att_encoder_t;     // [D, A]
  RowVector att_encoder_b;  // [A]
  Matrix att_decoder_t;     // [H, A]
  RowVector att_full;       // [A]
  RowVector gate_w;         // [H]
  float gate_b = 0.0f;
  Matrix embedding;           // [V, E]
  bundled::LstmWeights lstm;  // E + D -> H
  Matrix deep_h_t;            // [H, E]
  Matrix deep_z_t;            // [D, E]
  Matrix out_t;               // [E, V]
  RowVector out_b;            // [V]
};

namespace {

Result<std::unique_ptr<CaptionerModel::Impl>> build(CaptionerConfig config, const io::SafeTensors& weights) {
  if (auto p = check_rules(config)) return fail(p->kind, "config: " + p->reason, weights.name());
  auto m = std::make_unique<CaptionerModel::Impl>();
  m->config = std::move(config);
  const auto& c = m->config;
  const Index D = c.features(), H = c.hidden, E = c.embedding_size, A = c.attention_size;
  const Index V = static_cast<Index>(c.vocab.size());

  bundled::TensorReader r(weights);
  Index in = 3;
  for (std::size_t k = 0; k < c.channels.size(); ++k) {
    const Index out = c.channels[k];
    const std::string base = "encoder.convs." + std::to_string(k);
    auto& conv = m->convs.emplace_back();
    ATTN_ASSIGN(conv.weight, r.flattened(base + ".weight", {out, in, 3, 3}));
    RowVector bias;
    ATTN_ASSIGN(bias, r.vector(base + ".bias", out));
    conv.bias = bias.transpose();
    in = out;
  }

  ATTN_ASSIGN(m->init_h_t, r.linear_t("decoder.init_h.weight", H, D));
  ATTN_ASSIGN(m->init_h_b, r.vector("decoder.init_h.bias", H));
  ATTN_ASSIGN(m->init_c_t, r.linear_t("decoder.init_c.weight", H, D));
  ATTN_ASSIGN(m->init_c_b, r.vector("decoder.init_c.bias", H));
  ATTN_ASSIGN(m->att_encoder_t, r.linear_t("decoder.attention.encoder.weight", A, D));
  ATTN_ASSIGN(m->att_encoder_b, r.vector("decoder.attention.encoder.bias", A));
  ATTN_ASSIGN(m->att_decoder_t, r.linear_t("decoder.attention.decoder.weight", A, H));
  ATTN_ASSIGN(m->att_full, r.matrix("decoder.attention.full.weight", 1, A));
  ATTN_ASSIGN(m->gate_w, r.matrix("decoder.gate.weight", 1, H));
  RowVector gate_b;
  ATTN_ASSIGN(gate_b, r.vector("decoder.gate.bias", 1));
  m->gate_b = gate_b(0);
  ATTN_ASSIGN(m->embedding, r.matrix("decoder.embedding.weight", V, E));
  ATTN_ASSIGN(m->lstm, bundled::read_lstm_cell(r, "decoder.lstm", E + D, H));
  ATTN_ASSIGN(m->deep_h_t, r.linear_t("decoder.deep_h.weight", E, H));
  ATTN_ASSIGN(m->deep_z_t, r.linear_t("decoder.deep_z.weight", E, D));
  ATTN_ASSIGN(m->out_t, r.linear_t("decoder.out.weight", V, E));
  ATTN_ASSIGN(m->out_b, r.vector("decoder.out.bias", V));

  if (auto w = r.unused_warning("a captioner")) m->warnings.push_back(std::move(*w));
  for (const std::string& note : r.nonfinite()) m->warnings.push_back(note);
  m->parameters = r.parameters();
  return m;
}

}  // namespace

CaptionerModel::CaptionerModel(std::unique_ptr<CaptionerModel::Impl> impl) : impl_(std::move(impl)) {}
CaptionerModel::~CaptionerModel() = default;
const CaptionerConfig& CaptionerModel::config() const { return impl_->config; }
std::vector<std::string> CaptionerModel::warnings() const { return impl_->warnings; }
std::int64_t CaptionerModel::parameters() const { return impl_->parameters; }

std::string CaptionerModel::description() const {
  const auto& c = impl_->config;
  const std::string g = std::to_string(c.grid());
  return bundled::describe(
      c.task, {c.attention == CaptionAttention::Soft ? "soft attention" : "hard attention", g + " x " + g + " grid"},
      impl_->parameters);
}

Result<std::shared_ptr<const CaptionerModel>> CaptionerModel::from_parts(CaptionerConfig config,
                                                                         const io::SafeTensors& weights) {
  return bundled::build_model<CaptionerModel>(
      weights, [&] { return build(std::move(config), weights); },
      [](std::unique_ptr<CaptionerModel::Impl> impl) { return new CaptionerModel(std::move(impl)); });
}

Result<std::shared_ptr<const CaptionerModel>> CaptionerModel::load(const fs::path& folder) {
  return bundled::load_folder<CaptionerModel, CaptionerConfig>(folder);
}

// ---------------------------------------------------------------------------------------------------------
// Run

std::shared_ptr<const AttentionMap> CaptionRun::alpha_map(std::size_t hypothesis) const {
  if (hypothesis >= hypotheses.size()) return nullptr;
  const CaptionHypothesis& h = hypotheses[hypothesis];
  auto map = std::make_shared<AttentionMap>();
  map->stage = Stage::Cross;
  map->name = "alpha";
  map->weights = h.alpha;
  map->row_axis = "words";
  map->col_axis = "grid cells";
  map->row_labels = h.words;
  map->col_labels.reserve(static_cast<std::size_t>(grid) * static_cast<std::size_t>(grid));
  for (int y = 0; y < grid; ++y) {
    for (int x = 0; x < grid; ++x) map->col_labels.push_back(std::to_string(y) + "," + std::to_string(x));
  }
  return map;
}

// The runner's buffers; CaptionerRunner::Scratch is this (a private name the helpers below cannot use).
struct CaptionBuffers {
  // Encoder: a layer's input planes [C, side^2] (bundled::conv3x3_relu_pool).
  Matrix planes;
  bundled::ConvScratch conv;
  Matrix features;  // [L, D]
  Matrix keys;      // W_a a_i + b [L, A]

  // Live hypotheses, one row each; *_next are the rows being gathered for the next step.
  Matrix h, c, h_next, c_next;  // [k, H]
  Matrix query;                 // [k, A]
  Matrix tanh_rows;             // [L, A]
  Matrix alpha;                 // [k, L]
  Vector beta;                  // [k]
  std::vector<int> location;    // [k] (hard)
  Matrix x;                     // [k, E + D]: [emb(y) ; z]
  Matrix gates;                 // [k, 4H]
  Matrix deep;                  // [k, E]
  Matrix logits;                // [k, V]

  // The search, and per node of its tree the alpha row, beta and location of the step that emitted it.
  bundled::BeamSearch search;
  std::vector<float> rows;         // nodes x L
  std::vector<float> log_softmax;  // nodes x V
  std::vector<float> betas;
  std::vector<int> locations;
  std::vector<int> path;
};

struct CaptionerRunner::Scratch : CaptionBuffers {};

CaptionerRunner::CaptionerRunner(std::shared_ptr<const CaptionerModel> model)
    : model_(std::move(model)), scratch_(std::make_unique<Scratch>()) {}
CaptionerRunner::~CaptionerRunner() = default;
CaptionerRunner::CaptionerRunner(CaptionerRunner&&) noexcept = default;
CaptionerRunner& CaptionerRunner::operator=(CaptionerRunner&&) noexcept = default;

namespace {

// The encoder on the normalised S x S input: features [L, D] and the attention's keys W_a a_i + b.
void encode(const CaptionerModel::Impl& m, CaptionBuffers& s, const Image& input) {
  const auto& c = m.config;
  Index side = c.image_size;
  s.planes.resize(3, side * side);
  for (int ch = 0; ch < 3; ++ch) {
    const float mean = c.mean[ch], inv = 1.0f / c.std[ch];
    s.planes.row(ch) = (Eigen::Map<const RowVector>(input.plane(ch), side * side).array() - mean) * inv;
  }
  for (const auto& conv : m.convs) {
    bundled::conv3x3_relu_pool(conv.weight, conv.bias, side, s.planes, s.conv);
    side /= 2;
  }
  s.features = s.planes.transpose();  // cell i = y * G + x is column i of the planes
  s.keys.resize(s.features.rows(), c.attention_size);
  bundled::multiply(s.keys, s.features, m.att_encoder_t);
  s.keys.rowwise() += m.att_encoder_b;
}

// h_0, c_0 from the mean annotation, in row 0 of s.h / s.c.
void initial_state(const CaptionerModel::Impl& m, CaptionBuffers& s) {
  const RowVector mean = s.features.colwise().mean();
  s.h.resize(1, m.config.hidden);
  s.c.resize(1, m.config.hidden);
  bundled::multiply(s.h, mean, m.init_h_t);
  s.h = (s.h + m.init_h_b).array().tanh().matrix();
  bundled::multiply(s.c, mean, m.init_c_t);
  s.c = (s.c + m.init_c_b).array().tanh().matrix();
}

// Buffers for up to k rows of hypotheses (h_0 and c_0 kept in row 0).
void reserve_rows(const CaptionerModel::Impl& m, CaptionBuffers& s, Index k) {
  const auto& c = m.config;
  const Index H = c.hidden, E = c.embedding_size, D = c.features(), L = s.features.rows();
  const RowVector h0 = s.h.row(0), c0 = s.c.row(0);
  s.h.resize(k, H);
  s.c.resize(k, H);
  s.h.row(0) = h0;
  s.c.row(0) = c0;
  s.h_next.resize(k, H);
  s.c_next.resize(k, H);
  s.query.resize(k, c.attention_size);
  s.alpha.resize(k, L);
  s.beta.resize(k);
  s.location.assign(static_cast<std::size_t>(k), -1);
  s.x.resize(k, E + D);
  s.gates.resize(k, 4 * H);
  s.deep.resize(k, E);
  s.logits.resize(k, static_cast<Index>(c.vocab.size()));
}

float sigmoid(float v) { return 1.0f / (1.0f + std::exp(-v)); }

// One decoder step (MODELS.md section 4) for the first B rows of s.h / s.c fed the ids `tokens`: leaves
// alpha, beta and (hard) the location in s.alpha / s.beta / s.location, the new state in s.h / s.c and
// the logits in s.logits.
void step(const CaptionerModel::Impl& m, CaptionBuffers& s, const std::vector<int>& tokens, Index B) {
  const auto& c = m.config;
  const Index E = c.embedding_size, D = c.features();
  auto h = s.h.topRows(B);
  auto cell = s.c.topRows(B);
  auto alpha = s.alpha.topRows(B);
  auto x = s.x.topRows(B);
  auto gates = s.gates.topRows(B);
  auto deep = s.deep.topRows(B);
  auto logits = s.logits.topRows(B);
  auto z = x.rightCols(D);

  // e_i = w . tanh(W_a a_i + b + U h_{t-1}); alpha = softmax(e); beta = sigmoid(g . h_{t-1} + b_g).
  bundled::multiply(s.query.topRows(B), h, m.att_decoder_t);
  bundled::additive_scores(s.query, s.keys, m.att_full, B, s.tanh_rows, s.alpha);
  softmax_rows_inplace(alpha);
  for (Index b = 0; b < B; ++b) s.beta(b) = sigmoid(h.row(b).dot(m.gate_w) + m.gate_b);

  // z = beta sum_i alpha_i a_i (soft) or beta a_s, s = argmax_i alpha_i, the lowest i on ties (hard).
  if (c.attention == CaptionAttention::Soft) {
    bundled::multiply(z, alpha, s.features);
  } else {
    for (Index b = 0; b < B; ++b) {
      Index best = 0;
      for (Index i = 1; i < alpha.cols(); ++i) {
        if (alpha(b, i) > alpha(b, best)) best = i;
      }
      s.location[static_cast<std::size_t>(b)] = static_cast<int>(best);
      z.row(b) = s.features.row(best);
    }
  }
  for (Index b = 0; b < B; ++b) {
    z.row(b) *= s.beta(b);
    x.row(b).head(E) = m.embedding.row(tokens[static_cast<std::size_t>(b)]);
  }

  // LSTMCell([emb(y) ; z], (h, c)), gates (i, f, g, o).
  bundled::multiply(gates, x, m.lstm.w_ih_t);
  bundled::multiply(gates, h, m.lstm.w_hh_t, true);
  gates.rowwise() += m.lstm.b;
  bundled::lstm_gates(gates, cell, h);

  // logits = W_o (emb(y) + L_h h_t + L_z z_t) + b_o.
  deep = x.leftCols(E);
  bundled::multiply(deep, h, m.deep_h_t, true);
  bundled::multiply(deep, z, m.deep_z_t, true);
  bundled::multiply(logits, deep, m.out_t);
  logits.rowwise() += m.out_b;
}
std::string join_words(const CaptionHypothesis& h) {
  std::string text;
  for (std::size_t i = 0; i < h.ids.size(); ++i) {
    if (h.ids[i] == bundled::kEndId) continue;
    if (!text.empty()) text += ' ';
    text += h.words[i];
  }
  return text;
}

// The words of h.ids, its text and whether it ended.
void label(const CaptionerConfig& c, CaptionHypothesis& h) {
  h.words.clear();
  for (const int id : h.ids) h.words.push_back(c.vocab[static_cast<std::size_t>(id)]);
  h.text = join_words(h);
  h.finished = !h.ids.empty() && h.ids.back() == bundled::kEndId;
}

// The checks and the encoder every run shares.
Result<void> start_run(const CaptionerModel::Impl& m, CaptionBuffers& s, const Image& input, CaptionRun& run) {
  const int S = m.config.image_size;
  if (input.channels != 3 || input.width != S || input.height != S || input.data.size() < 3 * input.plane_size()) {
    return fail(ErrorKind::Mismatch,
                "the model input must be " + std::to_string(S) + " x " + std::to_string(S) + " with 3 channels, got " +
                    std::to_string(input.width) + " x " + std::to_string(input.height) + " with " +
                    std::to_string(input.channels),
                "image");
  }
  encode(m, s, input);
  initial_state(m, s);
  run.grid = m.config.grid();
  run.features = s.features;
  return {};
}

// Greedy (k = 1) and beam search (bundled::BeamSearch), every node keeping its step's alpha, beta and location.
// Non-finite weights make non-finite alphas: the run says so (core/nonfinite.h).
void warn_nonfinite(CaptionRun& run) {
  std::int64_t bad = 0, total = 0;
  for (const CaptionHypothesis& h : run.hypotheses) {
    bad += detail::count_nonfinite(h.alpha);
    total += h.alpha.size();
  }
  if (auto w = detail::nonfinite_attention_warning(bad, total)) run.warnings.push_back(std::move(*w));
}

Result<CaptionRun> decode(const CaptionerModel::Impl& m, CaptionBuffers& s, const Image& input,
                          const CaptionOptions& options) {
  const auto& c = m.config;
  const int k = options.beam;
  const int max_words = options.max_words.value_or(c.max_caption_length);
  if (k < 1 || k > kMaxCaptionBeam) {
    return fail(ErrorKind::OutOfRange,
                "beam width " + std::to_string(k) + " is not from 1 to " + std::to_string(kMaxCaptionBeam));
  }
  if (max_words < 1 || max_words > kMaxCaptionLength) {
    return fail(ErrorKind::OutOfRange, "max_words is " + std::to_string(max_words) + "; it must be from 1 to " +
                                           std::to_string(kMaxCaptionLength));
  }
  // Every node of the search keeps its alpha row and its log-softmax row: bounded before any is kept.
  const std::int64_t cells = std::int64_t{c.grid()} * c.grid(),
                     kept = std::int64_t{k} * max_words * (cells + static_cast<std::int64_t>(c.vocab.size()));
  if (kept > kMaxKept) {
    return fail(ErrorKind::TooLarge, "beam " + std::to_string(k) + " over " + std::to_string(max_words) +
                                         " words would keep " + std::to_string(kept) +
                                         " values for this model; at most " + std::to_string(kMaxKept) +
                                         " are supported (a narrower beam or fewer words)");
  }
  CaptionRun run;
  ATTN_TRY(start_run(m, s, input, run));
  const Index L = s.features.rows(), V = static_cast<Index>(c.vocab.size());
  const bool hard = c.attention == CaptionAttention::Hard;
  reserve_rows(m, s, k);
  s.rows.clear();
  s.log_softmax.clear();
  s.betas.clear();
  s.locations.clear();
  s.search.start(k, max_words, bundled::kStartId, bundled::kEndId);

  for (bool more = true; more;) {
    const Index B = s.search.alive();
    step(m, s, s.search.tokens(), B);
    bundled::log_softmax_rows(s.logits.topRows(B));
    more = s.search.advance(s.logits.topRows(B));
    for (const auto& kept : s.search.kept()) {
      const float* row = s.alpha.row(kept.row).data();
      s.rows.insert(s.rows.end(), row, row + L);
      const float* logp = s.logits.row(kept.row).data();
      s.log_softmax.insert(s.log_softmax.end(), logp, logp + V);
      s.betas.push_back(s.beta(kept.row));
      s.locations.push_back(s.location[static_cast<std::size_t>(kept.row)]);
    }
    const auto& parents = s.search.parents();
    for (std::size_t r = 0; r < parents.size(); ++r) {
      s.h_next.row(static_cast<Index>(r)) = s.h.row(parents[r]);
      s.c_next.row(static_cast<Index>(r)) = s.c.row(parents[r]);
    }
    std::swap(s.h, s.h_next);
    std::swap(s.c, s.c_next);
  }

  for (std::size_t i = 0; i < s.search.results(); ++i) {
    s.search.path(i, s.path);
    CaptionHypothesis h;
    h.alpha.resize(static_cast<Index>(s.path.size()), L);
    h.log_softmax.resize(static_cast<Index>(s.path.size()), V);
    for (std::size_t j = 0; j < s.path.size(); ++j) {
      const auto n = static_cast<std::size_t>(s.path[j]);
      h.ids.push_back(s.search.token(s.path[j]));
      h.alpha.row(static_cast<Index>(j)) =
          Eigen::Map<const RowVector>(s.rows.data() + n * static_cast<std::size_t>(L), L);
      h.log_softmax.row(static_cast<Index>(j)) =
          Eigen::Map<const RowVector>(s.log_softmax.data() + n * static_cast<std::size_t>(V), V);
      h.beta.push_back(s.betas[n]);
      if (hard) h.location.push_back(s.locations[n]);
    }
    h.log_prob = static_cast<float>(s.search.log_prob(i));
    label(c, h);
    run.hypotheses.push_back(std::move(h));
  }
  warn_nonfinite(run);
  return run;
}

// Teacher forcing: step t is fed ids[t - 1] (<start> first) and its alpha row is the one predicting ids[t].
Result<CaptionRun> forced(const CaptionerModel::Impl& m, CaptionBuffers& s, const Image& input,
                          const std::vector<int>& ids) {
  const auto& c = m.config;
  if (ids.empty()) return fail(ErrorKind::OutOfRange, "nothing to score: no word ids", "word ids");
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || static_cast<std::size_t>(ids[i]) >= c.vocab.size()) {
      return fail(ErrorKind::OutOfRange,
                  "word id " + std::to_string(ids[i]) + " at position " + std::to_string(i) +
                      " is outside the vocabulary (0 to " + std::to_string(c.vocab.size() - 1) + ")",
                  "word ids");
    }
  }
  CaptionRun run;
  ATTN_TRY(start_run(m, s, input, run));
  const Index L = s.features.rows();
  reserve_rows(m, s, 1);
  CaptionHypothesis h;
  h.ids = ids;
  h.alpha.resize(static_cast<Index>(ids.size()), L);
  h.log_softmax.resize(static_cast<Index>(ids.size()), static_cast<Index>(c.vocab.size()));
  double log_prob = 0.0;
  std::vector<int> token{bundled::kStartId};
  for (std::size_t t = 0; t < ids.size(); ++t) {
    step(m, s, token, 1);
    bundled::log_softmax_rows(s.logits.topRows(1));
    log_prob += static_cast<double>(s.logits(0, ids[t]));
    h.alpha.row(static_cast<Index>(t)) = s.alpha.row(0);
    h.log_softmax.row(static_cast<Index>(t)) = s.logits.row(0);
    h.beta.push_back(s.beta(0));
    if (c.attention == CaptionAttention::Hard) h.location.push_back(s.location[0]);
    token[0] = ids[t];
  }
  h.log_prob = static_cast<float>(log_prob);
  label(c, h);
  run.hypotheses.push_back(std::move(h));
  warn_nonfinite(run);
  return run;
}

}  // namespace

Result<CaptionRun> CaptionerRunner::run(const Image& image, const CaptionOptions& options) {
  try {
    const int S = model_->config().image_size;
    if (image.empty() || image.data.size() < static_cast<std::size_t>(image.channels) * image.plane_size()) {
      return fail(ErrorKind::OutOfRange, "nothing to caption: the image is empty", "image");
    }
    const Image input = caption_input(image, S);
    auto run = decode(model_->impl(), *scratch_, input, options);
    if (run && (image.width != S || image.height != S)) {
      run->warnings.push_back("image resized from " + std::to_string(image.width) + " x " +
                              std::to_string(image.height) + " to " + std::to_string(S) + " x " + std::to_string(S));
    }
    return run;
  } catch (const std::bad_alloc&) {
    return fail(ErrorKind::TooLarge, "out of memory while captioning", "image");
  }
}

Result<CaptionRun> CaptionerRunner::run_resized(const Image& input, const CaptionOptions& options) {
  try {
    return decode(model_->impl(), *scratch_, input, options);
  } catch (const std::bad_alloc&) {
    return fail(ErrorKind::TooLarge, "out of memory while captioning", "image");
  }
}

Result<CaptionRun> CaptionerRunner::run_forced(const Image& input, const std::vector<int>& ids) {
  try {
    return forced(model_->impl(), *scratch_, input, ids);
  } catch (const std::bad_alloc&) {
    return fail(ErrorKind::TooLarge, "out of memory while captioning", "image");
  }
}

// ---------------------------------------------------------------------------------------------------------
// Input

Image caption_input(const Image& image, int size) {
  if (image.empty() || size < 1 || image.data.size() < static_cast<std::size_t>(image.channels) * image.plane_size()) {
    return {};
  }
  // 8-bit RGB (grey replicated, alpha dropped), as the reference resizes it.
  cv::Mat rgb(image.height, image.width, CV_8UC3);
  image_to_u8(image, rgb.data, static_cast<std::ptrdiff_t>(rgb.step), 3);
  // INTER_AREA when shrinking, INTER_LINEAR when enlarging; an image shrunk along one axis and enlarged
  // along the other is resized one axis at a time, each by its own rule.
  const auto rule = [](int from, int to) { return to < from ? cv::INTER_AREA : cv::INTER_LINEAR; };
  const bool wider = image.width < size, taller = image.height < size;
  const bool narrower = image.width > size, shorter = image.height > size;
  cv::Mat out;
  if ((wider && shorter) || (narrower && taller)) {
    cv::Mat across;
    cv::resize(rgb, across, cv::Size(size, image.height), 0, 0, rule(image.width, size));
    cv::resize(across, out, cv::Size(size, size), 0, 0, rule(image.height, size));
  } else if (image.width != size || image.height != size) {
    cv::resize(rgb, out, cv::Size(size, size), 0, 0, (narrower || shorter) ? cv::INTER_AREA : cv::INTER_LINEAR);
  } else {
    out = rgb;
  }
  return image_from_u8(out.data, size, size, 3, static_cast<std::ptrdiff_t>(out.step), 3);
}

}  // namespace attn::models
