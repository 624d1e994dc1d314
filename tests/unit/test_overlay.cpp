// Attention over a picture (attn/vision/overlay.h): the bilinear upsampling against torch's
// F.interpolate, the tutorial's smoothing against a direct bilinear-then-Gaussian reference with scipy's
// rules, and the light-mask and colour blends on float and 8-bit pictures.
#include "attn/vision/overlay.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

namespace attn {
namespace {

Matrix grid_3x2() {
  Matrix g(3, 2);
  g << 0, 1, 2, 5, -1, 3;
  return g;
}

TEST(UpsampleBilinear, MatchesTorchInterpolate) {
  // torch.nn.functional.interpolate(g[None, None], size=(7, 5), mode="bilinear", align_corners=False)
  Matrix want(7, 5);
  want << 0.0f, 0.1f, 0.5f, 0.9f, 1.0f,                          //
      0.2857143f, 0.4142857f, 0.9285715f, 1.442857f, 1.571429f,  //
      1.142857f, 1.357143f, 2.214286f, 3.071429f, 3.285714f,     //
      2.0f, 2.3f, 3.5f, 4.7f, 5.0f,                              //
      0.7142856f, 1.057143f, 2.428571f, 3.8f, 4.142857f,         //
      -0.5714286f, -0.1857143f, 1.357143f, 2.9f, 3.285714f,      //
      -1.0f, -0.6f, 1.0f, 2.6f, 3.0f;
  const Matrix up = upsample_bilinear(grid_3x2(), 5, 7);
  ASSERT_EQ(up.rows(), 7);
  ASSERT_EQ(up.cols(), 5);
  EXPECT_LT((up - want).cwiseAbs().maxCoeff(), 1e-6f) << up;
}

TEST(UpsampleBilinear, SameSizeIsTheGridAndShrinkingSamplesCentres) {
  const Matrix g = grid_3x2();
  EXPECT_TRUE(upsample_bilinear(g, 2, 3).isApprox(g));
  // 3 -> 1 rows: the centre row; 2 -> 1 columns: the mean of both.
  const Matrix one = upsample_bilinear(g, 1, 1);
  ASSERT_EQ(one.size(), 1);
  EXPECT_FLOAT_EQ(one(0, 0), 3.5f);
  EXPECT_EQ(upsample_bilinear(Matrix(), 4, 4).size(), 0);
  EXPECT_EQ(upsample_bilinear(g, 0, 4).size(), 0);
}

// scipy.ndimage.gaussian_filter1d's rules, written out: weights exp(-x^2 / (2 sigma^2)) normalised, radius
// floor(4 sigma + 0.5), mode "reflect" (d c b a | a b c d | d c b a).
std::vector<double> gaussian_1d(const std::vector<double>& in, double sigma) {
  const int n = static_cast<int>(in.size()), radius = static_cast<int>(4.0 * sigma + 0.5);
  std::vector<double> w(static_cast<std::size_t>(2 * radius + 1));
  double total = 0.0;
  for (int k = -radius; k <= radius; ++k)
    total += w[static_cast<std::size_t>(k + radius)] = std::exp(-k * k / (2 * sigma * sigma));
  std::vector<double> out(in.size(), 0.0);
  for (int i = 0; i < n; ++i) {
    for (int k = -radius; k <= radius; ++k) {
      int j = i + k;
      while (j < 0 || j >= n) j = j < 0 ? -j - 1 : 2 * n - j - 1;
      out[static_cast<std::size_t>(i)] +=
          w[static_cast<std::size_t>(k + radius)] / total * in[static_cast<std::size_t>(j)];
    }
  }
  return out;
}

Matrix reference_smooth(const Matrix& grid, int width, int height, double sigma) {
  const Matrix up = upsample_bilinear(grid, width, height);
  Matrix out = up;
  for (int y = 0; y < height; ++y) {
    std::vector<double> row(static_cast<std::size_t>(width));
    for (int x = 0; x < width; ++x) row[static_cast<std::size_t>(x)] = out(y, x);
    row = gaussian_1d(row, sigma);
    for (int x = 0; x < width; ++x) out(y, x) = static_cast<float>(row[static_cast<std::size_t>(x)]);
  }
  for (int x = 0; x < width; ++x) {
    std::vector<double> col(static_cast<std::size_t>(height));
    for (int y = 0; y < height; ++y) col[static_cast<std::size_t>(y)] = out(y, x);
    col = gaussian_1d(col, sigma);
    for (int y = 0; y < height; ++y) out(y, x) = static_cast<float>(col[static_cast<std::size_t>(y)]);
  }
  return out;
}

TEST(UpsampleSmooth, IsBilinearThenScipysGaussian) {
  Matrix g(4, 4);
  for (int i = 0; i < 16; ++i) g(i / 4, i % 4) = static_cast<float>((i * 7) % 5) / 4.0f;
  // sigma 2.6: scipy's radius is 10, OpenCV's own choice from sigma would be 11.
  for (const auto& [w, h, sigma] : {std::tuple{40, 30, 2.6}, std::tuple{96, 96, 8.0}, std::tuple{6, 5, 4.0}}) {
    SCOPED_TRACE(std::to_string(w) + " x " + std::to_string(h) + ", sigma " + std::to_string(sigma));
    const Matrix got = upsample_smooth(g, w, h, static_cast<float>(sigma));
    const Matrix want = reference_smooth(g, w, h, sigma);
    ASSERT_EQ(got.rows(), h);
    ASSERT_EQ(got.cols(), w);
    EXPECT_LT((got - want).cwiseAbs().maxCoeff(), 1e-5f);
  }
  // The blur spreads a single hot cell: lower peak, non-zero far away, symmetric.
  Matrix hot = Matrix::Zero(3, 3);
  hot(1, 1) = 1.0f;
  const Matrix sharp = upsample_bilinear(hot, 72, 72), soft = upsample_smooth(hot, 72, 72, 8.0f);
  EXPECT_LT(soft.maxCoeff(), sharp.maxCoeff());
  EXPECT_EQ(sharp(0, 36), 0.0f);
  EXPECT_GT(soft(0, 36), 0.0f);
  EXPECT_NEAR(soft(10, 20), soft(20, 10), 1e-6f);
  EXPECT_NEAR(soft(10, 20), soft(61, 51), 1e-6f);
}

TEST(UpsampleSmooth, KeepsAConstantAndZeroSigmaIsBilinear) {
  const Matrix flat = Matrix::Constant(8, 8, 0.25f);
  const Matrix s = upsample_smooth(flat, 100, 60, 5.0f);
  EXPECT_LT((s.array() - 0.25f).abs().maxCoeff(), 1e-6f);
  const Matrix g = grid_3x2();
  EXPECT_TRUE(upsample_smooth(g, 9, 11, 0.0f).isApprox(upsample_bilinear(g, 9, 11)));
  EXPECT_FLOAT_EQ(tutorial_sigma(14, 336), 8.0f);
  EXPECT_FLOAT_EQ(tutorial_sigma(8, 512), 64.0f / 3.0f);
  EXPECT_EQ(tutorial_sigma(0, 512), 0.0f);
}

// ---------------------------------------------------------------------------------------------------------
// Blending

TEST(AlphaRange, MaxAndMinMax) {
  Matrix v(1, 3);
  v << 0.2f, 0.5f, 0.4f;
  EXPECT_EQ(alpha_range(v, AlphaScale::Max), std::pair(0.0f, 0.5f));
  EXPECT_EQ(alpha_range(v, AlphaScale::MinMax), std::pair(0.2f, 0.5f));
  EXPECT_EQ(alpha_range(Matrix::Constant(2, 2, 0.3f), AlphaScale::MinMax), std::pair(0.3f, 1.3f));
  EXPECT_EQ(alpha_range(Matrix(), AlphaScale::Max), std::pair(0.0f, 1.0f));
}

TEST(LightMask, DimsByTheScaledValue) {
  Image img(2, 1, 3, 0.8f);
  Matrix v(1, 2);
  v << 0.0f, 0.5f;  // Max scale: t = 0 and 1
  LightMask options;
  options.floor = 0.25f;
  const Image out = light_mask(img, v, options);
  EXPECT_FLOAT_EQ(out.at(0, 0, 0), 0.2f);
  EXPECT_FLOAT_EQ(out.at(2, 0, 0), 0.2f);
  EXPECT_FLOAT_EQ(out.at(1, 0, 1), 0.8f);
  // The same on 8-bit RGBX: the fourth byte is left alone.
  std::vector<std::uint8_t> px = {200, 100, 40, 7, 200, 100, 40, 7};
  ASSERT_TRUE(light_mask(PixelsU8{px.data(), 2, 1, 8, 4}, v, options));
  EXPECT_EQ(px, (std::vector<std::uint8_t>{50, 25, 10, 7, 200, 100, 40, 7}));
  // A wrong size changes nothing.
  EXPECT_FALSE(light_mask(PixelsU8{px.data(), 2, 1, 8, 4}, Matrix::Zero(2, 2), options));
  EXPECT_EQ(light_mask(img, Matrix::Zero(1, 3), options).data, img.data);
}

TEST(ColorBlend, MixesTheColourByOpacity) {
  const std::vector<std::uint32_t> black_to_white = {0xFF000000u, 0xFFFFFFFFu};
  Matrix v(1, 3);
  v << 1.0f, 2.0f, 3.0f;  // MinMax: t = 0, 0.5, 1
  ColorBlend options;
  options.colors = black_to_white;
  options.opacity = 1.0f;
  options.value_opacity = false;
  std::vector<std::uint8_t> px(9, 100);
  ASSERT_TRUE(color_blend(PixelsU8{px.data(), 3, 1, 9, 3}, v, options));
  // Nearest of two entries: t = 0.5 rounds up to white.
  EXPECT_EQ(px, (std::vector<std::uint8_t>{0, 0, 0, 255, 255, 255, 255, 255, 255}));
  // Opacity grows with t: t = 0 keeps the picture, t = 1 is 0.5 white over it.
  options.opacity = 0.5f;
  options.value_opacity = true;
  std::fill(px.begin(), px.end(), std::uint8_t{100});
  ASSERT_TRUE(color_blend(PixelsU8{px.data(), 3, 1, 9, 3}, v, options));
  EXPECT_EQ(px[0], 100);
  EXPECT_EQ(px[3], 139);  // 100 * 0.75 + 255 * 0.25 = 138.75
  EXPECT_EQ(px[6], 178);  // 100 * 0.5 + 255 * 0.5 = 177.5
  // A fixed range instead of the values' own.
  options.range = std::pair(0.0f, 6.0f);
  std::fill(px.begin(), px.end(), std::uint8_t{100});
  ASSERT_TRUE(color_blend(PixelsU8{px.data(), 3, 1, 9, 3}, v, options));
  EXPECT_EQ(px[6], 139);  // t = 0.5
  // Float pictures: a grey one becomes RGB.
  options.range.reset();
  const Image grey(3, 1, 1, 0.4f);
  const Image out = color_blend(grey, v, options);
  ASSERT_EQ(out.channels, 3);
  EXPECT_FLOAT_EQ(out.at(1, 0, 0), 0.4f);
  EXPECT_NEAR(out.at(2, 0, 2), 0.7f, 1e-6f);
  options.colors = {};
  EXPECT_FALSE(color_blend(PixelsU8{px.data(), 3, 1, 9, 3}, v, options));
}

}  // namespace
}  // namespace attn
