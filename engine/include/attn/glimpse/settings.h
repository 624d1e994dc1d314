// Everything that defines the two glimpses of the workbench, as one value: what the panel edits, what the
// CLI parses from `--gaussian k=v,...` / `--stn k=v,...`, and what "Export parameters" writes as JSON.
#pragma once

#include "attn/error.h"
#include "attn/glimpse/gaussian.h"
#include "attn/glimpse/stn.h"

#include <string>
#include <string_view>

namespace attn::glimpse {

// The largest STN glimpse side sampled (a 4096 x 4096 glimpse of floats is 64 MiB a channel).
inline constexpr int kMaxStnSide = 4096;

struct StnSettings {
  Family family = Family::NoShear;
  NoShear no_shear;
  Similarity similarity;
  TranslationScale translation_scale;
  Theta affine = kIdentityTheta;  // used when family == Affine
  int out_w = 64;
  int out_h = 64;
  SamplerOptions sampler;
  // The theta the family's parameters give for an image of width x height.
  Theta theta(int width, int height) const;
  // The output size as sampled: out_w and out_h each clamped to 1..kMaxStnSide.
  int output_width() const;
  int output_height() const;
  friend bool operator==(const StnSettings&, const StnSettings&) = default;
};

struct GlimpseSettings {
  GaussianGlimpse gaussian = centred_glimpse(0, 0, 12, 4, 2);
  StnSettings stn;
  bool same_window = false;  // the STN follows the Gaussian's window (stn_of) and the error is shown
  friend bool operator==(const GlimpseSettings&, const GlimpseSettings&) = default;
};

// `spec` is comma-separated key=value pairs. Gaussian keys: u, ux, uy (first centre, px), cx, cy (window
// centre, px; instead of u), d, dx, dy (stride), s, sx, sy (sigma), N, Nx, Ny, gamma; or the paper's gx~,
// gy~, logsigma2, logdelta~, loggamma (all five) with N/Nx/Ny. Unset values come from `base`; an axis given
// no position (u or c) keeps base's window centre, so "N=20" or "d=3" grows the window in place.
// A bad key, a value that is not a number, a count outside 1..kMaxFilters, a key given twice (also "u" with
// "ux", or "ux" with "cx") or a mix of the two parameterisations is an error that names the key and its
// byte offset in `spec` (Error::file = "--gaussian"; the value's offset when the value is wrong).
Result<GaussianGlimpse> parse_gaussian_spec(std::string_view spec, int width, int height,
                                            const GaussianGlimpse& base = {});
// STN keys: family=affine|no-shear|similarity|translation-scale, sx, sy, tx, ty (no-shear), scale,
// rotation (radians, or degrees with a "deg" suffix), tx, ty (similarity, translation-scale),
// theta=a;b;c;d;e;f (affine), w, h (output size, 1..4096), sampling=bilinear|nearest, padding=zeros|border.
// `family` (from the spec, else from base) decides which keys are allowed; a key of another family is an
// error that says which family to set. Errors as for parse_gaussian_spec (Error::file = "--stn").
Result<StnSettings> parse_stn_spec(std::string_view spec, const StnSettings& base = {});

// JSON (format 1): {"format": "attnscope.glimpse", "version": 1, "image": {...}, "gaussian": {...},
// "draw": {...}, "stn": {...}, "same_window": bool}. `image_*` are recorded so the file says what the
// pixel numbers refer to. "image", "draw" (the paper's form, via to_draw, with its "exact" flag) and
// "stn.theta" (the family's theta for that image) are for the file's reader; reading ignores them.
std::string to_json(const GlimpseSettings& settings, int image_width, int image_height,
                    std::string_view image_path = {});
// Strict: unknown format/version, missing or mistyped fields give an Error naming the field.
Result<GlimpseSettings> glimpse_settings_from_json(std::string_view json, std::string_view source = "settings");

}  // namespace attn::glimpse
