#include "workbenches/corpus/corpus_views.h"

#include "render/strings.h"
#include "views/qcustomplot.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <map>

using namespace Qt::StringLiterals;

namespace attn::ui {

QString tokenText(const std::string& token) {
  QString t = fromStd(token);
  t.replace(QChar(0x2581), u' ');
  t.replace(QChar(0x0120), u' ');
  return t;
}

namespace {

QCustomPlot* makePlot(QWidget* parent) {
  auto* layout = new QVBoxLayout(parent);
  layout->setContentsMargins(0, 0, 0, 0);
  auto* plot = new Plot(parent);
  plot->setMinimumSize(200, 160);
  plot->plotLayout()->insertRow(0);
  plot->plotLayout()->addElement(0, 0, new QCPTextElement(plot, QString(), QFont(plot->font().family(), 10)));
  layout->addWidget(plot);
  return plot;
}

void setPlotTitle(QCustomPlot* plot, const QString& title) {
  if (auto* text = qobject_cast<QCPTextElement*>(plot->plotLayout()->element(0, 0))) text->setText(title);
}

double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double at = q * double(sorted.size() - 1);
  const auto lo = std::size_t(std::floor(at)), hi = std::min(sorted.size() - 1, lo + 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (at - double(lo));
}

}  // namespace

CorpusBoxPlot::CorpusBoxPlot(QWidget* parent) : QWidget(parent) {
  plot_ = makePlot(this);
  box_ = new QCPStatisticalBox(plot_->xAxis, plot_->yAxis);
  box_->setBrush(QColor(0x44, 0x77, 0xaa, 90));
  box_->setOutlierStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QColor(0x44, 0x77, 0xaa), 4));
  plot_->xAxis->setTicks(false);
  plot_->xAxis->setRange(0, 2);
}

void CorpusBoxPlot::setValues(const std::vector<float>& values, const QString& title, const QString& axis) {
  box_->data()->clear();
  count_ = int(values.size());
  setPlotTitle(plot_, title);
  plot_->yAxis->setLabel(axis);
  if (!values.empty()) {
    std::vector<double> v(values.begin(), values.end());
    std::sort(v.begin(), v.end());
    const double q1 = quantile(v, 0.25), median = quantile(v, 0.5), q3 = quantile(v, 0.75);
    const double reach = 1.5 * (q3 - q1);
    QVector<double> outliers;
    double low = q1, high = q3;
    for (const double x : v) {
      if (x < q1 - reach || x > q3 + reach) {
        outliers.push_back(x);
      } else {
        low = std::min(low, x);
        high = std::max(high, x);
      }
    }
    box_->addData(1.0, low, q1, median, q3, high, outliers);
    const double pad = std::max(1e-6, (v.back() - v.front()) * 0.08);
    plot_->yAxis->setRange(v.front() - pad, v.back() + pad);
  }
  plot_->replot();
}

CorpusEmbeddingView::CorpusEmbeddingView(QWidget* parent) : QWidget(parent) {
  plot_ = makePlot(this);
  plot_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  plot_->setMouseTracking(true);
  plot_->installEventFilter(this);
  plot_->xAxis->setLabel(tr("component 1"));
  plot_->yAxis->setLabel(tr("component 2"));
  plot_->legend->setVisible(false);
  plot_->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
}

void CorpusEmbeddingView::clear(const QString& text) {
  embedding_.reset();
  title_ = text;
  redraw();
}

void CorpusEmbeddingView::setEmbedding(std::shared_ptr<const CorpusEmbedding> embedding, const QString& title) {
  embedding_ = std::move(embedding);
  title_ = title;
  redraw();
}

void CorpusEmbeddingView::setColour(CorpusSection::Colour colour) {
  colour_ = colour;
  redraw();
}

int CorpusEmbeddingView::pointCount() const { return embedding_ ? int(embedding_->embedding.points.size()) : 0; }

void CorpusEmbeddingView::redraw() {
  plot_->clearGraphs();
  plot_->xAxis->setLabel(colour_ == CorpusSection::Colour::Position ? tr("component 1 \u00b7 light: early, dark: late")
                                                                    : tr("component 1 \u00b7 a colour per token"));
  plot_->legend->setVisible(false);
  setPlotTitle(plot_, title_);
  if (!embedding_) {
    plot_->replot();
    return;
  }
  // One graph per kind (query, key) and colour: five shades of position (light: early) or twelve hues of token.
  std::map<std::pair<bool, int>, QCPGraph*> graphs;
  auto colourOf = [this](const attn::analysis::QkPoint& p) {
    const auto& tokens = embedding_->tokens[std::size_t(p.input)];
    if (colour_ == CorpusSection::Colour::Kind) {
      const QString t = tokenText(tokens[std::size_t(p.position)]).trimmed().toLower();
      return int(qHash(t) % 12u);
    }
    const double at = tokens.size() > 1 ? double(p.position) / double(tokens.size() - 1) : 0.0;
    return std::min(4, int(at * 5.0));
  };
  auto graphFor = [&](bool key, int c) {
    auto& g = graphs[{key, c}];
    if (g) return g;
    g = plot_->addGraph();
    QColor colour = colour_ == CorpusSection::Colour::Kind ? QColor::fromHsv(c * 30, 200, 210)
                    : key                                  ? QColor::fromHsv(330, 90 + c * 40, 245 - c * 30)
                                                           : QColor::fromHsv(140, 90 + c * 40, 215 - c * 30);
    g->setLineStyle(QCPGraph::lsNone);
    g->setScatterStyle(QCPScatterStyle(key ? QCPScatterStyle::ssTriangle : QCPScatterStyle::ssDisc, colour,
                                       key ? QColor(Qt::transparent) : colour, key ? 7 : 6));
    g->setPen(QPen(colour));
    g->removeFromLegend();
    return g;
  };
  for (const auto& p : embedding_->embedding.points) graphFor(p.key, colourOf(p))->addData(p.x, p.y);
  // The legend: one query and one key entry.
  for (const bool key : {false, true}) {
    for (auto& [k, g] : graphs) {
      if (k.first != key) continue;
      g->setName(key ? tr("keys") : tr("queries"));
      g->addToLegend();
      break;
    }
  }
  plot_->legend->setVisible(true);
  plot_->rescaleAxes();
  plot_->xAxis->scaleRange(1.08);
  plot_->yAxis->scaleRange(1.08);
  plot_->replot();
}

std::optional<int> CorpusEmbeddingView::pointAt(QPointF pos) const {
  if (!embedding_) return std::nullopt;
  std::optional<int> best;
  double bestDistance = 8.0 * 8.0;
  const auto& points = embedding_->embedding.points;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const double dx = plot_->xAxis->coordToPixel(points[i].x) - pos.x();
    const double dy = plot_->yAxis->coordToPixel(points[i].y) - pos.y();
    if (dx * dx + dy * dy <= bestDistance) {
      bestDistance = dx * dx + dy * dy;
      best = int(i);
    }
  }
  return best;
}

QString CorpusEmbeddingView::pointToolTip(int index) const {
  if (!embedding_ || index < 0 || index >= pointCount()) return {};
  const auto& p = embedding_->embedding.points[std::size_t(index)];
  const auto& tokens = embedding_->tokens[std::size_t(p.input)];
  QString context;
  const int from = std::max(0, p.position - 6), to = std::min(int(tokens.size()), p.position + 7);
  for (int i = from; i < to; ++i) {
    const QString t = tokenText(tokens[std::size_t(i)]).toHtmlEscaped();
    context += i == p.position ? u"<b><u>"_s + t + u"</u></b>"_s : t;
  }
  const QString token = tokenText(tokens[std::size_t(p.position)]).toHtmlEscaped();
  return tr("%1 %2 \u00b7 input %3, position %4<br>%5%6%7")
      .arg(p.key ? tr("key") : tr("query"), quoted(token))
      .arg(embedding_->inputs[std::size_t(p.input)])
      .arg(p.position)
      .arg(from > 0 ? u"\u2026"_s : QString(), context, to < int(tokens.size()) ? u"\u2026"_s : QString());
}

bool CorpusEmbeddingView::eventFilter(QObject* watched, QEvent* event) {
  if (watched == plot_ && (event->type() == QEvent::ToolTip || event->type() == QEvent::MouseMove)) {
    const QPoint pos = event->type() == QEvent::ToolTip ? static_cast<QHelpEvent*>(event)->pos()
                                                        : static_cast<QMouseEvent*>(event)->position().toPoint();
    const auto index = pointAt(pos);
    if (index) {
      QToolTip::showText(plot_->mapToGlobal(pos), pointToolTip(*index), plot_);
    } else {
      QToolTip::hideText();
    }
    if (event->type() == QEvent::ToolTip) return true;
  }
  return QWidget::eventFilter(watched, event);
}

void CorpusHeadsModel::setOverview(std::shared_ptr<const CorpusOverview> overview) {
  beginResetModel();
  overview_ = std::move(overview);
  endResetModel();
}

int CorpusHeadsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !overview_ ? 0 : overview_->layers * overview_->heads;
}

int CorpusHeadsModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : 2 + int(attn::io::corpus_statistics().size());
}

QVariant CorpusHeadsModel::data(const QModelIndex& index, int role) const {
  if (!overview_ || !index.isValid() || (role != Qt::DisplayRole && role != SortRole && role != Qt::ToolTipRole)) {
    return {};
  }
  const int row = index.row(), column = index.column();
  if (column == 0) return row / overview_->heads;
  if (column == 1) return row % overview_->heads;
  const auto& summary = overview_->summaries[std::size_t(column - 2)];
  const auto found = std::find_if(summary.begin(), summary.end(), [&](const attn::io::HeadSummary& h) {
    return h.layer == row / overview_->heads && h.head == row % overview_->heads;
  });
  if (found == summary.end() || found->n == 0) return role == SortRole ? QVariant(-1e300) : QVariant(u"\u2013"_s);
  if (role == SortRole) return found->mean;
  if (role == Qt::ToolTipRole) {
    return tr("mean %1, sd %2, min %3, max %4 over %5 inputs")
        .arg(found->mean, 0, 'g', 4)
        .arg(found->sd, 0, 'g', 3)
        .arg(found->min, 0, 'g', 4)
        .arg(found->max, 0, 'g', 4)
        .arg(countText(found->n));
  }
  return QString::number(found->mean, 'f', 3);
}

QVariant CorpusHeadsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
    return QAbstractTableModel::headerData(section, orientation, role);
  if (section == 0) return tr("layer");
  if (section == 1) return tr("head");
  const auto names = attn::io::corpus_statistics();
  return section - 2 < int(names.size()) ? fromStd(names[std::size_t(section - 2)]).replace(u'_', u' ') : QVariant();
}

}  // namespace attn::ui
