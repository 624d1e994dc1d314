// HeatmapView's cells: the map given, pooled to the pixels it is drawn on when it has more cells than pixels,
// the titles that say so, and what a drawn cell holds (its tooltip, the source rows and columns of its signals).
#include "views/heatmap_view.h"

#include "render/map_pooling.h"
#include "views/plot_data.h"
#include "views/qcustomplot.h"

#include <algorithm>
#include <optional>
#include <vector>

using namespace Qt::StringLiterals;

namespace attn::ui {

namespace {

QStringList labelsFor(const attn::Labels& labels, Index count) {
  QStringList out;
  out.reserve(qsizetype(count));
  for (Index i = 0; i < count; ++i) {
    out.append(std::size_t(i) < labels.size() ? render::tokenLabel(labels[std::size_t(i)]) : QString::number(i));
  }
  return out;
}

QString quotedToken(const attn::Labels& labels, attn::Index index) {
  if (index < 0 || std::size_t(index) >= labels.size()) return {};
  const auto& token = labels[std::size_t(index)];
  return u" \u201c"_s + QString::fromUtf8(token.data(), qsizetype(token.size())) + u"\u201d"_s;
}

// The source cells [begin, end) of a drawn cell of a pooled axis.
struct Bin {
  attn::Index begin = 0, end = 0;
};
Bin binOf(attn::Index k, const std::vector<attn::Index>& starts) {
  if (starts.empty()) return {k, k + 1};
  return {starts[std::size_t(k)], starts[std::size_t(k) + 1]};
}

// Fewer cells than were drawn, or more cells than pixels: a drawn axis of `shown` cells is pooled again to fit
// `need` (its cells or its pixels, the fewer); a small gain is not worth it (and labels that change the margins
// could otherwise re-pool back and forth).
bool worthRepooling(attn::Index shown, attn::Index need) {
  return shown > need || need - shown > std::max<attn::Index>(4, need / 50);
}

// "0–7 “the” … “cat”": a bin's source positions and its first and last tokens.
QString binText(const Bin& bin, const attn::Labels& tokens) {
  if (bin.end - bin.begin <= 1) return QString::number(bin.begin) + quotedToken(tokens, bin.begin);
  return u"%1\u2013%2%3 \u2026%4"_s.arg(bin.begin)
      .arg(bin.end - 1)
      .arg(quotedToken(tokens, bin.begin), quotedToken(tokens, bin.end - 1));
}

}  // namespace

void HeatmapView::setMap(std::shared_ptr<const attn::AttentionMap> map) {
  source_ = std::move(map);
  base_.reset();
  map_.reset();
  setHover(std::nullopt);
  if (!source_ || source_->weights.size() == 0) {
    clear();
    return;
  }
  // Past kMaxCellsPerSide a side, the map the pixels are pooled from is itself pooled once (a Lab map of 8,192
  // words would be 67 million cells, and pooling it again at every resize would take a tenth of a second).
  distribution_ = source_->quantity == "weight" &&
                  (source_->pooled ? (source_->weights.array() >= 0.0f && source_->weights.array() <= 1.0f).all()
                                   : render::isDistribution(source_->weights));
  base_ = render::pooledToCells(source_, {kMaxCellsPerSide, kMaxCellsPerSide});
  if (!fitToPixels()) showCells(base_);
  colorMap_->setVisible(true);
  resetRanges();
  updateEmptyState();
  plot()->replot(QCustomPlot::rpQueuedReplot);
}

bool HeatmapView::fitToPixels() {
  if (!base_) return false;
  // The cells' area as laid out; a hidden view (laid out at whatever size it had) draws the map as it is until
  // it is shown (showEvent replots).
  if (!plot()->isVisible() && map_) return false;
  const QRect area = plot()->isVisible() ? plot()->axisRect()->rect() : QRect();
  const attn::Index rows = base_->weights.rows(), cols = base_->weights.cols();
  const auto [needRows, needCols] = render::cellsForPixels(rows, cols, area.size());
  if (map_ && !worthRepooling(map_->weights.rows(), needRows) && !worthRepooling(map_->weights.cols(), needCols)) {
    return false;
  }
  if (map_ && map_->weights.rows() == needRows && map_->weights.cols() == needCols) return false;
  showCells(render::pooledToCells(base_, {needRows, needCols}));
  return true;
}

void HeatmapView::showCells(std::shared_ptr<const attn::AttentionMap> shown) {
  const QCPRange columns = plot()->xAxis2->range(), rows = plot()->yAxis->range();
  const attn::Index oldRows = map_ ? map_->weights.rows() : 0, oldCols = map_ ? map_->weights.cols() : 0;
  const auto& given = *source_;
  const auto original = [&](attn::Index attn::MapPooling::*axis) {
    return given.pooled ? std::optional<attn::Index>((*given.pooled).*axis) : std::nullopt;
  };
  rowStarts_ = render::composedStarts(original(&attn::MapPooling::rows), given.weights.rows(), base_->weights.rows(),
                                      shown->weights.rows());
  colStarts_ = render::composedStarts(original(&attn::MapPooling::cols), given.weights.cols(), base_->weights.cols(),
                                      shown->weights.cols());
  if (shown->pooled && shown != source_) {
    // Said from the unpooled map: its shape and tokens, whatever pooled it on the way.
    auto relabelled = std::make_shared<attn::AttentionMap>(*shown);
    relabelled->pooled->rows = rowStarts_.empty() ? given.weights.rows() : rowStarts_.back();
    relabelled->pooled->cols = colStarts_.empty() ? given.weights.cols() : colStarts_.back();
    relabelled->pooled->row_tokens = given.pooled ? given.pooled->row_tokens : given.row_labels;
    relabelled->pooled->col_tokens = given.pooled ? given.pooled->col_tokens : given.col_labels;
    shown = std::move(relabelled);
  }
  map_ = std::move(shown);
  render::fillColorMapData(*colorMap_->data(), map_->weights);
  const QString rowAxis = QString::fromStdString(map_->row_axis), colAxis = QString::fromStdString(map_->col_axis);
  poolNote_.clear();
  QString rowTitle = rowAxis, colTitle = colAxis;
  if (const auto& pooled = map_->pooled) {
    // More cells than pixels: the axes (a tile: its title) say how many each drawn cell holds, and how.
    rowTitle = render::pooledAxisTitle(rowAxis, tr("rows"), pooled->pool, rowStarts_);
    colTitle = render::pooledAxisTitle(colAxis, tr("columns"), pooled->pool, colStarts_);
    poolNote_ =
        tr(" \u00b7 %1 %2\u00d7%3")
            .arg(render::poolName(pooled->pool), render::cellsPerBin(rowStarts_), render::cellsPerBin(colStarts_));
  }
  if (style_ == Style::Full) {
    plot()->yAxis->setLabel(rowTitle);
    plot()->xAxis2->setLabel(colTitle);
  }
  // The colour bar names what the cells hold ("weight", "forget gate", "activation", "score").
  if (colorScale_ && style_ == Style::Full) colorScale_->setLabel(QString::fromStdString(map_->quantity));
  fitTitle();
  setTickLabels(labelsFor(map_->row_labels, map_->weights.rows()), labelsFor(map_->col_labels, map_->weights.cols()));
  updateColors();
  if (oldRows > 0 && oldCols > 0 && (oldRows != map_->weights.rows() || oldCols != map_->weights.cols())) {
    // The same part of the map stays in view at the new cell count (a zoom survives a resize).
    const auto rescale = [](QCPRange r, attn::Index from, attn::Index to) {
      const double f = double(to) / double(from);
      return QCPRange((r.lower + 0.5) * f - 0.5, (r.upper + 0.5) * f - 0.5);
    };
    clamping_ = true;
    plot()->xAxis2->setRange(rescale(columns, oldCols, map_->weights.cols()));
    plot()->yAxis->setRange(rescale(rows, oldRows, map_->weights.rows()));
    clamping_ = false;
    clampRanges();
  }
}

QPoint HeatmapView::sourceCell(QPoint cell) const {
  return QPoint(int(binOf(cell.x(), colStarts_).begin), int(binOf(cell.y(), rowStarts_).begin));
}

QString HeatmapView::cellToolTip(int row, int column) const {
  if (!map_ || row < 0 || column < 0 || row >= map_->weights.rows() || column >= map_->weights.cols()) return {};
  if (const auto& pooled = map_->pooled) {
    const Bin rows = binOf(row, rowStarts_);
    const Bin cols = binOf(column, colStarts_);
    return tr("%1 %2 \u2192 %3 %4\n%5 %6 of %7 \u00d7 %8 weights")
        .arg(rowNoun_, binText(rows, pooled->row_tokens), columnNoun_, binText(cols, pooled->col_tokens),
             pooled->pool == attn::Pool::Max ? tr("max") : tr("mean"), render::exactValue(map_->weights(row, column)))
        .arg(rows.end - rows.begin)
        .arg(cols.end - cols.begin);
  }
  return tr("%1 %2%3 \u2192 %4 %5%6\nweight %7")
      .arg(rowNoun_)
      .arg(row)
      .arg(quotedToken(map_->row_labels, row), columnNoun_)
      .arg(column)
      .arg(quotedToken(map_->col_labels, column), render::exactValue(map_->weights(row, column)));
}

}  // namespace attn::ui
