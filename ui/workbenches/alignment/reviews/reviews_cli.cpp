#include "workbenches/alignment/reviews/reviews_cli.h"

#include "render/alignment_render.h"
#include "render/figure_export.h"
#include "render/strings.h"
#include "workbenches/alignment/alignment_models.h"
#include "workbenches/alignment/alignment_run.h"

#include <QGuiApplication>
#include <QObject>

#include <algorithm>

namespace attn::ui {
namespace {

QString reviewLabel(const attn::models::ClassifierConfig& config, int i) {
  return std::size_t(i) < config.labels.size() ? fromStd(config.labels[std::size_t(i)]) : QString::number(i);
}

}  // namespace

AlignStep runReviewsCli(const AlignJob& job, const AlignmentModel& model, const QElapsedTimer& timer,
                        RenderReport& report) {
  if (job.beamSet || job.hypothesisSet || job.stepSet || job.hasPair) {
    return std::unexpected(usageFailure(QObject::tr("--beam, --hypothesis, --step and --pair are for the date "
                                                    "(seq2seq) and entailment models; %1 is a classifier")
                                            .arg(model.name)));
  }
  if (job.viewSet && job.view == AlignJob::View::Heatmap) {
    return std::unexpected(
        usageFailure(QObject::tr("--view heatmap is for the date (seq2seq) models; a classifier "
                                 "writes its word shading")));
  }
  attn::models::ClassifierRunner session(model.classifier);
  auto run = session.run(job.text);
  if (!run) return std::unexpected(engineFailure(RenderFailure::Kind::Input, run.error()));
  const double ms = double(timer.nsecsElapsed()) / 1e6;
  const auto& config = model.classifier->config();
  const float p =
      std::size_t(run->predicted) < run->probabilities.size() ? run->probabilities[std::size_t(run->predicted)] : 0.0f;
  report.summary = QObject::tr("align: %1 \u00b7 %2 words \u2192 %3 (%4) \u00b7 %5 ms")
                       .arg(model.name)
                       .arg(run->input.words.size())
                       .arg(reviewLabel(config, run->predicted), render::percentText(p))
                       .arg(ms, 0, 'f', 1);
  report.notes.append(probabilitiesNote(run->probabilities, [&](int i) { return reviewLabel(config, i); }));
  for (Index s = 0; s < run->sentence_attention.size(); ++s) {
    report.notes.append(
        QObject::tr("sentence %1: weight %2").arg(s).arg(double(run->sentence_attention(s)), 0, 'f', 4));
  }
  addWordRunNotes(std::count(run->unknown.begin(), run->unknown.end(), true), run->warnings, report);
  const auto shading = alignAttribution(
      job, [&](const auto& options) { return attn::models::attribute_words(*model.classifier, *run, options); },
      run->input.words, [&](int i) { return reviewLabel(config, i); }, report);
  if (!shading) return std::unexpected(shading.error());
  if (!job.outPath.isEmpty()) {
    const auto figure = render::reviewFigure(*run, config, job.text, job.colormap, {}, *shading);
    if (auto written = exportFigure(figure, QGuiApplication::font(), job.size.width(), job.outPath); !written) {
      return std::unexpected(outputFailure(written.error()));
    }
    report.written.append(job.outPath);
  }
  if (job.csvPath.isEmpty()) return {};
  const auto map = wordMap(*run);
  if (!map) return std::unexpected(inputFailure(QObject::tr("the run has no word attention")));
  return writeAlignmentCsv(job, *map, report);
}

}  // namespace attn::ui
