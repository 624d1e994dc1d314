// The classifiers (attention pooling, hierarchical, LSTM, CNN) and their saliency against torch: every folder of
// tests/data/classifier holds an expected.json written by tools/parity/make_classifier_fixtures.py
// (tools/train/classifier_torch.py's analyse() in float64, cross-checked there by a numpy implementation) whose "model"
// names the model folder. Cases are discovered by listing the directory; an empty or missing directory fails. Tokens,
// spans, sentence ids, ids and the prediction must match exactly, every number within 1e-4.
#include "attn/models/classifier.h"
#include "bundled_cases.h"
#include "fixture.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace attn::models {
// Named, not anonymous: the unity builds compile several test files as one.
namespace classifier_parity {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr double kTolerance = 1e-4;

fs::path cases_dir() { return parity::bundled_cases_dir("classifier"); }

TEST(ClassifierParityCases, TheFixtureDirectoryHoldsEveryRandomModel) {
  parity::expect_cases(cases_dir(), {"random-pooling", "random-hierarchical", "random-lstm", "random-cnn"});
}

// The saliency of a flat model and the matrices behind it, where the fixture has them. A CNN channel's
// winner must match where its maximum leads the runner-up position by more than the tolerance (a near tie
// may fall either way in float32).
void expect_saliency(const json& entry, const ClassifierRun& run) {
  const auto saliency = entry.at("saliency").get<std::vector<double>>();
  ASSERT_EQ(static_cast<std::size_t>(run.saliency.size()), saliency.size()) << "saliency";
  for (std::size_t i = 0; i < saliency.size(); ++i) {
    EXPECT_NEAR(run.saliency(static_cast<Index>(i)), saliency[i], kTolerance) << "saliency of word " << i;
  }
  const std::pair<const char*, const Matrix*> matrices[] = {{"input_gate", &run.input_gate},
                                                            {"forget_gate", &run.forget_gate},
                                                            {"written", &run.written},
                                                            {"activations", &run.activations}};
  for (const auto& [key, matrix] : matrices) {
    if (!entry.contains(key)) continue;
    EXPECT_TRUE(parity::all_near(parity::rows_matrix(entry.at(key), parity::kAny, key), *matrix, kTolerance)) << key;
  }
  if (entry.contains("winners")) {
    const Matrix activations = parity::rows_matrix(entry.at("activations"), parity::kAny, "activations");
    const auto winners = entry.at("winners").get<std::vector<int>>();
    const auto weights = entry.at("channel_weights").get<std::vector<double>>();
    ASSERT_EQ(run.winners.size(), winners.size());
    ASSERT_EQ(static_cast<std::size_t>(run.channel_weights.size()), weights.size());
    int compared = 0;
    for (std::size_t c = 0; c < winners.size(); ++c) {
      EXPECT_NEAR(run.channel_weights(static_cast<Index>(c)), weights[c], kTolerance) << "weight of channel " << c;
      const auto row = activations.row(static_cast<Index>(c));
      const double best = row(winners[c]);
      double runner_up = -1.0;
      for (Index p = 0; p < row.size(); ++p) {
        if (p != winners[c]) runner_up = std::max(runner_up, double(row(p)));
      }
      if (best - runner_up <= kTolerance) continue;
      ++compared;
      EXPECT_EQ(run.winners[c], winners[c]) << "winner of channel " << c;
    }
    EXPECT_GT(compared, 0) << "every channel was a near tie: the winners were never compared";
  }
}

class ClassifierParity : public ::testing::TestWithParam<std::string> {};

TEST_P(ClassifierParity, WordsWeightsAndProbabilitiesMatchTorch) {
  json expected;
  ASSERT_TRUE(parity::read_expected(cases_dir() / GetParam(), expected));
  std::shared_ptr<const ClassifierModel> model;
  ASSERT_TRUE(parity::load_case_model(expected, model));
  const bool hierarchical = model->config().hierarchical;
  ClassifierRunner session(model);
  for (const auto& entry : expected["runs"]) {
    const std::string text = entry.at("text");
    SCOPED_TRACE("text \"" + text + "\"");
    auto run = session.run(text);
    ASSERT_TRUE(run.has_value()) << run.error().message();
    EXPECT_EQ(run->input.words, entry.at("tokens").get<std::vector<std::string>>());
    const auto spans = entry.at("spans").get<std::vector<std::vector<int>>>();
    ASSERT_EQ(run->input.spans.size(), spans.size());
    for (std::size_t i = 0; i < spans.size(); ++i) {
      ASSERT_EQ(spans[i].size(), 2u);
      EXPECT_EQ(run->input.spans[i], (Span{spans[i][0], spans[i][1]})) << "span of token " << i;
    }
    EXPECT_EQ(run->input.sentence, entry.at("sentence_of_token").get<std::vector<int>>());
    EXPECT_EQ(run->ids, entry.at("ids").get<std::vector<int>>());
    if (entry.at("word_attention").empty()) {
      EXPECT_EQ(run->word_attention.size(), 0) << "the LSTM and the CNN have no word attention";
    } else {
      EXPECT_TRUE(parity::all_near(parity::rows_matrix(entry.at("word_attention"), parity::kAny, "word attention"),
                                   run->word_attention, kTolerance))
          << "word attention";
    }
    if (!hierarchical) {
      ASSERT_TRUE(entry.contains("saliency")) << "a flat model's fixture must hold its saliency";
      expect_saliency(entry, *run);
    } else {
      EXPECT_EQ(run->saliency.size(), 0) << "a hierarchical model has no saliency over all words";
    }
    const auto sentence = entry.at("sentence_attention").get<std::vector<double>>();
    ASSERT_EQ(static_cast<std::size_t>(run->sentence_attention.size()), sentence.size()) << "sentence attention";
    EXPECT_EQ(sentence.empty(), !hierarchical);
    for (std::size_t i = 0; i < sentence.size(); ++i) {
      EXPECT_NEAR(run->sentence_attention(static_cast<Index>(i)), sentence[i], kTolerance) << "sentence " << i;
    }
    const auto probabilities = entry.at("probabilities").get<std::vector<double>>();
    ASSERT_EQ(run->probabilities.size(), probabilities.size());
    for (std::size_t i = 0; i < probabilities.size(); ++i) {
      EXPECT_NEAR(run->probabilities[i], probabilities[i], kTolerance) << "probability of label " << i;
    }
    EXPECT_EQ(run->predicted, entry.at("predicted").get<int>());
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, ClassifierParity, ::testing::ValuesIn(parity::discover_cases(cases_dir())),
                         parity::case_test_name);
// An empty directory instantiates nothing; ClassifierParityCases fails then.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ClassifierParity);

}  // namespace classifier_parity
}  // namespace attn::models
