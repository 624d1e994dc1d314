#include "cli/glimpse_cli.h"
#include "render/strings.h"

#include "attn/glimpse/resolve.h"
#include "attn/glimpse/settings.h"
#include "render/figure_export.h"

#include <QFile>
#include <QFileInfo>

#include <algorithm>
#include <filesystem>

using namespace Qt::StringLiterals;

namespace attn::ui {
namespace {

namespace g = attn::glimpse;

RenderFailure failure(RenderFailure::Kind kind, const QString& message) { return {kind, message}; }
bool savableExtension(const QString& path) {
  static const QStringList kExtensions{u"png"_s, u"jpg"_s, u"jpeg"_s, u"bmp"_s, u"tif"_s, u"tiff"_s, u"webp"_s};
  return kExtensions.contains(QFileInfo(path).suffix().toLower());
}

QString number(double v) { return QString::number(v, 'g', 4); }

}  // namespace

g::GaussianGlimpse defaultGaussianFor(int width, int height) {
  constexpr int n = 12;
  const double stride = std::max(g::kMinStride, 0.5 * std::min(width, height) / n);
  return g::centred_glimpse(0.5 * (width - 1), 0.5 * (height - 1), n, stride, 0.5 * stride);
}

int defaultMagnification(int width, int height, int minSide) {
  const int longer = std::max({width, height, 1});
  return std::max(1, (minSide + longer - 1) / longer);
}

attn::Image magnify(const attn::Image& image, int factor) {
  if (factor <= 1 || image.empty()) return image;
  attn::Image out(image.width * factor, image.height * factor, image.channels);
  for (int c = 0; c < image.channels; ++c) {
    for (int y = 0; y < out.height; ++y) {
      const float* src = image.plane(c) + static_cast<std::size_t>(y / factor) * static_cast<std::size_t>(image.width);
      float* dst = out.plane(c) + static_cast<std::size_t>(y) * static_cast<std::size_t>(out.width);
      for (int x = 0; x < out.width; ++x) dst[x] = src[x / factor];
    }
  }
  return out;
}

std::expected<GlimpseReport, RenderFailure> renderGlimpse(const GlimpseJob& job) {
  // The cheap checks first: a typo in --out should not wait for a large photo to decode.
  if (!savableExtension(job.outPath)) {
    return std::unexpected(
        failure(RenderFailure::Kind::Usage,
                QObject::tr("--out %1: use a .png, .jpg, .bmp, .tif or .webp file name").arg(job.outPath)));
  }
  auto image = attn::load_image(toPath(job.imagePath));
  if (!image) return std::unexpected(inputFailure(image.error()));
  const int w = image->width, h = image->height;

  GlimpseReport report;
  g::GlimpseSettings settings;
  settings.gaussian = defaultGaussianFor(w, h);
  attn::Image glimpse;
  QString what;
  if (job.kind == GlimpseJob::Kind::Gaussian) {
    const auto parsed = g::parse_gaussian_spec(job.spec, w, h, settings.gaussian);
    if (!parsed) return std::unexpected(inputFailure(parsed.error()));
    settings.gaussian = *parsed;
    const g::Sanitised checked = g::resolve(settings, w, h).gaussian;
    for (const g::Clamp& clamp : checked.clamps) {
      report.notes.append(QObject::tr("%1: %2 -> %3 (%4)")
                              .arg(QString::fromStdString(clamp.parameter), number(clamp.requested), number(clamp.used),
                                   QString::fromStdString(clamp.reason)));
    }
    if (checked.outside) {
      report.notes.append(QObject::tr("the window lies outside the image; DRAW's normalisation reads its edge pixels"));
    }
    glimpse = g::read(*image, checked.glimpse);
    const g::GaussianGlimpse& used = checked.glimpse;
    what = QObject::tr("Gaussian %1 x %2, centre (%3, %4), stride %5 x %6 px, sigma %7 x %8 px, gamma %9")
               .arg(used.x.n)
               .arg(used.y.n)
               .arg(number(used.x.centre()), number(used.y.centre()), number(used.x.stride), number(used.y.stride),
                    number(used.x.sigma), number(used.y.sigma), number(used.gamma));
  } else {
    const auto parsed = g::parse_stn_spec(job.spec, settings.stn);
    if (!parsed) return std::unexpected(inputFailure(parsed.error()));
    settings.stn = *parsed;
    const g::ResolvedGlimpse geometry = g::resolve(settings, w, h);
    const g::Theta& theta = geometry.stn_theta;
    if (geometry.stn_theta_replaced) {
      report.notes.append(QObject::tr("the family's theta is not finite; the identity is sampled"));
    }
    glimpse = g::stn_glimpse(*image, theta, geometry.stn_width, geometry.stn_height, parsed->sampler);
    what =
        QObject::tr("STN %1 %2 x %3, theta [%4 %5 %6; %7 %8 %9]")
            .arg(QString::fromUtf8(g::to_string(parsed->family).data(), qsizetype(g::to_string(parsed->family).size())))
            .arg(geometry.stn_width)
            .arg(geometry.stn_height)
            .arg(number(theta[0]), number(theta[1]), number(theta[2]), number(theta[3]), number(theta[4]),
                 number(theta[5]));
  }
  if (glimpse.empty()) {
    return std::unexpected(failure(RenderFailure::Kind::Input, QObject::tr("the glimpse is empty")));
  }

  const int factor = job.scale > 0 ? job.scale : defaultMagnification(glimpse.width, glimpse.height);
  const std::int64_t bigW = std::int64_t(glimpse.width) * factor, bigH = std::int64_t(glimpse.height) * factor;
  if (bigW > kMaxMagnifiedSide || bigH > kMaxMagnifiedSide || bigW * bigH > kMaxMagnifiedPixels) {
    return std::unexpected(failure(RenderFailure::Kind::Usage,
                                   QObject::tr("--scale %1: the %2 x %3 glimpse would become %4 x %5 pixels; the limit "
                                               "is %6 a side and %7 pixels")
                                       .arg(factor)
                                       .arg(glimpse.width)
                                       .arg(glimpse.height)
                                       .arg(bigW)
                                       .arg(bigH)
                                       .arg(kMaxMagnifiedSide)
                                       .arg(kMaxMagnifiedPixels)));
  }
  const attn::Image big = magnify(glimpse, factor);
  if (auto saved = attn::save_image(big, toPath(job.outPath)); !saved) {
    return std::unexpected(engineFailure(RenderFailure::Kind::Output, saved.error()));
  }
  report.written.append(job.outPath);

  if (!job.jsonPath.isEmpty()) {
    const std::string json = g::to_json(settings, w, h, toPath(job.imagePath).string()) + '\n';
    if (auto written = writeExport(job.jsonPath, QByteArray::fromStdString(json)); !written) {
      return std::unexpected(engineFailure(RenderFailure::Kind::Output, written.error()));
    }
    report.written.append(job.jsonPath);
  }

  report.summary = QObject::tr("glimpse: %1 on a %2 x %3 image -> %4 x %5 px (x%6)")
                       .arg(what)
                       .arg(w)
                       .arg(h)
                       .arg(big.width)
                       .arg(big.height)
                       .arg(factor);
  return report;
}

}  // namespace attn::ui
