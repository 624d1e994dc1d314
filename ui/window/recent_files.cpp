#include "window/recent_files.h"

#include "render/strings.h"

#include <QFileInfo>
#include <QMenu>
#include <QSettings>

using namespace Qt::StringLiterals;

namespace attn::ui {

RecentList::RecentList(QString settingsKey, QMenu* menu, std::function<void(const QString&)> open, QObject* parent)
    : QObject(parent), key_(std::move(settingsKey)), menu_(menu), open_(std::move(open)) {
  connect(menu_, &QMenu::aboutToShow, this, [this] { rebuild(); });
}

QStringList RecentList::paths() const { return QSettings().value(key_).toStringList(); }

void RecentList::store(const QStringList& paths) { QSettings().setValue(key_, QStringList(paths.mid(0, kMaxEntries))); }

void RecentList::add(const QString& path) {
  QStringList list = paths();
  const QString absolute = absolutePath(path);
  list.removeAll(absolute);
  list.prepend(absolute);
  store(list);
  rebuild();
}

bool RecentList::remove(const QString& path) {
  QStringList list = paths();
  const bool listed = list.removeAll(absolutePath(path)) > 0;
  if (listed) {
    store(list);
    rebuild();
  }
  return listed;
}

void RecentList::clear() {
  store({});
  rebuild();
}

QStringList RecentList::rebuild() {
  menu_->clear();
  QStringList list = paths();
  QStringList missing;
  for (const QString& path : std::as_const(list)) {
    if (!pathExists(path)) missing.append(path);
  }
  if (!missing.isEmpty()) {
    for (const QString& path : std::as_const(missing)) list.removeAll(path);
    store(list);
  }
  for (int i = 0; i < list.size(); ++i) {
    const QString path = list[i];
    // &1 .. &8: each entry gets a mnemonic.
    auto* action = menu_->addAction(u"&%1 %2"_s.arg(i + 1).arg(fileNameOf(path)));
    action->setToolTip(path);
    action->setStatusTip(path);
    connect(action, &QAction::triggered, this, [this, path] { open_(path); });
  }
  menu_->setEnabled(!list.isEmpty());
  if (!list.isEmpty()) {
    menu_->addSeparator();
    menu_->addAction(tr("&Clear List"), this, [this] { clear(); });
  }
  return missing;
}

}  // namespace attn::ui
