#include "cli/caption_cli.h"
#include "render/strings.h"

#include "render/alignment_render.h"
#include "render/figure_export.h"
#include "workbenches/caption/caption_models.h"
#include "workbenches/caption/caption_worker.h"
#include "workbenches/common/sample_images.h"

#include <QElapsedTimer>
#include <QFileInfo>
#include <QGuiApplication>

#include <omp.h>

using namespace Qt::StringLiterals;

namespace attn::ui {
namespace {}  // namespace

std::expected<RenderReport, RenderFailure> runCaption(const CaptionJob& job) {
  // Everything that needs no model first.
  if (job.imagePath.isEmpty() == !job.scene.has_value()) {
    return std::unexpected(usageFailure(job.scene ? QObject::tr("caption: give --image or --scene, not both")
                                                  : QObject::tr("caption: give --image FILE or --scene SEED")));
  }
  if (job.outPath.isEmpty()) return std::unexpected(usageFailure(QObject::tr("caption: give --out FILE")));
  const auto format = exportFormatFor(job.outPath);
  if (!format || isMatrixFormat(*format)) {
    return std::unexpected(usageFailure(QObject::tr("--out %1: use a .png, .svg or .pdf file name").arg(job.outPath)));
  }
  if (job.beam < 1 || job.beam > 10) {
    return std::unexpected(
        usageFailure(QObject::tr("--beam: expected a width from 1 (greedy) to 10, got %1").arg(job.beam)));
  }
  if (job.hypothesis < 0) return std::unexpected(usageFailure(QObject::tr("--hypothesis: 0 is the best hypothesis")));
  if (job.perRow < 1 || job.perRow > 12) {
    return std::unexpected(
        usageFailure(QObject::tr("--per-row: expected 1 to 12 pictures a row, got %1").arg(job.perRow)));
  }
  if (!(job.overlay.sigma >= 0.0 && job.overlay.sigma <= 24.0)) {
    return std::unexpected(
        usageFailure(QObject::tr("--sigma: expected 0 (bilinear only) to 24 pixels, got %1").arg(job.overlay.sigma)));
  }

  CaptionInput input;
  if (job.scene) {
    input.kind = CaptionInput::Kind::Scene;
    input.seed = *job.scene;
  } else if (job.imagePath.startsWith(u"sample:"_s)) {
    input.kind = CaptionInput::Kind::Resource;
    input.path = sampleImageResource(job.imagePath.mid(7));
    if (input.path.isEmpty()) {
      return std::unexpected(usageFailure(
          QObject::tr("--image %1: unknown sample (astronaut, chelsea, coffee, rocket)").arg(job.imagePath)));
    }
  } else {
    input.kind = CaptionInput::Kind::File;
    input.path = job.imagePath;
  }

  // One thread, as in the tab's worker: for this small model a team of threads costs more than it saves.
  omp_set_num_threads(1);
  auto model = loadCaptionModel(job.model);
  if (!model) return std::unexpected(engineFailure(RenderFailure::Kind::Input, model.error()));
  auto image = readCaptionInput(input);
  if (!image) return std::unexpected(engineFailure(RenderFailure::Kind::Input, image.error()));

  QElapsedTimer timer;
  timer.start();
  attn::models::CaptionerRunner session(model->model);
  attn::models::CaptionOptions options;
  options.beam = job.beam;
  auto run = session.run(*image->image, options);
  if (!run) return std::unexpected(engineFailure(RenderFailure::Kind::Input, run.error()));
  const double ms = double(timer.nsecsElapsed()) / 1e6;
  if (const QString problem = hypothesisChoiceProblem(run->hypotheses.size(), job.hypothesis, job.beam);
      !problem.isEmpty()) {
    return std::unexpected(inputFailure(problem));
  }

  RenderReport report;
  for (const auto& w : model->model->warnings()) report.warnings.append(fromStd(w));
  report.summary = QObject::tr("caption: %1 \u00b7 %2 \u2192 %3 \u00b7 beam %4 \u00b7 %5 ms")
                       .arg(model->name, image->name, quoted(fromStd(run->hypotheses.front().text)))
                       .arg(job.beam)
                       .arg(ms, 0, 'f', 1);
  report.notes += hypothesisNotes(run->hypotheses, u"<end>"_s);
  if (!image->sceneCaption.isEmpty()) {
    report.notes.append(QObject::tr("the scene's own caption: %1").arg(quoted(image->sceneCaption)));
  } else {
    report.notes.append(QObject::tr("%1 \u00d7 %2 image: the models know only scenes of coloured shapes, so a photo "
                                    "gets a caption of shapes")
                            .arg(image->width)
                            .arg(image->height));
  }
  for (const auto& w : run->warnings) report.notes.append(u"warning: "_s + fromStd(w));

  const int h = job.hypothesis;
  const auto maps = captionMaps(*run, h, job.overlay.sigma);
  const auto& hyp = run->hypotheses[std::size_t(h)];
  const QString heading =
      QObject::tr("%1 \u00b7 %2 \u00b7 %3 \u00b7 log p %4")
          .arg(quoted(fromStd(hyp.text)), model->name, image->name, render::logProbText(hyp.log_prob));
  const auto figure = captionGridFigure(image->display, *run, *maps, job.overlay, job.perRow, heading);
  if (auto written = exportCaptionGrid(figure, QGuiApplication::font(), job.outPath); !written) {
    return std::unexpected(engineFailure(RenderFailure::Kind::Output, written.error()));
  }
  report.written.append(job.outPath);
  return report;
}

}  // namespace attn::ui
