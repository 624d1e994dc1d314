#include "render/causal_figures.h"

#include "render/figure_export.h"

#include <QObject>
#include <QStringList>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

using namespace Qt::StringLiterals;

namespace attn::ui::render {

namespace am = attn::models;
using attn::analysis::HeadDetection;
using attn::analysis::HeadDetector;
using attn::analysis::HeadScore;

namespace {

int rowHeadsOf(const am::SweepResult& r) { return r.kind == am::Sweep::HeadsPositions ? r.heads : 1; }
int columnsOf(const am::SweepResult& r) { return r.kind == am::Sweep::Heads ? r.heads : r.positions; }

}  // namespace

QByteArray sweepCsv(const am::SweepResult& r, const std::vector<std::string>& tokens) {
  QByteArray out = "layer";
  if (r.kind == am::Sweep::Heads) {
    for (int h = 0; h < r.heads; ++h) out += ',' + QByteArray::number(h);
  } else {
    for (int p = 0; p < r.positions; ++p)
      out += ',' + csvField(std::size_t(p) < tokens.size() ? tokens[std::size_t(p)] : std::to_string(p));
  }
  out += "\r\n";
  char number[32];
  const int rowHeads = rowHeadsOf(r);
  for (int l = 0; l < r.layers; ++l) {
    for (int h = 0; h < rowHeads; ++h) {
      out += rowHeads > 1 ? QByteArray::number(l) + '.' + QByteArray::number(h) : QByteArray::number(l);
      for (int k = 0; k < columnsOf(r); ++k) {
        const double v = r.kind == am::Sweep::Heads ? r.at(l, k, 0) : r.at(l, h, k);
        std::snprintf(number, sizeof number, "%.9g", v);
        out += ',';
        out += number;
      }
      out += "\r\n";
    }
  }
  return out;
}

HeatmapFigure sweepFigure(const am::SweepResult& r, const std::vector<std::string>& tokens, const QString& title) {
  auto map = std::make_shared<attn::AttentionMap>();
  const bool heads = r.kind == am::Sweep::Heads;
  const int rowHeads = rowHeadsOf(r);
  const int cols = columnsOf(r);
  map->weights = attn::Matrix::Zero(r.layers * rowHeads, cols);
  for (int l = 0; l < r.layers; ++l) {
    for (int h = 0; h < rowHeads; ++h) {
      map->row_labels.push_back(rowHeads > 1 ? std::to_string(l) + "." + std::to_string(h) : std::to_string(l));
      for (int k = 0; k < cols; ++k) {
        const double v = heads ? r.at(l, k, 0) : r.at(l, h, k);
        map->weights(l * rowHeads + h, k) = std::isfinite(v) ? float(v) : 0.0f;
      }
    }
  }
  for (int k = 0; k < cols; ++k)
    map->col_labels.push_back(heads || std::size_t(k) >= tokens.size() ? std::to_string(k) : tokens[std::size_t(k)]);
  map->row_axis = rowHeads > 1 ? "layer.head" : "layer";
  map->col_axis = heads ? "head" : "position";
  map->quantity = "recovery";
  map->name = am::sweep_name(r.kind);
  HeatmapFigure figure;
  figure.map = std::move(map);
  figure.colormap = Colormap::RdBu;
  figure.rangeMode = RangeMode::Symmetric;
  figure.title = title;
  return figure;
}

am::SweepCell sweepCellAt(const am::SweepResult& r, int row, int column) {
  const int rowHeads = rowHeadsOf(r);
  am::SweepCell cell;
  cell.layer = row / rowHeads;
  if (r.kind == am::Sweep::Heads) {
    cell.head = column;
  } else {
    cell.position = column;
    if (r.kind == am::Sweep::HeadsPositions) cell.head = row % rowHeads;
  }
  return cell;
}

float detectorScore(const HeadScore& s, HeadDetector d) {
  switch (d) {
    case HeadDetector::PreviousToken: return s.previous_token;
    case HeadDetector::DuplicateToken: return s.duplicate_token;
    case HeadDetector::Induction: return s.induction;
    case HeadDetector::Sink: return s.sink;
  }
  return 0.0f;
}

QString detectorTitle(HeadDetector d) {
  switch (d) {
    case HeadDetector::PreviousToken: return QObject::tr("previous token");
    case HeadDetector::DuplicateToken: return QObject::tr("duplicate token");
    case HeadDetector::Induction: return QObject::tr("induction (cells: offset)");
    case HeadDetector::Sink: return QObject::tr("sink (first token)");
  }
  return {};
}

HeatmapFigure detectorFigure(const HeadDetection& found, HeadDetector d) {
  auto map = std::make_shared<attn::AttentionMap>();
  map->name = attn::analysis::to_string(d);
  map->weights = attn::Matrix::Zero(found.layers, found.heads);
  for (int l = 0; l < found.layers; ++l) map->row_labels.push_back(std::to_string(l));
  for (int h = 0; h < found.heads; ++h) map->col_labels.push_back(std::to_string(h));
  map->row_axis = "layer";
  map->col_axis = "head";
  map->quantity = "score";
  HeatmapFigure figure;
  for (const auto& s : found.scores) {
    if (s.layer < found.layers && s.head < found.heads) map->weights(s.layer, s.head) = detectorScore(s, d);
  }
  if (d == HeadDetector::Induction) {
    figure.cellText.resize(std::size_t(found.layers) * std::size_t(found.heads));
    for (const auto& s : found.scores) {
      if (s.layer < found.layers && s.head < found.heads) {
        figure.cellText[std::size_t(s.layer) * std::size_t(found.heads) + std::size_t(s.head)] =
            u"+%1"_s.arg(s.induction_offset);
      }
    }
  }
  figure.map = std::move(map);
  figure.colormap = Colormap::Viridis;
  figure.rangeMode = RangeMode::Unit;
  figure.title = detectorTitle(d);
  figure.squareCells = true;
  return figure;
}

QByteArray headsCsv(const HeadDetection& found, const std::vector<HeadDetector>& detectors) {
  const auto asked = [&](HeadDetector d) {
    return std::find(detectors.begin(), detectors.end(), d) != detectors.end();
  };
  const auto score = [](float v) { return QString::number(double(v), 'f', 6); };
  QString out = u"layer,head,previous_token,duplicate_token,induction,induction_offset,sink\r\n"_s;
  const auto cell = [&](HeadDetector d, const QString& text) { return asked(d) ? text : QString(); };
  for (const auto& s : found.scores) {
    out += QStringList{QString::number(s.layer),
                       QString::number(s.head),
                       cell(HeadDetector::PreviousToken, score(s.previous_token)),
                       cell(HeadDetector::DuplicateToken, score(s.duplicate_token)),
                       cell(HeadDetector::Induction, score(s.induction)),
                       cell(HeadDetector::Induction, QString::number(s.induction_offset)),
                       cell(HeadDetector::Sink, score(s.sink))}
               .join(u',') +
           u"\r\n"_s;
  }
  return out.toUtf8();
}

}  // namespace attn::ui::render
