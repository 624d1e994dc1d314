// The parity harness itself: a broken fixture must fail, and the comparison must be able to fail.
#include "cases.h"
#include "fixture.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <set>
#include <string>
#include <unistd.h>

namespace attn::parity {
namespace {

namespace fs = std::filesystem;

class TempFile {
 public:
  explicit TempFile(const std::string& text) {
    path_ = fs::temp_directory_path() /
            ("attn_parity_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++) + ".json");
    std::ofstream(path_) << text;
  }
  ~TempFile() {
    std::error_code ec;
    fs::remove(path_, ec);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const fs::path& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

constexpr const char* kGood = R"({"format": 1, "case": "tiny", "kind": "demo", "params": {"t": 0.5, "n": 3},
  "inputs": {"a": {"shape": [2, 3], "data": [[1, 2, 3], [4, 5, 6.5]]},
             "v": {"shape": [2], "data": [0.25, -1]},
             "keep": {"shape": [1, 2], "data": [[true, false]]}},
  "expected": {"s": {"shape": [2, 1, 2], "data": [[[1, 2]], [[3, 4]]]}}})";

TEST(ParityFixture, ReadsAWellFormedFixture) {
  TempFile f(kGood);
  const Fixture fx = Fixture::load_file(f.path(), "tiny");
  EXPECT_EQ(fx.kind(), "demo");
  EXPECT_EQ(fx.number("t"), 0.5);
  EXPECT_EQ(fx.integer("n"), 3);
  const Matrix a = fx.input("a", 2, 3);
  EXPECT_EQ(a(1, 2), 6.5f);
  EXPECT_EQ(a(0, 1), 2.0f);
  const Vector v = fx.input_vector("v", 2);
  EXPECT_EQ(v(1), -1.0f);
  const BoolMatrix keep = fx.input_keep("keep", 1, 2);
  EXPECT_TRUE(keep(0, 0));
  EXPECT_FALSE(keep(0, 1));
  const std::vector<Matrix> s = fx.expected_stack("s", 2, 1, 2);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[1](0, 1), 4.0f);
}

TEST(ParityFixture, MissingFileThrows) { EXPECT_THROW(Fixture::load("no_such_case_exists"), FixtureError); }

TEST(ParityFixture, CorruptFilesThrow) {
  const std::string cases[] = {
      "",                                                 // empty
      R"({"format": 1, "case": "tiny", "kind": "demo")",  // truncated
      R"([1, 2, 3])",                                     // not an object
      R"({"format": 2, "case": "tiny", "kind": "demo", "params": {}, "inputs": {}, "expected": {"x": 1}})",
      R"({"format": 1, "kind": "demo", "params": {}, "inputs": {}, "expected": {"x": 1}})",
      R"({"format": 1, "case": "other", "kind": "demo", "params": {}, "inputs": {}, "expected": {"x": 1}})",
      R"({"format": 1, "case": "tiny", "kind": "demo", "params": {}, "inputs": {}, "expected": {}})",
  };
  for (const std::string& text : cases) {
    TempFile f(text);
    EXPECT_THROW(Fixture::load_file(f.path(), "tiny"), FixtureError) << text;
  }
}

TEST(ParityFixture, ShapeAndTypeProblemsThrow) {
  TempFile f(kGood);
  const Fixture fx = Fixture::load_file(f.path());
  EXPECT_THROW((void)fx.input("a", 3, 2), FixtureError);  // wrong shape asked
  EXPECT_THROW((void)fx.input("a", 2, 4), FixtureError);
  EXPECT_THROW((void)fx.input("v"), FixtureError);  // rank 1 read as a matrix
  EXPECT_THROW((void)fx.input("missing"), FixtureError);
  EXPECT_THROW((void)fx.expected("a"), FixtureError);    // wrong section
  EXPECT_THROW((void)fx.input_keep("a"), FixtureError);  // numbers read as booleans
  EXPECT_THROW((void)fx.input("keep"), FixtureError);    // booleans read as numbers
  EXPECT_THROW((void)fx.number("missing"), FixtureError);
  EXPECT_THROW((void)fx.flag("t"), FixtureError);
  EXPECT_THROW((void)fx.integer("t"), FixtureError);

  // Data that disagrees with its declared shape, and a non-number.
  TempFile ragged(R"({"format": 1, "case": "tiny", "kind": "demo", "params": {}, "inputs": {
      "r": {"shape": [2, 2], "data": [[1, 2], [3]]},
      "s": {"shape": [2, 2], "data": [[1, 2], [3, "x"]]},
      "b": {"shape": [1, 1], "data": [[1e300]]},
      "e": {"shape": [1], "data": [1], "extra": 0}}, "expected": {"x": 1}})");
  const Fixture bad = Fixture::load_file(ragged.path());
  EXPECT_THROW((void)bad.input("r"), FixtureError);
  EXPECT_THROW((void)bad.input("s"), FixtureError);
  EXPECT_THROW((void)bad.input("b"), FixtureError);         // outside float range
  EXPECT_THROW((void)bad.input_vector("e"), FixtureError);  // a tensor with an unknown field
}

TEST(ParityCompare, FailsWhenItShould) {
  Matrix e(2, 2);
  e << 1.0f, 2.0f, 3.0f, 4.0f;
  Matrix a = e;
  EXPECT_TRUE(all_near(e, a));
  a(1, 0) += 5e-6f;
  EXPECT_TRUE(all_near(e, a));
  a(1, 0) = e(1, 0) + 2e-5f;
  const auto r = all_near(e, a);
  EXPECT_FALSE(r);
  EXPECT_NE(std::string(r.message()).find("(1, 0)"), std::string::npos) << r.message();
  a = e;
  a(0, 1) = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(all_near(e, a));
  a(0, 1) = std::numeric_limits<float>::infinity();
  EXPECT_FALSE(all_near(e, a));
  EXPECT_FALSE(all_near(e, Matrix::Zero(2, 3)));
  EXPECT_FALSE(all_near(e, e.transpose()));  // same size, different values
}

TEST(ParityFixture, EveryFixtureFileIsRunAndEveryCaseHasAFile) {
  const fs::path dir = fixture_dir();
  ASSERT_TRUE(fs::is_directory(dir)) << dir;
  std::set<std::string> on_disk;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".json") {
      on_disk.insert(entry.path().stem().string());
    }
  }
  const std::vector<std::string> listed = all_cases();
  const std::set<std::string> listed_set(listed.begin(), listed.end());
  EXPECT_EQ(listed_set.size(), listed.size()) << "a case is listed twice in cases.h";
  for (const std::string& name : on_disk) {
    EXPECT_TRUE(listed_set.contains(name)) << name << ".json is in " << dir << " but no suite runs it";
  }
  for (const std::string& name : listed) {
    EXPECT_TRUE(on_disk.contains(name)) << name << ".json is missing from " << dir;
  }
}

}  // namespace
}  // namespace attn::parity
