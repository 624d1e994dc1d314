#include "attn/vision/pyramid.h"

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <new>

namespace attn {

Image pyr_down(const Image& image) {
  if (image.empty() || image.data.size() < static_cast<std::size_t>(image.channels) * image.plane_size()) return {};
  try {
    Image out((image.width + 1) / 2, (image.height + 1) / 2, image.channels);
    for (int c = 0; c < image.channels; ++c) {
      // Headers over the planes: pyrDown writes straight into `out` (create() keeps a buffer of the right
      // size and type). BORDER_DEFAULT is OpenCV's own: reflect-101.
      const cv::Mat src(image.height, image.width, CV_32F, const_cast<float*>(image.plane(c)));
      cv::Mat dst(out.height, out.width, CV_32F, out.plane(c));
      cv::pyrDown(src, dst, dst.size(), cv::BORDER_DEFAULT);
      if (dst.data != reinterpret_cast<uchar*>(out.plane(c))) return {};  // would mean OpenCV reallocated
    }
    return out;
  } catch (const cv::Exception&) {
    return {};
  } catch (const std::bad_alloc&) {
    return {};
  }
}

ImagePyramid::ImagePyramid(std::shared_ptr<const Image> base, int min_side) {
  if (!base || base->empty()) return;
  min_side = std::max(min_side, 1);
  levels_.push_back(std::move(base));
  try {
    for (;;) {
      const Image& last = *levels_.back();
      if (last.width == 1 && last.height == 1) break;  // a further level would be the same size
      if (std::min((last.width + 1) / 2, (last.height + 1) / 2) < min_side) break;
      auto next = std::make_shared<Image>(pyr_down(last));
      if (next->empty()) break;
      levels_.push_back(std::move(next));
    }
  } catch (const std::bad_alloc&) {
    // Out of memory: keep the levels made so far; level 0 is always there.
  }
}

}  // namespace attn
