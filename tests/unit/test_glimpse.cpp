// DRAW Gaussian glimpses, the spatial transformer, the conversion between them and previews.
#include "attn/glimpse/convert.h"
#include "attn/glimpse/gaussian.h"
#include "attn/glimpse/preview.h"
#include "attn/glimpse/stn.h"
#include "attn/random.h"
#include "test_util.h"

#include <cmath>
#include <numbers>

namespace attn::glimpse {
namespace {

Image random_image(int w, int h, int c, std::uint64_t seed) {
  Image im(w, h, c);
  SplitMix64 rng(seed);
  for (float& v : im.data) v = rng.uniform();
  return im;
}

// A smooth image (for previews, which are only close on smooth content).
Image smooth_image(int w, int h) {
  Image im(w, h, 3);
  for (int c = 0; c < 3; ++c)
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x)
        im.at(c, y, x) = 0.5f + 0.4f * static_cast<float>(std::sin(0.013 * x * (c + 1)) * std::cos(0.011 * y));
  return im;
}

double max_abs_diff(const Image& a, const Image& b) {
  EXPECT_EQ(a.width, b.width);
  EXPECT_EQ(a.height, b.height);
  EXPECT_EQ(a.channels, b.channels);
  double m = 0.0;
  for (std::size_t k = 0; k < std::min(a.data.size(), b.data.size()); ++k)
    m = std::max(m, std::abs(static_cast<double>(a.data[k]) - b.data[k]));
  return m;
}

bool all_finite(const Image& im) {
  return std::all_of(im.data.begin(), im.data.end(), [](float v) { return std::isfinite(v); });
}

TEST(GaussianFilterbank, RowsSumToOneAndPeakAtTheirCentres) {
  const GaussianAxis axis{10.0, 7.5, 2.0, 5};
  const Matrix f = dense_filterbank(axis, 64);
  ASSERT_EQ(f.rows(), 5);
  ASSERT_EQ(f.cols(), 64);
  test::expect_rows_sum_to_one(f, 1e-6f);
  Index peak = 0;
  f.row(0).maxCoeff(&peak);
  EXPECT_EQ(peak, 10);
  f.row(2).maxCoeff(&peak);
  EXPECT_EQ(peak, 25);  // 10 + 2 * 7.5
  // Symmetric about the centre: pixels 24 and 26 weigh the same in filter 2.
  EXPECT_NEAR(f(2, 24), f(2, 26), 1e-7f);
  // Hand value: exp(-1 / (2 * 4)) / Z.
  double z = 0.0;
  for (int a = 0; a < 64; ++a) z += std::exp(-(a - 10.0) * (a - 10.0) / 8.0);
  EXPECT_NEAR(f(0, 11), std::exp(-1.0 / 8.0) / (z + kFilterEps), 1e-7);
}

TEST(GaussianFilterbank, BandedEqualsDenseWithinItsOwnBound) {
  // Ordinary, tiny sigma between pixels, very wide, outside the image on either side, stride < sigma.
  const GaussianAxis axes[] = {
      {3.0, 4.0, 1.5, 12},  {2.5, 1.0, 0.05, 8}, {0.0, 10.0, 300.0, 6},
      {-40.0, 2.0, 3.0, 4}, {90.0, 3.0, 2.0, 5}, {5.0, 0.5, 6.0, 40},
  };
  for (const GaussianAxis& axis : axes) {
    SCOPED_TRACE(testing::Message() << "first " << axis.first << " sigma " << axis.sigma);
    const FilterBank fb = make_filterbank(axis, 80);
    const Matrix dense = dense_filterbank(axis, 80);
    const Matrix banded = fb.dense();
    EXPECT_LT(fb.dropped, 1e-5);
    for (Index i = 0; i < dense.rows(); ++i) {
      const double l1 = (dense.row(i) - banded.row(i)).cwiseAbs().sum();
      EXPECT_LE(l1, fb.dropped + 1e-6) << "filter " << i;
    }
  }
}

TEST(GaussianFilterbank, BandsAreNarrowForNarrowFilters) {
  const FilterBank fb = make_filterbank({100.0, 8.0, 2.0, 16}, 4096);
  for (int i = 0; i < fb.n; ++i) {
    EXPECT_LE(fb.length[static_cast<std::size_t>(i)], 2 * 12 + 1) << "filter " << i;
    EXPECT_LE(fb.begin[static_cast<std::size_t>(i)], static_cast<int>(100 + 8 * i));
  }
  // Reach sqrt(2 sigma^2 ln 1e6) = 10.51 px: ceil(100 - 10.51) = 90, floor(220 + 10.51) + 1 = 231.
  EXPECT_EQ(fb.touched_begin(), 90);
  EXPECT_EQ(fb.touched_end(), 231);
}

TEST(GaussianRead, BandedReadMatchesDenseInEveryPath) {
  const Image image = random_image(97, 83, 3, 7);
  struct Case {
    GaussianGlimpse g;
    const char* what;
  };
  const Case cases[] = {
      {centred_glimpse(48, 41, 12, 3.0, 1.2), "small window"},
      {centred_glimpse(48, 41, 8, 12.0, 0.8), "sparse filters over the whole image"},
      {centred_glimpse(48, 41, 24, 0.5, 9.0), "wide overlapping filters"},
      {centred_glimpse(48, 41, 40, 2.0, 30.0), "very wide filters"},
      {centred_glimpse(-30, 120, 6, 2.0, 3.0), "outside the image"},
      {[] {
         GaussianGlimpse g = centred_glimpse(30, 20, 5, 2.0, 1.0);
         g.x.n = 31;
         g.x.stride = 2.5;
         g.y.sigma = 4.0;
         g.gamma = 2.5;
         return g;
       }(),
       "Nx != Ny, anisotropic"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    ReadStats stats;
    const Image banded = read(image, c.g, &stats);
    const Image dense = read_dense(image, c.g);
    ASSERT_EQ(banded.width, c.g.x.n);
    ASSERT_EQ(banded.height, c.g.y.n);
    ASSERT_EQ(banded.channels, 3);
    EXPECT_LT(stats.error_bound, 1e-5);
    EXPECT_LE(max_abs_diff(banded, dense), c.g.gamma * stats.error_bound + 2e-6) << to_string(stats.path);
    EXPECT_LE(stats.macs, stats.dense_macs);
  }
}

TEST(GaussianRead, PathsAreChosenByCost) {
  const Image image = random_image(512, 512, 3, 1);
  ReadStats narrow, wide;
  read(image, centred_glimpse(256, 256, 16, 8.0, 1.0), &narrow);
  EXPECT_EQ(narrow.path, ReadPath::Banded);
  EXPECT_LT(narrow.macs * 20, narrow.dense_macs);
  read(image, centred_glimpse(256, 256, 64, 8.0, 200.0), &wide);
  EXPECT_EQ(wide.path, ReadPath::Windowed);
}

TEST(GaussianRead, ConstantImageReadsGamma) {
  Image image(64, 48, 2, 0.25f);
  const Image g = read(image, centred_glimpse(31.5, 23.5, 6, 4.0, 1.5, 2.0));
  for (float v : g.data) EXPECT_NEAR(v, 0.5f, 1e-6f);
}

TEST(GaussianRead, DegenerateParametersGiveFiniteNumbers) {
  const Image image = random_image(40, 30, 3, 3);
  GaussianGlimpse g = centred_glimpse(20, 15, 1, 0.0, 0.0);
  g.gamma = -1.0;
  const Image out = read(image, g);
  EXPECT_EQ(out.width, 1);
  EXPECT_TRUE(all_finite(out));
  g = centred_glimpse(20, 15, 4, -3.0, -2.0);
  g.x.first = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(all_finite(read(image, g)));
  // Entirely outside: DRAW's normalisation makes a filter near the image read its edge; far away reads 0.
  const Image far = read(image, centred_glimpse(-5000, -5000, 4, 1.0, 1.0));
  EXPECT_TRUE(all_finite(far));
  for (float v : far.data) EXPECT_EQ(v, 0.0f);
}

TEST(GaussianSanitise, ReportsEveryClamp) {
  GaussianGlimpse g = centred_glimpse(10, 10, 0, 0.0, -1.0, 0.0);
  g.y.first = std::numeric_limits<double>::infinity();
  const Sanitised s = sanitise(g, 100, 100);
  auto clamp_for = [&](std::string_view name) -> const Clamp* {
    for (const Clamp& c : s.clamps)
      if (c.parameter == name) return &c;
    return nullptr;
  };
  ASSERT_NE(clamp_for("x.sigma"), nullptr);
  EXPECT_EQ(clamp_for("x.sigma")->used, kMinSigma);
  EXPECT_EQ(clamp_for("x.sigma")->requested, -1.0);
  EXPECT_NE(clamp_for("x.sigma")->reason.find("at least"), std::string::npos);
  ASSERT_NE(clamp_for("x.stride"), nullptr);
  ASSERT_NE(clamp_for("x.n"), nullptr);
  EXPECT_EQ(s.glimpse.x.n, 1);
  ASSERT_NE(clamp_for("y.first"), nullptr);
  EXPECT_NE(clamp_for("y.first")->reason.find("not a number"), std::string::npos);
  ASSERT_NE(clamp_for("gamma"), nullptr);
  EXPECT_FALSE(s.outside);
  EXPECT_TRUE(sanitise(centred_glimpse(-500, 50, 4, 2, 1), 100, 100).outside);
  EXPECT_TRUE(sanitise(centred_glimpse(50, 50, 4, 2, 1), 100, 100).clamps.empty());
}

TEST(GaussianWrite, BandedWriteMatchesDenseAndIsTheTranspose) {
  const GaussianGlimpse g = centred_glimpse(30, 22, 7, 3.0, 1.5, 1.7);
  const Image patch = random_image(7, 7, 3, 11);
  const Image banded = write(patch, g, 61, 47);
  const Image dense = write_dense(patch, g, 61, 47);
  EXPECT_LT(max_abs_diff(banded, dense), 1e-6);
  // <read(I), P> = <I, write(P)> * gamma^2: the write is the read's adjoint up to the intensities.
  const Image image = random_image(61, 47, 3, 12);
  const Image r = read_dense(image, g);
  double lhs = 0.0, rhs = 0.0;
  for (std::size_t k = 0; k < r.data.size(); ++k) lhs += static_cast<double>(r.data[k]) * patch.data[k];
  for (std::size_t k = 0; k < dense.data.size(); ++k) rhs += static_cast<double>(image.data[k]) * dense.data[k];
  EXPECT_NEAR(lhs, rhs * g.gamma * g.gamma, 1e-3);
  // write_add accumulates.
  Image canvas = banded;
  write_add(canvas, patch, g);
  for (std::size_t k = 0; k < canvas.data.size(); ++k) EXPECT_NEAR(canvas.data[k], 2 * banded.data[k], 1e-6f);
}

TEST(DrawParameterisation, PaperDefaultsCoverTheWholeImageCentred) {
  DrawParams p;  // g~ = 0, delta~ = 1, sigma = 1, gamma = 1
  p.nx = 10;
  p.ny = 5;
  const GaussianGlimpse g = from_draw(p, 101, 61);
  EXPECT_DOUBLE_EQ(g.x.centre(), 50.0);
  EXPECT_DOUBLE_EQ(g.y.centre(), 30.0);
  // delta = (max(W, H) - 1) / (N - 1): the x grid spans the longer side exactly.
  EXPECT_NEAR(g.x.first, 0.0, 1e-12);
  EXPECT_NEAR(g.x.last(), 100.0, 1e-12);
  EXPECT_DOUBLE_EQ(g.y.stride, 25.0);
  EXPECT_DOUBLE_EQ(g.x.sigma, 1.0);
  // mu_i = g + (i - N/2 - 0.5) delta with 1-based i and 1-based pixels: g~x = 1 puts the centre at W + 1
  // (1-based), i.e. the engine's pixel W.
  p.gx_tilde = 1.0;
  EXPECT_DOUBLE_EQ(from_draw(p, 101, 61).x.centre(), 101.0);
}

TEST(DrawParameterisation, RoundTripsAndSaysWhenApproximate) {
  DrawParams p{0.3, -0.2, std::log(2.25), std::log(0.4), std::log(1.5), 12, 12};
  const GaussianGlimpse g = from_draw(p, 200, 150);
  const DrawFit fit = to_draw(g, 200, 150);
  EXPECT_TRUE(fit.exact);
  EXPECT_NEAR(fit.params.gx_tilde, p.gx_tilde, 1e-12);
  EXPECT_NEAR(fit.params.gy_tilde, p.gy_tilde, 1e-12);
  EXPECT_NEAR(fit.params.log_sigma2, p.log_sigma2, 1e-12);
  EXPECT_NEAR(fit.params.log_delta_tilde, p.log_delta_tilde, 1e-12);
  EXPECT_NEAR(fit.params.log_gamma, p.log_gamma, 1e-12);
  GaussianGlimpse aniso = g;
  aniso.y.sigma = 3.0;
  EXPECT_FALSE(to_draw(aniso, 200, 150).exact);
}

TEST(SpatialTransformer, IdentityReproducesTheImage) {
  const Image image = random_image(23, 17, 3, 5);
  for (Sampling s : {Sampling::Bilinear, Sampling::Nearest}) {
    const Image out = stn_glimpse(image, kIdentityTheta, 23, 17, {s, Padding::Zeros});
    EXPECT_LT(max_abs_diff(out, image), 1e-6);
  }
}

TEST(SpatialTransformer, ShiftByOnePixelAndPadding) {
  const Image image = random_image(20, 10, 1, 9);
  // tx = 2 / W moves the sample points one pixel right.
  const Theta shift{1, 0, 2.0 / 20, 0, 1, 0};
  const Image zeros = stn_glimpse(image, shift, 20, 10, {Sampling::Bilinear, Padding::Zeros});
  const Image border = stn_glimpse(image, shift, 20, 10, {Sampling::Bilinear, Padding::Border});
  for (int y = 0; y < 10; ++y) {
    for (int x = 0; x < 19; ++x) EXPECT_NEAR(zeros.at(0, y, x), image.at(0, y, x + 1), 1e-6f);
    EXPECT_EQ(zeros.at(0, y, 19), 0.0f);
    EXPECT_NEAR(border.at(0, y, 19), image.at(0, y, 19), 1e-6f);
  }
  // Half a pixel: the average of neighbours.
  const Image half = stn_glimpse(image, {1, 0, 1.0 / 20, 0, 1, 0}, 20, 10);
  EXPECT_NEAR(half.at(0, 3, 4), 0.5f * (image.at(0, 3, 4) + image.at(0, 3, 5)), 1e-6f);
}

TEST(SpatialTransformer, NearestRoundsHalfToEvenLikeTorch) {
  Image image(4, 1, 1);
  for (int x = 0; x < 4; ++x) image.at(0, 0, x) = static_cast<float>(x);
  // Output of width 4 sampling at ix = j + 0.5: nearbyint gives 0, 2, 2, 4 (4 is outside: 0).
  const Image out = stn_glimpse(image, {1, 0, 1.0 / 4, 0, 1, 0}, 4, 1, {Sampling::Nearest, Padding::Zeros});
  EXPECT_EQ(out.at(0, 0, 0), 0.0f);
  EXPECT_EQ(out.at(0, 0, 1), 2.0f);
  EXPECT_EQ(out.at(0, 0, 2), 2.0f);
  EXPECT_EQ(out.at(0, 0, 3), 0.0f);
}

TEST(SpatialTransformer, FusedEqualsGridSample) {
  const Image image = random_image(41, 29, 3, 21);
  const Theta t{0.43, 0.21, -0.3, -0.17, 0.61, 0.55};
  for (Sampling s : {Sampling::Bilinear, Sampling::Nearest})
    for (Padding p : {Padding::Zeros, Padding::Border}) {
      const Image fused = stn_glimpse(image, t, 19, 13, {s, p});
      const Image generic = grid_sample(image, affine_grid(t, 19, 13), 19, 13, {s, p});
      EXPECT_LT(max_abs_diff(fused, generic), 1e-5);
    }
}

TEST(SpatialTransformer, PackedSamplerGivesTheSameNumbers) {
  const Image image = random_image(37, 29, 3, 33);
  const PackedImage packed = pack(image);
  ASSERT_EQ(packed.channels, 3);
  const Theta thetas[] = {kIdentityTheta, {0.43, 0.21, -0.3, -0.17, 0.61, 0.55}, {1.7, -0.4, 0.9, 0.3, 1.4, -0.8}};
  for (const Theta& t : thetas)
    for (Sampling s : {Sampling::Bilinear, Sampling::Nearest})
      for (Padding p : {Padding::Zeros, Padding::Border}) {
        Image a, b;
        stn_glimpse_into(image, t, 23, 17, {s, p}, a);
        stn_glimpse_into(packed, t, 23, 17, {s, p}, b);
        EXPECT_LT(max_abs_diff(a, b), 1e-6);
      }
  EXPECT_EQ(pack(Image(4, 4, 5)).channels, 0);
}

TEST(SpatialTransformer, NonFiniteThetaGivesZeros) {
  const Image image = random_image(8, 8, 3, 2);
  const Image out = stn_glimpse(image, {std::nan(""), 0, 0, 0, 1, 0}, 4, 4);
  ASSERT_FALSE(out.empty());
  for (float v : out.data) EXPECT_EQ(v, 0.0f);
  const Image huge = stn_glimpse(image, {1e300, 0, 0, 0, 1e300, 0}, 4, 4);
  EXPECT_TRUE(all_finite(huge));
}

TEST(SpatialTransformer, FamiliesAndTheirInverses) {
  const Similarity sim{0.5, 0.3, 0.1, -0.2};
  const Theta t = theta_of(sim, 400, 300);
  const Similarity back = similarity_of(t, 400, 300);
  EXPECT_NEAR(back.scale, sim.scale, 1e-12);
  EXPECT_NEAR(back.rotation, sim.rotation, 1e-12);
  EXPECT_NEAR(back.shift_x, sim.shift_x, 1e-12);
  EXPECT_NEAR(back.shift_y, sim.shift_y, 1e-12);
  const Theta ts = theta_of(TranslationScale{0.5, 0.1, -0.2});
  const Theta unrotated = theta_of(Similarity{0.5, 0.0, 0.1, -0.2}, 400, 300);
  for (int k = 0; k < 6; ++k)
    EXPECT_NEAR(ts[static_cast<std::size_t>(k)], unrotated[static_cast<std::size_t>(k)], 1e-15);
  const NoShear ns{0.3, 0.1, 0.7, -0.4};
  EXPECT_EQ(no_shear_of(theta_of(ns)), ns);
  EXPECT_EQ(theta_of(ns)[1], 0.0);
}

TEST(SpatialTransformer, SimilarityRotatesInPixelsWithoutShear) {
  // On a 4:3 image the rotated window's sides stay perpendicular and keep the image's aspect ratio.
  const int W = 400, H = 300;
  const auto c = window_corners(theta_of(Similarity{0.5, std::numbers::pi / 6, 0, 0}, W, H), W, H);
  const double ux = c[1].x - c[0].x, uy = c[1].y - c[0].y;  // top edge
  const double vx = c[3].x - c[0].x, vy = c[3].y - c[0].y;  // left edge
  EXPECT_NEAR(ux * vx + uy * vy, 0.0, 1e-9);
  EXPECT_NEAR(std::hypot(ux, uy), 0.5 * W, 1e-9);
  EXPECT_NEAR(std::hypot(vx, vy), 0.5 * H, 1e-9);
  EXPECT_NEAR(std::atan2(uy, ux), std::numbers::pi / 6, 1e-12);
  // Unrotated identity covers the image's outer edges.
  const auto id = window_corners(kIdentityTheta, W, H);
  EXPECT_DOUBLE_EQ(id[0].x, -0.5);
  EXPECT_DOUBLE_EQ(id[0].y, -0.5);
  EXPECT_DOUBLE_EQ(id[2].x, W - 0.5);
  EXPECT_DOUBLE_EQ(id[2].y, H - 0.5);
}

TEST(Conversion, StnSamplesFallOnTheFilterCentres) {
  GaussianGlimpse g = centred_glimpse(130.25, 77.5, 9, 6.5, 2.0);
  g.y.n = 5;
  g.y.stride = 11.0;
  const int W = 320, H = 200;
  const Theta t = theta_of(stn_of(g, W, H));
  for (int i = 0; i < g.y.n; ++i)
    for (int j = 0; j < g.x.n; ++j) {
      const PixelPoint p = sample_point(t, i, j, g.x.n, g.y.n, W, H);
      EXPECT_NEAR(p.x, g.x.first + j * g.x.stride, 1e-9);
      EXPECT_NEAR(p.y, g.y.first + i * g.y.stride, 1e-9);
    }
  const GaussianGlimpse back = gaussian_of(stn_of(g, W, H), g.x.n, g.y.n, W, H, 0.25, 1.0);
  EXPECT_NEAR(back.x.first, g.x.first, 1e-9);
  EXPECT_NEAR(back.y.stride, g.y.stride, 1e-9);
  EXPECT_NEAR(back.x.sigma, 0.25 * g.x.stride, 1e-12);
}

TEST(Conversion, SameWindowGlimpsesAgreeOnSmoothImages) {
  const Image image = smooth_image(300, 200);
  const GaussianGlimpse g = centred_glimpse(150, 100, 16, 5.0, 0.3);
  const Image gaussian = read(image, g);
  const Image stn = stn_glimpse(image, theta_of(stn_of(g, 300, 200)), 16, 16);
  const GlimpseDifference d = compare(gaussian, stn);
  EXPECT_LT(d.max_abs, 2e-3);
  EXPECT_GT(d.max_abs, 0.0);
  EXPECT_LE(d.rms, d.max_abs);
  EXPECT_EQ(d.difference.width, 16);
  EXPECT_TRUE(std::isinf(compare(gaussian, Image(3, 3, 3)).max_abs));
}

TEST(Preview, PlansTheFinestAffordableLevelAndStaysClose) {
  auto base = std::make_shared<const Image>(smooth_image(1024, 1024));
  const ImagePyramid pyramid(base);
  ASSERT_GE(pyramid.levels(), 4);
  const GaussianGlimpse g = centred_glimpse(511.5, 511.5, 64, 16.0, 8.0);
  EXPECT_EQ(plan_read(g, pyramid, 1e12).level, 0);
  const ReadPlan cheap = plan_read(g, pyramid, 2e5);
  EXPECT_GT(cheap.level, 0);
  EXPECT_TRUE(cheap.preview());
  const Image exact = read(*base, g);
  const Image preview = read_planned(pyramid, g, cheap);
  ASSERT_EQ(preview.width, 64);
  ASSERT_EQ(preview.height, 64);
  EXPECT_LT(max_abs_diff(preview, exact), 0.05);
  // Level 0 of at_level is the glimpse itself.
  EXPECT_EQ(at_level(g, 0), g);
}

}  // namespace
}  // namespace attn::glimpse
