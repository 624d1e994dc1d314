// The Show, Attend and Tell captioner (tools/train/MODELS.md section 4) on hand-built tiny models: the LSTM
// cell and the convolution layer by hand-worked numbers, beam search on a model whose greedy and beam
// captions differ, hard attention's argmax location, the alignment of run_forced's rows with the decoder's,
// the input resize, and every config and tensor error with the file, key and tensor it names.
#include "attn/io/safetensors.h"
#include "attn/models/captioner.h"
#include "attn/models/seq2seq.h"
#include "model_test_util.h"
#include "models/bundled/layers.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace attn::models {
// Named, not anonymous: the unity builds compile several test files as one.
namespace captioner_tests {

namespace fs = std::filesystem;
using nlohmann::json;
using Tensors = test::TensorStore;

// Word ids of the tiny vocabulary.
constexpr int kStart = 1, kEnd = 2, kA = 4, kB = 5;
const std::vector<std::string> kVocab = {"<pad>", "<start>", "<end>", "<unk>", "a", "b"};

struct Tiny {
  CaptionerConfig config;
  Tensors tensors;
};

// Every tensor of a captioner of `c`'s sizes, filled by the store's fill (zeros unless told).
void set_all(Tensors& t, const CaptionerConfig& c) {
  std::int64_t in = 3;
  for (std::size_t k = 0; k < c.channels.size(); ++k) {
    const std::int64_t out = c.channels[k];
    t.set("encoder.convs." + std::to_string(k) + ".weight", {out, in, 3, 3});
    t.set("encoder.convs." + std::to_string(k) + ".bias", {out});
    in = out;
  }
  const std::int64_t D = in, H = c.hidden, E = c.embedding_size, A = c.attention_size;
  const auto V = static_cast<std::int64_t>(c.vocab.size());
  for (const std::string which : {"init_h", "init_c"}) {
    t.set("decoder." + which + ".weight", {H, D});
    t.set("decoder." + which + ".bias", {H});
  }
  t.set("decoder.attention.encoder.weight", {A, D});
  t.set("decoder.attention.encoder.bias", {A});
  t.set("decoder.attention.decoder.weight", {A, H});
  t.set("decoder.attention.full.weight", {1, A});
  t.set("decoder.gate.weight", {1, H});
  t.set("decoder.gate.bias", {1});
  t.set("decoder.embedding.weight", {V, E});
  t.set("decoder.lstm.weight_ih", {4 * H, E + D});
  t.set("decoder.lstm.weight_hh", {4 * H, H});
  t.set("decoder.lstm.bias_ih", {4 * H});
  t.set("decoder.lstm.bias_hh", {4 * H});
  t.set("decoder.deep_h.weight", {E, H});
  t.set("decoder.deep_z.weight", {E, D});
  t.set("decoder.out.weight", {V, E});
  t.set("decoder.out.bias", {V});
}

CaptionerConfig tiny_config(std::vector<int> channels = {2}, int image_size = 4) {
  CaptionerConfig c;
  c.task = "test";
  c.image_size = image_size;
  c.channels = std::move(channels);
  c.vocab = kVocab;
  c.embedding_size = 6;
  c.hidden = 1;
  c.attention_size = 1;
  c.max_caption_length = 5;
  return c;
}

// A captioner that is a first-order Markov chain over the words: the embedding is one-hot (E = V), the
// deep output sees only emb(y_{t-1}), so logits(y_t) = log P(y_t | y_{t-1}) from `transitions`; every
// other weight is 0 (features 0, alpha uniform over the 2 x 2 grid, beta = sigmoid(0) = 1/2).
//   from <start>: a 0.6, b 0.4     from a: <end> 0.4, a 0.31, b 0.29     from b: <end> 0.99, a, b 0.005
// Greedy takes a (0.6), then <end> (0.4): "a" with 0.24. A beam of 2 also keeps b and finds "b" with 0.396.
Tiny markov_chain(std::map<int, std::map<int, double>> transitions = {}) {
  if (transitions.empty()) {
    transitions = {{kStart, {{kA, 0.6}, {kB, 0.4}}},
                   {kA, {{kEnd, 0.4}, {kA, 0.31}, {kB, 0.29}}},
                   {kB, {{kEnd, 0.99}, {kA, 0.005}, {kB, 0.005}}}};
  }
  Tiny m{tiny_config(), Tensors()};
  set_all(m.tensors, m.config);
  std::vector<float> eye(36, 0.0f), out(36, 0.0f);
  for (int i = 0; i < 6; ++i) eye[static_cast<std::size_t>(i * 6 + i)] = 1.0f;
  for (int y = 0; y < 6; ++y) {
    for (int v = 0; v < 6; ++v) {
      const auto from = transitions.find(y);
      const double p = from != transitions.end() && from->second.count(v) ? from->second.at(v) : 0.0;
      out[static_cast<std::size_t>(v * 6 + y)] = p > 0.0 ? static_cast<float>(std::log(p)) : -40.0f;
    }
  }
  m.tensors.set("decoder.embedding.weight", {6, 6}, eye);
  m.tensors.set("decoder.out.weight", {6, 6}, out);
  return m;
}

std::optional<CaptionerRunner> session_of(const Tiny& m) {
  auto model = test::load_model<CaptionerModel>(m.config, m.tensors);
  if (!model) return std::nullopt;
  return CaptionerRunner(model);
}

std::string error_of(const Tiny& m) { return test::load_error<CaptionerModel>(m.config, m.tensors); }

Image grey_input(int side, float value = 0.5f) { return Image(side, side, 3, value); }

CaptionOptions beam_width(int k) {
  CaptionOptions o;
  o.beam = k;
  return o;
}

// A config.json for parse(), with `patch` merged over caption-soft's keys.
std::string config_json(const json& patch = json::object()) {
  json j = {{"architectures", {"AttnScopeCaptioner"}},
            {"task", "synthetic scene captions"},
            {"attention", "soft"},
            {"image_size", 128},
            {"mean", {0.5, 0.5, 0.5}},
            {"std", {0.25, 0.25, 0.25}},
            {"channels", {16, 32, 64, 128}},
            {"vocab", kVocab},
            {"embedding_size", 64},
            {"hidden", 128},
            {"attention_size", 64},
            {"max_caption_length", 20}};
  return test::patched_json(std::move(j), patch);
}

// ---------------------------------------------------------------------------------------------------------
// The cells

TEST(CaptionerLstm, OneStepMatchesHandWorkedNumbers) {
  // H = 1, pre-activations in torch's order (i, f, g, o) = (0.5, -1, 2, 0.3), c = 0.5:
  //   i = sigma(0.5) = 0.6224593   f = sigma(-1) = 0.2689414   g = tanh(2) = 0.9640276   o = sigma(0.3) = 0.5744425
  //   c' = f c + i g = 0.7345387       h' = o tanh(c') = 0.3595058
  Matrix gates(1, 4);
  gates << 0.5f, -1.0f, 2.0f, 0.3f;
  Matrix c(1, 1), h(1, 1);
  c << 0.5f;
  h << 9.0f;  // overwritten: the new h does not depend on the old one except through the gates
  bundled::lstm_gates(gates, c, h);
  EXPECT_NEAR(c(0, 0), 0.7345387f, 1e-6f);
  EXPECT_NEAR(h(0, 0), 0.3595058f, 1e-6f);
}

TEST(CaptionerLstm, GateQuartersAreIFGO) {
  // Two rows, H = 2: a huge f keeps c, a huge negative i drops g; o = 0 halves tanh(c).
  Matrix gates(2, 8);
  gates << -40, -40, 40, 40, 5, 5, 0, 0,  // i = 0, f = 1: c' = c, h' = tanh(c) / 2
      40, 40, -40, -40, 1, -1, 40, 40;    // i = 1, f = 0: c' = tanh(g), h' = tanh(c')
  Matrix c(2, 2), h(2, 2);
  c << 0.3f, -0.7f, 5.0f, 5.0f;
  bundled::lstm_gates(gates, c, h);
  EXPECT_NEAR(c(0, 0), 0.3f, 1e-6f);
  EXPECT_NEAR(c(0, 1), -0.7f, 1e-6f);
  EXPECT_NEAR(h(0, 0), std::tanh(0.3f) / 2, 1e-6f);
  EXPECT_NEAR(c(1, 0), std::tanh(1.0f), 1e-6f);
  EXPECT_NEAR(c(1, 1), std::tanh(-1.0f), 1e-6f);
  EXPECT_NEAR(h(1, 1), std::tanh(std::tanh(-1.0f)), 1e-6f);
}

TEST(CaptionerConv, ConvReluPoolMatchesHandWorkedNumbers) {
  // One 4 x 4 input plane 1 .. 16 (row-major), two output channels:
  //   channel 0: every tap 1 (the 3 x 3 sums with zero padding), bias -60;
  //     sums  14 24 30 22 / 33 54 63 45 / 57 90 99 69 / 46 72 78 54  -> 2 x 2 maxima 54 63 / 90 99
  //     -> ReLU(max - 60) = 0 3 / 30 39
  //   channel 1: only the top-left tap (ky = kx = 0) = 1: out(y, x) = in(y - 1, x - 1), a cross-correlation
  //     as torch's Conv2d (no kernel flip): 0 0 0 0 / 0 1 2 3 / 0 5 6 7 / 0 9 10 11 -> maxima 1 3 / 9 11
  Matrix planes(1, 16);
  for (int i = 0; i < 16; ++i) planes(0, i) = static_cast<float>(i + 1);
  Matrix weight = Matrix::Zero(2, 9);
  weight.row(0).setOnes();
  weight(1, 0) = 1.0f;
  Vector bias(2);
  bias << -60.0f, 0.0f;
  bundled::ConvScratch scratch;
  bundled::conv3x3_relu_pool(weight, bias, 4, planes, scratch);
  ASSERT_EQ(planes.rows(), 2);
  ASSERT_EQ(planes.cols(), 4);
  Matrix want(2, 4);
  want << 0, 3, 30, 39, 1, 3, 9, 11;
  EXPECT_TRUE(planes.isApprox(want)) << planes;
}

TEST(CaptionerConv, InputChannelsAreTheOuterIndexOfTheWeight) {
  // Two input planes (constant 1 and constant 10) on a 2 x 2 side; weight [1, 2, 3, 3] flattened: the centre
  // tap of input channel 1 (index 9 + 4) alone. Every output is 10; one pooled cell.
  Matrix planes(2, 4);
  planes.row(0).setConstant(1.0f);
  planes.row(1).setConstant(10.0f);
  Matrix weight = Matrix::Zero(1, 18);
  weight(0, 9 + 4) = 1.0f;
  Vector bias = Vector::Zero(1);
  bundled::ConvScratch scratch;
  bundled::conv3x3_relu_pool(weight, bias, 2, planes, scratch);
  ASSERT_EQ(planes.size(), 1);
  EXPECT_EQ(planes(0, 0), 10.0f);
}

// ---------------------------------------------------------------------------------------------------------
// Decoding

TEST(CaptionerDecode, GreedyTakesTheLocallyBestWord) {
  auto session = session_of(markov_chain());
  ASSERT_TRUE(session);
  auto run = session->run_resized(grey_input(4));
  ASSERT_TRUE(run.has_value()) << run.error().message();
  EXPECT_EQ(run->grid, 2);
  EXPECT_EQ(run->features.rows(), 4);
  EXPECT_EQ(run->features.cols(), 2);
  ASSERT_EQ(run->hypotheses.size(), 1u);
  const auto& h = run->hypotheses[0];
  EXPECT_EQ(h.ids, (std::vector<int>{kA, kEnd}));
  EXPECT_EQ(h.words, (Labels{"a", "<end>"}));
  EXPECT_EQ(h.text, "a");
  EXPECT_TRUE(h.finished);
  EXPECT_NEAR(h.log_prob, std::log(0.6) + std::log(0.4), 1e-5);
  // Every attention weight is 0: alpha is uniform over the 4 cells, beta = sigmoid(0).
  ASSERT_EQ(h.alpha.rows(), 2);
  ASSERT_EQ(h.alpha.cols(), 4);
  EXPECT_TRUE(h.alpha.isApproxToConstant(0.25f, 1e-6f));
  EXPECT_EQ(h.beta, (std::vector<float>{0.5f, 0.5f}));
  EXPECT_TRUE(h.location.empty());
  ASSERT_EQ(h.log_softmax.rows(), 2);
  ASSERT_EQ(h.log_softmax.cols(), 6);
  EXPECT_NEAR(h.log_softmax(0, kB), std::log(0.4), 1e-5);
  EXPECT_NEAR(h.log_softmax(1, kEnd), std::log(0.4), 1e-5);
}

TEST(CaptionerDecode, BeamFindsTheCaptionGreedyMisses) {
  auto session = session_of(markov_chain());
  ASSERT_TRUE(session);
  auto run = session->run_resized(grey_input(4), beam_width(2));
  ASSERT_TRUE(run.has_value()) << run.error().message();
  ASSERT_EQ(run->hypotheses.size(), 2u);
  EXPECT_EQ(run->hypotheses[0].ids, (std::vector<int>{kB, kEnd}));
  EXPECT_EQ(run->hypotheses[0].text, "b");
  EXPECT_NEAR(run->hypotheses[0].log_prob, std::log(0.4) + std::log(0.99), 1e-5);
  EXPECT_EQ(run->hypotheses[1].ids, (std::vector<int>{kA, kEnd}));
  for (const auto& h : run->hypotheses) {
    EXPECT_EQ(h.alpha.rows(), static_cast<Index>(h.ids.size()));
    EXPECT_EQ(h.beta.size(), h.ids.size());
    EXPECT_EQ(h.log_softmax.rows(), static_cast<Index>(h.ids.size()));
  }
  // Width 3 keeps "a a" alive after step 2 and ends it as aa<end> (0.0744), which beats every other
  // continuation.
  auto three = session->run_resized(grey_input(4), beam_width(3));
  ASSERT_TRUE(three);
  ASSERT_EQ(three->hypotheses.size(), 3u);
  EXPECT_EQ(three->hypotheses[2].text, "a a");
  EXPECT_NEAR(three->hypotheses[2].log_prob, std::log(0.6) + std::log(0.31) + std::log(0.4), 1e-5);
}

TEST(CaptionerDecode, TiesGoToTheLowerIdAndWordsStopAtTheLimit) {
  auto tie = session_of(markov_chain({{kStart, {{kA, 0.5}, {kB, 0.5}}}, {kA, {{kEnd, 1.0}}}, {kB, {{kEnd, 1.0}}}}));
  ASSERT_TRUE(tie);
  auto greedy = tie->run_resized(grey_input(4));
  ASSERT_TRUE(greedy);
  EXPECT_EQ(greedy->hypotheses[0].text, "a");

  auto loop = session_of(markov_chain({{kStart, {{kA, 1.0}}}, {kA, {{kA, 0.9}, {kEnd, 0.1}}}}));
  ASSERT_TRUE(loop);
  auto run = loop->run_resized(grey_input(4));
  ASSERT_TRUE(run);
  EXPECT_EQ(run->hypotheses[0].ids, std::vector<int>(5, kA));  // max_caption_length 5
  EXPECT_FALSE(run->hypotheses[0].finished);
  EXPECT_EQ(run->hypotheses[0].text, "a a a a a");
  CaptionOptions shorter;
  shorter.max_words = 2;
  auto cut = loop->run_resized(grey_input(4), shorter);
  ASSERT_TRUE(cut);
  EXPECT_EQ(cut->hypotheses[0].ids, (std::vector<int>{kA, kA}));
}

TEST(CaptionerDecode, RefusesBadOptionsAndInputs) {
  auto session = session_of(markov_chain());
  ASSERT_TRUE(session);
  EXPECT_FALSE(session->run_resized(grey_input(4), beam_width(0)).has_value());
  EXPECT_FALSE(session->run_resized(grey_input(4), beam_width(65)).has_value());
  CaptionOptions none;
  none.max_words = 0;
  EXPECT_FALSE(session->run_resized(grey_input(4), none).has_value());
  CaptionOptions long_words;
  long_words.max_words = 1025;
  EXPECT_FALSE(session->run_resized(grey_input(4), long_words).has_value());
  auto wrong = session->run_resized(grey_input(8));
  ASSERT_FALSE(wrong.has_value());
  EXPECT_NE(wrong.error().message().find("must be 4 x 4 with 3 channels, got 8 x 8"), std::string::npos)
      << wrong.error().message();
  EXPECT_FALSE(session->run_resized(Image(4, 4, 1)).has_value());
  EXPECT_FALSE(session->run(Image()).has_value());
}

TEST(CaptionerDecode, ASearchThatWouldKeepTooMuchIsRefusedBeforeItStarts) {
  // Every node keeps its alpha row and log-softmax row: beam 64 x 1024 words x (4 cells + 2100 words) is
  // 137.9 M values, above the 134.2 M bound.
  Tiny big{tiny_config({1}), Tensors()};
  for (int i = 0; i < 2094; ++i) big.config.vocab.push_back("w" + std::to_string(i));
  big.config.embedding_size = 1;
  set_all(big.tensors, big.config);
  auto session = session_of(big);
  ASSERT_TRUE(session);
  CaptionOptions options;
  options.beam = 64;
  options.max_words = 1024;
  auto run = session->run_resized(grey_input(4), options);
  ASSERT_FALSE(run.has_value());
  EXPECT_NE(run.error().message().find("beam 64 over 1024 words would keep 137887744 values"), std::string::npos)
      << run.error().message();
}

// The spotlight model: one conv channel copying the red plane's centre tap, so the 2 x 2 cells' features
// are the maxima of their red pixels: 0.1, 0.9, 0.4, 0.9. e_i = tanh(a_i) (the attention's encoder weight 1,
// its full weight 1, no dependence on h), beta = sigmoid(0.3).
Tiny spotlight(CaptionAttention attention) {
  Tiny m{tiny_config({1}), Tensors()};
  m.config.attention = attention;
  m.config.mean[0] = m.config.mean[1] = m.config.mean[2] = 0.0f;
  set_all(m.tensors, m.config);
  std::vector<float> conv(27, 0.0f);
  conv[4] = 1.0f;  // [out 0, in 0 (red), ky 1, kx 1]: the centre tap
  m.tensors.set("encoder.convs.0.weight", {1, 3, 3, 3}, conv);
  m.tensors.set("decoder.attention.encoder.weight", {1, 1}, {1.0f});
  m.tensors.set("decoder.attention.full.weight", {1, 1}, {1.0f});
  m.tensors.set("decoder.gate.bias", {1}, {0.3f});
  // One-hot embedding and an output layer that says "a b <end>".
  std::vector<float> eye(36, 0.0f), out(36, -40.0f);
  for (int i = 0; i < 6; ++i) eye[static_cast<std::size_t>(i * 6 + i)] = 1.0f;
  for (const auto& [from, to] : {std::pair{kStart, kA}, std::pair{kA, kB}, std::pair{kB, kEnd}}) {
    out[static_cast<std::size_t>(to * 6 + from)] = 0.0f;
  }
  m.tensors.set("decoder.embedding.weight", {6, 6}, eye);
  m.tensors.set("decoder.out.weight", {6, 6}, out);
  return m;
}

Image spotlight_input() {
  Image img(4, 4, 3, 0.0f);
  // Red plane: cell (0, 0) max 0.1, (0, 1) 0.9, (1, 0) 0.4, (1, 1) 0.9 (a tie with cell 1).
  img.at(0, 0, 1) = 0.1f;
  img.at(0, 1, 2) = 0.9f;
  img.at(0, 3, 0) = 0.4f;
  img.at(0, 2, 3) = 0.9f;
  return img;
}

TEST(CaptionerAttention, SoftAlphaIsTheSoftmaxOfTheScoresAndBetaTheGate) {
  auto session = session_of(spotlight(CaptionAttention::Soft));
  ASSERT_TRUE(session);
  auto run = session->run_resized(spotlight_input());
  ASSERT_TRUE(run.has_value()) << run.error().message();
  Matrix want_features(4, 1);
  want_features << 0.1f, 0.9f, 0.4f, 0.9f;
  EXPECT_TRUE(run->features.isApprox(want_features)) << run->features;
  const auto& h = run->hypotheses[0];
  EXPECT_EQ(h.ids, (std::vector<int>{kA, kB, kEnd}));
  double z = 0.0;
  for (const float a : {0.1f, 0.9f, 0.4f, 0.9f}) z += std::exp(std::tanh(a));
  for (Index t = 0; t < h.alpha.rows(); ++t) {
    EXPECT_NEAR(h.alpha(t, 0), std::exp(std::tanh(0.1)) / z, 1e-6);
    EXPECT_NEAR(h.alpha(t, 1), std::exp(std::tanh(0.9)) / z, 1e-6);
    EXPECT_NEAR(h.alpha(t, 2), std::exp(std::tanh(0.4)) / z, 1e-6);
    EXPECT_NEAR(h.beta[static_cast<std::size_t>(t)], 1.0 / (1.0 + std::exp(-0.3)), 1e-6);
  }
  EXPECT_TRUE(h.location.empty());
}

TEST(CaptionerAttention, HardLocationIsTheArgmaxLowestCellOnTies) {
  auto session = session_of(spotlight(CaptionAttention::Hard));
  ASSERT_TRUE(session);
  auto run = session->run_resized(spotlight_input(), beam_width(2));
  ASSERT_TRUE(run.has_value()) << run.error().message();
  for (const auto& h : run->hypotheses) {
    ASSERT_EQ(h.location.size(), h.ids.size());
    // Cells 1 and 3 tie at the maximum: the lower one.
    for (const int s : h.location) EXPECT_EQ(s, 1);
  }
  // Move the red maximum to cell 2 alone: the location follows.
  Image moved = spotlight_input();
  moved.at(0, 1, 2) = 0.2f;
  moved.at(0, 2, 3) = 0.2f;
  moved.at(0, 3, 1) = 0.95f;
  auto there = session->run_forced(moved, {kA, kEnd});
  ASSERT_TRUE(there);
  EXPECT_EQ(there->hypotheses[0].location, (std::vector<int>{2, 2}));
}

// A model with every weight non-zero (a fixed pseudo-random fill), so that alpha and beta change from step
// to step and with the words fed.
float wavy(const std::string& name, std::size_t i) {
  return 0.6f * std::sin(1.7f * static_cast<float>(i) + 0.3f * static_cast<float>(name.size()));
}

Tiny busy(CaptionAttention attention) {
  Tiny m{tiny_config({3, 4}, 8), Tensors("busy.safetensors", wavy)};
  m.config.attention = attention;
  m.config.vocab = {"<pad>", "<start>", "<end>", "<unk>", "x", "y", "z"};
  m.config.embedding_size = 3;
  m.config.hidden = 4;
  m.config.attention_size = 3;
  m.config.max_caption_length = 6;
  set_all(m.tensors, m.config);
  return m;
}

Image busy_input() {
  Image img(8, 8, 3);
  for (std::size_t i = 0; i < img.data.size(); ++i) img.data[i] = 0.5f + 0.5f * std::sin(0.37f * static_cast<float>(i));
  return img;
}

TEST(CaptionerForced, RowsAlignWithTheDecodersSteps) {
  for (const auto attention : {CaptionAttention::Soft, CaptionAttention::Hard}) {
    SCOPED_TRACE(attention == CaptionAttention::Soft ? "soft" : "hard");
    auto session = session_of(busy(attention));
    ASSERT_TRUE(session);
    auto run = session->run_resized(busy_input(), beam_width(3));
    ASSERT_TRUE(run.has_value()) << run.error().message();
    ASSERT_FALSE(run->hypotheses.empty());
    for (const auto& h : run->hypotheses) {
      // Teacher-forcing a hypothesis' own ids repeats its steps: row t is the step that predicted ids[t].
      auto forced = session->run_forced(busy_input(), h.ids);
      ASSERT_TRUE(forced.has_value()) << forced.error().message();
      ASSERT_EQ(forced->hypotheses.size(), 1u);
      const auto& f = forced->hypotheses[0];
      EXPECT_EQ(f.ids, h.ids);
      EXPECT_EQ(f.words, h.words);
      EXPECT_EQ(f.finished, h.finished);
      EXPECT_NEAR(f.log_prob, h.log_prob, 1e-5);
      EXPECT_TRUE(f.alpha.isApprox(h.alpha, 1e-5f));
      EXPECT_TRUE(f.log_softmax.isApprox(h.log_softmax, 1e-5f));
      ASSERT_EQ(f.beta.size(), h.beta.size());
      for (std::size_t t = 0; t < f.beta.size(); ++t) EXPECT_NEAR(f.beta[t], h.beta[t], 1e-6f);
      EXPECT_EQ(f.location, h.location);
      // The log-probability is the sum of each row's entry for its id.
      double sum = 0.0;
      for (std::size_t t = 0; t < h.ids.size(); ++t) sum += f.log_softmax(static_cast<Index>(t), h.ids[t]);
      EXPECT_NEAR(sum, h.log_prob, 1e-5);
    }
    // The steps do differ (else the alignment would not be tested): alpha changes with the words fed.
    auto words = session->run_forced(busy_input(), {4, 5, 6, kEnd});
    ASSERT_TRUE(words);
    const Matrix& alpha = words->hypotheses[0].alpha;
    EXPECT_FALSE(alpha.row(1).isApprox(alpha.row(2), 1e-4f));
    EXPECT_FALSE(alpha.row(2).isApprox(alpha.row(3), 1e-4f));
  }
}

TEST(CaptionerForced, ScoresTheGivenWordsOfTheChain) {
  auto session = session_of(markov_chain());
  ASSERT_TRUE(session);
  // b, a, <end>: row t is the step fed ids[t - 1] (<start> first), so its log-probability is the chain's.
  auto run = session->run_forced(grey_input(4), {kB, kA, kEnd});
  ASSERT_TRUE(run.has_value()) << run.error().message();
  const auto& h = run->hypotheses[0];
  EXPECT_EQ(h.words, (Labels{"b", "a", "<end>"}));
  EXPECT_EQ(h.text, "b a");
  EXPECT_TRUE(h.finished);
  EXPECT_NEAR(h.log_softmax(0, kB), std::log(0.4), 1e-5);
  EXPECT_NEAR(h.log_softmax(1, kA), std::log(0.005), 1e-5);
  EXPECT_NEAR(h.log_softmax(2, kEnd), std::log(0.4), 1e-5);
  EXPECT_NEAR(h.log_prob, std::log(0.4) + std::log(0.005) + std::log(0.4), 1e-4);
  EXPECT_EQ(h.alpha.rows(), 3);
  auto unfinished = session->run_forced(grey_input(4), {kA});
  ASSERT_TRUE(unfinished);
  EXPECT_FALSE(unfinished->hypotheses[0].finished);
  // Ids outside the vocabulary and no ids at all are errors.
  auto bad = session->run_forced(grey_input(4), {kA, 6});
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("word id 6 at position 1"), std::string::npos) << bad.error().message();
  EXPECT_FALSE(session->run_forced(grey_input(4), {}).has_value());
}

TEST(CaptionerRun, AnyImageIsResizedWithAWarning) {
  auto session = session_of(markov_chain());
  ASSERT_TRUE(session);
  auto run = session->run(Image(10, 6, 1, 0.3f));
  ASSERT_TRUE(run.has_value()) << run.error().message();
  ASSERT_EQ(run->warnings.size(), 1u);
  EXPECT_EQ(run->warnings[0], "image resized from 10 x 6 to 4 x 4");
  auto same = session->run(Image(4, 4, 4, 0.3f));
  ASSERT_TRUE(same.has_value()) << same.error().message();
  EXPECT_TRUE(same->warnings.empty());
}

TEST(CaptionerRun, AlphaMapNamesWordsAndCells) {
  auto session = session_of(markov_chain());
  ASSERT_TRUE(session);
  auto run = session->run_resized(grey_input(4), beam_width(2));
  ASSERT_TRUE(run);
  const auto map = run->alpha_map();
  ASSERT_TRUE(map);
  EXPECT_EQ(map->stage, Stage::Cross);
  EXPECT_EQ(map->row_labels, (Labels{"b", "<end>"}));
  EXPECT_EQ(map->col_labels, (Labels{"0,0", "0,1", "1,0", "1,1"}));
  EXPECT_EQ(map->weights.rows(), 2);
  EXPECT_EQ(run->alpha_map(1)->row_labels, (Labels{"a", "<end>"}));
  EXPECT_EQ(run->alpha_map(2), nullptr);
}

// ---------------------------------------------------------------------------------------------------------
// The input

TEST(CaptionInput, ShrinksByAreaAndEnlargesBilinearly) {
  // 8 x 8 -> 4 x 4 averages 2 x 2 blocks (INTER_AREA): a checker of 0 and 200 becomes flat 100.
  Image checker(8, 8, 3);
  for (int c = 0; c < 3; ++c) {
    for (int y = 0; y < 8; ++y) {
      for (int x = 0; x < 8; ++x) checker.at(c, y, x) = (x + y) % 2 ? 200.0f / 255.0f : 0.0f;
    }
  }
  const Image small = caption_input(checker, 4);
  ASSERT_EQ(small.width, 4);
  ASSERT_EQ(small.channels, 3);
  for (const float v : small.data) EXPECT_NEAR(v, 100.0f / 255.0f, 1e-6f);
  // 2 x 1 -> 4 x 4 (INTER_LINEAR, pixel centres): a row 0, 200 becomes 0, 50, 150, 200.
  Image pair(2, 1, 1);
  pair.at(0, 0, 1) = 200.0f / 255.0f;
  const Image wide = caption_input(pair, 4);
  ASSERT_EQ(wide.channels, 3);  // grey replicated
  for (int c = 0; c < 3; ++c) {
    for (int y = 0; y < 4; ++y) {
      EXPECT_NEAR(wide.at(c, y, 0) * 255.0f, 0.0f, 1e-3f);
      EXPECT_NEAR(wide.at(c, y, 1) * 255.0f, 50.0f, 1e-3f);
      EXPECT_NEAR(wide.at(c, y, 2) * 255.0f, 150.0f, 1e-3f);
      EXPECT_NEAR(wide.at(c, y, 3) * 255.0f, 200.0f, 1e-3f);
    }
  }
}

TEST(CaptionInput, MixedAxesAlphaDroppedAndEightBitValues) {
  // 8 wide, 1 tall -> 4 x 4: the width shrinks by area (pairs averaged), the height is repeated.
  Image strip(8, 1, 4, 1.0f);  // RGBA: alpha dropped
  for (int x = 0; x < 8; ++x) strip.at(0, 0, x) = x < 4 ? 0.0f : 1.0f;
  const Image out = caption_input(strip, 4);
  ASSERT_EQ(out.channels, 3);
  for (int y = 0; y < 4; ++y) {
    EXPECT_EQ(out.at(0, y, 0), 0.0f);
    EXPECT_EQ(out.at(0, y, 3), 1.0f);
    EXPECT_EQ(out.at(1, y, 2), 1.0f);
  }
  // Values go through 8 bits: 0.3 comes back as round(76.5) / 255.
  const Image same = caption_input(Image(4, 4, 3, 0.3f), 4);
  EXPECT_EQ(same.at(0, 0, 0), 77.0f / 255.0f);
  EXPECT_TRUE(caption_input(Image(), 4).empty());
  EXPECT_TRUE(caption_input(Image(4, 4, 3), 0).empty());
}

// ---------------------------------------------------------------------------------------------------------
// Model information

TEST(CaptionerModelInfo, DescriptionGridAndParameters) {
  auto model = test::load_model<CaptionerModel>(markov_chain().config, markov_chain().tensors);
  ASSERT_TRUE(model);
  // conv 2*3*9 + 2, init_h and init_c 2 * (2 + 1), attention (2 + 1) + 1 + 1, gate 1 + 1, embedding 36,
  // LSTM 4*8 + 4*1 + 4 + 4, deep 6 + 12, out 36 + 6: 209.
  EXPECT_EQ(model->parameters(), 209);
  EXPECT_EQ(model->description(), "test \xC2\xB7 soft attention \xC2\xB7 2 x 2 grid \xC2\xB7 209 parameters");
  EXPECT_TRUE(model->warnings().empty());
  EXPECT_EQ(model->config().grid(), 2);
  EXPECT_EQ(model->config().features(), 2);
}

// ---------------------------------------------------------------------------------------------------------
// Errors: config

TEST(CaptionerConfigParse, ReadsAValidConfig) {
  auto c = CaptionerConfig::parse(config_json({{"attention", "hard"}, {"mean", 0.4}}), "cfg.json");
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_EQ(c->attention, CaptionAttention::Hard);
  EXPECT_EQ(c->image_size, 128);
  EXPECT_EQ(c->grid(), 8);
  EXPECT_EQ(c->features(), 128);
  EXPECT_EQ(c->channels, (std::vector<int>{16, 32, 64, 128}));
  EXPECT_EQ(c->mean[2], 0.4f);  // one number serves the three channels
  EXPECT_EQ(c->std[1], 0.25f);
  EXPECT_EQ(c->vocab.size(), 6u);
  EXPECT_EQ(c->max_caption_length, 20);
  EXPECT_EQ(c->task, "synthetic scene captions");
}

using test::ConfigErrorCase;

class CaptionerConfigError : public ::testing::TestWithParam<ConfigErrorCase> {};

TEST_P(CaptionerConfigError, NamesTheFileKeyAndLine) {
  test::expect_config_error<CaptionerConfig>(config_json(GetParam().patch), GetParam());
}

INSTANTIATE_TEST_SUITE_P(
    Cases, CaptionerConfigError,
    ::testing::Values(
        ConfigErrorCase{
            "wrong_architecture", {{"architectures", {"AttnScopeSeq2Seq"}}}, "architectures", "AttnScopeCaptioner"},
        ConfigErrorCase{"missing_attention", {{"attention", nullptr}}, "attention", "is missing"},
        ConfigErrorCase{"unknown_attention", {{"attention", "stochastic"}}, "attention", "is not supported"},
        ConfigErrorCase{"attention_not_string", {{"attention", 1}}, "attention", "must be a string"},
        ConfigErrorCase{"image_size_indivisible", {{"image_size", 100}}, "image_size", "not divisible by 2^4 = 16"},
        ConfigErrorCase{"image_size_zero", {{"image_size", 0}}, "image_size", "must be from 1"},
        ConfigErrorCase{"image_size_huge", {{"image_size", 100000}}, "image_size", "from 1 to 4096"},
        ConfigErrorCase{
            "layer_too_big", {{"image_size", 4096}, {"channels", {4096}}}, "image_size", "layer 0 would hold"},
        ConfigErrorCase{
            "grid_too_big", {{"image_size", 1024}, {"channels", {4}}}, "image_size", "gives a 512 x 512 grid"},
        ConfigErrorCase{"grid_times_attention",
                        {{"image_size", 1024}, {"channels", {4, 4, 4, 4}}, {"attention_size", 16384}},
                        "attention_size",
                        "attention_size 16384 times the 4096 grid cells"},
        ConfigErrorCase{"missing_image_size", {{"image_size", nullptr}}, "image_size", "is missing"},
        ConfigErrorCase{"channels_empty", {{"channels", json::array()}}, "channels", "non-empty list"},
        ConfigErrorCase{"channels_number", {{"channels", 16}}, "channels", "non-empty list"},
        ConfigErrorCase{"channels_zero", {{"channels", {16, 0}}}, "channels", "every width must be"},
        ConfigErrorCase{"channels_fraction", {{"channels", {16, 2.5}}}, "channels", "every width must be"},
        ConfigErrorCase{
            "channels_too_many", {{"channels", {1, 1, 1, 1, 1, 1, 1, 1, 1}}}, "channels", "convolution layers"},
        ConfigErrorCase{"channels_missing", {{"channels", nullptr}}, "channels", "is missing"},
        ConfigErrorCase{"vocab_without_end",
                        {{"vocab", {"<pad>", "<start>", "<unk>", "a"}}},
                        "vocab",
                        "vocab[2] must be \"<end>\""},
        ConfigErrorCase{
            "vocab_repeat", {{"vocab", {"<pad>", "<start>", "<end>", "<unk>", "a", "a"}}}, "vocab", "twice"},
        ConfigErrorCase{
            "vocab_only_special", {{"vocab", {"<pad>", "<start>", "<end>", "<unk>"}}}, "vocab", "at least 5"},
        ConfigErrorCase{"vocab_empty", {{"vocab", json::array()}}, "vocab", "is empty"},
        ConfigErrorCase{"missing_hidden", {{"hidden", nullptr}}, "hidden", "is missing"},
        ConfigErrorCase{"negative_embedding", {{"embedding_size", -1}}, "embedding_size", "must be from 1"},
        ConfigErrorCase{"hidden_huge", {{"hidden", 1 << 20}}, "hidden", "from 1 to 16384"},
        ConfigErrorCase{"attention_size_string", {{"attention_size", "64"}}, "attention_size", "whole number"},
        ConfigErrorCase{"max_caption_length_zero", {{"max_caption_length", 0}}, "max_caption_length", "must be from 1"},
        ConfigErrorCase{"mean_two_values", {{"mean", {0.5, 0.5}}}, "mean", "3 numbers"},
        ConfigErrorCase{"mean_missing", {{"mean", nullptr}}, "mean", "is missing"},
        ConfigErrorCase{"std_zero", {{"std", {0.25, 0.0, 0.25}}}, "std", "above 0"}),
    test::config_case_name);

TEST(CaptionerConfigParse, BadJsonNamesTheByteAndLine) {
  auto c = CaptionerConfig::parse("{\n  \"attention\": \"soft\",\n  oops\n}", "cfg.json");
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().file, "cfg.json");
  EXPECT_EQ(c.error().line, 3);
}

TEST(CaptionerConfigParse, ConfigBuiltInCodeIsChecked) {
  auto m = markov_chain();
  m.config.channels.clear();
  EXPECT_NE(error_of(m).find("config: channels holds 0 widths"), std::string::npos) << error_of(m);
  m = markov_chain();
  m.config.image_size = 6;
  m.config.channels = {2, 2};
  EXPECT_NE(error_of(m).find("image_size 6 is not divisible by 2^2 = 4"), std::string::npos) << error_of(m);
  m = markov_chain();
  m.config.vocab[1] = "<s>";
  EXPECT_NE(error_of(m).find("vocab[1] must be \"<start>\""), std::string::npos) << error_of(m);
  m = markov_chain();
  m.config.std[2] = 0.0f;
  EXPECT_NE(error_of(m).find("std must be 3 finite numbers above 0"), std::string::npos) << error_of(m);
  m = markov_chain();
  m.config.hidden = 0;
  EXPECT_NE(error_of(m).find("hidden is 0"), std::string::npos) << error_of(m);
}

// ---------------------------------------------------------------------------------------------------------
// Errors: tensors

TEST(CaptionerTensors, MissingTensorNamesFileAndTensor) {
  auto m = markov_chain();
  m.tensors.erase("decoder.gate.bias");
  const std::string message = error_of(m);
  EXPECT_NE(message.find("tiny.safetensors"), std::string::npos) << message;
  EXPECT_NE(message.find("missing tensor 'decoder.gate.bias' (expected shape [1])"), std::string::npos) << message;
}

TEST(CaptionerTensors, WrongShapesNameExpectedAndFound) {
  auto conv = markov_chain();
  conv.tensors.set("encoder.convs.0.weight", {2, 3, 9});
  EXPECT_NE(error_of(conv).find("'encoder.convs.0.weight' has shape [2, 3, 9], the config implies [2, 3, 3, 3]"),
            std::string::npos)
      << error_of(conv);
  auto lstm = markov_chain();
  lstm.tensors.set("decoder.lstm.weight_ih", {4, 6});  // E + D = 8
  EXPECT_NE(error_of(lstm).find("'decoder.lstm.weight_ih' has shape [4, 6], the config implies [4, 8]"),
            std::string::npos)
      << error_of(lstm);
  // The same file under a config with a wider encoder: the first tensor that disagrees is named.
  auto wider = markov_chain();
  wider.config.channels = {3};
  EXPECT_NE(error_of(wider).find("'encoder.convs.0.weight' has shape [2, 3, 3, 3], the config implies [3, 3, 3, 3]"),
            std::string::npos);
}

TEST(CaptionerTensors, UnusedTensorsAreAWarning) {
  const auto m = markov_chain();
  test::expect_unused_warning<CaptionerModel>(m.config, m.tensors, "decoder.attention.full.bias");
}

TEST(CaptionerLoad, FolderRoundTripAndArchitecture) {
  const fs::path dir = test::fresh_dir("attn-captioner-test");
  auto m = markov_chain();
  json cfg = {{"architectures", {"AttnScopeCaptioner"}},
              {"task", "test"},
              {"attention", "soft"},
              {"image_size", 4},
              {"mean", {0, 0, 0}},
              {"std", {1, 1, 1}},
              {"channels", {2}},
              {"vocab", kVocab},
              {"embedding_size", 6},
              {"hidden", 1},
              {"attention_size", 1},
              {"max_caption_length", 5}};
  std::ofstream(dir / "config.json") << cfg.dump(2);
  m.tensors.write(dir / "model.safetensors");
  EXPECT_EQ(config_architecture(dir), "AttnScopeCaptioner");
  auto model = CaptionerModel::load(dir);
  ASSERT_TRUE(model.has_value()) << model.error().message();
  CaptionerRunner session(*model);
  auto run = session.run_resized(grey_input(4));
  ASSERT_TRUE(run);
  EXPECT_EQ(run->hypotheses[0].text, "a");

  cfg["image_size"] = 5;
  const std::string text = cfg.dump(2);
  std::ofstream(dir / "config.json") << text;
  auto bad = CaptionerModel::load(dir);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().file, (dir / "config.json").string());
  EXPECT_NE(bad.error().message().find("not divisible by 2^1 = 2"), std::string::npos) << bad.error().message();
  EXPECT_FALSE(CaptionerModel::load(dir / "nowhere").has_value());
  fs::remove_all(dir);
}

}  // namespace captioner_tests
}  // namespace attn::models
