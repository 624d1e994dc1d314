#include "cli/heads_cli.h"

#include "render/causal_figures.h"
#include "render/figure_export.h"
#include "render/heatmap_figure.h"
#include "render/strings.h"

#include <QElapsedTimer>
#include <QGuiApplication>
#include <QPainter>
#include <QStringList>

#include <algorithm>
#include <memory>

using namespace Qt::StringLiterals;

namespace attn::ui {

namespace {

using attn::analysis::HeadDetection;
using attn::analysis::HeadDetector;
using attn::analysis::HeadScore;

bool asked(const std::vector<HeadDetector>& detectors, HeadDetector d) {
  return std::find(detectors.begin(), detectors.end(), d) != detectors.end();
}

QString validNames() {
  QStringList names;
  for (auto d : attn::analysis::head_detectors()) names << fromStd(attn::analysis::to_string(d));
  return names.join(u", "_s);
}


// "induction: strongest layer 1 head 1 (0.848, offset +2)".
QString strongestNote(const HeadDetection& found, HeadDetector d) {
  const auto best = std::max_element(found.scores.begin(), found.scores.end(), [d](const auto& a, const auto& b) {
    return render::detectorScore(a, d) < render::detectorScore(b, d);
  });
  if (best == found.scores.end()) return {};
  QString note = QObject::tr("%1: strongest layer %2 head %3 (%4")
                     .arg(fromStd(attn::analysis::to_string(d)))
                     .arg(best->layer)
                     .arg(best->head)
                     .arg(double(render::detectorScore(*best, d)), 0, 'f', 3);
  if (d == HeadDetector::Induction) note += QObject::tr(", offset +%1").arg(best->induction_offset);
  return note + u')';
}

attn::Result<void> writePicture(const HeadDetection& found, const std::vector<HeadDetector>& detectors,
                                const QString& title, const QString& path) {
  constexpr int kTileWidth = 380, kGap = 28, kFrame = 170;
  const int cell = std::clamp((kTileWidth - kFrame) / std::max(1, found.heads), 8, 40);
  const int tileHeight = std::clamp(found.layers * cell + 130, 240, 1600);
  std::vector<render::HeatmapFigure> tiles;
  for (auto d : detectors) tiles.push_back(render::detectorFigure(found, d));
  const QSize size(kTileWidth * int(tiles.size()), tileHeight);
  const QFont font = QGuiApplication::font();
  return exportTitledDrawing(path, title, font, size, [&](QPainter& painter) {
    for (std::size_t i = 0; i < tiles.size(); ++i) {
      render::paintHeatmapFigure(painter, QRect(int(i) * kTileWidth + kGap / 2, 0, kTileWidth - kGap, tileHeight),
                                 tiles[i], font);
    }
  });
}

}  // namespace

std::expected<std::vector<HeadDetector>, QString> parseDetectors(const QString& list) {
  std::vector<HeadDetector> named;
  for (const QString& part : list.split(u',')) {
    const QString name = part.trimmed();
    const auto d = attn::analysis::find_head_detector(name.toStdString());
    if (!d) {
      return std::unexpected(
          QObject::tr("--detect: unknown detector '%1' (the detectors: %2)").arg(name, validNames()));
    }
    named.push_back(*d);
  }
  std::vector<HeadDetector> out;
  for (auto d : attn::analysis::head_detectors()) {
    if (asked(named, d)) out.push_back(d);
  }
  return out;
}

QByteArray headsCsv(const HeadDetection& found, const std::vector<HeadDetector>& detectors) {
  return render::headsCsv(found, detectors);
}

std::expected<RenderReport, RenderFailure> runHeads(const HeadsJob& job) {
  if (!job.outPath.isEmpty()) {
    const auto format = exportFormatFor(job.outPath);
    if (!format || isMatrixFormat(*format)) {
      return std::unexpected(
          usageFailure(QObject::tr("--out %1: use a .png, .svg or .pdf file name").arg(job.outPath)));
    }
  }
  QElapsedTimer clock;
  clock.start();
  auto model = attn::models::TransformerModel::load(toPath(job.modelDir));
  if (!model) return std::unexpected(engineFailure(RenderFailure::Kind::Input, model.error()));
  RenderReport report;
  for (const auto& w : (*model)->warnings()) report.warnings.append(fromStd(w));
  auto options = job.options;
  options.model_name = job.modelDir.toStdString();
  auto found = attn::analysis::detect_heads(*model, options);
  if (!found) return std::unexpected(engineFailure(RenderFailure::Kind::Usage, found.error()));

  report.summary = QObject::tr("heads: %1 · %2 inputs of %3 tokens, twice · %4 s")
                       .arg(fromStd((*model)->description()))
                       .arg(found->sequences)
                       .arg(found->layout.length)
                       .arg(double(clock.nsecsElapsed()) / 1e9, 0, 'f', 2);
  report.notes << QObject::tr("S drawn from %1 (seed %2); induction offsets 1 to %3")
                      .arg(fromStd(found->pool))
                      .arg(options.seed)
                      .arg(found->max_offset);
  for (auto d : job.detectors) report.notes << strongestNote(*found, d);
  if (!job.csvPath.isEmpty()) {
    if (auto written = writeExport(job.csvPath, headsCsv(*found, job.detectors)); !written) {
      return std::unexpected(outputFailure(written.error()));
    }
    report.written << job.csvPath;
  }
  if (!job.outPath.isEmpty()) {
    const QString title = QObject::tr("Head detectors · %1 · %2 inputs [prefix] S S, |S| = %3, seed %4")
                              .arg(job.modelDir)
                              .arg(found->sequences)
                              .arg(found->layout.length)
                              .arg(options.seed);
    if (auto written = writePicture(*found, job.detectors, title, job.outPath); !written) {
      return std::unexpected(outputFailure(written.error()));
    }
    report.written << job.outPath;
  }
  return report;
}

}  // namespace attn::ui
