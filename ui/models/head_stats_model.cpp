#include "models/head_stats_model.h"
#include "render/strings.h"

#include <QColor>

#include <algorithm>
#include <cmath>
#include <limits>

using namespace Qt::StringLiterals;

namespace attn::ui {

HeadStatsModel::HeadStatsModel(QObject* parent)
    : QAbstractTableModel(parent), firstName_(u"[CLS]/BOS"_s), specialName_(u"[SEP]"_s) {}

void HeadStatsModel::setStatistics(std::vector<attn::analysis::HeadStats> stats) {
  beginResetModel();
  stats_ = std::move(stats);
  endResetModel();
}

void HeadStatsModel::setSpecialNames(const QString& first, const QString& special) {
  firstName_ = first;
  specialName_ = special;
  emit headerDataChanged(Qt::Horizontal, FirstMass, SpecialMass);
}

int HeadStatsModel::rowOf(int layer, int head) const {
  for (std::size_t i = 0; i < stats_.size(); ++i) {
    if (stats_[i].layer == layer && stats_[i].head == head) return int(i);
  }
  return -1;
}

const attn::analysis::HeadStats* HeadStatsModel::at(int row) const {
  return row >= 0 && row < int(stats_.size()) ? &stats_[std::size_t(row)] : nullptr;
}

int HeadStatsModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(stats_.size()); }

int HeadStatsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant HeadStatsModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const auto& s = stats_[std::size_t(index.row())];
  const auto number = [&](int column) -> double {
    switch (column) {
      case Layer: return s.layer;
      case Head: return s.head;
      case Entropy: return s.entropy;
      case MeanDistance: return s.mean_distance;
      case MaxWeight: return s.max_weight;
      case FirstMass: return s.first_mass;
      case SpecialMass: return s.special_mass;
      default: return 0.0;
    }
  };
  switch (role) {
    case Qt::DisplayRole:
      if (index.column() == Layer || index.column() == Head) return int(number(index.column()));
      if (index.column() == Entropy && s.max_entropy > 0 && std::isfinite(s.entropy)) {
        return u"%1 (%2%)"_s.arg(double(s.entropy), 0, 'f', 3).arg(100.0 * s.entropy / s.max_entropy, 0, 'f', 0);
      }
      return statText(number(index.column()), index.column() == MeanDistance ? 2 : 3);
    case SortRole: {
      const double v = number(index.column());  // undefined (NaN) sorts first, and sorts at all
      return std::isfinite(v) ? v : -std::numeric_limits<double>::infinity();
    }
    case Qt::TextAlignmentRole: return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::BackgroundRole:
      if (std::find(ablated_.begin(), ablated_.end(), QPoint(s.head, s.layer)) != ablated_.end()) {
        return QColor(255, 200, 240);
      }
      return {};
    case Qt::ToolTipRole:
      if ((index.column() == Entropy || index.column() == MeanDistance) && !std::isfinite(number(index.column()))) {
        return tr("Not defined: this head has weights outside [0, 1], so its rows are not distributions");
      }
      if (index.column() == Entropy) {
        return tr("Mean row entropy %1 nats; a uniform row has %2")
            .arg(double(s.entropy), 0, 'f', 4)
            .arg(double(s.max_entropy), 0, 'f', 4);
      }
      return {};
    default: return {};
  }
}

QVariant HeadStatsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal) return QAbstractTableModel::headerData(section, orientation, role);
  if (role == Qt::DisplayRole) {
    switch (section) {
      case Layer: return tr("Layer");
      case Head: return tr("Head");
      case Entropy: return tr("Entropy");
      // Two lines each: the table fits the tab's half of the window without cutting columns.
      case MeanDistance: return tr("Mean\ndistance");
      case MaxWeight: return tr("Max\nweight");
      case FirstMass: return tr("Mass on\n%1").arg(firstName_);
      case SpecialMass: return tr("Mass on\n%1").arg(specialName_);
      default: return {};
    }
  }
  if (role == Qt::ToolTipRole) {
    switch (section) {
      case Entropy: return tr("Mean entropy of the attention rows (nats); low = focused heads");
      case MeanDistance:
        return tr("Attention-weighted mean distance between query and key (tokens, or patches for ViT)");
      case MaxWeight: return tr("The largest single weight of the head");
      case FirstMass: return tr("Mean attention mass on position 0 (%1)").arg(firstName_);
      case SpecialMass: return tr("Mean attention mass on the other special positions (%1)").arg(specialName_);
      default: return {};
    }
  }
  return {};
}

void HeadStatsModel::setAblated(std::vector<QPoint> heads) {
  if (heads == ablated_) return;
  ablated_ = std::move(heads);
  if (!stats_.empty()) emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1), {Qt::BackgroundRole});
}

}  // namespace attn::ui
