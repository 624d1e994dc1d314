// Help > About: what AttnScope is and the versions of the libraries it was built with.
#pragma once

#include <QDialog>

namespace attn::ui {

class AboutDialog : public QDialog {
  Q_OBJECT

 public:
  explicit AboutDialog(QWidget* parent = nullptr);
};

}  // namespace attn::ui
