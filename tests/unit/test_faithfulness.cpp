// Deletion and insertion curves (attn/models/faithfulness.h): every point against run_ids of the perturbed ids made
// here by hand, the tokens never removed, the AOPC formulas on a known curve, and the refusals.
#include "attn/models/faithfulness.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <vector>

namespace attn::models {
namespace {

namespace fs = std::filesystem;

std::shared_ptr<const TransformerModel> load(const fs::path& folder) {
  auto model = TransformerModel::load(folder);
  EXPECT_TRUE(model) << model.error().message();
  return model ? *model : nullptr;
}

// The probability of `token` at `position` for `ids`, from the logits of every position.
double p_of(TransformerRunner& runner, const std::vector<int>& ids, int position, int token) {
  RunOptions o;
  o.all_logits = true;
  auto run = runner.run_ids(ids, {}, o);
  EXPECT_TRUE(run) << run.error().message();
  if (!run) return -1;
  const auto row = run->logits.row(position - run->logits_from).cast<double>();
  return std::exp(row(token) - row.maxCoeff()) / (row.array() - row.maxCoeff()).exp().sum();
}

class GptCurves : public ::testing::Test {
 protected:
  void SetUp() override {
    model = load(fs::path(ATTN_TEST_DATA_DIR) / "transformers" / "gpt2");
    ASSERT_TRUE(model);
    runner = std::make_unique<TransformerRunner>(model);
    auto r = runner->run_ids(ids);
    ASSERT_TRUE(r) << r.error().message();
    run = std::move(*r);
  }
  std::shared_ptr<const TransformerModel> model;
  std::unique_ptr<TransformerRunner> runner;
  std::vector<int> ids{5, 17, 9, 33, 2, 40, 11};
  TransformerRun run;
  // Ranking: position 3 first, then 1, 5, 0 (tie with 2: earlier first), 2, 4; the last (explained) is never ranked.
  std::vector<float> scores{0.1f, 0.5f, 0.1f, 0.9f, -0.2f, 0.3f, 7.0f};
  std::vector<int> want_order{3, 1, 5, 0, 2, 4};
};

TEST_F(GptCurves, DeletionByReplacementEqualsRunIdsAtEveryPoint) {
  FaithfulnessOptions o;
  o.token = 12;
  auto curve = deletion_curve(*runner, run, scores, o);
  ASSERT_TRUE(curve) << curve.error().message();
  EXPECT_EQ(curve->ranked, want_order);
  EXPECT_EQ(curve->position, 6);
  ASSERT_EQ(curve->k.size(), 7u);
  ASSERT_GE(curve->replacement, 0);
  EXPECT_FALSE(curve->removal.empty());
  std::vector<int> x = ids;
  for (std::size_t k = 0; k <= want_order.size(); ++k) {
    if (k > 0) x[static_cast<std::size_t>(want_order[k - 1])] = curve->replacement;
    EXPECT_EQ(curve->k[k], static_cast<int>(k));
    EXPECT_NEAR(curve->probability[k], p_of(*runner, x, 6, 12), 1e-6) << "k " << k;
  }
  EXPECT_NEAR(aopc(*curve), deletion_aopc(curve->probability), 0);
}

TEST_F(GptCurves, InsertionByDeletingMovesTheExplainedPosition) {
  FaithfulnessOptions o;
  o.removal = FaithfulnessOptions::Removal::Delete;
  auto curve = insertion_curve(*runner, run, scores, o);
  ASSERT_TRUE(curve) << curve.error().message();
  EXPECT_TRUE(curve->insertion);
  EXPECT_EQ(curve->replacement, -1);
  // The default token: the model's top prediction on the full input.
  RunOptions all;
  all.all_logits = true;
  auto full = runner->run_ids(ids, {}, all);
  ASSERT_TRUE(full);
  Index best = 0;
  full->logits.row(6 - full->logits_from).maxCoeff(&best);
  EXPECT_EQ(curve->token, static_cast<int>(best));
  for (std::size_t k = 0; k <= want_order.size(); ++k) {
    std::vector<int> kept;  // the top k and the explained token, in their order
    for (int i = 0; i < 7; ++i) {
      const bool top = std::find(want_order.begin(), want_order.begin() + static_cast<long>(k), i) !=
                       want_order.begin() + static_cast<long>(k);
      if (top || i == 6) kept.push_back(ids[static_cast<std::size_t>(i)]);
    }
    EXPECT_NEAR(curve->probability[k], p_of(*runner, kept, static_cast<int>(kept.size()) - 1, curve->token), 1e-6)
        << "k " << k;
  }
  EXPECT_NEAR(curve->probability.back(), p_of(*runner, ids, 6, curve->token), 1e-6);
}

TEST_F(GptCurves, AnEarlierPositionKeepsLaterTokensAndSteps) {
  FaithfulnessOptions o;
  o.position = 4;
  o.token = 3;
  o.steps = 2;
  auto curve = deletion_curve(*runner, run, scores, o);
  ASSERT_TRUE(curve) << curve.error().message();
  // Positions 5 and 6 come after the explained one (they cannot change it); 4 is its query.
  EXPECT_EQ(curve->ranked, (std::vector<int>{3, 1, 0, 2}));
  EXPECT_EQ(curve->k, (std::vector<int>{0, 2, 4}));
  std::vector<int> x = ids;
  for (const int p : {3, 1}) x[static_cast<std::size_t>(p)] = curve->replacement;
  EXPECT_NEAR(curve->probability[1], p_of(*runner, x, 4, 3), 1e-6);
}

TEST_F(GptCurves, Refusals) {
  std::vector<float> short_ranking(scores.begin(), scores.end() - 1);
  auto bad_length = deletion_curve(*runner, run, short_ranking);
  ASSERT_FALSE(bad_length);
  EXPECT_EQ(bad_length.error().kind, ErrorKind::Mismatch);
  EXPECT_NE(bad_length.error().message().find("6 scores for 7 tokens"), std::string::npos);

  FaithfulnessOptions o;
  o.position = 7;
  auto out_of_range = insertion_curve(*runner, run, scores, o);
  ASSERT_FALSE(out_of_range);
  EXPECT_EQ(out_of_range.error().kind, ErrorKind::OutOfRange);
  EXPECT_NE(out_of_range.error().message().find("position 7 is out of range (0 .. 6)"), std::string::npos);

  o.position = -1;
  o.token = 64;
  auto bad_token = deletion_curve(*runner, run, scores, o);
  ASSERT_FALSE(bad_token);
  EXPECT_NE(bad_token.error().message().find("token 64"), std::string::npos);

  std::vector<float> nan_scores = scores;
  nan_scores[2] = std::nanf("");
  auto nan = deletion_curve(*runner, run, nan_scores);
  ASSERT_FALSE(nan);
  EXPECT_NE(nan.error().message().find("score 2 is not finite"), std::string::npos);
}

TEST(Faithfulness, BosIsNeverRemovedAndUnknownReplaces) {
  auto model = load(fs::path(ATTN_SOURCE_DIR) / "resources" / "models" / "stories260k");
  ASSERT_TRUE(model);
  TransformerRunner runner(model);
  auto run = runner.run_text("Once upon a time there was a cat");
  ASSERT_TRUE(run) << run.error().message();
  ASSERT_EQ(run->ids.front(), 1);  // BOS
  std::vector<float> scores(run->ids.size(), 0.0f);
  scores[0] = 100.0f;  // ranked first if it could be
  auto curve = deletion_curve(runner, *run, scores);
  ASSERT_TRUE(curve) << curve.error().message();
  EXPECT_EQ(curve->ranked.size(), run->ids.size() - 2);
  EXPECT_EQ(curve->ranked.front(), 1);
  EXPECT_EQ(std::count(curve->ranked.begin(), curve->ranked.end(), 0), 0);
  EXPECT_EQ(curve->replacement, 0);
  EXPECT_NE(curve->removal.find("<unk>"), std::string::npos);
}

// induction-gpt2's byte tokenizer names no special token: config.json's eos_token_id (byte 0) replaces.
TEST(Faithfulness, ConfigEndOfTextReplacesWhenTheTokenizerHasNone) {
  auto model = load(fs::path(ATTN_SOURCE_DIR) / "resources" / "models" / "induction-gpt2");
  ASSERT_TRUE(model);
  TransformerRunner runner(model);
  auto run = runner.run_text("qwhdkqwh");
  ASSERT_TRUE(run) << run.error().message();
  std::vector<float> scores(run->ids.size(), 0.0f);
  auto curve = insertion_curve(runner, *run, scores);
  ASSERT_TRUE(curve) << curve.error().message();
  EXPECT_EQ(curve->replacement, 0);
  EXPECT_NE(curve->removal.find("eos_token_id"), std::string::npos);
  EXPECT_EQ(curve->ranked, (std::vector<int>{0, 1, 2, 3, 4, 5, 6}));
}

TEST(Faithfulness, AopcOfAKnownCurve) {
  const std::vector<double> p{0.8, 0.5, 0.2, 0.1};
  // Samek et al. 2017: (1 / (K + 1)) sum_k (p_0 - p_k) = (0 + 0.3 + 0.6 + 0.7) / 4.
  EXPECT_NEAR(deletion_aopc(p), 0.4, 1e-12);
  EXPECT_NEAR(insertion_area(p), 0.4, 1e-12);
  const std::vector<double> q{0.1, 0.6, 0.9};
  EXPECT_NEAR(deletion_aopc(q), (0.0 - 0.5 - 0.8) / 3, 1e-12);
  EXPECT_NEAR(insertion_area(q), 1.6 / 3, 1e-12);
  EXPECT_TRUE(std::isnan(deletion_aopc({})));
  FaithfulnessCurve c;
  c.probability = q;
  c.insertion = true;
  EXPECT_NEAR(aopc(c), 1.6 / 3, 1e-12);
}

}  // namespace
}  // namespace attn::models
