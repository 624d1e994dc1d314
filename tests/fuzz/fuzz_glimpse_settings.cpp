// The glimpse workbench's settings: the JSON that "Export parameters" writes and the session reloads, and
// the CLI's --gaussian and --stn specs. Input: settings JSON 0x1E gaussian spec 0x1E stn spec. What any of
// them accepts then goes where the workbench sends it: sanitise, the filterbanks, the STN sampler on a
// small image, so a value the parsers let through must not break the maths.
#include "fuzz_util.h"

#include "attn/glimpse/gaussian.h"
#include "attn/glimpse/settings.h"
#include "attn/glimpse/stn.h"
#include "attn/vision/image.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace {

using namespace attn;
using namespace attn::glimpse;

constexpr int kWidth = 24, kHeight = 16;  // the image the settings are applied to

const Image& test_image() {
  static const Image image = [] {
    Image im(kWidth, kHeight, 3);
    for (std::size_t i = 0; i < im.data.size(); ++i) im.data[i] = static_cast<float>(i % 7) / 6.0f;
    return im;
  }();
  return image;
}

void apply(const GaussianGlimpse& g) {
  const Sanitised s = sanitise(g, kWidth, kHeight);
  fuzz::require(s.glimpse.x.n >= 1 && s.glimpse.x.n <= kMaxFilters && s.glimpse.y.n >= 1 &&
                s.glimpse.y.n <= kMaxFilters);
  const FilterBank fx = make_filterbank(s.glimpse.x, kWidth);
  const FilterBank fy = make_filterbank(s.glimpse.y, kHeight);
  for (const FilterBank* f : {&fx, &fy}) {
    fuzz::require(f->begin.size() == static_cast<std::size_t>(f->n) && f->length.size() == f->begin.size());
    for (std::size_t i = 0; i < f->begin.size(); ++i) {
      fuzz::require(f->begin[i] >= 0 && f->length[i] >= 0 && f->begin[i] + f->length[i] <= f->size);
    }
  }
  (void)to_draw(s.glimpse, kWidth, kHeight);
}

void apply(const StnSettings& stn) {
  const Theta theta = stn.theta(kWidth, kHeight);
  (void)window_corners(theta, kWidth, kHeight);
  if (stn.out_w >= 1 && stn.out_h >= 1 && std::int64_t{stn.out_w} * stn.out_h <= 64 * 64) {
    const Image out = stn_glimpse(test_image(), theta, stn.out_w, stn.out_h, stn.sampler);
    fuzz::require(out.width == stn.out_w && out.height == stn.out_h);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace attn;
  using namespace attn::glimpse;
  constexpr const char* kName = "glimpse.json";
  const auto parts = fuzz::split(data, size, 3);

  if (auto settings = glimpse_settings_from_json(parts[0], kName)) {
    apply(settings->gaussian);
    apply(settings->stn);
    // What is exported must load again as the same settings.
    const std::string exported = to_json(*settings, kWidth, kHeight, "image.png");
    auto again = glimpse_settings_from_json(exported, "exported");
    fuzz::require(again.has_value() && *again == *settings);
  } else {
    fuzz::check_error(settings.error(), kName);
  }
  if (!parts[1].empty()) {
    if (auto g = parse_gaussian_spec(parts[1], kWidth, kHeight)) {
      apply(*g);
    } else {
      fuzz::check_error(g.error(), "--gaussian");
    }
  }
  if (!parts[2].empty()) {
    if (auto stn = parse_stn_spec(parts[2])) {
      apply(*stn);
    } else {
      fuzz::check_error(stn.error(), "--stn");
    }
  }
  return 0;
}
