#include "window/recent_files.h"

#include "render/strings.h"

#include <QFileInfo>
#include <QMenu>
#include <QSettings>

using namespace Qt::StringLiterals;

namespace attn::ui {
namespace {

const QString kBundledPrefix = u"bundled:"_s;

// The form an entry is stored in: a path made absolute, a bundled entry as it is.
QString entryOf(const QString& path) { return RecentList::bundledKey(path).isEmpty() ? absolutePath(path) : path; }

}  // namespace

RecentList::RecentList(QString settingsKey, QMenu* menu, std::function<void(const QString&)> open, QObject* parent)
    : QObject(parent), key_(std::move(settingsKey)), menu_(menu), open_(std::move(open)) {
  connect(menu_, &QMenu::aboutToShow, this, [this] { rebuild(); });
}

QStringList RecentList::paths() const { return QSettings().value(key_).toStringList(); }

QString RecentList::bundledEntry(const QString& key) { return kBundledPrefix + key; }

QString RecentList::bundledKey(const QString& entry) {
  return entry.startsWith(kBundledPrefix) ? entry.mid(kBundledPrefix.size()) : QString();
}

void RecentList::store(const QStringList& paths) { QSettings().setValue(key_, QStringList(paths.mid(0, kMaxEntries))); }

void RecentList::add(const QString& path) {
  QStringList list = paths();
  const QString absolute = entryOf(path);
  list.removeAll(absolute);
  list.prepend(absolute);
  store(list);
  rebuild();
}

bool RecentList::remove(const QString& path) {
  QStringList list = paths();
  const bool listed = list.removeAll(entryOf(path)) > 0;
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
    if (bundledKey(path).isEmpty() && !pathExists(path)) missing.append(path);
  }
  if (!missing.isEmpty()) {
    for (const QString& path : std::as_const(missing)) list.removeAll(path);
    store(list);
  }
  for (int i = 0; i < list.size(); ++i) {
    const QString path = list[i];
    const QString bundled = bundledKey(path);
    // &1 .. &8: each entry gets a mnemonic.
    auto* action = menu_->addAction(
        u"&%1 %2"_s.arg(i + 1).arg(bundled.isEmpty() ? fileNameOf(path) : tr("%1 (bundled)").arg(bundled)));
    const QString tip = bundled.isEmpty() ? path : tr("The bundled model %1").arg(bundled);
    action->setToolTip(tip);
    action->setStatusTip(tip);
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
