// The convolutional seq2seq model (tools/train/MODELS.md section 1, "ConvS2S") on hand-built models: every
// decoder layer's map kept and the alignment their mean, the target position read at each step, the config's
// own keys and refusals, and the step limit the position table sets. Numbers against torch: the parity suite.
#include "attn/models/seq2seq.h"
#include "model_test_util.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace attn::models {
namespace {

using nlohmann::json;
using Tensors = test::TensorStore;  // unset values are 0

constexpr int kSource = 6, kTarget = 5;  // max_source_length, max_target_length

// A model whose every convolution and attention projection is 0 (so o = GLU(0) = 0 and each layer's query is
// g = E_t[y] + P_t[t]) and whose source side is its positions alone (e_j = P_s[j], no encoder layer: z = e).
// P_s[j] = one-hot(j) and P_t[t] = `sharpness` one-hot(t) (the width is kSource): step t's score is
// `sharpness` on source position t and 0 elsewhere, in every layer. The output layer reads h's coordinates
// 0 .. 2 into the ids "a", "b", </s>, so the text follows the positions too.
struct Diagonal {
  Seq2SeqConfig config;
  Tensors tensors;
};

Diagonal diagonal(int layers, float sharpness) {
  Diagonal m;
  auto& c = m.config;
  c.task = "test";
  c.attention = Seq2SeqAttention::ConvS2S;
  c.source_vocab = {"<pad>", "<unk>", "x"};
  c.target_vocab = {"<pad>", "<s>", "</s>", "a", "b"};
  c.embedding_size = kSource;
  c.encoder_layers = 0;
  c.encoder_kernel = 3;
  c.decoder_layers = layers;
  c.decoder_kernel = 2;
  c.max_source_length = kSource;
  c.max_target_length = kTarget;
  const int d = kSource;
  auto& t = m.tensors;
  t.set("encoder.embedding.weight", {3, d});
  std::vector<float> eye(static_cast<std::size_t>(d * d), 0.0f), target(static_cast<std::size_t>(kTarget * d), 0.0f);
  for (int j = 0; j < d; ++j) eye[static_cast<std::size_t>(j * d + j)] = 1.0f;
  for (int i = 0; i < kTarget; ++i) target[static_cast<std::size_t>(i * d + i)] = sharpness;
  t.set("encoder.positions.weight", {kSource, d}, eye);
  t.set("decoder.embedding.weight", {5, d});
  t.set("decoder.positions.weight", {kTarget, d}, target);
  for (int l = 0; l < layers; ++l) {
    const std::string n = std::to_string(l);
    t.set("decoder.convs." + n + ".weight", {2 * d, d, 2});
    t.set("decoder.convs." + n + ".bias", {2 * d});
    t.set("decoder.attention." + n + ".weight", {d, d});
    t.set("decoder.attention." + n + ".bias", {d});
  }
  // logits(v) = 10 h_k for v = a, b, </s> (k = 0, 1, 2), -10 for <pad> and <s>.
  std::vector<float> out(static_cast<std::size_t>(5 * d), 0.0f), bias = {-10, -10, 0, 0, 0};
  out[static_cast<std::size_t>(3 * d + 0)] = 10.0f;
  out[static_cast<std::size_t>(4 * d + 1)] = 10.0f;
  out[static_cast<std::size_t>(2 * d + 2)] = 10.0f;
  t.set("decoder.out.weight", {5, d}, out);
  t.set("decoder.out.bias", {5}, bias);
  return m;
}

DecodeOptions convs2s_beam(int k) {
  DecodeOptions options;
  options.beam = k;
  return options;
}

TEST(ConvS2SSeq2Seq, EveryLayerKeepsItsMapAndTheAlignmentIsTheirMean) {
  auto model = test::load_model<Seq2SeqModel>(diagonal(3, 8.0f).config, diagonal(3, 8.0f).tensors);
  ASSERT_TRUE(model);
  EXPECT_EQ(model->config().variant_name(), "ConvS2S (3 decoder layers)");
  Seq2SeqRunner runner(model);
  auto run = runner.run("xxxxx", convs2s_beam(3));
  ASSERT_TRUE(run.has_value()) << run.error().message();
  ASSERT_FALSE(run->hypotheses.empty());
  for (const Hypothesis& h : run->hypotheses) {
    ASSERT_EQ(h.layers.size(), 3u);
    Matrix mean = Matrix::Zero(h.attention.rows(), h.attention.cols());
    for (const Matrix& layer : h.layers) {
      ASSERT_EQ(layer.rows(), static_cast<Index>(h.ids.size()));
      ASSERT_EQ(layer.cols(), 5);
      mean += layer / 3.0f;
    }
    EXPECT_TRUE(h.attention.isApprox(mean, 1e-6f));
  }
  auto layer = run->layer_alignment(2);
  ASSERT_TRUE(layer);
  EXPECT_EQ(layer->name, "decoder layer 2");
  EXPECT_TRUE(layer->weights.isApprox(run->hypotheses[0].layers[2]));
  EXPECT_EQ(layer->col_labels, run->source);
  EXPECT_FALSE(run->layer_alignment(3));
  EXPECT_FALSE(run->layer_alignment(0, 99));
}

TEST(ConvS2SSeq2Seq, StepTReadsItsOwnTargetPosition) {
  // Step t's query is the target position embedding of t: every layer's row t peaks on source position t.
  const Diagonal m = diagonal(2, 8.0f);
  auto model = test::load_model<Seq2SeqModel>(m.config, m.tensors);
  ASSERT_TRUE(model);
  Seq2SeqRunner runner(model);
  auto run = runner.run("xxxxxx", convs2s_beam(1));
  ASSERT_TRUE(run.has_value()) << run.error().message();
  const Hypothesis& h = run->hypotheses[0];
  // h after the layers carries the attended value's coordinate t: step 0 writes "a", step 1 "b", step 2 ends.
  EXPECT_EQ(h.text, "ab");
  EXPECT_TRUE(h.finished);
  ASSERT_EQ(h.ids.size(), 3u);
  for (std::size_t l = 0; l < 2; ++l) {
    for (Index t = 0; t < 3; ++t) {
      Index peak = -1;
      h.layers[l].row(t).maxCoeff(&peak);
      EXPECT_EQ(peak, t) << "layer " << l << ", step " << t;
      EXPECT_GT(h.layers[l](t, t), 0.99f);
    }
  }
}

TEST(ConvS2SSeq2Seq, TheStepLimitIsThePositionTable) {
  const Diagonal m = diagonal(1, 8.0f);
  auto model = test::load_model<Seq2SeqModel>(m.config, m.tensors);
  ASSERT_TRUE(model);
  Seq2SeqRunner runner(model);
  DecodeOptions options;
  options.max_steps = kTarget + 1;
  auto run = runner.run("xx", options);
  ASSERT_FALSE(run.has_value());
  EXPECT_NE(run.error().message().find("max_target_length = 5"), std::string::npos) << run.error().message();
  options.max_steps = kTarget;
  EXPECT_TRUE(runner.run("xx", options).has_value());
}

TEST(ConvS2SSeq2Seq, GruModelsHaveNoLayerMaps) {
  Seq2SeqRun run;
  run.source = {"x"};
  Hypothesis h;
  h.attention = Matrix::Ones(1, 1);
  h.labels = {"</s>"};
  run.hypotheses.push_back(h);
  EXPECT_TRUE(run.alignment());
  EXPECT_FALSE(run.layer_alignment(0));
}

TEST(ConvS2SSeq2Seq, TensorShapesFollowTheConfig) {
  Diagonal m = diagonal(2, 1.0f);
  m.tensors.set("decoder.convs.1.weight", {2 * kSource, kSource, 3});  // the config's kernel is 2
  const std::string error = test::load_error<Seq2SeqModel>(m.config, m.tensors);
  EXPECT_NE(error.find("decoder.convs.1.weight"), std::string::npos) << error;
  m = diagonal(2, 1.0f);
  m.tensors.erase("decoder.attention.1.bias");
  EXPECT_NE(test::load_error<Seq2SeqModel>(m.config, m.tensors).find("decoder.attention.1.bias"), std::string::npos);
}

std::string convs2s_json(const json& patch = json::object()) {
  json j = {{"architectures", {"AttnScopeSeq2Seq"}},
            {"attention", "convs2s"},
            {"source_vocab", {"<pad>", "<unk>", "1", "2"}},
            {"target_vocab", {"<pad>", "<s>", "</s>", "-"}},
            {"embedding_size", 8},
            {"encoder_layers", 2},
            {"encoder_kernel", 5},
            {"decoder_layers", 3},
            {"decoder_kernel", 3},
            {"max_source_length", 40},
            {"max_target_length", 12}};
  return test::patched_json(std::move(j), patch);
}

TEST(ConvS2SConfigParse, ReadsItsOwnKeys) {
  auto c = Seq2SeqConfig::parse(convs2s_json(), "cfg.json");
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_EQ(c->attention, Seq2SeqAttention::ConvS2S);
  EXPECT_EQ(c->embedding_size, 8);
  EXPECT_EQ(c->encoder_layers, 2);
  EXPECT_EQ(c->encoder_kernel, 5);
  EXPECT_EQ(c->decoder_layers, 3);
  EXPECT_EQ(c->decoder_kernel, 3);
  EXPECT_EQ(c->variant_name(), "ConvS2S (3 decoder layers)");
}

using test::ConfigErrorCase;

class ConvS2SConfigError : public ::testing::TestWithParam<ConfigErrorCase> {};

TEST_P(ConvS2SConfigError, NamesTheFileKeyAndLine) {
  test::expect_config_error<Seq2SeqConfig>(convs2s_json(GetParam().patch), GetParam());
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ConvS2SConfigError,
    ::testing::Values(ConfigErrorCase{"even_encoder_kernel", {{"encoder_kernel", 4}}, "encoder_kernel", "must be odd"},
                      ConfigErrorCase{"with_a_score", {{"score", "dot"}}, "score", "does not go with convs2s"},
                      ConfigErrorCase{"with_gru_sizes", {{"decoder_hidden", 8}}, "decoder_hidden", "one width"},
                      ConfigErrorCase{"no_decoder_layer", {{"decoder_layers", 0}}, "decoder_layers", "must be from 1"},
                      ConfigErrorCase{"missing_layers", {{"decoder_layers", nullptr}}, "decoder_layers", "is missing"},
                      ConfigErrorCase{"huge_kernel", {{"decoder_kernel", 1000}}, "decoder_kernel", "to 63"}),
    test::config_case_name);

}  // namespace
}  // namespace attn::models
