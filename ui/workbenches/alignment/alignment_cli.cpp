#include "workbenches/alignment/alignment_cli.h"

#include "render/alignment_render.h"
#include "render/figure_export.h"
#include "render/heatmap_figure.h"
#include "render/strings.h"
#include "workbenches/alignment/alignment_models.h"
#include "workbenches/alignment/alignment_page.h"
#include "workbenches/alignment/alignment_run.h"

#include <QFont>
#include <QGuiApplication>
#include <QObject>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace attn::ui {
namespace {

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

// --out of a seq2seq run: hypothesis `h`'s alignment heatmap (`map`) or its decoding figure.
AlignStep writeSeq2SeqView(const AlignJob& job, const attn::models::Seq2SeqRun& run, std::size_t h,
                           const attn::models::Seq2SeqConfig& config,
                           const std::shared_ptr<const attn::AttentionMap>& map) {
  const auto& hyp = run.hypotheses[h];
  if (job.view == AlignJob::View::Heatmap) {
    render::AlignmentOverlay overlay;
    overlay.rows = int(map->weights.rows());
    overlay.columns = int(map->weights.cols());
    if (job.step >= 0) overlay.focusRow = job.step;
    if (config.local) overlay.bands = render::localWindowBands(hyp.positions, config.window, overlay.columns);
    if (auto written = writeAlignmentHeatmap(job, map, overlay); !written) return written;
  } else {
    render::DecodingFigureOptions options;
    options.colormap = job.colormap;
    options.window = config.local ? config.window : 0;
    const auto figure = render::decodingFigure(run, h, std::max(0, job.step), job.text, options);
    if (auto written = exportFigure(figure, QGuiApplication::font(), job.size.width(), job.outPath); !written) {
      return std::unexpected(outputFailure(written.error()));
    }
  }
  return {};
}

}  // namespace

AlignStep writeAlignmentCsv(const AlignJob& job, const attn::AttentionMap& map, RenderReport& report) {
  if (job.csvPath.isEmpty()) return {};
  if (auto written = writeMatrixCsv(map, job.csvPath); !written) return std::unexpected(outputFailure(written.error()));
  report.written.append(job.csvPath);
  return {};
}

AlignStep writeAlignmentHeatmap(const AlignJob& job, const std::shared_ptr<const attn::AttentionMap>& map,
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

QString probabilitiesNote(const std::vector<float>& probabilities, const std::function<QString(int)>& label) {
  QStringList parts;
  for (std::size_t i = 0; i < probabilities.size(); ++i) {
    parts.append(u"%1 %2"_s.arg(label(int(i))).arg(double(probabilities[i]), 0, 'f', 4));
  }
  return QObject::tr("probabilities: %1").arg(parts.join(u", "_s));
}

std::expected<render::AttributionShading, RenderFailure> alignAttribution(
    const AlignJob& job,
    const std::function<attn::Result<attn::models::WordAttribution>(const attn::models::WordAttributionOptions&)>&
        compute,
    const attn::Labels& words, const std::function<QString(int)>& label, RenderReport& report) {
  render::AttributionShading shading;
  if (!job.attribution) return shading;
  AlignmentRequest request;
  request.attribution = job.attribution;
  auto result = compute(*attributionOptions(request));
  if (!result) return std::unexpected(engineFailure(RenderFailure::Kind::Usage, result.error()));
  const auto& a = *result;
  // The words by score, each way: the three largest for the label and the three largest against it.
  std::vector<int> order(std::size_t(a.scores.size()));
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = int(i);
  std::sort(order.begin(), order.end(), [&](int x, int y) { return a.scores(x) > a.scores(y); });
  const auto list = [&](auto first, auto last, bool positive) {
    QStringList out;
    for (auto it = first; it != last && out.size() < 3; ++it) {
      const float score = a.scores(*it);
      if ((positive && score <= 0.0f) || (!positive && score >= 0.0f)) break;
      out.append(
          u"%1 %2"_s
              .arg(std::size_t(*it) < words.size() ? quoted(fromStd(words[std::size_t(*it)])) : QString::number(*it))
              .arg(double(score), 0, 'f', 4));
    }
    return out.isEmpty() ? QObject::tr("none") : out.join(u", "_s);
  };
  QString note = QObject::tr("attribution (%1) of %2: logit %3; for it: %4; against it: %5")
                     .arg(fromStd(attn::models::word_method_name(*job.attribution)), quoted(label(a.label)))
                     .arg(double(a.value), 0, 'f', 4)
                     .arg(list(order.begin(), order.end(), true), list(order.rbegin(), order.rend(), false));
  if (*job.attribution == attn::models::WordAttributionMethod::IntegratedGradients) {
    note += QObject::tr("; %1 steps from the zero embedding (logit %2 there), completeness gap %3")
                .arg(kAlignmentAttributionSteps)
                .arg(double(a.baseline_value), 0, 'f', 4)
                .arg(double(a.gap), 0, 'g', 3);
  }
  report.notes.append(note);
  shading.method = *job.attribution;
  shading.steps = kAlignmentAttributionSteps;
  shading.attribution = std::make_shared<const attn::models::WordAttribution>(std::move(*result));
  return shading;
}

void addWordRunNotes(std::ptrdiff_t unknown, const std::vector<std::string>& warnings, RenderReport& report) {
  if (unknown > 0) report.notes.append(QObject::tr("%1 words not in the vocabulary (read as <unk>)").arg(unknown));
  for (const auto& w : warnings) report.notes.append(u"warning: "_s + fromStd(w));
}

AlignStep runSeq2SeqCli(const AlignJob& job, const AlignmentModel& model, const QElapsedTimer& timer,
                        RenderReport& report, const Seq2SeqDecode& decode) {
  if (job.hasPair) {
    return std::unexpected(usageFailure(
        QObject::tr("--pair is the hypothesis of an entailment model; %1 is a date (seq2seq) model").arg(model.name)));
  }
  attn::models::Seq2SeqRunner session(model.seq2seq);
  attn::models::DecodeOptions options;
  options.beam = job.beam;
  options.shaping = job.shaping;
  auto run = decode(session, options, report);
  if (!run) return std::unexpected(run.error());
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
                       .arg(model.page().text().units)
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
  if (!job.outPath.isEmpty()) {
    if (auto written = writeSeq2SeqView(job, *run, h, model.seq2seq->config(), map); !written) return written;
    report.written.append(job.outPath);
  }
  return writeAlignmentCsv(job, *map, report);
}

AlignStep runTextSeq2SeqCli(const AlignJob& job, const AlignmentModel& model, const QElapsedTimer& timer,
                            RenderReport& report) {
  return runSeq2SeqCli(job, model, timer, report,
                       [&](attn::models::Seq2SeqRunner& session, const attn::models::DecodeOptions& options,
                           RenderReport&) -> std::expected<attn::models::Seq2SeqRun, RenderFailure> {
                         if (!job.wavPath.isEmpty()) {
                           return std::unexpected(
                               usageFailure(QObject::tr("--wav is for a speech model; %1 reads text").arg(model.name)));
                         }
                         auto run = session.run(job.text, options);
                         if (!run) return std::unexpected(engineFailure(RenderFailure::Kind::Input, run.error()));
                         return std::move(*run);
                       });
}

}  // namespace attn::ui
