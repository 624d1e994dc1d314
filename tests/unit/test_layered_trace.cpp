#include "attn/layered_trace.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <vector>

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

// The reference for pooled(): every bin of every head reduced the obvious way, from the whole head.
Matrix pooled_reference(const Matrix& m, Index out_rows, Index out_cols, Pool pool) {
  Matrix out(out_rows, out_cols);
  for (Index i = 0; i < out_rows; ++i) {
    for (Index j = 0; j < out_cols; ++j) {
      const Index r0 = pool_bin_start(i, m.rows(), out_rows), r1 = pool_bin_start(i + 1, m.rows(), out_rows);
      const Index c0 = pool_bin_start(j, m.cols(), out_cols), c1 = pool_bin_start(j + 1, m.cols(), out_cols);
      const auto block = m.block(r0, c0, r1 - r0, c1 - c0);
      out(i, j) = block.hasNaN() ? std::numeric_limits<float>::quiet_NaN()
                                 : (pool == Pool::Max ? block.maxCoeff() : block.mean());
    }
  }
  return out;
}

HeadStack random_stack(int heads, Index rows, Index cols, Precision precision) {
  HeadStack s(heads, rows, cols, precision);
  for (int h = 0; h < heads; ++h) s.set_head(h, Matrix::Random(rows, cols).cwiseAbs());
  return s;
}

TEST(HeadStack, PooledBinsMatchTheirCellsMaxOrMean) {
  for (const Precision precision : {Precision::F32, Precision::F16}) {
    const HeadStack s = random_stack(3, 37, 23, precision);
    for (const Pool pool : {Pool::Max, Pool::Mean}) {
      for (int head = -1; head < 3; ++head) {
        SCOPED_TRACE("head " + std::to_string(head) + (pool == Pool::Max ? " max" : " mean"));
        const Matrix whole = head >= 0 ? s.head(head) : s.mean();
        const Matrix got = s.pooled(head, 8, 5, pool);  // uneven bins: 37 rows in 8, 23 columns in 5
        ASSERT_EQ(got.rows(), 8);
        ASSERT_EQ(got.cols(), 5);
        EXPECT_LT((got - pooled_reference(whole, 8, 5, pool)).cwiseAbs().maxCoeff(), 1e-6f);
      }
    }
    // A map that fits comes whole; out-of-range heads give nothing.
    EXPECT_EQ(s.pooled(1, 64, 64, Pool::Max), s.head(1));
    EXPECT_EQ(s.pooled(3, 8, 8, Pool::Max).size(), 0);
  }
  // Max keeps one sharp weight that the mean would spread over its 64 cells; a NaN marks its bin.
  HeadStack sharp(1, 16, 16);
  Matrix m = Matrix::Zero(16, 16);
  m(5, 9) = 0.9f;
  m(12, 1) = std::numeric_limits<float>::quiet_NaN();
  sharp.set_head(0, m);
  const Matrix max = sharp.pooled(0, 2, 2, Pool::Max);
  EXPECT_EQ(max(0, 1), 0.9f);
  EXPECT_EQ(max(0, 0), 0.0f);
  EXPECT_TRUE(std::isnan(max(1, 0)));
  EXPECT_FLOAT_EQ(sharp.pooled(0, 2, 2, Pool::Mean)(0, 1), 0.9f / 64.0f);
}

// A generation step: the first tokens and every map's top-left block, in the maps' precision.
TEST(LayeredTrace, PrefixKeepsTheFirstTokensOfEveryMap) {
  for (const Precision p : {Precision::F32, Precision::F16}) {
    LayeredTrace t;
    t.tokens = {"a", "b", "c"};
    t.spans = {{0, 1}, {1, 2}, {2, 3}};
    Matrix m(3, 3);
    m << 1, 0, 0, 0.5f, 0.5f, 0, 0.25f, 0.25f, 0.5f;
    HeadStack s(2, 3, 3, p);
    s.set_head(0, m);
    s.set_head(1, m.transpose());
    t.layers.push_back({Stage::Decoder, 0, s});
    t.layers.push_back({Stage::Decoder, 1, s});
    const LayeredTrace two = t.prefix(2);
    EXPECT_EQ(two.tokens, (Labels{"a", "b"}));
    EXPECT_EQ(two.spans.size(), 2u);
    ASSERT_EQ(two.layers.size(), 2u);
    EXPECT_EQ(two.layers[1].layer, 1);
    EXPECT_EQ(two.layers[1].maps.precision(), p);
    EXPECT_EQ(two.layers[1].maps.rows(), 2);
    EXPECT_EQ(two.layers[1].maps.cols(), 2);
    EXPECT_EQ(two.layers[1].maps.head(0), s.head(0).topLeftCorner(2, 2));
    EXPECT_EQ(two.layers[1].maps.head(1), s.head(1).topLeftCorner(2, 2));
    EXPECT_EQ(t.prefix(7).layers[0].maps.head(1), s.head(1));  // at most what there is
  }
}

TEST(HeadStack, ReadRowConvertsOneRow) {
  for (const Precision precision : {Precision::F32, Precision::F16}) {
    const HeadStack s = random_stack(2, 4, 9, precision);
    std::vector<float> row(9);
    s.read_row(1, 2, row.data());
    for (Index c = 0; c < 9; ++c) EXPECT_EQ(row[static_cast<std::size_t>(c)], s.at(1, 2, c));
  }
}

TEST(HeadStack, ViewSharesItsBytesUntilWritten) {
  auto bytes = std::make_shared<std::vector<float>>(std::vector<float>{0.5f, 0.5f, 0.25f, 0.75f});
  const HeadStack view = HeadStack::view(1, 2, 2, Precision::F32, bytes, bytes->data());
  EXPECT_TRUE(view.is_view());
  EXPECT_EQ(view.f32(0), bytes->data());  // not copied
  EXPECT_EQ(view.at(0, 1, 1), 0.75f);
  EXPECT_EQ(bytes.use_count(), 2);
  HeadStack copy = view;  // copies of a view share it
  EXPECT_EQ(static_cast<const HeadStack&>(copy).f32(0), bytes->data());
  EXPECT_EQ(bytes.use_count(), 3);
  copy.f32(0)[0] = 1.0f;  // the first write gives the copy storage of its own
  EXPECT_FALSE(copy.is_view());
  EXPECT_EQ(copy.at(0, 0, 0), 1.0f);
  EXPECT_EQ((*bytes)[0], 0.5f);
  EXPECT_EQ(view.at(0, 0, 0), 0.5f);
  EXPECT_EQ(bytes.use_count(), 2);
  EXPECT_THROW(HeadStack::view(1, 1, 1, Precision::F32, bytes, reinterpret_cast<const char*>(bytes->data()) + 1),
               std::invalid_argument);
}

TEST(LayeredTrace, MapAboveMaxSideComesMaxPooledWithItsSource) {
  LayeredTrace t;
  for (int i = 0; i < 10; ++i) t.tokens.push_back("t" + std::to_string(i));
  t.spans.assign(10, Span{0, 1});
  t.layers.push_back({Stage::Encoder, 0, random_stack(2, 10, 10, Precision::F32)});
  const auto whole = t.map(Stage::Encoder, 0, 1, 10);
  ASSERT_TRUE(whole);
  EXPECT_FALSE(whole->pooled);
  EXPECT_EQ(whole->weights.rows(), 10);
  const auto pooled = t.map(Stage::Encoder, 0, 1, 4);
  ASSERT_TRUE(pooled && pooled->pooled);
  EXPECT_EQ(pooled->weights, t.layers[0].maps.pooled(1, 4, 4, Pool::Max));
  EXPECT_EQ(pooled->pooled->rows, 10);
  EXPECT_EQ(pooled->pooled->cols, 10);
  EXPECT_EQ(pooled->pooled->pool, Pool::Max);
  EXPECT_EQ(pooled->pooled->row_tokens, t.tokens);
  // Bins of 10 in 4: [0, 2), [2, 5), [5, 7), [7, 10), each labelled by its first token.
  EXPECT_EQ(pooled->row_labels, (Labels{"t0", "t2", "t5", "t7"}));
  EXPECT_EQ(pooled->col_labels, pooled->row_labels);
  EXPECT_TRUE(pooled->row_spans.empty());
  const auto mean = t.map(Stage::Encoder, 0, -1, 4);
  ASSERT_TRUE(mean && mean->pooled);
  EXPECT_EQ(mean->weights, t.layers[0].maps.pooled(-1, 4, 4, Pool::Max));
}
}  // namespace
}  // namespace attn
