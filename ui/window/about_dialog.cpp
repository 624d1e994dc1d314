#include "window/about_dialog.h"

#include "app/versions.h"
#include "views/qcustomplot.h"

#include <QDialogButtonBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QIcon>
#include <QLabel>
#include <QVBoxLayout>

using namespace Qt::StringLiterals;

namespace attn::ui {

QList<QPair<QString, QString>> windowLibraryVersions() {
  auto libraries = libraryVersions();
  libraries.insert(3, {u"QCustomPlot"_s, QStringLiteral(QCUSTOMPLOT_VERSION_STR)});
  return libraries;
}

AboutDialog::AboutDialog(QWidget* parent) : QDialog(parent) {
  setWindowTitle(tr("About AttnScope"));
  auto* layout = new QVBoxLayout(this);

  auto* header = new QHBoxLayout();
  auto* icon = new QLabel(this);
  icon->setPixmap(QIcon(u":/attnscope/icons/attnscope.svg"_s).pixmap(64, 64));
  header->addWidget(icon, 0, Qt::AlignTop);
  auto* title = new QLabel(this);
  title->setTextFormat(Qt::RichText);
  title->setWordWrap(true);
  title->setText(tr("<h2>AttnScope %1</h2><p>Looks inside attention: every map a mechanism or model "
                    "produces, drawn with the tokens it came from.</p>")
                     .arg(appVersion().toHtmlEscaped()));
  header->addWidget(title, 1);
  layout->addLayout(header);

  auto* versions = new QFormLayout();
  for (const auto& [name, version] : windowLibraryVersions()) {
    auto* value = new QLabel(version, this);
    value->setTextInteractionFlags(Qt::TextSelectableByMouse);
    versions->addRow(name + u':', value);
  }
  layout->addLayout(versions);

  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  layout->addWidget(buttons);
  layout->setSizeConstraint(QLayout::SetFixedSize);
}

}  // namespace attn::ui
