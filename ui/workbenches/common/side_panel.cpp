#include "workbenches/common/side_panel.h"

#include "render/alignment_render.h"

#include <QComboBox>
#include <QCoreApplication>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QFormLayout>
#include <QFrame>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMimeData>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QTextBrowser>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cstdlib>

using namespace Qt::StringLiterals;

namespace attn::ui {
namespace {

// This file's texts, under the translation context "SidePanel" (Qt's SidePanel::tr() outside a QObject).
struct SidePanel {
  Q_DECLARE_TR_FUNCTIONS(SidePanel)
};

}  // namespace

SidePanelFrame makeSidePanelFrame(QWidget* owner, const QString& panelName,
                                  const std::function<void(QWidget*)>& build) {
  SidePanelFrame f;
  auto* layout = new QHBoxLayout(owner);
  layout->setContentsMargins(0, 0, 0, 0);
  f.splitter = new QSplitter(Qt::Horizontal, owner);
  f.splitter->setChildrenCollapsible(false);
  layout->addWidget(f.splitter);

  f.scroll = new QScrollArea(f.splitter);
  f.scroll->setWidgetResizable(true);
  f.scroll->setFrameShape(QFrame::NoFrame);
  f.scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  f.panel = new QWidget(f.scroll);
  f.panel->setObjectName(panelName);
  build(f.panel);
  f.scroll->setWidget(f.panel);
  return f;
}

SidePanelFrame makeWorkbenchFrame(QWidget* owner, const QString& panelName,
                                  const std::function<void(QWidget*)>& buildPanel,
                                  const std::function<void(QWidget*)>& buildArea) {
  SidePanelFrame f = makeSidePanelFrame(owner, panelName, buildPanel);
  f.scroll->setMinimumWidth(std::max(f.panel->sizeHint().width() + 12, 320));
  auto* area = new QWidget(f.splitter);
  buildArea(area);
  f.splitter->addWidget(f.scroll);
  f.splitter->addWidget(area);
  f.splitter->setStretchFactor(0, 0);
  f.splitter->setStretchFactor(1, 1);
  return f;
}

bool InputEdit::canInsertFromMimeData(const QMimeData* source) const {
  return !source->hasUrls() && QPlainTextEdit::canInsertFromMimeData(source);
}

QLabel* makeMessageStrip(QWidget* parent, const QString& objectName, MessageStrip kind) {
  auto* label = new QLabel(parent);
  label->setObjectName(objectName);
  label->setWordWrap(true);
  label->setTextFormat(Qt::PlainText);
  label->setTextInteractionFlags(Qt::TextSelectableByMouse);
  label->setStyleSheet(kind == MessageStrip::Error
                           ? QStringLiteral("QLabel { background: #fde2e1; color: #8a1111; border: 1px solid #e8a1a0; "
                                            "border-radius: 3px; padding: 4px; }")
                           : QStringLiteral("QLabel { background: #fff4cc; color: #5c4500; border: 1px solid #e6cf7a; "
                                            "border-radius: 3px; padding: 4px; }"));
  label->setVisible(false);
  return label;
}

ModelGroup makeModelGroup(QWidget* parent, const QString& prefix, const QString& boxToolTip,
                          const QString& folderToolTip, const QString& aboutToolTip) {
  ModelGroup g;
  g.group = new QGroupBox(SidePanel::tr("Model"), parent);
  auto* layout = new QVBoxLayout(g.group);
  auto* form = new QFormLayout();
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  g.box = new QComboBox(g.group);
  g.box->setObjectName(prefix + u"Model"_s);
  g.box->setToolTip(boxToolTip);
  form->addRow(SidePanel::tr("&Model:"), g.box);
  layout->addLayout(form);
  g.description = new QLabel(SidePanel::tr("No model open."), g.group);
  g.description->setObjectName(prefix + u"ModelDescription"_s);
  g.description->setWordWrap(true);
  g.description->setTextInteractionFlags(Qt::TextSelectableByMouse);
  g.description->setForegroundRole(QPalette::PlaceholderText);
  layout->addWidget(g.description);
  auto* buttons = new QHBoxLayout();
  g.openFolder = new QPushButton(SidePanel::tr("Open Folder\u2026"), g.group);
  g.openFolder->setToolTip(folderToolTip);
  g.about = new QPushButton(SidePanel::tr("A&bout This Model\u2026"), g.group);
  g.about->setObjectName(prefix + u"About"_s);
  g.about->setToolTip(aboutToolTip);
  g.about->setEnabled(false);
  buttons->addWidget(g.openFolder);
  buttons->addWidget(g.about);
  layout->addLayout(buttons);
  return g;
}

void selectOpenModel(QComboBox* box, const QString& key, const QString& path, const QString& name) {
  const QSignalBlocker block(box);
  int index = key.isEmpty() ? -1 : box->findData(key);
  if (index < 0) {
    index = box->findData(path);
    if (index < 0) {
      if (!box->isEnabled()) {  // it only said that the build bundles no models
        box->clear();
        box->setEnabled(true);
      } else {
        box->insertSeparator(box->count());
      }
      box->addItem(SidePanel::tr("%1 (folder)").arg(name), path);
      index = box->count() - 1;
      box->setItemData(index, QDir::toNativeSeparators(path), Qt::ToolTipRole);
    }
  }
  box->setCurrentIndex(index);
}

void showOpenModel(const ModelGroup& group, const QString& key, const QString& path, const QString& name,
                   const QString& description, bool hasCard) {
  selectOpenModel(group.box, key, path, name);
  group.description->setText(key.isEmpty() ? description + u"\n"_s + QDir::toNativeSeparators(path) : description);
  group.description->setToolTip(key.isEmpty() ? path : SidePanel::tr("Bundled with AttnScope (%1)").arg(key));
  group.about->setEnabled(hasCard);
}

void reselectOpenModel(QComboBox* box, const QString& key, const QString& path) {
  const QSignalBlocker block(box);
  const int index = box->findData(key.isEmpty() ? path : key);
  if (index >= 0) box->setCurrentIndex(index);
}

QString openFailedMessage(const QString& what, const QString& reason, const QString& previousModel) {
  return previousModel.isEmpty() ? SidePanel::tr("Cannot open %1: %2").arg(what, reason)
                                 : SidePanel::tr("Cannot open %1: %2\nThe previous model (%3) stays loaded.")
                                       .arg(what, reason, previousModel);
}

void showModelCard(QWidget* parent, const QString& name, const QString& markdown) {
  auto* dialog = new QDialog(parent);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  dialog->setWindowTitle(SidePanel::tr("About %1").arg(name));
  auto* layout = new QVBoxLayout(dialog);
  auto* browser = new QTextBrowser(dialog);
  browser->setOpenExternalLinks(true);
  browser->setMarkdown(markdown);
  layout->addWidget(browser);
  auto* box = new QDialogButtonBox(QDialogButtonBox::Close, dialog);
  QObject::connect(box, &QDialogButtonBox::rejected, dialog, &QDialog::reject);
  layout->addWidget(box);
  dialog->resize(720, 600);
  dialog->open();
}

void fillModelBox(QComboBox* box, const std::vector<BundledModel>& models, const QString& noneText) {
  const QSignalBlocker block(box);
  box->clear();
  QString family;
  for (const auto& model : models) {
    const QString prefix = model.name.section(u" \u00b7 "_s, 0, 0);
    if (!family.isEmpty() && prefix != family) box->insertSeparator(box->count());
    family = prefix;
    box->addItem(model.name, model.key);
    box->setItemData(box->count() - 1, model.key, Qt::ToolTipRole);
  }
  if (box->count() == 0) {
    box->addItem(noneText);
    box->setEnabled(false);
  }
}

DecodingGroup makeDecodingGroup(QWidget* parent, const QString& prefix, int maxBeam, const QString& beamToolTip,
                                const QString& outputHeader, const QString& listToolTip) {
  DecodingGroup g;
  g.group = new QGroupBox(SidePanel::tr("Decoding"), parent);
  auto* layout = new QVBoxLayout(g.group);
  auto* form = new QFormLayout();
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  g.beam = new QSpinBox(g.group);
  g.beam->setObjectName(prefix + u"Beam"_s);
  g.beam->setRange(1, maxBeam);
  g.beam->setValue(1);
  g.beam->setSpecialValueText(SidePanel::tr("1 (greedy)"));
  g.beam->setToolTip(beamToolTip);
  form->addRow(SidePanel::tr("Beam &width:"), g.beam);
  layout->addLayout(form);
  auto* label = new QLabel(SidePanel::tr("H&ypotheses, best first:"), g.group);
  auto* list = new QTreeWidget(g.group);
  list->setObjectName(prefix + u"Hypotheses"_s);
  list->setColumnCount(3);
  list->setHeaderLabels({SidePanel::tr("#"), SidePanel::tr("log p"), outputHeader});
  list->setRootIsDecorated(false);
  list->setUniformRowHeights(true);
  list->setAllColumnsShowFocus(true);
  list->setSelectionMode(QAbstractItemView::SingleSelection);
  list->header()->setStretchLastSection(true);
  list->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  list->header()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
  list->setFixedHeight(list->fontMetrics().lineSpacing() * 7 + 12);
  list->setToolTip(listToolTip);
  label->setBuddy(list);
  layout->addWidget(label);
  layout->addWidget(list);
  g.hypotheses = list;
  return g;
}

void fillHypothesisList(QTreeWidget* list, const std::vector<HypothesisRow>& rows, int current) {
  const QSignalBlocker block(list);
  list->clear();
  for (std::size_t h = 0; h < rows.size(); ++h) {
    auto* item = new QTreeWidgetItem(list);
    item->setText(0, QString::number(h));
    item->setText(1, render::logProbText(rows[h].logProb));
    item->setText(2, rows[h].text + (rows[h].finished ? QString() : u" \u2026"_s));
    item->setTextAlignment(1, Qt::AlignRight | Qt::AlignVCenter);
    item->setToolTip(2, rows[h].toolTip);
  }
  if (list->topLevelItemCount() > 0) {
    list->setCurrentItem(list->topLevelItem(std::clamp(current, 0, list->topLevelItemCount() - 1)));
  }
}

void setCurrentHypothesis(QTreeWidget* list, int index) {
  if (list->currentItem() == list->topLevelItem(index)) return;
  const QSignalBlocker block(list);
  list->setCurrentItem(list->topLevelItem(index));
}

void DivisorSpinBox::setDividend(int dividend) { dividend_ = std::max(0, dividend); }

int DivisorSpinBox::nearestAllowed(int value) const {
  for (int distance = 0; distance <= maximum() - minimum(); ++distance) {
    if (value - distance >= minimum() && value - distance <= maximum() && allows(value - distance))
      return value - distance;
    if (value + distance >= minimum() && value + distance <= maximum() && allows(value + distance))
      return value + distance;
  }
  return value;
}

void DivisorSpinBox::stepBy(int steps) {
  int v = value();
  const int direction = steps > 0 ? 1 : -1;
  for (int left = std::abs(steps); left > 0; --left) {
    int next = v + direction;
    while (next >= minimum() && next <= maximum() && !allows(next)) next += direction;
    if (next < minimum() || next > maximum()) break;
    v = next;
  }
  setValue(v);
}

QValidator::State DivisorSpinBox::validate(QString& input, int& pos) const {
  const QValidator::State state = QSpinBox::validate(input, pos);
  if (state != QValidator::Acceptable) return state;
  return allows(valueFromText(input)) ? QValidator::Acceptable : QValidator::Intermediate;
}

void DivisorSpinBox::fixup(QString& input) const {
  bool ok = false;
  const int typed = input.toInt(&ok);
  input = textFromValue(nearestAllowed(ok ? typed : value()));
}

QAbstractSpinBox::StepEnabled DivisorSpinBox::stepEnabled() const {
  StepEnabled enabled = StepNone;
  for (int v = value() + 1; v <= maximum(); ++v) {
    if (allows(v)) {
      enabled |= StepUpEnabled;
      break;
    }
  }
  for (int v = value() - 1; v >= minimum(); --v) {
    if (allows(v)) {
      enabled |= StepDownEnabled;
      break;
    }
  }
  return enabled;
}

}  // namespace attn::ui
