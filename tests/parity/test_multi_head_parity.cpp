// Multi-head attention against torch.nn.functional.multi_head_attention_forward (need_weights=True,
// average_attn_weights=False): every head's weights, the concatenated context and the output.
#include "cases.h"
#include "fixture.h"

#include "attn/mechanisms/multi_head.h"
#include "attn/mechanisms/normalise.h"

#include <gtest/gtest.h>

namespace attn::parity {
namespace {

struct MhaCase {
  Matrix xq;
  Matrix xkv;
  MultiHeadWeights w;
  MultiHeadParams params;
  Matrix mask;  // padding mask (empty when the case has none); causal goes through params.causal
};

MhaCase read_case(const Fixture& fx) {
  MhaCase c;
  const Index E = fx.integer("model_dim");
  c.xq = fx.input("xq", kAny, E);
  c.xkv = fx.flag("cross") ? fx.input("xkv", kAny, E) : c.xq;
  c.w.heads = fx.integer("heads");
  c.w.Wq = fx.input("Wq", E, E);
  c.w.Wk = fx.input("Wk", E, E);
  c.w.Wv = fx.input("Wv", E, E);
  c.w.Wo = fx.input("Wo", E, E);
  if (fx.flag("bias")) {
    c.w.bq = fx.input_vector("bq", E);
    c.w.bk = fx.input_vector("bk", E);
    c.w.bv = fx.input_vector("bv", E);
    c.w.bo = fx.input_vector("bo", E);
  } else if (fx.has_input("bq") || fx.has_input("bo")) {
    throw FixtureError(fx.path().string() + ": bias is false but biases are stored");
  }
  c.params.causal = fx.flag("causal");
  c.params.temperature = static_cast<float>(fx.number("temperature"));
  c.params.normaliser = Normaliser::Softmax;
  c.params.keep_weights = true;
  if (const int valid = fx.integer("valid_keys"); valid >= 0) {
    c.mask = padding_mask(c.xq.rows(), c.xkv.rows(), valid);
  }
  return c;
}

class MultiHeadParity : public ::testing::TestWithParam<std::string> {};

TEST_P(MultiHeadParity, MatchesTorch) {
  const Fixture fx = Fixture::load(GetParam());
  ASSERT_EQ(fx.kind(), "multi_head");
  const MhaCase c = read_case(fx);
  const Index n = c.xq.rows();
  const Index m = c.xkv.rows();
  const Index E = c.w.model_dim();
  const std::vector<Matrix> heads = fx.expected_stack("head_weights", c.w.heads, n, m);

  AttentionTrace trace;
  TraceTag tag;
  tag.trace = &trace;
  const MultiHeadResult r = multi_head_attention(c.xq, c.xkv, c.w, c.params, c.mask, tag);

  ASSERT_EQ(r.head_weights.size(), heads.size()) << "keep_weights = true must keep one matrix per head";
  for (std::size_t h = 0; h < heads.size(); ++h) {
    EXPECT_TRUE(all_near(heads[h], r.head_weights[h])) << "head " << h << " weights";
    const AttentionMap* map = trace.find(Stage::Mechanism, 0, static_cast<int>(h));
    ASSERT_NE(map, nullptr) << "head " << h << " is not in the trace";
    EXPECT_TRUE(all_near(heads[h], map->weights)) << "head " << h << " weights in the trace";
  }
  EXPECT_TRUE(all_near(fx.expected("context", n, E), r.context)) << "context (before W_O)";
  EXPECT_TRUE(all_near(fx.expected("output", n, E), r.output)) << "output (after W_O)";
}

// Dropping the per-head weights is a memory option, not a different computation.
TEST_P(MultiHeadParity, OutputWithoutKeptWeights) {
  const Fixture fx = Fixture::load(GetParam());
  ASSERT_EQ(fx.kind(), "multi_head");
  MhaCase c = read_case(fx);
  c.params.keep_weights = false;
  const MultiHeadResult r = multi_head_attention(c.xq, c.xkv, c.w, c.params, c.mask);
  EXPECT_TRUE(r.head_weights.empty());
  EXPECT_TRUE(all_near(fx.expected("output", c.xq.rows(), c.w.model_dim()), r.output)) << "output";
}

INSTANTIATE_TEST_SUITE_P(Fixtures, MultiHeadParity, ::testing::ValuesIn(kMultiHeadCases), CaseName());

// self_attention(x) is multi_head_attention(x, x).
TEST(MultiHeadParitySelf, SelfAttentionWrapper) {
  const Fixture fx = Fixture::load("mha_self_causal");
  const MhaCase c = read_case(fx);
  const MultiHeadResult r = self_attention(c.xq, c.w, c.params, c.mask);
  EXPECT_TRUE(all_near(fx.expected("output", c.xq.rows(), c.w.model_dim()), r.output));
}

}  // namespace
}  // namespace attn::parity
