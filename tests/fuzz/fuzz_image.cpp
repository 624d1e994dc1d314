// Image decoding from memory (PNG, JPEG, BMP, TIFF, WebP): the header check, then OpenCV's decoder. The
// limits are small so that a legal but huge image is refused by the check instead of exhausting the
// fuzzer's memory; what the check lets through must then decode within them.
#include "fuzz_util.h"

#include "attn/vision/image.h"

#include <cstddef>
#include <cstdint>
#include <span>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace attn;
  constexpr const char* kName = "fuzz-image";
  const ImageLimits limits{.max_side = 512, .max_pixels = 256 * 256, .max_file_bytes = 1 << 20};
  const std::span<const std::uint8_t> bytes(data, size);

  auto info = probe_image_bytes(bytes, kName, limits);
  if (info) {
    fuzz::require(info->format != ImageFormat::Unknown);
    fuzz::require(info->width >= 1 && info->height >= 1 && info->width <= limits.max_side &&
                  info->height <= limits.max_side);
    fuzz::require(static_cast<std::int64_t>(info->width) * info->height <= limits.max_pixels);
  } else {
    fuzz::check_error(info.error(), kName);
  }
  auto image = decode_image(bytes, kName, limits);
  if (!image) {
    fuzz::check_error(image.error(), kName);
    return 0;
  }
  // A decode succeeds only where the probe did, and gives the size the header promised (turned by a
  // quarter for an EXIF orientation): the limits were checked on that size.
  fuzz::require(info.has_value());
  const bool same = image->width == info->width && image->height == info->height;
  const bool turned = image->width == info->height && image->height == info->width;
  fuzz::require((same || turned) && image->channels == 3);
  fuzz::require(image->data.size() == image->plane_size() * 3);
  return 0;
}
