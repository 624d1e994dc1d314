// Images in the engine: planar float32 (channel, row, column), values nominally in [0, 1], the same
// layout as a torch tensor [C, H, W]. Loading goes through OpenCV behind a header check that names the
// file, the byte offset and the reason for every file it refuses, before any pixel is decoded.
#pragma once

#include "attn/core.h"
#include "attn/error.h"

#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>
#include <string>
#include <vector>

namespace attn {

struct Image {
  int width = 0;
  int height = 0;
  int channels = 0;
  std::vector<float> data;  // data[(c * height + y) * width + x]

  Image() = default;
  Image(int width, int height, int channels, float fill = 0.0f);

  bool empty() const { return width <= 0 || height <= 0 || channels <= 0; }
  std::size_t plane_size() const { return static_cast<std::size_t>(width) * static_cast<std::size_t>(height); }
  float* plane(int c) { return data.data() + static_cast<std::size_t>(c) * plane_size(); }
  const float* plane(int c) const { return data.data() + static_cast<std::size_t>(c) * plane_size(); }
  float& at(int c, int y, int x) { return plane(c)[static_cast<std::size_t>(y) * width + x]; }
  float at(int c, int y, int x) const { return plane(c)[static_cast<std::size_t>(y) * width + x]; }
  // One channel as a height x width row-major matrix view.
  Eigen::Map<Matrix> channel(int c) { return {plane(c), height, width}; }
  Eigen::Map<const Matrix> channel(int c) const { return {plane(c), height, width}; }
};

// 8-bit interleaved pixels (RGB, RGBA, grey; `stride` bytes per row) to a planar float image in [0, 1].
// `channels_out` of the source are kept (e.g. 3 of RGBA).
Image image_from_u8(const std::uint8_t* pixels, int width, int height, int channels, std::ptrdiff_t stride,
                    int channels_out);
// Planar float to 8-bit interleaved with `out_channels` (3 = RGB, 4 = RGBX with 255 alpha), clamped and
// rounded. A one-channel image is replicated as grey. `out` has height * stride bytes.
void image_to_u8(const Image& image, std::uint8_t* out, std::ptrdiff_t stride, int out_channels);

enum class ImageFormat { Unknown, Png, Jpeg, Bmp, Tiff, WebP };
std::string_view to_string(ImageFormat format);

struct ImageLimits {
  int max_side = 16384;                     // pixels along either axis
  std::int64_t max_pixels = 100'000'000;    // width * height
  std::int64_t max_file_bytes = 1ll << 30;  // 1 GiB
};

struct ImageInfo {
  ImageFormat format = ImageFormat::Unknown;
  int width = 0;
  int height = 0;
};

// Reads only the header: the format from the magic bytes (not the extension) and the dimensions.
// Refuses empty files, unknown formats, truncated headers and sizes beyond `limits`.
Result<ImageInfo> probe_image(const std::filesystem::path& path, const ImageLimits& limits = {});
// probe_image, then a full decode to 3-channel RGB. A JPEG without its end marker or a PNG without IEND is
// refused as truncated rather than shown half grey.
Result<Image> load_image(const std::filesystem::path& path, const ImageLimits& limits = {});
// The same checks and decode over bytes already in memory (e.g. a Qt resource); `name` is what errors
// call the input.
Result<ImageInfo> probe_image_bytes(std::span<const std::uint8_t> bytes, std::string_view name,
                                    const ImageLimits& limits = {});
Result<Image> decode_image(std::span<const std::uint8_t> bytes, std::string_view name, const ImageLimits& limits = {});

// A size to decode a photo to. A big photo's full-size float image (12 bytes a pixel: 1.2 GB for 10,000 x
// 10,000) is never made unless asked for: each size is resampled straight from the decoded samples (3 bytes a
// pixel for 8-bit RGB), so a ViT needing 224 x 224 and a view needing 1024 pixels across cost what they keep.
struct ImageSize {
  enum class Fit {
    Full,    // as decoded
    Exact,   // exactly width x height, bilinear: the numbers of resize_bilinear(decode_image(...)), bit for bit
    Within,  // shrunk by area averaging, aspect kept, to max_side and max_pixels (0 = no bound); never enlarged
  } fit = Fit::Full;
  int width = 0, height = 0;
  int max_side = 0;
  std::int64_t max_pixels = 0;
};
// One decode, one image per size asked for, in order.
Result<std::vector<Image>> decode_image_sizes(std::span<const std::uint8_t> bytes, std::string_view name,
                                              std::span<const ImageSize> sizes, const ImageLimits& limits = {});
Result<std::vector<Image>> load_image_sizes(const std::filesystem::path& path, std::span<const ImageSize> sizes,
                                            const ImageLimits& limits = {});

// Bilinear resampling with pixel centres at half-integers (cv::resize INTER_LINEAR's convention, as ViT's
// preprocessing here has always done it). ImageSize::Fit::Exact runs the same compiled kernel.
Image resize_bilinear(const Image& in, int width, int height);

// Writes PNG/JPEG/BMP/TIFF/WebP by extension, atomically (temporary file + rename).
Result<void> save_image(const Image& image, const std::filesystem::path& path);

}  // namespace attn
