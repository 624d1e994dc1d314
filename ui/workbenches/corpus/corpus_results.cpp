// The Corpus tab's outcomes drawn: the heads map, the box plot and the table, the search lists, the re-run's map and
// the embedding (corpus_workbench.h).
#include "workbenches/corpus/corpus_workbench.h"

#include "render/strings.h"
#include "views/figure_map_view.h"
#include "views/heatmap_view.h"
#include "workbenches/common/busy_row.h"
#include "workbenches/corpus/corpus_views.h"

#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableView>
#include <QTreeWidget>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace attn::ui {

namespace {

QString corpusToken(const std::string& token) { return quoted(tokenText(token).trimmed()); }

}  // namespace

void CorpusWorkbench::onFinished(const attn::ui::CorpusOutcome& outcome) {
  const auto job = std::size_t(outcome.request.job);
  if (outcome.generation < latest_[job]) return;  // a newer request of its kind is out
  pending_[job] = outcome;
  scheduleApply();
}

void CorpusWorkbench::onProgress(quint64 generation, int done, int of) {
  if (generation != latest_[std::size_t(CorpusJob::Embed)]) return;
  busyRow_->setProgress(done, of, tr("Running input %1 of %2 for the embedding").arg(done).arg(of));
}

void CorpusWorkbench::applyPending() {
  for (auto& slot : pending_) {
    if (!slot) continue;
    const CorpusOutcome outcome = std::move(*slot);
    slot.reset();
    applyOne(outcome);
  }
}

void CorpusWorkbench::applyOne(const CorpusOutcome& outcome) {
  const auto job = outcome.request.job;
  answered_[std::size_t(job)] = outcome.generation;
  if (!outstanding()) busyRow_->stop();
  if (!outcome.ok()) {
    showError(outcome);
  } else {
    switch (job) {
      case CorpusJob::Open: showOverview(outcome.overview); break;
      case CorpusJob::Head: showHead(outcome); break;
      case CorpusJob::Token:
        tokenHits_ = outcome.hits;
        showHits(tokenList_, tokenHits_, true);
        if (tokenHits_.empty()) {
          note_->setText(tr("No top pair of L%1.H%2 has the query %3")
                             .arg(outcome.request.layer)
                             .arg(outcome.request.head)
                             .arg(quoted(outcome.request.token.trimmed())));
        }
        if (!tokenHits_.empty()) searchTabs_->setCurrentWidget(tokenList_);
        break;
      case CorpusJob::Rerun:
        // A full HeatmapView has no title: the tab says which head and input the map is.
        searchTabs_->setTabText(searchTabs_->indexOf(rerunView_), tr("Attention map: L%1.H%2, input %3")
                                                                      .arg(outcome.request.layer)
                                                                      .arg(outcome.request.head)
                                                                      .arg(outcome.request.input));
        rerunView_->setMap(outcome.map);
        searchTabs_->setCurrentWidget(rerunView_);
        emit statusMessage(tr("Input %1 run again: %2").arg(outcome.request.input).arg(outcome.text.left(80)), 6000);
        break;
      case CorpusJob::Embed: {
        const auto& e = *outcome.embedding;
        embeddingView_->setEmbedding(outcome.embedding, tr("L%1.H%2 \u00b7 %3 inputs \u00b7 PCA %4% + %5%")
                                                            .arg(outcome.request.layer)
                                                            .arg(outcome.request.head)
                                                            .arg(e.inputs.size())
                                                            .arg(e.embedding.explained[0] * 100.0, 0, 'f', 0)
                                                            .arg(e.embedding.explained[1] * 100.0, 0, 'f', 0));
        break;
      }
    }
  }
  shown_ = std::max(shown_, outcome.generation);
  settled_ = std::max(settled_, outcome.generation);
  emit resultShown(outcome.generation);
}

void CorpusWorkbench::showError(const CorpusOutcome& outcome) {
  const QString message = fromStd(outcome.error->message());
  if (outcome.error->kind == attn::ErrorKind::Cancelled) {
    // A cancelled open leaves the tab as openDatabase cleared it: nothing open.
    if (outcome.request.job == CorpusJob::Open) databaseLabel_->setText(tr("none open"));
    note_->setText(outcome.request.job == CorpusJob::Open
                       ? tr("Opening %1 cancelled").arg(fileNameOf(outcome.request.database))
                       : tr("Cancelled"));
    return;
  }
  lastError_ = message;
  switch (outcome.request.job) {
    case CorpusJob::Open:
      note_->setText(tr("Cannot open %1: %2").arg(fileNameOf(outcome.request.database), message));
      databaseLabel_->setText(database_.isEmpty() ? tr("none open") : fileNameOf(database_));
      emit failed(tr("Cannot open the corpus database: %1").arg(message));
      break;
    case CorpusJob::Embed: embeddingView_->clear(tr("No embedding: %1").arg(message)); [[fallthrough]];
    default: note_->setText(message); emit statusMessage(message, 10000);
  }
}

void CorpusWorkbench::showOverview(std::shared_ptr<const CorpusOverview> overview) {
  overview_ = std::move(overview);
  const auto& o = *overview_;
  summaryLabel_->setText(tr("%1 inputs (%2 empty, %3 unreadable lines; %4 truncated)\nModel: %5\n%6")
                             .arg(countText(o.counts.inputs))
                             .arg(countText(o.counts.empty))
                             .arg(countText(o.counts.invalid))
                             .arg(countText(o.counts.truncated))
                             .arg(fromStd(o.meta.model), fromStd(o.meta.model_description)));
  modelEdit_->setPlaceholderText(tr("the database's: %1").arg(fromStd(o.meta.model)));
  note_->setText(tr("Click a head in the map, or pick it here"));
  setRunSummary(tr("corpus: %1 \u00b7 %2 inputs \u00b7 %3 x %4 heads")
                    .arg(fileNameOf(database_))
                    .arg(countText(o.counts.inputs))
                    .arg(o.layers)
                    .arg(o.heads));
  headsModel_->setOverview(overview_);
  {
    const QSignalBlocker a(layerSpin_), b(headSpin_);
    layerSpin_->setRange(0, o.layers - 1);
    headSpin_->setRange(0, o.heads - 1);
  }
  layer_ = std::clamp(layer_, 0, o.layers - 1);
  head_ = std::clamp(head_, 0, o.heads - 1);
  {
    const QSignalBlocker a(layerSpin_), b(headSpin_);
    layerSpin_->setValue(layer_);
    headSpin_->setValue(head_);
  }
  showMap();
  requestHead();
  if (!tokenEdit_->text().trimmed().isEmpty()) searchToken(tokenEdit_->text());
  if (const auto n = std::exchange(embedWanted_, std::nullopt)) embed(*n);
  emit statusMessage(tr("Opened %1: %2 inputs").arg(fileNameOf(database_)).arg(countText(o.counts.inputs)), 6000);
}

void CorpusWorkbench::showMap() {
  if (!overview_) return;
  const auto& o = *overview_;
  const auto& summary = o.summaries[std::size_t(statisticIndex())];
  auto map = std::make_shared<attn::AttentionMap>();
  map->name = statistic().toStdString();
  map->weights = attn::Matrix::Zero(o.layers, o.heads);
  for (int l = 0; l < o.layers; ++l) map->row_labels.push_back(std::to_string(l));
  for (int h = 0; h < o.heads; ++h) map->col_labels.push_back(std::to_string(h));
  map->row_axis = "layer";
  map->col_axis = "head";
  map->quantity = "mean " + map->name;
  render::HeatmapFigure figure;
  figure.cellText.resize(std::size_t(o.layers) * std::size_t(o.heads));
  for (const auto& h : summary) {
    if (h.layer >= o.layers || h.head >= o.heads) continue;
    map->weights(h.layer, h.head) = float(h.mean);
    const bool selected = h.layer == layer_ && h.head == head_;
    figure.cellText[std::size_t(h.layer) * std::size_t(o.heads) + std::size_t(h.head)] =
        (selected ? u"\u25b8"_s : QString()) + QString::number(h.mean, 'f', 2);
  }
  figure.map = std::move(map);
  figure.colormap = render::Colormap::Viridis;
  figure.rangeMode = render::RangeMode::Data;
  figure.title = tr("%1: mean over %2 inputs (\u25b8 L%3.H%4)")
                     .arg(statisticBox_->currentText())
                     .arg(countText(o.counts.inputs))
                     .arg(layer_)
                     .arg(head_);
  headsMap_->setFigure(std::move(figure));
}

QString CorpusWorkbench::cellToolTip(int layer, int head) const {
  if (!overview_) return {};
  for (const auto& h : overview_->summaries[std::size_t(statisticIndex())]) {
    if (h.layer != layer || h.head != head) continue;
    return tr("layer %1, head %2\n%3: mean %4, sd %5, n %6\nmin %7, max %8")
        .arg(layer)
        .arg(head)
        .arg(statisticBox_->currentText())
        .arg(h.mean, 0, 'g', 4)
        .arg(h.sd, 0, 'g', 3)
        .arg(h.n)
        .arg(h.min, 0, 'g', 4)
        .arg(h.max, 0, 'g', 4);
  }
  return tr("layer %1, head %2: no value").arg(layer).arg(head);
}

void CorpusWorkbench::showHead(const CorpusOutcome& outcome) {
  const CorpusRequest& r = outcome.request;
  boxPlot_->setValues(outcome.values,
                      tr("L%1.H%2 \u00b7 %3 over %4 inputs")
                          .arg(r.layer)
                          .arg(r.head)
                          .arg(fromStd(r.statistic.toStdString()).replace(u'_', u' '))
                          .arg(countText(qint64(outcome.values.size()))),
                      QString(r.statistic).replace(u'_', u' '));
  searchHits_ = outcome.hits;
  showHits(searchList_, searchHits_, false);
  const QString by = r.search == attn::io::CorpusSearch::MaxWeight    ? tr("pair weight")
                     : r.search == attn::io::CorpusSearch::LowEntropy ? tr("entropy")
                                                                      : tr("first-token mass");
  searchList_->headerItem()->setText(1, by);
  if (searchTabs_->currentWidget() != tokenList_ || tokenHits_.empty()) searchTabs_->setCurrentWidget(searchList_);
}

void CorpusWorkbench::showHits(QTreeWidget* list, const std::vector<attn::io::CorpusHit>& hits, bool byWeight) {
  list->clear();
  if (byWeight) list->headerItem()->setText(1, tr("weight"));
  QList<QTreeWidgetItem*> items;
  for (const auto& h : hits) {
    auto* item = new QTreeWidgetItem;
    item->setText(0, QString::number(h.input));
    item->setText(1, QString::number(h.value, 'f', 3));
    if (h.query >= 0) {
      item->setText(2, tr("%1 \u2192 %2 (%3)")
                           .arg(corpusToken(h.query_token), corpusToken(h.key_token))
                           .arg(double(h.weight), 0, 'f', 2));
      item->setToolTip(2, tr("query %1 at %2 \u2192 key %3 at %4, weight %5")
                              .arg(corpusToken(h.query_token))
                              .arg(h.query)
                              .arg(corpusToken(h.key_token))
                              .arg(h.key)
                              .arg(double(h.weight), 0, 'f', 3));
    }
    const QString text = fromStd(h.text) + (h.pair.empty() ? QString() : u" \u2016 "_s + fromStd(h.pair));
    item->setText(3, text);
    item->setToolTip(3, text);
    item->setTextAlignment(0, Qt::AlignRight);
    item->setTextAlignment(1, Qt::AlignRight);
    items << item;
  }
  list->addTopLevelItems(items);
  if (!items.isEmpty()) list->setCurrentItem(items.front());
}

}  // namespace attn::ui
