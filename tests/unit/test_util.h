// Small helpers shared by the engine's unit tests.
#pragma once

#include "attn/core.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <initializer_list>
#include <random>
#include <string>
#include <system_error>

namespace attn::test {

// A folder of its own for the running test, removed with everything in it when the test ends.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            ("attn-" + std::string(info->test_suite_name()) + "-" + std::string(info->name()) + "-" +
             std::to_string(std::random_device{}()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

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
