#include "window/help_dialogs.h"

#include "workbenches/common/workbench.h"

#include <QAction>
#include <QDialogButtonBox>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QSet>
#include <QShortcut>
#include <QTableWidget>
#include <QTextBrowser>
#include <QVBoxLayout>

using namespace Qt::StringLiterals;

#include <algorithm>

namespace attn::ui {
namespace {

// "Open &Model…" -> "Open Model"; "&&" stays one "&".
QString plainText(QString text) {
  text.replace(u"&&"_s, u"\u0001"_s).remove(u'&').replace(u'\u0001', u'&');
  if (text.endsWith(u'\u2026')) text.chop(1);
  if (text.endsWith(u"..."_s)) text.chop(3);
  return text.trimmed();
}

// The tab a widget sits in ("Transformer"), or "Window" when it is the window's own.
QString placeOf(const QWidget* widget) {
  for (const QWidget* w = widget; w != nullptr; w = w->parentWidget()) {
    if (const auto* workbench = qobject_cast<const Workbench*>(w)) return plainText(workbench->identity().title);
  }
  return QObject::tr("Window");
}

void addEntries(QList<ShortcutEntry>& entries, const QList<QKeySequence>& keys, const QString& what,
                const QString& where) {
  for (const QKeySequence& key : keys) {
    if (key.isEmpty()) continue;
    const QString text = key.toString(QKeySequence::NativeText);
    // The same key doing the same in several tabs (Esc cancels in each) is one row naming them all.
    const auto same =
        std::ranges::find_if(entries, [&](const ShortcutEntry& e) { return e.keys == text && e.what == what; });
    if (same == entries.end()) {
      entries.append({text, what, where});
    } else if (!same->where.split(u", "_s).contains(where)) {
      same->where += u", "_s + where;
    }
  }
}

QString actionText(const QAction* action) {
  const QString text = plainText(action->text());
  return text.isEmpty() ? action->statusTip() : text;
}

// The menus' actions in the order the menus show them, as "File" or "View › Colour Map".
void walkMenu(const QMenu* menu, const QString& where, QList<ShortcutEntry>& entries, QSet<const QAction*>& seen) {
  for (const QAction* action : menu->actions()) {
    seen.insert(action);
    if (const QMenu* sub = action->menu()) {
      walkMenu(sub, where + u" \u203a "_s + plainText(sub->title()), entries, seen);
    } else {
      addEntries(entries, action->shortcuts(), actionText(action), where);
    }
  }
}

}  // namespace

QList<ShortcutEntry> registeredShortcuts(const QWidget& root) {
  QList<ShortcutEntry> entries;
  QSet<const QAction*> seen;
  if (const auto* bar = root.findChild<QMenuBar*>()) {
    for (const QAction* top : bar->actions()) {
      if (const QMenu* menu = top->menu()) walkMenu(menu, plainText(menu->title()), entries, seen);
    }
  }
  for (const QAction* action : root.findChildren<QAction*>()) {
    if (seen.contains(action) || action->shortcuts().isEmpty()) continue;
    addEntries(entries, action->shortcuts(), actionText(action), placeOf(qobject_cast<QWidget*>(action->parent())));
  }
  for (const QShortcut* shortcut : root.findChildren<QShortcut*>()) {
    const auto* owner = qobject_cast<const QWidget*>(shortcut->parent());
    addEntries(entries, {shortcut->key()}, shortcut->whatsThis(), placeOf(owner));
  }
  return entries;
}

QList<ShortcutEntry> viewKeys() {
  const auto t = [](const char* text) { return QObject::tr(text); };
  return {
      {t("Left, Right"), t("The previous or next output step (the step slider)"), t("Alignment")},
      {t("Left, Right, Home, End"), t("Move across the caption's words"), t("Captioning")},
      {t("Arrows, Home, End"), t("Move across the grid of maps"), t("Mechanism Lab")},
      {t("Arrows, Return"), t("Move across the model view's heads; Return opens one"), t("Transformer")},
      {t("Arrows, Page Up, Page Down"), t("Pan the long map"), t("Transformer")},
      {t("+, \u2212, Home or 0"), t("Zoom the long map in, out, to the whole map"), t("Transformer")},
      {t("Ctrl+Up, Ctrl+Down"), t("Move the long map's selected query"), t("Transformer")},
      {t("Ctrl+click, A"), t("Ablate the head under the pointer, or the selected one (again: restore it)"),
       t("Transformer, model view")},
      {t("Escape"), t("Restore every ablated head"), t("Transformer, model view")},
      {t("Arrows (Shift: by 10)"), t("Nudge the glimpse by a pixel"), t("Glimpse, on the image")},
      {t("+, \u2212"), t("Shrink or grow the glimpse (stride or scale)"), t("Glimpse, on the image")},
      {t("[, ]"), t("Narrow or widen the Gaussian filters (sigma)"), t("Glimpse, on the image")},
      {t("Comma, period (Shift: by 10\u00b0)"), t("Rotate the STN similarity glimpse by a degree"),
       t("Glimpse, on the image")},
      {t("Home"), t("Fit the image to the canvas"), t("Glimpse, on the image")},
      {t("Alt+letter"), t("The control whose letter is underlined; no two things shown at once share one"),
       t("Every tab")},
  };
}

ShortcutsDialog::ShortcutsDialog(const QWidget& window, QWidget* parent) : QDialog(parent) {
  setWindowTitle(tr("Keyboard Shortcuts"));
  auto* layout = new QVBoxLayout(this);
  auto* note = new QLabel(tr("The menus' and tabs' shortcuts as this window defines them, then the keys the views "
                             "read when they have focus."),
                          this);
  note->setWordWrap(true);
  layout->addWidget(note);
  const QList<ShortcutEntry> registered = registeredShortcuts(window);
  const QList<ShortcutEntry> views = viewKeys();
  table_ = new QTableWidget(int(registered.size() + views.size()), 3, this);
  table_->setHorizontalHeaderLabels({tr("Keys"), tr("Does"), tr("Where")});
  table_->verticalHeader()->hide();
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  int row = 0;
  for (const QList<ShortcutEntry>* list : {&registered, &views}) {
    for (const ShortcutEntry& entry : *list) {
      table_->setItem(row, 0, new QTableWidgetItem(entry.keys));
      table_->setItem(row, 1, new QTableWidgetItem(entry.what));
      table_->setItem(row, 2, new QTableWidgetItem(entry.where));
      ++row;
    }
  }
  // The keys and the place as wide as they need, the description the rest, wrapped: no sideways scrolling.
  table_->setWordWrap(true);
  table_->setTextElideMode(Qt::ElideNone);
  table_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setSectionResizeMode(1, QHeaderView::Stretch);
  table_->horizontalHeader()->setSectionResizeMode(2, QHeaderView::ResizeToContents);
  table_->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  layout->addWidget(table_);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  layout->addWidget(buttons);
  resize(860, 600);
}

QList<GlossaryEntry> glossary() {
  const auto t = [](const char* text) { return QObject::tr(text); };
  return {
      {t("Attention weight"),
       t("The share of a query's attention that goes to one key: a softmax over the keys, so every row of a map "
         "sums to 1.")},
      {t("Query, key, value"),
       t("Each token is projected three ways. A token's query is compared with every key (a dot product scaled by "
         "1/\u221ad) to give its weights; its output is the weighted average of the values.")},
      {t("Head"),
       t("One of the parallel attention computations of a layer, with its own query, key and value projections "
         "and so its own map; heads often specialise (the previous token, a separator, a repeated pattern).")},
      {t("Layer"),
       t("One block of a transformer: attention, then a feed-forward network, each added back to the residual "
         "stream. Layer 0 attends over the embeddings, each later layer over the previous layer's output.")},
      {t("Layer mean"), t("The average of a layer's heads' maps, cell by cell.")},
      {t("Causal mask"),
       t("In a decoder (GPT-2, Llama) a token attends only to itself and earlier tokens, so its maps are "
         "lower-triangular.")},
      {t("Entropy"),
       t("H = \u2212\u03a3 p log p over one row of weights, in nats: 0 when all the weight is on one key, log n when "
         "it is spread evenly over n keys. A head's entropy is the mean over its rows: low means focused.")},
      {t("Attention rollout"),
       t("Abnar & Zuidema (2020): the layers' maps multiplied from the first layer up, each mixed with the "
         "identity for the residual connection and renormalised, to estimate how much each position draws on each "
         "input token through the whole network.")},
      {t("Attention sink"),
       t("A token (often the first, or a separator) that receives much of the attention of most queries whatever "
         "their content: a place for weight a head does not need. The sink mass is the share it receives.")},
      {t("Induction head"),
       t("A head that attends to the token after an earlier occurrence of the current token, so that the model "
         "can continue a repeated sequence (Olsson et al. 2022); the bundled induction-gpt2 shows one.")},
      {t("Logit lens"),
       t("The model's final normalisation and output projection applied to the hidden state after each layer: "
         "which next token each layer would predict, and how that changes with depth.")},
      {t("Max-pooling in the maps"),
       t("When a map has more cells than the view has pixels, each pixel shows the largest weight among the cells "
         "it covers, so one sharp weight is never averaged away; the axes say how many cells a pixel holds.")},
      {t("Alignment"),
       t("In a sequence-to-sequence model, each output step's attention over the source tokens (Bahdanau et al. "
         "2015); the rows of the Alignment tab's heatmap.")},
      {t("Saliency"),
       t("How much each input token counts for an output. Attention weights are one reading; the Alignment tab "
         "compares it with readings from an LSTM's gates and a CNN's max pooling of the same review.")},
      {t("Soft and hard attention"),
       t("Show, Attend and Tell (Xu et al. 2015): soft attention takes the weighted average of the image regions, "
         "hard attention samples one region by its weight.")},
      {t("Glimpse"),
       t("A window read out of an image: a grid of Gaussian filters (DRAW, Gregor et al. 2015) or an affine "
         "sampling grid (spatial transformer, Jaderberg et al. 2015).")},
  };
}

GlossaryDialog::GlossaryDialog(QWidget* parent) : QDialog(parent) {
  setWindowTitle(tr("Glossary"));
  auto* layout = new QVBoxLayout(this);
  auto* text = new QTextBrowser(this);
  QString html = u"<dl>"_s;
  for (const GlossaryEntry& entry : glossary()) {
    html += u"<dt><b>%1</b></dt><dd>%2</dd>"_s.arg(entry.term.toHtmlEscaped(), entry.meaning.toHtmlEscaped());
  }
  html += u"</dl>"_s;
  text->setHtml(html);
  layout->addWidget(text);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  layout->addWidget(buttons);
  resize(640, 600);
}

}  // namespace attn::ui
