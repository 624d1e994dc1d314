#include "cli/headless.h"

#include "render/strings.h"

#include "render/figure_export.h"
#include "render/heatmap_figure.h"
#include "workbenches/lab/lab_worker.h"

#include <QDir>
#include <QGuiApplication>
#include <QFileInfo>

#include <cmath>

using namespace Qt::StringLiterals;

namespace attn::ui {
namespace {

// Resolves RenderJob::map against the run's trace; -1 means "all", none the run's opening map.
std::expected<int, RenderFailure> pickMap(const attn::lab::LabResult& run, const QString& selector) {
  const attn::AttentionTrace& trace = run.trace;
  const int count = int(trace.size());
  if (selector.isEmpty()) return run.opening_map < trace.size() ? int(run.opening_map) : 0;
  if (selector.compare(u"all"_s, Qt::CaseInsensitive) == 0) return -1;
  bool isNumber = false;
  const int index = selector.toInt(&isNumber);
  if (isNumber) {
    if (index >= 0 && index < count) return index;
    return std::unexpected(RenderFailure{
        RenderFailure::Kind::Usage,
        QObject::tr("--map %1: this run has %2 map(s), numbered 0 to %3").arg(selector).arg(count).arg(count - 1)});
  }
  QStringList titles;
  for (int i = 0; i < count; ++i) {
    const auto& map = trace.maps()[std::size_t(i)];
    const QString title = QString::fromStdString(map.title());
    if (selector == title || selector == QString::fromStdString(map.name)) return i;
    titles.append(u"  %1: %2"_s.arg(i).arg(title));
  }
  return std::unexpected(
      RenderFailure{RenderFailure::Kind::Usage,
                    QObject::tr("--map %1: no such map; this run has:\n%2").arg(selector, titles.join(u'\n'))});
}

// As many maps as the Lab's grid shows (MapGrid::kMaxTiles).
constexpr std::size_t kMaxGridTiles = 32;

QString csvPathFor(const QString& base, int index) {
  const QFileInfo info(base);
  return info.dir().filePath(u"%1-%2.%3"_s.arg(info.completeBaseName()).arg(index).arg(info.suffix()));
}

}  // namespace

std::expected<RenderReport, RenderFailure> renderLab(const RenderJob& job) {
  if (!job.imagePath.isEmpty()) {
    const auto format = exportFormatFor(job.imagePath);
    if (!format || *format == ExportFormat::Csv) {
      return std::unexpected(RenderFailure{
          RenderFailure::Kind::Usage, QObject::tr("--out %1: use a .png, .svg or .pdf file name").arg(job.imagePath)});
    }
  }
  if (!job.size.isValid() || job.size.width() < 64 || job.size.height() < 64 || job.size.width() > 16384 ||
      job.size.height() > 16384) {
    return std::unexpected(RenderFailure{RenderFailure::Kind::Usage,
                                         QObject::tr("the image size must be between 64 and 16384 pixels a side")});
  }

  auto result = attn::lab::run_lab(job.request, {}, job.what);
  if (!result) {
    return std::unexpected(engineFailure(RenderFailure::Kind::Input, result.error()));
  }
  const auto owner = std::make_shared<const attn::lab::LabResult>(std::move(*result));
  const auto& trace = owner->trace;
  if (trace.empty()) {
    return std::unexpected(RenderFailure{RenderFailure::Kind::Input, QObject::tr("the mechanism produced no map")});
  }
  const auto picked = pickMap(*owner, job.map);
  if (!picked) return std::unexpected(picked.error());
  const int index = *picked;

  RenderReport report;
  LabOutcome outcome;
  outcome.request = job.request;
  outcome.result = owner;
  report.summary = labSummary(outcome, trace.maps()[std::size_t(std::max(index, 0))]);
  for (const auto& note : owner->notes) report.notes.append(QString::fromStdString(note));
  for (const auto& warning : owner->warnings) report.warnings.append(QString::fromStdString(warning));

  if (!job.imagePath.isEmpty()) {
    if (index >= 0) {
      render::HeatmapFigure figure;
      figure.map = std::shared_ptr<const attn::AttentionMap>(owner, &trace.maps()[std::size_t(index)]);
      figure.colormap = job.colormap;
      if (auto written = exportHeatmapFigure(figure, job.size, QGuiApplication::font(), job.imagePath); !written) {
        return std::unexpected(outputFailure(written.error()));
      }
    } else {
      // A figure to read on its own: every tile with its title and colour bar, one-row maps (a hierarchical
      // document's levels) with square cells rather than stretched into tall blocks, and their rows only as tall
      // as that; the first kMaxGridTiles maps, as the Lab's grid.
      std::vector<render::HeatmapFigure> tiles;
      for (const auto& map : trace.maps()) {
        if (tiles.size() == kMaxGridTiles) break;
        render::HeatmapFigure tile;
        tile.map = std::shared_ptr<const attn::AttentionMap>(owner, &map);
        tile.colormap = job.colormap;
        tile.title = fromStd(map.title());
        tile.compact = true;
        tile.squareCells = true;
        tiles.push_back(std::move(tile));
      }
      const int columns = int(std::ceil(std::sqrt(double(tiles.size()))));
      const QString overflow = trace.size() > tiles.size()
                                   ? QObject::tr("Showing the first %1 of %2 maps.").arg(tiles.size()).arg(trace.size())
                                   : QString();
      if (auto written = exportHeatmapGrid(tiles, columns, job.size, QGuiApplication::font(), overflow, job.imagePath);
          !written) {
        return std::unexpected(outputFailure(written.error()));
      }
    }
    report.written.append(job.imagePath);
  }

  if (!job.csvPath.isEmpty()) {
    if (index >= 0) {
      if (auto written = writeMatrixCsv(trace.maps()[std::size_t(index)], job.csvPath); !written) {
        return std::unexpected(outputFailure(written.error()));
      }
      report.written.append(job.csvPath);
    } else {
      for (int i = 0; i < int(trace.size()); ++i) {
        const QString path = csvPathFor(job.csvPath, i);
        if (auto written = writeMatrixCsv(trace.maps()[std::size_t(i)], path); !written) {
          return std::unexpected(outputFailure(written.error()));
        }
        report.written.append(path);
      }
    }
  }
  return report;
}

std::vector<DemoView> demoViews() {
  using attn::lab::Mechanism;
  const auto make = [](QString file, QString description, Mechanism mechanism, QString map, auto&& adjust) {
    DemoView view{std::move(file), std::move(description), {}, std::move(map)};
    view.request.query = std::string(attn::lab::kDefaultQuery);
    view.request.source = std::string(attn::lab::kDefaultSource);
    view.request.params.mechanism = mechanism;
    adjust(view.request.params);
    return view;
  };
  const auto keep = [](attn::lab::LabParams&) {};
  std::vector<DemoView> views;
  views.push_back(make(u"global-additive.png"_s, QObject::tr("global attention with Bahdanau's additive score"),
                       Mechanism::Global, {}, [](attn::lab::LabParams& p) { p.score = attn::ScoreKind::Additive; }));
  views.push_back(make(u"global-sparsemax.png"_s, QObject::tr("global scaled-dot attention normalised by sparsemax"),
                       Mechanism::Global, {},
                       [](attn::lab::LabParams& p) { p.normaliser = attn::Normaliser::Sparsemax; }));
  views.push_back(make(u"local-p.png"_s, QObject::tr("local-p: a predicted position with a Gaussian window"),
                       Mechanism::LocalPredictive, {}, keep));
  views.push_back(make(u"self-causal.png"_s, QObject::tr("causal self-attention over the source"),
                       Mechanism::SelfAttention, {}, [](attn::lab::LabParams& p) { p.causal = true; }));
  views.push_back(make(u"multi-head-grid.png"_s, QObject::tr("multi-head self-attention, every head"),
                       Mechanism::MultiHead, u"all"_s, [](attn::lab::LabParams& p) { p.heads = 4; }));
  views.push_back(make(u"multi-hop.png"_s, QObject::tr("multi-hop attention, one map per hop"), Mechanism::MultiHop,
                       u"all"_s, keep));
  views.push_back(make(u"aoa.png"_s, QObject::tr("attention-over-attention: alpha, beta and the result"),
                       Mechanism::AttentionOverAttention, u"all"_s, keep));
  views.push_back(make(u"hierarchical.png"_s, QObject::tr("hierarchical attention: words, then sentences"),
                       Mechanism::Hierarchical, u"all"_s, keep));
  views.push_back(
      make(u"capsule.png"_s, QObject::tr("capsule attention: one query per class"), Mechanism::Capsule, {}, keep));
  return views;
}

QString mechanismListing() {
  QString out = QObject::tr("Mechanisms (--mechanism KEY):\n");
  for (const auto& info : attn::lab::mechanisms()) {
    out += u"  %1  %2\n      %3\n      %4\n"_s.arg(fromStd(info.key), -20)
               .arg(fromStd(info.name), fromStd(info.formula), fromStd(info.paper));
  }
  QStringList scores;
  for (auto kind : attn::lab::score_kinds()) scores.append(fromStd(attn::lab::score_key(kind)));
  out += QObject::tr("Scores (--score NAME): %1\n").arg(scores.join(u", "_s));
  out += QObject::tr(
      "A score name also works as a mechanism: --mechanism additive is global attention with the "
      "additive score.\n");
  return out;
}

}  // namespace attn::ui
