// HeadStatsModel: one row per (layer, head) of attn::analysis::head_statistics, for a sortable table
// (put it behind a QSortFilterProxyModel with sortRole() = Qt::UserRole: numbers sort as numbers).
#pragma once

#include "attn/analysis/attention_analysis.h"

#include <QAbstractTableModel>
#include <QPoint>

#include <vector>

namespace attn::ui {

class HeadStatsModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { Layer, Head, Entropy, MeanDistance, MaxWeight, FirstMass, SpecialMass, ColumnCount };
  static constexpr int SortRole = Qt::UserRole;

  explicit HeadStatsModel(QObject* parent = nullptr);

  void setStatistics(std::vector<attn::analysis::HeadStats> stats);
  const std::vector<attn::analysis::HeadStats>& statistics() const { return stats_; }
  // The row of (layer, head), -1 when absent.
  int rowOf(int layer, int head) const;
  const attn::analysis::HeadStats* at(int row) const;
  // "[CLS]/BOS" or "class token" (ViT) and "[SEP]" in the mass columns' titles.
  void setSpecialNames(const QString& first, const QString& special);
  // Ablated heads (x = head, y = layer): their rows have a light magenta background and say so in a tooltip.
  void setAblated(std::vector<QPoint> heads);

  int rowCount(const QModelIndex& parent = QModelIndex()) const override;
  int columnCount(const QModelIndex& parent = QModelIndex()) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  std::vector<attn::analysis::HeadStats> stats_;
  std::vector<QPoint> ablated_;
  QString firstName_;
  QString specialName_;
};

}  // namespace attn::ui
