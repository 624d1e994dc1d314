// Reader for the torch-generated parity fixtures in tests/data/parity (written by
// tools/parity/make_fixtures.py) and the comparison every parity test uses.
//
// A fixture that is missing, is not valid JSON, lacks a field, or whose arrays do not have the shape
// the test asks for throws FixtureError: GoogleTest reports that as a failure of the test, never a skip.
#pragma once

#include "attn/core.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace attn::parity {

// The parity tolerance: max absolute error per element.
inline constexpr double kTolerance = 1e-5;
// The glimpse issue's tolerance (STN and DRAW glimpses against torch and the paper's formulas): pixel values
// are in [0, 1] and a glimpse sums dozens of float32 products, so 1e-4 absolute.
inline constexpr double kGlimpseTolerance = 1e-4;
// Pass for "any size" in a shape check.
inline constexpr Index kAny = -1;

using BoolMatrix = Eigen::Array<bool, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

class FixtureError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The directory the build points the tests at (ATTN_PARITY_DIR).
std::filesystem::path fixture_dir();

class Fixture {
 public:
  // Loads <fixture_dir>/<name>.json and checks its header ("format", "case" == name, "kind").
  static Fixture load(std::string_view name);
  // Loads any path; `expected_case` (when non-empty) must equal the file's "case".
  static Fixture load_file(const std::filesystem::path& path, std::string_view expected_case = {});

  const std::string& name() const { return name_; }
  const std::string& kind() const { return kind_; }
  const std::filesystem::path& path() const { return path_; }

  // Typed access to "params"; a missing key or a wrong type throws.
  double number(std::string_view key) const;
  int integer(std::string_view key) const;
  bool flag(std::string_view key) const;
  std::string text(std::string_view key) const;

  bool has_input(std::string_view key) const;
  bool has_expected(std::string_view key) const;
  // 2-D float arrays from "inputs" / "expected", checked against rows x cols (kAny to accept any).
  Matrix input(std::string_view key, Index rows = kAny, Index cols = kAny) const;
  Matrix expected(std::string_view key, Index rows = kAny, Index cols = kAny) const;
  // 1-D float array from "inputs".
  Vector input_vector(std::string_view key, Index size = kAny) const;
  // 2-D boolean array from "inputs" (mask keep patterns).
  BoolMatrix input_keep(std::string_view key, Index rows = kAny, Index cols = kAny) const;
  // 3-D float array from "inputs" as `count` matrices of rows x cols (e.g. an image's [C, H, W] planes).
  std::vector<Matrix> input_stack(std::string_view key, Index count = kAny, Index rows = kAny, Index cols = kAny) const;
  // 3-D float array from "expected" as `count` matrices of rows x cols (e.g. per-head weights).
  std::vector<Matrix> expected_stack(std::string_view key, Index count = kAny, Index rows = kAny,
                                     Index cols = kAny) const;

 private:
  const nlohmann::json& tensor(std::string_view section, std::string_view key) const;
  [[noreturn]] void fail(const std::string& what) const;

  std::filesystem::path path_;
  std::string name_;
  std::string kind_;
  nlohmann::json json_;
};

// Element-wise |expected - actual| <= tol for every element, with identical shapes. A NaN or infinity in
// `actual` fails. On failure the message names the worst element (row, column, both values) and how
// many elements are beyond the tolerance.
::testing::AssertionResult all_near(const Matrix& expected, const Matrix& actual, double tol = kTolerance);

}  // namespace attn::parity
