#include "workbenches/side_panel.h"

#include <QFrame>
#include <QHBoxLayout>
#include <QScrollArea>
#include <QSplitter>

namespace attn::ui {

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

}  // namespace attn::ui
