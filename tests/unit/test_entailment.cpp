// The word-by-word entailment model of tools/train/MODELS.md section 5 on hand-built tiny models: the words it
// reads (terminators dropped, unknown words marked), zero attention weights giving uniform rows and the bias
// deciding the label, truncation and empty sentences, tensor and config errors. The numbers of trained weights
// are the parity suite's (tests/parity/test_entailment_parity.cpp).
#include "attn/io/safetensors.h"
#include "attn/models/entailment.h"
#include "model_test_util.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <cmath>
#include <string>
#include <vector>

namespace attn::models {
// Named, not anonymous: the unity builds compile several test files as one.
namespace entailment_tests {

using nlohmann::json;

constexpr std::int64_t kE = 3, kK = 4;

json entailment_config_json() {
  return {{"architectures", {"AttnScopeEntailment"}},
          {"task", "textual entailment"},
          {"labels", {"entailment", "contradiction", "neutral"}},
          {"vocab", {"<pad>", "<unk>", "a", "man", "is", "sleeping", "not"}},
          {"embedding_size", kE},
          {"hidden", kK},
          {"max_words", 5}};
}

struct Tiny {
  EntailmentConfig config;
  test::TensorStore tensors{
      "entail.safetensors", [](const std::string& name, std::size_t i) {
        // Non-zero LSTMs and embeddings (so the states are not trivial); the attention's
        // and the final layer's weights 0: every score is 0, every row uniform.
        if (name.rfind("attention.", 0) == 0 || name.rfind("final.", 0) == 0 || name.rfind("classifier.", 0) == 0)
          return 0.0f;
        return 0.1f * std::sin(float(i) + float(name.size()));
      }};
};

Tiny tiny() {
  Tiny m;
  auto parsed = EntailmentConfig::parse(entailment_config_json().dump(2), "entail/config.json");
  EXPECT_TRUE(parsed.has_value()) << parsed.error().message();
  m.config = *parsed;
  m.tensors.set("embedding.weight", {7, kE});
  for (const std::string lstm : {"premise", "hypothesis"}) {
    m.tensors.set(lstm + ".weight_ih", {4 * kK, kE});
    m.tensors.set(lstm + ".weight_hh", {4 * kK, kK});
    m.tensors.set(lstm + ".bias_ih", {4 * kK});
    m.tensors.set(lstm + ".bias_hh", {4 * kK});
  }
  for (const std::string w :
       {"attention.W_y", "attention.W_h", "attention.W_r", "attention.W_t", "final.W_p", "final.W_x"}) {
    m.tensors.set(w + ".weight", {kK, kK});
  }
  m.tensors.set("attention.w.weight", {1, kK});
  m.tensors.set("classifier.weight", {3, kK});
  // h* = tanh(0) = 0: the bias alone decides, softmax(0, log 3, 0) = (0.2, 0.6, 0.2).
  m.tensors.set("classifier.bias", {3}, {0.0f, std::log(3.0f), 0.0f});
  return m;
}

std::string error_of(const Tiny& m) { return test::load_error<EntailmentModel>(m.config, m.tensors); }

TEST(EntailmentRun, ZeroAttentionWeightsGiveUniformRowsAndTheBiasDecides) {
  Tiny m = tiny();
  auto model = test::load_model<EntailmentModel>(m.config, m.tensors);
  ASSERT_TRUE(model);
  EXPECT_TRUE(model->warnings().empty());
  EXPECT_EQ(model->description(), "textual entailment \u00b7 word-by-word attention \u00b7 4 units \u00b7 " +
                                      std::to_string(model->parameters()) + " parameters");
  EntailmentRunner runner(model);
  auto run = runner.run("A man is sleeping.", "a man is not sleeping");
  ASSERT_TRUE(run.has_value()) << run.error().message();
  ASSERT_EQ(run->attention.rows(), 5);
  ASSERT_EQ(run->attention.cols(), 4);
  for (Index t = 0; t < 5; ++t) {
    for (Index j = 0; j < 4; ++j) EXPECT_NEAR(run->attention(t, j), 0.25f, 1e-6f) << t << ", " << j;
  }
  ASSERT_EQ(run->probabilities.size(), 3u);
  EXPECT_NEAR(run->probabilities[0], 0.2f, 1e-6f);
  EXPECT_NEAR(run->probabilities[1], 0.6f, 1e-6f);
  EXPECT_NEAR(run->probabilities[2], 0.2f, 1e-6f);
  EXPECT_EQ(run->predicted, 1);
  EXPECT_TRUE(run->warnings.empty());
}

TEST(EntailmentRun, WordsDropTerminatorsAndMarkUnknownWords) {
  Tiny m = tiny();
  auto model = test::load_model<EntailmentModel>(m.config, m.tensors);
  ASSERT_TRUE(model);
  EntailmentRunner runner(model);
  auto run = runner.run("The MAN is sleeping!", "? a man . snoring ?");
  ASSERT_TRUE(run.has_value()) << run.error().message();
  EXPECT_EQ(run->premise.words, (Labels{"the", "man", "is", "sleeping"}));
  EXPECT_EQ(run->premise_ids, (std::vector<int>{1, 3, 4, 5}));
  EXPECT_EQ(run->premise_unknown, (std::vector<bool>{true, false, false, false}));
  EXPECT_EQ(run->premise.spans[1], (Span{4, 7}));
  EXPECT_EQ(run->hypothesis.words, (Labels{"a", "man", "snoring"}));
  EXPECT_EQ(run->hypothesis.spans[2], (Span{10, 17}));
  const auto map = run->map();
  EXPECT_EQ(map->row_axis, "hypothesis");
  EXPECT_EQ(map->col_axis, "premise");
  EXPECT_EQ(map->row_labels, (Labels{"a", "man", "snoring (unk)"}));
  EXPECT_EQ(map->col_labels, (Labels{"the (unk)", "man", "is", "sleeping"}));
  EXPECT_EQ(map->weights.rows(), 3);
  EXPECT_EQ(map->weights.cols(), 4);
}

TEST(EntailmentRun, LongSentencesAreTruncatedWithAWarningEach) {
  Tiny m = tiny();
  auto model = test::load_model<EntailmentModel>(m.config, m.tensors);
  ASSERT_TRUE(model);
  EntailmentRunner runner(model);
  auto run = runner.run("a man is a man is a man", "a man is not a man is");  // 8 and 7 words, max_words 5
  ASSERT_TRUE(run.has_value()) << run.error().message();
  EXPECT_EQ(run->premise.words.size(), 5u);
  EXPECT_EQ(run->hypothesis.words.size(), 5u);
  ASSERT_EQ(run->warnings.size(), 2u);
  EXPECT_EQ(run->warnings[0], "the premise has 8 words; the model reads the first 5");
  EXPECT_EQ(run->warnings[1], "the hypothesis has 7 words; the model reads the first 5");
}

TEST(EntailmentRun, AnEmptySentenceIsAnErrorNamingIt) {
  Tiny m = tiny();
  auto model = test::load_model<EntailmentModel>(m.config, m.tensors);
  ASSERT_TRUE(model);
  EntailmentRunner runner(model);
  for (const char* empty : {"", " ?! ", "\u00e9\u00e9"}) {
    auto no_premise = runner.run(empty, "a man");
    ASSERT_FALSE(no_premise.has_value());
    EXPECT_EQ(no_premise.error().message(), "premise: the premise has no words");
    auto no_hypothesis = runner.run("a man", empty);
    ASSERT_FALSE(no_hypothesis.has_value());
    EXPECT_EQ(no_hypothesis.error().message(), "hypothesis: the hypothesis has no words");
  }
}

TEST(EntailmentTensors, MissingWrongAndUnusedTensors) {
  Tiny missing = tiny();
  missing.tensors.erase("attention.W_t.weight");
  EXPECT_NE(error_of(missing).find("missing tensor 'attention.W_t.weight'"), std::string::npos) << error_of(missing);
  Tiny wrong = tiny();
  wrong.tensors.set("hypothesis.weight_hh", {4 * kK, kK + 1});
  EXPECT_NE(error_of(wrong).find("'hypothesis.weight_hh' has shape [16, 5], the config implies [16, 4]"),
            std::string::npos)
      << error_of(wrong);
  test::expect_unused_warning<EntailmentModel>(tiny().config, tiny().tensors, "attention.extra");
}

// Attribution (attn/models/word_attribution.h) on the tiny model, whose attention, final and classifier weights are
// 0: every logit is its bias whatever the words, so every score is 0 and integrated gradients' values are the
// bias. The numbers of trained weights are tests/parity/test_entailment_attribution_parity.cpp's.
TEST(EntailmentAttribution, AConstantLogitHasZeroScoresAndItsBiasAsBothValues) {
  Tiny m = tiny();
  auto model = test::load_model<EntailmentModel>(m.config, m.tensors);
  ASSERT_TRUE(model);
  auto run = EntailmentRunner(model).run("a man is sleeping", "a man is not sleeping");
  ASSERT_TRUE(run.has_value()) << run.error().message();
  for (const auto method : {WordAttributionMethod::GradientXInput, WordAttributionMethod::IntegratedGradients}) {
    SCOPED_TRACE(word_method_name(method));
    WordAttributionOptions o;
    o.method = method;
    o.steps = 3;
    auto a = attribute_words(*model, *run, o);
    ASSERT_TRUE(a.has_value()) << a.error().message();
    EXPECT_EQ(a->label, run->predicted);  // -1: the prediction
    EXPECT_EQ(a->premise_words, 4);
    ASSERT_EQ(a->scores.size(), 9);
    EXPECT_EQ(a->scores.cwiseAbs().maxCoeff(), 0.0f);
    EXPECT_NEAR(a->value, std::log(3.0f), 1e-6f);
    const bool ig = method == WordAttributionMethod::IntegratedGradients;
    EXPECT_NEAR(a->baseline_value, ig ? std::log(3.0f) : 0.0f, 1e-6f);
    EXPECT_NEAR(a->gap, 0.0f, 1e-6f);
  }
}

TEST(EntailmentAttribution, BadLabelsStepsAndACancelAreErrors) {
  Tiny m = tiny();
  auto model = test::load_model<EntailmentModel>(m.config, m.tensors);
  ASSERT_TRUE(model);
  auto run = EntailmentRunner(model).run("a man", "a man is sleeping");
  ASSERT_TRUE(run.has_value()) << run.error().message();
  const auto error_with = [&](const WordAttributionOptions& o) {
    auto a = attribute_words(*model, *run, o);
    EXPECT_FALSE(a.has_value());
    return a.has_value() ? Error{} : a.error();
  };
  for (const int label : {3, -2}) {
    WordAttributionOptions o;
    o.label = label;
    const Error e = error_with(o);
    EXPECT_EQ(e.kind, ErrorKind::OutOfRange);
    EXPECT_EQ(e.message(), "label " + std::to_string(label) +
                               " is out of range: the model has 3 labels (0 .. 2, or -1 for the prediction)");
  }
  WordAttributionOptions o;
  o.method = WordAttributionMethod::IntegratedGradients;
  for (const int steps : {0, 1025}) {
    o.steps = steps;
    const Error e = error_with(o);
    EXPECT_EQ(e.kind, ErrorKind::OutOfRange);
    EXPECT_EQ(e.message(), "integrated gradients: steps must be 1 .. 1024, not " + std::to_string(steps));
  }
  o.steps = 1024;
  EXPECT_TRUE(attribute_words(*model, *run, o).has_value());
  const std::atomic<bool> cancel{true};
  o.cancel = &cancel;
  EXPECT_EQ(error_with(o).kind, ErrorKind::Cancelled);
  EntailmentRun foreign = *run;
  foreign.hypothesis_ids[1] = 7;  // the tiny vocabulary has 7 words
  EXPECT_EQ(attribute_words(*model, foreign, WordAttributionOptions{}).error().message(),
            "word id 7 is not in the model's vocabulary of 7 (a run of another model?)");
}

class EntailmentConfigErrors : public ::testing::TestWithParam<test::ConfigErrorCase> {};

TEST_P(EntailmentConfigErrors, NameFileKeyAndLine) {
  test::expect_config_error<EntailmentConfig>(test::patched_json(entailment_config_json(), GetParam().patch),
                                              GetParam());
}

INSTANTIATE_TEST_SUITE_P(
    Cases, EntailmentConfigErrors,
    ::testing::Values(
        test::ConfigErrorCase{
            "Architecture", {{"architectures", {"AttnScopeClassifier"}}}, "architectures", "AttnScopeEntailment"},
        test::ConfigErrorCase{"OneLabel", {{"labels", {"entailment"}}}, "labels", "at least 2"},
        test::ConfigErrorCase{"VocabOrder", {{"vocab", {"<unk>", "<pad>", "a"}}}, "vocab", "vocab[0] must be"},
        test::ConfigErrorCase{"HiddenMissing", {{"hidden", nullptr}}, "hidden", "hidden is missing"},
        test::ConfigErrorCase{"MaxWordsZero", {{"max_words", 0}}, "max_words", "must be from 1"}),
    test::config_case_name);

}  // namespace entailment_tests
}  // namespace attn::models
