#include "fixture.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <fstream>
#include <limits>
#include <sstream>

namespace attn::parity {

namespace {

using nlohmann::json;

constexpr int kFormat = 1;

[[noreturn]] void throw_at(const std::filesystem::path& path, const std::string& what) {
  throw FixtureError("parity fixture " + path.string() + ": " + what);
}

std::string shape_text(const std::vector<Index>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    s += (i ? ", " : "") + std::to_string(shape[i]);
  }
  return s + "]";
}

enum class Leaf { Float, Bool };

// Walks `data` against `shape`, appending leaves in row-major order; returns an error text or "".
std::string flatten(const json& data, const std::vector<Index>& shape, std::size_t depth, Leaf leaf,
                    std::vector<float>& floats, std::vector<bool>& bools) {
  if (depth == shape.size()) {
    if (leaf == Leaf::Bool) {
      if (!data.is_boolean()) {
        return "expected a boolean, found " + std::string(data.type_name());
      }
      bools.push_back(data.get<bool>());
      return {};
    }
    if (!data.is_number()) {
      return "expected a number, found " + std::string(data.type_name());
    }
    const double v = data.get<double>();
    if (!std::isfinite(v) || std::abs(v) > std::numeric_limits<float>::max()) {
      return "number out of float range: " + data.dump();
    }
    floats.push_back(static_cast<float>(v));
    return {};
  }
  if (!data.is_array()) {
    return "expected an array at depth " + std::to_string(depth) + ", found " + std::string(data.type_name());
  }
  if (static_cast<Index>(data.size()) != shape[depth]) {
    return "array at depth " + std::to_string(depth) + " has " + std::to_string(data.size()) +
           " elements, shape says " + std::to_string(shape[depth]);
  }
  for (const json& item : data) {
    if (std::string err = flatten(item, shape, depth + 1, leaf, floats, bools); !err.empty()) {
      return err;
    }
  }
  return {};
}

struct Flat {
  std::vector<Index> shape;
  std::vector<float> floats;
  std::vector<bool> bools;
};

}  // namespace

std::filesystem::path fixture_dir() { return std::filesystem::path(ATTN_PARITY_DIR); }

Fixture Fixture::load(std::string_view name) { return load_file(fixture_dir() / (std::string(name) + ".json"), name); }

Fixture Fixture::load_file(const std::filesystem::path& path, std::string_view expected_case) {
  Fixture f;
  f.path_ = path;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    f.fail(
        "cannot open the fixture (regenerate with /usr/bin/python3 tools/parity/make_fixtures.py, or "
        "tools/parity/make_glimpse_fixtures.py for glimpse_*)");
  }
  try {
    f.json_ = json::parse(in);
  } catch (const json::parse_error& e) {
    f.fail(std::string("not valid JSON: ") + e.what());
  }
  if (!f.json_.is_object()) {
    f.fail("top level is not an object");
  }
  const auto& j = f.json_;
  if (!j.contains("format") || !j["format"].is_number_integer() || j["format"].get<int>() != kFormat) {
    f.fail("missing or unsupported \"format\" (this reader knows format " + std::to_string(kFormat) + ")");
  }
  for (const char* key : {"case", "kind"}) {
    if (!j.contains(key) || !j[key].is_string()) {
      f.fail(std::string("missing string field \"") + key + "\"");
    }
  }
  for (const char* key : {"params", "inputs", "expected"}) {
    if (!j.contains(key) || !j[key].is_object()) {
      f.fail(std::string("missing object field \"") + key + "\"");
    }
  }
  f.name_ = j["case"].get<std::string>();
  f.kind_ = j["kind"].get<std::string>();
  if (!expected_case.empty() && f.name_ != expected_case) {
    f.fail("\"case\" is \"" + f.name_ + "\", expected \"" + std::string(expected_case) + "\"");
  }
  if (j["expected"].empty()) {
    f.fail("\"expected\" holds no tensor");
  }
  return f;
}

void Fixture::fail(const std::string& what) const { throw_at(path_, what); }

namespace {

const json& param(const json& j, std::string_view key, const std::filesystem::path& path) {
  const json& params = j["params"];
  const auto it = params.find(std::string(key));
  if (it == params.end()) {
    throw_at(path, "params has no \"" + std::string(key) + "\"");
  }
  return *it;
}

}  // namespace

double Fixture::number(std::string_view key) const {
  const json& v = param(json_, key, path_);
  if (!v.is_number()) {
    fail("params." + std::string(key) + " is not a number");
  }
  return v.get<double>();
}

int Fixture::integer(std::string_view key) const {
  const json& v = param(json_, key, path_);
  if (!v.is_number_integer()) {
    fail("params." + std::string(key) + " is not an integer");
  }
  return v.get<int>();
}

bool Fixture::flag(std::string_view key) const {
  const json& v = param(json_, key, path_);
  if (!v.is_boolean()) {
    fail("params." + std::string(key) + " is not a boolean");
  }
  return v.get<bool>();
}

std::string Fixture::text(std::string_view key) const {
  const json& v = param(json_, key, path_);
  if (!v.is_string()) {
    fail("params." + std::string(key) + " is not a string");
  }
  return v.get<std::string>();
}

bool Fixture::has_input(std::string_view key) const { return json_["inputs"].contains(std::string(key)); }

bool Fixture::has_expected(std::string_view key) const { return json_["expected"].contains(std::string(key)); }

const nlohmann::json& Fixture::tensor(std::string_view section, std::string_view key) const {
  const json& s = json_[std::string(section)];
  const auto it = s.find(std::string(key));
  if (it == s.end()) {
    fail(std::string(section) + " has no tensor \"" + std::string(key) + "\"");
  }
  if (!it->is_object() || it->size() != 2 || !it->contains("shape") || !it->contains("data") ||
      !(*it)["shape"].is_array()) {
    fail(std::string(section) + "." + std::string(key) + " is not a {shape, data} tensor");
  }
  return *it;
}

namespace {

Flat read_tensor(const json& t, Leaf leaf, std::size_t rank, const std::vector<Index>& want, const std::string& what,
                 const std::filesystem::path& path) {
  const auto fail = [&path](const std::string& m) { throw_at(path, m); };
  Flat flat;
  for (const json& d : t["shape"]) {
    if (!d.is_number_integer() || d.get<Index>() < 0) {
      fail(what + ": shape holds a non-integer or negative extent");
    }
    flat.shape.push_back(d.get<Index>());
  }
  if (flat.shape.size() != rank) {
    fail(what + ": rank " + std::to_string(flat.shape.size()) + " (shape " + shape_text(flat.shape) +
         "), the test needs rank " + std::to_string(rank));
  }
  for (std::size_t i = 0; i < rank; ++i) {
    if (want[i] != kAny && want[i] != flat.shape[i]) {
      fail(what + ": shape " + shape_text(flat.shape) + ", the test needs " + shape_text(want) + " (-1 = any)");
    }
  }
  if (std::string err = flatten(t["data"], flat.shape, 0, leaf, flat.floats, flat.bools); !err.empty()) {
    fail(what + ": " + err);
  }
  return flat;
}

}  // namespace

Matrix Fixture::input(std::string_view key, Index rows, Index cols) const {
  const std::string what = "inputs." + std::string(key);
  Flat f = read_tensor(tensor("inputs", key), Leaf::Float, 2, {rows, cols}, what, path_);
  return Eigen::Map<const Matrix>(f.floats.data(), f.shape[0], f.shape[1]);
}

Matrix Fixture::expected(std::string_view key, Index rows, Index cols) const {
  const std::string what = "expected." + std::string(key);
  Flat f = read_tensor(tensor("expected", key), Leaf::Float, 2, {rows, cols}, what, path_);
  return Eigen::Map<const Matrix>(f.floats.data(), f.shape[0], f.shape[1]);
}

Vector Fixture::input_vector(std::string_view key, Index size) const {
  const std::string what = "inputs." + std::string(key);
  Flat f = read_tensor(tensor("inputs", key), Leaf::Float, 1, {size}, what, path_);
  return Eigen::Map<const Vector>(f.floats.data(), f.shape[0]);
}

BoolMatrix Fixture::input_keep(std::string_view key, Index rows, Index cols) const {
  const std::string what = "inputs." + std::string(key);
  Flat f = read_tensor(tensor("inputs", key), Leaf::Bool, 2, {rows, cols}, what, path_);
  BoolMatrix keep(f.shape[0], f.shape[1]);
  for (Index r = 0; r < keep.rows(); ++r) {
    for (Index c = 0; c < keep.cols(); ++c) {
      keep(r, c) = f.bools[static_cast<std::size_t>(r * keep.cols() + c)];
    }
  }
  return keep;
}

namespace {

std::vector<Matrix> planes(const Flat& f) {
  std::vector<Matrix> out;
  const Index plane = f.shape[1] * f.shape[2];
  for (Index i = 0; i < f.shape[0]; ++i) {
    out.emplace_back(Eigen::Map<const Matrix>(f.floats.data() + i * plane, f.shape[1], f.shape[2]));
  }
  return out;
}

}  // namespace

std::vector<Matrix> Fixture::input_stack(std::string_view key, Index count, Index rows, Index cols) const {
  const std::string what = "inputs." + std::string(key);
  return planes(read_tensor(tensor("inputs", key), Leaf::Float, 3, {count, rows, cols}, what, path_));
}

std::vector<Matrix> Fixture::expected_stack(std::string_view key, Index count, Index rows, Index cols) const {
  const std::string what = "expected." + std::string(key);
  return planes(read_tensor(tensor("expected", key), Leaf::Float, 3, {count, rows, cols}, what, path_));
}

namespace {

// The worst error of every comparison in the running test, kept as the test property "max_abs_diff"
// (in --gtest_output=xml reports), so the margin to the tolerance is visible when everything passes.
void note_worst(double err) {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  if (info == nullptr) {
    return;
  }
  static std::string current;
  static double worst = 0.0;
  const std::string id = std::string(info->test_suite_name()) + "." + info->name();
  if (id != current) {
    current = id;
    worst = 0.0;
  }
  worst = std::max(worst, err);
  std::ostringstream text;
  text.precision(3);
  text << worst;
  ::testing::Test::RecordProperty("max_abs_diff", text.str());
}

}  // namespace

::testing::AssertionResult all_near(const Matrix& expected, const Matrix& actual, double tol) {
  if (expected.rows() != actual.rows() || expected.cols() != actual.cols()) {
    return ::testing::AssertionFailure() << "shape mismatch: expected " << expected.rows() << "x" << expected.cols()
                                         << ", got " << actual.rows() << "x" << actual.cols();
  }
  double worst = -1.0;
  Index wr = 0;
  Index wc = 0;
  Index beyond = 0;
  Index non_finite = 0;
  for (Index r = 0; r < expected.rows(); ++r) {
    for (Index c = 0; c < expected.cols(); ++c) {
      const double e = expected(r, c);
      const double a = actual(r, c);
      // A NaN compares false with everything: count it as infinitely wrong rather than let it pass.
      const double err = std::isfinite(a) ? std::abs(e - a) : std::numeric_limits<double>::infinity();
      if (!std::isfinite(a)) {
        ++non_finite;
      }
      if (err > tol) {
        ++beyond;
      }
      if (err > worst) {
        worst = err;
        wr = r;
        wc = c;
      }
    }
  }
  note_worst(worst);
  if (beyond == 0) {
    return ::testing::AssertionSuccess() << "max |diff| " << worst << " <= " << tol;
  }
  std::ostringstream msg;
  msg.precision(9);
  msg << beyond << " of " << expected.size() << " elements beyond " << tol;
  if (non_finite) {
    msg << " (" << non_finite << " not finite)";
  }
  msg << "; worst at (" << wr << ", " << wc << "): expected " << expected(wr, wc) << ", got " << actual(wr, wc)
      << ", |diff| " << worst;
  return ::testing::AssertionFailure() << msg.str();
}

}  // namespace attn::parity
