// Attention flow (attn/analysis/attention_flow.h): the scores of networkx's max-flow on the paper's whole graph
// (tests/data/attribution/attention_flow_networkx.json, written by tools/parity/attention_flow_networkx.py), bounds
// every flow obeys (one layer is its weight; the source's capacity, the sink's and the widest path bracket it), the
// trace entry point against the matrices', the refusals with their figures, and cancelling.
#include "attn/analysis/attention_flow.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace attn::analysis {
namespace {

using nlohmann::json;

// Seeded softmax rows; causal: keys <= query only.
std::vector<Matrix> flow_layers(int layers, Index tokens, bool causal, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> z(0.0f, 2.0f);
  std::vector<Matrix> out;
  for (int l = 0; l < layers; ++l) {
    Matrix a = Matrix::Zero(tokens, tokens);
    for (Index i = 0; i < tokens; ++i) {
      const Index keys = causal ? i + 1 : tokens;
      for (Index j = 0; j < keys; ++j) a(i, j) = std::exp(z(rng));
      a.row(i) /= a.row(i).sum();
    }
    out.push_back(std::move(a));
  }
  return out;
}

std::vector<Matrix> fixture_layers(const json& tensor) {
  std::vector<Matrix> out;
  for (const auto& layer : tensor.at("data")) {
    const auto n = static_cast<Index>(layer.size());
    Matrix a(n, n);
    for (Index i = 0; i < n; ++i) {
      for (Index j = 0; j < n; ++j) a(i, j) = layer.at(std::size_t(i)).at(std::size_t(j)).get<float>();
    }
    out.push_back(std::move(a));
  }
  return out;
}

LayeredTrace flow_trace(const std::vector<std::vector<Matrix>>& layers) {
  LayeredTrace t;
  const Index n = layers.front().front().rows();
  for (Index i = 0; i < n; ++i) t.tokens.push_back("t" + std::to_string(i));
  for (std::size_t l = 0; l < layers.size(); ++l) {
    HeadStack s(static_cast<int>(layers[l].size()), n, n);
    for (std::size_t h = 0; h < layers[l].size(); ++h) s.set_head(static_cast<int>(h), layers[l][h]);
    t.layers.push_back({Stage::Encoder, static_cast<int>(l), std::move(s)});
  }
  return t;
}

TEST(AttentionFlow, MatchesNetworkxMaximumFlowValue) {
  std::ifstream in(std::string(ATTN_TEST_DATA_DIR) + "/attribution/attention_flow_networkx.json");
  ASSERT_TRUE(in) << "tests/data/attribution/attention_flow_networkx.json: run tools/parity/attention_flow_networkx.py";
  const json doc = json::parse(in);
  int compared = 0;
  for (const auto& c : doc.at("cases")) {
    const auto layers = fixture_layers(c.at("layers"));
    const auto& targets = c.at("targets");
    for (std::size_t k = 0; k < targets.size(); ++k) {
      const auto t = targets[k].get<Index>();
      auto flow = attention_flow(layers, t, c.at("residual").get<float>());
      ASSERT_TRUE(flow) << flow.error().message();
      const auto& want = c.at("scores").at(k);
      ASSERT_EQ(flow->scores.size(), want.size());
      for (std::size_t j = 0; j < want.size(); ++j) {
        EXPECT_NEAR(flow->scores[j], want[j].get<double>(), 1e-5)
            << c.at("name").get<std::string>() << ", target " << t << ", token " << j;
        ++compared;
      }
    }
  }
  EXPECT_EQ(compared, 7 * 3 + 7 * 3 + 7 * 2 + 5 * 2 + 7 * 2);  // every case of the fixture was read
}

// One layer: the only path from (0, j) to (1, t) is the edge A'[t][j] itself.
TEST(AttentionFlow, OneLayerIsTheResidualWeight) {
  for (const bool causal : {false, true}) {
    const auto layers = flow_layers(1, 9, causal, 5);
    const Matrix a = with_residual(layers[0], 0.0f, 0.5f);
    for (const Index t : {Index{0}, Index{4}, Index{8}}) {
      auto flow = attention_flow(layers, t);
      ASSERT_TRUE(flow) << flow.error().message();
      for (Index j = 0; j < 9; ++j) EXPECT_NEAR(flow->scores[std::size_t(j)], a(t, j), 1e-6) << t << ", " << j;
    }
  }
}

// What is true of every max-flow here: at most the source's capacity (column j of A'_0 over the rows that exist)
// and the sink's (row t of the last A' sums to 1); at least the widest path (the best single path's bottleneck);
// and in a causal model nothing reaches t from a later token.
TEST(AttentionFlow, BracketedByTheCutsAndTheWidestPath) {
  for (const bool causal : {false, true}) {
    const auto layers = flow_layers(4, 16, causal, 11);
    std::vector<Matrix> a;
    for (const Matrix& m : layers) a.push_back(with_residual(m, 0.0f, 0.5f));
    const Index t = 12;
    auto flow = attention_flow(layers, t);
    ASSERT_TRUE(flow) << flow.error().message();
    for (Index j = 0; j < 16; ++j) {
      const double got = flow->scores[std::size_t(j)];
      const double source_cut = a.front().col(j).cast<double>().sum();
      EXPECT_LE(got, std::min(source_cut, 1.0) + 1e-6) << j;
      std::vector<double> widest(16, 0.0);
      widest[std::size_t(j)] = std::numeric_limits<double>::infinity();
      for (const Matrix& m : a) {
        std::vector<double> next(16, 0.0);
        for (Index i = 0; i < 16; ++i) {
          for (Index k = 0; k < 16; ++k)
            next[std::size_t(i)] = std::max(next[std::size_t(i)], std::min(widest[std::size_t(k)], double(m(i, k))));
        }
        widest = next;
      }
      EXPECT_GE(got, widest[std::size_t(t)] - 1e-6) << j;
      if (causal && j > t) {
        EXPECT_EQ(got, 0.0) << j;
      } else {
        EXPECT_GT(got, 0.0) << j;
      }
    }
  }
}

TEST(AttentionFlow, TheTraceIsFusedAsRolloutFusesIt) {
  auto heads0 = flow_layers(2, 6, true, 3), heads1 = flow_layers(2, 6, true, 4), heads2 = flow_layers(2, 6, true, 8);
  const LayeredTrace trace = flow_trace({heads0, heads1, heads2});  // 3 layers of 2 heads
  auto from_trace = attention_flow(trace, 5, {.first_layer = 1});
  ASSERT_TRUE(from_trace) << from_trace.error().message();
  const std::vector<Matrix> mean{(heads1[0] + heads1[1]) / 2.0f, (heads2[0] + heads2[1]) / 2.0f};
  auto from_matrices = attention_flow(mean, 5);
  ASSERT_TRUE(from_matrices);
  for (std::size_t j = 0; j < 6; ++j) EXPECT_NEAR(from_trace->scores[j], from_matrices->scores[j], 1e-6) << j;
  auto max = attention_flow(trace, 5, {.fusion = HeadFusion::Max});
  ASSERT_TRUE(max);
  const std::vector<Matrix> maxed{heads0[0].cwiseMax(heads0[1]), heads1[0].cwiseMax(heads1[1]),
                                  heads2[0].cwiseMax(heads2[1])};
  auto want = attention_flow(maxed, 5);
  ASSERT_TRUE(want);
  for (std::size_t j = 0; j < 6; ++j) EXPECT_NEAR(max->scores[j], want->scores[j], 1e-6) << j;
  EXPECT_GE(from_trace->seconds, 0.0);
  EXPECT_EQ(attention_flow(trace, 5, {.first_layer = 2, .last_layer = 3}).error().kind, ErrorKind::OutOfRange);
  EXPECT_EQ(attention_flow(trace, 5, {.stage = Stage::Decoder}).error().kind, ErrorKind::Mismatch);
}

// Past 512 tokens: refused before any max-flow, the message giving the tokens, the edges, the estimate and the bound.
TEST(AttentionFlow, PastTheBoundTheRefusalSaysTheEstimate) {
  const auto layers = flow_layers(12, kFlowMaxTokens + 1, false, 2);
  auto flow = attention_flow(layers, 0);
  ASSERT_FALSE(flow);
  EXPECT_EQ(flow.error().kind, ErrorKind::TooLarge);
  const std::string m = flow.error().message();
  const long long edges = 12LL * 513 * 513;
  const auto minutes = static_cast<long long>(std::ceil(flow_seconds_estimate(edges, 513) / 60.0));
  EXPECT_NE(m.find("513 tokens"), std::string::npos) << m;
  EXPECT_NE(m.find("3,158,028 edges"), std::string::npos) << m;
  EXPECT_NE(m.find("about " + std::to_string(minutes) + " minute"), std::string::npos) << m;
  EXPECT_NE(m.find("up to 512 tokens"), std::string::npos) << m;
  EXPECT_GE(minutes, 1);
  auto at_bound = flow_layers(1, kFlowMaxTokens, false, 2);
  EXPECT_TRUE(attention_flow(at_bound, 0)) << "the bound itself is allowed";
}

TEST(AttentionFlow, BadInputIsRefusedWithTheFigure) {
  const auto good = flow_layers(3, 7, false, 1);
  auto out_of_range = attention_flow(good, 7);
  ASSERT_FALSE(out_of_range);
  EXPECT_EQ(out_of_range.error().kind, ErrorKind::OutOfRange);
  EXPECT_NE(out_of_range.error().message().find("target row 7 is not one of the 7 tokens"), std::string::npos);
  EXPECT_EQ(attention_flow(good, -1).error().kind, ErrorKind::OutOfRange);
  EXPECT_EQ(attention_flow(std::vector<Matrix>{}, 0).error().kind, ErrorKind::Mismatch);

  auto sizes = good;
  sizes[1] = flow_layers(1, 6, false, 1)[0];
  auto mismatch = attention_flow(sizes, 0);
  ASSERT_FALSE(mismatch);
  EXPECT_EQ(mismatch.error().kind, ErrorKind::Mismatch);
  EXPECT_NE(mismatch.error().message().find("layer 2 has 6 tokens where layer 1 has 7"), std::string::npos)
      << mismatch.error().message();

  auto square = good;
  square[2] = Matrix::Constant(7, 6, 1.0f / 6);
  auto not_square = attention_flow(square, 0);
  ASSERT_FALSE(not_square);
  EXPECT_NE(not_square.error().message().find("layer 3 is 7 x 6"), std::string::npos) << not_square.error().message();

  auto nan = good;
  nan[1](3, 1) = std::numeric_limits<float>::quiet_NaN();
  auto refused = attention_flow(nan, 0);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, ErrorKind::OutOfRange);
  EXPECT_NE(refused.error().message().find("layer 2, query 3, key 1 has weight nan"), std::string::npos)
      << refused.error().message();
  auto negative = good;
  negative[0](0, 5) = -0.25f;
  auto below = attention_flow(negative, 0);
  ASSERT_FALSE(below);
  EXPECT_NE(below.error().message().find("layer 1, query 0, key 5 has weight -0.25"), std::string::npos)
      << below.error().message();
  EXPECT_EQ(attention_flow(good, 0, 1.5f).error().kind, ErrorKind::OutOfRange);
}

// A flag set before: nothing runs. A flag set from the progress callback (called on the calling thread, counts
// rising) after the first max-flow: the rest are not run.
TEST(AttentionFlow, CancelStopsBetweenMaxFlows) {
  const auto layers = flow_layers(4, 40, false, 9);
  std::atomic<bool> cancel{true};
  auto before = attention_flow(layers, 39, 0.5f, &cancel);
  ASSERT_FALSE(before);
  EXPECT_EQ(before.error().kind, ErrorKind::Cancelled);

  cancel = false;
  const auto caller = std::this_thread::get_id();
  int calls = 0, last = 0;
  bool same_thread = true;
  auto stopped = attention_flow(layers, 39, 0.5f, &cancel, [&](int done, int of) {
    same_thread = same_thread && std::this_thread::get_id() == caller;
    EXPECT_EQ(of, 40);
    EXPECT_GE(done, last);
    last = done;
    ++calls;
    cancel = true;
  });
  ASSERT_FALSE(stopped);
  EXPECT_EQ(stopped.error().kind, ErrorKind::Cancelled);
  EXPECT_EQ(calls, 1);  // the calling thread ran no max-flow after it
  EXPECT_TRUE(same_thread);

  cancel = false;
  calls = 0, last = 0;
  auto whole = attention_flow(layers, 39, 0.5f, &cancel, [&](int done, int of) {
    same_thread = same_thread && std::this_thread::get_id() == caller;
    EXPECT_GE(done, last);
    last = done;
    (void)of;
    ++calls;
  });
  ASSERT_TRUE(whole) << whole.error().message();
  EXPECT_EQ(last, 40);
  EXPECT_TRUE(same_thread);
}

}  // namespace
}  // namespace attn::analysis
