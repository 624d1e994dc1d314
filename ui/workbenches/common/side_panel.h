// The frame every workbench tab shares: a horizontal splitter filling the tab, whose first pane is a side
// panel that scrolls vertically (never horizontally) when the window is short.
#pragma once

#include "attn/error.h"
#include "views/export.h"
#include "workbenches/common/model_files.h"

#include <QPlainTextEdit>
#include <QSpinBox>
#include <QString>

#include <functional>
#include <vector>

class QComboBox;
class QGroupBox;
class QLabel;
class QPushButton;
class QScrollArea;
class QSpinBox;
class QSplitter;
class QTreeWidget;
class QWidget;

namespace attn::ui {

struct SidePanelFrame {
  QSplitter* splitter = nullptr;
  QScrollArea* scroll = nullptr;  // the side panel's pane; add it to the splitter where it belongs
  QWidget* panel = nullptr;       // the panel itself, named `panelName`
};

// `build` fills the panel before it goes into its scroll area (QScrollArea needs the layout first).
SidePanelFrame makeSidePanelFrame(QWidget* owner, const QString& panelName, const std::function<void(QWidget*)>& build);

// The usual workbench: the side panel on the left (as wide as its contents ask, at least 320 px) and, filled
// by `buildArea`, the main area on the right taking every extra pixel.
SidePanelFrame makeWorkbenchFrame(QWidget* owner, const QString& panelName,
                                  const std::function<void(QWidget*)>& buildPanel,
                                  const std::function<void(QWidget*)>& buildArea);

// A text box for a workbench's input that leaves file drops to the main window (which opens them).
class InputEdit : public QPlainTextEdit {
 public:
  using QPlainTextEdit::QPlainTextEdit;

 protected:
  bool canInsertFromMimeData(const QMimeData* source) const override;
};

// A spin box that offers only the divisors of a number (the heads of a model of dimension d): the arrows and
// Page Up/Down step from one divisor to the next, typing another value is not accepted, and on leaving the
// field it becomes the nearest divisor. Dividend 0 lifts the restriction. setValue() itself is not checked,
// so a session or file naming an invalid value still reaches the engine, which says what is wrong.
class DivisorSpinBox : public QSpinBox {
 public:
  using QSpinBox::QSpinBox;
  void setDividend(int dividend);
  int dividend() const { return dividend_; }
  bool allows(int value) const { return dividend_ <= 0 || (value > 0 && dividend_ % value == 0); }
  // The allowed value nearest `value` within the range (the smaller one on a tie).
  int nearestAllowed(int value) const;
  void stepBy(int steps) override;

 protected:
  QValidator::State validate(QString& input, int& pos) const override;
  void fixup(QString& input) const override;
  StepEnabled stepEnabled() const override;

 private:
  int dividend_ = 0;
};

// The strips above a workbench's views: a red one for an input or a file refused (the previous view
// stays), a yellow one for warnings (truncation and the like). Plain, selectable text; hidden until used.
enum class MessageStrip { Error, Warning };
QLabel* makeMessageStrip(QWidget* parent, const QString& objectName, MessageStrip kind);

// The model group of the tabs that open AttnScope's own models (Alignment, Captioning): the bundled models
// in a box, the open model's description, Open Folder… (the caller connects it) and About This Model… (off
// until a model with a card opens). Object names are `prefix` + "Model", "ModelDescription", "About".
struct ModelGroup {
  QGroupBox* group = nullptr;
  QComboBox* box = nullptr;
  QLabel* description = nullptr;
  QPushButton* openFolder = nullptr;
  QPushButton* about = nullptr;
};
ModelGroup makeModelGroup(QWidget* parent, const QString& prefix, const QString& boxToolTip,
                          const QString& folderToolTip, const QString& aboutToolTip);
// The bundled models by name (a separator between families: the part of the name before " · "), or
// `noneText` in a disabled box when there are none.
void fillModelBox(QComboBox* box, const std::vector<BundledModel>& models, const QString& noneText);
// Makes the open model the box's current entry: its bundled `key`, or its folder `path`, added as an entry
// of its own ("name (folder)") when it is not listed yet. Emits nothing.
void selectOpenModel(QComboBox* box, const QString& key, const QString& path, const QString& name);
// The group shows the model that opened: its entry, its description (and a folder's path), About when it
// has a model card.
void showOpenModel(const ModelGroup& group, const QString& key, const QString& path, const QString& name,
                   const QString& description, bool hasCard);
// After a failed open: the box back on the model still open (none: left as it is), and the message for the
// error strip ("Cannot open X: reason", and that the previous model stays when there is one).
void reselectOpenModel(QComboBox* box, const QString& key, const QString& path);
QString openFailedMessage(const QString& what, const QString& reason, const QString& previousModel);
// A model card (Markdown) in a window of its own.
void showModelCard(QWidget* parent, const QString& name, const QString& markdown);

// The decoding group: the beam width (1 = greedy, the special value) and the hypotheses the search ended
// with ("#", "log p" and `outputHeader`, best first, one selectable row each). Object names are `prefix` +
// "Beam" and "Hypotheses".
struct DecodingGroup {
  QGroupBox* group = nullptr;
  QSpinBox* beam = nullptr;
  QTreeWidget* hypotheses = nullptr;
};
DecodingGroup makeDecodingGroup(QWidget* parent, const QString& prefix, int maxBeam, const QString& beamToolTip,
                                const QString& outputHeader, const QString& listToolTip);
struct HypothesisRow {
  float logProb = 0.0f;
  QString text;
  bool finished = true;  // false: "…" after the text (stopped at the length limit)
  QString toolTip;
};
// Fills the list and makes row `current` current, without the list's signals.
void fillHypothesisList(QTreeWidget* list, const std::vector<HypothesisRow>& rows, int current);
// Makes row `index` current without the list's signals.
void setCurrentHypothesis(QTreeWidget* list, int index);

}  // namespace attn::ui
