// Inputs the fuzz targets (tests/fuzz) found, each fed to the loader exactly as found: what went wrong then,
// and what must happen instead. The inputs are tests/data/fuzz-regressions/<target>/; a new finding gets its
// file and its test here before its fix.
#include "attn/audio/audio.h"
#include "attn/lab/lab.h"
#include "attn/vision/image.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

namespace attn {
namespace {

std::string regression(const std::string& target, const std::string& file) {
  const std::string path = std::string(ATTN_TEST_DATA_DIR) + "/fuzz-regressions/" + target + "/" + file;
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << "cannot open " << path;
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// fuzz_image, abort: 135 bytes that our probe takes for a WebP (RIFF, WEBP, a VP8 chunk) but libwebp's quick
// check does not, with "DICM" at byte 128. OpenCV then offers them to the next decoder whose signature matches,
// its DICOM reader (GDCM), which asserts on the malformed stream and aborts the process. DICOM is not a format
// AttnScope reads: a file with that signature is refused before OpenCV sees it.
TEST(FuzzRegression, ImageWithADicomSignatureIsRefusedNotAborted) {
  const std::string bytes = regression("image", "webp-dicm-at-128.webp");
  ASSERT_EQ(bytes.size(), 135u);
  const auto image = decode_image(std::span(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()),
                                  "webp-dicm-at-128.webp");
  ASSERT_FALSE(image) << "decoded a " << image->width << " x " << image->height << " image";
  EXPECT_EQ(image.error().kind, ErrorKind::Unsupported) << image.error().message();
  EXPECT_EQ(image.error().offset, 128);
  EXPECT_NE(image.error().reason.find("DICOM"), std::string::npos) << image.error().reason;
}

// fuzz_image, a broken promise (2026-11-26, within its first second): a TIFF whose first directory gives the
// image width twice, 8 (SHORT) and then 52 (LONG, a shuffled strip-byte-count entry). The probe read the last,
// libtiff decodes with the first: the limits were checked on a size other than the one decoded. A size given
// twice is refused, at the second entry.
TEST(FuzzRegression, TiffGivingItsWidthTwiceIsRefused) {
  const std::string bytes = regression("image", "tiff-width-twice.tif");
  ASSERT_EQ(bytes.size(), 222u);
  const std::span data(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  const auto info = probe_image_bytes(data, "tiff-width-twice.tif");
  ASSERT_FALSE(info) << "probed " << info->width << " x " << info->height;
  EXPECT_EQ(info.error().kind, ErrorKind::Malformed);
  EXPECT_EQ(info.error().offset, 158);
  EXPECT_NE(info.error().reason.find("width (tag 256) twice (8, then 52)"), std::string::npos) << info.error().reason;
  const auto image = decode_image(data, "tiff-width-twice.tif");
  ASSERT_FALSE(image) << "decoded a " << image->width << " x " << image->height << " image";
}

// fuzz_lab_request, UBSan: {"window": 1e10} was converted to int by nlohmann's get<int>(), a float-to-int
// conversion out of range (undefined behaviour; in practice INT_MIN). A whole-number field must hold a whole
// number that fits.
TEST(FuzzRegression, LabRequestRefusesAWindowBeyondInt) {
  const auto request = lab::lab_request_from_json(regression("lab_request", "window-1e10.json"), "lab.json");
  ASSERT_FALSE(request) << "accepted window " << request->params.window;
  EXPECT_EQ(request.error().kind, ErrorKind::OutOfRange);
  EXPECT_EQ(request.error().file, "lab.json");
  EXPECT_NE(request.error().reason.find("\"window\""), std::string::npos) << request.error().reason;
}

TEST(FuzzRegression, LabRequestRefusesAFractionalCount) {
  const auto request = lab::lab_request_from_json(R"({"heads": 2.5})", "lab.json");
  ASSERT_FALSE(request) << "accepted heads " << request->params.heads;
  EXPECT_NE(request.error().reason.find("\"heads\""), std::string::npos) << request.error().reason;
}

// fuzz_lab_request, round trip: {"temperature": 1e300} became an infinite float, which to_json writes as
// null, so the saved request no longer loaded. A number a float cannot hold is refused when read.
TEST(FuzzRegression, LabRequestRefusesATemperatureBeyondFloat) {
  const auto request = lab::lab_request_from_json(regression("lab_request", "temperature-1e300.json"), "lab.json");
  ASSERT_FALSE(request) << "accepted temperature " << request->params.temperature;
  EXPECT_EQ(request.error().kind, ErrorKind::OutOfRange);
  EXPECT_NE(request.error().reason.find("\"temperature\""), std::string::npos) << request.error().reason;
  // The largest float still loads, and saves and loads again as itself.
  const auto largest = lab::lab_request_from_json(R"({"temperature": 3.4028234663852886e38})", "lab.json");
  ASSERT_TRUE(largest) << largest.error().message();
  const auto again = lab::lab_request_from_json(lab::to_json(*largest), "saved");
  ASSERT_TRUE(again) << again.error().message();
  EXPECT_EQ(again->params, largest->params);
}

// fuzz_audio, a broken promise (2026-11-29, after 27,359 runs): a float WAV of one frame at 87,586 Hz was accepted with
// no sample at all, since one frame resampled to 16 kHz makes none. It is refused as too short, naming the figures.
TEST(FuzzRegression, AudioThatMakesNoSampleAt16kHzIsRefused) {
  const std::string bytes = regression("audio", "wav-one-frame-87586hz.wav");
  ASSERT_EQ(bytes.size(), 56u);
  const auto audio =
      audio::read_audio_bytes(std::span(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size()),
                              "wav-one-frame-87586hz.wav", std::int64_t(1) << 22);
  ASSERT_FALSE(audio) << audio->samples.size() << " samples";
  EXPECT_EQ(audio.error().kind, ErrorKind::Truncated) << audio.error().message();
  EXPECT_NE(audio.error().reason.find("make no sample at 16"), std::string::npos) << audio.error().reason;
}

}  // namespace
}  // namespace attn
