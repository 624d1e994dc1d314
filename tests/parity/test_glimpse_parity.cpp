// Glimpses against their references (tools/parity/make_glimpse_fixtures.py), within the 1e-4:
// the STN (affine_grid, grid_sample, the fused stn_glimpse / stn_glimpse_into, the families' theta) against
// torch.nn.functional.affine_grid + grid_sample in float64, and DRAW's Gaussian attention (filterbanks
// banded and dense, read, write, the paper's parameterisation) against the paper's formulas in float64.
#include "cases.h"
#include "fixture.h"

#include "attn/glimpse/gaussian.h"
#include "attn/glimpse/stn.h"
#include "attn/vision/image.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace attn::parity {
namespace {

using namespace attn::glimpse;

// The tolerance on theta itself: the fixture holds it rounded to float32 (values of order 1).
constexpr double kThetaTolerance = 1e-6;

Image image_of(const std::vector<Matrix>& planes) {
  if (planes.empty()) {
    throw FixtureError("an image tensor with no channels");
  }
  const auto h = static_cast<int>(planes.front().rows());
  const auto w = static_cast<int>(planes.front().cols());
  Image img(w, h, static_cast<int>(planes.size()));
  for (std::size_t c = 0; c < planes.size(); ++c) {
    img.channel(static_cast<int>(c)) = planes[c];
  }
  return img;
}

Image input_image(const Fixture& fx, std::string_view key) {
  return image_of(fx.input_stack(key, fx.integer("channels"), fx.integer("height"), fx.integer("width")));
}

// Every channel of `actual` against the [C, H, W] planes of `expected`.
::testing::AssertionResult image_near(const std::vector<Matrix>& expected, const Image& actual,
                                      double tol = kGlimpseTolerance) {
  if (static_cast<int>(expected.size()) != actual.channels) {
    return ::testing::AssertionFailure() << "channels: expected " << expected.size() << ", got " << actual.channels;
  }
  for (std::size_t c = 0; c < expected.size(); ++c) {
    const Matrix got = actual.channel(static_cast<int>(c));
    if (auto r = all_near(expected[c], got, tol); !r) {
      return ::testing::AssertionFailure() << "channel " << c << ": " << r.message();
    }
  }
  return ::testing::AssertionSuccess();
}

SamplerOptions sampler_of(const Fixture& fx) {
  SamplerOptions o;
  const std::string sampling = fx.text("sampling");
  const std::string padding = fx.text("padding");
  if (sampling == "bilinear") {
    o.sampling = Sampling::Bilinear;
  } else if (sampling == "nearest") {
    o.sampling = Sampling::Nearest;
  } else {
    throw FixtureError(fx.path().string() + ": unknown sampling " + sampling);
  }
  if (padding == "zeros") {
    o.padding = Padding::Zeros;
  } else if (padding == "border") {
    o.padding = Padding::Border;
  } else {
    throw FixtureError(fx.path().string() + ": unknown padding " + padding);
  }
  return o;
}

Matrix theta_matrix(const Theta& t) {
  Matrix m(2, 3);
  for (int i = 0; i < 6; ++i) {
    m(i / 3, i % 3) = static_cast<float>(t[static_cast<std::size_t>(i)]);
  }
  return m;
}

// ---------------------------------------------------------------------------------------------------
// STN

class StnParity : public ::testing::TestWithParam<std::string> {};

TEST_P(StnParity, MatchesTorch) {
  const Fixture fx = Fixture::load(GetParam());
  ASSERT_EQ(fx.kind(), "stn");
  const Image image = input_image(fx, "image");
  const int W = image.width;
  const int H = image.height;
  const int out_w = fx.integer("out_w");
  const int out_h = fx.integer("out_h");
  const SamplerOptions options = sampler_of(fx);
  const std::vector<Matrix> expected = fx.expected_stack("output", image.channels, out_h, out_w);

  // Theta: given (affine), or built by the engine from the family's parameters and checked against the
  // generator's own formula; the family's inverse must give the parameters back.
  const std::string family = fx.text("family");
  Theta theta{};
  if (family == "affine") {
    const Matrix t = fx.input("theta", 2, 3);
    for (int i = 0; i < 6; ++i) {
      theta[static_cast<std::size_t>(i)] = t(i / 3, i % 3);
    }
  } else {
    if (family == "no_shear") {
      const NoShear p{.scale_x = fx.number("scale_x"),
                      .shift_x = fx.number("shift_x"),
                      .scale_y = fx.number("scale_y"),
                      .shift_y = fx.number("shift_y")};
      theta = theta_of(p);
      const NoShear back = no_shear_of(theta);
      EXPECT_NEAR(back.scale_x, p.scale_x, 1e-9);
      EXPECT_NEAR(back.shift_x, p.shift_x, 1e-9);
      EXPECT_NEAR(back.scale_y, p.scale_y, 1e-9);
      EXPECT_NEAR(back.shift_y, p.shift_y, 1e-9);
    } else if (family == "similarity") {
      const Similarity p{.scale = fx.number("scale"),
                         .rotation = fx.number("rotation"),
                         .shift_x = fx.number("shift_x"),
                         .shift_y = fx.number("shift_y")};
      theta = theta_of(p, W, H);
      const Similarity back = similarity_of(theta, W, H);
      EXPECT_NEAR(back.scale, p.scale, 1e-9);
      EXPECT_NEAR(back.rotation, p.rotation, 1e-9);
      EXPECT_NEAR(back.shift_x, p.shift_x, 1e-9);
      EXPECT_NEAR(back.shift_y, p.shift_y, 1e-9);
    } else if (family == "translation_scale") {
      const TranslationScale p{
          .scale = fx.number("scale"), .shift_x = fx.number("shift_x"), .shift_y = fx.number("shift_y")};
      theta = theta_of(p);
      const TranslationScale back = translation_scale_of(theta);
      EXPECT_NEAR(back.scale, p.scale, 1e-9);
      EXPECT_NEAR(back.shift_x, p.shift_x, 1e-9);
      EXPECT_NEAR(back.shift_y, p.shift_y, 1e-9);
    } else {
      FAIL() << "unknown family " << family;
    }
    EXPECT_TRUE(all_near(fx.expected("theta", 2, 3), theta_matrix(theta), kThetaTolerance))
        << family << ": theta_of against the generator's formula";
  }

  // The fused path the workbench and the bench use.
  EXPECT_TRUE(image_near(expected, stn_glimpse(image, theta, out_w, out_h, options))) << "stn_glimpse";

  // stn_glimpse_into: once into an image of the wrong shape (it must resize), once more into the same image
  // holding the previous result (it must overwrite, not accumulate, and keep its buffer).
  Image kept(3, 2, 1, 7.0f);
  stn_glimpse_into(image, theta, out_w, out_h, options, kept);
  EXPECT_TRUE(image_near(expected, kept)) << "stn_glimpse_into, resized";
  const float* buffer = kept.data.data();
  stn_glimpse_into(image, theta, out_w, out_h, options, kept);
  EXPECT_TRUE(image_near(expected, kept)) << "stn_glimpse_into, reused";
  EXPECT_EQ(kept.data.data(), buffer) << "stn_glimpse_into reallocated an output of the right shape";

  // The two stages apart, as torch does them.
  const Matrix grid = affine_grid(theta, out_w, out_h);
  ASSERT_EQ(grid.rows(), static_cast<Index>(out_w) * out_h);
  ASSERT_EQ(grid.cols(), 2);
  if (fx.has_expected("grid")) {
    EXPECT_TRUE(all_near(fx.expected("grid", static_cast<Index>(out_w) * out_h, 2), grid, kGlimpseTolerance))
        << "affine_grid";
  }
  EXPECT_TRUE(image_near(expected, grid_sample(image, grid, out_w, out_h, options))) << "affine_grid + grid_sample";
}

INSTANTIATE_TEST_SUITE_P(Fixtures, StnParity, ::testing::ValuesIn(kStnCases), CaseName());

class GridSampleParity : public ::testing::TestWithParam<std::string> {};

TEST_P(GridSampleParity, MatchesTorch) {
  const Fixture fx = Fixture::load(GetParam());
  ASSERT_EQ(fx.kind(), "grid_sample");
  const Image image = input_image(fx, "image");
  const int out_w = fx.integer("out_w");
  const int out_h = fx.integer("out_h");
  const Matrix grid = fx.input("grid", static_cast<Index>(out_w) * out_h, 2);
  const std::vector<Matrix> expected = fx.expected_stack("output", image.channels, out_h, out_w);
  EXPECT_TRUE(image_near(expected, grid_sample(image, grid, out_w, out_h, sampler_of(fx)))) << "grid_sample";
}

INSTANTIATE_TEST_SUITE_P(Fixtures, GridSampleParity, ::testing::ValuesIn(kGridSampleCases), CaseName());

// ---------------------------------------------------------------------------------------------------
// DRAW

GaussianGlimpse glimpse_of(const Fixture& fx, int W, int H) {
  const std::string form = fx.text("form");
  if (form == "pixel") {
    GaussianGlimpse g;
    g.x = {.first = fx.number("ux"), .stride = fx.number("dx"), .sigma = fx.number("sx"), .n = fx.integer("nx")};
    g.y = {.first = fx.number("uy"), .stride = fx.number("dy"), .sigma = fx.number("sy"), .n = fx.integer("ny")};
    g.gamma = fx.number("gamma");
    return g;
  }
  if (form == "paper") {
    const DrawParams p{.gx_tilde = fx.number("gx_tilde"),
                       .gy_tilde = fx.number("gy_tilde"),
                       .log_sigma2 = fx.number("log_sigma2"),
                       .log_delta_tilde = fx.number("log_delta_tilde"),
                       .log_gamma = fx.number("log_gamma"),
                       .nx = fx.integer("nx"),
                       .ny = fx.integer("ny")};
    return from_draw(p, W, H);
  }
  throw FixtureError(fx.path().string() + ": unknown form " + form);
}

class DrawParity : public ::testing::TestWithParam<std::string> {};

TEST_P(DrawParity, MatchesFormulas) {
  const Fixture fx = Fixture::load(GetParam());
  ASSERT_EQ(fx.kind(), "draw");
  const Image image = input_image(fx, "image");
  const int W = image.width;
  const int H = image.height;
  const int C = image.channels;
  const int nx = fx.integer("nx");
  const int ny = fx.integer("ny");
  const GaussianGlimpse g = glimpse_of(fx, W, H);
  ASSERT_EQ(g.x.n, nx);
  ASSERT_EQ(g.y.n, ny);

  if (fx.text("form") == "paper") {
    // from_draw against the generator's 1-based computation: [x.first, x.stride, x.sigma, y.first, y.stride,
    // y.sigma, gamma] in 0-based pixels. A one-filter axis has no stride (the fixture stores 0).
    const Matrix want = fx.expected("glimpse", 1, 7);
    Matrix got(1, 7);
    got << static_cast<float>(g.x.first), static_cast<float>(nx > 1 ? g.x.stride : 0.0), static_cast<float>(g.x.sigma),
        static_cast<float>(g.y.first), static_cast<float>(ny > 1 ? g.y.stride : 0.0), static_cast<float>(g.y.sigma),
        static_cast<float>(g.gamma);
    EXPECT_TRUE(all_near(want, got, kGlimpseTolerance)) << "from_draw (first, stride, sigma per axis; gamma)";
  }

  const Matrix Fx = fx.expected("Fx", nx, W);
  const Matrix Fy = fx.expected("Fy", ny, H);
  EXPECT_TRUE(all_near(Fx, dense_filterbank(g.x, W), kGlimpseTolerance)) << "dense_filterbank x";
  EXPECT_TRUE(all_near(Fy, dense_filterbank(g.y, H), kGlimpseTolerance)) << "dense_filterbank y";
  EXPECT_TRUE(all_near(Fx, make_filterbank(g.x, W).dense(), kGlimpseTolerance)) << "make_filterbank x (banded)";
  EXPECT_TRUE(all_near(Fy, make_filterbank(g.y, H).dense(), kGlimpseTolerance)) << "make_filterbank y (banded)";

  const std::vector<Matrix> want_read = fx.expected_stack("read", C, ny, nx);
  ReadStats stats;
  EXPECT_TRUE(image_near(want_read, read(image, g, &stats))) << "read (banded or its dense fallback)";
  // gaussian.h: the banded read is exact up to error_bound * gamma * max|I|, which must be under the tolerance.
  const float max_abs = image.data.empty()
                            ? 0.0f
                            : std::abs(*std::max_element(image.data.begin(), image.data.end(),
                                                         [](float a, float b) { return std::abs(a) < std::abs(b); }));
  EXPECT_LE(stats.error_bound * g.gamma * max_abs, kGlimpseTolerance) << "ReadStats::error_bound";
  ReadWorkspace workspace;
  EXPECT_TRUE(image_near(want_read, read(image, g, nullptr, &workspace))) << "read with a workspace";
  EXPECT_TRUE(image_near(want_read, read(image, g, nullptr, &workspace))) << "read with a reused workspace";
  EXPECT_TRUE(image_near(want_read, read_dense(image, g))) << "read_dense";

  const Image patch = image_of(fx.input_stack("patch", C, ny, nx));
  const std::vector<Matrix> want_write = fx.expected_stack("write", C, H, W);
  EXPECT_TRUE(image_near(want_write, write(patch, g, W, H))) << "write";
  EXPECT_TRUE(image_near(want_write, write_dense(patch, g, W, H))) << "write_dense";
  // write_add adds onto what the canvas holds.
  Image canvas = image;
  write_add(canvas, patch, g);
  std::vector<Matrix> want_sum;
  for (int c = 0; c < C; ++c) {
    want_sum.emplace_back(want_write[static_cast<std::size_t>(c)] + Matrix(image.channel(c)));
  }
  EXPECT_TRUE(image_near(want_sum, canvas)) << "write_add onto the image";
}

INSTANTIATE_TEST_SUITE_P(Fixtures, DrawParity, ::testing::ValuesIn(kDrawCases), CaseName());

}  // namespace
}  // namespace attn::parity
