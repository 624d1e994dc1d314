// Attention around a target phrase: IAN's co-attention and LCR-Rot-hop's rotatory attention, worked from
// their definitions (each attention is bilinear_attention, checked by hand first), the Lab's bracket markup
// and its refusals.
#include "attn/lab/lab.h"
#include "attn/mechanisms/aspect.h"
#include "attn/random.h"

#include <gtest/gtest.h>

#include <cmath>

namespace attn {
namespace {

Matrix rows(std::initializer_list<std::initializer_list<float>> values) {
  Matrix m(static_cast<Index>(values.size()), static_cast<Index>(values.begin()->size()));
  Index i = 0;
  for (const auto& row : values) {
    Index j = 0;
    for (const float v : row) m(i, j++) = v;
    ++i;
  }
  return m;
}

// f_i = tanh(h_i^T W q + b), a = softmax(f), r = a h, by hand for W = I, b = 0.5.
TEST(Aspect, BilinearAttentionByHand) {
  const Matrix h = rows({{1, 0}, {0, 2}, {1, 1}});
  RowVector q(2);
  q << 0.5f, -0.25f;
  const BilinearWeights w{Matrix::Identity(2, 2), 0.5f};
  const BilinearResult r = bilinear_attention(h, q, w);
  const float f[3] = {std::tanh(0.5f + 0.5f), std::tanh(-0.5f + 0.5f), std::tanh(0.25f + 0.5f)};
  const float z = std::exp(f[0]) + std::exp(f[1]) + std::exp(f[2]);
  ASSERT_EQ(r.weights.size(), 3);
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(r.weights(i), std::exp(f[i]) / z, 1e-6f);
  EXPECT_NEAR(r.representation(0), r.weights(0) + r.weights(2), 1e-6f);
  EXPECT_NEAR(r.representation(1), 2 * r.weights(1) + r.weights(2), 1e-6f);
  // An empty sequence gives no weights and a zero representation.
  const BilinearResult none = bilinear_attention(Matrix(0, 2), q, w);
  EXPECT_EQ(none.weights.size(), 0);
  EXPECT_EQ(none.representation, RowVector::Zero(2));
}

TEST(Aspect, InteractiveAttentionUsesEachOthersAverage) {
  const Matrix context = random_normal(5, 8, 1), target = random_normal(2, 8, 2);
  const IanWeights w = random_ian_weights(8, 3);
  AttentionTrace trace;
  const IanResult r = interactive_attention(context, target, w, {.trace = &trace});
  const BilinearResult c = bilinear_attention(context, target.colwise().mean(), w.context);
  const BilinearResult t = bilinear_attention(target, context.colwise().mean(), w.target);
  EXPECT_EQ(r.context.weights, c.weights);
  EXPECT_EQ(r.target.weights, t.weights);
  EXPECT_EQ(r.output.head(8), c.representation);
  EXPECT_EQ(r.output.tail(8), t.representation);
  ASSERT_EQ(trace.size(), 2u);
  EXPECT_EQ(trace.maps()[0].name, "context");
  EXPECT_EQ(trace.maps()[1].weights, Matrix(t.weights));
}

// Hop 1 attends the contexts with the target's mean and the target with each context's representation; hop 2
// attends the contexts with hop 1's target representations.
TEST(Aspect, RotatoryHopsPassTheTargetRepresentationsOn) {
  const Matrix left = random_normal(3, 6, 11), target = random_normal(2, 6, 12), right = random_normal(4, 6, 13);
  const auto w = random_rotatory_weights(6, 2, 14);
  AttentionTrace trace;
  const RotatoryResult r = rotatory_attention(left, target, right, w, {.trace = &trace});
  ASSERT_EQ(r.hops.size(), 2u);
  const RowVector mean = target.colwise().mean();
  const auto hop1_left = bilinear_attention(left, mean, w[0].left);
  const auto hop1_right = bilinear_attention(right, mean, w[0].right);
  const auto hop1_tl = bilinear_attention(target, hop1_left.representation, w[0].target_left);
  const auto hop1_tr = bilinear_attention(target, hop1_right.representation, w[0].target_right);
  EXPECT_EQ(r.hops[0].left.weights, hop1_left.weights);
  EXPECT_EQ(r.hops[0].target_right.weights, hop1_tr.weights);
  const auto hop2_left = bilinear_attention(left, hop1_tl.representation, w[1].left);
  const auto hop2_right = bilinear_attention(right, hop1_tr.representation, w[1].right);
  EXPECT_EQ(r.hops[1].left.weights, hop2_left.weights);
  EXPECT_EQ(r.hops[1].right.weights, hop2_right.weights);
  const auto hop2_tl = bilinear_attention(target, hop2_left.representation, w[1].target_left);
  EXPECT_EQ(r.output.segment(6, 6), hop2_tl.representation);
  EXPECT_EQ(r.output.head(6), hop2_left.representation);
  ASSERT_EQ(trace.size(), 4u);  // one map per distribution, a row per hop
  EXPECT_EQ(trace.maps()[0].name, "left context");
  EXPECT_EQ(trace.maps()[0].weights.row(1), hop2_left.weights);
  EXPECT_EQ(trace.maps()[3].name, "target (right query)");
  EXPECT_EQ(trace.maps()[3].weights.row(0), hop1_tr.weights);
  // A target at the start of the sentence: no left context, whose representation is zero.
  AttentionTrace starts;
  const RotatoryResult first = rotatory_attention(Matrix(0, 6), target, right, w, {.trace = &starts});
  EXPECT_EQ(first.hops[0].left.representation, RowVector::Zero(6));
  EXPECT_EQ(starts.size(), 3u);
}

TEST(Aspect, TargetMarkupAndItsRefusals) {
  auto ok = lab::parse_target_markup("the [battery life] is great");
  ASSERT_TRUE(ok) << ok.error().message();
  EXPECT_EQ(ok->text, "the  battery life  is great");
  EXPECT_EQ(ok->begin, 5);
  EXPECT_EQ(ok->end, 17);
  const auto refused = [](std::string_view text) {
    auto r = lab::parse_target_markup(text);
    EXPECT_FALSE(r) << text;
    return r ? std::string() : r.error().message();
  };
  EXPECT_EQ(refused("no brackets here"),
            "source: no target marked: put the target phrase in brackets, e.g. \"after a week of daily use the "
            "[battery life] is great but the screen is dim\"");
  EXPECT_EQ(refused("an [ ] empty one"), "source: byte 3: the target is empty");
  EXPECT_EQ(refused("a [nested [one]]"),
            "source: byte 10: nested target: '[' inside the target opened at byte 2; mark one phrase");
  EXPECT_EQ(refused("[one] and [two]"), "source: byte 10: a second target; mark one phrase (the first is at byte 0)");
  EXPECT_EQ(refused("closes ] nothing"), "source: byte 7: ']' closes no '['");
  EXPECT_EQ(refused("never [closed"), "source: byte 6: '[' is never closed with ']'");
}

TEST(Aspect, LabLabelsEveryMapWithItsWords) {
  lab::LabRequest request{"", std::string(lab::kTargetExample), {}};
  request.params.mechanism = lab::Mechanism::Rotatory;
  request.params.hops = 2;
  auto r = lab::run_lab(request);
  ASSERT_TRUE(r) << r.error().message();
  ASSERT_EQ(r->trace.size(), 4u);
  const AttentionMap& left = r->trace.maps()[0];
  EXPECT_EQ(left.col_labels, (Labels{"after", "a", "week", "of", "daily", "use", "the"}));
  EXPECT_EQ(left.row_labels, (Labels{"hop 0 \u00b7 r_t", "hop 1 \u00b7 r_t^l"}));
  const AttentionMap& target = r->trace.maps()[2];
  EXPECT_EQ(target.col_labels, (Labels{"battery", "life"}));
  EXPECT_EQ(target.row_labels, (Labels{"hop 0 \u00b7 r^l", "hop 1 \u00b7 r^l"}));
  EXPECT_EQ(target.col_spans[0].begin, 31);  // bytes of what was typed, brackets included
  EXPECT_EQ(r->notes.front(), "target: \"battery life\" \u00b7 left context: 7 words \u00b7 right context: 7 words");
  request.params.mechanism = lab::Mechanism::Interactive;
  auto ian = lab::run_lab(request);
  ASSERT_TRUE(ian) << ian.error().message();
  ASSERT_EQ(ian->trace.size(), 2u);
  EXPECT_EQ(ian->trace.maps()[0].col_labels.size(), 14u);  // the sentence's words outside the target
  request.source = "[the whole thing]";
  EXPECT_EQ(lab::run_lab(request).error().reason,
            "the target is the whole sentence: IAN needs context words around it");
  request.source = "no target";
  EXPECT_FALSE(lab::run_lab(request));
}

}  // namespace
}  // namespace attn
