// The soft mask, the crop and the matrix form of a Gaussian glimpse's window (attn/glimpse/window_forms.h):
// the window's pixels, the soft window's values, the limit where the mask is the crop, and the matrix form
// equal to the dense read.
#include "attn/glimpse/window_forms.h"

#include <gtest/gtest.h>

#include <cmath>

namespace attn::glimpse {
// Named, not anonymous: the unity builds compile several test files as one.
namespace window_forms_tests {

// A 3-channel image whose every pixel differs: I[c](y, x) = c + 0.01 y + 0.0001 x.
Image ramp(int width, int height) {
  Image image(width, height, 3);
  for (int c = 0; c < 3; ++c) {
    for (int y = 0; y < height; ++y) {
      for (int x = 0; x < width; ++x) image.at(c, y, x) = float(c) + 0.01f * float(y) + 0.0001f * float(x);
    }
  }
  return image;
}

TEST(WindowForms, TheWindowIsTheCellsOfTheFilters) {
  // Centre (50, 40), 4 x 4 filters, stride 10: centres 35..65 and 25..55; cells [30, 70) and [20, 60).
  const auto g = centred_glimpse(50.0, 40.0, 4, 10.0, 1.0);
  EXPECT_EQ(window_box(g, 100, 80), (WindowBox{30, 20, 40, 40}));
  // Half outside on the left and the top: clipped to the image.
  EXPECT_EQ(window_box(centred_glimpse(5.0, 5.0, 4, 10.0, 1.0), 100, 80), (WindowBox{0, 0, 25, 25}));
  // Wholly outside: empty.
  EXPECT_TRUE(window_box(centred_glimpse(500.0, 40.0, 4, 10.0, 1.0), 100, 80).empty());
}

TEST(WindowForms, TheSoftWindowIsTheIndicatorBlurredBySigma) {
  GaussianAxis axis{.first = 35.3, .stride = 10.0, .sigma = 2.0, .n = 4};  // window [30.3, 70.3)
  const Vector a = soft_window(axis, 100);
  ASSERT_EQ(a.size(), 100);
  const auto phi = [](double u) { return 0.5 * (1.0 + std::erf(u / std::sqrt(2.0))); };
  for (int p : {0, 29, 30, 31, 50, 70, 71, 99}) {
    EXPECT_NEAR(a(p), phi((p - 30.3) / 2.0) - phi((p - 70.3) / 2.0), 1e-6) << "pixel " << p;
  }
  EXPECT_NEAR(a(50), 1.0f, 1e-6f);
  EXPECT_LT(a(20), 1e-5f);
}

TEST(WindowForms, WithATinySigmaTheMaskedImageIsTheCrop) {
  const Image image = ramp(100, 80);
  const auto g = centred_glimpse(50.3, 40.3, 4, 10.0, kMinSigma);  // windows [30.3, 70.3) and [20.3, 60.3)
  const WindowForms f = window_forms(image, g);
  EXPECT_EQ(f.box, (WindowBox{31, 21, 40, 40}));
  ASSERT_EQ(f.crop.width, 40);
  ASSERT_EQ(f.crop.height, 40);
  ASSERT_EQ(f.masked.width, 100);
  ASSERT_EQ(f.masked.height, 80);
  for (int c = 0; c < 3; ++c) {
    for (int y = 0; y < 80; ++y) {
      for (int x = 0; x < 100; ++x) {
        const bool inside = x >= 31 && x < 71 && y >= 21 && y < 61;
        const float expected = inside ? image.at(c, y, x) : 0.0f;
        ASSERT_NEAR(f.masked.at(c, y, x), expected, 1e-6f) << c << " " << y << " " << x;
        if (inside) {
          ASSERT_EQ(f.crop.at(c, y - 21, x - 31), image.at(c, y, x));
        }
      }
    }
  }
}

TEST(WindowForms, TheMaskIsAnOuterProductAndTheMatrixFormTheDenseRead) {
  const Image image = ramp(64, 48);
  const auto g = centred_glimpse(30.0, 20.0, 6, 4.0, 3.0, 1.5);
  const WindowForms f = window_forms(image, g);
  ASSERT_EQ(f.mask.channels, 1);
  for (int y : {0, 10, 20, 47}) {
    for (int x : {0, 15, 30, 63}) {
      EXPECT_NEAR(f.mask.at(0, y, x), f.a_y(y) * f.a_x(x), 1e-7f);
      EXPECT_NEAR(f.masked.at(2, y, x), f.a_y(y) * f.a_x(x) * image.at(2, y, x), 1e-6f);
    }
  }
  const Image dense = read_dense(image, g);
  ASSERT_EQ(f.matrix.width, 6);
  ASSERT_EQ(f.matrix.height, 6);
  for (std::size_t i = 0; i < dense.data.size(); ++i) EXPECT_EQ(f.matrix.data[i], dense.data[i]);
  EXPECT_EQ(f.mask_mults, 64.0 * 48 * 4);
  EXPECT_EQ(f.matrix_mults, 3.0 * (6.0 * 48 * 64 + 6.0 * 64 * 6));
  EXPECT_GE(f.mask_ms, 0.0);
  EXPECT_GE(f.crop_ms, 0.0);
  EXPECT_GE(f.matrix_ms, 0.0);
  // An empty image gives empty forms.
  EXPECT_TRUE(window_forms(Image{}, g).masked.empty());
}

}  // namespace window_forms_tests
}  // namespace attn::glimpse
