// Helpers shared by the UI tests: "is this image a drawing or a blank", settings kept out of the user's
// home, and a fresh lab result to compare views against.
#pragma once

#include "window/main_window.h"
#include "attn/lab/lab.h"

#include <QAbstractButton>
#include <QCoreApplication>
#include <QGroupBox>
#include <QImage>
#include <QLabel>
#include <QMap>
#include <QMenuBar>
#include <QTabBar>
#include <QSet>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <cmath>
#include <memory>

namespace attn::ui::testing {

using namespace Qt::StringLiterals;

// Saves a test's picture as <folder>/<name>.png when ATTN_TEST_SHOTS names a folder, to look at a view as a user
// would (QT_QPA_PLATFORM=offscreen ATTN_TEST_SHOTS=/tmp/shots ctest -R ...); does nothing otherwise.
inline void saveShot(const QImage& image, const QString& name) {
  const QString folder = qEnvironmentVariable("ATTN_TEST_SHOTS");
  if (!folder.isEmpty()) image.save(folder + u'/' + name + u".png"_s);
}

struct ImageStats {
  int distinctColours = 0;
  double nonBackgroundFraction = 0.0;  // pixels that differ from the top-left pixel
};

inline ImageStats imageStats(const QImage& source) {
  const QImage image = source.convertToFormat(QImage::Format_ARGB32);
  ImageStats stats;
  if (image.isNull()) return stats;
  QSet<QRgb> colours;
  const QRgb background = image.pixel(0, 0);
  qint64 different = 0;
  for (int y = 0; y < image.height(); ++y) {
    const auto* line = reinterpret_cast<const QRgb*>(image.constScanLine(y));
    for (int x = 0; x < image.width(); ++x) {
      colours.insert(line[x]);
      if (line[x] != background) ++different;
    }
  }
  stats.distinctColours = int(colours.size());
  stats.nonBackgroundFraction = double(different) / double(qint64(image.width()) * image.height());
  return stats;
}

// A heatmap with tokens and a colour bar has many colours and covers a good part of its area.
inline bool looksDrawn(const QImage& image) {
  const auto stats = imageStats(image);
  return stats.distinctColours >= 12 && stats.nonBackgroundFraction >= 0.10;
}

// Keeps QSettings (window geometry, recent files) and the session autosave of test runs out of the user's
// configuration, and apart from other test programs running at the same time.
inline void isolateSettings(const QString& directory) {
  MainWindow::setAutosaveFile(directory + QStringLiteral("/autosave.attnscope.json"));
  QStandardPaths::setTestModeEnabled(true);
  QCoreApplication::setOrganizationName(QStringLiteral("AttnScopeTests"));
  QCoreApplication::setApplicationName(QStringLiteral("AttnScopeTests"));
  QSettings::setDefaultFormat(QSettings::IniFormat);
  QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, directory);
  QSettings().clear();
}

inline attn::lab::LabRequest defaultRequest(attn::lab::Mechanism mechanism = attn::lab::Mechanism::Global) {
  attn::lab::LabRequest request;
  request.query = std::string(attn::lab::kDefaultQuery);
  request.source = std::string(attn::lab::kDefaultSource);
  request.params.mechanism = mechanism;
  return request;
}

inline std::shared_ptr<const attn::lab::LabResult> runOrNull(const attn::lab::LabRequest& request) {
  auto result = attn::lab::run_lab(request);
  if (!result) return nullptr;
  return std::make_shared<const attn::lab::LabResult>(std::move(*result));
}

// Largest absolute difference between two matrices, or infinity when the shapes differ.
inline double maxDifference(const attn::Matrix& a, const attn::Matrix& b) {
  if (a.rows() != b.rows() || a.cols() != b.cols()) return INFINITY;
  if (a.size() == 0) return 0.0;
  return double((a - b).cwiseAbs().maxCoeff());
}

// The Alt+letter of a text ("Mechanism &Lab": 'l'), or a null QChar ("&&" is a literal ampersand).
inline QChar mnemonicOf(const QString& text) {
  for (qsizetype i = 0; i + 1 < text.size(); ++i) {
    if (text[i] != u'&') continue;
    if (text[i + 1] == u'&') {
      ++i;
      continue;
    }
    return text[i + 1].toLower();
  }
  return {};
}

// Every Alt+letter that two things shown at once in `window` share: its menu bar's menus, the tab bars' enabled
// tabs, buttons, labels with a buddy and group boxes that are visible. "Alt+L: 'Mechanism &Lab' (tab), 'Logit
// &Lens' (tab)", one line per clash.
inline QStringList mnemonicClashes(QWidget& window) {
  QMap<QChar, QStringList> owners;
  const auto add = [&](const QString& text, const QString& kind) {
    if (const QChar key = mnemonicOf(text); !key.isNull()) owners[key].append(u"'%1' (%2)"_s.arg(text, kind));
  };
  if (auto* bar = window.findChild<QMenuBar*>(); bar && bar->isVisibleTo(&window)) {
    for (const QAction* action : bar->actions()) {
      if (action->isVisible()) add(action->text(), u"menu"_s);
    }
  }
  for (QWidget* w : window.findChildren<QWidget*>()) {
    if (!w->isVisibleTo(&window)) continue;
    if (auto* bar = qobject_cast<QTabBar*>(w)) {
      for (int i = 0; i < bar->count(); ++i) {
        if (bar->isTabEnabled(i) && bar->isTabVisible(i)) add(bar->tabText(i), u"tab"_s);
      }
    } else if (auto* button = qobject_cast<QAbstractButton*>(w)) {
      add(button->text(), u"button"_s);
    } else if (auto* label = qobject_cast<QLabel*>(w); label && label->buddy()) {
      add(label->text(), u"label"_s);
    } else if (auto* box = qobject_cast<QGroupBox*>(w)) {
      add(box->title(), u"group"_s);
    }
  }
  QStringList clashes;
  for (auto it = owners.cbegin(); it != owners.cend(); ++it) {
    if (it.value().size() > 1) clashes.append(u"Alt+%1: %2"_s.arg(it.key().toUpper(), it.value().join(u", "_s)));
  }
  return clashes;
}

}  // namespace attn::ui::testing
