// The frame every workbench tab shares: a horizontal splitter filling the tab, whose first pane is a side
// panel that scrolls vertically (never horizontally) when the window is short.
#pragma once

#include "attn/error.h"

#include <QPlainTextEdit>
#include <QString>

#include <functional>

class QLabel;
class QScrollArea;
class QSplitter;
class QWidget;

namespace attn::ui {

struct SidePanelFrame {
  QSplitter* splitter = nullptr;
  QScrollArea* scroll = nullptr;  // the side panel's pane; add it to the splitter where it belongs
  QWidget* panel = nullptr;       // the panel itself, named `panelName`
};

// `build` fills the panel before it goes into its scroll area (QScrollArea needs the layout first).
SidePanelFrame makeSidePanelFrame(QWidget* owner, const QString& panelName,
                                  const std::function<void(QWidget*)>& build);

// A text box for a workbench's input that leaves file drops to the main window (which opens them).
class InputEdit : public QPlainTextEdit {
 public:
  using QPlainTextEdit::QPlainTextEdit;

 protected:
  bool canInsertFromMimeData(const QMimeData* source) const override;
};

// An export refused: the file and the reason, as the exporters' own errors read.
attn::Error exportError(const QString& path, const QString& reason);

// The strips above a workbench's views: a red one for an input or a file refused (the previous view
// stays), a yellow one for warnings (truncation and the like). Plain, selectable text; hidden until used.
enum class MessageStrip { Error, Warning };
QLabel* makeMessageStrip(QWidget* parent, const QString& objectName, MessageStrip kind);

}  // namespace attn::ui
