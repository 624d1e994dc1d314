#include "cli/align_cli.h"
#include "render/strings.h"

#include "render/alignment_overlay.h"
#include "render/alignment_render.h"
#include "render/figure_export.h"
#include "render/heatmap_figure.h"
#include "workbenches/alignment/alignment_models.h"
#include "workbenches/alignment/alignment_page.h"
#include "workbenches/alignment/alignment_run.h"
#include "workbenches/alignment/speech/speech_input.h"

#include <QElapsedTimer>
#include <QFont>
#include <QGuiApplication>

#include <algorithm>
#include <functional>

#include <omp.h>

using namespace Qt::StringLiterals;

namespace attn::ui {
namespace {

using Step = std::expected<void, RenderFailure>;  // a step of the job that may fail

// Everything that needs no model.
Step checkJob(const AlignJob& job) {
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

// A seq2seq run's notes: its hypotheses, the source characters or words outside the vocabulary and its warnings.
void addSeq2SeqNotes(const attn::models::Seq2SeqRun& run, RenderReport& report) {
  report.notes += hypothesisNotes(run.hypotheses, u"</s>"_s);
  const auto unknown = std::count(run.unknown.begin(), run.unknown.end(), true);
  if (unknown > 0) {
    QStringList which;
    for (std::size_t j = 0; j < run.unknown.size(); ++j) {
      if (run.unknown[j]) which.append(u"%1 at %2"_s.arg(quoted(fromStd(run.source[j]))).arg(j));
    }
    report.notes.append(QObject::tr("not in the vocabulary (read as <unk>): %1").arg(which.join(u", "_s)));
  }
  for (const auto& w : run.warnings) report.notes.append(u"warning: "_s + fromStd(w));
}

// --csv, when given: `map` as CSV.
Step writeCsv(const AlignJob& job, const attn::AttentionMap& map, RenderReport& report) {
  if (job.csvPath.isEmpty()) return {};
  if (auto written = writeMatrixCsv(map, job.csvPath); !written) return std::unexpected(outputFailure(written.error()));
  report.written.append(job.csvPath);
  return {};
}

// --out as the tab's heatmap: `map` with `overlay` drawn over it, job.size exactly.
Step writeHeatmap(const AlignJob& job, const std::shared_ptr<const attn::AttentionMap>& map,
                  const render::AlignmentOverlay& overlay) {
  render::HeatmapFigure figure;
  figure.map = map;
  figure.colormap = job.colormap;
  figure.overlay = overlay;
  if (auto written = exportHeatmapFigure(figure, job.size, QGuiApplication::font(), job.outPath); !written) {
    return std::unexpected(outputFailure(written.error()));
  }
  return {};
}

// --out of a seq2seq run: hypothesis `h`'s alignment heatmap (`map`) or its decoding figure.
Step writeSeq2SeqView(const AlignJob& job, const attn::models::Seq2SeqRun& run, std::size_t h,
                      const attn::models::Seq2SeqConfig& config, const std::shared_ptr<const attn::AttentionMap>& map,
                      const QFont& font) {
  const auto& hyp = run.hypotheses[h];
  if (job.view == AlignJob::View::Heatmap) {
    render::AlignmentOverlay overlay;
    overlay.rows = int(map->weights.rows());
    overlay.columns = int(map->weights.cols());
    if (job.step >= 0) overlay.focusRow = job.step;
    if (config.local) overlay.bands = render::localWindowBands(hyp.positions, config.window, overlay.columns);
    if (auto written = writeHeatmap(job, map, overlay); !written) return written;
  } else {
    render::DecodingFigureOptions options;
    options.colormap = job.colormap;
    options.window = config.local ? config.window : 0;
    const auto figure = render::decodingFigure(run, h, std::max(0, job.step), job.text, options);
    if (auto written = exportFigure(figure, font, job.size.width(), job.outPath); !written) {
      return std::unexpected(outputFailure(written.error()));
    }
  }
  return {};
}

// A speech model's run: --wav read, or --text said by espeak-ng (its phonemes and spans among the notes), then
// the log-mel frames decoded.
attn::Result<attn::models::Seq2SeqRun> runSpeech(const AlignJob& job, attn::models::Seq2SeqRunner& session,
                                                 const attn::models::DecodeOptions& options, RenderReport& report) {
  auto input = speechInput(job.text, job.wavPath, job.voice);
  if (!input) return std::unexpected(input.error());
  if (!input->phonemes.empty()) {
    QStringList phonemes;
    for (const auto& p : input->phonemes) phonemes << fromStd(p.name);
    report.notes.append(QObject::tr("said by espeak-ng (%1): %2 s, the phonemes %3")
                            .arg(input->voice)
                            .arg(input->audio.seconds(), 0, 'f', 2)
                            .arg(phonemes.join(u' ')));
  }
  for (const auto& w : input->audio.warnings) report.notes.append(u"warning: "_s + fromStd(w));
  return session.run_frames(input->logMel, options);
}

// A date (seq2seq) model: decodes, checks the hypothesis and step asked for, writes --out and --csv.
Step runSeq2Seq(const AlignJob& job, const AlignmentModel& model, const QElapsedTimer& timer, const QFont& font,
                RenderReport& report) {
  if (job.hasPair) {
    return std::unexpected(usageFailure(
        QObject::tr("--pair is the hypothesis of an entailment model; %1 is a date (seq2seq) model").arg(model.name)));
  }
  attn::models::Seq2SeqRunner session(model.seq2seq);
  attn::models::DecodeOptions options;
  options.beam = job.beam;
  options.shaping = job.shaping;
  const bool speech = alignmentPageFor(model).parts().audio;  // the page says what its kind hears
  if (!job.wavPath.isEmpty() && !speech) {
    return std::unexpected(usageFailure(QObject::tr("--wav is for a speech model; %1 reads text").arg(model.name)));
  }
  if (speech && job.view == AlignJob::View::Shading) {
    return std::unexpected(usageFailure(QObject::tr("--view shading is for text; a speech model writes its heatmap")));
  }
  auto run = speech ? runSpeech(job, session, options, report) : session.run(job.text, options);
  if (!run) return std::unexpected(engineFailure(RenderFailure::Kind::Input, run.error()));
  const double ms = double(timer.nsecsElapsed()) / 1e6;
  if (const QString problem = hypothesisChoiceProblem(run->hypotheses.size(), job.hypothesis, job.beam);
      !problem.isEmpty()) {
    return std::unexpected(inputFailure(problem));
  }
  const std::size_t h = std::size_t(job.hypothesis);
  const auto& hyp = run->hypotheses[h];
  if (job.step >= int(hyp.ids.size())) {
    return std::unexpected(inputFailure(QObject::tr("--step %1: hypothesis %2 has the output steps 0 to %3")
                                            .arg(job.step)
                                            .arg(job.hypothesis)
                                            .arg(int(hyp.ids.size()) - 1)));
  }
  report.summary = QObject::tr("align: %1 \u00b7 %2 %3 \u2192 %4 \u00b7 beam %5 \u00b7 %6 ms")
                       .arg(model.name)
                       .arg(run->source.size())
                       .arg(alignmentPageFor(model).text().units)
                       .arg(quoted(fromStd(run->hypotheses.front().text)))
                       .arg(job.beam)
                       .arg(ms, 0, 'f', 1);
  addSeq2SeqNotes(*run, report);

  const int layers = int(hyp.layers.size());
  if (job.layerSet && job.layer >= layers) {
    return std::unexpected(
        layers == 0
            ? usageFailure(
                  QObject::tr("--layer is for a ConvS2S model's decoder layers; %1 has one attention").arg(model.name))
            : inputFailure(QObject::tr("--layer %1: %2 has the decoder layers 0 to %3")
                               .arg(job.layer)
                               .arg(model.name)
                               .arg(layers - 1)));
  }
  if (layers > 0) {
    report.notes.append(job.layer >= 0
                            ? QObject::tr("decoder layer %1 (0\u2013%2)").arg(job.layer).arg(layers - 1)
                            : QObject::tr("the mean of the %1 decoder layers' maps (--layer L for one)").arg(layers));
  }
  const auto map = alignmentMap(*run, h, job.layer);
  if (!map) return std::unexpected(inputFailure(QObject::tr("the run has no alignment")));
  const auto& config = model.seq2seq->config();
  if (!job.outPath.isEmpty()) {
    if (auto written = writeSeq2SeqView(job, *run, h, config, map, font); !written) return written;
    report.written.append(job.outPath);
  }
  return writeCsv(job, *map, report);
}

// "probabilities: negative 0.0123, positive 0.9877".
QString probabilitiesNote(const std::vector<float>& probabilities, const std::function<QString(int)>& label) {
  QStringList parts;
  for (std::size_t i = 0; i < probabilities.size(); ++i) {
    parts.append(u"%1 %2"_s.arg(label(int(i))).arg(double(probabilities[i]), 0, 'f', 4));
  }
  return QObject::tr("probabilities: %1").arg(parts.join(u", "_s));
}

QString labelOf(const attn::models::ClassifierConfig& config, int i) {
  return std::size_t(i) < config.labels.size() ? fromStd(config.labels[std::size_t(i)]) : QString::number(i);
}

// A review classifier: runs, writes the word shading (--out) and the heads x words matrix (--csv).
Step runClassifier(const AlignJob& job, const AlignmentModel& model, const QElapsedTimer& timer, const QFont& font,
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
                       .arg(labelOf(config, run->predicted), render::percentText(p))
                       .arg(ms, 0, 'f', 1);
  report.notes.append(probabilitiesNote(run->probabilities, [&](int i) { return labelOf(config, i); }));
  for (Index s = 0; s < run->sentence_attention.size(); ++s) {
    report.notes.append(
        QObject::tr("sentence %1: weight %2").arg(s).arg(double(run->sentence_attention(s)), 0, 'f', 4));
  }
  const auto unknown = std::count(run->unknown.begin(), run->unknown.end(), true);
  if (unknown > 0) report.notes.append(QObject::tr("%1 words not in the vocabulary (read as <unk>)").arg(unknown));
  for (const auto& w : run->warnings) report.notes.append(u"warning: "_s + fromStd(w));
  if (!job.outPath.isEmpty()) {
    const auto figure = render::reviewFigure(*run, config, job.text, job.colormap);
    if (auto written = exportFigure(figure, font, job.size.width(), job.outPath); !written) {
      return std::unexpected(outputFailure(written.error()));
    }
    report.written.append(job.outPath);
  }
  if (job.csvPath.isEmpty()) return {};
  const auto map = wordMap(*run);
  if (!map) return std::unexpected(inputFailure(QObject::tr("the run has no word attention")));
  return writeCsv(job, *map, report);
}

// An entailment model: runs the pair, writes the heatmap or the figure (--out) and the matrix (--csv).
Step runEntailment(const AlignJob& job, const AlignmentModel& model, const QElapsedTimer& timer, const QFont& font,
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
  const auto unknown = std::count(run->premise_unknown.begin(), run->premise_unknown.end(), true) +
                       std::count(run->hypothesis_unknown.begin(), run->hypothesis_unknown.end(), true);
  if (unknown > 0) report.notes.append(QObject::tr("%1 words not in the vocabulary (read as <unk>)").arg(unknown));
  for (const auto& w : run->warnings) report.notes.append(u"warning: "_s + fromStd(w));
  const auto map = run->map();
  if (!job.outPath.isEmpty()) {
    if (job.view == AlignJob::View::Heatmap) {
      render::AlignmentOverlay overlay;
      overlay.rows = words;
      overlay.columns = int(map->weights.cols());
      if (job.step >= 0) overlay.focusRow = job.step;
      if (auto written = writeHeatmap(job, map, overlay); !written) return written;
    } else {
      const auto figure =
          render::entailmentFigure(*run, config, std::max(0, job.step), job.text, job.pair, job.colormap);
      if (auto written = exportFigure(figure, font, job.size.width(), job.outPath); !written) {
        return std::unexpected(outputFailure(written.error()));
      }
    }
    report.written.append(job.outPath);
  }
  return writeCsv(job, *map, report);
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

  // One thread, as in the tab's worker: for these small models a team of threads costs more than it saves.
  omp_set_num_threads(1);
  QElapsedTimer timer;
  timer.start();
  auto model = loadAlignmentModel(job.model);
  if (!model) return std::unexpected(engineFailure(RenderFailure::Kind::Input, model.error()));
  RenderReport report;
  for (const auto& w : model->seq2seq      ? model->seq2seq->warnings()
                       : model->entailment ? model->entailment->warnings()
                                           : model->classifier->warnings()) {
    report.warnings.append(fromStd(w));
  }
  const QFont font = QGuiApplication::font();

  // A date (seq2seq) model, an entailment model, or a review classifier.
  if (job.layerSet && !model->seq2seq) {
    return std::unexpected(usageFailure(
        QObject::tr("--layer is for a ConvS2S model's decoder layers; %1 has one attention").arg(model->name)));
  }
  if (job.shaping.shaped() && !alignmentPageFor(*model).parts().audio) {
    return std::unexpected(usageFailure(
        QObject::tr("--sharpen, --smooth, --top-k and --window shape a speech model's attention; %1 reads text")
            .arg(model->name)));
  }
  const Step ran = model->seq2seq      ? runSeq2Seq(job, *model, timer, font, report)
                   : model->entailment ? runEntailment(job, *model, timer, font, report)
                                       : runClassifier(job, *model, timer, font, report);
  if (!ran) return std::unexpected(ran.error());
  return report;
}

}  // namespace attn::ui
