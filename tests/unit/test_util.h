// Small helpers shared by the engine's unit tests.
#pragma once

#include "attn/core.h"

#include <gtest/gtest.h>

#include <initializer_list>

namespace attn::test {

inline Matrix mat(std::initializer_list<std::initializer_list<float>> rows) {
  Matrix m(static_cast<Index>(rows.size()), static_cast<Index>(rows.begin()->size()));
  Index i = 0;
  for (const auto& r : rows) {
    Index j = 0;
    for (float v : r) m(i, j++) = v;
    ++i;
  }
  return m;
}

inline Vector vec(std::initializer_list<float> values) {
  Vector v(static_cast<Index>(values.size()));
  Index i = 0;
  for (float x : values) v(i++) = x;
  return v;
}

inline void expect_near(const Matrix& got, const Matrix& want, float tol = 1e-5f) {
  ASSERT_EQ(got.rows(), want.rows());
  ASSERT_EQ(got.cols(), want.cols());
  for (Index i = 0; i < got.rows(); ++i)
    for (Index j = 0; j < got.cols(); ++j) EXPECT_NEAR(got(i, j), want(i, j), tol) << "at (" << i << ", " << j << ")";
}

inline void expect_rows_sum_to_one(const Matrix& w, float tol = 1e-5f) {
  for (Index i = 0; i < w.rows(); ++i) EXPECT_NEAR(w.row(i).sum(), 1.0f, tol) << "row " << i;
}

inline bool all_finite(const Matrix& m) { return m.allFinite(); }

}  // namespace attn::test
