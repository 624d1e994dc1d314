#include "workbenches/alignment/entailment/entailment_cli.h"

#include "render/alignment_render.h"
#include "render/figure_export.h"
#include "render/strings.h"
#include "workbenches/alignment/alignment_models.h"

#include <QGuiApplication>
#include <QObject>

#include <algorithm>

namespace attn::ui {
namespace {

// --out: the heatmap with hypothesis word job.step outlined, or the figure of the premise shaded by it.
AlignStep writeEntailmentView(const AlignJob& job, const attn::models::EntailmentRun& run,
                              const attn::models::EntailmentConfig& config,
                              const std::shared_ptr<const attn::AttentionMap>& map,
                              const render::AttributionShading& shading) {
  if (job.view == AlignJob::View::Heatmap) {
    render::AlignmentOverlay overlay;
    overlay.rows = int(run.attention.rows());
    overlay.columns = int(map->weights.cols());
    if (job.step >= 0) overlay.focusRow = job.step;
    return writeAlignmentHeatmap(job, map, overlay);
  }
  const auto figure =
      render::entailmentFigure(run, config, std::max(0, job.step), job.text, job.pair, job.colormap, shading);
  if (auto written = exportFigure(figure, QGuiApplication::font(), job.size.width(), job.outPath); !written) {
    return std::unexpected(outputFailure(written.error()));
  }
  return {};
}

}  // namespace

AlignStep runEntailmentCli(const AlignJob& job, const AlignmentModel& model, const QElapsedTimer& timer,
                           RenderReport& report) {
  if (job.beamSet || job.hypothesisSet) {
    return std::unexpected(
        usageFailure(QObject::tr("--beam and --hypothesis are for the date (seq2seq) models; %1 is an entailment model")
                         .arg(model.name)));
  }
  if (!job.hasPair) {
    return std::unexpected(usageFailure(QObject::tr("align: %1 is an entailment model: give the premise with --text "
                                                    "and the hypothesis with --pair")
                                            .arg(model.name)));
  }
  attn::models::EntailmentRunner session(model.entailment);
  auto run = session.run(job.text, job.pair);
  if (!run) return std::unexpected(engineFailure(RenderFailure::Kind::Input, run.error()));
  const double ms = double(timer.nsecsElapsed()) / 1e6;
  const int words = int(run->attention.rows());
  if (job.step >= words) {
    return std::unexpected(
        inputFailure(QObject::tr("--step %1: the hypothesis has the words 0 to %2").arg(job.step).arg(words - 1)));
  }
  const auto& config = model.entailment->config();
  const auto label = [&](int i) {
    return std::size_t(i) < config.labels.size() ? fromStd(config.labels[std::size_t(i)]) : QString::number(i);
  };
  const float p =
      std::size_t(run->predicted) < run->probabilities.size() ? run->probabilities[std::size_t(run->predicted)] : 0.0f;
  report.summary = QObject::tr("align: %1 \u00b7 %2 premise and %3 hypothesis words \u2192 %4 (%5) \u00b7 %6 ms")
                       .arg(model.name)
                       .arg(run->premise.words.size())
                       .arg(words)
                       .arg(label(run->predicted), render::percentText(p))
                       .arg(ms, 0, 'f', 1);
  report.notes.append(probabilitiesNote(run->probabilities, label));
  addWordRunNotes(std::count(run->premise_unknown.begin(), run->premise_unknown.end(), true) +
                      std::count(run->hypothesis_unknown.begin(), run->hypothesis_unknown.end(), true),
                  run->warnings, report);
  attn::Labels both = run->premise.words;  // the attribution's order: the premise's words, then the hypothesis's
  both.insert(both.end(), run->hypothesis.words.begin(), run->hypothesis.words.end());
  const auto shading = alignAttribution(
      job, [&](const auto& options) { return attn::models::attribute_words(*model.entailment, *run, options); }, both,
      label, report);
  if (!shading) return std::unexpected(shading.error());
  const auto map = run->map();
  if (!job.outPath.isEmpty()) {
    if (auto written = writeEntailmentView(job, *run, config, map, *shading); !written) return written;
    report.written.append(job.outPath);
  }
  return writeAlignmentCsv(job, *map, report);
}

}  // namespace attn::ui
