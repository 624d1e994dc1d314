#include "attn/vision/image.h"

#include "imgcodecs.h"
#include "../core/atomic_write.h"
#include "../core/file_read.h"

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>  // the flags' values; the functions come through imgcodecs.h
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <system_error>
#include <unistd.h>

namespace attn {

// ---------------------------------------------------------------------------------------------------------
// Pixels

Image::Image(int width_, int height_, int channels_, float fill)
    : width(std::max(width_, 0)), height(std::max(height_, 0)), channels(std::max(channels_, 0)) {
  data.assign(static_cast<std::size_t>(channels) * plane_size(), fill);
}

namespace {

constexpr ImageSize kFullSize{};

// 0..255 -> [0, 1], exactly as v / 255.0f.
const std::array<float, 256>& unit_table() {
  static const std::array<float, 256> table = [] {
    std::array<float, 256> t{};
    for (int i = 0; i < 256; ++i) t[static_cast<std::size_t>(i)] = static_cast<float>(i) / 255.0f;
    return t;
  }();
  return table;
}

// [0, 1] -> 0..255, rounded half up; NaN and negatives give 0, values above 1 give 255.
inline std::uint8_t to_byte(float v) {
  const float c = v > 0.0f ? (v < 1.0f ? v : 1.0f) : 0.0f;
  return static_cast<std::uint8_t>(c * 255.0f + 0.5f);
}

}  // namespace

Image image_from_u8(const std::uint8_t* pixels, int width, int height, int channels, std::ptrdiff_t stride,
                    int channels_out) {
  if (!pixels || width <= 0 || height <= 0 || channels <= 0 || channels_out <= 0) return {};
  Image out(width, height, channels_out);
  const auto& table = unit_table();
  // A grey source (with or without alpha) fills the colour channels of a wider output; a missing alpha
  // is opaque.
  const bool grey = channels < 3;
  for (int c = 0; c < channels_out; ++c) {
    int source = c;
    if (grey && c < 3) source = 0;
    if (grey && c == 3) source = channels == 2 ? 1 : -1;
    if (!grey && c >= channels) source = -1;
    float* dst = out.plane(c);
    if (source < 0) {
      std::fill(dst, dst + out.plane_size(), 1.0f);
      continue;
    }
    for (int y = 0; y < height; ++y) {
      const std::uint8_t* row = pixels + y * stride + source;
      float* d = dst + static_cast<std::size_t>(y) * static_cast<std::size_t>(width);
      for (int x = 0; x < width; ++x) d[x] = table[row[static_cast<std::ptrdiff_t>(x) * channels]];
    }
  }
  return out;
}

void image_to_u8(const Image& image, std::uint8_t* out, std::ptrdiff_t stride, int out_channels) {
  if (!out || image.empty() || out_channels <= 0) return;
  if (image.data.size() < static_cast<std::size_t>(image.channels) * image.plane_size()) return;
  const int w = image.width;
  for (int k = 0; k < out_channels; ++k) {
    // Colour channels come from the image (a grey image is replicated); a fourth channel is opaque alpha.
    const bool alpha = k >= 3;
    const int source = image.channels < 3 ? 0 : std::min(k, image.channels - 1);
    for (int y = 0; y < image.height; ++y) {
      std::uint8_t* row = out + y * stride + k;
      if (alpha) {
        for (int x = 0; x < w; ++x) row[static_cast<std::ptrdiff_t>(x) * out_channels] = 255;
        continue;
      }
      const float* src = image.plane(source) + static_cast<std::size_t>(y) * static_cast<std::size_t>(w);
      for (int x = 0; x < w; ++x) row[static_cast<std::ptrdiff_t>(x) * out_channels] = to_byte(src[x]);
    }
  }
}

std::string_view to_string(ImageFormat format) {
  switch (format) {
    case ImageFormat::Png: return "PNG";
    case ImageFormat::Jpeg: return "JPEG";
    case ImageFormat::Bmp: return "BMP";
    case ImageFormat::Tiff: return "TIFF";
    case ImageFormat::WebP: return "WebP";
    case ImageFormat::Unknown: break;
  }
  return "unknown";
}

// ---------------------------------------------------------------------------------------------------------
// Header probing. Every read is bounds-checked against the bytes at hand; running out of them is
// "truncated", reported at the byte where the file ends.

namespace {

using Bytes = std::span<const std::uint8_t>;

std::uint32_t be16(Bytes b, std::size_t i) { return std::uint32_t(b[i]) << 8 | b[i + 1]; }
std::uint32_t be32(Bytes b, std::size_t i) { return be16(b, i) << 16 | be16(b, i + 2); }
std::uint32_t le16(Bytes b, std::size_t i) { return std::uint32_t(b[i + 1]) << 8 | b[i]; }
std::uint32_t le24(Bytes b, std::size_t i) { return std::uint32_t(b[i + 2]) << 16 | le16(b, i); }
std::uint32_t le32(Bytes b, std::size_t i) { return le16(b, i + 2) << 16 | le16(b, i); }

bool starts_with(Bytes b, std::string_view magic, std::size_t at = 0) {
  if (b.size() < at + magic.size()) return false;
  return std::memcmp(b.data() + at, magic.data(), magic.size()) == 0;
}

std::string hex_byte(std::uint32_t v) {
  static constexpr char digits[] = "0123456789abcdef";
  return {digits[(v >> 4) & 15], digits[v & 15]};
}

std::string fourcc(Bytes b, std::size_t at) {
  std::string s;
  for (std::size_t i = at; i < at + 4 && i < b.size(); ++i) {
    const char c = static_cast<char>(b[i]);
    s += (b[i] >= 0x20 && b[i] < 0x7f) ? c : '.';
  }
  return s;
}

// What a probe needs besides the bytes: the real size of the input (the bytes may be only its start, see
// probe_image) and how to call it.
struct ProbeInput {
  Bytes bytes;
  std::int64_t total = 0;  // size of the whole input
  std::string name;
  const ImageLimits* limits = nullptr;
  bool ran_out = false;  // set when a check failed only because `bytes` is a prefix of the input
  bool hit_end = false;  // set when a check failed because the bytes ended

  std::unexpected<Error> error(ErrorKind kind, std::string reason, std::int64_t offset) const {
    return fail(kind, std::move(reason), name, offset);
  }
  // The header goes on past the bytes at hand.
  std::unexpected<Error> truncated(ImageFormat format) {
    hit_end = true;
    if (static_cast<std::int64_t>(bytes.size()) < total) ran_out = true;
    const auto end = static_cast<std::int64_t>(bytes.size());
    return error(ErrorKind::Truncated,
                 std::string(to_string(format)) + " header truncated at byte " + std::to_string(end), end);
  }
  bool has(std::size_t need) const { return bytes.size() >= need; }
};

Result<ImageInfo> checked_size(ProbeInput& in, ImageFormat format, std::int64_t width, std::int64_t height,
                               std::int64_t offset) {
  const ImageLimits& limits = *in.limits;
  const std::string size = std::to_string(width) + " x " + std::to_string(height) + " pixels";
  if (width <= 0 || height <= 0) {
    return in.error(ErrorKind::OutOfRange, "image is " + size + ", which holds no pixels", offset);
  }
  if (width > limits.max_side || height > limits.max_side || width * height > limits.max_pixels) {
    return in.error(ErrorKind::TooLarge,
                    "image is " + size + "; the limit is " + std::to_string(limits.max_side) + " per side and " +
                        std::to_string(limits.max_pixels) + " pixels",
                    offset);
  }
  return ImageInfo{format, static_cast<int>(width), static_cast<int>(height)};
}

Result<ImageInfo> probe_png(ProbeInput& in) {
  const Bytes b = in.bytes;
  // Signature (8), IHDR length (4) and type (4), width (4), height (4).
  if (!in.has(24)) return in.truncated(ImageFormat::Png);
  if (!starts_with(b, "IHDR", 12)) {
    return in.error(ErrorKind::Malformed, "PNG's first chunk is \"" + fourcc(b, 12) + "\", not IHDR", 12);
  }
  if (be32(b, 8) != 13) {
    return in.error(ErrorKind::Malformed, "PNG's IHDR chunk has length " + std::to_string(be32(b, 8)) + ", not 13", 8);
  }
  return checked_size(in, ImageFormat::Png, be32(b, 16), be32(b, 20), 16);
}

bool is_sof(std::uint32_t m) {
  // SOF0-3, 5-7, 9-11, 13-15; C4 (DHT), C8 (JPG) and CC (DAC) share the range but are not frames.
  return m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC;
}

struct JpegLayout {
  std::int64_t width = 0, height = 0;
  std::int64_t sof = -1;        // offset of the frame header's marker
  std::int64_t scan_data = -1;  // first byte after the first SOS segment; -1 when not looked for
};

// Walks the marker segments from SOI to the first frame header (and, with `to_scan`, on to the first
// scan). Entropy-coded data only follows SOS, so the segments before it are all length-prefixed.
Result<JpegLayout> walk_jpeg(ProbeInput& in, bool to_scan) {
  const Bytes b = in.bytes;
  const std::size_t n = b.size();
  JpegLayout layout;
  std::size_t i = 2;
  for (;;) {
    if (i >= n) return in.truncated(ImageFormat::Jpeg);
    if (b[i] != 0xFF) {
      return in.error(ErrorKind::Malformed,
                      "JPEG: expected a marker (ff xx) at byte " + std::to_string(i) + ", found " + hex_byte(b[i]),
                      static_cast<std::int64_t>(i));
    }
    while (i + 1 < n && b[i + 1] == 0xFF) ++i;  // fill bytes
    if (i + 1 >= n) return in.truncated(ImageFormat::Jpeg);
    const std::uint32_t m = b[i + 1];
    const auto at = static_cast<std::int64_t>(i);
    if (m == 0x01 || (m >= 0xD0 && m <= 0xD7)) {  // TEM, RSTn: no length
      i += 2;
      continue;
    }
    if (m == 0x00 || m == 0xD8) return in.error(ErrorKind::Malformed, "JPEG: unexpected marker ff " + hex_byte(m), at);
    if (m == 0xD9) {
      return in.error(ErrorKind::Malformed,
                      layout.sof < 0 ? "JPEG ends (end-of-image marker) before its frame header"
                                     : "JPEG ends (end-of-image marker) before its first scan",
                      at);
    }
    if (i + 4 > n) return in.truncated(ImageFormat::Jpeg);
    const std::uint32_t length = be16(b, i + 2);
    if (length < 2) {
      return in.error(ErrorKind::Malformed,
                      "JPEG segment ff " + hex_byte(m) + " has length " + std::to_string(length) + " (at least 2)",
                      at + 2);
    }
    if (is_sof(m) && layout.sof < 0) {
      if (length < 8) {
        return in.error(ErrorKind::Malformed, "JPEG frame header is " + std::to_string(length) + " bytes, too short",
                        at + 2);
      }
      if (i + 9 > n) return in.truncated(ImageFormat::Jpeg);
      layout.sof = at;
      layout.height = be16(b, i + 5);
      layout.width = be16(b, i + 7);
      if (!to_scan) return layout;
    } else if (m == 0xDA) {
      if (layout.sof < 0) {
        return in.error(ErrorKind::Malformed, "JPEG scan (SOS) comes before any frame header (SOF)", at);
      }
      if (i + 2 + length > n) return in.truncated(ImageFormat::Jpeg);
      layout.scan_data = static_cast<std::int64_t>(i + 2 + length);
      return layout;
    }
    i += 2 + length;
  }
}

Result<ImageInfo> probe_jpeg(ProbeInput& in) {
  auto layout = walk_jpeg(in, false);
  if (!layout) return std::unexpected(layout.error());
  return checked_size(in, ImageFormat::Jpeg, layout->width, layout->height, layout->sof + 5);
}

Result<ImageInfo> probe_bmp(ProbeInput& in) {
  const Bytes b = in.bytes;
  if (!in.has(18)) return in.truncated(ImageFormat::Bmp);
  const std::uint32_t header = le32(b, 14);
  std::int64_t width = 0, height = 0;
  if (header == 12) {  // BITMAPCOREHEADER: unsigned 16-bit sides
    if (!in.has(22)) return in.truncated(ImageFormat::Bmp);
    width = le16(b, 18);
    height = le16(b, 20);
  } else if (header == 16 || header == 40 || header == 52 || header == 56 || header == 64 || header == 108 ||
             header == 124) {  // BITMAPINFOHEADER and its extensions: signed 32-bit sides
    if (!in.has(26)) return in.truncated(ImageFormat::Bmp);
    width = static_cast<std::int32_t>(le32(b, 18));
    height = static_cast<std::int32_t>(le32(b, 22));
    if (width < 0) return in.error(ErrorKind::OutOfRange, "BMP width is negative (" + std::to_string(width) + ")", 18);
    if (height < 0) height = -height;  // top-down rows
  } else {
    return in.error(ErrorKind::Unsupported, "BMP header of unknown size " + std::to_string(header), 14);
  }
  return checked_size(in, ImageFormat::Bmp, width, height, 18);
}

Result<ImageInfo> probe_tiff(ProbeInput& in) {
  const Bytes b = in.bytes;
  if (!in.has(8)) return in.truncated(ImageFormat::Tiff);
  const bool big = b[0] == 'M';
  const auto u16 = [&](std::size_t i) { return big ? be16(b, i) : le16(b, i); };
  const auto u32 = [&](std::size_t i) { return big ? be32(b, i) : le32(b, i); };
  const std::uint32_t ifd = u32(4);
  if (ifd < 8) {
    return in.error(ErrorKind::Malformed, "TIFF's first directory offset " + std::to_string(ifd) + " is invalid", 4);
  }
  const auto past_end = [&](std::uint64_t end) -> std::optional<std::unexpected<Error>> {
    if (end <= b.size()) return std::nullopt;
    if (static_cast<std::int64_t>(b.size()) < in.total) {
      in.ran_out = true;
      return in.truncated(ImageFormat::Tiff);
    }
    return in.error(ErrorKind::Truncated,
                    "TIFF's first directory at byte " + std::to_string(ifd) + " lies past the end of the file (" +
                        std::to_string(in.total) + " bytes)",
                    4);
  };
  if (auto e = past_end(std::uint64_t(ifd) + 2)) return *e;
  const std::uint32_t count = u16(ifd);
  if (auto e = past_end(std::uint64_t(ifd) + 2 + 12ull * count)) return *e;
  std::int64_t width = -1, height = -1, width_at = -1;
  for (std::uint32_t k = 0; k < count; ++k) {
    const std::size_t e = ifd + 2 + 12 * std::size_t(k);
    const std::uint32_t tag = u16(e);
    if (tag != 256 && tag != 257) continue;
    const std::uint32_t type = u16(e + 2);
    std::int64_t value = 0;
    if (type == 3) {
      value = u16(e + 8);  // a SHORT sits in the first two bytes of the value field in either byte order
    } else if (type == 4) {
      value = u32(e + 8);
    } else {
      return in.error(ErrorKind::Malformed,
                      "TIFF tag " + std::to_string(tag) + (tag == 256 ? " (width)" : " (height)") + " has type " +
                          std::to_string(type) + "; expected SHORT (3) or LONG (4)",
                      static_cast<std::int64_t>(e));
    }
    // A size given twice is refused: libtiff keeps the first and ignores the second, so a probe that read the
    // other would check the limits on a size that is not the one decoded (tests/data/fuzz-regressions/image).
    std::int64_t& slot = tag == 256 ? width : height;
    if (slot >= 0) {
      return in.error(ErrorKind::Malformed,
                      std::string("TIFF's first directory gives the image ") +
                          (tag == 256 ? "width (tag 256)" : "height (tag 257)") + " twice (" + std::to_string(slot) +
                          ", then " + std::to_string(value) + ")",
                      static_cast<std::int64_t>(e));
    }
    slot = value;
    if (tag == 256) width_at = static_cast<std::int64_t>(e);
  }
  if (width < 0) return in.error(ErrorKind::Malformed, "TIFF's first directory has no image width (tag 256)", ifd);
  if (height < 0) return in.error(ErrorKind::Malformed, "TIFF's first directory has no image height (tag 257)", ifd);
  return checked_size(in, ImageFormat::Tiff, width, height, width_at);
}

Result<ImageInfo> probe_webp(ProbeInput& in) {
  const Bytes b = in.bytes;
  if (!in.has(20)) return in.truncated(ImageFormat::WebP);
  if (starts_with(b, "VP8 ", 12)) {  // lossy: frame tag (3), start code 9d 01 2a, 14-bit sides
    if (!in.has(30)) return in.truncated(ImageFormat::WebP);
    if (b[23] != 0x9D || b[24] != 0x01 || b[25] != 0x2A) {
      return in.error(ErrorKind::Malformed, "WebP's VP8 data lacks its start code", 23);
    }
    return checked_size(in, ImageFormat::WebP, le16(b, 26) & 0x3FFF, le16(b, 28) & 0x3FFF, 26);
  }
  if (starts_with(b, "VP8L", 12)) {  // lossless: signature 2f, then 14 bits each of width - 1, height - 1
    if (!in.has(25)) return in.truncated(ImageFormat::WebP);
    if (b[20] != 0x2F) return in.error(ErrorKind::Malformed, "WebP's VP8L data lacks its signature byte 2f", 20);
    const std::uint32_t bits = le32(b, 21);
    return checked_size(in, ImageFormat::WebP, (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1, 21);
  }
  if (starts_with(b, "VP8X", 12)) {  // extended: flags (4), 24 bits each of canvas width - 1, height - 1
    if (!in.has(30)) return in.truncated(ImageFormat::WebP);
    // Flag bit 1 marks an animation, which OpenCV's decoder (libwebp without its demuxer) cannot read:
    // refused here with a reason rather than as a decoder failure.
    if (b[20] & 0x02) {
      return in.error(ErrorKind::Unsupported,
                      "an animated WebP: AttnScope reads still images; save the frame to look at as a PNG", 20);
    }
    return checked_size(in, ImageFormat::WebP, std::int64_t(le24(b, 24)) + 1, std::int64_t(le24(b, 27)) + 1, 24);
  }
  return in.error(ErrorKind::Unsupported, "WebP's first chunk is \"" + fourcc(b, 12) + "\", not VP8, VP8L or VP8X", 12);
}

struct Signature {
  ImageFormat format;
  std::string_view magic;
};
// WebP's signature is "RIFF", four bytes of size, then "WEBP"; the second part is checked separately.
constexpr std::array<Signature, 6> kSignatures{{
    {ImageFormat::Png, "\x89PNG\r\n\x1a\n"},
    {ImageFormat::Jpeg, "\xFF\xD8\xFF"},
    {ImageFormat::Bmp, "BM"},
    {ImageFormat::Tiff, std::string_view("II*\0", 4)},
    {ImageFormat::Tiff, std::string_view("MM\0*", 4)},
    {ImageFormat::WebP, "RIFF"},
}};

ImageFormat format_of(Bytes b) {
  for (const auto& s : kSignatures) {
    if (!starts_with(b, s.magic)) continue;
    if (s.format == ImageFormat::WebP && !starts_with(b, "WEBP", 8)) continue;
    return s.format;
  }
  return ImageFormat::Unknown;
}

// A file too short to hold its format's whole signature, but starting like one (at least two bytes).
ImageFormat format_of_short(Bytes b) {
  if (b.size() < 2) return ImageFormat::Unknown;
  for (const auto& s : kSignatures) {
    const std::size_t whole = s.format == ImageFormat::WebP ? 12 : s.magic.size();
    if (b.size() >= whole) continue;
    if (std::memcmp(b.data(), s.magic.data(), std::min(b.size(), s.magic.size())) == 0) return s.format;
  }
  return ImageFormat::Unknown;
}

std::string not_an_image(Bytes b) {
  if (starts_with(b, "GIF87a") || starts_with(b, "GIF89a")) {
    return "a GIF image, which AttnScope does not read (it reads PNG, JPEG, BMP, TIFF and WebP); save it as a PNG";
  }
  std::string hex, text;
  for (std::size_t i = 0; i < std::min<std::size_t>(4, b.size()); ++i) {
    if (i) hex += ' ';
    hex += hex_byte(b[i]);
    text += (b[i] >= 0x20 && b[i] < 0x7f && b[i] != '"') ? static_cast<char>(b[i]) : '.';
  }
  return "not an image: starts with bytes " + hex + " (\"" + text + "\")";
}

std::unexpected<Error> too_large(std::int64_t bytes, const ImageLimits& limits, const std::string& name) {
  return fail(
      ErrorKind::TooLarge,
      "file is " + std::to_string(bytes) + " bytes; the limit is " + std::to_string(limits.max_file_bytes) + " bytes",
      name);
}

Result<ImageInfo> probe(ProbeInput& in) {
  const Bytes b = in.bytes;
  if (in.total == 0) return in.error(ErrorKind::Truncated, "empty file (0 bytes)", 0);
  if (in.total > in.limits->max_file_bytes) return too_large(in.total, *in.limits, in.name);
  switch (format_of(b)) {
    case ImageFormat::Png: return probe_png(in);
    case ImageFormat::Jpeg: return probe_jpeg(in);
    case ImageFormat::Bmp: return probe_bmp(in);
    case ImageFormat::Tiff: return probe_tiff(in);
    case ImageFormat::WebP: return probe_webp(in);
    case ImageFormat::Unknown: break;
  }
  if (const ImageFormat f = format_of_short(b); f != ImageFormat::Unknown) return in.truncated(f);
  return in.error(ErrorKind::Unsupported, not_an_image(b), 0);
}

// ---------------------------------------------------------------------------------------------------------
// Completeness. libjpeg and libpng decode a cut-off file to an image that is grey (or black) below the cut,
// with a warning on stderr at best; the glimpse would then read made-up pixels. So the end of the data is
// checked first, from the container's own structure.

// The EOI marker (ff d9) must follow the first scan's header. Entropy-coded data never holds ff d9 (a data
// byte ff is stuffed as ff 00), so any ff d9 after the scan header is the end of the image; only an EXIF
// thumbnail before it could hold one, and the search starts past it. Bytes after the last EOI (zero
// padding, camera trailers) are allowed, as every decoder allows them.
std::optional<Error> check_jpeg_complete(ProbeInput& in) {
  const Bytes b = in.bytes;
  const auto end = static_cast<std::int64_t>(b.size());
  const auto truncated = [&] {
    return Error{in.name, end, -1,
                 "truncated JPEG: no end-of-image marker (file ends at byte " + std::to_string(end) + ")",
                 ErrorKind::Truncated};
  };
  in.hit_end = false;
  auto layout = walk_jpeg(in, true);
  if (!layout) return in.hit_end ? truncated() : layout.error();
  for (std::int64_t i = end - 2; i >= layout->scan_data; --i) {
    if (b[static_cast<std::size_t>(i)] == 0xFF && b[static_cast<std::size_t>(i) + 1] == 0xD9) return std::nullopt;
  }
  return truncated();
}

// Chunks from IHDR on, each length, type, data and CRC, until IEND.
std::optional<Error> check_png_complete(const ProbeInput& in) {
  const Bytes b = in.bytes;
  const std::uint64_t n = b.size();
  std::uint64_t i = 8;
  while (i + 8 <= n) {
    const std::uint64_t length = be32(b, i);
    if (length > 0x7FFFFFFFu) {
      return Error{in.name, static_cast<std::int64_t>(i), -1,
                   "PNG chunk \"" + fourcc(b, i + 4) + "\" has an invalid length " + std::to_string(length),
                   ErrorKind::Malformed};
    }
    if (starts_with(b, "IEND", i + 4)) return std::nullopt;
    i += 12 + length;
  }
  return Error{in.name, static_cast<std::int64_t>(n), -1,
               "truncated PNG: no IEND chunk (file ends at byte " + std::to_string(n) + ")", ErrorKind::Truncated};
}

// [begin, end) of the first chunk of this type, if any (the file has been checked to have an IEND).
std::optional<std::pair<std::size_t, std::size_t>> find_png_chunk(Bytes b, std::string_view type) {
  std::uint64_t i = 8;
  while (i + 8 <= b.size()) {
    const std::uint64_t end = i + 12 + be32(b, i);
    if (starts_with(b, "IEND", i + 4) || end > b.size()) break;
    if (starts_with(b, type, i + 4)) return std::pair{static_cast<std::size_t>(i), static_cast<std::size_t>(end)};
    i = end;
  }
  return std::nullopt;
}

// Uncompressed rows must all be there: ((width * bpp + 31) / 32) * 4 bytes each, from the pixel offset.
std::optional<Error> check_bmp_complete(const ProbeInput& in, const ImageInfo& info) {
  const Bytes b = in.bytes;
  const std::uint32_t header = le32(b, 14);
  std::uint32_t bpp = 0, compression = 0;
  if (header == 12) {
    if (b.size() < 26) return std::nullopt;
    bpp = le16(b, 24);
  } else {
    if (b.size() < 34) return std::nullopt;
    bpp = le16(b, 28);
    compression = le32(b, 30);
  }
  // BI_RGB, BI_BITFIELDS and BI_ALPHABITFIELDS store plain rows; RLE and embedded JPEG/PNG do not.
  if (compression != 0 && compression != 3 && compression != 6) return std::nullopt;
  if (bpp != 1 && bpp != 4 && bpp != 8 && bpp != 16 && bpp != 24 && bpp != 32) return std::nullopt;
  const std::int64_t row = (std::int64_t(info.width) * bpp + 31) / 32 * 4;
  const std::int64_t need = std::int64_t(le32(b, 10)) + row * info.height;
  const auto have = static_cast<std::int64_t>(b.size());
  if (have >= need) return std::nullopt;
  return Error{
      in.name, have, -1,
      "truncated BMP: the pixel data needs " + std::to_string(need) + " bytes, the file has " + std::to_string(have),
      ErrorKind::Truncated};
}

std::optional<Error> check_webp_complete(const ProbeInput& in) {
  const Bytes b = in.bytes;
  const std::int64_t need = std::int64_t(le32(b, 4)) + 8;
  const auto have = static_cast<std::int64_t>(b.size());
  if (have >= need) return std::nullopt;
  return Error{
      in.name, have, -1,
      "truncated WebP: the RIFF header says " + std::to_string(need) + " bytes, the file has " + std::to_string(have),
      ErrorKind::Truncated};
}

// A decoded sample (8, 16 or 32-bit, or double) as float: 8-bit through the table (v / 255), 16-bit as
// v / 65535, non-finite floats as 0. One definition for the full-size image and the resampled ones, so
// resampling while decoding gives the very numbers of decoding first and resampling after.
inline float sample_value(std::uint8_t v) { return unit_table()[v]; }
inline float sample_value(std::uint16_t v) { return static_cast<float>(v) / 65535.0f; }
inline float sample_value(float v) { return std::isfinite(v) ? v : 0.0f; }
inline float sample_value(double v) { return std::isfinite(v) ? static_cast<float>(v) : 0.0f; }

// Channel c of RGB at (y, x): OpenCV's 3-channel results are BGR; a 1-channel result is grey.
template <class T>
struct SampleReader {
  const cv::Mat* m = nullptr;
  float operator()(int c, int y, int x) const {
    const int at = m->channels() == 3 ? 3 * x + (2 - c) : x;
    return sample_value(m->ptr<T>(y)[at]);
  }
};

// Calls f(SampleReader<T>) for the decoded matrix's sample type (check_decoded has vetted it).
template <class F>
auto with_reader(const cv::Mat& m, F&& f) {
  switch (m.depth()) {
    case CV_8U: return f(SampleReader<std::uint8_t>{&m});
    case CV_16U: return f(SampleReader<std::uint16_t>{&m});
    case CV_32F: return f(SampleReader<float>{&m});
    default: return f(SampleReader<double>{&m});
  }
}

// The bilinear kernel behind resize_bilinear and ImageSize::Fit::Exact, compiled once: `row(c, y)` gives row y
// of channel c of the in_w x in_h source as floats. One function, not a template per source, so the compiler
// cannot contract the arithmetic differently for the two (it did: FMA in one, not the other, 1 ulp apart).
void bilinear(int in_w, int in_h, const std::function<const float*(int c, int y)>& row, Image& out) {
  const float sx = static_cast<float>(in_w) / static_cast<float>(out.width);
  const float sy = static_cast<float>(in_h) / static_cast<float>(out.height);
  std::vector<int> x0(static_cast<std::size_t>(out.width)), x1(x0.size());
  std::vector<float> ax(x0.size());
  for (int x = 0; x < out.width; ++x) {
    const float fx = std::max(0.0f, (static_cast<float>(x) + 0.5f) * sx - 0.5f);
    x0[static_cast<std::size_t>(x)] = std::min(static_cast<int>(fx), in_w - 1);
    x1[static_cast<std::size_t>(x)] = std::min(x0[static_cast<std::size_t>(x)] + 1, in_w - 1);
    ax[static_cast<std::size_t>(x)] = fx - static_cast<float>(x0[static_cast<std::size_t>(x)]);
  }
  for (int ch = 0; ch < out.channels; ++ch) {
    for (int y = 0; y < out.height; ++y) {
      const float fy = std::max(0.0f, (static_cast<float>(y) + 0.5f) * sy - 0.5f);
      const int y0 = std::min(static_cast<int>(fy), in_h - 1);
      const int y1 = std::min(y0 + 1, in_h - 1);
      const float ay = fy - static_cast<float>(y0);
      const float* r0 = row(ch, y0);
      const float* r1 = row(ch, y1);
      float* o = out.plane(ch) + static_cast<std::size_t>(y) * static_cast<std::size_t>(out.width);
      for (std::size_t x = 0; x < x0.size(); ++x) {
        const float top = r0[x0[x]] * (1 - ax[x]) + r0[x1[x]] * ax[x];
        const float bottom = r1[x0[x]] * (1 - ax[x]) + r1[x1[x]] * ax[x];
        o[x] = top * (1 - ay) + bottom * ay;
      }
    }
  }
}

Result<void> check_decoded(const cv::Mat& m, const std::string& name, ImageFormat format) {
  if (m.dims != 2 || (m.channels() != 3 && m.channels() != 1)) {
    return fail(ErrorKind::Unsupported,
                "could not decode the " + std::string(to_string(format)) + " data: unexpected " +
                    std::to_string(m.channels()) + "-channel result",
                name);
  }
  const int depth = m.depth();
  if (depth != CV_8U && depth != CV_16U && depth != CV_32F && depth != CV_64F) {
    return fail(ErrorKind::Unsupported,
                "could not decode the " + std::string(to_string(format)) +
                    " data: its sample type is not supported (only 8-bit, 16-bit and float samples are)",
                name);
  }
  return {};
}

// OpenCV's BGR (8, 16 or 32-bit) to planar RGB float. Alpha was already dropped by IMREAD_COLOR, as PIL's
// Image.convert("RGB") drops it, so the pixels are the ones a torchvision pipeline would see.
Image planar_rgb(const cv::Mat& m) {
  Image out(m.cols, m.rows, 3);
  with_reader(m, [&](const auto& at) {
    for (int c = 0; c < 3; ++c) {
      for (int y = 0; y < out.height; ++y) {
        float* row = out.plane(c) + static_cast<std::size_t>(y) * static_cast<std::size_t>(out.width);
        for (int x = 0; x < out.width; ++x) row[x] = at(c, y, x);
      }
    }
  });
  return out;
}

// The output size of ImageSize::Fit::Within: the largest that keeps the aspect and both bounds, never larger
// than the input.
cv::Size within(int w, int h, const ImageSize& size) {
  double scale = 1.0;
  if (size.max_side > 0) scale = std::min(scale, static_cast<double>(size.max_side) / std::max(w, h));
  if (size.max_pixels > 0) {
    scale = std::min(scale, std::sqrt(static_cast<double>(size.max_pixels) / (static_cast<double>(w) * h)));
  }
  if (scale >= 1.0) return {w, h};
  const auto side = [&](int n) { return std::max(1, static_cast<int>(std::floor(n * scale))); };
  return {side(w), side(h)};
}

Result<Image> resampled(const cv::Mat& m, const ImageSize& size, const std::string& name) {
  switch (size.fit) {
    case ImageSize::Fit::Full: return planar_rgb(m);
    case ImageSize::Fit::Exact: {
      if (size.width <= 0 || size.height <= 0) {
        return fail(ErrorKind::OutOfRange,
                    "cannot resample to " + std::to_string(size.width) + " x " + std::to_string(size.height), name);
      }
      Image out(size.width, size.height, 3);
      // Rows converted as the kernel asks for them (two per output row and channel; the last two kept).
      std::vector<float> rows[2] = {std::vector<float>(static_cast<std::size_t>(m.cols)),
                                    std::vector<float>(static_cast<std::size_t>(m.cols))};
      int held[2][2] = {{-1, -1}, {-1, -1}};  // (channel, row) in each buffer
      int last = 1;                           // the buffer returned last, which the kernel may still be reading
      const auto row = [&](int c, int y) -> const float* {
        for (int i = 0; i < 2; ++i) {
          if (held[i][0] == c && held[i][1] == y) {
            last = i;
            return rows[i].data();
          }
        }
        const int i = 1 - last;
        last = i;
        with_reader(m, [&](const auto& at) {
          for (int x = 0; x < m.cols; ++x) rows[i][static_cast<std::size_t>(x)] = at(c, y, x);
        });
        held[i][0] = c;
        held[i][1] = y;
        return rows[i].data();
      };
      bilinear(m.cols, m.rows, row, out);
      return out;
    }
    case ImageSize::Fit::Within: {
      const cv::Size target = within(m.cols, m.rows, size);
      if (target.width == m.cols && target.height == m.rows) return planar_rgb(m);
      cv::Mat small;
      cv::resize(m, small, target, 0, 0, cv::INTER_AREA);
      return planar_rgb(small);
    }
  }
  return planar_rgb(m);
}

}  // namespace

Result<ImageInfo> probe_image_bytes(std::span<const std::uint8_t> bytes, std::string_view name,
                                    const ImageLimits& limits) {
  ProbeInput in{bytes, static_cast<std::int64_t>(bytes.size()), std::string(name), &limits};
  return probe(in);
}

namespace {

// OpenCV's default error handler prints "OpenCV(4.6.0) ... error: (-215:Assertion failed) ..." to stderr before
// it throws; the exception becomes this reader's own message, so the print is only noise before it.
void quiet_opencv() {
  static const bool quiet = [] {
    cv::redirectError([](int, const char*, const char*, const char*, int, void*) { return 0; });
    return true;
  }();
  (void)quiet;
}

}  // namespace

Result<std::vector<Image>> decode_image_sizes(std::span<const std::uint8_t> bytes, std::string_view name,
                                              std::span<const ImageSize> sizes, const ImageLimits& limits) {
  ProbeInput in{bytes, static_cast<std::int64_t>(bytes.size()), std::string(name), &limits};
  auto info = probe(in);
  if (!info) return std::unexpected(info.error());
  std::optional<Error> incomplete;
  switch (info->format) {
    case ImageFormat::Jpeg: incomplete = check_jpeg_complete(in); break;
    case ImageFormat::Png: incomplete = check_png_complete(in); break;
    case ImageFormat::Bmp: incomplete = check_bmp_complete(in, *info); break;
    case ImageFormat::WebP: incomplete = check_webp_complete(in); break;
    case ImageFormat::Tiff:  // libtiff refuses missing strips itself
    case ImageFormat::Unknown: break;
  }
  if (incomplete) return std::unexpected(std::move(*incomplete));
  // libpng decodes an animated PNG's default image and ignores the other frames; rather than show one frame
  // of an animation as if it were the picture, the file is refused (tests/data/bad/MANIFEST.tsv lists it).
  if (info->format == ImageFormat::Png) {
    if (const auto actl = find_png_chunk(bytes, "acTL"); actl && actl->second - actl->first >= 16) {
      const std::uint32_t frames = be32(bytes, actl->first + 8);
      return fail(ErrorKind::Unsupported,
                  "an animated PNG (APNG, " + std::to_string(frames) +
                      " frames): AttnScope reads still images; save the frame to look at as a PNG",
                  std::string(name), static_cast<std::int64_t>(actl->first));
    }
  }

  // cv::imdecode picks the first of its decoders whose signature matches, not the format found above. When
  // that format's own check fails (libwebp's is stricter than the probe), a file with "DICM" at byte 128 goes
  // to OpenCV's DICOM reader, GDCM, which asserts on a malformed stream and aborts the process
  // (tests/data/fuzz-regressions/image). Such a file is refused; for an image that merely holds those 4
  // bytes there, the chance is 1 in 2^32.
  if (bytes.size() >= 132 && std::equal(bytes.begin() + 128, bytes.begin() + 132, "DICM")) {
    return fail(ErrorKind::Unsupported,
                "holds the DICOM signature \"DICM\" at byte 128: AttnScope does not read DICOM (it reads PNG, JPEG, "
                "BMP, TIFF and WebP), and OpenCV's DICOM reader aborts on damaged files",
                std::string(name), 128);
  }

  const std::string what = std::string(to_string(info->format));
  if (bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {  // cv::Mat's int columns
    return too_large(static_cast<std::int64_t>(bytes.size()),
                     ImageLimits{.max_file_bytes = std::numeric_limits<int>::max()}, std::string(name));
  }
  try {
    // libpng warns on stderr about the ICC profiles of many photos ("iCCP: known incorrect sRGB profile"),
    // which reads as a problem with the user's command; OpenCV ignores colour profiles anyway, so the
    // chunk is left out of what it decodes.
    Bytes input = bytes;
    std::vector<std::uint8_t> without_profile;
    if (info->format == ImageFormat::Png) {
      if (const auto iccp = find_png_chunk(bytes, "iCCP")) {
        without_profile.reserve(bytes.size() - (iccp->second - iccp->first));
        without_profile.insert(without_profile.end(), bytes.begin(),
                               bytes.begin() + static_cast<std::ptrdiff_t>(iccp->first));
        without_profile.insert(without_profile.end(), bytes.begin() + static_cast<std::ptrdiff_t>(iccp->second),
                               bytes.end());
        input = without_profile;
      }
    }
    quiet_opencv();
    const cv::Mat buffer(1, static_cast<int>(input.size()), CV_8U, const_cast<std::uint8_t*>(input.data()));
    // IMREAD_ANYCOLOR: colour as 3 channels, grey as 1 (replicated when read, not stored three times), alpha
    // dropped, EXIF orientation applied; ANYDEPTH keeps 16-bit and float samples instead of cutting them to 8 bits.
    auto read = vision::imgcodecs::decode(buffer, cv::IMREAD_ANYCOLOR | cv::IMREAD_ANYDEPTH);
    if (!read) return fail(read.error().kind, read.error().reason, std::string(name));
    cv::Mat decoded = std::move(*read);
    without_profile = {};
    if (decoded.empty()) return fail(ErrorKind::Malformed, "could not decode the " + what + " data", std::string(name));
    if (auto ok = check_decoded(decoded, std::string(name), info->format); !ok) return std::unexpected(ok.error());
    // Each size from the decoded samples (1 to 8 bytes each): the full-size float image (12 bytes a pixel) is
    // made only when asked for.
    std::vector<Image> out;
    for (const ImageSize& size : sizes) {
      auto image = resampled(decoded, size, std::string(name));
      if (!image) return std::unexpected(image.error());
      out.push_back(std::move(*image));
    }
    return out;
  } catch (const cv::Exception& e) {
    return fail(ErrorKind::Malformed, "could not decode the " + what + " data: " + e.err, std::string(name));
  } catch (const std::bad_alloc&) {
    return fail(ErrorKind::TooLarge,
                "not enough memory to decode a " + std::to_string(info->width) + " x " + std::to_string(info->height) +
                    " image",
                std::string(name));
  } catch (const std::exception& e) {
    return fail(ErrorKind::Malformed, "could not decode the " + what + " data: " + e.what(), std::string(name));
  }
}

// ---------------------------------------------------------------------------------------------------------
// Files

namespace {

namespace fs = std::filesystem;

// The checks every reader shares: exists, is a file, within the size limit. Returns the size.
Result<std::int64_t> regular_file_size(const fs::path& path, const ImageLimits& limits, const std::string& name) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (ec || !fs::exists(status)) {
    if (ec && ec != std::errc::no_such_file_or_directory) {
      return fail(ErrorKind::Io, "cannot read the file: " + ec.message(), name);
    }
    return fail(ErrorKind::Io, "no such file", name);
  }
  if (fs::is_directory(status)) return fail(ErrorKind::Io, "is a directory, not an image file", name);
  if (!fs::is_regular_file(status)) return fail(ErrorKind::Io, "is not a regular file", name);
  const auto size = fs::file_size(path, ec);
  if (ec) return fail(ErrorKind::Io, "cannot read the file: " + ec.message(), name);
  const auto bytes = static_cast<std::int64_t>(size);
  if (bytes > limits.max_file_bytes) return too_large(bytes, limits, name);
  return bytes;
}

// Up to `limit` bytes from the start of the file.
Result<std::vector<std::uint8_t>> read_bytes(const fs::path& path, std::int64_t limit, const std::string& name) {
  // Opened as every file is (never blocking on a FIFO swapped in since regular_file_size looked).
  auto file = detail::open_regular_file(path, "an image file");
  if (!file) return std::unexpected(std::move(file.error()));
  std::vector<std::uint8_t> bytes;
  try {
    bytes.resize(static_cast<std::size_t>(limit));
  } catch (const std::bad_alloc&) {
    return fail(ErrorKind::TooLarge, "not enough memory to read " + std::to_string(limit) + " bytes", name);
  }
  std::size_t got = 0;
  while (got < bytes.size()) {
    const ::ssize_t n = ::read(file->fd(), bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(ErrorKind::Io, "cannot read the file: " + std::string(std::strerror(errno)), name);
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  bytes.resize(got);  // the file may have shrunk since it was measured
  return bytes;
}

}  // namespace

Result<ImageInfo> probe_image(const fs::path& path, const ImageLimits& limits) {
  const std::string name = path.string();
  const auto size = regular_file_size(path, limits, name);
  if (!size) return std::unexpected(size.error());
  // Headers are small, but a JPEG's frame header can sit behind large EXIF and ICC segments and a TIFF's
  // directory is often written after the pixels: start with the first 256 KiB, read on only if needed.
  constexpr std::int64_t kFirstRead = 256 * 1024;
  for (std::int64_t want = std::min(*size, kFirstRead);; want = *size) {
    const auto bytes = read_bytes(path, want, name);
    if (!bytes) return std::unexpected(bytes.error());
    const auto got = static_cast<std::int64_t>(bytes->size());
    const bool whole = want == *size || got < want;  // got < want: the file shrank since it was measured
    ProbeInput in{*bytes, whole ? got : *size, name, &limits};
    auto info = probe(in);
    if (info || !in.ran_out || whole) return info;
  }
}

Result<std::vector<Image>> load_image_sizes(const fs::path& path, std::span<const ImageSize> sizes,
                                            const ImageLimits& limits) {
  const std::string name = path.string();
  const auto size = regular_file_size(path, limits, name);
  if (!size) return std::unexpected(size.error());
  const auto bytes = read_bytes(path, *size, name);
  if (!bytes) return std::unexpected(bytes.error());
  return decode_image_sizes(*bytes, name, sizes, limits);
}

Result<Image> load_image(const fs::path& path, const ImageLimits& limits) {
  auto images = load_image_sizes(path, std::span<const ImageSize>(&kFullSize, 1), limits);
  if (!images) return std::unexpected(images.error());
  return std::move(images->front());
}

Result<Image> decode_image(std::span<const std::uint8_t> bytes, std::string_view name, const ImageLimits& limits) {
  auto images = decode_image_sizes(bytes, name, std::span<const ImageSize>(&kFullSize, 1), limits);
  if (!images) return std::unexpected(images.error());
  return std::move(images->front());
}

Image resize_bilinear(const Image& in, int width, int height) {
  Image out(width, height, in.channels);
  bilinear(
      in.width, in.height,
      [&](int c, int y) { return in.plane(c) + static_cast<std::size_t>(y) * static_cast<std::size_t>(in.width); },
      out);
  return out;
}

Result<void> save_image(const Image& image, const fs::path& path) {
  const std::string name = path.string();
  if (image.empty() || image.data.size() < static_cast<std::size_t>(image.channels) * image.plane_size()) {
    return fail(ErrorKind::OutOfRange, "nothing to save: the image is empty", name);
  }
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (ext != ".png" && ext != ".jpg" && ext != ".jpeg" && ext != ".bmp" && ext != ".tif" && ext != ".tiff" &&
      ext != ".webp") {
    return fail(ErrorKind::Unsupported,
                "cannot tell the image format from the extension \"" + path.extension().string() +
                    "\" (use .png, .jpg, .bmp, .tif or .webp)",
                name);
  }

  std::vector<std::uint8_t> encoded;
  try {
    // One channel stays grey; otherwise the first three are RGB, which OpenCV wants as BGR.
    const bool grey = image.channels < 3;
    cv::Mat pixels(image.height, image.width, grey ? CV_8UC1 : CV_8UC3);
    if (grey) {
      image_to_u8(image, pixels.data, static_cast<std::ptrdiff_t>(pixels.step), 1);
    } else {
      const auto w = static_cast<std::size_t>(image.width);
      for (int y = 0; y < image.height; ++y) {
        std::uint8_t* row = pixels.ptr<std::uint8_t>(y);
        const float* r = image.plane(0) + y * w;
        const float* g = image.plane(1) + y * w;
        const float* b = image.plane(2) + y * w;
        for (std::size_t x = 0; x < w; ++x) {
          row[3 * x] = to_byte(b[x]);
          row[3 * x + 1] = to_byte(g[x]);
          row[3 * x + 2] = to_byte(r[x]);
        }
      }
    }
    std::vector<int> params;
    if (ext == ".jpg" || ext == ".jpeg") params = {cv::IMWRITE_JPEG_QUALITY, 95};
    if (ext == ".webp") params = {cv::IMWRITE_WEBP_QUALITY, 101};  // above 100: lossless
    auto written = vision::imgcodecs::encode(ext, pixels, encoded, params);
    if (!written) return fail(written.error().kind, written.error().reason, name);
    if (!*written) return fail(ErrorKind::Io, "could not encode the image as " + ext, name);
  } catch (const cv::Exception& e) {
    return fail(ErrorKind::Io, "could not encode the image as " + ext + ": " + e.err, name);
  } catch (const std::bad_alloc&) {
    return fail(ErrorKind::TooLarge, "not enough memory to encode the image", name);
  }

  // Write beside the target and rename over it, so a reader never sees half a file and a failed write
  // leaves the old file in place.
  return detail::write_file_atomically(path, name, encoded);
}

}  // namespace attn
