#include "cli/patch_cli.h"

#include "render/causal_figures.h"
#include "render/figure_export.h"
#include "render/heatmap_figure.h"
#include "render/strings.h"

#include "attn/vision/image.h"

#include <QElapsedTimer>
#include <QGuiApplication>
#include <QObject>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

using namespace Qt::StringLiterals;

namespace attn::ui {

namespace am = attn::models;

// One input through the model with its activations kept: a text (its tokens with the model's special tokens) or, for
// a ViT, an image file.
attn::Result<am::TransformerRun> runInput(am::TransformerRunner& runner, const std::string& input, int position) {
  const auto& config = runner.model().config();
  am::RunOptions options;
  options.capture = true;
  options.top_k = 0;
  if (config.family == am::Family::Vit) {
    const int side = config.image_size;
    const attn::ImageSize sizes[] = {{.fit = attn::ImageSize::Fit::Exact, .width = side, .height = side}};
    auto images = attn::load_image_sizes(input, sizes);
    if (!images) return std::unexpected(images.error());
    return runner.run_image(images->front(), options);
  }
  options.logits_position = position;
  return runner.run_text(input, {}, options);
}

// --answer / --wrong as one output index: one token of the model's tokenizer (said how it tokenises otherwise), or a
// ViT's class by name or index.
std::expected<int, RenderFailure> outputIndex(const am::TransformerModel& model, const std::string& text,
                                              const char* option) {
  const auto& config = model.config();
  if (config.family == am::Family::Vit) {
    const auto named = std::find(config.labels.begin(), config.labels.end(), text);
    if (named != config.labels.end()) return int(named - config.labels.begin());
    bool whole = false;
    const int index = QString::fromStdString(text).toInt(&whole);
    const int classes = int(config.labels.size());
    if (whole && index >= 0 && index < classes) return index;
    return std::unexpected(usageFailure(
        QObject::tr("--%1: \"%2\" is not one of the model's %3 classes (a name from its config.json, or 0..%4)")
            .arg(QLatin1String(option), fromStd(text))
            .arg(classes)
            .arg(classes - 1)));
  }
  const auto* tokenizer = model.tokenizer();
  if (!tokenizer)
    return std::unexpected(usageFailure(QObject::tr("--%1: the model has no tokenizer").arg(QLatin1String(option))));
  auto tokens = tokenizer->encode(text);
  if (!tokens)
    return std::unexpected(
        usageFailure(QObject::tr("--%1: %2").arg(QLatin1String(option), fromStd(tokens.error().message()))));
  if (tokens->size() == 1) return tokens->front().id;
  QStringList pieces;
  for (const auto& t : *tokens) pieces.append(u"\"%1\""_s.arg(fromStd(tokenizer->display(t.id))));
  QString hint;
  if (!text.starts_with(' ')) {
    auto spaced = tokenizer->encode(" " + text);
    if (spaced && spaced->size() == 1)
      hint = QObject::tr(" (\" %1\", with its leading space, is one)").arg(fromStd(text));
  }
  return std::unexpected(usageFailure(QObject::tr("--%1: \"%2\" is %3 tokens here (%4), not one%5")
                                          .arg(QLatin1String(option), fromStd(text))
                                          .arg(tokens->size())
                                          .arg(pieces.join(u" + "_s), hint)));
}

namespace {

using Step = std::expected<void, RenderFailure>;

// The measured position: --position, or the last token (causal), the first [MASK] (BERT), the class token (ViT).
// `ids`: the clean text's tokens as the model reads them (empty for a ViT).
std::expected<int, RenderFailure> measuredPosition(const am::TransformerModel& model, const std::vector<int>& ids,
                                                   int asked) {
  const auto& config = model.config();
  const int n = int(std::min<attn::Index>(attn::Index(ids.size()), config.context()));
  if (config.family == am::Family::Vit) {
    if (asked > 0)
      return std::unexpected(usageFailure(QObject::tr("--position: a ViT is measured at its class token (0)")));
    return 0;
  }
  if (asked >= n)
    return std::unexpected(
        usageFailure(QObject::tr("--position: %1 is outside 0..%2 (the input's tokens)").arg(asked).arg(n - 1)));
  if (asked >= 0) return asked;
  if (config.family == am::Family::Gpt2 || config.family == am::Family::Decoder) return n - 1;
  const auto* tokenizer = model.tokenizer();
  if (tokenizer && tokenizer->specials().mask) {
    const auto mask = std::find(ids.begin(), ids.begin() + n, *tokenizer->specials().mask);
    if (mask != ids.begin() + n) return int(mask - ids.begin());
  }
  return std::unexpected(usageFailure(
      QObject::tr("--clean has no [MASK] token: a masked-language model is measured at one (or give --position P)")));
}

// The sweep as a heatmap (render::sweepFigure), its metric's clean and corrupted values in the title.
Step writeHeatmap(const PatchJob& job, const am::SweepResult& r, const am::TransformerRun& run,
                  const am::Patching& patching) {
  const auto figure = render::sweepFigure(
      r, run.attention.tokens,
      QObject::tr("Patching %1: recovery of the %2 (clean %3, corrupted %4)")
          .arg(QLatin1String(am::sweep_name(r.kind)), QLatin1String(am::metric_name(patching.metric().kind)))
          .arg(patching.clean_metric(), 0, 'f', 3)
          .arg(patching.corrupt_metric(), 0, 'f', 3));
  if (auto written = exportHeatmapFigure(figure, job.size, QGuiApplication::font(), job.outPath); !written)
    return std::unexpected(engineFailure(RenderFailure::Kind::Output, written.error()));
  return {};
}

// The five cells that recover most, largest |recovery| first, as notes.
void addTopCells(const am::SweepResult& swept, am::Sweep over, const std::vector<std::string>& tokens,
                 RenderReport& report) {
  std::vector<std::size_t> order(swept.values.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return std::abs(swept.values[a]) > std::abs(swept.values[b]); });
  for (std::size_t k = 0; k < std::min<std::size_t>(5, order.size()); ++k) {
    const std::size_t i = order[k];
    const int p = int(i % std::size_t(swept.positions)),
              h = int(i / std::size_t(swept.positions) % std::size_t(swept.heads));
    const int l = int(i / (std::size_t(swept.positions) * std::size_t(swept.heads)));
    QString where = QObject::tr("layer %1").arg(l);
    if (over == am::Sweep::Heads || over == am::Sweep::HeadsPositions) where += QObject::tr(" head %1").arg(h);
    if (over != am::Sweep::Heads) where += QObject::tr(" position %1 (%2)").arg(p).arg(fromStd(tokens[std::size_t(p)]));
    report.notes.append(QObject::tr("recovery %1 at %2").arg(swept.values[i], 0, 'f', 4).arg(where));
  }
}

// The metric with its answer and wrong tokens (each checked to be one token, or a class).
std::expected<am::MetricSpec, RenderFailure> metricFor(const am::TransformerModel& model, const PatchJob& job) {
  am::MetricSpec metric{job.metric, -1, -1};
  if (metric.kind != am::Metric::KL) {
    if (job.answer.empty()) return std::unexpected(usageFailure(QObject::tr("patch: the metric needs --answer")));
    auto answer = outputIndex(model, job.answer, "answer");
    if (!answer) return std::unexpected(answer.error());
    metric.answer = *answer;
  }
  if (metric.kind == am::Metric::LogitDiff) {
    if (job.wrong.empty()) return std::unexpected(usageFailure(QObject::tr("patch: logit-diff needs --wrong")));
    auto wrong = outputIndex(model, job.wrong, "wrong");
    if (!wrong) return std::unexpected(wrong.error());
    metric.wrong = *wrong;
  }
  return metric;
}

}  // namespace

std::expected<RenderReport, RenderFailure> runPatch(const PatchJob& job) {
  QElapsedTimer timer;
  timer.start();
  auto loaded = am::TransformerModel::load(toPath(job.modelDir));
  if (!loaded) return std::unexpected(engineFailure(RenderFailure::Kind::Input, loaded.error()));
  const am::TransformerModel& model = **loaded;
  if (!model.has_prediction_head())
    return std::unexpected(usageFailure(QObject::tr("patch: the model has no output head (%1): there are no logits to "
                                                    "measure a patch by")
                                            .arg(fromStd(model.description()))));
  auto metric = metricFor(model, job);
  if (!metric) return std::unexpected(metric.error());
  // The two texts' token counts, before anything runs (a ViT's images always give the same), and the clean text's
  // ids, where BERT's [MASK] is found.
  std::vector<int> cleanIds;
  if (const auto* tokenizer = model.tokenizer(); tokenizer && model.config().family != am::Family::Vit) {
    auto a = tokenizer->encode_for_model(job.clean), b = tokenizer->encode_for_model(job.corrupt);
    if (!a) return std::unexpected(engineFailure(RenderFailure::Kind::Input, a.error()));
    for (const auto& t : a->tokens) cleanIds.push_back(t.id);
    if (b && a->tokens.size() != b->tokens.size())
      return std::unexpected(usageFailure(QObject::tr("patch: --clean is %1 tokens and --corrupt %2: patching takes "
                                                      "each position's activation from the clean run, so both need "
                                                      "the same count")
                                              .arg(a->tokens.size())
                                              .arg(b->tokens.size())));
  }
  am::TransformerRunner runner(*loaded);
  auto position = measuredPosition(model, cleanIds, job.position);
  if (!position) return std::unexpected(position.error());
  auto clean = runInput(runner, job.clean, *position);
  if (!clean) return std::unexpected(engineFailure(RenderFailure::Kind::Input, clean.error()));
  auto corrupt = runInput(runner, job.corrupt, *position);
  if (!corrupt) return std::unexpected(engineFailure(RenderFailure::Kind::Input, corrupt.error()));
  const auto n = clean->attention.tokens.size(), m = corrupt->attention.tokens.size();
  if (n != m)
    return std::unexpected(usageFailure(QObject::tr("patch: --clean is %1 tokens and --corrupt %2: patching takes "
                                                    "each position's activation from the clean run, so both need the "
                                                    "same count")
                                            .arg(n)
                                            .arg(m)));
  auto patching = am::Patching::make(std::move(*clean), std::move(*corrupt), *metric, *position);
  if (!patching) return std::unexpected(engineFailure(RenderFailure::Kind::Input, patching.error()));

  const auto& config = model.config();
  const int total = config.layers *
                    (job.over == am::Sweep::Heads || job.over == am::Sweep::HeadsPositions ? config.heads : 1) *
                    (job.over == am::Sweep::Heads ? 1 : int(n));
  // A line on stderr at most once a second: a long sweep shows it is moving, a short one says nothing.
  QElapsedTimer sinceShown;
  sinceShown.start();
  const auto progress = [&](const am::SweepCell&, double, const am::SweepResult& so_far) {
    if (sinceShown.elapsed() >= 1000 && so_far.done < total) {
      std::fprintf(stderr, "patch: %d of %d cells\n", so_far.done, total);
      sinceShown.restart();
    }
    return true;
  };
  auto swept = patching->sweep(runner, job.over, progress);
  if (!swept) return std::unexpected(engineFailure(RenderFailure::Kind::Input, swept.error()));

  RenderReport report;
  const auto& tokens = patching->corrupt().attention.tokens;
  report.summary =
      QObject::tr("patch: %1 \u00b7 %2 tokens \u00b7 %3 (%4 cells) \u00b7 %5 clean %6, corrupted %7 \u00b7 %8 ms")
          .arg(fromStd(config.family == am::Family::Decoder ? config.decoder.model_type
                                                            : std::string(am::to_string(config.family))))
          .arg(n)
          .arg(QLatin1String(am::sweep_name(job.over)))
          .arg(swept->done)
          .arg(QLatin1String(am::metric_name(metric->kind)))
          .arg(patching->clean_metric(), 0, 'f', 3)
          .arg(patching->corrupt_metric(), 0, 'f', 3)
          .arg(double(timer.nsecsElapsed()) / 1e6, 0, 'f', 0);
  addTopCells(*swept, job.over, tokens, report);
  if (auto written = writeExport(job.csvPath, render::sweepCsv(*swept, patching->corrupt().attention.tokens)); !written)
    return std::unexpected(engineFailure(RenderFailure::Kind::Output, written.error()));
  report.written.append(job.csvPath);
  if (!job.outPath.isEmpty()) {
    if (auto drawn = writeHeatmap(job, *swept, patching->corrupt(), *patching); !drawn)
      return std::unexpected(drawn.error());
    report.written.append(job.outPath);
  }
  return report;
}

}  // namespace attn::ui
