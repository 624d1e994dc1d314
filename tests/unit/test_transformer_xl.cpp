// Transformer-XL's relative attention over [memory; segment]: what each term and the memory must be, from
// Dai et al. 2019, sec. 3.2-3.3.
#include "attn/lab/lab.h"
#include "attn/mechanisms/transformer_xl.h"
#include "attn/random.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

namespace attn {
namespace {

TEST(TransformerXL, RelativeEncodingsAreSinThenCos) {
  const Matrix R = relative_encodings(5, 6);
  EXPECT_EQ(R.row(0), (RowVector(6) << 0, 0, 0, 1, 1, 1).finished());
  EXPECT_FLOAT_EQ(R(3, 0), std::sin(3.0f));
  EXPECT_FLOAT_EQ(R(3, 4), std::cos(3.0f * std::pow(10000.0f, -2.0f / 6.0f)));
}

// The four terms add up to the logits: the weights are their softmax over what the causal mask leaves.
// (c) = u . k_j depends on the key only, (d) = v . W_R R_{i-j} on the distance only.
TEST(TransformerXL, TermsSumToTheLogitsAndDependOnWhatTheyShould) {
  const Matrix x = random_normal(11, 8, 1);
  const auto w = random_transformer_xl_weights(8, 1, 2);
  const TransformerXLResult r = transformer_xl(x, w, 4);
  ASSERT_EQ(r.segments.size(), 3u);  // 4 + 4 + 3
  const XLAttention& a = r.segments[1][0];
  ASSERT_EQ(a.memory, 4);
  ASSERT_EQ(a.weights.rows(), 4);
  ASSERT_EQ(a.weights.cols(), 8);
  for (Index i = 0; i < 4; ++i) {
    float top = -std::numeric_limits<float>::infinity();
    for (Index j = 0; j <= 4 + i; ++j) {
      top = std::max(top, a.terms[0](i, j) + a.terms[1](i, j) + a.terms[2](i, j) + a.terms[3](i, j));
    }
    double sum = 0;
    for (Index j = 0; j <= 4 + i; ++j) {
      sum += std::exp(a.terms[0](i, j) + a.terms[1](i, j) + a.terms[2](i, j) + a.terms[3](i, j) - top);
    }
    for (Index j = 0; j < 8; ++j) {
      if (j > 4 + i) {  // a later token: masked
        EXPECT_EQ(a.weights(i, j), 0.0f);
        for (const Matrix& t : a.terms) EXPECT_TRUE(std::isnan(t(i, j)));
        continue;
      }
      const float logit = a.terms[0](i, j) + a.terms[1](i, j) + a.terms[2](i, j) + a.terms[3](i, j);
      EXPECT_NEAR(a.weights(i, j), std::exp(logit - top) / sum, 1e-6);
      EXPECT_FLOAT_EQ(a.terms[2](i, j), a.terms[2](3, j)) << "(c) is the same for every query";
      if (i + 1 < 4) {
        EXPECT_FLOAT_EQ(a.terms[3](i, j), a.terms[3](i + 1, j + 1)) << "(d) depends on i - j";
      }
    }
  }
  EXPECT_EQ(r.segments[0][0].memory, 0);  // the first segment has no memory
  EXPECT_EQ(r.segments[2][0].weights.rows(), 3);
}

// The memory carries the previous segment: change the first segment's tokens and the second attends
// differently; change the third's and the second does not move (causal).
TEST(TransformerXL, TheMemoryIsThePreviousSegment) {
  const Matrix x = random_normal(12, 8, 3);
  const auto w = random_transformer_xl_weights(8, 2, 4);
  const TransformerXLResult base = transformer_xl(x, w, 4);
  Matrix earlier = x, later = x;
  earlier.row(1) = random_normal(1, 8, 5);
  later.row(10) = random_normal(1, 8, 6);
  for (int layer = 0; layer < 2; ++layer) {
    EXPECT_GT((transformer_xl(earlier, w, 4).segments[1][layer].weights - base.segments[1][layer].weights)
                  .cwiseAbs()
                  .maxCoeff(),
              1e-4f);
    EXPECT_EQ(transformer_xl(later, w, 4).segments[1][layer].weights, base.segments[1][layer].weights);
  }
  // Two segments back reaches layer 1 through layer 0's memory only: layer 0 of segment 3 cannot see it.
  EXPECT_EQ(transformer_xl(earlier, w, 4).segments[2][0].weights, base.segments[2][0].weights);
  EXPECT_NE(transformer_xl(earlier, w, 4).segments[2][1].weights, base.segments[2][1].weights);
}

TEST(TransformerXL, LabLabelsTheMemoryAndStepsBySegment) {
  lab::LabRequest request;
  request.params.mechanism = lab::Mechanism::TransformerXL;
  request.source = "one two three four five six seven";
  request.params.segment = 3;
  request.params.layers = 2;
  const auto r = lab::run_lab(request);
  ASSERT_TRUE(r) << r.error().message();
  ASSERT_EQ(r->trace.size(), 3u * 2u * 5u);     // segments x layers x (attention and four terms)
  const AttentionMap& m = r->trace.maps()[10];  // segment 1 (the second), layer 0, attention
  EXPECT_EQ(m.name, "attention \u00b7 layer 0 \u00b7 segment 1");
  EXPECT_EQ(m.row_labels, (Labels{"four", "five", "six"}));
  EXPECT_EQ(m.col_labels, (Labels{"[m] one", "[m] two", "[m] three", "four", "five", "six"}));
  EXPECT_EQ(r->trace.maps()[11].name, "(a) content \u00b7 layer 0 \u00b7 segment 1");
  EXPECT_EQ(r->trace.maps()[15].layer, 1);
  request.params.segment = 0;
  EXPECT_EQ(lab::run_lab(request).error().reason, "the segment length L must be between 1 and 2,048 (got 0)");
}

// Long work reports its segments and stops between them (issue 41): the Lab's busy row and Cancel.
TEST(TransformerXL, ReportsEachSegmentAndStopsWhenCancelled) {
  const Matrix x = random_normal(10, 8, 3);
  const auto w = random_transformer_xl_weights(8, 2, 4);
  std::vector<std::pair<int, int>> reports;
  const TransformerXLResult all =
      transformer_xl(x, w, 4, {}, nullptr, [&](int done, int of) { reports.emplace_back(done, of); });
  EXPECT_EQ(all.segments.size(), 3u);
  EXPECT_EQ(reports, (std::vector<std::pair<int, int>>{{1, 3}, {2, 3}, {3, 3}}));

  std::atomic<bool> cancel{false};
  const TransformerXLResult one = transformer_xl(x, w, 4, {}, &cancel, [&](int, int) { cancel.store(true); });
  EXPECT_EQ(one.segments.size(), 1u);  // stopped after the first segment

  lab::LabRequest request;
  request.params.mechanism = lab::Mechanism::TransformerXL;
  request.source = "one two three four five six seven";
  request.params.segment = 3;
  int steps = 0;
  std::atomic<bool> stop{false};
  const auto cancelled = lab::run_lab(request, {.cancel = &stop, .on_progress = [&](int done, int of) {
                                                  steps = of;
                                                  if (done == 1) stop.store(true);
                                                }});
  ASSERT_FALSE(cancelled);
  EXPECT_EQ(cancelled.error().kind, ErrorKind::Cancelled);
  EXPECT_EQ(steps, 3);
  stop.store(false);
  EXPECT_TRUE(lab::run_lab(request, {.cancel = &stop, .on_progress = {}}));
  stop.store(true);  // cancelled before it starts: any mechanism
  request.params.mechanism = lab::Mechanism::MultiHead;
  EXPECT_EQ(lab::run_lab(request, {.cancel = &stop, .on_progress = {}}).error().kind, ErrorKind::Cancelled);
}

}  // namespace
}  // namespace attn
