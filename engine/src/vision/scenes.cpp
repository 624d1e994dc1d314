// tools/train/scenes_data.py's generate_scene, step by step as its docstring specifies (the section
// numbers below are the docstring's). Every random choice is one randint call in the order written there.
#include "attn/vision/scenes.h"

#include "attn/random.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>

namespace attn {

namespace {

constexpr int S = kSceneSize;
constexpr int kAttempts = 200;

constexpr const char* kShapes[] = {"circle", "square", "triangle", "cross"};
constexpr const char* kColours[] = {"red", "green", "blue", "yellow", "purple"};
constexpr const char* kSizes[] = {"small", "large"};
constexpr int kBase[5][3] = {{210, 45, 40}, {50, 170, 60}, {45, 85, 215}, {230, 205, 45}, {145, 60, 190}};
constexpr int kDirs[8][2] = {{1, 0}, {0, 1}, {1, 1}, {1, -1}, {2, 1}, {1, 2}, {2, -1}, {1, -2}};

// The docstring's PRNG: splitmix64 (attn::SplitMix64 is the same generator) and randint(n) = next() % n,
// counting the calls.
class Draws {
 public:
  explicit Draws(std::uint64_t seed) : rng_(seed) {}
  int randint(int n) {
    ++calls_;
    return static_cast<int>(rng_.next() % static_cast<std::uint64_t>(n));
  }
  int calls() const { return calls_; }

 private:
  SplitMix64 rng_;
  int calls_ = 0;
};

int mod(int a, int m) { return ((a % m) + m) % m; }

// Pixel (x, y) in doubled coordinates: its centre (2x + 1, 2y + 1).
int doubled(int v) { return 2 * v + 1; }

// 1. The background: n gratings blending two greys, plus the fixed colour ramp (red grows to the right,
// blue downwards), into `rgb` (S^2 x 3).
void background(Draws& rng, std::vector<std::uint8_t>& rgb) {
  const int n = 2 + rng.randint(2);
  const int g0 = 90 + rng.randint(76);
  const int d = 20 + rng.randint(26);
  const int g1 = g0 < 128 ? g0 + d : g0 - d;
  std::vector<int> W(static_cast<std::size_t>(S * S), 0);
  for (int k = 0; k < n; ++k) {
    const int kind = rng.randint(3);
    const auto& dir = kDirs[rng.randint(8)];
    const int dx = dir[0], dy = dir[1];
    const int P = (8 + rng.randint(25)) * (std::abs(dx) + std::abs(dy));
    const int phase = rng.randint(P);
    const int phase2 = kind == 2 ? rng.randint(P) : 0;
    for (int y = 0; y < S; ++y) {
      for (int x = 0; x < S; ++x) {
        const int px = doubled(x), py = doubled(y);
        const int t = mod(dx * px + dy * py + phase, P);
        int v = 0;
        if (kind == 0) {
          v = std::abs(2 * t - P) * 256 / P;
        } else if (kind == 1) {
          v = 2 * t >= P ? 256 : 0;
        } else {
          const int t2 = mod(-dy * px + dx * py + phase2, P);
          v = (2 * t >= P) != (2 * t2 >= P) ? 256 : 0;
        }
        W[static_cast<std::size_t>(y * S + x)] += v;
      }
    }
  }
  const int total = 256 * n;
  for (int y = 0; y < S; ++y) {
    for (int x = 0; x < S; ++x) {
      const auto i = static_cast<std::size_t>(y * S + x);
      const int grey = (g0 * (total - W[i]) + g1 * W[i] + 128 * n) / total;
      std::uint8_t* px = rgb.data() + i * 3;
      px[0] = static_cast<std::uint8_t>(grey + doubled(x) * 5 / 16 - 40);
      px[1] = static_cast<std::uint8_t>(grey);
      px[2] = static_cast<std::uint8_t>(grey + doubled(y) * 5 / 16 - 40);
    }
  }
}

// 4. Whether pixel (x, y) is inside the object (odd doubled offsets: no test is an equality).
bool inside(const SceneObject& o, int x, int y) {
  const int ax = doubled(x) - 2 * o.cx, ay = doubled(y) - 2 * o.cy, r = o.radius;
  const int aax = std::abs(ax), aay = std::abs(ay);
  if (o.shape == kShapes[0]) return ax * ax + ay * ay < 4 * r * r;
  if (o.shape == kShapes[1]) return aax < 2 * r && aay < 2 * r;
  if (o.shape == kShapes[2]) {
    const int R = r + r / 4;
    return aay < 2 * R && 2 * aax < ay + 2 * R;
  }
  const int w = (r + 2) / 3;
  return (aax < 2 * r && aay < 2 * w) || (aax < 2 * w && aay < 2 * r);
}

// 3. Placement rules (a)-(c) of object k at (cx, cy) against the objects placed before it.
bool acceptable(const std::vector<SceneObject>& objects, std::size_t k, int cx, int cy) {
  const int E = objects[k].extent;
  const std::size_t count = objects.size();
  for (std::size_t j = 0; j < k; ++j) {
    const SceneObject& o = objects[j];
    const int adx = std::abs(cx - o.cx), ady = std::abs(cy - o.cy);
    if (!(adx >= E + o.extent + 3 || ady >= E + o.extent + 3)) return false;
    if (count >= 3 && adx < 6) return false;
    if (count == 2 && std::abs(adx - ady) < 16) return false;
  }
  return true;
}

// 5. The caption's words and, per word, the object it describes.
void caption(Scene& scene) {
  const auto& objs = scene.objects;
  const std::size_t n = objs.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::vector<std::string> joint;
  if (n == 2) {
    std::size_t f = 0;
    if (objs[0].size != objs[1].size) {
      f = objs[0].size == kSizes[0] ? 0 : 1;
    } else {
      const int dx = objs[1].cx - objs[0].cx, dy = objs[1].cy - objs[0].cy;
      if (std::abs(dx) > std::abs(dy)) {
        f = objs[0].cx < objs[1].cx ? 0 : 1;
      } else {
        f = objs[0].cy < objs[1].cy ? 0 : 1;
      }
    }
    const std::size_t s = 1 - f;
    const int dx = objs[s].cx - objs[f].cx, dy = objs[s].cy - objs[f].cy;
    if (std::abs(dx) > std::abs(dy)) {
      joint = {dx > 0 ? "left" : "right", "of"};
    } else {
      joint = {dy > 0 ? "above" : "below"};
    }
    order = {f, s};
  } else if (n > 2) {
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return objs[a].cx < objs[b].cx; });
    joint = {"and"};
  }
  for (std::size_t m = 0; m < order.size(); ++m) {
    if (m > 0) {
      for (const auto& w : joint) {
        scene.words.push_back(w);
        scene.word_objects.push_back(-1);
      }
    }
    const SceneObject& o = objs[order[m]];
    for (const std::string& w : {std::string("a"), o.size, o.colour, o.shape}) {
      scene.words.push_back(w);
      scene.word_objects.push_back(w == "a" ? -1 : static_cast<int>(order[m]));
    }
  }
  for (std::size_t i = 0; i < scene.words.size(); ++i) scene.caption += (i ? " " : "") + scene.words[i];
}

}  // namespace

std::string SceneObject::phrase() const { return "a " + size + " " + colour + " " + shape; }

Image Scene::image() const {
  if (pixels.size() != static_cast<std::size_t>(S * S * 3)) return {};
  return image_from_u8(pixels.data(), S, S, 3, S * 3, 3);
}

Scene generate_scene(std::uint64_t seed) {
  Scene scene;
  scene.seed = seed;
  Draws rng(seed);
  scene.pixels.resize(static_cast<std::size_t>(S * S * 3));
  background(rng, scene.pixels);

  // 2. Attributes, all before any placement.
  const int count = 1 + rng.randint(4);
  auto& objs = scene.objects;
  objs.resize(static_cast<std::size_t>(count));
  for (auto& o : objs) {
    o.shape = kShapes[rng.randint(4)];
    const int colour = rng.randint(5);
    o.colour = kColours[colour];
    const int size = rng.randint(2);
    o.size = kSizes[size];
    o.radius = size == 0 ? 6 + rng.randint(4) : 12 + rng.randint(5);
    for (int c = 0; c < 3; ++c) {
      o.rgb[static_cast<std::size_t>(c)] =
          static_cast<std::uint8_t>(std::clamp(kBase[colour][c] + rng.randint(31) - 15, 0, 255));
    }
    o.extent = o.shape == kShapes[2] ? o.radius + o.radius / 4 : o.radius;
  }

  // 3. Placement by rejection sampling; 200 failed attempts for one object restart them all.
  for (bool placed = false; !placed;) {
    placed = true;
    for (std::size_t k = 0; k < objs.size() && placed; ++k) {
      auto& o = objs[k];
      placed = false;
      for (int attempt = 0; attempt < kAttempts && !placed; ++attempt) {
        const int cx = o.extent + 2 + rng.randint(125 - 2 * o.extent);
        const int cy = o.extent + 2 + rng.randint(125 - 2 * o.extent);
        if (acceptable(objs, k, cx, cy)) {
          o.cx = cx;
          o.cy = cy;
          placed = true;
        }
      }
    }
    if (!placed) ++scene.restarts;
  }

  // 4. Painting in order; each mask is what no later object covers.
  std::vector<std::uint8_t> covered(static_cast<std::size_t>(S * S), 0);
  for (std::size_t k = objs.size(); k-- > 0;) {
    auto& o = objs[k];
    o.mask.assign(static_cast<std::size_t>(S * S), 0);
    o.bbox = {S, S, 0, 0};
    for (int y = std::max(0, o.cy - o.extent); y < std::min(S, o.cy + o.extent + 1); ++y) {
      for (int x = std::max(0, o.cx - o.extent); x < std::min(S, o.cx + o.extent + 1); ++x) {
        if (!inside(o, x, y)) continue;
        const auto i = static_cast<std::size_t>(y * S + x);
        if (!covered[i]) {
          o.mask[i] = 1;
          o.bbox = {std::min(o.bbox[0], x), std::min(o.bbox[1], y), std::max(o.bbox[2], x + 1),
                    std::max(o.bbox[3], y + 1)};
        }
        covered[i] = 1;
      }
    }
  }
  for (const auto& o : objs) {
    for (int y = std::max(0, o.cy - o.extent); y < std::min(S, o.cy + o.extent + 1); ++y) {
      for (int x = std::max(0, o.cx - o.extent); x < std::min(S, o.cx + o.extent + 1); ++x) {
        if (!inside(o, x, y)) continue;
        std::copy(o.rgb.begin(), o.rgb.end(), scene.pixels.begin() + static_cast<std::ptrdiff_t>((y * S + x) * 3));
      }
    }
  }

  caption(scene);
  scene.prng_calls = rng.calls();
  return scene;
}

const std::vector<std::string>& scene_vocabulary() {
  static const std::vector<std::string> vocab = {
      "<pad>",  "<start>", "<end>",  "<unk>",    "a",     "small", "large", "red",  "green", "blue", "yellow",
      "purple", "circle",  "square", "triangle", "cross", "above", "below", "left", "right", "of",   "and"};
  return vocab;
}

Matrix mask_coverage(const SceneObject& object, int grid) {
  if (grid < 1 || S % grid != 0 || object.mask.size() != static_cast<std::size_t>(S * S)) return Matrix();
  const int cell = S / grid;
  Matrix out = Matrix::Zero(grid, grid);
  for (int y = 0; y < S; ++y) {
    for (int x = 0; x < S; ++x) out(y / cell, x / cell) += object.mask[static_cast<std::size_t>(y * S + x)];
  }
  return out / static_cast<float>(cell * cell);
}

}  // namespace attn
