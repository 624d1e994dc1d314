// Attribution for the word-by-word entailment model against torch autograd: tests/data/attribution/entailment-*.json,
// written by tools/parity/make_entailment_attribution_fixtures.py (entailment_torch's model in float64, its gradient
// checked there against central differences) for the random parity model and the shipped entailment-wbw. Gradient x
// input's and integrated gradients' (16 steps) scores must match within 1e-4 of the largest score, the logits at the
// input and at the zero embedding within 1e-4; on the shipped model 256 steps of integrated gradients sum to the
// logit's change within 1%.
#include "attn/models/entailment.h"
#include "bundled_cases.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace attn::models {
// Named, not anonymous: the unity builds compile several test files as one.
namespace entailment_attribution_parity {

namespace fs = std::filesystem;
using nlohmann::json;

// float32 against float64, relative to the largest score compared.
constexpr double kTolerance = 1e-4;

json read_fixture(const std::string& name) {
  const fs::path file = parity::source_dir() / "tests" / "data" / "attribution" / (name + ".json");
  std::ifstream in(file);
  if (!in) {
    ADD_FAILURE() << "missing " << file;
    return {};
  }
  json out = json::parse(in, nullptr, false);
  if (out.is_discarded() || !out.contains("model") || !out.contains("runs") || out["runs"].empty()) {
    ADD_FAILURE() << file << " is not a fixture with a model and runs";
    return {};
  }
  return out;
}

// max |got - want| / max |want| over the scores.
double relative_difference(const Vector& got, const std::vector<double>& want) {
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    diff = std::max(diff, std::abs(static_cast<double>(got(static_cast<Index>(i))) - want[i]));
    scale = std::max(scale, std::abs(want[i]));
  }
  return diff / std::max(scale, 1e-12);
}

void expect_scores(const WordAttribution& a, const json& entry, const std::string& key) {
  const auto want = entry.at(key).get<std::vector<double>>();
  ASSERT_EQ(a.scores.size(), static_cast<Index>(want.size())) << key;
  EXPECT_EQ(a.premise_words, static_cast<int>(entry.at("premise_ids").size())) << key;
  EXPECT_LE(relative_difference(a.scores, want), kTolerance) << key;
  EXPECT_EQ(a.label, entry.at("label").get<int>()) << key;
  EXPECT_NEAR(a.value, entry.at("value").get<double>(), kTolerance) << key;
}

class EntailmentAttributionParity : public ::testing::TestWithParam<std::string> {};

TEST_P(EntailmentAttributionParity, ScoresAndLogitsMatchTorchAutograd) {
  const json fixture = read_fixture(GetParam());
  ASSERT_FALSE(fixture.is_null());
  std::shared_ptr<const EntailmentModel> model;
  ASSERT_TRUE(parity::load_case_model(fixture, model));
  EntailmentRunner runner(model);
  for (const auto& entry : fixture["runs"]) {
    const std::string premise = entry.at("premise"), hypothesis = entry.at("hypothesis");
    SCOPED_TRACE("premise \"" + premise + "\", hypothesis \"" + hypothesis + "\"");
    auto run = runner.run(premise, hypothesis);
    ASSERT_TRUE(run.has_value()) << run.error().message();
    ASSERT_EQ(run->premise_ids, entry.at("premise_ids").get<std::vector<int>>());
    ASSERT_EQ(run->hypothesis_ids, entry.at("hypothesis_ids").get<std::vector<int>>());
    WordAttributionOptions o;
    o.label = entry.at("label").get<int>();
    auto gxi = attribute_words(*model, *run, o);
    ASSERT_TRUE(gxi.has_value()) << gxi.error().message();
    expect_scores(*gxi, entry, "grad_x_input");
    EXPECT_EQ(gxi->baseline_value, 0.0f);
    EXPECT_EQ(gxi->gap, 0.0f);
    o.method = WordAttributionMethod::IntegratedGradients;
    o.steps = fixture.at("steps").get<int>();
    auto ig = attribute_words(*model, *run, o);
    ASSERT_TRUE(ig.has_value()) << ig.error().message();
    expect_scores(*ig, entry, "integrated_gradients");
    EXPECT_NEAR(ig->baseline_value, entry.at("baseline_value").get<double>(), kTolerance);
    EXPECT_NEAR(ig->gap, entry.at("gap").get<double>(), kTolerance);
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, EntailmentAttributionParity,
                         ::testing::Values(std::string("entailment-random"), std::string("entailment-wbw")),
                         parity::case_test_name);

// The midpoint rule's completeness on the trained model: 16 steps miss the logit's change from the zero embedding by
// up to 7 (the fixtures' gaps), 256 steps by at most 0.005 of changes of 2.5 to 6.3 (torch, float64); here every
// label's scores must sum to the change within 1%.
TEST(EntailmentAttribution, IntegratedGradientsNearlySumToTheLogitsChangeOnTheShippedModel) {
  auto model = EntailmentModel::load(parity::source_dir() / "resources" / "models" / "entailment-wbw");
  ASSERT_TRUE(model.has_value()) << model.error().message();
  EntailmentRunner runner(*model);
  for (const auto& [premise, hypothesis] :
       {std::pair{"A young man is sleeping on the beach.", "A man is sleeping."},
        std::pair{"the farmer is eating near the river", "the farmer is not eating near the river"}}) {
    auto run = runner.run(premise, hypothesis);
    ASSERT_TRUE(run.has_value()) << run.error().message();
    for (int label = 0; label < 3; ++label) {
      SCOPED_TRACE(std::string(premise) + " / " + hypothesis + ", label " + std::to_string(label));
      WordAttributionOptions o;
      o.method = WordAttributionMethod::IntegratedGradients;
      o.label = label;
      o.steps = 256;
      auto a = attribute_words(**model, *run, o);
      ASSERT_TRUE(a.has_value()) << a.error().message();
      const double change = static_cast<double>(a->value) - a->baseline_value;
      EXPECT_GT(std::abs(change), 1.0);
      EXPECT_LE(std::abs(a->gap), 0.01 * std::abs(change)) << "change " << change;
      EXPECT_NEAR(a->scores.sum() - change, a->gap, 1e-4);
    }
  }
}

}  // namespace entailment_attribution_parity
}  // namespace attn::models
