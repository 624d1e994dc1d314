// ConvS2S's gated convolutions and multi-step attention (Gehring et al. 2017, sec. 3): what each must be.
#include "attn/lab/lab.h"
#include "attn/mechanisms/convs2s.h"
#include "attn/random.h"

#include <gtest/gtest.h>

#include <cmath>

namespace attn {
namespace {

// One tap of the identity on A and zeros on B: GLU gives x * sigmoid(0) = x / 2, shifted by the tap.
TEST(ConvS2S, GatedConvolutionIsCausalOrCentred) {
  const Index d = 2;
  GatedConv conv{{Matrix::Zero(d, 2 * d), Matrix::Zero(d, 2 * d), Matrix::Zero(d, 2 * d)}, RowVector::Zero(2 * d)};
  conv.W[1].leftCols(d) = Matrix::Identity(d, d);  // causal: reads i - 1; centred: reads i
  const Matrix x = random_normal(5, d, 1);
  const Matrix causal = gated_convolution(x, conv, true), centred = gated_convolution(x, conv, false);
  EXPECT_EQ(causal.row(0), RowVector::Zero(d));  // nothing before the first
  for (Index i = 1; i < 5; ++i) EXPECT_TRUE(causal.row(i).isApprox(0.5f * x.row(i - 1))) << i;
  EXPECT_TRUE(centred.isApprox(0.5f * x));
  // Causal: no output depends on a later input.
  const GatedConv any{{random_normal(d, 2 * d, 2), random_normal(d, 2 * d, 3), random_normal(d, 2 * d, 4)},
                      random_normal(1, 2 * d, 5)};
  Matrix later = x;
  later.row(3) = random_normal(1, d, 6);
  EXPECT_EQ(gated_convolution(later, any, true).topRows(3), gated_convolution(x, any, true).topRows(3));
  EXPECT_NE(gated_convolution(later, any, false).row(2), gated_convolution(x, any, false).row(2));
}

TEST(ConvS2S, EveryDecoderLayerAttendsOnItsOwn) {
  const Matrix g = random_normal(4, 8, 11), e = random_normal(6, 8, 12);
  AttentionTrace trace;
  const ConvS2SResult r = convs2s_attention(g, e, random_convs2s_weights(8, 3, 3, 13), {.trace = &trace});
  ASSERT_EQ(r.weights.size(), 3u);
  for (const Matrix& a : r.weights) {
    ASSERT_EQ(a.rows(), 4);
    ASSERT_EQ(a.cols(), 6);
    for (Index i = 0; i < 4; ++i) EXPECT_NEAR(a.row(i).sum(), 1.0f, 1e-5f);
  }
  EXPECT_GT((r.weights[0] - r.weights[2]).cwiseAbs().maxCoeff(), 1e-4f);  // the layers differ
  ASSERT_EQ(trace.size(), 3u);
  EXPECT_EQ(trace.maps()[2].name, "attention \u00b7 decoder layer 2");
  // The decoder is causal: a later target changes no earlier row of any layer.
  Matrix later = g;
  later.row(3) = random_normal(1, 8, 14);
  const ConvS2SResult r2 = convs2s_attention(later, e, random_convs2s_weights(8, 3, 3, 13));
  for (std::size_t l = 0; l < 3; ++l) EXPECT_EQ(r2.weights[l].topRows(3), r.weights[l].topRows(3)) << l;
}

TEST(ConvS2S, LabReadsTheQueryAsTheTarget) {
  lab::LabRequest request;
  request.params.mechanism = lab::Mechanism::ConvS2S;
  request.query = "she ate apples";
  request.source = "the apple fell and she ate it";
  request.params.layers = 2;
  const auto r = lab::run_lab(request);
  ASSERT_TRUE(r) << r.error().message();
  ASSERT_EQ(r->trace.size(), 2u);
  EXPECT_EQ(r->trace.maps()[1].row_labels, (Labels{"she", "ate", "apples"}));
  EXPECT_EQ(r->trace.maps()[1].col_labels.size(), 7u);
}

}  // namespace
}  // namespace attn
