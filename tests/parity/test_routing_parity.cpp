// Capsule dynamic routing against a torch reference written from Sabour et al. 2017, procedure 1, and
// multi-head capsule attention against one written from its definition
// (tools/parity/make_fixtures.py): every iteration's coupling coefficients and logits, and the outputs.
#include "cases.h"
#include "fixture.h"

#include "attn/mechanisms/composite.h"

#include <gtest/gtest.h>

namespace attn::parity {
namespace {

class RoutingParity : public ::testing::TestWithParam<std::string> {};

TEST_P(RoutingParity, MatchesTorch) {
  const Fixture fx = Fixture::load(GetParam());
  ASSERT_EQ(fx.kind(), "capsule_routing");
  const int iterations = fx.integer("iterations");
  const Index J = fx.integer("capsules");
  const Matrix predictions = fx.input("predictions");
  const Index n = predictions.rows() / J;
  AttentionTrace trace;
  const RoutingResult r = dynamic_routing(predictions, J, iterations, {.trace = &trace});
  const auto coupling = fx.expected_stack("coupling", iterations, J, n);
  ASSERT_EQ(static_cast<int>(r.coupling.size()), iterations);
  ASSERT_EQ(trace.size(), static_cast<std::size_t>(iterations));
  for (int t = 0; t < iterations; ++t) {
    const auto i = static_cast<std::size_t>(t);
    EXPECT_TRUE(all_near(coupling[i], r.coupling[i])) << "coupling, iteration " << t + 1;
    EXPECT_TRUE(all_near(coupling[i], trace.maps()[i].weights)) << "recorded, iteration " << t + 1;
  }
  const auto logits = fx.expected_stack("logits", iterations, J, n);
  for (int t = 0; t < iterations; ++t) {
    const auto i = static_cast<std::size_t>(t);
    EXPECT_TRUE(all_near(logits[i], r.logits[i])) << "logits, iteration " << t + 1;
  }
  EXPECT_TRUE(all_near(fx.expected("outputs", J, predictions.cols()), r.outputs)) << "v_j";
}

INSTANTIATE_TEST_SUITE_P(Fixtures, RoutingParity, ::testing::ValuesIn(kRoutingCases), CaseName());

class CapsuleMultiHeadParity : public ::testing::TestWithParam<std::string> {};

TEST_P(CapsuleMultiHeadParity, MatchesTorch) {
  const Fixture fx = Fixture::load(GetParam());
  ASSERT_EQ(fx.kind(), "capsule_multi_head");
  const Matrix x = fx.input("x");
  const int heads = fx.integer("heads");
  const CapsuleWeights w{fx.input("queries"), fx.input("w"), fx.input_vector("b")};
  const Index classes = w.queries.rows();
  const MultiHeadCapsuleResult r = multi_head_capsule_attention(x, w, heads, {ScoreKind::ScaledDot});
  const auto maps = fx.expected_stack("heads", heads, classes, x.rows());
  for (int h = 0; h < heads; ++h) EXPECT_TRUE(all_near(maps[h], r.heads[h])) << "head " << h;
  EXPECT_TRUE(all_near(fx.expected("contexts", classes, x.cols()), r.contexts)) << "r_c";
  EXPECT_TRUE(all_near(fx.expected("probabilities", 1, classes).transpose(), r.probabilities)) << "p_c";
  EXPECT_TRUE(all_near(fx.expected("capsules", classes, x.cols()), r.capsules)) << "capsules";
}

INSTANTIATE_TEST_SUITE_P(Fixtures, CapsuleMultiHeadParity, ::testing::ValuesIn(kCapsuleMultiHeadCases), CaseName());

}  // namespace
}  // namespace attn::parity
