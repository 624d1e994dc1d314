// The synthetic scenes (attn/vision/scenes.h): the invariants tools/train/scenes_data.py's docstring
// promises, over a few hundred seeds, and the masks on the captioner's grid. The pixel-by-pixel comparison
// with Python (the fixture tests/data/captioner/scenes.*) is in tests/parity/test_captioner_parity.cpp.
#include "attn/vision/scenes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace attn {
namespace {

TEST(Scenes, KeepTheDocstringsPromises) {
  const auto& vocab = scene_vocabulary();
  ASSERT_EQ(vocab.size(), 22u);
  EXPECT_EQ(vocab[3], "<unk>");
  const std::set<std::string> words(vocab.begin() + 4, vocab.end());
  for (std::uint64_t seed = 100; seed < 400; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const Scene s = generate_scene(seed);
    ASSERT_GE(s.objects.size(), 1u);
    ASSERT_LE(s.objects.size(), 4u);
    EXPECT_LE(s.words.size(), 19u);
    ASSERT_EQ(s.word_objects.size(), s.words.size());
    std::string joined;
    for (const auto& w : s.words) {
      EXPECT_TRUE(words.count(w)) << w;
      joined += (joined.empty() ? "" : " ") + w;
    }
    EXPECT_EQ(joined, s.caption);
    std::vector<int> owners(static_cast<std::size_t>(kSceneSize * kSceneSize), 0);
    for (const auto& o : s.objects) {
      EXPECT_GE(o.bbox[0], 2);
      EXPECT_GE(o.bbox[1], 2);
      EXPECT_LE(o.bbox[2], 126);
      EXPECT_LE(o.bbox[3], 126);
      for (std::size_t i = 0; i < o.mask.size(); ++i) {
        if (!o.mask[i]) continue;
        ++owners[i];
        EXPECT_EQ(s.pixels[i * 3], o.rgb[0]);
        EXPECT_EQ(s.pixels[i * 3 + 2], o.rgb[2]);
      }
    }
    EXPECT_LE(*std::max_element(owners.begin(), owners.end()), 1);  // masks are disjoint
  }
  // Deterministic, and the image is the pixels / 255.
  const Scene a = generate_scene(5), b = generate_scene(5);
  EXPECT_EQ(a.pixels, b.pixels);
  const Image img = a.image();
  ASSERT_EQ(img.channels, 3);
  EXPECT_FLOAT_EQ(img.at(1, 10, 20), static_cast<float>(a.pixels[(10 * kSceneSize + 20) * 3 + 1]) / 255.0f);
}

TEST(Scenes, MaskCoverageOnTheGrid) {
  const Scene s = generate_scene(3);
  for (const auto& o : s.objects) {
    const Matrix m = mask_coverage(o, 8);  // 16-pixel cells
    ASSERT_EQ(m.rows(), 8);
    ASSERT_EQ(m.cols(), 8);
    const auto area = std::count(o.mask.begin(), o.mask.end(), 1);
    EXPECT_NEAR(m.sum() * 256.0f, static_cast<float>(area), 1e-3f);
    // The cell holding the box's top-left pixel, counted directly.
    const int cy = o.bbox[1] / 16, cx = o.bbox[0] / 16;
    int inside = 0;
    for (int y = cy * 16; y < cy * 16 + 16; ++y) {
      for (int x = cx * 16; x < cx * 16 + 16; ++x) inside += o.mask[static_cast<std::size_t>(y * kSceneSize + x)];
    }
    EXPECT_FLOAT_EQ(m(cy, cx), static_cast<float>(inside) / 256.0f);
    EXPECT_GE(m.minCoeff(), 0.0f);
    EXPECT_LE(m.maxCoeff(), 1.0f);
  }
  EXPECT_EQ(mask_coverage(s.objects[0], 3).size(), 0);
}

}  // namespace
}  // namespace attn
