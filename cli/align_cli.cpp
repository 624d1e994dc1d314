#include "cli/align_cli.h"
#include "render/strings.h"

#include "render/figure_export.h"
#include "workbenches/alignment/alignment_models.h"
#include "workbenches/alignment/alignment_page.h"

#include <QElapsedTimer>

#include <vector>

#include <omp.h>

using namespace Qt::StringLiterals;

namespace attn::ui {
namespace {

// Everything that needs no model.
AlignStep checkJob(const AlignJob& job) {
  if (job.model.isEmpty()) return std::unexpected(usageFailure(QObject::tr("align: give --model NAME|DIR")));
  if (!job.hasText && job.wavPath.isEmpty())
    return std::unexpected(usageFailure(QObject::tr("align: give --text \"...\" (or a speech model's --wav FILE)")));
  if (job.hasText && !job.wavPath.isEmpty())
    return std::unexpected(usageFailure(QObject::tr("align: give --text or --wav, not both")));
  if (job.outPath.isEmpty() && job.csvPath.isEmpty()) {
    return std::unexpected(usageFailure(QObject::tr("align: give --out FILE and/or --csv FILE")));
  }
  if (!job.outPath.isEmpty()) {
    const auto format = exportFormatFor(job.outPath);
    if (!format || isMatrixFormat(*format)) {
      return std::unexpected(
          usageFailure(QObject::tr("--out %1: use a .png, .svg or .pdf file name").arg(job.outPath)));
    }
  }
  if (!job.csvPath.isEmpty() && exportFormatFor(job.csvPath) != ExportFormat::Csv) {
    return std::unexpected(usageFailure(QObject::tr("--csv %1: use a .csv file name").arg(job.csvPath)));
  }
  if (const std::string problem = job.shaping.problem(); !problem.empty()) {
    return std::unexpected(
        usageFailure(QObject::tr("--sharpen, --smooth, --top-k, --window: %1").arg(fromStd(problem))));
  }
  if (job.beam < 1 || job.beam > 16) {
    return std::unexpected(
        usageFailure(QObject::tr("--beam: expected a width from 1 (greedy) to 16, got %1").arg(job.beam)));
  }
  if (job.hypothesis < 0) return std::unexpected(usageFailure(QObject::tr("--hypothesis: 0 is the best hypothesis")));
  if (job.layerSet && job.layer < 0) {
    return std::unexpected(usageFailure(QObject::tr("--layer: 0 is a ConvS2S model's first decoder layer")));
  }
  if (job.step < -1 || (job.stepSet && job.step < 0)) {
    return std::unexpected(usageFailure(QObject::tr("--step: 0 is the first output step")));
  }
  if (!job.size.isValid() || job.size.width() < 64 || job.size.height() < 64 || job.size.width() > 16384 ||
      job.size.height() > 16384) {
    return std::unexpected(usageFailure(QObject::tr("the image size must be between 64 and 16384 pixels a side")));
  }
  if (job.hasText && job.text.empty()) {
    return std::unexpected(
        inputFailure(QObject::tr("--text: empty: nothing to run; give a date in any form, a review or a premise")));
  }
  return {};
}

}  // namespace

QString alignKinds() {
  QStringList kinds;
  for (const auto& page : alignmentPages()) kinds.append(page->name());
  return kinds.join(u", "_s);
}

QString alignModelList() {
  const auto bundled = bundledModels();
  if (bundled.empty()) return u"This build bundles no models.\n"_s;
  // Each bundled model under the kind whose page shows it (the registry's order); one that none shows, last.
  std::vector<QStringList> lines(alignmentPages().size() + 1);
  for (const auto& entry : bundled) {
    const QString line = u"  %1  %2\n"_s.arg(entry.key, -24).arg(entry.name);
    const auto model = loadAlignmentModel(entry.key);
    std::size_t kind = lines.size() - 1;
    for (std::size_t k = 0; model && k < alignmentPages().size(); ++k) {
      if (alignmentPages()[k]->shows(*model)) kind = k;
    }
    lines[kind].append(line);
  }
  QString out;
  for (std::size_t k = 0; k < lines.size(); ++k) {
    if (lines[k].isEmpty()) continue;
    out += (k < alignmentPages().size() ? alignmentPages()[k]->name() : QObject::tr("other")) + u":\n"_s;
    out += lines[k].join(QString());
  }
  return out;
}

std::expected<RenderReport, RenderFailure> runAlign(const AlignJob& job) {
  // Everything that needs no model first.
  if (auto checked = checkJob(job); !checked) return std::unexpected(checked.error());
  // Audio for a model that reads text, from its config.json: refused before its weights or the file are read.
  if (!job.wavPath.isEmpty()) {
    if (const auto input = alignmentModelInput(job.model); input && !input->audio) {
      return std::unexpected(
          usageFailure(QObject::tr("--wav is for a speech model; %1 reads text (give it --text)").arg(input->name)));
    }
  }

  // One thread, as in the tab's worker: for these small models a team of threads costs more than it saves.
  omp_set_num_threads(1);
  QElapsedTimer timer;
  timer.start();
  auto model = loadAlignmentModel(job.model);
  if (!model) return std::unexpected(engineFailure(RenderFailure::Kind::Input, model.error()));
  RenderReport report;
  report.warnings = model->warnings();

  // What the page's parts say the kind does not take; then the page that shows the model runs the job.
  const AlignmentPage& page = model->page();
  if (job.layerSet && !page.parts().decodes) {
    return std::unexpected(usageFailure(
        QObject::tr("--layer is for a ConvS2S model's decoder layers; %1 has one attention").arg(model->name)));
  }
  if (job.shaping.shaped() && !page.parts().audio) {
    return std::unexpected(usageFailure(
        QObject::tr("--sharpen, --smooth, --top-k and --window shape a speech model's attention; %1 reads text")
            .arg(model->name)));
  }
  if (job.attribution && !page.parts().attribution) {
    return std::unexpected(
        usageFailure(QObject::tr("--attribution is for the review and entailment models; %1 is a %2 model")
                         .arg(model->name, page.name())));
  }
  if (auto ran = page.runCli(job, *model, timer, report); !ran) return std::unexpected(ran.error());
  return report;
}

}  // namespace attn::ui
