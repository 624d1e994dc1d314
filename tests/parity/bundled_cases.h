// What the parity suites of the demo models (test_seq2seq_parity.cpp, test_classifier_parity.cpp) share:
// the case folders of tests/data/<family>, discovered by listing the directory (an empty or missing
// directory fails), each one's expected.json, attention rows read as a matrix, and the test names.
#pragma once

#include "attn/core.h"
#include "fixture.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace attn::parity {

// The source tree (ATTN_SOURCE_DIR): the "model" paths of the cases are relative to it.
inline std::filesystem::path source_dir() { return std::filesystem::path(ATTN_SOURCE_DIR); }

// tests/data/<family>: one folder per case.
inline std::filesystem::path bundled_cases_dir(std::string_view family) {
  return source_dir() / "tests" / "data" / family;
}

// The case folders of `dir` (those holding an expected.json), sorted; empty when the directory is missing.
inline std::vector<std::string> discover_cases(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.is_directory() && std::filesystem::exists(entry.path() / "expected.json")) {
      out.push_back(entry.path().filename().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The directory's own check: it holds at least one case, and every one of `required`.
inline void expect_cases(const std::filesystem::path& dir, std::initializer_list<std::string_view> required) {
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir << " is missing";
  const auto cases = discover_cases(dir);
  ASSERT_FALSE(cases.empty()) << dir << " holds no case (no <case>/expected.json)";
  for (const std::string_view name : required) {
    EXPECT_NE(std::find(cases.begin(), cases.end(), name), cases.end()) << name << " is missing";
  }
}

// <case>/expected.json into `out`: valid JSON holding "model" (the model folder) and a non-empty "runs".
inline ::testing::AssertionResult read_expected(const std::filesystem::path& case_dir, nlohmann::json& out) {
  const std::filesystem::path path = case_dir / "expected.json";
  std::ifstream in(path);
  if (!in) return ::testing::AssertionFailure() << "cannot read " << path;
  out = nlohmann::json::parse(in, nullptr, false);
  if (out.is_discarded()) return ::testing::AssertionFailure() << path << " is not valid JSON";
  if (!out.contains("model") || !out.contains("runs")) {
    return ::testing::AssertionFailure() << path << " lacks \"model\" or \"runs\"";
  }
  if (out["runs"].empty()) return ::testing::AssertionFailure() << path << " holds no runs";
  return ::testing::AssertionSuccess();
}

// The case's model into `out`: expected["model"], a folder relative to the source tree, by Model::load.
// A model that does not load fails the assertion; load-time warnings are a (non-fatal) failure too.
template <class Model>
::testing::AssertionResult load_case_model(const nlohmann::json& expected, std::shared_ptr<const Model>& out) {
  auto model = Model::load(source_dir() / expected.at("model").get<std::string>());
  if (!model) return ::testing::AssertionFailure() << model.error().message();
  EXPECT_TRUE((*model)->warnings().empty()) << (*model)->warnings().front();
  out = std::move(*model);
  return ::testing::AssertionSuccess();
}

// A JSON list of rows of numbers as a [rows.size(), cols] matrix (cols kAny: as many as the first row
// holds). A row of another length is a test failure naming `what`, and the result is then empty.
inline Matrix rows_matrix(const nlohmann::json& rows, Index cols, std::string_view what) {
  if (cols == kAny) cols = rows.empty() ? 0 : static_cast<Index>(rows[0].size());
  Matrix m(static_cast<Index>(rows.size()), cols);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    if (rows[r].size() != static_cast<std::size_t>(cols)) {
      ADD_FAILURE() << what << " row " << r << " has " << rows[r].size() << " columns, expected " << cols;
      return Matrix();
    }
    for (std::size_t c = 0; c < rows[r].size(); ++c) {
      m(static_cast<Index>(r), static_cast<Index>(c)) = rows[r][c].get<float>();
    }
  }
  return m;
}

// Case folder names as test names ('-' is not allowed there).
inline std::string case_test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  std::replace_if(
      name.begin(), name.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
  return name;
}

}  // namespace attn::parity
