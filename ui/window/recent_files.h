// One "Open Recent" list of the File menu: paths kept in QSettings under a key, newest first, at most
// kMaxEntries, each shown in a submenu as "&1 name" with the whole path as its tip, and a Clear List entry.
// The window has three (text files for the lab, images, model folders and dumps), because they open into
// different tabs; this class is the one piece of code behind all three.
// A bundled model (one the binary embeds, which a tab writes into a temporary folder to open) is kept by its key
// as "bundled:<key>", shown by its name, and never dropped as missing: its temporary folder is gone after a
// restart, its key is not.
#pragma once

#include <QObject>
#include <QString>
#include <QStringList>

#include <functional>

class QMenu;

namespace attn::ui {

class RecentList : public QObject {
 public:
  static constexpr int kMaxEntries = 8;

  // `open` runs when an entry is chosen. The menu is rebuilt each time it is about to show.
  RecentList(QString settingsKey, QMenu* menu, std::function<void(const QString&)> open, QObject* parent);

  QStringList paths() const;
  // "bundled:<key>", the entry of a bundled model; bundledKey gives the key back (empty for a path).
  static QString bundledEntry(const QString& key);
  static QString bundledKey(const QString& entry);
  // `path`, made absolute (a bundled entry as it is), to the front.
  void add(const QString& path);
  // Drops `path` (made absolute, a bundled entry as it is); true when it was listed.
  bool remove(const QString& path);
  void clear();
  // Rebuilds the menu without the paths that no longer exist, which it forgets and returns.
  QStringList rebuild();

 private:
  void store(const QStringList& paths);

  QString key_;
  QMenu* menu_;
  std::function<void(const QString&)> open_;
};

}  // namespace attn::ui
