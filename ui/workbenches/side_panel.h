// The frame every workbench tab shares: a horizontal splitter filling the tab, whose first pane is a side
// panel that scrolls vertically (never horizontally) when the window is short.
#pragma once

#include <QString>

#include <functional>

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

}  // namespace attn::ui
