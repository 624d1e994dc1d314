// Linformer, the Reformer's LSH attention, Transformer-XL, ConvS2S's multi-step attention and the
// Synthesizer's five forms against torch references
// written from the papers (tools/parity/make_fixtures.py).
#include "cases.h"
#include "fixture.h"

#include "attn/mechanisms/convs2s.h"
#include "attn/mechanisms/efficient.h"
#include "attn/mechanisms/transformer_xl.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace attn::parity {
namespace {

class LinformerParity : public ::testing::TestWithParam<std::string> {};

TEST_P(LinformerParity, MatchesTorch) {
  const Fixture fx = Fixture::load(GetParam());
  ASSERT_EQ(fx.kind(), "linformer");
  const Matrix x = fx.input("x");
  const Index n = x.rows(), d = x.cols();
  const LinformerWeights w{fx.input("Wq", d, d), fx.input("Wk", d, d), fx.input("Wv", d, d), fx.input("E"),
                           fx.input("F")};
  const Index k = w.E.rows();
  AttentionTrace trace;
  const LinformerResult r = linformer_attention(x, w, {.trace = &trace});
  EXPECT_TRUE(all_near(fx.expected("P", n, k), r.P)) << "P";
  EXPECT_TRUE(all_near(fx.expected("implied", n, n), r.implied)) << "P E";
  EXPECT_TRUE(all_near(fx.expected("full", n, n), r.full)) << "full";
  EXPECT_TRUE(all_near(fx.expected("output", n, d), r.output)) << "output";
  ASSERT_EQ(trace.size(), 3u);
  EXPECT_TRUE(all_near(fx.expected("P"), trace.maps()[0].weights)) << "recorded P";
}

INSTANTIATE_TEST_SUITE_P(Fixtures, LinformerParity, ::testing::ValuesIn(kLinformerCases), CaseName());

class ReformerParity : public ::testing::TestWithParam<std::string> {};

TEST_P(ReformerParity, MatchesTorch) {
  const Fixture fx = Fixture::load(GetParam());
  ASSERT_EQ(fx.kind(), "reformer");
  const Matrix x = fx.input("x");
  const Index n = x.rows(), d = x.cols();
  const ReformerParams params{
      .buckets = fx.integer("buckets"), .chunk = fx.integer("chunk"), .hashes = fx.integer("hashes")};
  ReformerWeights w{fx.input("Wqk", d, d), fx.input("Wv", d, d), {}};
  for (int r = 0; r < params.hashes; ++r)
    w.rotations.push_back(fx.input("R" + std::to_string(r), d, params.buckets / 2));
  AttentionTrace trace;
  const ReformerResult res = reformer_attention(x, w, params, {.trace = &trace});
  const Matrix buckets = fx.expected("buckets", params.hashes, n), order = fx.expected("order", params.hashes, n),
               lse = fx.expected("lse", params.hashes, n);
  ASSERT_EQ(res.rounds.size(), static_cast<std::size_t>(params.hashes));
  for (int r = 0; r < params.hashes; ++r) {
    for (Index i = 0; i < n; ++i) {
      EXPECT_EQ(res.rounds[r].buckets[i], static_cast<int>(buckets(r, i))) << "round " << r << ", token " << i;
      EXPECT_EQ(res.rounds[r].order[i], static_cast<Index>(order(r, i))) << "round " << r << ", position " << i;
    }
    EXPECT_TRUE(all_near(lse.row(r).transpose(), res.rounds[r].lse)) << "lse, round " << r;
  }
  EXPECT_TRUE(all_near(fx.expected("weights", n, n), res.weights)) << "weights";
  EXPECT_TRUE(all_near(fx.expected("full", n, n), res.full)) << "full";
  EXPECT_TRUE(all_near(fx.expected("missed", 1, n).transpose(), res.missed)) << "missed";
  EXPECT_TRUE(all_near(fx.expected("output", n, d), res.output)) << "output";
  ASSERT_EQ(trace.size(), 2u + static_cast<std::size_t>(params.hashes));
  EXPECT_TRUE(all_near(fx.expected("weights"), trace.maps()[0].weights)) << "recorded";
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ReformerParity, ::testing::ValuesIn(kReformerCases), CaseName());

class TransformerXLParity : public ::testing::TestWithParam<std::string> {};

TEST_P(TransformerXLParity, MatchesTorch) {
  const Fixture fx = Fixture::load(GetParam());
  ASSERT_EQ(fx.kind(), "transformer_xl");
  const Matrix x = fx.input("x");
  const Index n = x.rows(), d = x.cols(), L = fx.integer("segment");
  std::vector<TransformerXLLayer> layers(static_cast<std::size_t>(fx.integer("layers")));
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const std::string p = "l" + std::to_string(l) + "_";
    layers[l] = {fx.input(p + "Wq", d, d),
                 fx.input(p + "Wk", d, d),
                 fx.input(p + "Wr", d, d),
                 fx.input(p + "Wv", d, d),
                 fx.input(p + "Wo", d, d),
                 fx.input_vector(p + "u", d).transpose(),
                 fx.input_vector(p + "v", d).transpose()};
  }
  const TransformerXLResult r = transformer_xl(x, layers, L);
  ASSERT_EQ(static_cast<Index>(r.segments.size()), (n + L - 1) / L);
  for (std::size_t s = 0; s < r.segments.size(); ++s) {
    for (std::size_t l = 0; l < layers.size(); ++l) {
      const std::string key = "s" + std::to_string(s) + "_l" + std::to_string(l) + "_";
      const XLAttention& a = r.segments[s][l];
      EXPECT_TRUE(all_near(fx.expected(key + "weights"), a.weights)) << key << "weights";
      for (std::size_t t = 0; t < 4; ++t) {
        const Matrix term = a.terms[t].unaryExpr([](float v) { return std::isnan(v) ? 0.0f : v; });
        EXPECT_TRUE(all_near(fx.expected(key + std::string(1, char('a' + t))), term)) << key << char('a' + t);
      }
    }
  }
  EXPECT_TRUE(all_near(fx.expected("output", n, d), r.output)) << "output";
}

INSTANTIATE_TEST_SUITE_P(Fixtures, TransformerXLParity, ::testing::ValuesIn(kTransformerXLCases), CaseName());

class ConvS2SParity : public ::testing::TestWithParam<std::string> {};

TEST_P(ConvS2SParity, MatchesTorch) {
  const Fixture fx = Fixture::load(GetParam());
  ASSERT_EQ(fx.kind(), "convs2s");
  const Matrix g = fx.input("g"), e = fx.input("e");
  const Index d = g.cols();
  const int k = fx.integer("kernel");
  const auto conv = [&](const std::string& prefix, const std::string& bias) {
    GatedConv c;
    for (int t = 0; t < k; ++t) c.W.push_back(fx.input(prefix + std::to_string(t), d, 2 * d));
    c.b = fx.input_vector(bias, 2 * d).transpose();
    return c;
  };
  ConvS2SWeights w;
  w.encoder = conv("enc_W", "enc_b");
  for (int l = 0; l < fx.integer("layers"); ++l) {
    const std::string p = "l" + std::to_string(l) + "_";
    w.layers.push_back({conv(p + "W", p + "b"), fx.input(p + "Wd", d, d), fx.input_vector(p + "bd", d).transpose()});
  }
  const ConvS2SResult r = convs2s_attention(g, e, w);
  EXPECT_TRUE(all_near(fx.expected("z", e.rows(), d), r.z)) << "z";
  for (std::size_t l = 0; l < w.layers.size(); ++l) {
    EXPECT_TRUE(all_near(fx.expected("l" + std::to_string(l) + "_weights"), r.weights[l])) << "layer " << l;
  }
  EXPECT_TRUE(all_near(fx.expected("output", g.rows(), d), r.output)) << "output";
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ConvS2SParity, ::testing::ValuesIn(kConvS2SCases), CaseName());

class SynthesizerParity : public ::testing::TestWithParam<std::string> {};

SynthesizerKind synthesizer_kind(const Fixture& fx) {
  const std::string kind = fx.text("kind");
  if (kind == "dense") return SynthesizerKind::Dense;
  if (kind == "random") return SynthesizerKind::Random;
  if (kind == "factorized_dense") return SynthesizerKind::FactorizedDense;
  if (kind == "factorized_random") return SynthesizerKind::FactorizedRandom;
  if (kind == "mixture") return SynthesizerKind::Mixture;
  throw FixtureError(fx.path().string() + ": unknown Synthesizer kind " + kind);
}

TEST_P(SynthesizerParity, MatchesTorch) {
  const Fixture fx = Fixture::load(GetParam());
  ASSERT_EQ(fx.kind(), "synthesizer");
  const Matrix x = fx.input("x");
  const Index n = x.rows(), d = x.cols();
  SynthesizerWeights w;
  w.W1 = fx.input("W1", d, d);
  w.b1 = fx.input_vector("b1", d).transpose();
  w.W2 = fx.input("W2", d, n);
  w.b2 = fx.input_vector("b2", n).transpose();
  w.R = fx.input("R", n, n);
  w.R1 = fx.input("R1");
  w.R2 = fx.input("R2");
  w.Wa = fx.input("Wa");
  w.Wb = fx.input("Wb");
  w.Wq = fx.input("Wq", d, d);
  w.Wk = fx.input("Wk", d, d);
  w.Wv = fx.input("Wv", d, d);
  AttentionTrace trace;
  const SynthesizerResult r = synthesizer_attention(x, w, synthesizer_kind(fx), {.trace = &trace});
  EXPECT_TRUE(all_near(fx.expected("logits", n, n), r.logits)) << "logits";
  EXPECT_TRUE(all_near(fx.expected("weights", n, n), r.weights)) << "weights";
  EXPECT_TRUE(all_near(fx.expected("output", n, d), r.output)) << "output";
  ASSERT_FALSE(trace.empty());
  EXPECT_EQ(trace.maps()[0].name, "synthesised");
  EXPECT_TRUE(all_near(fx.expected("weights"), trace.maps()[0].weights)) << "recorded";
}

INSTANTIATE_TEST_SUITE_P(Fixtures, SynthesizerParity, ::testing::ValuesIn(kSynthesizerCases), CaseName());

}  // namespace
}  // namespace attn::parity
