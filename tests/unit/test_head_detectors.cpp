// Head detectors (attn/analysis/head_detectors.h): the scores of hand-made maps whose values are known exactly, the
// detection inputs a run makes (prefix, S S, suffix; seeded), the refusals, and the finding the bundled
// induction-gpt2's MODEL_CARD.md states (layer 1 heads 1-3 read offset +2).
#include "attn/analysis/head_detectors.h"
#include "attn/io/safetensors.h"
#include "attn/models/config.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <tuple>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace attn::analysis {
namespace {

namespace fs = std::filesystem;
using models::TransformerModel;

fs::path fixture(const std::string& name) { return fs::path(ATTN_TEST_DATA_DIR) / "transformers" / name; }

std::shared_ptr<const TransformerModel> load(const fs::path& folder) {
  auto m = TransformerModel::load(folder);
  EXPECT_TRUE(m) << (m ? "" : m.error().message());
  return m ? *m : nullptr;
}

const HeadScore& at(const std::vector<HeadScore>& scores, int heads, int layer, int head) {
  return scores.at(std::size_t(layer * heads + head));
}

// One layer of four causal heads over [BOS] S S with R = 4 (9 tokens), each row a distribution:
//   head 0 reads the previous token, head 1 reads position 0 only, head 2 is an induction head at offset +1 in the
//   second copy (uniform over the visible keys elsewhere), head 3 splits the second copy's rows between the earlier
//   occurrence (offset 0) and offset +2 (itself elsewhere).
LayeredTrace hand_made_trace() {
  constexpr Index n = 9, r = 4;
  Matrix prev = Matrix::Zero(n, n), sink = Matrix::Zero(n, n), induction = Matrix::Zero(n, n),
         split = Matrix::Zero(n, n);
  for (Index i = 0; i < n; ++i) {
    prev(i, std::max<Index>(i - 1, 0)) = 1.0f;
    sink(i, 0) = 1.0f;
    if (i >= 1 + r) {
      induction(i, i - r + 1) = 1.0f;
      split(i, i - r) = 0.5f;
      split(i, i - r + 2) = 0.5f;
    } else {
      for (Index j = 0; j <= i; ++j) induction(i, j) = 1.0f / float(i + 1);
      split(i, i) = 1.0f;
    }
  }
  LayeredTrace t;
  HeadStack maps(4, n, n);
  maps.set_head(0, prev);
  maps.set_head(1, sink);
  maps.set_head(2, induction);
  maps.set_head(3, split);
  t.layers.push_back({Stage::Decoder, 0, std::move(maps)});
  return t;
}

TEST(HeadDetectors, HandMadeMapsScoreAsDefined) {
  const auto scores = score_heads(hand_made_trace(), DetectionLayout{.prefix = 1, .length = 4, .suffix = 0}, 2);
  ASSERT_EQ(scores.size(), 4u);
  constexpr float eps = 1e-6f;
  // Previous token: rows 2..8 all on i-1. Sink: rows 1..8, only row 1 (whose previous token is position 0).
  EXPECT_NEAR(scores[0].previous_token, 1.0f, eps);
  EXPECT_NEAR(scores[0].sink, 1.0f / 8.0f, eps);
  EXPECT_NEAR(scores[0].duplicate_token, 0.0f, eps);
  EXPECT_NEAR(scores[0].induction, 0.0f, eps);
  EXPECT_EQ(scores[0].induction_offset, 1);  // every stripe 0: the smallest offset
  // Sink: every row on position 0; row 1's previous token is the prefix, so it is not counted as previous-token.
  EXPECT_NEAR(scores[1].sink, 1.0f, eps);
  EXPECT_NEAR(scores[1].previous_token, 0.0f, eps);
  EXPECT_NEAR(scores[1].induction, 0.0f, eps);
  // Induction +1: the second copy's rows on i-R+1; rows 2..4 are uniform over i+1 keys, rows 1..4 too for the sink.
  EXPECT_NEAR(scores[2].induction, 1.0f, eps);
  EXPECT_EQ(scores[2].induction_offset, 1);
  EXPECT_NEAR(scores[2].duplicate_token, 0.0f, eps);
  EXPECT_NEAR(scores[2].previous_token, (1.0f / 3 + 1.0f / 4 + 1.0f / 5) / 7.0f, eps);
  EXPECT_NEAR(scores[2].sink, (1.0f / 2 + 1.0f / 3 + 1.0f / 4 + 1.0f / 5) / 8.0f, eps);
  // Half on the earlier occurrence, half two tokens after it.
  EXPECT_NEAR(scores[3].duplicate_token, 0.5f, eps);
  EXPECT_NEAR(scores[3].induction, 0.5f, eps);
  EXPECT_EQ(scores[3].induction_offset, 2);
  ASSERT_EQ(scores[3].stripes.size(), 3u);
  EXPECT_NEAR(scores[3].stripes[1], 0.0f, eps);
  EXPECT_NEAR(scores[3].previous_token, 0.0f, eps);
  EXPECT_NEAR(scores[3].sink, 0.0f, eps);
}

TEST(HeadDetectors, NamesRoundTrip) {
  ASSERT_EQ(head_detectors().size(), 4u);
  for (auto d : head_detectors()) EXPECT_EQ(find_head_detector(to_string(d)), d);
  EXPECT_EQ(to_string(HeadDetector::PreviousToken), "previous-token");
  EXPECT_FALSE(find_head_detector("induction-head"));
}

// The card's figures (MODEL_CARD.md: 500 sequences S S, |S| 20-40 drawn with replacement, no prefix): previous
// token 0.952 and 0.926 (layer 0 heads 1 and 3); offset +2: 0.848, 0.670, 0.778 (layer 1 heads 1-3). The detector
// averages 4 sequences of 20 distinct letters (80 rows of the second copy), so its means differ from the card's by
// sampling. Measured over seeds 0-19 (with the default options otherwise): the previous-token scores stay within
// 0.007 of the card's, the +2 scores within 0.098 (head 2: 0.572 to 0.703, head 1 0.828 to 0.885, head 3 0.759 to
// 0.826); seed 0 gives 0.848, 0.657, 0.786. Hence 0.1, while every head that does not do the job scores under 0.1.
TEST(HeadDetectors, InductionModelsCopyingHeadsReadOffsetTwo) {
  const auto model = load(fs::path(ATTN_SOURCE_DIR) / "resources" / "models" / "induction-gpt2");
  ASSERT_TRUE(model);
  auto found = detect_heads(model);
  ASSERT_TRUE(found) << found.error().message();
  ASSERT_EQ(found->layers, 2);
  ASSERT_EQ(found->heads, 4);
  EXPECT_EQ(found->layout.prefix, 0);  // byte 0 is its bos_token_id, but the tokenizer has no BOS and GPT-2 none
  EXPECT_NE(found->pool.find("a-z"), std::string::npos) << found->pool;
  const auto& s = found->scores;
  constexpr float tol = 0.1f;
  EXPECT_NEAR(at(s, 4, 0, 1).previous_token, 0.952f, tol);
  EXPECT_NEAR(at(s, 4, 0, 3).previous_token, 0.926f, tol);
  const float card[] = {0.848f, 0.670f, 0.778f};
  for (int h = 1; h <= 3; ++h) {
    EXPECT_EQ(at(s, 4, 1, h).induction_offset, 2) << "layer 1 head " << h;
    EXPECT_NEAR(at(s, 4, 1, h).induction, card[h - 1], tol) << "layer 1 head " << h;
  }
  // Offset 0: the card's S repeats letters, which splits this head's row among every earlier occurrence of the letter;
  // S of distinct letters leaves it one, so the detector's score is above the card's 0.426 (0.71 with the defaults).
  // It is the layer's duplicate-token head by far.
  EXPECT_GT(at(s, 4, 1, 0).duplicate_token, 0.426f);
  for (int h = 1; h <= 3; ++h) EXPECT_LT(at(s, 4, 1, h).duplicate_token, at(s, 4, 1, 0).duplicate_token / 2);
  // Not an induction head at +1 anywhere (the card's +1 table is at most 0.015).
  for (const auto& x : s) EXPECT_LT(x.stripes.at(1), tol) << "layer " << x.layer << " head " << x.head;
}

// The tiny GPT-2 fixture (32 positions, BOS id 63 in its vocabulary) and BERT (96 tokens, [CLS] and [SEP]).
TEST(HeadDetectors, RunsTheFamilysDetectionInputsSeeded) {
  HeadDetectionOptions options;
  options.sequence_length = 10;
  options.sequences = 3;
  options.seed = 7;
  for (const char* name : {"gpt2", "bert", "distilbert"}) {
    const auto model = load(fixture(name));
    ASSERT_TRUE(model);
    std::vector<double> fractions;
    auto found = detect_heads(model, options, nullptr, [&](double f) { fractions.push_back(f); });
    ASSERT_TRUE(found) << name << ": " << found.error().message();
    EXPECT_EQ(found->scores.size(), std::size_t(model->config().layers * model->config().heads)) << name;
    for (std::size_t i = 0; i < found->scores.size(); ++i) {
      const auto& x = found->scores[i];
      EXPECT_EQ(x.layer * found->heads + x.head, int(i)) << name;  // layer-major
      EXPECT_EQ(x.stripes.size(), 4u);
      EXPECT_GE(x.induction_offset, 1);
      EXPECT_LE(x.induction_offset, 3);
      EXPECT_FLOAT_EQ(x.induction, x.stripes.at(std::size_t(x.induction_offset)));
      for (float v : {x.previous_token, x.duplicate_token, x.induction, x.sink}) {
        EXPECT_GE(v, 0.0f);
        EXPECT_LE(v, 1.0f + 1e-5f);
      }
    }
    ASSERT_FALSE(fractions.empty());
    EXPECT_TRUE(std::is_sorted(fractions.begin(), fractions.end())) << name;
    EXPECT_DOUBLE_EQ(fractions.back(), 1.0);
    ASSERT_EQ(found->inputs.size(), 3u);
    const auto* tok = model->tokenizer();
    const auto& sp = tok->specials();
    for (const auto& ids : found->inputs) {
      ASSERT_EQ(int(ids.size()), found->layout.tokens());
      if (std::string(name) == "gpt2") {
        ASSERT_EQ(found->layout.prefix, 1);
        EXPECT_EQ(ids.front(), *sp.bos);
      } else {
        ASSERT_EQ(found->layout.prefix, 1);
        ASSERT_EQ(found->layout.suffix, 1);
        EXPECT_EQ(ids.front(), *sp.cls);
        EXPECT_EQ(ids.back(), *sp.sep);
      }
      const std::vector<int> first(ids.begin() + 1, ids.begin() + 11), second(ids.begin() + 11, ids.begin() + 21);
      EXPECT_EQ(first, second);
      EXPECT_EQ(std::set<int>(first.begin(), first.end()).size(), 10u);  // no duplicates within S
    }
    EXPECT_NE(found->inputs[0], found->inputs[1]);
    // Deterministic: the same options give the same inputs and scores; another seed other inputs.
    auto again = detect_heads(model, options);
    ASSERT_TRUE(again);
    EXPECT_EQ(again->inputs, found->inputs);
    for (std::size_t i = 0; i < found->scores.size(); ++i) {
      EXPECT_EQ(again->scores[i].induction, found->scores[i].induction);
      EXPECT_EQ(again->scores[i].sink, found->scores[i].sink);
    }
    options.seed = 8;
    auto other = detect_heads(model, options);
    options.seed = 7;
    ASSERT_TRUE(other);
    EXPECT_NE(other->inputs, found->inputs);
  }
}

// A decoder (the bundled Llama, stories260k): BOS before S S, its 512-token SentencePiece vocabulary drawn whole (its
// letters are not each one token).
TEST(HeadDetectors, DecoderReadsBosThenSTwice) {
  const auto model = load(fs::path(ATTN_SOURCE_DIR) / "resources" / "models" / "stories260k");
  ASSERT_TRUE(model);
  HeadDetectionOptions options;
  options.sequences = 2;
  auto found = detect_heads(model, options);
  ASSERT_TRUE(found) << found.error().message();
  EXPECT_EQ(found->scores.size(), std::size_t(model->config().layers * model->config().heads));
  ASSERT_EQ(found->layout.prefix, 1);
  EXPECT_EQ(found->layout.suffix, 0);
  const auto bos = model->tokenizer()->specials().bos;
  ASSERT_TRUE(bos);
  for (const auto& ids : found->inputs) {
    ASSERT_EQ(ids.size(), 41u);
    EXPECT_EQ(ids.front(), *bos);
    EXPECT_TRUE(std::equal(ids.begin() + 1, ids.begin() + 21, ids.begin() + 21));
  }
}

TEST(HeadDetectors, AlphabetIsWhatSIsDrawnFrom) {
  const auto model = load(fixture("gpt2"));
  ASSERT_TRUE(model);
  HeadDetectionOptions options;
  options.sequence_length = 3;
  options.max_offset = 2;
  options.alphabet = "abcabc";
  auto found = detect_heads(model, options);
  ASSERT_TRUE(found) << found.error().message();
  for (const auto& ids : found->inputs) {
    for (std::size_t i = 1; i < ids.size(); ++i) EXPECT_TRUE(ids[i] >= 0 && ids[i] <= 2) << ids[i];  // a, b, c
  }
  options.sequence_length = 4;
  auto refused = detect_heads(model, options);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, ErrorKind::OutOfRange);
  EXPECT_NE(refused.error().reason.find("3 distinct tokens"), std::string::npos) << refused.error().message();
  EXPECT_NE(refused.error().reason.find("at most 3"), std::string::npos) << refused.error().message();
}

TEST(HeadDetectors, RefusesImagesModelsWithoutTokenizerAndLongSequences) {
  HeadDetectionOptions options;
  options.model_name = "my-model";
  const auto vit = load(fixture("vit"));
  ASSERT_TRUE(vit);
  auto refused = detect_heads(vit, options);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, ErrorKind::Unsupported);
  EXPECT_EQ(refused.error().file, "my-model");
  EXPECT_NE(refused.error().reason.find("ViT"), std::string::npos) << refused.error().message();

  const auto gpt2 = load(fixture("gpt2"));
  ASSERT_TRUE(gpt2);
  auto config = models::load_config(fixture("gpt2"));
  ASSERT_TRUE(config) << config.error().message();
  auto weights = io::SafeTensors::open(fixture("gpt2") / "model.safetensors");
  ASSERT_TRUE(weights) << weights.error().message();
  auto bare = TransformerModel::from_parts(*config, *weights, nullptr);
  ASSERT_TRUE(bare) << bare.error().message();
  refused = detect_heads(*bare, options);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, ErrorKind::Unsupported);
  EXPECT_EQ(refused.error().file, "my-model");
  EXPECT_NE(refused.error().reason.find("tokenizer"), std::string::npos) << refused.error().message();

  // The default R = 20 makes 1 + 2 x 20 = 41 tokens; the fixture has 32 positions, so R is at most 15.
  refused = detect_heads(gpt2, options);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, ErrorKind::TooLarge);
  for (const char* figure : {"41 tokens", "32 positions", "at most 15"}) {
    EXPECT_NE(refused.error().reason.find(figure), std::string::npos) << refused.error().message();
  }
  options.sequence_length = 10;
  for (auto [r, b, k] :
       {std::tuple{1, 4, 1}, {10, 0, 3}, {10, 4, 0}, {10, 4, 10}, {10, kMaxDetectionSequences + 1, 3}}) {
    options.sequence_length = r;
    options.sequences = b;
    options.max_offset = k;
    refused = detect_heads(gpt2, options);
    ASSERT_FALSE(refused) << r << " " << b << " " << k;
    EXPECT_EQ(refused.error().kind, ErrorKind::OutOfRange) << refused.error().message();
  }
}

TEST(HeadDetectors, CancelStopsBetweenRuns) {
  const auto model = load(fixture("gpt2"));
  ASSERT_TRUE(model);
  HeadDetectionOptions options;
  options.sequence_length = 10;
  options.sequences = 8;
  std::atomic<bool> cancel{false};
  int calls = 0;
  auto found = detect_heads(model, options, &cancel, [&](double) {
    if (++calls == 3) cancel = true;
  });
  ASSERT_FALSE(found);
  EXPECT_EQ(found.error().kind, ErrorKind::Cancelled);
  EXPECT_LT(calls, 8 * model->config().layers);
}
}  // namespace
}  // namespace attn::analysis
