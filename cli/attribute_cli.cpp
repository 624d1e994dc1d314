#include "cli/attribute_cli.h"

#include "cli/patch_cli.h"
#include "render/figure_export.h"
#include "render/heatmap_figure.h"
#include "render/strings.h"

#include <QGuiApplication>
#include <QObject>

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace Qt::StringLiterals;

namespace attn::ui {

namespace {

namespace am = attn::models;

// The scores (and the per-layer relevance when the method gives it) as one diverging heatmap centred on 0.
render::HeatmapFigure attributionFigure(const am::Attribution& a, const std::vector<std::string>& tokens,
                                        const QString& title) {
  auto map = std::make_shared<attn::AttentionMap>();
  const Index T = Index(a.scores.size());
  const bool layered = a.per_layer.rows() > 0;
  map->weights = layered ? a.per_layer : Eigen::Map<const Matrix>(a.scores.data(), 1, T);
  if (layered) {
    for (Index l = 0; l < a.per_layer.rows(); ++l)
      map->row_labels.push_back(l + 1 == a.per_layer.rows() ? "out" : "L" + std::to_string(l));
    map->row_axis = "residual stream entering";
  } else {
    map->row_labels.push_back("score");
    map->row_axis = "";
  }
  for (Index i = 0; i < T; ++i)
    map->col_labels.push_back(i < Index(tokens.size()) ? tokens[std::size_t(i)] : std::to_string(i));
  map->col_axis = "input token";
  map->quantity = "score";
  map->name = std::string(am::method_name(a.method));
  render::HeatmapFigure figure;
  figure.map = std::move(map);
  figure.colormap = render::Colormap::RdBu;
  figure.rangeMode = render::RangeMode::Symmetric;
  figure.title = title;
  return figure;
}

// The five tokens with the largest |score|, as notes.
void addTopTokens(const am::Attribution& a, const std::vector<std::string>& tokens, RenderReport& report) {
  std::vector<std::size_t> order(a.scores.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t x, std::size_t y) { return std::abs(a.scores[x]) > std::abs(a.scores[y]); });
  for (std::size_t k = 0; k < std::min<std::size_t>(5, order.size()); ++k) {
    const std::size_t i = order[k];
    report.notes.append(QObject::tr("score %1 at %2 (%3)")
                            .arg(double(a.scores[i]), 0, 'g', 4)
                            .arg(i)
                            .arg(i < tokens.size() ? fromStd(tokens[i]) : QString()));
  }
}

QString targetText(const am::TransformerModel& model, const am::Attribution& a, const am::AttributionTarget& t) {
  const auto& c = model.config();
  QString token = c.family == am::Family::Vit && std::size_t(a.token) < c.labels.size()
                      ? fromStd(c.labels[std::size_t(a.token)])
                  : model.tokenizer() ? u"\"%1\""_s.arg(fromStd(model.tokenizer()->display(a.token)))
                                      : QString::number(a.token);
  const QString kind =
      t.kind == am::AttributionTarget::Kind::LogProb ? QObject::tr("log-probability") : QObject::tr("logit");
  return QObject::tr("%1 of %2 at %3").arg(kind, token).arg(a.position);
}

}  // namespace

QByteArray attributionCsv(const am::Attribution& a, const std::vector<std::string>& tokens) {
  QByteArray out = "index,token,score\r\n";
  for (std::size_t i = 0; i < a.scores.size(); ++i) {
    out += QByteArray::number(qulonglong(i)) + ',' + csvField(i < tokens.size() ? tokens[i] : std::string()) + ',' +
           QByteArray::number(double(a.scores[i]), 'g', 9) + "\r\n";
  }
  return out;
}

std::expected<RenderReport, RenderFailure> runAttribute(const AttributeJob& job) {
  if (!job.outPath.isEmpty()) {
    const auto format = exportFormatFor(job.outPath);
    if (!format || isMatrixFormat(*format))
      return std::unexpected(
          usageFailure(QObject::tr("--out %1: use a .png, .svg or .pdf file name").arg(job.outPath)));
  }
  auto model = am::TransformerModel::load(toPath(job.modelDir));
  if (!model) return std::unexpected(engineFailure(RenderFailure::Kind::Input, model.error()));
  RenderReport report;
  for (const auto& w : (*model)->warnings()) report.warnings.append(fromStd(w));
  am::AttributionTarget target;
  target.position = job.position;
  if (!job.target.empty()) {
    auto token = outputIndex(**model, job.target, "target");
    if (!token) return std::unexpected(token.error());
    target.token = *token;
  }
  am::TransformerRunner runner(*model);
  auto run = runInput(runner, job.input, -1);  // the position is checked by attribute()
  if (!run) return std::unexpected(engineFailure(RenderFailure::Kind::Input, run.error()));
  auto a = am::attribute(**model, *run, target, job.options);
  if (!a) return std::unexpected(engineFailure(RenderFailure::Kind::Usage, a.error()));
  const auto& tokens = run->attention.tokens;
  QString summary =
      QObject::tr("attribute: %1 · %2 · %3 tokens · %4")
          .arg(QLatin1String(am::method_name(a->method)), fromStd((*model)->description()))
          .arg(a->scores.size())
          .arg(a->token >= 0 ? targetText(**model, *a, target) : QObject::tr("position %1").arg(a->position));
  if (std::isfinite(a->value)) summary += QObject::tr(" = %1").arg(double(a->value), 0, 'g', 6);
  if (std::isfinite(a->gap)) summary += QObject::tr(" · gap %1").arg(a->gap, 0, 'g', 3);
  report.summary = summary + QObject::tr(" · %1 s").arg(a->seconds, 0, 'f', 2);
  if (!a->note.empty()) report.notes << fromStd(a->note);
  if (a->method == am::AttributionMethod::IntegratedGradients)
    report.notes << QObject::tr("F(baseline) = %1; completeness gap |sum s - (F(x) - F(baseline))| = %2")
                        .arg(double(a->baseline_value), 0, 'g', 6)
                        .arg(a->gap, 0, 'g', 3);
  if (a->method == am::AttributionMethod::AttnLrp)
    report.notes
        << QObject::tr("conservation gap |sum s - F| = %1 (relevance the biases absorbed)").arg(a->gap, 0, 'g', 3);
  addTopTokens(*a, tokens, report);
  if (auto written = writeExport(job.csvPath, attributionCsv(*a, tokens)); !written)
    return std::unexpected(outputFailure(written.error()));
  report.written << job.csvPath;
  if (!job.outPath.isEmpty()) {
    const QString title =
        QObject::tr("%1 · %2").arg(QLatin1String(am::method_name(a->method)), targetText(**model, *a, target));
    const auto figure = attributionFigure(*a, tokens, title);
    if (auto written = exportHeatmapFigure(figure, job.size, QGuiApplication::font(), job.outPath); !written)
      return std::unexpected(engineFailure(RenderFailure::Kind::Output, written.error()));
    report.written << job.outPath;
  }
  return report;
}

}  // namespace attn::ui
