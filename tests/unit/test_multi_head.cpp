#include "attn/mechanisms/multi_head.h"

#include "attn/mechanisms/blocks.h"
#include "test_util.h"

#include <cmath>

using namespace attn;
using attn::test::expect_near;
using attn::test::expect_rows_sum_to_one;

namespace {
// The formula, head by head, with no blocking: the reference for the blocked kernel.
MultiHeadResult naive(const Matrix& xq, const Matrix& xkv, const MultiHeadWeights& w, bool causal) {
  const Matrix q = linear(xq, w.Wq, w.bq), k = linear(xkv, w.Wk, w.bk), v = linear(xkv, w.Wv, w.bv);
  const Index dh = w.head_dim();
  MultiHeadResult r;
  r.context.resize(xq.rows(), w.model_dim());
  for (int h = 0; h < w.heads; ++h) {
    Matrix s = q.middleCols(h * dh, dh) * k.middleCols(h * dh, dh).transpose() / std::sqrt(float(dh));
    Matrix a = softmax_rows(s, 1.0f, causal ? causal_mask(xq.rows(), xkv.rows()) : Matrix());
    r.context.middleCols(h * dh, dh) = a * v.middleCols(h * dh, dh);
    r.head_weights.push_back(a);
  }
  r.output = linear(r.context, w.Wo, w.bo);
  return r;
}
}  // namespace

TEST(MultiHead, MatchesThePerHeadFormulaAcrossRowBlocks) {
  // 300 queries span two of the kernel's 256-row blocks, the second one partial.
  const MultiHeadWeights w = random_multi_head_weights(24, 3, 5);
  const Matrix xq = Matrix::Random(300, 24), xkv = Matrix::Random(45, 24);
  const MultiHeadResult got = multi_head_attention(xq, xkv, w, {});
  const MultiHeadResult want = naive(xq, xkv, w, false);
  ASSERT_EQ(got.head_weights.size(), 3u);
  for (int h = 0; h < 3; ++h) expect_near(got.head_weights[h], want.head_weights[h]);
  expect_near(got.context, want.context, 1e-4f);
  expect_near(got.output, want.output, 1e-4f);
}

TEST(MultiHead, CausalSelfAttentionSeesNoFuture) {
  const MultiHeadWeights w = random_multi_head_weights(16, 4, 9);
  const Matrix x = Matrix::Random(300, 16);  // two row blocks: the mask must follow the block offset
  MultiHeadParams p;
  p.causal = true;
  AttentionTrace trace;
  const MultiHeadResult r = self_attention(x, w, p, {}, {.trace = &trace});
  ASSERT_EQ(trace.size(), 4u);
  for (int h = 0; h < 4; ++h) {
    expect_rows_sum_to_one(r.head_weights[h]);
    EXPECT_EQ(trace.maps()[h].head, h);
    for (Index i = 0; i < 300; ++i)
      for (Index j = i + 1; j < 300; ++j) ASSERT_EQ(r.head_weights[h](i, j), 0.0f);
  }
  expect_near(r.output, naive(x, x, w, true).output, 1e-4f);
}

TEST(MultiHead, ChangingAFutureTokenDoesNotChangeCausalOutputsBeforeIt) {
  const MultiHeadWeights w = random_multi_head_weights(16, 2, 1);
  Matrix x = Matrix::Random(10, 16);
  MultiHeadParams p;
  p.causal = true;
  const Matrix before = self_attention(x, w, p).output;
  x.row(9).setRandom();
  const Matrix after = self_attention(x, w, p).output;
  expect_near(after.topRows(9), before.topRows(9), 1e-6f);
  EXPECT_GT((after.row(9) - before.row(9)).norm(), 1e-3f);
}

TEST(MultiHead, WithoutKeptWeightsTheOutputIsTheSame) {
  const MultiHeadWeights w = random_multi_head_weights(32, 4, 2);
  const Matrix x = Matrix::Random(50, 32);
  MultiHeadParams p;
  const Matrix kept = self_attention(x, w, p).output;
  p.keep_weights = false;
  const MultiHeadResult r = self_attention(x, w, p);
  EXPECT_TRUE(r.head_weights.empty());
  expect_near(r.output, kept, 1e-6f);
}

TEST(MultiHead, PaddingMaskAndSparsemaxAreRespected) {
  const MultiHeadWeights w = random_multi_head_weights(8, 2, 3);
  const Matrix x = Matrix::Random(6, 8);
  MultiHeadParams p;
  p.normaliser = Normaliser::Sparsemax;
  const MultiHeadResult r = self_attention(x, w, p, padding_mask(6, 6, 4));
  for (const Matrix& a : r.head_weights) {
    expect_rows_sum_to_one(a);
    EXPECT_EQ(a.rightCols(2).cwiseAbs().sum(), 0.0f);
  }
}

TEST(MultiHead, IntoReusesItsBuffersAndMatchesAFreshRun) {
  const MultiHeadWeights w = random_multi_head_weights(16, 2, 4);
  MultiHeadResult out;
  multi_head_attention_into(out, Matrix::Random(20, 16), Matrix::Random(20, 16), w, {});
  const float* weights_before = out.head_weights[1].data();
  const float* keys_before = out.keys.data();
  const Matrix x = Matrix::Random(20, 16);
  multi_head_attention_into(out, x, x, w, {});
  EXPECT_EQ(out.head_weights[1].data(), weights_before);
  EXPECT_EQ(out.keys.data(), keys_before);
  const MultiHeadResult fresh = self_attention(x, w, {});
  expect_near(out.head_weights[1], fresh.head_weights[1], 0.0f);
  expect_near(out.output, fresh.output, 0.0f);
}

TEST(MultiHead, CausalWithMoreKeysThanQueriesMatchesTheExplicitMask) {
  // Three new queries after five cached keys: the kernel's in-place mask must equal causal_mask(3, 8).
  const MultiHeadWeights w = random_multi_head_weights(8, 2, 6);
  const Matrix xq = Matrix::Random(3, 8), xkv = Matrix::Random(8, 8);
  MultiHeadParams causal;
  causal.causal = true;
  const MultiHeadResult a = multi_head_attention(xq, xkv, w, causal);
  const MultiHeadResult b = multi_head_attention(xq, xkv, w, {}, causal_mask(3, 8));
  for (int h = 0; h < 2; ++h) expect_near(a.head_weights[h], b.head_weights[h], 0.0f);
  EXPECT_EQ(a.head_weights[0](0, 6), 0.0f);
  EXPECT_GT(a.head_weights[0](0, 5), 0.0f);
}

TEST(MultiHead, KernelEdgesMatchTheFormula) {
  // 37 queries: whole 32-row blocks plus a 5-row remainder tile; 19 keys: a partial 16-key panel;
  // d_h = 8: a value panel only half full; with and without the causal mask.
  const MultiHeadWeights w = random_multi_head_weights(40, 5, 8);
  const Matrix xq = Matrix::Random(37, 40), xkv = Matrix::Random(19, 40);
  for (bool causal : {false, true}) {
    MultiHeadParams p;
    p.causal = causal;
    const MultiHeadResult got = multi_head_attention(xq, xkv, w, p);
    const MultiHeadResult want = naive(xq, xkv, w, causal);
    for (int h = 0; h < 5; ++h) expect_near(got.head_weights[h], want.head_weights[h]);
    expect_near(got.context, want.context, 1e-5f);
    expect_near(got.output, want.output, 1e-5f);
  }
}
