// OpenCV's image codecs (cv::imdecode, cv::imencode), loaded on the first image a process decodes or encodes rather
// than when it starts. libopencv_imgcodecs links GDAL, GDCM, HDF5 and some 90 other libraries: linked, their loading
// and relocation were 0.15 s of every start of attnscope and attnscope-cli here (a program that only prints a line:
// 0.16 s linked to it, 0.02 s without), and most runs never touch an image. Internal to engine/src/vision.
#pragma once

#include "attn/error.h"

#include <opencv2/core.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace attn::vision::imgcodecs {

// cv::imdecode(buffer, flags); cv::Exception as OpenCV throws it. Fails (ErrorKind::Io) only when the library or its
// functions cannot be loaded, saying which and why.
Result<cv::Mat> decode(const cv::Mat& buffer, int flags);

// cv::imencode(ext, image, out, params): false when OpenCV cannot encode; the same failure as decode when the library
// cannot be loaded.
Result<bool> encode(const std::string& ext, const cv::Mat& image, std::vector<std::uint8_t>& out,
                    const std::vector<int>& params);

}  // namespace attn::vision::imgcodecs
