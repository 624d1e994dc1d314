// The character seq2seq models (tools/train/MODELS.md section 1) on hand-built tiny models: the GRU step
// by hand-worked numbers, beam search on a model whose greedy and beam answers differ, local-p's window,
// the source side (unknown characters, invalid UTF-8, truncation, empty input) and every config and
// tensor error with the file and tensor it names.
#include "attn/io/safetensors.h"
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
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// ---------------------------------------------------------------------------------------------------------
// Helpers

using Tensors = test::TensorStore;  // unset values are 0

// Target ids of the tiny vocabulary.
constexpr int kEnd = 2, kA = 3, kB = 4;

// A Bahdanau model that is a first-order Markov chain over the target: the output layer sees only
// emb(y_{t-1}) (one-hot, e = Vt), so logits(y_t) = log P(y_t | y_{t-1}) from `transitions`; every other
// weight is 0, which makes every attention row uniform.
//   from <s>: a 0.6, b 0.4        from a: </s> 0.4, a 0.31, b 0.29        from b: </s> 0.99, a, b 0.005
// Greedy takes a (0.6), then </s> (0.4): "a" with 0.24. A beam of 2 also keeps b and finds "b" with
// 0.4 x 0.99 = 0.396.
struct Chain {
  Seq2SeqConfig config;
  Tensors tensors;
};

Chain markov_chain(std::map<int, std::map<int, double>> transitions = {}) {
  if (transitions.empty()) {
    transitions = {{1, {{kA, 0.6}, {kB, 0.4}}},
                   {kA, {{kEnd, 0.4}, {kA, 0.31}, {kB, 0.29}}},
                   {kB, {{kEnd, 0.99}, {kA, 0.005}, {kB, 0.005}}}};
  }
  Chain m;
  auto& c = m.config;
  c.task = "test";
  c.attention = Seq2SeqAttention::Bahdanau;
  c.score = Seq2SeqScore::Additive;
  c.source_vocab = {"<pad>", "<unk>", "x", "y"};
  c.target_vocab = {"<pad>", "<s>", "</s>", "a", "b"};
  c.embedding_size = 5;
  c.encoder_hidden = 1;
  c.decoder_hidden = 1;
  c.attention_size = 1;
  c.max_source_length = 8;
  c.max_target_length = 5;
  auto& t = m.tensors;
  t.set("encoder.embedding.weight", {4, 5});
  test::set_bigru(t, "encoder.gru", 5, 1);
  t.set("decoder.init.weight", {1, 2});
  t.set("decoder.init.bias", {1});
  std::vector<float> eye(25, 0.0f);
  for (int i = 0; i < 5; ++i) eye[static_cast<std::size_t>(i * 5 + i)] = 1.0f;
  t.set("decoder.embedding.weight", {5, 5}, eye);
  t.set("decoder.gru.weight_ih", {3, 7});
  t.set("decoder.gru.weight_hh", {3, 1});
  t.set("decoder.gru.bias_ih", {3});
  t.set("decoder.gru.bias_hh", {3});
  t.set("attention.W.weight", {1, 1});
  t.set("attention.U.weight", {1, 2});
  t.set("attention.v.weight", {1, 1});
  // decoder.out.weight [Vt, d + 2h + e]: the emb(y_{t-1}) columns start at 3.
  std::vector<float> out(5 * 8, 0.0f);
  for (int y = 0; y < 5; ++y) {
    for (int v = 0; v < 5; ++v) {
      const auto from = transitions.find(y);
      double p = 0.0;
      if (from != transitions.end() && from->second.count(v)) p = from->second.at(v);
      out[static_cast<std::size_t>(v * 8 + 3 + y)] = p > 0.0 ? static_cast<float>(std::log(p)) : -40.0f;
    }
  }
  t.set("decoder.out.weight", {5, 8}, out);
  t.set("decoder.out.bias", {5});
  return m;
}

std::shared_ptr<const Seq2SeqModel> load_chain(const Chain& m) {
  return test::load_model<Seq2SeqModel>(m.config, m.tensors);
}

std::string error_of(const Chain& m) { return test::load_error<Seq2SeqModel>(m.config, m.tensors); }

// A session on `chain`; nothing (and a test failure) when it does not load.
std::optional<Seq2SeqRunner> chain_session(const Chain& chain = markov_chain()) {
  auto model = load_chain(chain);
  if (!model) return std::nullopt;
  return Seq2SeqRunner(model);
}

// Beam search of width k (1: greedy).
DecodeOptions beam_width(int k) {
  DecodeOptions options;
  options.beam = k;
  return options;
}

// A config.json for parse(), with `patch` merged over a valid Luong general model's keys.
std::string config_json(const json& patch = json::object()) {
  json j = {{"architectures", {"AttnScopeSeq2Seq"}},
            {"task", "date normalisation"},
            {"attention", "luong"},
            {"score", "general"},
            {"source_vocab", {"<pad>", "<unk>", "1", "2"}},
            {"target_vocab", {"<pad>", "<s>", "</s>", "-"}},
            {"embedding_size", 4},
            {"encoder_hidden", 3},
            {"decoder_hidden", 5},
            {"attention_size", 2},
            {"max_source_length", 40},
            {"max_target_length", 12}};
  return test::patched_json(std::move(j), patch);
}

// ---------------------------------------------------------------------------------------------------------
// GRU

TEST(Seq2SeqGru, OneStepMatchesHandWorkedNumbers) {
  // H = 1, input 1, gates in torch's order (r, z, n):
  //   r = sigma(0.5 x + 0.1 + 1 h + 0)        = sigma(1.1)  = 0.7502601
  //   z = sigma(-1 x + 0 + 0.5 h + 0.2)       = sigma(-0.55) = 0.3658644
  //   n = tanh(2 x - 0.5 + r (-1 h + 0.3))    = tanh(1.5 - 0.2 r) = 0.8740410
  //   h' = (1 - z) n + z h                    = 0.7371927        for x = 1, h = 0.5
  bundled::GruWeights w;
  w.w_ih_t = Matrix(1, 3);
  w.w_ih_t << 0.5f, -1.0f, 2.0f;
  w.w_hh_t = Matrix(1, 3);
  w.w_hh_t << 1.0f, 0.5f, -1.0f;
  w.b_ih = RowVector(3);
  w.b_ih << 0.1f, 0.0f, -0.5f;
  w.b_hh = RowVector(3);
  w.b_hh << 0.0f, 0.2f, 0.3f;
  Matrix x(1, 1), h(1, 1);
  x << 1.0f;
  h << 0.5f;
  Matrix gi = x * w.w_ih_t;
  gi += w.b_ih;
  Matrix gh = h * w.w_hh_t;
  gh += w.b_hh;
  Matrix out(1, 1);
  bundled::gru_gates(gi, gh, h, out);
  EXPECT_NEAR(out(0, 0), 0.7371927f, 1e-6f);
  // gi holds the gates afterwards: r, z, n.
  EXPECT_NEAR(gi(0, 0), 0.7502601f, 1e-6f);
  EXPECT_NEAR(gi(0, 1), 0.3658644f, 1e-6f);
  EXPECT_NEAR(gi(0, 2), 0.8740410f, 1e-6f);
}

TEST(Seq2SeqGru, BidirectionalOutputIsForwardThenBackwardPerPosition) {
  // Only W_in = 1: r = z = 1/2, n = tanh(x), h' = tanh(x) / 2 + h / 2.
  bundled::BiGruWeights w;
  for (auto* g : {&w.forward, &w.backward}) {
    g->w_ih_t = Matrix(1, 3);
    g->w_ih_t << 0.0f, 0.0f, 1.0f;
    g->w_hh_t = Matrix::Zero(1, 3);
    g->b_ih = RowVector::Zero(3);
    g->b_hh = RowVector::Zero(3);
  }
  Matrix x(2, 1);
  x << 1.0f, 2.0f;
  Matrix out;
  bundled::GruScratch scratch;
  bundled::bigru(w, x, out, scratch);
  ASSERT_EQ(out.rows(), 2);
  ASSERT_EQ(out.cols(), 2);
  const float f0 = std::tanh(1.0f) / 2, f1 = std::tanh(2.0f) / 2 + f0 / 2;  // left to right
  const float b1 = std::tanh(2.0f) / 2, b0 = std::tanh(1.0f) / 2 + b1 / 2;  // right to left
  EXPECT_NEAR(out(0, 0), f0, 1e-6f);
  EXPECT_NEAR(out(1, 0), f1, 1e-6f);
  EXPECT_NEAR(out(0, 1), b0, 1e-6f);
  EXPECT_NEAR(out(1, 1), b1, 1e-6f);
}

// ---------------------------------------------------------------------------------------------------------
// Decoding

TEST(Seq2SeqDecode, GreedyTakesTheLocallyBestCharacter) {
  auto session = chain_session();
  ASSERT_TRUE(session);
  auto run = session->run("xy");
  ASSERT_TRUE(run.has_value()) << run.error().message();
  ASSERT_EQ(run->hypotheses.size(), 1u);
  const auto& h = run->hypotheses[0];
  EXPECT_EQ(h.ids, (std::vector<int>{kA, kEnd}));
  EXPECT_EQ(h.text, "a");
  EXPECT_TRUE(h.finished);
  EXPECT_NEAR(h.log_prob, std::log(0.6) + std::log(0.4), 1e-5);
  EXPECT_EQ(h.labels, (Labels{"a", "</s>"}));
  // Every weight of the attention is 0: each row is uniform over the 2 source characters.
  ASSERT_EQ(h.attention.rows(), 2);
  ASSERT_EQ(h.attention.cols(), 2);
  EXPECT_TRUE(h.attention.isApproxToConstant(0.5f, 1e-6f));
  EXPECT_TRUE(h.positions.empty());
}

TEST(Seq2SeqDecode, BeamFindsTheSequenceGreedyMisses) {
  auto session = chain_session();
  ASSERT_TRUE(session);
  auto run = session->run("xy", beam_width(2));
  ASSERT_TRUE(run.has_value()) << run.error().message();
  ASSERT_EQ(run->hypotheses.size(), 2u);
  EXPECT_EQ(run->hypotheses[0].ids, (std::vector<int>{kB, kEnd}));
  EXPECT_EQ(run->hypotheses[0].text, "b");
  EXPECT_NEAR(run->hypotheses[0].log_prob, std::log(0.4) + std::log(0.99), 1e-5);
  EXPECT_EQ(run->hypotheses[1].ids, (std::vector<int>{kA, kEnd}));
  EXPECT_NEAR(run->hypotheses[1].log_prob, std::log(0.6) + std::log(0.4), 1e-5);
  for (const auto& h : run->hypotheses) {
    EXPECT_TRUE(h.finished);
    EXPECT_EQ(h.attention.rows(), static_cast<Index>(h.ids.size()));
  }
}

TEST(Seq2SeqDecode, BeamKeepsEndedHypothesesUntilTheBestAllEnd) {
  // Width 3: after step 2 the best are b</s> (0.396), a</s> (0.24) and the live "aa" (0.186); "aa" goes
  // on and ends as aa</s> (0.0744), which beats every other continuation.
  auto session = chain_session();
  ASSERT_TRUE(session);
  auto run = session->run("x", beam_width(3));
  ASSERT_TRUE(run.has_value()) << run.error().message();
  ASSERT_EQ(run->hypotheses.size(), 3u);
  EXPECT_EQ(run->hypotheses[0].text, "b");
  EXPECT_EQ(run->hypotheses[1].text, "a");
  EXPECT_EQ(run->hypotheses[2].text, "aa");
  EXPECT_EQ(run->hypotheses[2].ids, (std::vector<int>{kA, kA, kEnd}));
  EXPECT_NEAR(run->hypotheses[2].log_prob, std::log(0.6) + std::log(0.31) + std::log(0.4), 1e-5);
  for (std::size_t i = 1; i < run->hypotheses.size(); ++i) {
    EXPECT_GE(run->hypotheses[i - 1].log_prob, run->hypotheses[i].log_prob);
  }
}

TEST(Seq2SeqDecode, BeamOfOneIsGreedy) {
  auto session = chain_session();
  ASSERT_TRUE(session);
  auto greedy = session->run("xyx");
  auto beam = session->run("xyx", beam_width(1));
  ASSERT_TRUE(greedy && beam);
  EXPECT_EQ(greedy->hypotheses[0].ids, beam->hypotheses[0].ids);
  EXPECT_EQ(greedy->hypotheses[0].log_prob, beam->hypotheses[0].log_prob);
}

TEST(Seq2SeqDecode, TiesGoToTheLowerId) {
  auto chain = markov_chain({{1, {{kA, 0.5}, {kB, 0.5}}}, {kA, {{kEnd, 1.0}}}, {kB, {{kEnd, 1.0}}}});
  auto session = chain_session(chain);
  ASSERT_TRUE(session);
  auto greedy = session->run("x");
  ASSERT_TRUE(greedy);
  EXPECT_EQ(greedy->hypotheses[0].text, "a");
  auto both = session->run("x", beam_width(2));
  ASSERT_TRUE(both);
  ASSERT_EQ(both->hypotheses.size(), 2u);
  EXPECT_EQ(both->hypotheses[0].text, "a");
  EXPECT_EQ(both->hypotheses[1].text, "b");
}

TEST(Seq2SeqDecode, StopsAtTheStepLimitUnfinished) {
  auto chain = markov_chain({{1, {{kA, 1.0}}}, {kA, {{kA, 0.9}, {kEnd, 0.1}}}});
  auto session = chain_session(chain);
  ASSERT_TRUE(session);
  auto run = session->run("x");
  ASSERT_TRUE(run);
  const auto& h = run->hypotheses[0];
  EXPECT_EQ(h.ids, (std::vector<int>(5, kA)));  // max_target_length 5
  EXPECT_EQ(h.text, "aaaaa");
  EXPECT_FALSE(h.finished);
  DecodeOptions shorter;
  shorter.max_steps = 2;
  shorter.beam = 2;
  auto cut = session->run("x", shorter);
  ASSERT_TRUE(cut);
  EXPECT_EQ(cut->hypotheses[0].ids, (std::vector<int>{kA, kA}));
  EXPECT_FALSE(cut->hypotheses[0].finished);
  EXPECT_EQ(cut->hypotheses[1].ids, (std::vector<int>{kA, kEnd}));
  EXPECT_TRUE(cut->hypotheses[1].finished);
}

TEST(Seq2SeqDecode, RefusesBadOptions) {
  auto session = chain_session();
  ASSERT_TRUE(session);
  EXPECT_FALSE(session->run("x", beam_width(0)).has_value());
  DecodeOptions no_steps;
  no_steps.max_steps = 0;
  EXPECT_FALSE(session->run("x", no_steps).has_value());
}

// Local-p with every weight 0: p_t = S sigmoid(0) = S / 2, the general scores are all 0, so the window's
// softmax is uniform and the Gaussian (sigma = D / 2) shapes it.
TEST(Seq2SeqDecode, LocalPredictiveWindowAndGaussian) {
  Seq2SeqConfig c;
  c.attention = Seq2SeqAttention::Luong;
  c.score = Seq2SeqScore::General;
  c.local = true;
  c.window = 1;
  c.source_vocab = {"<pad>", "<unk>", "x"};
  c.target_vocab = {"<pad>", "<s>", "</s>", "a"};
  c.embedding_size = 2;
  c.encoder_hidden = 1;
  c.decoder_hidden = 2;
  c.attention_size = 3;
  c.max_source_length = 10;
  c.max_target_length = 3;
  Tensors t;
  t.set("encoder.embedding.weight", {3, 2});
  test::set_bigru(t, "encoder.gru", 2, 1);
  t.set("decoder.init.weight", {2, 2});
  t.set("decoder.init.bias", {2});
  t.set("decoder.embedding.weight", {4, 2});
  t.set("decoder.gru.weight_ih", {6, 4});
  t.set("decoder.gru.weight_hh", {6, 2});
  t.set("decoder.gru.bias_ih", {6});
  t.set("decoder.gru.bias_hh", {6});
  t.set("attention.W.weight", {2, 2});
  t.set("local.W.weight", {3, 2});
  t.set("local.v.weight", {1, 3});
  t.set("decoder.combine.weight", {2, 4});
  t.set("decoder.out.weight", {4, 2});
  t.set("decoder.out.bias", {4}, {0.0f, 0.0f, -1.0f, 1.0f});  // always "a": runs to the step limit
  auto model = Seq2SeqModel::from_parts(c, t.build());
  ASSERT_TRUE(model.has_value()) << model.error().message();
  EXPECT_EQ((*model)->config().variant_name(), "Luong local-p (D = 1)");
  Seq2SeqRunner session(*model);
  auto run = session.run("xxxx");
  ASSERT_TRUE(run.has_value()) << run.error().message();
  const auto& h = run->hypotheses[0];
  ASSERT_EQ(h.ids.size(), 3u);
  ASSERT_EQ(h.positions.size(), 3u);
  // p = 2, visible j = 1, 2, 3 (|j - 2| <= 1), each 1/3 before the Gaussian exp(-(j - 2)^2 / (2 0.5^2)).
  const float side = std::exp(-2.0f) / 3.0f;
  for (Index r = 0; r < 3; ++r) {
    EXPECT_NEAR(h.positions[static_cast<std::size_t>(r)], 2.0f, 1e-6f);
    EXPECT_EQ(h.attention(r, 0), 0.0f);
    EXPECT_NEAR(h.attention(r, 1), side, 1e-6f);
    EXPECT_NEAR(h.attention(r, 2), 1.0f / 3.0f, 1e-6f);
    EXPECT_NEAR(h.attention(r, 3), side, 1e-6f);
  }
}

// ---------------------------------------------------------------------------------------------------------
// The source side

TEST(Seq2SeqSource, UnknownCharactersAreFlaggedAndDecodedAsUnk) {
  auto session = chain_session();
  ASSERT_TRUE(session);
  auto run = session->run("xz\xC3\xA9y");  // x, z, é, y
  ASSERT_TRUE(run.has_value()) << run.error().message();
  EXPECT_EQ(run->source, (Labels{"x", "z", "\xC3\xA9", "y"}));
  EXPECT_EQ(run->source_ids, (std::vector<int>{2, 1, 1, 3}));
  EXPECT_EQ(run->unknown, (std::vector<bool>{false, true, true, false}));
  ASSERT_EQ(run->spans.size(), 4u);
  EXPECT_EQ(run->spans[2], (Span{2, 4}));
  EXPECT_EQ(run->spans[3], (Span{4, 5}));
  EXPECT_EQ(run->hypotheses[0].attention.cols(), 4);
}

TEST(Seq2SeqSource, InvalidUtf8IsOneReplacementCharacterPerBadSequence) {
  auto session = chain_session();
  ASSERT_TRUE(session);
  // \xE2\x82 is a cut-off three-byte sequence (one U+FFFD, as Python's errors="replace"), \xFF another.
  auto run = session->run("x\xE2\x82y\xFF");
  ASSERT_TRUE(run.has_value()) << run.error().message();
  EXPECT_EQ(run->source, (Labels{"x", "\xEF\xBF\xBD", "y", "\xEF\xBF\xBD"}));
  EXPECT_EQ(run->source_ids, (std::vector<int>{2, 1, 3, 1}));
  EXPECT_EQ(run->unknown, (std::vector<bool>{false, true, false, true}));
  EXPECT_EQ(run->spans[1], (Span{1, 3}));
  EXPECT_EQ(run->spans[3], (Span{4, 5}));
}

TEST(Seq2SeqSource, LongInputIsTruncatedWithAWarning) {
  auto chain = markov_chain();
  chain.config.max_source_length = 4;
  auto session = chain_session(chain);
  ASSERT_TRUE(session);
  auto run = session->run("xyxyxy");
  ASSERT_TRUE(run.has_value()) << run.error().message();
  ASSERT_EQ(run->warnings.size(), 1u);
  EXPECT_EQ(run->warnings[0], "input truncated to 4 characters (of 6)");
  EXPECT_EQ(run->source.size(), 4u);
  EXPECT_EQ(run->source_ids.size(), 4u);
  EXPECT_EQ(run->hypotheses[0].attention.cols(), 4);
  auto short_run = session->run("xy");
  ASSERT_TRUE(short_run);
  EXPECT_TRUE(short_run->warnings.empty());
}

TEST(Seq2SeqSource, EmptyInputIsAnError) {
  auto session = chain_session();
  ASSERT_TRUE(session);
  auto run = session->run("");
  ASSERT_FALSE(run.has_value());
  EXPECT_NE(run.error().message().find("nothing to decode"), std::string::npos);
  EXPECT_FALSE(session->run_ids({}).has_value());
}

TEST(Seq2SeqSource, RunIdsChecksTheVocabulary) {
  auto session = chain_session();
  ASSERT_TRUE(session);
  auto run = session->run_ids({2, 1, 3});
  ASSERT_TRUE(run.has_value()) << run.error().message();
  EXPECT_EQ(run->source, (Labels{"x", "<unk>", "y"}));
  EXPECT_EQ(run->unknown, (std::vector<bool>{false, true, false}));
  auto bad = session->run_ids({2, 9});
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("source id 9 at position 1"), std::string::npos) << bad.error().message();
}

TEST(Seq2SeqSource, AlignmentMapIsLabelledBothWays) {
  auto session = chain_session();
  ASSERT_TRUE(session);
  auto run = session->run("xy", beam_width(2));
  ASSERT_TRUE(run);
  const auto map = run->alignment();
  ASSERT_TRUE(map);
  EXPECT_EQ(map->stage, Stage::Cross);
  EXPECT_EQ(map->row_labels, (Labels{"b", "</s>"}));
  EXPECT_EQ(map->col_labels, (Labels{"x", "y"}));
  EXPECT_EQ(map->col_spans.size(), 2u);
  EXPECT_EQ(map->weights.rows(), 2);
  EXPECT_EQ(run->alignment(1)->row_labels, (Labels{"a", "</s>"}));
  EXPECT_EQ(run->alignment(2), nullptr);
}

TEST(Seq2SeqModelInfo, DescriptionAndVariantNames) {
  auto model = load_chain(markov_chain());
  ASSERT_TRUE(model);
  EXPECT_EQ(model->config().variant_name(), "Bahdanau (additive)");
  EXPECT_EQ(model->description(), "test \xC2\xB7 Bahdanau (additive) \xC2\xB7 175 parameters");
  EXPECT_TRUE(model->warnings().empty());
  Seq2SeqConfig c;
  c.attention = Seq2SeqAttention::Luong;
  c.score = Seq2SeqScore::Concat;
  EXPECT_EQ(c.variant_name(), "Luong global (concat)");
  c.score = Seq2SeqScore::Dot;
  EXPECT_EQ(c.variant_name(), "Luong global (dot)");
}

// ---------------------------------------------------------------------------------------------------------
// Errors: config

TEST(Seq2SeqConfigParse, ReadsAValidConfig) {
  auto c = Seq2SeqConfig::parse(config_json({{"local", {{"kind", "predictive"}, {"window", 3}}}}), "cfg.json");
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_EQ(c->attention, Seq2SeqAttention::Luong);
  EXPECT_EQ(c->score, Seq2SeqScore::General);
  EXPECT_TRUE(c->local);
  EXPECT_EQ(c->window, 3);
  EXPECT_EQ(c->task, "date normalisation");
  EXPECT_EQ(c->source_vocab.size(), 4u);
  EXPECT_EQ(c->max_target_length, 12);
  EXPECT_EQ(c->variant_name(), "Luong local-p (D = 3)");
}

using test::ConfigErrorCase;

class Seq2SeqConfigError : public ::testing::TestWithParam<ConfigErrorCase> {};

TEST_P(Seq2SeqConfigError, NamesTheFileKeyAndLine) {
  test::expect_config_error<Seq2SeqConfig>(config_json(GetParam().patch), GetParam());
}

INSTANTIATE_TEST_SUITE_P(
    Cases, Seq2SeqConfigError,
    ::testing::Values(
        ConfigErrorCase{"unknown_attention", {{"attention", "monotonic"}}, "attention", "is not supported"},
        ConfigErrorCase{"unknown_score", {{"score", "cosine"}}, "score", "does not go with luong"},
        ConfigErrorCase{"bahdanau_with_dot", {{"attention", "bahdanau"}, {"score", "dot"}}, "score", "additive"},
        ConfigErrorCase{
            "dot_needs_2h", {{"score", "dot"}, {"decoder_hidden", 5}}, "decoder_hidden", "2 x encoder_hidden = 6"},
        ConfigErrorCase{"empty_source_vocab", {{"source_vocab", json::array()}}, "source_vocab", "is empty"},
        ConfigErrorCase{"empty_target_vocab", {{"target_vocab", json::array()}}, "target_vocab", "is empty"},
        ConfigErrorCase{"vocab_without_unk",
                        {{"source_vocab", {"<pad>", "a", "b"}}},
                        "source_vocab",
                        "source_vocab[1] must be \"<unk>\""},
        ConfigErrorCase{
            "vocab_repeat", {{"target_vocab", {"<pad>", "<s>", "</s>", "a", "a"}}}, "target_vocab", "twice"},
        ConfigErrorCase{"vocab_word", {{"source_vocab", {"<pad>", "<unk>", "ab"}}}, "source_vocab", "one character"},
        ConfigErrorCase{"missing_size", {{"embedding_size", nullptr}}, "embedding_size", "is missing"},
        ConfigErrorCase{"negative_size", {{"encoder_hidden", -3}}, "encoder_hidden", "must be from 1"},
        ConfigErrorCase{"size_not_number", {{"max_source_length", "40"}}, "max_source_length", "whole number"},
        ConfigErrorCase{"wrong_architecture", {{"architectures", {"BertModel"}}}, "architectures", "AttnScopeSeq2Seq"},
        ConfigErrorCase{
            "local_with_bahdanau",
            {{"attention", "bahdanau"}, {"score", "additive"}, {"local", {{"kind", "predictive"}, {"window", 2}}}},
            "local",
            "Luong's"},
        ConfigErrorCase{
            "local_monotonic", {{"local", {{"kind", "monotonic"}, {"window", 2}}}}, "local", "not supported"},
        ConfigErrorCase{"local_no_window", {{"local", {{"kind", "predictive"}}}}, "local", "window"},
        ConfigErrorCase{"local_with_dot",
                        {{"score", "dot"}, {"decoder_hidden", 6}, {"local", {{"kind", "predictive"}, {"window", 2}}}},
                        "local",
                        "general"}),
    test::config_case_name);

TEST(Seq2SeqConfigParse, BadJsonNamesTheByteAndLine) {
  auto c = Seq2SeqConfig::parse("{\n  \"attention\": \"luong\",\n  oops\n}", "cfg.json");
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().file, "cfg.json");
  EXPECT_EQ(c.error().line, 3);
  EXPECT_GE(c.error().offset, 0);
}

// ---------------------------------------------------------------------------------------------------------
// Errors: tensors

TEST(Seq2SeqTensors, MissingTensorNamesFileAndTensor) {
  auto chain = markov_chain();
  chain.tensors.erase("attention.v.weight");
  const std::string message = error_of(chain);
  EXPECT_NE(message.find("tiny.safetensors"), std::string::npos) << message;
  EXPECT_NE(message.find("missing tensor 'attention.v.weight'"), std::string::npos) << message;
  EXPECT_NE(message.find("[1, 1]"), std::string::npos) << message;
}

TEST(Seq2SeqTensors, WrongShapeNamesExpectedFoundAndOffset) {
  auto chain = markov_chain();
  chain.tensors.set("decoder.init.weight", {2, 1});
  auto model = Seq2SeqModel::from_parts(chain.config, chain.tensors.build());
  ASSERT_FALSE(model.has_value());
  const std::string message = model.error().message();
  EXPECT_EQ(model.error().file, "tiny.safetensors");
  EXPECT_GT(model.error().offset, 0);
  EXPECT_NE(message.find("'decoder.init.weight' has shape [2, 1], the config implies [1, 2]"), std::string::npos)
      << message;
}

TEST(Seq2SeqTensors, ShapesFollowTheConfig) {
  // The same file under a config with another vocabulary size: the first tensor that disagrees is named.
  auto chain = markov_chain();
  chain.config.source_vocab.push_back("z");
  const std::string message = error_of(chain);
  EXPECT_NE(message.find("'encoder.embedding.weight' has shape [4, 5], the config implies [5, 5]"), std::string::npos)
      << message;
  // A missing reverse direction of the encoder's GRU.
  auto no_reverse = markov_chain();
  no_reverse.tensors.erase("encoder.gru.bias_hh_l0_reverse");
  EXPECT_NE(error_of(no_reverse).find("'encoder.gru.bias_hh_l0_reverse'"), std::string::npos);
  // A rank-2 [1, 3] where a [3] bias belongs.
  auto rank = markov_chain();
  rank.tensors.set("decoder.gru.bias_ih", {1, 3});
  EXPECT_NE(error_of(rank).find("'decoder.gru.bias_ih' has shape [1, 3], the config implies [3]"), std::string::npos);
}

TEST(Seq2SeqTensors, ConfigBuiltInCodeIsChecked) {
  auto chain = markov_chain();
  chain.config.source_vocab.clear();
  EXPECT_NE(error_of(chain).find("source_vocab is empty"), std::string::npos);
  auto dot = markov_chain();
  dot.config.attention = Seq2SeqAttention::Luong;
  dot.config.score = Seq2SeqScore::Dot;
  dot.config.decoder_hidden = 3;
  EXPECT_NE(error_of(dot).find("2 x encoder_hidden = 2"), std::string::npos);
}

TEST(Seq2SeqTensors, UnusedTensorsAreAWarning) {
  const auto chain = markov_chain();
  test::expect_unused_warning<Seq2SeqModel>(chain.config, chain.tensors, "attention.W.bias");
}

TEST(Seq2SeqLoad, FolderRoundTripAndErrorsNamePaths) {
  const fs::path dir = test::fresh_dir("attn-seq2seq-test");
  auto chain = markov_chain();
  json cfg = {{"architectures", {"AttnScopeSeq2Seq"}},
              {"task", "test"},
              {"attention", "bahdanau"},
              {"score", "additive"},
              {"source_vocab", chain.config.source_vocab},
              {"target_vocab", chain.config.target_vocab},
              {"embedding_size", 5},
              {"encoder_hidden", 1},
              {"decoder_hidden", 1},
              {"attention_size", 1},
              {"max_source_length", 8},
              {"max_target_length", 5}};
  std::ofstream(dir / "config.json") << cfg.dump(2);
  chain.tensors.write(dir / "model.safetensors");
  EXPECT_EQ(config_architecture(dir), "AttnScopeSeq2Seq");
  EXPECT_EQ(config_architecture(dir / "nowhere"), "");
  auto model = Seq2SeqModel::load(dir);
  ASSERT_TRUE(model.has_value()) << model.error().message();
  Seq2SeqRunner session(*model);
  auto run = session.run("xy");
  ASSERT_TRUE(run);
  EXPECT_EQ(run->hypotheses[0].text, "a");

  cfg["attention"] = "hard";
  const std::string text = cfg.dump(2);
  std::ofstream(dir / "config.json") << text;
  auto bad = Seq2SeqModel::load(dir);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().file, (dir / "config.json").string());
  const auto at = text.find("\"attention\"");
  EXPECT_EQ(bad.error().line, 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));

  fs::remove(dir / "model.safetensors");
  cfg["attention"] = "bahdanau";
  std::ofstream(dir / "config.json") << cfg.dump(2);
  auto no_weights = Seq2SeqModel::load(dir);
  ASSERT_FALSE(no_weights.has_value());
  EXPECT_NE(no_weights.error().message().find("model.safetensors"), std::string::npos);
  EXPECT_FALSE(Seq2SeqModel::load(dir / "nowhere").has_value());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace attn::models
