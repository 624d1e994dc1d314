#pragma once
// The small conversions every part of ui/ shares, in one place: engine text (UTF-8 std::string) to QString,
// a name in typographic quotes, a file name as the path the engine opens, a timer in milliseconds.
#include <QElapsedTimer>
#include <QFile>
#include <QLocale>
#include <QString>

#include <filesystem>
#include <string_view>

namespace attn::ui {

// The engine's strings are UTF-8.
inline QString fromStd(std::string_view text) { return QString::fromUtf8(text.data(), qsizetype(text.size())); }

// “text”, as messages and titles quote a token, a file or a value.
inline QString quoted(const QString& text) { return QChar(0x201C) + text + QChar(0x201D); }

// Paths are bytes on Linux: encoded as the file system does (QFile::encodeName), not as UTF-8 by assumption.
inline std::filesystem::path toPath(const QString& path) {
  return std::filesystem::path(QFile::encodeName(path).toStdString());
}

// A memory or file size as the user reads it: "3.5 GiB".
inline QString dataSize(qint64 bytes) { return QLocale().formattedDataSize(bytes, 1); }

// Time since `timer` started, in milliseconds with the fraction.
inline double msSince(const QElapsedTimer& timer) { return double(timer.nsecsElapsed()) / 1.0e6; }

}  // namespace attn::ui
