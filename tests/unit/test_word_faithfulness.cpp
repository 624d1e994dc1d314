// Deletion and insertion curves of the word models (attn/models/word_faithfulness.h), on the shipped review and
// entailment models: every point against a run of the ids made here by hand (<unk> put in), the ends of the two
// curves meeting, the premise-only ranking, and the refusals; ClassifierRunner::run_ids and EntailmentRunner::run_ids
// as the text's own run and their refusals.
#include "attn/models/word_faithfulness.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <vector>

namespace attn::models {
namespace {

namespace fs = std::filesystem;

const fs::path kModels = fs::path(ATTN_SOURCE_DIR) / "resources" / "models";
constexpr int kUnk = 1;

class ReviewCurves : public ::testing::Test {
 protected:
  void SetUp() override {
    auto m = ClassifierModel::load(kModels / "sentiment-hierarchical");
    ASSERT_TRUE(m) << m.error().message();
    model = *m;
    runner = std::make_unique<ClassifierRunner>(model);
    auto r = runner->run("The food was not good. We sat near the window.");
    ASSERT_TRUE(r) << r.error().message();
    run = std::move(*r);
    ASSERT_EQ(run.ids.size(), 12u);  // the sentences' full stops are words
  }
  // The probability of `label` with the words at `positions` replaced by <unk>.
  double p_without(const std::vector<int>& positions, int label) {
    std::vector<int> ids = run.ids;
    for (const int p : positions) ids[static_cast<std::size_t>(p)] = kUnk;
    auto r = runner->run_ids(run.input, ids);
    EXPECT_TRUE(r) << r.error().message();
    return r ? r->probabilities[static_cast<std::size_t>(label)] : -1;
  }
  std::shared_ptr<const ClassifierModel> model;
  std::unique_ptr<ClassifierRunner> runner;
  ClassifierRun run;
  // Ranking: "not" (3), "good" (4), then "was" (2), "food" (1), then the rest by position (ties).
  std::vector<float> scores{0, 0.2f, 0.5f, 0.9f, 0.8f, 0, 0, 0, 0, 0, 0, 0};
  std::vector<int> want_order{3, 4, 2, 1, 0, 5, 6, 7, 8, 9, 10, 11};
};

TEST_F(ReviewCurves, RunIdsOfTheTextsOwnIdsIsTheRun) {
  auto again = runner->run_ids(run.input, run.ids);
  ASSERT_TRUE(again) << again.error().message();
  ASSERT_EQ(again->probabilities.size(), run.probabilities.size());
  for (std::size_t i = 0; i < run.probabilities.size(); ++i)
    EXPECT_FLOAT_EQ(again->probabilities[i], run.probabilities[i]);
  EXPECT_EQ(again->predicted, run.predicted);
  EXPECT_EQ(run.predicted, 0) << "the shipped model reads 'not good' as negative";
}

TEST_F(ReviewCurves, DeletionAndInsertionEqualRunsOfTheWordsReplaced) {
  auto del = deletion_curve(*runner, run, scores);
  auto ins = insertion_curve(*runner, run, scores);
  ASSERT_TRUE(del) << del.error().message();
  ASSERT_TRUE(ins) << ins.error().message();
  EXPECT_EQ(del->ranked, want_order);
  EXPECT_EQ(del->token, run.predicted);
  EXPECT_EQ(del->position, -1);
  EXPECT_EQ(del->replacement, kUnk);
  ASSERT_EQ(del->k.size(), 13u);
  ASSERT_EQ(ins->probability.size(), 13u);
  for (std::size_t k = 0; k <= 12; ++k) {
    const std::vector<int> top(want_order.begin(), want_order.begin() + static_cast<long>(k));
    const std::vector<int> rest(want_order.begin() + static_cast<long>(k), want_order.end());
    EXPECT_NEAR(del->probability[k], p_without(top, run.predicted), 1e-6) << "deletion k = " << k;
    EXPECT_NEAR(ins->probability[k], p_without(rest, run.predicted), 1e-6) << "insertion k = " << k;
  }
  EXPECT_NEAR(del->probability.front(), run.probabilities[0], 1e-6);
  EXPECT_NEAR(ins->probability.back(), run.probabilities[0], 1e-6);
  EXPECT_NEAR(del->probability.back(), ins->probability.front(), 1e-9) << "both: every word <unk>";
  // Taking "not" and "good" away leaves nothing negative to read.
  EXPECT_LT(del->probability[2], del->probability[0] - 0.2);
}

TEST_F(ReviewCurves, AnotherLabelAndFewerPoints) {
  WordFaithfulnessOptions o;
  o.label = 1;
  o.steps = 2;
  auto del = deletion_curve(*runner, run, scores, o);
  ASSERT_TRUE(del) << del.error().message();
  EXPECT_EQ(del->token, 1);
  EXPECT_EQ(del->k, (std::vector<int>{0, 6, 12}));
  EXPECT_NEAR(del->probability[1], p_without({3, 4, 2, 1, 0, 5}, 1), 1e-6);
}

TEST_F(ReviewCurves, Refusals) {
  std::vector<float> short_scores(11, 0.0f);
  auto a = deletion_curve(*runner, run, short_scores);
  ASSERT_FALSE(a);
  EXPECT_NE(a.error().message().find("11 scores for 12 words"), std::string::npos) << a.error().message();
  std::vector<float> nan_scores = scores;
  nan_scores[4] = std::nanf("");
  auto b = insertion_curve(*runner, run, nan_scores);
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().message().find("score 4 is not finite"), std::string::npos) << b.error().message();
  WordFaithfulnessOptions o;
  o.label = 2;
  auto c = deletion_curve(*runner, run, scores, o);
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message().find("label 2 is out of range (0 .. 1)"), std::string::npos) << c.error().message();

  std::vector<int> ids = run.ids;
  ids[7] = static_cast<int>(model->config().vocab.size());
  auto d = runner->run_ids(run.input, ids);
  ASSERT_FALSE(d);
  EXPECT_NE(d.error().message().find("of word 7 is out of the vocabulary"), std::string::npos) << d.error().message();
  ids.pop_back();
  auto e = runner->run_ids(run.input, ids);
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().message().find("11 ids for 12 words"), std::string::npos) << e.error().message();
  WordSplit shuffled = run.input;
  shuffled.sentence[2] = 1;  // sentence 1 starts, then sentence 0 again
  auto f = runner->run_ids(shuffled, run.ids);
  ASSERT_FALSE(f);
  EXPECT_NE(f.error().message().find("sentence indices"), std::string::npos) << f.error().message();
}

TEST(EntailmentCurves, PremiseOnlyRanksThePremiseAndEqualsRunsOfTheWordsReplaced) {
  auto m = EntailmentModel::load(kModels / "entailment-wbw");
  ASSERT_TRUE(m) << m.error().message();
  EntailmentRunner runner(*m);
  auto r = runner.run("a big dog is running in the park", "an animal is running in the park");
  ASSERT_TRUE(r) << r.error().message();
  ASSERT_EQ(r->premise_ids.size(), 8u);
  ASSERT_EQ(r->hypothesis_ids.size(), 7u);
  // Premise "dog" (2) first, then "big" (1); the hypothesis's scores are high but not read.
  std::vector<float> scores(15, 0.0f);
  scores[2] = 0.9f;
  scores[1] = 0.5f;
  for (int i = 8; i < 15; ++i) scores[static_cast<std::size_t>(i)] = 5.0f;
  WordFaithfulnessOptions o;
  o.premise_only = true;
  auto del = deletion_curve(runner, *r, scores, o);
  ASSERT_TRUE(del) << del.error().message();
  EXPECT_EQ(del->ranked, (std::vector<int>{2, 1, 0, 3, 4, 5, 6, 7}));
  ASSERT_EQ(del->probability.size(), 9u);
  std::vector<int> premise = r->premise_ids;
  premise[2] = kUnk;
  auto one = runner.run_ids(r->premise, r->hypothesis, premise, r->hypothesis_ids);
  ASSERT_TRUE(one) << one.error().message();
  EXPECT_NEAR(del->probability[1], one->probabilities[static_cast<std::size_t>(r->predicted)], 1e-6);
  EXPECT_NEAR(del->probability[0], r->probabilities[static_cast<std::size_t>(r->predicted)], 1e-6);

  // Every word rankable: the hypothesis's come first.
  auto all = insertion_curve(runner, *r, scores);
  ASSERT_TRUE(all) << all.error().message();
  EXPECT_EQ(all->ranked.size(), 15u);
  EXPECT_EQ(all->ranked.front(), 8);

  std::vector<int> bad = r->hypothesis_ids;
  bad[0] = -3;
  auto refused = runner.run_ids(r->premise, r->hypothesis, r->premise_ids, bad);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message().find("id -3 of word 0 is out of the vocabulary"), std::string::npos)
      << refused.error().message();
}

}  // namespace
}  // namespace attn::models
