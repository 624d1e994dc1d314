// The Corpus tab's own views: the selected head's distribution of a statistic (a QCPStatisticalBox), the query/key
// embedding as a scatter with a tool tip per point, and the table model of every head's means (numbers sort as
// numbers through SortRole).
#pragma once

#include "session/corpus_section.h"
#include "workbenches/corpus/corpus_worker.h"

#include <QAbstractTableModel>
#include <QWidget>

#include <memory>
#include <optional>
#include <string>
#include <vector>

class QCustomPlot;
class QCPStatisticalBox;

namespace attn::ui {

// A token as read: the tokenizers' word-start marks (U+2581, U+0120) as spaces.
QString tokenText(const std::string& token);

class CorpusBoxPlot : public QWidget {
  Q_OBJECT

 public:
  explicit CorpusBoxPlot(QWidget* parent = nullptr);
  // One box of `values` (quartiles, whiskers at 1.5 IQR, the values beyond them as outliers); empty: cleared.
  void setValues(const std::vector<float>& values, const QString& title, const QString& axis);
  int count() const { return count_; }
  QCPStatisticalBox* box() const { return box_; }
  QCustomPlot* plot() const { return plot_; }

 private:
  QCustomPlot* plot_ = nullptr;
  QCPStatisticalBox* box_ = nullptr;
  int count_ = 0;
};

class CorpusEmbeddingView : public QWidget {
  Q_OBJECT

 public:
  explicit CorpusEmbeddingView(QWidget* parent = nullptr);
  void setEmbedding(std::shared_ptr<const CorpusEmbedding> embedding, const QString& title);
  void setColour(CorpusSection::Colour colour);
  void clear(const QString& text);
  int pointCount() const;
  const CorpusEmbedding* embedding() const { return embedding_.get(); }
  // "query 'she' · input 12, position 3" and the tokens around it, the point's in bold (rich text).
  QString pointToolTip(int index) const;
  // The point nearest `pos` (plot widget coordinates) within 8 pixels.
  std::optional<int> pointAt(QPointF pos) const;
  QCustomPlot* plot() const { return plot_; }

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void redraw();

  QCustomPlot* plot_ = nullptr;
  std::shared_ptr<const CorpusEmbedding> embedding_;
  CorpusSection::Colour colour_ = CorpusSection::Colour::Position;
  QString title_;
};

class CorpusHeadsModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  static constexpr int SortRole = Qt::UserRole;
  using QAbstractTableModel::QAbstractTableModel;
  void setOverview(std::shared_ptr<const CorpusOverview> overview);
  // Column 0 layer, 1 head, then each statistic's mean in corpus_statistics() order.
  int rowCount(const QModelIndex& parent = QModelIndex()) const override;
  int columnCount(const QModelIndex& parent = QModelIndex()) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  std::shared_ptr<const CorpusOverview> overview_;
};

}  // namespace attn::ui
