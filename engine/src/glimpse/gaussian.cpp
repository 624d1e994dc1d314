#include "attn/glimpse/gaussian.h"

#include <algorithm>
#include <cmath>
#include <charconv>
#include <limits>

namespace attn::glimpse {

namespace {

// Measured on this project's machine (tests/bench/bench_glimpse): a multiply-add inside a BLAS product
// costs about a quarter of one in the banded loops.
constexpr double kProductCostFactor = 0.25;
// Below this many multiply-adds a read stays on one thread.
constexpr double kParallelMacs = 2e5;

bool finite(double v) { return std::isfinite(v); }

// Shortest round-trip text of a number ("0.05", "1024").
std::string number(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// The axis with the limits the maths needs (no NaN, sigma and n in range). Used by every entry point so
// that even an unsanitised axis gives defined numbers.
GaussianAxis usable(GaussianAxis a) {
  const GaussianAxis defaults;
  if (!finite(a.first)) a.first = defaults.first;
  if (!finite(a.stride)) a.stride = defaults.stride;
  if (!finite(a.sigma)) a.sigma = defaults.sigma;
  a.first = std::clamp(a.first, -1e7, 1e7);
  a.stride = std::clamp(a.stride, kMinStride, 1e6);
  a.sigma = std::clamp(a.sigma, kMinSigma, 1e6);
  a.n = std::clamp(a.n, 1, kMaxFilters);
  return a;
}

double usable_gamma(double g) { return finite(g) ? std::clamp(g, kMinGamma, kMaxGamma) : 1.0; }

// Filter i's band [lo, hi] (inclusive) on an axis of `size` pixels: the pixels whose weight is at least
// `tolerance` times the largest weight inside the image.
struct Band {
  int lo = 0;
  int hi = -1;
};

Band band_of(double mu, double sigma, int size, double tolerance) {
  const double nearest = std::clamp(std::nearbyint(mu), 0.0, static_cast<double>(size - 1));
  const double d2 = (nearest - mu) * (nearest - mu);
  const double reach = std::sqrt(d2 + 2.0 * sigma * sigma * -std::log(tolerance));
  const double lo = std::max(0.0, std::ceil(mu - reach));
  const double hi = std::min(static_cast<double>(size - 1), std::floor(mu + reach));
  Band b{static_cast<int>(lo), static_cast<int>(hi)};
  // Rounding at the edge of the reach can only lose the nearest pixel when reach is ~0; keep it.
  const int n = static_cast<int>(nearest);
  b.lo = std::min(b.lo, n);
  b.hi = std::max(b.hi, n);
  return b;
}

// A bound on sum_{k>=0} exp(-(e + k)^2 / (2 s^2)) over at most `count` terms, for e > 0:
// (e + k)^2 >= e^2 + 2 e k gives a geometric series; the count gives another bound; take the smaller.
double tail_bound(double e, double sigma, int count) {
  if (count <= 0) return 0.0;
  const double s2 = sigma * sigma;
  const double first = std::exp(-e * e / (2.0 * s2));
  const double ratio = std::exp(-e / s2);
  const double geometric = ratio < 1.0 ? first / (1.0 - ratio) : std::numeric_limits<double>::infinity();
  return std::min(geometric, first * count);
}

struct Extent {
  int begin = 0;  // first touched pixel
  int end = 0;    // one past the last
  std::int64_t nonzeros = 0;
};

Extent extent_of(const GaussianAxis& axis, int size) {
  Extent e{size, 0, 0};
  for (int i = 0; i < axis.n; ++i) {
    const Band b = band_of(axis.first + i * axis.stride, axis.sigma, size, kBandTolerance);
    e.begin = std::min(e.begin, b.lo);
    e.end = std::max(e.end, b.hi + 1);
    e.nonzeros += b.hi - b.lo + 1;
  }
  return e;
}

// The cost model both read() and estimate_read() use: which path, how many multiply-adds.
struct Plan {
  ReadStats stats;
  Extent ex, ey;
};

Plan plan_of(const GaussianAxis& x, const GaussianAxis& y, int width, int height, int channels) {
  Plan p;
  p.ex = extent_of(x, width);
  p.ey = extent_of(y, height);
  const double c = channels;
  const double nx = x.n, ny = y.n;
  const double w = width, h = height;
  const double wx = p.ex.end - p.ex.begin, hy = p.ey.end - p.ey.begin;
  // Banded, columns first: a dot over each Fx band for every touched row, then sums over the Fy bands.
  const double banded = c * (hy * static_cast<double>(p.ex.nonzeros) + static_cast<double>(p.ey.nonzeros) * nx);
  // Products over the touched window, cheaper association first.
  const double windowed = c * std::min(ny * hy * wx + ny * wx * nx, hy * wx * nx + ny * hy * nx);
  p.stats.dense_macs = c * std::min(ny * h * w + ny * w * nx, h * w * nx + ny * h * nx);
  if (windowed * kProductCostFactor < banded) {
    p.stats.path = ReadPath::Windowed;
    p.stats.macs = windowed;
    p.stats.cost = windowed * kProductCostFactor;
  } else {
    p.stats.path = ReadPath::Banded;
    p.stats.macs = banded;
    p.stats.cost = banded;
  }
  return p;
}

}  // namespace

std::string_view to_string(ReadPath path) {
  switch (path) {
    case ReadPath::Banded: return "banded";
    case ReadPath::Windowed: return "windowed";
    case ReadPath::Dense: return "dense";
  }
  return "?";
}

GaussianGlimpse centred_glimpse(double cx, double cy, int n, double stride, double sigma, double gamma) {
  GaussianGlimpse g;
  g.x = {cx - 0.5 * (n - 1) * stride, stride, sigma, n};
  g.y = {cy - 0.5 * (n - 1) * stride, stride, sigma, n};
  g.gamma = gamma;
  return g;
}

GaussianGlimpse from_draw(const DrawParams& p, int width, int height) {
  const double longest = std::max(width, height) - 1.0;
  // The paper's g is 1-based; the engine's pixel a is the paper's a + 1.
  const double gx = (width + 1.0) / 2.0 * (p.gx_tilde + 1.0) - 1.0;
  const double gy = (height + 1.0) / 2.0 * (p.gy_tilde + 1.0) - 1.0;
  const double sigma = std::sqrt(std::exp(p.log_sigma2));
  const double delta_tilde = std::exp(p.log_delta_tilde);
  auto axis = [&](double g, int n) {
    const double stride = longest / std::max(n - 1, 1) * delta_tilde;
    // mu_i = g + (i - N/2 - 0.5) delta for i = 1..N: the first is g - (N - 1) / 2 delta.
    return GaussianAxis{g - 0.5 * (n - 1) * stride, stride, sigma, n};
  };
  return {axis(gx, p.nx), axis(gy, p.ny), std::exp(p.log_gamma)};
}

DrawFit to_draw(const GaussianGlimpse& g, int width, int height) {
  const double longest = std::max(width, height) - 1.0;
  DrawFit fit;
  DrawParams& p = fit.params;
  p.nx = g.x.n;
  p.ny = g.y.n;
  p.gx_tilde = 2.0 * (g.x.centre() + 1.0) / (width + 1.0) - 1.0;
  p.gy_tilde = 2.0 * (g.y.centre() + 1.0) / (height + 1.0) - 1.0;
  p.log_sigma2 = std::log(g.x.sigma * g.x.sigma);
  auto delta_tilde = [&](const GaussianAxis& a) { return a.stride * std::max(a.n - 1, 1) / std::max(longest, 1.0); };
  p.log_delta_tilde = std::log(delta_tilde(g.x));
  p.log_gamma = std::log(g.gamma);
  auto same = [](double a, double b) { return std::abs(a - b) <= 1e-9 * std::max({1.0, std::abs(a), std::abs(b)}); };
  fit.exact = same(g.x.sigma, g.y.sigma) && (g.x.n == 1 || g.y.n == 1 || same(delta_tilde(g.x), delta_tilde(g.y)));
  return fit;
}

Sanitised sanitise(const GaussianGlimpse& in, int width, int height) {
  Sanitised out;
  out.glimpse = in;
  const GaussianAxis defaults;
  auto clamp_value = [&](double& v, const std::string& name, double lo, double hi, double fallback,
                         const std::string& unit) {
    if (!finite(v)) {
      out.clamps.push_back({name, v, fallback, name + " is not a number; using " + number(fallback)});
      v = fallback;
    } else if (v < lo) {
      out.clamps.push_back({name, v, lo, name + " must be at least " + number(lo) + unit});
      v = lo;
    } else if (v > hi) {
      out.clamps.push_back({name, v, hi, name + " must be at most " + number(hi) + unit});
      v = hi;
    }
  };
  auto axis = [&](GaussianAxis& a, const std::string& name, int size) {
    clamp_value(a.first, name + ".first", -1e7, 1e7, defaults.first, " px");
    clamp_value(a.stride, name + ".stride", kMinStride, 1e6, defaults.stride, " px");
    clamp_value(a.sigma, name + ".sigma", kMinSigma, 1e6, defaults.sigma, " px");
    if (a.n < 1 || a.n > kMaxFilters) {
      const int used = std::clamp(a.n, 1, kMaxFilters);
      out.clamps.push_back({name + ".n", static_cast<double>(a.n), static_cast<double>(used),
                            name + ".n must be between 1 and " + number(kMaxFilters)});
      a.n = used;
    }
    const double lo = a.first - 3.0 * a.sigma, hi = a.last() + 3.0 * a.sigma;
    if (hi < -0.5 || lo > size - 0.5) out.outside = true;
  };
  axis(out.glimpse.x, "x", width);
  axis(out.glimpse.y, "y", height);
  clamp_value(out.glimpse.gamma, "gamma", kMinGamma, kMaxGamma, 1.0, "");
  return out;
}

float FilterBank::at(int i, int a) const {
  const int k = a - begin[static_cast<std::size_t>(i)];
  if (k < 0 || k >= length[static_cast<std::size_t>(i)]) return 0.0f;
  return values[static_cast<std::size_t>(offset[static_cast<std::size_t>(i)] + k)];
}

int FilterBank::touched_begin() const {
  int lo = size;
  for (int i = 0; i < n; ++i) lo = std::min(lo, begin[static_cast<std::size_t>(i)]);
  return lo;
}

int FilterBank::touched_end() const {
  int hi = 0;
  for (int i = 0; i < n; ++i)
    hi = std::max(hi, begin[static_cast<std::size_t>(i)] + length[static_cast<std::size_t>(i)]);
  return hi;
}

Matrix FilterBank::dense() const {
  Matrix m = Matrix::Zero(n, size);
  for (int i = 0; i < n; ++i) {
    const auto ui = static_cast<std::size_t>(i);
    for (int k = 0; k < length[ui]; ++k) m(i, begin[ui] + k) = values[static_cast<std::size_t>(offset[ui] + k)];
  }
  return m;
}

Matrix dense_filterbank(const GaussianAxis& raw, int size) {
  const GaussianAxis axis = usable(raw);
  Matrix m(axis.n, std::max(size, 0));
  const double inv = 1.0 / (2.0 * axis.sigma * axis.sigma);
  std::vector<double> w(static_cast<std::size_t>(std::max(size, 0)));
  for (int i = 0; i < axis.n; ++i) {
    const double mu = axis.first + i * axis.stride;
    double z = 0.0;
    for (int a = 0; a < size; ++a) {
      const double d = a - mu;
      w[static_cast<std::size_t>(a)] = std::exp(-d * d * inv);
      z += w[static_cast<std::size_t>(a)];
    }
    const double scale = 1.0 / (z + kFilterEps);
    for (int a = 0; a < size; ++a) m(i, a) = static_cast<float>(w[static_cast<std::size_t>(a)] * scale);
  }
  return m;
}

FilterBank make_filterbank(const GaussianAxis& raw, int size, double tolerance) {
  const GaussianAxis axis = usable(raw);
  FilterBank fb;
  fb.n = axis.n;
  fb.size = std::max(size, 0);
  fb.begin.resize(static_cast<std::size_t>(axis.n));
  fb.length.resize(static_cast<std::size_t>(axis.n));
  fb.offset.resize(static_cast<std::size_t>(axis.n));
  if (size <= 0) {
    std::fill(fb.length.begin(), fb.length.end(), 0);
    return fb;
  }
  tolerance = std::clamp(tolerance, 1e-30, 0.5);
  const double inv = 1.0 / (2.0 * axis.sigma * axis.sigma);
  std::vector<double> w;
  for (int i = 0; i < axis.n; ++i) {
    const auto ui = static_cast<std::size_t>(i);
    const double mu = axis.first + i * axis.stride;
    const Band b = band_of(mu, axis.sigma, size, tolerance);
    const int len = b.hi - b.lo + 1;
    w.resize(static_cast<std::size_t>(len));
    // exp(-(a - mu)^2 / (2 s^2)) by the Gaussian's recurrence outward from the pixel nearest the centre:
    // the ratio of neighbours is itself geometric, so each pixel costs two multiplications instead of an
    // exp (a wide filter over a 4096-pixel axis has 4096 of them). In double the drift after k steps is
    // about k ulps, far below the float the values are stored in.
    const int a0 =
        static_cast<int>(std::clamp(std::nearbyint(mu), static_cast<double>(b.lo), static_cast<double>(b.hi)));
    const double c = std::exp(-2.0 * inv);
    {
      const double d = a0 - mu;
      double v = std::exp(-d * d * inv);
      w[static_cast<std::size_t>(a0 - b.lo)] = v;
      double r = std::exp(-(2.0 * d + 1.0) * inv);
      for (int a = a0 + 1; a <= b.hi; ++a, r *= c) w[static_cast<std::size_t>(a - b.lo)] = v *= r;
      v = w[static_cast<std::size_t>(a0 - b.lo)];
      r = std::exp((2.0 * d - 1.0) * inv);
      for (int a = a0 - 1; a >= b.lo; --a, r *= c) w[static_cast<std::size_t>(a - b.lo)] = v *= r;
    }
    double z = 0.0;
    for (int k = 0; k < len; ++k) z += w[static_cast<std::size_t>(k)];
    // The dense filter divides by the full sum, which also holds the dropped tails.
    const double tails =
        tail_bound(mu - (b.lo - 1), axis.sigma, b.lo) + tail_bound((b.hi + 1) - mu, axis.sigma, size - 1 - b.hi);
    // L1 distance between this row and the dense row: the dropped mass plus the renormalisation.
    fb.dropped = std::max(fb.dropped, 2.0 * tails / (z + kFilterEps));
    fb.begin[ui] = b.lo;
    fb.length[ui] = len;
    fb.offset[ui] = static_cast<int>(fb.values.size());
    const double scale = 1.0 / (z + kFilterEps);
    for (int k = 0; k < len; ++k) fb.values.push_back(static_cast<float>(w[static_cast<std::size_t>(k)] * scale));
  }
  return fb;
}

ReadStats estimate_read(const GaussianGlimpse& raw, int width, int height, int channels) {
  if (width <= 0 || height <= 0 || channels <= 0) return {};
  return plan_of(usable(raw.x), usable(raw.y), width, height, channels).stats;
}

namespace {

inline void axpy(float alpha, const float* x, float* y, int n) {
#pragma omp simd
  for (int k = 0; k < n; ++k) y[k] += alpha * x[k];
}

// The banded read, columns first: T[c][y - y0][j] = sum over Fx_j's band of I[c][y][x] for the touched
// rows [y0, y1), then out[c][i] = gamma * sum over Fy_i's band of T[c][y]. The first pass reads every
// image row once, contiguously, and takes four rows per pass over a filter's weights, so each weight load
// feeds four multiply-adds; the second pass works on the small T.
// (Measured against rows-first variants, which stream image rows through an accumulator per filter or
// use register or BLAS blocks over several filters: this was 1.1-3.8x faster on every benchmark window,
// because those re-read each image row once per overlapping filter.)
void read_banded(const Image& image, const FilterBank& fx, const FilterBank& fy, float gamma, std::vector<float>& temp,
                 Image& out, bool parallel) {
  const int y0 = fy.touched_begin(), y1 = fy.touched_end();
  const int hy = y1 - y0;
  const int C = image.channels, NY = fy.n, NX = fx.n;
  if (hy <= 0) {
    std::fill(out.data.begin(), out.data.end(), 0.0f);
    return;
  }
  temp.resize(static_cast<std::size_t>(C) * hy * NX);
  const int groups = (hy + 3) / 4;
  const std::size_t width = static_cast<std::size_t>(image.width);
#pragma omp parallel for collapse(2) schedule(static) if (parallel)
  for (int c = 0; c < C; ++c) {
    for (int q = 0; q < groups; ++q) {
      const int ya = y0 + 4 * q;
      const int rows = std::min(4, y1 - ya);
      const float* r0 = image.plane(c) + static_cast<std::size_t>(ya) * width;
      // A short last group reads row 0 of the group again instead of rows past the touched range.
      const float* r1 = rows > 1 ? r0 + width : r0;
      const float* r2 = rows > 2 ? r0 + 2 * width : r0;
      const float* r3 = rows > 3 ? r0 + 3 * width : r0;
      float* t = temp.data() + (static_cast<std::size_t>(c) * hy + static_cast<std::size_t>(ya - y0)) * NX;
      for (int j = 0; j < NX; ++j) {
        const auto uj = static_cast<std::size_t>(j);
        const float* f = fx.values.data() + fx.offset[uj];
        const int b = fx.begin[uj], n = fx.length[uj];
        float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
#pragma omp simd reduction(+ : s0, s1, s2, s3)
        for (int k = 0; k < n; ++k) {
          const float w = f[k];
          s0 += w * r0[b + k];
          s1 += w * r1[b + k];
          s2 += w * r2[b + k];
          s3 += w * r3[b + k];
        }
        const float sums[4] = {s0, s1, s2, s3};
        for (int r = 0; r < rows; ++r) t[static_cast<std::size_t>(r) * NX + uj] = sums[r];
      }
    }
  }
#pragma omp parallel for collapse(2) schedule(static) if (parallel)
  for (int c = 0; c < C; ++c) {
    for (int i = 0; i < NY; ++i) {
      const auto ui = static_cast<std::size_t>(i);
      float* o = out.plane(c) + ui * NX;
      std::fill(o, o + NX, 0.0f);
      const float* f = fy.values.data() + fy.offset[ui];
      for (int k = 0; k < fy.length[ui]; ++k) {
        const float* t =
            temp.data() + (static_cast<std::size_t>(c) * hy + static_cast<std::size_t>(fy.begin[ui] + k - y0)) * NX;
        axpy(gamma * f[k], t, o, NX);
      }
    }
  }
}

// Dense products over the touched window [y0, y1) x [x0, x1) with the banded filters written densely.
void read_windowed(const Image& image, const FilterBank& fx, const FilterBank& fy, const Extent& ex, const Extent& ey,
                   float gamma, Image& out) {
  const int wx = ex.end - ex.begin, hy = ey.end - ey.begin;
  Matrix Fx = Matrix::Zero(fx.n, std::max(wx, 0));
  Matrix Fy = Matrix::Zero(fy.n, std::max(hy, 0));
  for (int j = 0; j < fx.n; ++j)
    for (int k = 0; k < fx.length[static_cast<std::size_t>(j)]; ++k)
      Fx(j, fx.begin[static_cast<std::size_t>(j)] - ex.begin + k) =
          fx.values[static_cast<std::size_t>(fx.offset[static_cast<std::size_t>(j)] + k)];
  for (int i = 0; i < fy.n; ++i)
    for (int k = 0; k < fy.length[static_cast<std::size_t>(i)]; ++k)
      Fy(i, fy.begin[static_cast<std::size_t>(i)] - ey.begin + k) =
          fy.values[static_cast<std::size_t>(fy.offset[static_cast<std::size_t>(i)] + k)];
  if (wx <= 0 || hy <= 0) {
    std::fill(out.data.begin(), out.data.end(), 0.0f);
    return;
  }
  const double ny = fy.n, nx = fx.n;
  const bool rows_first = ny * hy * wx + ny * wx * nx <= hy * wx * nx + ny * hy * nx;
  auto product = [&](const auto& window, Eigen::Map<Matrix> o) {
    if (rows_first) {
      Matrix t = Fy * window;
      o.noalias() = gamma * (t * Fx.transpose());
    } else {
      Matrix t = window * Fx.transpose();
      o.noalias() = gamma * (Fy * t);
    }
  };
  for (int c = 0; c < image.channels; ++c) {
    const float* first = image.plane(c) + static_cast<std::size_t>(ey.begin) * image.width + ex.begin;
    if (wx == image.width) {
      // Whole rows: a plain matrix, which Eigen hands to BLAS as it does for read_dense.
      product(Eigen::Map<const Matrix>(first, hy, wx), out.channel(c));
    } else {
      product(Eigen::Map<const Matrix, 0, Eigen::OuterStride<>>(first, hy, wx, Eigen::OuterStride<>(image.width)),
              out.channel(c));
    }
  }
}

}  // namespace

Image read(const Image& image, const GaussianGlimpse& raw, ReadStats* stats, ReadWorkspace* workspace) {
  const GaussianAxis ax = usable(raw.x), ay = usable(raw.y);
  const auto gamma = static_cast<float>(usable_gamma(raw.gamma));
  Image out(ax.n, ay.n, std::max(image.channels, 0), 0.0f);
  if (image.empty()) {
    if (stats) *stats = {};
    return out;
  }
  ReadWorkspace local;
  ReadWorkspace& ws = workspace ? *workspace : local;
  const Plan plan = plan_of(ax, ay, image.width, image.height, image.channels);
  ws.fx = make_filterbank(ax, image.width);
  ws.fy = make_filterbank(ay, image.height);
  const bool parallel = plan.stats.macs > kParallelMacs;
  if (plan.stats.path == ReadPath::Windowed) {
    read_windowed(image, ws.fx, ws.fy, plan.ex, plan.ey, gamma, out);
  } else {
    read_banded(image, ws.fx, ws.fy, gamma, ws.temp, out, parallel);
  }
  if (stats) {
    *stats = plan.stats;
    stats->error_bound = ws.fx.dropped + ws.fy.dropped + ws.fx.dropped * ws.fy.dropped;
  }
  return out;
}

Image read_dense(const Image& image, const GaussianGlimpse& raw) {
  const GaussianAxis ax = usable(raw.x), ay = usable(raw.y);
  const auto gamma = static_cast<float>(usable_gamma(raw.gamma));
  Image out(ax.n, ay.n, std::max(image.channels, 0), 0.0f);
  if (image.empty()) return out;
  const Matrix Fx = dense_filterbank(ax, image.width);
  const Matrix Fy = dense_filterbank(ay, image.height);
  for (int c = 0; c < image.channels; ++c) {
    Matrix t = Fy * image.channel(c);
    out.channel(c).noalias() = gamma * (t * Fx.transpose());
  }
  return out;
}

void write_add(Image& canvas, const Image& patch, const GaussianGlimpse& raw) {
  if (canvas.empty() || patch.empty()) return;
  const GaussianAxis ax = usable(raw.x), ay = usable(raw.y);
  if (patch.width != ax.n || patch.height != ay.n || patch.channels != canvas.channels) return;
  const auto inv_gamma = static_cast<float>(1.0 / usable_gamma(raw.gamma));
  const FilterBank fx = make_filterbank(ax, canvas.width);
  const FilterBank fy = make_filterbank(ay, canvas.height);
  const int x0 = fx.touched_begin(), x1 = fx.touched_end();
  const int wx = x1 - x0;
  if (wx <= 0) return;
  const int C = canvas.channels, NY = ay.n, NX = ax.n;
#pragma omp parallel for schedule(static) if (static_cast<double>(C) * NY * canvas.width > kParallelMacs)
  for (int c = 0; c < C; ++c) {
    // U[i][x] = sum_j P[i][j] Fx[j][x] over the touched columns.
    std::vector<float> u(static_cast<std::size_t>(NY) * wx, 0.0f);
    for (int i = 0; i < NY; ++i) {
      float* urow = u.data() + static_cast<std::size_t>(i) * wx;
      const float* p = patch.plane(c) + static_cast<std::size_t>(i) * NX;
      for (int j = 0; j < NX; ++j) {
        const auto uj = static_cast<std::size_t>(j);
        axpy(p[j] * inv_gamma, fx.values.data() + fx.offset[uj], urow + (fx.begin[uj] - x0), fx.length[uj]);
      }
    }
    // canvas[y][x] += sum_i Fy[i][y] U[i][x].
    for (int i = 0; i < NY; ++i) {
      const auto ui = static_cast<std::size_t>(i);
      const float* urow = u.data() + static_cast<std::size_t>(i) * wx;
      const float* f = fy.values.data() + fy.offset[ui];
      for (int k = 0; k < fy.length[ui]; ++k) {
        float* row = canvas.plane(c) + static_cast<std::size_t>(fy.begin[ui] + k) * canvas.width + x0;
        axpy(f[k], urow, row, wx);
      }
    }
  }
}

Image write(const Image& patch, const GaussianGlimpse& glimpse, int width, int height) {
  Image canvas(std::max(width, 0), std::max(height, 0), std::max(patch.channels, 0), 0.0f);
  write_add(canvas, patch, glimpse);
  return canvas;
}

Image write_dense(const Image& patch, const GaussianGlimpse& raw, int width, int height) {
  const GaussianAxis ax = usable(raw.x), ay = usable(raw.y);
  Image canvas(std::max(width, 0), std::max(height, 0), std::max(patch.channels, 0), 0.0f);
  if (canvas.empty() || patch.width != ax.n || patch.height != ay.n) return canvas;
  const Matrix Fx = dense_filterbank(ax, width);
  const Matrix Fy = dense_filterbank(ay, height);
  const auto inv_gamma = static_cast<float>(1.0 / usable_gamma(raw.gamma));
  for (int c = 0; c < patch.channels; ++c) {
    Matrix t = Fy.transpose() * patch.channel(c);
    canvas.channel(c).noalias() = inv_gamma * (t * Fx);
  }
  return canvas;
}

}  // namespace attn::glimpse
