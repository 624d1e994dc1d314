// The Show, Attend and Tell captioners against torch, and the scene generator against Python: the folders
// of tests/data/captioner hold an expected.json + expected.safetensors written by
// tools/parity/make_captioner_fixtures.py (greedy, beam search and teacher forcing of
// tools/train/captioner_torch.py in float64) whose "model" names the model folder (the case folder itself
// for the random models, a resources/models folder for the trained ones); scenes.{json,safetensors} hold
// scenes_data.generate_scene's pixels, masks, objects and captions for a few seeds. Cases are discovered by
// listing the directory; an empty or missing directory fails. Ids, words, locations and scene pixels must
// match exactly, every number within 1e-4.
#include "attn/io/safetensors.h"
#include "attn/models/captioner.h"
#include "attn/random.h"
#include "attn/vision/scenes.h"
#include "bundled_cases.h"
#include "fixture.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace attn::models {
// Named, not anonymous: the unity builds compile several test files as one.
namespace captioner_parity {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr double kTolerance = 1e-4;

fs::path cases_dir() { return parity::bundled_cases_dir("captioner"); }

// The fixture's tensors, read strictly: a missing tensor or a wrong dtype throws parity::FixtureError.
class Expected {
 public:
  explicit Expected(const fs::path& path) {
    auto file = io::SafeTensors::open(path);
    if (!file) throw parity::FixtureError(file.error().message());
    file_ = std::make_unique<io::SafeTensors>(std::move(*file));
  }
  bool has(const std::string& name) const { return file_->find(name) != nullptr; }
  const io::TensorInfo& info(const std::string& name, io::DType dtype) const {
    const io::TensorInfo* t = file_->find(name);
    if (!t) throw parity::FixtureError(file_->name() + ": no tensor " + name);
    if (t->dtype != dtype) throw parity::FixtureError(file_->name() + ": " + name + " has another dtype");
    return *t;
  }
  // A float tensor as [rows, cols] (rank 1: one row; rank 3: the first axis the rows).
  Matrix matrix(const std::string& name) const {
    const auto& t = info(name, io::DType::F32);
    auto values = file_->to_float(t);
    if (!values) throw parity::FixtureError(values.error().message());
    const Index rows = t.shape.size() == 1 ? 1 : t.shape[0];
    const Index cols = rows ? static_cast<Index>(values->size()) / rows : 0;
    return Eigen::Map<const Matrix>(values->data(), rows, cols);
  }
  template <class T>
  std::vector<T> integers(const std::string& name, io::DType dtype) const {
    const auto bytes = file_->bytes(info(name, dtype));
    std::vector<T> out(bytes.size() / sizeof(T));
    std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
    return out;
  }

 private:
  std::unique_ptr<io::SafeTensors> file_;
};

// The fixture's [S, S, 3] (y, x, RGB) image as the engine's planar input.
Image planar(const Matrix& hwc, int side) {
  Image img(side, side, 3);
  for (int y = 0; y < side; ++y) {
    for (int x = 0; x < side; ++x) {
      for (int c = 0; c < 3; ++c) img.at(c, y, x) = hwc(y, x * 3 + c);
    }
  }
  return img;
}

void compare(const Expected& e, const std::string& prefix, const json& want, const CaptionHypothesis& got, bool hard,
             bool full) {
  SCOPED_TRACE(prefix);
  const auto ids = e.integers<std::int32_t>(prefix + ".ids", io::DType::I32);
  EXPECT_EQ(got.ids, std::vector<int>(ids.begin(), ids.end()));
  EXPECT_EQ(got.ids, want.at("ids").get<std::vector<int>>());
  EXPECT_EQ(got.finished, want.at("finished").get<bool>());
  EXPECT_NEAR(got.log_prob, want.at("log_prob").get<double>(), kTolerance);
  if (full) {
    EXPECT_EQ(got.words, want.at("words").get<Labels>());
    EXPECT_EQ(got.text, want.at("text").get<std::string>());
  }
  EXPECT_TRUE(parity::all_near(e.matrix(prefix + ".alpha"), got.alpha, kTolerance)) << "alpha";
  const Matrix beta = e.matrix(prefix + ".beta");
  EXPECT_TRUE(parity::all_near(beta, Eigen::Map<const Matrix>(got.beta.data(), 1, static_cast<Index>(got.beta.size())),
                               kTolerance))
      << "beta";
  EXPECT_TRUE(parity::all_near(e.matrix(prefix + ".log_softmax"), got.log_softmax, kTolerance)) << "log_softmax";
  if (hard) {
    const auto locations = e.integers<std::int32_t>(prefix + ".locations", io::DType::I32);
    EXPECT_EQ(got.location, std::vector<int>(locations.begin(), locations.end()));
  } else {
    EXPECT_TRUE(got.location.empty());
  }
}

// The directory's own check: at least one case, and the random soft and hard ones are there.
TEST(CaptionerParityCases, TheFixtureDirectoryHoldsBothRandomVariantsAndTheScenes) {
  parity::expect_cases(cases_dir(), {"random-soft", "random-hard"});
  EXPECT_TRUE(fs::exists(cases_dir() / "scenes.json"));
  EXPECT_TRUE(fs::exists(cases_dir() / "scenes.safetensors"));
}

class CaptionerParity : public ::testing::TestWithParam<std::string> {};

TEST_P(CaptionerParity, FeaturesGreedyBeamAndTeacherForcingMatchTorch) {
  json expected;
  ASSERT_TRUE(parity::read_expected(cases_dir() / GetParam(), expected));
  const Expected tensors(cases_dir() / GetParam() / "expected.safetensors");
  std::shared_ptr<const CaptionerModel> model;
  ASSERT_TRUE(parity::load_case_model(expected, model));
  const bool hard = expected.at("attention") == "hard";
  ASSERT_EQ(model->config().attention == CaptionAttention::Hard, hard);
  ASSERT_EQ(model->config().grid(), expected.at("grid").get<int>());
  const int side = model->config().image_size;
  CaptionerRunner session(model);
  for (const auto& entry : expected.at("runs")) {
    const std::string name = entry.at("name");
    SCOPED_TRACE(name);
    const Image input = planar(tensors.matrix(name + ".image"), side);

    auto greedy = session.run_resized(input);
    ASSERT_TRUE(greedy.has_value()) << greedy.error().message();
    EXPECT_TRUE(parity::all_near(tensors.matrix(name + ".features"), greedy->features, kTolerance)) << "features";
    ASSERT_EQ(greedy->hypotheses.size(), 1u);
    compare(tensors, name + ".greedy", entry.at("greedy"), greedy->hypotheses[0], hard, true);

    CaptionOptions options;
    options.beam = expected.at("beam_width").get<int>();
    auto beam = session.run_resized(input, options);
    ASSERT_TRUE(beam.has_value()) << beam.error().message();
    const auto& want = entry.at("beam");
    ASSERT_EQ(beam->hypotheses.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
      compare(tensors, name + ".beam" + std::to_string(i), want[i], beam->hypotheses[i], hard, true);
    }

    auto teacher = session.run_forced(input, entry.at("teacher_ids").get<std::vector<int>>());
    ASSERT_TRUE(teacher.has_value()) << teacher.error().message();
    compare(tensors, name + ".teacher", entry.at("teacher"), teacher->hypotheses[0], hard, false);
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, CaptionerParity, ::testing::ValuesIn(parity::discover_cases(cases_dir())),
                         parity::case_test_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CaptionerParity);

// ---------------------------------------------------------------------------------------------------------
// Scenes

json read_scenes_json() {
  std::ifstream in(cases_dir() / "scenes.json");
  if (!in) throw parity::FixtureError("cannot read " + (cases_dir() / "scenes.json").string());
  json j = json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.contains("scenes") || !j.contains("splitmix64")) {
    throw parity::FixtureError("scenes.json is not valid JSON or lacks \"scenes\" / \"splitmix64\"");
  }
  return j;
}

TEST(ScenesParity, SplitMix64IsTheSameGenerator) {
  const json j = read_scenes_json();
  ASSERT_FALSE(j["splitmix64"].empty());
  for (const auto& m : j["splitmix64"]) {
    SplitMix64 rng(std::stoull(m.at("seed").get<std::string>()));
    for (const auto& out : m.at("outputs")) EXPECT_EQ(rng.next(), std::stoull(out.get<std::string>()));
  }
}

TEST(ScenesParity, PixelsMasksObjectsAndCaptionsMatchPython) {
  const json j = read_scenes_json();
  const Expected tensors(cases_dir() / "scenes.safetensors");
  ASSERT_FALSE(j["scenes"].empty());
  for (const auto& want : j["scenes"]) {
    const std::string seed_text = want.at("seed");
    SCOPED_TRACE("seed " + seed_text);
    const Scene scene = generate_scene(std::stoull(seed_text));
    EXPECT_EQ(scene.prng_calls, want.at("prng_calls").get<int>());
    EXPECT_EQ(scene.caption, want.at("caption").get<std::string>());
    EXPECT_EQ(scene.words, want.at("words").get<std::vector<std::string>>());
    EXPECT_EQ(scene.word_objects, want.at("word_objects").get<std::vector<int>>());

    const auto pixels = tensors.integers<std::uint8_t>(seed_text + ".pixels", io::DType::U8);
    ASSERT_EQ(scene.pixels.size(), pixels.size());
    std::size_t differ = 0;
    for (std::size_t i = 0; i < pixels.size(); ++i) differ += scene.pixels[i] != pixels[i];
    EXPECT_EQ(differ, 0u) << "pixel bytes differ";

    const auto labels = tensors.integers<std::uint8_t>(seed_text + ".labels", io::DType::U8);
    const auto& objects = want.at("objects");
    ASSERT_EQ(scene.objects.size(), objects.size());
    for (std::size_t k = 0; k < objects.size(); ++k) {
      SCOPED_TRACE("object " + std::to_string(k));
      const SceneObject& o = scene.objects[k];
      const auto& w = objects[k];
      EXPECT_EQ(o.shape, w.at("shape").get<std::string>());
      EXPECT_EQ(o.colour, w.at("colour").get<std::string>());
      EXPECT_EQ(o.size, w.at("size").get<std::string>());
      EXPECT_EQ(o.radius, w.at("r").get<int>());
      EXPECT_EQ(o.extent, w.at("E").get<int>());
      EXPECT_EQ(o.cx, w.at("cx").get<int>());
      EXPECT_EQ(o.cy, w.at("cy").get<int>());
      EXPECT_EQ((std::vector<int>{o.rgb[0], o.rgb[1], o.rgb[2]}), w.at("rgb").get<std::vector<int>>());
      EXPECT_EQ((std::vector<int>(o.bbox.begin(), o.bbox.end())), w.at("bbox").get<std::vector<int>>());
      std::size_t wrong = 0;
      for (std::size_t i = 0; i < labels.size(); ++i) wrong += (labels[i] == k + 1) != (o.mask[i] == 1);
      EXPECT_EQ(wrong, 0u) << "mask pixels differ";
    }
  }
}

}  // namespace captioner_parity
}  // namespace attn::models
