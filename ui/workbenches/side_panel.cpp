#include "workbenches/side_panel.h"

#include <QLabel>
#include <QMimeData>

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

bool InputEdit::canInsertFromMimeData(const QMimeData* source) const {
  return !source->hasUrls() && QPlainTextEdit::canInsertFromMimeData(source);
}

attn::Error exportError(const QString& path, const QString& reason) {
  return attn::Error{path.toStdString(), -1, -1, reason.toStdString()};
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

}  // namespace attn::ui
