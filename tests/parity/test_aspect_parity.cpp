// Attention around a target phrase against torch references written from the papers
// (tools/parity/make_fixtures.py): IAN's co-attention and LCR-Rot-hop's rotatory attention, every hop's four
// distributions and representations.
#include "cases.h"
#include "fixture.h"

#include "attn/mechanisms/aspect.h"

#include <gtest/gtest.h>

namespace attn::parity {
namespace {

class IanParity : public ::testing::TestWithParam<std::string> {};

TEST_P(IanParity, MatchesTorch) {
  const Fixture fx = Fixture::load(GetParam());
  ASSERT_EQ(fx.kind(), "ian");
  const Matrix context = fx.input("context"), target = fx.input("target");
  const Index d = context.cols();
  const IanWeights w{{fx.input("W_a", d, d), fx.input_vector("b_a", 1)(0)},
                     {fx.input("W_b", d, d), fx.input_vector("b_b", 1)(0)}};
  AttentionTrace trace;
  const IanResult r = interactive_attention(context, target, w, {.trace = &trace});
  EXPECT_TRUE(all_near(fx.expected("alpha", 1, context.rows()), Matrix(r.context.weights))) << "alpha";
  EXPECT_TRUE(all_near(fx.expected("beta", 1, target.rows()), Matrix(r.target.weights))) << "beta";
  EXPECT_TRUE(all_near(fx.expected("output", 1, 2 * d), Matrix(r.output))) << "[c_r; t_r]";
  ASSERT_EQ(trace.size(), 2u);
  EXPECT_TRUE(all_near(fx.expected("alpha"), trace.maps()[0].weights)) << "recorded alpha";
}

INSTANTIATE_TEST_SUITE_P(Fixtures, IanParity, ::testing::ValuesIn(kIanCases), CaseName());

class RotatoryParity : public ::testing::TestWithParam<std::string> {};

TEST_P(RotatoryParity, MatchesTorch) {
  const Fixture fx = Fixture::load(GetParam());
  ASSERT_EQ(fx.kind(), "rotatory");
  const Matrix left = fx.input("left"), target = fx.input("target"), right = fx.input("right");
  const Index d = target.cols();
  const int hops = fx.integer("hops");
  const auto stack = [&](const char* part) { return fx.input_stack(std::string("W_") + part, hops, d, d); };
  const auto bias = [&](const char* part) { return fx.input_vector(std::string("b_") + part, hops); };
  const auto Wl = stack("left"), Wr = stack("right"), Wtl = stack("target_left"), Wtr = stack("target_right");
  const Vector bl = bias("left"), br = bias("right"), btl = bias("target_left"), btr = bias("target_right");
  std::vector<RotatoryHopWeights> w;
  for (int s = 0; s < hops; ++s) {
    w.push_back({{Wl[s], bl(s)}, {Wr[s], br(s)}, {Wtl[s], btl(s)}, {Wtr[s], btr(s)}});
  }
  AttentionTrace trace;
  const RotatoryResult r = rotatory_attention(left, target, right, w, {.trace = &trace});
  ASSERT_EQ(static_cast<int>(r.hops.size()), hops);
  const auto per_hop = [&](auto part, bool weights) {
    const Index cols = weights ? (r.hops[0].*part).weights.size() : d;
    Matrix m(hops, cols);
    for (int s = 0; s < hops; ++s) {
      m.row(s) = weights ? (r.hops[static_cast<std::size_t>(s)].*part).weights
                         : (r.hops[static_cast<std::size_t>(s)].*part).representation;
    }
    return m;
  };
  const std::pair<const char*, BilinearResult RotatoryHop::*> parts[] = {{"left", &RotatoryHop::left},
                                                                         {"right", &RotatoryHop::right},
                                                                         {"target_left", &RotatoryHop::target_left},
                                                                         {"target_right", &RotatoryHop::target_right}};
  for (std::size_t i = 0; i < 4; ++i) {
    const auto& [name, part] = parts[i];
    const Matrix weights = per_hop(part, true);
    EXPECT_TRUE(all_near(fx.expected(std::string(name) + "_weights", hops, weights.cols()), weights)) << name;
    EXPECT_TRUE(all_near(fx.expected(std::string(name) + "_repr", hops, d), per_hop(part, false))) << name;
    // The recorded maps are the same weights, a row per hop.
    ASSERT_EQ(trace.size(), 4u);
    EXPECT_TRUE(all_near(fx.expected(std::string(name) + "_weights"), trace.maps()[i].weights)) << name;
  }
  EXPECT_TRUE(all_near(fx.expected("output", 1, 4 * d), Matrix(r.output))) << "output";
}

INSTANTIATE_TEST_SUITE_P(Fixtures, RotatoryParity, ::testing::ValuesIn(kRotatoryCases), CaseName());

}  // namespace
}  // namespace attn::parity
