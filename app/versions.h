// Version facts shown by Help > About and attnscope-cli --version.
#pragma once

#include <QList>
#include <QPair>
#include <QString>

namespace attn::ui {

QString appVersion();  // the project's version, e.g. "0.1.0"
// The libraries both programs link: ("Qt", "6.4.2 (built with 6.4.2)"), ("Eigen", "3.4.0"), ("OpenCV", "4.6.0"),
// the compiler. The window adds its own (windowLibraryVersions(), window/about_dialog.h).
QList<QPair<QString, QString>> libraryVersions();
// "attnscope 0.1.0\nQt 6.4.2 ...\n" for --version.
QString versionReport(const QString& program, const QList<QPair<QString, QString>>& libraries = libraryVersions());

}  // namespace attn::ui
