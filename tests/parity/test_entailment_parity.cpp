// The word-by-word entailment model against torch: every folder of tests/data/entailment holds an expected.json
// written by tools/parity/make_entailment_fixtures.py (tools/train/entailment_torch.py in float64, cross-checked
// there by a numpy implementation of MODELS.md section 5) whose "model" names the model folder: a tiny random model
// and the shipped entailment-wbw. Words, spans, ids and the prediction must match exactly, every attention weight
// and probability within 1e-4.
#include "attn/models/entailment.h"
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
namespace entailment_parity {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr double kTolerance = 1e-4;

fs::path cases_dir() { return parity::bundled_cases_dir("entailment"); }

TEST(EntailmentParityCases, TheFixtureDirectoryHoldsTheRandomAndTheShippedModel) {
  parity::expect_cases(cases_dir(), {"random-entailment", "entailment-wbw"});
}

void expect_words(const json& entry, const std::string& side, const WordSplit& words, const std::vector<int>& ids) {
  EXPECT_EQ(words.words, entry.at(side + "_words").get<std::vector<std::string>>()) << side;
  const auto spans = entry.at(side + "_spans").get<std::vector<std::vector<int>>>();
  ASSERT_EQ(words.spans.size(), spans.size()) << side;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    ASSERT_EQ(spans[i].size(), 2u);
    EXPECT_EQ(words.spans[i], (Span{spans[i][0], spans[i][1]})) << side << " span of word " << i;
  }
  EXPECT_EQ(ids, entry.at(side + "_ids").get<std::vector<int>>()) << side;
}

class EntailmentParity : public ::testing::TestWithParam<std::string> {};

TEST_P(EntailmentParity, WordsAttentionAndProbabilitiesMatchTorch) {
  json expected;
  ASSERT_TRUE(parity::read_expected(cases_dir() / GetParam(), expected));
  std::shared_ptr<const EntailmentModel> model;
  ASSERT_TRUE(parity::load_case_model(expected, model));
  EntailmentRunner runner(model);
  for (const auto& entry : expected["runs"]) {
    const std::string premise = entry.at("premise"), hypothesis = entry.at("hypothesis");
    SCOPED_TRACE("premise \"" + premise + "\", hypothesis \"" + hypothesis + "\"");
    auto run = runner.run(premise, hypothesis);
    ASSERT_TRUE(run.has_value()) << run.error().message();
    expect_words(entry, "premise", run->premise, run->premise_ids);
    expect_words(entry, "hypothesis", run->hypothesis, run->hypothesis_ids);
    const Matrix want = parity::rows_matrix(entry.at("attention"), parity::kAny, "attention");
    ASSERT_EQ(run->attention.rows(), want.rows());
    ASSERT_EQ(run->attention.cols(), want.cols());
    EXPECT_TRUE(parity::all_near(want, run->attention, kTolerance)) << "attention";
    const auto probabilities = entry.at("probabilities").get<std::vector<double>>();
    ASSERT_EQ(run->probabilities.size(), probabilities.size());
    for (std::size_t i = 0; i < probabilities.size(); ++i) {
      EXPECT_NEAR(run->probabilities[i], probabilities[i], kTolerance) << "probability of label " << i;
    }
    EXPECT_EQ(run->predicted, entry.at("predicted").get<int>());
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, EntailmentParity, ::testing::ValuesIn(parity::discover_cases(cases_dir())),
                         parity::case_test_name);
// An empty directory instantiates nothing; EntailmentParityCases fails then.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(EntailmentParity);

}  // namespace entailment_parity
}  // namespace attn::models
