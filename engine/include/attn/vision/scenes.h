// The synthetic scenes the captioners learn from (tools/train/MODELS.md section 4): 1-4 flat shapes over a
// background of gratings, with a caption such as "a small red circle above a large blue square". A port
// of tools/train/scenes_data.py's generate_scene, whose module docstring is the specification: the same
// seed gives the same pixels, objects and caption, exactly (integer arithmetic and splitmix64).
#pragma once

#include "attn/core.h"
#include "attn/vision/image.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace attn {

inline constexpr int kSceneSize = 128;

struct SceneObject {
  std::string shape;   // "circle", "square", "triangle", "cross"
  std::string colour;  // "red", "green", "blue", "yellow", "purple"
  std::string size;    // "small", "large"
  int radius = 0;      // r
  int extent = 0;      // E: the half side of its box (r, or r + r / 4 for a triangle)
  std::array<std::uint8_t, 3> rgb{};
  int cx = 0, cy = 0;              // centre pixel
  std::vector<std::uint8_t> mask;  // kSceneSize^2, row-major: 1 where the object is seen
  std::array<int, 4> bbox{};       // the mask's x0, y0, x1, y1 (exclusive ends)

  std::string phrase() const;  // "a small red circle"
};

struct Scene {
  std::uint64_t seed = 0;
  std::vector<std::uint8_t> pixels;  // kSceneSize^2 x 3, interleaved RGB, row-major
  std::vector<SceneObject> objects;  // in generation (and painting) order
  std::string caption;               // the words joined by single spaces
  std::vector<std::string> words;
  std::vector<int> word_objects;  // per word: the object it describes, -1 for "a", "above", "and", ...
  int restarts = 0;               // placement restarts the seed needed
  int prng_calls = 0;             // randint calls it took (a port's first check against the reference)

  // The pixels as a planar float image in [0, 1] (pixel / 255).
  Image image() const;
};

// The scene of `seed` (training seeds 0 .. 9,999,999; held-out from 10,000,000).
Scene generate_scene(std::uint64_t seed);

// The captioners' vocabulary: "<pad>" "<start>" "<end>" "<unk>" then the scene words.
const std::vector<std::string>& scene_vocabulary();

// An object's mask reduced to a grid x grid map of covered fractions (the cell's pixels inside the mask
// over the cell's pixels; cells as the captioner's annotations, kSceneSize divisible by grid), the
// grounding measure of MODELS.md. Empty for a grid that does not divide kSceneSize.
Matrix mask_coverage(const SceneObject& object, int grid);

}  // namespace attn
