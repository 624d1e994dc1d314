// Help > About: what AttnScope is and the versions of the libraries it was built with.
#pragma once

#include <QDialog>
#include <QList>
#include <QPair>
#include <QString>

namespace attn::ui {

// libraryVersions() and the window's own, QCustomPlot: the about dialog's list and attnscope --version.
QList<QPair<QString, QString>> windowLibraryVersions();

class AboutDialog : public QDialog {
  Q_OBJECT

 public:
  explicit AboutDialog(QWidget* parent = nullptr);
};

}  // namespace attn::ui
