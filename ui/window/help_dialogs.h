// Help > Keyboard Shortcuts and Help > Glossary. The shortcut list is read from the window itself (every QAction
// and QShortcut that has keys, with the menu or tab it belongs to), so it cannot fall behind the code; only the
// keys the views read in their own keyPressEvent (the long map, the Glimpse canvas, the grids) are listed by hand
// beside it. The glossary says in a sentence or two what the words on the tabs mean.
#pragma once

#include <QDialog>
#include <QList>
#include <QString>

class QTableWidget;

namespace attn::ui {

struct ShortcutEntry {
  QString keys;   // as the platform writes them ("Ctrl+Shift+O")
  QString what;   // the action's text without its mnemonic or ellipsis
  QString where;  // the menu ("File"), the tab ("Transformer"), or "Window"
};

// Every QAction and QShortcut under `root` with a key sequence (one entry per sequence), in menu order for the
// menus' actions. An action without text says its status tip; a QShortcut says its whatsThis.
QList<ShortcutEntry> registeredShortcuts(const QWidget& root);
// The keys the views handle themselves (keyPressEvent), which no QAction carries.
QList<ShortcutEntry> viewKeys();

struct GlossaryEntry {
  QString term;
  QString meaning;
};
QList<GlossaryEntry> glossary();

class ShortcutsDialog : public QDialog {
  Q_OBJECT

 public:
  // Lists registeredShortcuts(window) then viewKeys().
  explicit ShortcutsDialog(const QWidget& window, QWidget* parent = nullptr);
  QTableWidget* table() const { return table_; }

 private:
  QTableWidget* table_ = nullptr;
};

class GlossaryDialog : public QDialog {
  Q_OBJECT

 public:
  explicit GlossaryDialog(QWidget* parent = nullptr);
};

}  // namespace attn::ui
