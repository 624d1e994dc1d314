// Images: u8 <-> float, the header probe of every format (and its refusals, with reason and byte offset),
// decoding, saving, and the pyramid.
#include "attn/vision/image.h"
#include "attn/vision/pyramid.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <ostream>
#include <random>
#include <string>
#include <vector>

namespace attn {
namespace {

namespace fs = std::filesystem;
using namespace std::string_view_literals;
using Bytes = std::vector<std::uint8_t>;

fs::path data(const char* name) { return fs::path(ATTN_TEST_DATA_DIR) / "images" / name; }

Bytes read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

void write_file(const fs::path& path, const Bytes& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

Bytes bytes_of(std::string_view s) { return Bytes(s.begin(), s.end()); }

// A fresh directory per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() / ("attn-vision-" + std::string(info->test_suite_name()) + "-" + info->name() +
                                         "-" + std::to_string(std::random_device{}()));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  fs::path operator/(const char* name) const { return path_ / name; }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// The 3 x 2 picture of tools/make_bad_images.py, RGB rows top to bottom.
constexpr std::uint8_t kPixels[2][3][3] = {{{255, 0, 0}, {0, 255, 0}, {0, 0, 255}},
                                           {{255, 255, 255}, {128, 64, 32}, {0, 0, 0}}};

void expect_test_picture(const Image& im, const std::string& what) {
  ASSERT_EQ(im.width, 3) << what;
  ASSERT_EQ(im.height, 2) << what;
  ASSERT_EQ(im.channels, 3) << what;
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 3; ++x)
      for (int c = 0; c < 3; ++c)
        EXPECT_FLOAT_EQ(im.at(c, y, x), kPixels[y][x][c] / 255.0f) << what << " at c" << c << " y" << y << " x" << x;
}

// An image with structure in every channel, exactly representable in 8 bits.
Image test_image(int w, int h) {
  Image im(w, h, 3);
  for (int c = 0; c < 3; ++c)
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) im.at(c, y, x) = static_cast<float>((x * 37 + y * 11 + c * 85) % 256) / 255.0f;
  return im;
}

Error error_of(const Result<Image>& r) {
  EXPECT_FALSE(r.has_value());
  return r ? Error{} : r.error();
}
Error error_of(const Result<ImageInfo>& r) {
  EXPECT_FALSE(r.has_value());
  return r ? Error{} : r.error();
}

Result<ImageInfo> probe(const Bytes& b, const ImageLimits& limits = {}) {
  return probe_image_bytes(b, "input", limits);
}

void put_be16(Bytes& b, std::size_t at, unsigned v) {
  b[at] = static_cast<std::uint8_t>(v >> 8);
  b[at + 1] = static_cast<std::uint8_t>(v);
}

// SOI, an APP0 segment, SOF0 with the given size, DHT, SOS and `scan` bytes of entropy-coded data, EOI.
Bytes jpeg_header(unsigned width, unsigned height) {
  Bytes b = {0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x06, 'J', 'F', 'I', 'F'};
  const Bytes sof = {0xFF, 0xC0, 0x00, 0x11, 0x08, 0, 0, 0, 0, 0x03, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1};
  const std::size_t at = b.size();
  b.insert(b.end(), sof.begin(), sof.end());
  put_be16(b, at + 5, height);
  put_be16(b, at + 7, width);
  return b;
}

// ---------------------------------------------------------------------------------------------------------

TEST(Image, ConstructorFillsPlanarData) {
  Image im(4, 3, 2, 0.25f);
  EXPECT_FALSE(im.empty());
  EXPECT_EQ(im.plane_size(), 12u);
  ASSERT_EQ(im.data.size(), 24u);
  for (float v : im.data) EXPECT_EQ(v, 0.25f);
  im.at(1, 2, 3) = 7.0f;
  EXPECT_EQ(im.data[(1 * 3 + 2) * 4 + 3], 7.0f);
  EXPECT_EQ(im.channel(1)(2, 3), 7.0f);
  EXPECT_TRUE(Image().empty());
  EXPECT_TRUE(Image(0, 5, 3).empty());
}

TEST(Image, U8RoundTripIsExactWithRowPadding) {
  constexpr int w = 5, h = 3, stride = 17;  // 15 bytes of pixels, 2 of padding per row
  Bytes src(static_cast<std::size_t>(stride * h), 0xEE);
  std::mt19937 rng(7);
  for (int y = 0; y < h; ++y)
    for (int i = 0; i < w * 3; ++i) src[static_cast<std::size_t>(y * stride + i)] = static_cast<std::uint8_t>(rng());
  const Image im = image_from_u8(src.data(), w, h, 3, stride, 3);
  ASSERT_EQ(im.channels, 3);
  EXPECT_FLOAT_EQ(im.at(2, 1, 4), src[1 * stride + 4 * 3 + 2] / 255.0f);
  Bytes back(static_cast<std::size_t>(stride * h), 0xEE);
  image_to_u8(im, back.data(), stride, 3);
  EXPECT_EQ(back, src);  // the padding is left alone
}

TEST(Image, U8KeepsChannelsReplicatesGreyAndAddsOpaqueAlpha) {
  const Bytes rgba = {10, 20, 30, 40, 50, 60, 70, 80};
  const Image rgb = image_from_u8(rgba.data(), 2, 1, 4, 8, 3);
  ASSERT_EQ(rgb.channels, 3);
  EXPECT_FLOAT_EQ(rgb.at(0, 0, 1), 50 / 255.0f);
  EXPECT_FLOAT_EQ(rgb.at(2, 0, 1), 70 / 255.0f);

  const Bytes grey = {0, 128, 255};
  const Image g3 = image_from_u8(grey.data(), 3, 1, 1, 3, 3);
  ASSERT_EQ(g3.channels, 3);
  for (int c = 0; c < 3; ++c) EXPECT_FLOAT_EQ(g3.at(c, 0, 1), 128 / 255.0f);

  Bytes out(3 * 4);
  image_to_u8(image_from_u8(grey.data(), 3, 1, 1, 3, 1), out.data(), 12, 4);
  EXPECT_EQ(out, (Bytes{0, 0, 0, 255, 128, 128, 128, 255, 255, 255, 255, 255}));
}

TEST(Image, ToU8RoundsAndClamps) {
  Image im(6, 1, 1);
  const float values[6] = {-0.5f, 0.5f / 255.0f, 0.49f / 255.0f, 1.5f, std::nanf(""), 0.5f};
  for (int x = 0; x < 6; ++x) im.at(0, 0, x) = values[x];
  Bytes out(6);
  image_to_u8(im, out.data(), 6, 1);
  EXPECT_EQ(out, (Bytes{0, 1, 0, 255, 0, 128}));
}

TEST(ImageFormat, Names) {
  EXPECT_EQ(to_string(ImageFormat::Png), "PNG");
  EXPECT_EQ(to_string(ImageFormat::Jpeg), "JPEG");
  EXPECT_EQ(to_string(ImageFormat::Bmp), "BMP");
  EXPECT_EQ(to_string(ImageFormat::Tiff), "TIFF");
  EXPECT_EQ(to_string(ImageFormat::WebP), "WebP");
}

// ---------------------------------------------------------------------------------------------------------
// Valid files

struct ProbeCase {
  const char* file;
  ImageFormat format;
  int width, height;
};
void PrintTo(const ProbeCase& c, std::ostream* os) { *os << c.file; }

class ProbeFile : public ::testing::TestWithParam<ProbeCase> {};

TEST_P(ProbeFile, ReadsFormatAndSizeFromTheHeader) {
  const ProbeCase& c = GetParam();
  const auto info = probe_image(data(c.file));
  ASSERT_TRUE(info) << info.error().message();
  EXPECT_EQ(info->format, c.format);
  EXPECT_EQ(info->width, c.width);
  EXPECT_EQ(info->height, c.height);
  const auto same = probe_image_bytes(read_file(data(c.file)), c.file);
  ASSERT_TRUE(same);
  EXPECT_EQ(same->width, c.width);
}

INSTANTIATE_TEST_SUITE_P(Data, ProbeFile,
                         ::testing::Values(ProbeCase{"rgb-3x2.png", ImageFormat::Png, 3, 2},
                                           ProbeCase{"rgba-3x2.png", ImageFormat::Png, 3, 2},
                                           ProbeCase{"grey16-3x2.png", ImageFormat::Png, 3, 2},
                                           ProbeCase{"pattern-64x48.png", ImageFormat::Png, 64, 48},
                                           ProbeCase{"rgb-3x2.bmp", ImageFormat::Bmp, 3, 2},
                                           ProbeCase{"topdown-3x2.bmp", ImageFormat::Bmp, 3, 2},
                                           ProbeCase{"rgb-3x2-le.tif", ImageFormat::Tiff, 3, 2},
                                           ProbeCase{"rgb-3x2-be.tif", ImageFormat::Tiff, 3, 2},
                                           // Truncated data, complete headers: the probe accepts them.
                                           ProbeCase{"truncated.png", ImageFormat::Png, 64, 48},
                                           ProbeCase{"truncated.jpg", ImageFormat::Jpeg, 100, 100}),
                         [](const auto& info) {
                           std::string name = info.param.file;
                           for (char& ch : name)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return name;
                         });

class DecodeFile : public ::testing::TestWithParam<const char*> {};

TEST_P(DecodeFile, GivesTheTestPictureAsPlanarRgb) {
  const auto im = load_image(data(GetParam()));
  ASSERT_TRUE(im) << im.error().message();
  expect_test_picture(*im, GetParam());
}

INSTANTIATE_TEST_SUITE_P(Data, DecodeFile,
                         ::testing::Values("rgb-3x2.png", "rgba-3x2.png", "rgb-3x2.bmp", "topdown-3x2.bmp",
                                           "rgb-3x2-le.tif", "rgb-3x2-be.tif"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& ch : name)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return name;
                         });

TEST(DecodeImage, SixteenBitGreyKeepsItsPrecision) {
  const auto im = load_image(data("grey16-3x2.png"));
  ASSERT_TRUE(im) << im.error().message();
  ASSERT_EQ(im->channels, 3);
  const int grey[2][3] = {{0, 65535, 32768}, {1000, 50000, 257}};
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 3; ++x)
      for (int c = 0; c < 3; ++c) EXPECT_NEAR(im->at(c, y, x), grey[y][x] / 65535.0, 1e-7) << y << "," << x;
}

// Resampling while decoding (what ViT's input and the views use for big photos) gives the very numbers of
// decoding at full size and resampling after: 8-bit RGB, RGBA, 16-bit grey and a real JPEG photo.
TEST(ImageSizes, ExactIsResizeBilinearOfTheFullDecodeBitForBit) {
  for (const fs::path& file : {data("pattern-64x48.png"), data("rgba-3x2.png"), data("grey16-3x2.png"),
                               fs::path(ATTN_SOURCE_DIR) / "resources/samples/images/rocket.jpg"}) {
    SCOPED_TRACE(file.filename().string());
    const auto full = load_image(file);
    ASSERT_TRUE(full) << full.error().message();
    const ImageSize sizes[] = {{.fit = ImageSize::Fit::Exact, .width = 224, .height = 224},
                               {.fit = ImageSize::Fit::Exact, .width = 17, .height = 5},
                               {.fit = ImageSize::Fit::Full}};
    const auto images = load_image_sizes(file, sizes);
    ASSERT_TRUE(images) << images.error().message();
    ASSERT_EQ(images->size(), 3u);
    EXPECT_EQ((*images)[0].data, resize_bilinear(*full, 224, 224).data);
    EXPECT_EQ((*images)[1].width, 17);
    EXPECT_EQ((*images)[1].data, resize_bilinear(*full, 17, 5).data);
    EXPECT_EQ((*images)[2].data, full->data);
  }
}

TEST(ImageSizes, WithinKeepsTheAspectAndNeverEnlarges) {
  const auto file = data("pattern-64x48.png");
  const ImageSize sizes[] = {{.fit = ImageSize::Fit::Within, .max_side = 32},
                             {.fit = ImageSize::Fit::Within, .max_pixels = 300},
                             {.fit = ImageSize::Fit::Within, .max_side = 1000, .max_pixels = 1 << 20}};
  const auto images = load_image_sizes(file, sizes);
  ASSERT_TRUE(images) << images.error().message();
  EXPECT_EQ((*images)[0].width, 32);
  EXPECT_EQ((*images)[0].height, 24);
  EXPECT_EQ((*images)[1].width, 20);  // sqrt(300 / 3072) = 0.3125 of 64 x 48
  EXPECT_EQ((*images)[1].height, 15);
  const auto full = load_image(file);
  ASSERT_TRUE(full);
  EXPECT_EQ((*images)[2].data, full->data);
  // Area averaging: the 2 x 2 mean of the full image, to float rounding.
  for (int c = 0; c < 3; ++c) {
    const float mean = (full->at(c, 0, 0) + full->at(c, 0, 1) + full->at(c, 1, 0) + full->at(c, 1, 1)) / 4.0f;
    EXPECT_NEAR((*images)[0].at(c, 0, 0), mean, 1.0f / 255.0f) << c;
  }
  const ImageSize empty[] = {{.fit = ImageSize::Fit::Exact, .width = 0, .height = 5}};
  const auto refused = load_image_sizes(file, empty);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, ErrorKind::OutOfRange);
}

TEST(DecodeImage, AnIccProfileIsIgnoredWithoutLibpngWarnings) {
  ::testing::internal::CaptureStderr();
  const auto im = load_image(data("iccp-3x2.png"));
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(im) << im.error().message();
  expect_test_picture(*im, "iccp");
  EXPECT_EQ(err, "");
}

TEST(DecodeImage, TheFormatComesFromTheBytesNotTheExtension) {
  TempDir dir;
  fs::copy_file(data("rgb-3x2.png"), dir / "really-a-png.jpg");
  const auto info = probe_image(dir / "really-a-png.jpg");
  ASSERT_TRUE(info);
  EXPECT_EQ(info->format, ImageFormat::Png);
  const auto im = load_image(dir / "really-a-png.jpg");
  ASSERT_TRUE(im) << im.error().message();
  expect_test_picture(*im, "renamed");
}

struct SaveCase {
  const char* file;
  ImageFormat format;
  double tolerance;  // JPEG is lossy; the others must give the bytes back
};
void PrintTo(const SaveCase& c, std::ostream* os) { *os << c.file; }

class SaveAndLoad : public ::testing::TestWithParam<SaveCase> {};

// Smooth and distinct per channel, so that JPEG keeps it close and a swap of R and B would show.
Image smooth_image(int w, int h) {
  Image im(w, h, 3);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      im.at(0, y, x) = static_cast<float>(std::lround(255.0 * x / (w - 1))) / 255.0f;
      im.at(1, y, x) = static_cast<float>(std::lround(255.0 * y / (h - 1))) / 255.0f;
      im.at(2, y, x) = 0.2f;
    }
  return im;
}

TEST_P(SaveAndLoad, RoundTripsThroughEveryFormat) {
  const SaveCase& c = GetParam();
  TempDir dir;
  const Image im = c.tolerance == 0.0 ? test_image(37, 23) : smooth_image(37, 23);
  const fs::path path = dir / c.file;
  const auto saved = save_image(im, path);
  ASSERT_TRUE(saved) << saved.error().message();
  const auto info = probe_image(path);
  ASSERT_TRUE(info) << info.error().message();
  EXPECT_EQ(info->format, c.format);
  EXPECT_EQ(info->width, 37);
  EXPECT_EQ(info->height, 23);
  const auto back = load_image(path);
  ASSERT_TRUE(back) << back.error().message();
  ASSERT_EQ(back->width, 37);
  ASSERT_EQ(back->height, 23);
  ASSERT_EQ(back->channels, 3);
  double worst = 0.0, mean = 0.0;
  for (std::size_t k = 0; k < im.data.size(); ++k) {
    const double d = std::abs(double(back->data[k]) - im.data[k]);
    worst = std::max(worst, d);
    mean += d / double(im.data.size());
  }
  if (c.tolerance == 0.0) {
    EXPECT_EQ(worst, 0.0);
  } else {
    EXPECT_LT(mean, c.tolerance);
    EXPECT_LT(worst, 6 * c.tolerance);
  }
  // Only the file itself is left: the temporary was renamed over it.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
}

INSTANTIATE_TEST_SUITE_P(Formats, SaveAndLoad,
                         ::testing::Values(SaveCase{"a.png", ImageFormat::Png, 0.0},
                                           SaveCase{"a.bmp", ImageFormat::Bmp, 0.0},
                                           SaveCase{"a.tif", ImageFormat::Tiff, 0.0},
                                           SaveCase{"a.webp", ImageFormat::WebP, 0.0},  // lossless VP8L
                                           SaveCase{"a.JPG", ImageFormat::Jpeg, 0.01}),
                         [](const auto& info) { return std::string(to_string(info.param.format)); });

TEST(SaveImage, GreyStaysGreyAndOverwritesAtomically) {
  TempDir dir;
  Image grey(4, 2, 1, 0.5f);
  ASSERT_TRUE(save_image(grey, dir / "g.png"));
  ASSERT_TRUE(save_image(test_image(4, 2), dir / "g.png"));  // replaces the old file
  const auto back = load_image(dir / "g.png");
  ASSERT_TRUE(back);
  EXPECT_FLOAT_EQ(back->at(1, 1, 3), test_image(4, 2).at(1, 1, 3));
  ASSERT_TRUE(save_image(grey, dir / "g.png"));
  const auto g = load_image(dir / "g.png");
  ASSERT_TRUE(g);
  EXPECT_FLOAT_EQ(g->at(2, 0, 0), 128 / 255.0f);
}

TEST(SaveImage, RefusesWhatItCannotWrite) {
  TempDir dir;
  const Image im = test_image(4, 4);
  Error e = save_image(im, dir / "a.gif").error();
  EXPECT_EQ(e.file, (dir / "a.gif").string());
  EXPECT_EQ(e.reason, "cannot tell the image format from the extension \".gif\" (use .png, .jpg, .bmp, .tif or .webp)");
  e = save_image(im, dir / "missing" / "a.png").error();
  EXPECT_EQ(e.reason, "cannot write the file: No such file or directory");
  e = save_image(Image(), dir / "a.png").error();
  EXPECT_EQ(e.reason, "nothing to save: the image is empty");
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST(DecodeImage, AJpegMayHaveBytesAfterItsEnd) {
  TempDir dir;
  ASSERT_TRUE(save_image(test_image(16, 8), dir / "a.jpg"));
  Bytes b = read_file(dir / "a.jpg");
  ASSERT_GE(b.size(), 4u);
  EXPECT_EQ(b[b.size() - 2], 0xFF);
  EXPECT_EQ(b[b.size() - 1], 0xD9);
  Bytes padded = b;
  padded.insert(padded.end(), 100, 0x00);
  EXPECT_TRUE(decode_image(padded, "padded.jpg")) << "zero padding after EOI";
  Bytes trailer = b;
  for (char ch : std::string_view("a camera's trailer")) trailer.push_back(static_cast<std::uint8_t>(ch));
  EXPECT_TRUE(decode_image(trailer, "trailer.jpg"));
}

TEST(DecodeImage, AJpegCutInItsScanIsTruncatedEvenWithAThumbnailsEndMarkerEarlier) {
  TempDir dir;
  ASSERT_TRUE(save_image(test_image(64, 48), dir / "a.jpg"));
  const Bytes b = read_file(dir / "a.jpg");
  // An APP1 segment right after SOI holding ff d9, as an EXIF thumbnail does.
  Bytes with_thumb = {0xFF, 0xD8, 0xFF, 0xE1, 0x00, 0x08, 'E', 'x', 0xFF, 0xD8, 0xFF, 0xD9};
  with_thumb.insert(with_thumb.end(), b.begin() + 2, b.end());
  ASSERT_TRUE(decode_image(with_thumb, "thumb.jpg")) << "the whole file decodes";
  const Bytes cut(with_thumb.begin(), with_thumb.end() - 40);
  const Error e = error_of(decode_image(cut, "cut.jpg"));
  EXPECT_EQ(e.file, "cut.jpg");
  EXPECT_EQ(e.offset, static_cast<std::int64_t>(cut.size()));
  EXPECT_EQ(e.reason, "truncated JPEG: no end-of-image marker (file ends at byte " + std::to_string(cut.size()) + ")");
}

// ---------------------------------------------------------------------------------------------------------
// The bad-input corpus, through load_image as the app and the CLI call it.

struct BadFile {
  const char* file;
  std::int64_t offset;
  const char* reason;
};
void PrintTo(const BadFile& c, std::ostream* os) { *os << c.file; }

class BadInput : public ::testing::TestWithParam<BadFile> {};

TEST_P(BadInput, IsRefusedWithFileOffsetAndReason) {
  const BadFile& c = GetParam();
  const fs::path path = data(c.file);
  const Error e = error_of(load_image(path));
  EXPECT_EQ(e.file, path.string());
  EXPECT_EQ(e.offset, c.offset);
  EXPECT_EQ(e.reason, c.reason);
  EXPECT_NE(e.message().find(c.file), std::string::npos) << e.message();
}

INSTANTIATE_TEST_SUITE_P(
    Corpus, BadInput,
    ::testing::Values(BadFile{"empty.png", 0, "empty file (0 bytes)"},
                      BadFile{"text.png", 0, "not an image: starts with bytes 68 65 6c 6c (\"hell\")"},
                      BadFile{"huge-header.png", 16,
                              "image is 30000 x 30000 pixels; the limit is 16384 per side and 100000000 pixels"},
                      BadFile{"truncated.png", 3168, "truncated PNG: no IEND chunk (file ends at byte 3168)"},
                      BadFile{"truncated.jpg", 400, "truncated JPEG: no end-of-image marker (file ends at byte 400)"},
                      BadFile{"truncated.bmp", 71, "truncated BMP: the pixel data needs 78 bytes, the file has 71"}),
    [](const auto& info) {
      std::string name = info.param.file;
      for (char& ch : name)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return name;
    });

TEST(LoadImage, ProbeRefusesTheSameHeadersAsLoad) {
  EXPECT_EQ(error_of(probe_image(data("empty.png"))).reason, "empty file (0 bytes)");
  EXPECT_EQ(error_of(probe_image(data("huge-header.png"))).offset, 16);
  EXPECT_EQ(error_of(probe_image(data("text.png"))).message(),
            data("text.png").string() + ": byte 0: not an image: starts with bytes 68 65 6c 6c (\"hell\")");
}

TEST(LoadImage, MissingFilesDirectoriesAndLimits) {
  TempDir dir;
  Error e = error_of(load_image(dir / "nope.png"));
  EXPECT_EQ(e.file, (dir / "nope.png").string());
  EXPECT_EQ(e.reason, "no such file");
  EXPECT_EQ(e.offset, -1);
  EXPECT_EQ(error_of(probe_image(dir / "nope.png")).reason, "no such file");
  EXPECT_EQ(error_of(load_image(dir.path())).reason, "is a directory, not an image file");

  ImageLimits small;
  small.max_file_bytes = 10;
  e = error_of(load_image(data("rgb-3x2.png"), small));
  EXPECT_EQ(e.reason, "file is 79 bytes; the limit is 10 bytes");
  EXPECT_EQ(error_of(probe_image(data("rgb-3x2.png"), small)).reason, "file is 79 bytes; the limit is 10 bytes");

  ImageLimits side;
  side.max_side = 32;
  e = error_of(load_image(data("pattern-64x48.png"), side));
  EXPECT_EQ(e.reason, "image is 64 x 48 pixels; the limit is 32 per side and 100000000 pixels");
  ImageLimits pixels;
  pixels.max_pixels = 3000;
  e = error_of(probe_image(data("pattern-64x48.png"), pixels));
  EXPECT_EQ(e.reason, "image is 64 x 48 pixels; the limit is 16384 per side and 3000 pixels");
  pixels.max_pixels = 64 * 48;
  EXPECT_TRUE(probe_image(data("pattern-64x48.png"), pixels));
}

TEST(LoadImage, FindsAJpegFrameHeaderBehindLargeSegments) {
  // 300 KiB of APP segments before SOF: more than probe_image reads at first.
  Bytes b = {0xFF, 0xD8};
  for (int k = 0; k < 5; ++k) {
    b.insert(b.end(), {0xFF, 0xE2, 0xFF, 0xFF});
    b.insert(b.end(), 0xFFFD, static_cast<std::uint8_t>(k));
  }
  const Bytes sof = jpeg_header(1234, 567);
  b.insert(b.end(), sof.begin() + 10, sof.end());
  TempDir dir;
  write_file(dir / "big-exif.jpg", b);
  const auto info = probe_image(dir / "big-exif.jpg");
  ASSERT_TRUE(info) << info.error().message();
  EXPECT_EQ(info->width, 1234);
  EXPECT_EQ(info->height, 567);
}

// ---------------------------------------------------------------------------------------------------------
// Header parsing, byte by byte

TEST(ProbeBytes, UnknownAndEmpty) {
  EXPECT_EQ(error_of(probe(Bytes{})).reason, "empty file (0 bytes)");
  Error e = error_of(probe(bytes_of("h")));
  EXPECT_EQ(e.reason, "not an image: starts with bytes 68 (\"h\")");
  EXPECT_EQ(e.offset, 0);
  EXPECT_EQ(e.file, "input");
  e = error_of(probe(bytes_of("GIF89a....")));
  EXPECT_EQ(e.reason,
            "a GIF image, which AttnScope does not read (it reads PNG, JPEG, BMP, TIFF and WebP); save it as a PNG");
  EXPECT_EQ(e.kind, ErrorKind::Unsupported);
  e = error_of(probe(Bytes{0x00, 0x01, 'a', 0x7f, 'b'}));
  EXPECT_EQ(e.reason, "not an image: starts with bytes 00 01 61 7f (\"..a.\")");
  e = error_of(probe(bytes_of("RIFF\x10\0\0\0WAVEfmt "sv)));  // RIFF, but not WebP
  EXPECT_EQ(e.reason, "not an image: starts with bytes 52 49 46 46 (\"RIFF\")");
}

TEST(ProbeBytes, PngHeader) {
  const Bytes png = read_file(data("rgb-3x2.png"));
  Error e = error_of(probe(Bytes(png.begin(), png.begin() + 20)));
  EXPECT_EQ(e.reason, "PNG header truncated at byte 20");
  EXPECT_EQ(e.offset, 20);
  e = error_of(probe(Bytes(png.begin(), png.begin() + 3)));  // the signature itself cut
  EXPECT_EQ(e.reason, "PNG header truncated at byte 3");
  Bytes renamed = png;
  std::copy_n("IDAT", 4, renamed.begin() + 12);
  e = error_of(probe(renamed));
  EXPECT_EQ(e.reason, "PNG's first chunk is \"IDAT\", not IHDR");
  EXPECT_EQ(e.offset, 12);
  Bytes long_ihdr = png;
  long_ihdr[11] = 14;
  EXPECT_EQ(error_of(probe(long_ihdr)).reason, "PNG's IHDR chunk has length 14, not 13");
  Bytes zero = png;
  zero[19] = 0;  // width 0
  e = error_of(probe(zero));
  EXPECT_EQ(e.reason, "image is 0 x 2 pixels, which holds no pixels");
  EXPECT_EQ(e.offset, 16);
}

TEST(ProbeBytes, PngWhoseDataIsNotDecodable) {
  Bytes png = read_file(data("rgb-3x2.png"));
  // Flip the compressed bytes of IDAT (after its 8-byte header at 33), leaving IEND in place.
  for (std::size_t i = 33 + 8 + 2; i < png.size() - 16; ++i) png[i] ^= 0x5A;
  ASSERT_TRUE(probe(png));
  const Error e = error_of(decode_image(png, "garbled.png"));
  EXPECT_EQ(e.reason.rfind("could not decode the PNG data", 0), 0u) << e.reason;
  EXPECT_EQ(e.file, "garbled.png");
}

TEST(ProbeBytes, JpegWalksMarkersToTheFrameHeader) {
  Bytes b = jpeg_header(640, 427);
  auto info = probe(b);
  ASSERT_TRUE(info) << info.error().message();
  EXPECT_EQ(info->format, ImageFormat::Jpeg);
  EXPECT_EQ(info->width, 640);
  EXPECT_EQ(info->height, 427);

  // Fill bytes and a standalone marker before SOF, and a progressive frame (SOF2).
  Bytes odd = {0xFF, 0xD8, 0xFF, 0xFF, 0xFF, 0xD3, 0xFF, 0xE0, 0x00, 0x02};
  Bytes sof2 = jpeg_header(17, 9);
  sof2[11] = 0xC2;
  odd.insert(odd.end(), sof2.begin() + 10, sof2.end());
  info = probe(odd);
  ASSERT_TRUE(info) << info.error().message();
  EXPECT_EQ(info->width, 17);

  // DHT (c4) is in the SOF range but not a frame header.
  Bytes dht = {0xFF, 0xD8, 0xFF, 0xC4, 0x00, 0x03, 0x00};
  dht.insert(dht.end(), b.begin() + 10, b.end());
  info = probe(dht);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->height, 427);
}

TEST(ProbeBytes, JpegErrors) {
  const Bytes b = jpeg_header(640, 427);
  Error e = error_of(probe(Bytes(b.begin(), b.begin() + 15)));  // inside SOF
  EXPECT_EQ(e.reason, "JPEG header truncated at byte 15");
  EXPECT_EQ(e.offset, 15);
  e = error_of(probe(Bytes(b.begin(), b.begin() + 8)));  // inside APP0
  EXPECT_EQ(e.reason, "JPEG header truncated at byte 8");

  Bytes not_marker = b;
  not_marker[10] = 0x12;
  e = error_of(probe(not_marker));
  EXPECT_EQ(e.reason, "JPEG: expected a marker (ff xx) at byte 10, found 12");
  EXPECT_EQ(e.offset, 10);

  Bytes short_length = b;
  short_length[5] = 0x01;
  e = error_of(probe(short_length));
  EXPECT_EQ(e.reason, "JPEG segment ff e0 has length 1 (at least 2)");
  EXPECT_EQ(e.offset, 4);

  const Bytes sos_first = {0xFF, 0xD8, 0xFF, 0xDA, 0x00, 0x02};
  e = error_of(probe(sos_first));
  EXPECT_EQ(e.reason, "JPEG scan (SOS) comes before any frame header (SOF)");
  EXPECT_EQ(e.offset, 2);

  const Bytes eoi = {0xFF, 0xD8, 0xFF, 0xD9};
  EXPECT_EQ(error_of(probe(eoi)).reason, "JPEG ends (end-of-image marker) before its frame header");

  e = error_of(probe(jpeg_header(20000, 10)));
  EXPECT_EQ(e.reason, "image is 20000 x 10 pixels; the limit is 16384 per side and 100000000 pixels");
  EXPECT_EQ(e.offset, 15);
}

TEST(ProbeBytes, BmpHeader) {
  const Bytes bmp = read_file(data("rgb-3x2.bmp"));
  Error e = error_of(probe(Bytes(bmp.begin(), bmp.begin() + 20)));
  EXPECT_EQ(e.reason, "BMP header truncated at byte 20");
  EXPECT_EQ(e.offset, 20);
  Bytes negative = bmp;
  negative[21] = 0xFF;  // width's top byte
  e = error_of(probe(negative));
  EXPECT_EQ(e.offset, 18);
  EXPECT_EQ(e.reason.rfind("BMP width is negative", 0), 0u) << e.reason;
  Bytes unknown = bmp;
  unknown[14] = 41;
  e = error_of(probe(unknown));
  EXPECT_EQ(e.reason, "BMP header of unknown size 41");
  EXPECT_EQ(e.offset, 14);
  // BITMAPCOREHEADER: 16-bit sides.
  Bytes core = {'B', 'M', 0, 0, 0, 0, 0, 0, 0, 0, 26, 0, 0, 0, 12, 0, 0, 0, 0x10, 0x01, 0x20, 0x00, 1, 0, 24, 0};
  const auto info = probe(core);
  ASSERT_TRUE(info) << info.error().message();
  EXPECT_EQ(info->width, 0x110);
  EXPECT_EQ(info->height, 0x20);
}

TEST(ProbeBytes, TiffHeader) {
  const Bytes le = read_file(data("rgb-3x2-le.tif"));
  Error e = error_of(probe(Bytes(le.begin(), le.begin() + 6)));
  EXPECT_EQ(e.reason, "TIFF header truncated at byte 6");
  // The directory is at 8 + 18 + 6 = 32 with 10 entries: cut inside it.
  e = error_of(probe(Bytes(le.begin(), le.begin() + 60)));
  EXPECT_EQ(e.reason, "TIFF's first directory at byte 32 lies past the end of the file (60 bytes)");
  EXPECT_EQ(e.offset, 4);
  Bytes bad_type = le;
  bad_type[32 + 2 + 2] = 2;  // width as ASCII
  e = error_of(probe(bad_type));
  EXPECT_EQ(e.reason, "TIFF tag 256 (width) has type 2; expected SHORT (3) or LONG (4)");
  EXPECT_EQ(e.offset, 34);
  Bytes no_width = le;
  no_width[32 + 2] = 0x10;  // tag 256 -> 272
  e = error_of(probe(no_width));
  EXPECT_EQ(e.reason, "TIFF's first directory has no image width (tag 256)");
  EXPECT_EQ(e.offset, 32);
  Bytes zero_ifd = le;
  zero_ifd[4] = 0;
  EXPECT_EQ(error_of(probe(zero_ifd)).reason, "TIFF's first directory offset 0 is invalid");
}

Bytes riff(std::string_view chunk, const Bytes& payload) {
  Bytes b = bytes_of("RIFF");
  const auto size = static_cast<std::uint32_t>(4 + 8 + payload.size());
  for (int k = 0; k < 4; ++k) b.push_back(static_cast<std::uint8_t>(size >> (8 * k)));
  for (char c : std::string_view("WEBP")) b.push_back(static_cast<std::uint8_t>(c));
  for (char c : chunk) b.push_back(static_cast<std::uint8_t>(c));
  for (int k = 0; k < 4; ++k) b.push_back(static_cast<std::uint8_t>(payload.size() >> (8 * k)));
  b.insert(b.end(), payload.begin(), payload.end());
  return b;
}

TEST(ProbeBytes, WebPChunks) {
  // Lossy: frame tag, start code, 14-bit width and height (top two bits are scaling).
  const Bytes vp8 = riff("VP8 ", {0x30, 0x01, 0x00, 0x9D, 0x01, 0x2A, 0x40, 0x41, 0xE0, 0x00});
  auto info = probe(vp8);
  ASSERT_TRUE(info) << info.error().message();
  EXPECT_EQ(info->format, ImageFormat::WebP);
  EXPECT_EQ(info->width, 0x140);
  EXPECT_EQ(info->height, 0xE0);
  // Extended: canvas width - 1 and height - 1 in 24 bits.
  const Bytes vp8x = riff("VP8X", {0x10, 0, 0, 0, 0x0F, 0x27, 0x00, 0xFF, 0x00, 0x00});
  info = probe(vp8x);
  ASSERT_TRUE(info) << info.error().message();
  EXPECT_EQ(info->width, 10000);
  EXPECT_EQ(info->height, 256);
  // Lossless: signature 2f, then 14 bits each of width - 1 and height - 1.
  const std::uint32_t bits = (99u) | (49u << 14);
  const Bytes vp8l = riff(
      "VP8L", {0x2F, std::uint8_t(bits), std::uint8_t(bits >> 8), std::uint8_t(bits >> 16), std::uint8_t(bits >> 24)});
  info = probe(vp8l);
  ASSERT_TRUE(info) << info.error().message();
  EXPECT_EQ(info->width, 100);
  EXPECT_EQ(info->height, 50);

  Error e = error_of(probe(riff("ALPH", Bytes(10, 0))));
  EXPECT_EQ(e.reason, "WebP's first chunk is \"ALPH\", not VP8, VP8L or VP8X");
  EXPECT_EQ(e.offset, 12);
  Bytes no_start = vp8;
  no_start[24] = 0;
  e = error_of(probe(no_start));
  EXPECT_EQ(e.reason, "WebP's VP8 data lacks its start code");
  EXPECT_EQ(e.offset, 23);
  e = error_of(probe(Bytes(vp8.begin(), vp8.begin() + 27)));
  EXPECT_EQ(e.reason, "WebP header truncated at byte 27");
  EXPECT_EQ(error_of(probe(bytes_of("RIFF\x10\0"sv))).reason, "WebP header truncated at byte 6");
}

TEST(DecodeImage, TruncatedWebP) {
  TempDir dir;
  ASSERT_TRUE(save_image(test_image(20, 10), dir / "a.webp"));
  const Bytes b = read_file(dir / "a.webp");
  const Bytes cut(b.begin(), b.end() - 5);
  const Error e = error_of(decode_image(cut, "cut.webp"));
  EXPECT_EQ(e.reason, "truncated WebP: the RIFF header says " + std::to_string(b.size()) + " bytes, the file has " +
                          std::to_string(cut.size()));
  EXPECT_EQ(e.offset, static_cast<std::int64_t>(cut.size()));
}

// ---------------------------------------------------------------------------------------------------------
// Pyramid

TEST(Pyramid, PyrDownHalvesRoundingUp) {
  EXPECT_EQ(pyr_down(Image(7, 5, 3)).width, 4);
  EXPECT_EQ(pyr_down(Image(7, 5, 3)).height, 3);
  EXPECT_EQ(pyr_down(Image(64, 48, 1)).width, 32);
  EXPECT_EQ(pyr_down(Image(64, 48, 1)).height, 24);
  const Image one = pyr_down(Image(1, 1, 2, 0.5f));
  EXPECT_EQ(one.width, 1);
  EXPECT_EQ(one.height, 1);
  EXPECT_EQ(one.channels, 2);
  EXPECT_TRUE(pyr_down(Image()).empty());
}

TEST(Pyramid, AConstantImageStaysConstant) {
  Image im(33, 17, 3);
  const float level[3] = {0.25f, 0.5f, 1.0f};
  for (int c = 0; c < 3; ++c) std::fill(im.plane(c), im.plane(c) + im.plane_size(), level[c]);
  const Image down = pyr_down(im);
  ASSERT_EQ(down.channels, 3);
  for (int c = 0; c < 3; ++c)
    for (std::size_t k = 0; k < down.plane_size(); ++k) ASSERT_NEAR(down.plane(c)[k], level[c], 1e-6f);
}

TEST(Pyramid, PyrDownIsTheBinomialKernel) {
  // An impulse at (4, 4) of an 8 x 8 image: output (2, 2) sits on it and gets (6/16)^2; (1, 2) is two
  // pixels away in y and gets (1/16)(6/16); (2, 3) likewise in x.
  Image im(8, 8, 1);
  im.at(0, 4, 4) = 1.0f;
  const Image d = pyr_down(im);
  EXPECT_NEAR(d.at(0, 2, 2), 36.0f / 256.0f, 1e-7f);
  EXPECT_NEAR(d.at(0, 1, 2), 6.0f / 256.0f, 1e-7f);
  EXPECT_NEAR(d.at(0, 2, 3), 6.0f / 256.0f, 1e-7f);
  EXPECT_NEAR(d.at(0, 0, 0), 0.0f, 1e-7f);
}

TEST(Pyramid, LevelsHalveDownToTheMinimumSideAndShareTheBase) {
  auto base = std::make_shared<const Image>(test_image(100, 60));
  const ImagePyramid p(base, 16);
  ASSERT_EQ(p.levels(), 2);  // 100 x 60, 50 x 30; 25 x 15 would be below 16
  EXPECT_EQ(&p.base(), base.get());
  EXPECT_EQ(p.shared_level(0), base);
  EXPECT_EQ(p.level(1).width, 50);
  EXPECT_EQ(p.level(1).height, 30);

  const ImagePyramid tiny(std::make_shared<const Image>(Image(5, 3, 1, 0.5f)), 1);
  ASSERT_EQ(tiny.levels(), 4);  // 5 x 3, 3 x 2, 2 x 1, 1 x 1
  EXPECT_EQ(tiny.level(3).width, 1);
  EXPECT_EQ(tiny.level(3).height, 1);
  EXPECT_NEAR(tiny.level(3).at(0, 0, 0), 0.5f, 1e-6f);

  EXPECT_TRUE(ImagePyramid(nullptr).empty());
  EXPECT_EQ(ImagePyramid(std::make_shared<const Image>(test_image(20, 20)), 32).levels(), 1);
}

}  // namespace
}  // namespace attn
