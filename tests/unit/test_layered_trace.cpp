#include "attn/layered_trace.h"

#include <gtest/gtest.h>

namespace attn {
namespace {

HeadStack two_heads(Precision p) {
  HeadStack s(2, 2, 3, p);
  Matrix a(2, 3), b(2, 3);
  a << 0.5f, 0.25f, 0.25f, 0.1f, 0.2f, 0.7f;
  b << 1.0f, 0.0f, 0.0f, 0.3f, 0.3f, 0.4f;
  s.set_head(0, a);
  s.set_head(1, b);
  return s;
}

TEST(HeadStack, StoresHeadsRowMajorInFloat32) {
  HeadStack s = two_heads(Precision::F32);
  EXPECT_EQ(s.bytes(), 2u * 2 * 3 * sizeof(float));
  EXPECT_FLOAT_EQ(s.f32(1)[3], 0.3f);
  EXPECT_FLOAT_EQ(s.at(0, 1, 2), 0.7f);
  EXPECT_FLOAT_EQ(s.head(1)(0, 0), 1.0f);
  Matrix mean = s.mean();
  EXPECT_FLOAT_EQ(mean(0, 0), 0.75f);
  EXPECT_FLOAT_EQ(mean(1, 2), 0.55f);
}

TEST(HeadStack, Float16HalvesTheBytesAndKeepsThreeDigits) {
  HeadStack s = two_heads(Precision::F16);
  EXPECT_EQ(s.bytes(), 2u * 2 * 3 * 2);
  EXPECT_NEAR(s.at(0, 1, 0), 0.1f, 1e-4f);
  EXPECT_NE(s.at(0, 1, 0), 0.1f);  // 0.1 is not a half: the stack really is float16
  EXPECT_NEAR(s.mean()(1, 2), 0.55f, 1e-3f);
}

TEST(LayeredTrace, MapLabelsOneHeadOrTheMean) {
  LayeredTrace t;
  t.tokens = {"[CLS]", "hi", "[SEP]"};
  t.spans = {{0, 0}, {0, 2}, {0, 0}};
  HeadStack s(2, 3, 3);
  s.set_head(0, Matrix::Identity(3, 3));
  s.set_head(1, Matrix::Constant(3, 3, 1.0f / 3));
  t.layers.push_back({Stage::Encoder, 0, s});
  t.layers.push_back({Stage::Encoder, 1, s});
  EXPECT_EQ(t.layer_count(), 2);
  EXPECT_EQ(t.layer_count(Stage::Decoder), 0);
  auto head = t.map(Stage::Encoder, 1, 0);
  ASSERT_TRUE(head);
  EXPECT_EQ(head->layer, 1);  // layers and heads 0-based, as every index AttnScope shows
  EXPECT_EQ(head->title(), "attention · encoder layer 1 · head 0");
  EXPECT_EQ(head->row_labels, t.tokens);
  EXPECT_EQ(head->col_spans[1], (Span{0, 2}));
  auto mean = t.map(Stage::Encoder, 0, -1);
  ASSERT_TRUE(mean);
  EXPECT_NEAR(mean->weights(0, 0), (1.0f + 1.0f / 3) / 2, 1e-6f);
  EXPECT_FALSE(t.map(Stage::Encoder, 2, 0));
  EXPECT_FALSE(t.map(Stage::Encoder, 0, 2));
}

}  // namespace
}  // namespace attn
