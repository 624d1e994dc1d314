// A Gaussian image pyramid (OpenCV pyrDown: 5-tap binomial blur, then every second pixel), used for
// labelled previews while a glimpse is dragged over a large photo. Levels are immutable and shared, so a
// pyramid can be handed between threads without copying pixels.
#pragma once

#include "attn/vision/image.h"

#include <memory>
#include <vector>

namespace attn {

class ImagePyramid {
 public:
  ImagePyramid() = default;
  // Level 0 is `base` itself (shared, not copied); levels halve until the shorter side would drop below
  // `min_side`.
  explicit ImagePyramid(std::shared_ptr<const Image> base, int min_side = 32);

  int levels() const { return static_cast<int>(levels_.size()); }
  const Image& level(int index) const { return *levels_.at(static_cast<std::size_t>(index)); }
  const std::shared_ptr<const Image>& shared_level(int index) const {
    return levels_.at(static_cast<std::size_t>(index));
  }
  const Image& base() const { return *levels_.front(); }
  bool empty() const { return levels_.empty(); }

 private:
  std::vector<std::shared_ptr<const Image>> levels_;
};

// One pyrDown step: output size ((w + 1) / 2, (h + 1) / 2).
Image pyr_down(const Image& image);

}  // namespace attn
