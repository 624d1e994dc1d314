#pragma once
// The small conversions every part of ui/ shares, in one place: engine text (UTF-8 std::string) to QString,
// a name in typographic quotes, a file name as the path the engine opens, a timer in milliseconds.
#include <QElapsedTimer>
#include <QByteArray>
#include <QByteArrayView>
#include <QFile>
#include <QLocale>
#include <QString>

#include <cmath>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <system_error>

namespace attn::ui {

// The engine's strings are UTF-8.
inline QString fromStd(std::string_view text) { return QString::fromUtf8(text.data(), qsizetype(text.size())); }

// “text”, as messages and titles quote a token, a file or a value.
inline QString quoted(const QString& text) { return QChar(0x201C) + text + QChar(0x201D); }

// File names are bytes on Linux and need not be UTF-8 ("caf\xE9.png" from a Latin-1 disk). Qt's conversions
// (QString::fromLocal8Bit, QFile::encodeName) turn such a byte into U+FFFD and back into "?": the file could not
// be opened, and an output went to another name. A path that comes in as bytes (the command line) keeps them in
// its QString: each byte of an invalid sequence becomes the lone surrogate U+DC80 + (byte - 0x80), as Python's
// "surrogateescape" does, and pathBytes()/toPath() give back the very bytes. Valid UTF-8 is unchanged both ways.
inline QString pathFromBytes(std::string_view bytes) {
  QString out;
  out.reserve(qsizetype(bytes.size()));
  std::size_t i = 0;
  while (i < bytes.size()) {
    const auto lead = static_cast<unsigned char>(bytes[i]);
    const std::size_t length = lead < 0x80           ? 1
                               : (lead >> 5) == 0x6  ? 2
                               : (lead >> 4) == 0xE  ? 3
                               : (lead >> 3) == 0x1E ? 4
                                                     : 0;
    if (length && i + length <= bytes.size() && QByteArrayView(bytes.data() + i, qsizetype(length)).isValidUtf8()) {
      out += QString::fromUtf8(bytes.data() + i, qsizetype(length));
      i += length;
    } else {
      out += QChar(char16_t(0xDC00 + lead));  // lead >= 0x80 here: ASCII is always valid
      ++i;
    }
  }
  return out;
}
inline QByteArray pathBytes(const QString& path) {
  QByteArray out;
  qsizetype start = 0;  // of the run of ordinary text not yet converted
  for (qsizetype i = 0; i < path.size(); ++i) {
    const char16_t u = path[i].unicode();
    const bool paired = i > 0 && path[i - 1].isHighSurrogate();
    if (u >= 0xDC80 && u <= 0xDCFF && !paired) {
      out += path.mid(start, i - start).toUtf8();
      out += char(u - 0xDC00);
      start = i + 1;
    }
  }
  out += path.mid(start).toUtf8();
  return out;
}
inline std::filesystem::path toPath(const QString& path) {
  return std::filesystem::path(pathBytes(path).toStdString());
}
// QFileInfo's questions for such paths (QFileInfo would look for the "?" name): false on any error.
inline bool pathExists(const QString& path) {
  std::error_code error;
  return std::filesystem::exists(toPath(path), error);
}
inline bool isFilePath(const QString& path) {
  std::error_code error;
  return std::filesystem::is_regular_file(toPath(path), error);
}
inline bool isFolderPath(const QString& path) {
  std::error_code error;
  return std::filesystem::is_directory(toPath(path), error);
}
// The path made absolute against the working directory, with its bytes kept (QFileInfo::absoluteFilePath).
inline QString absolutePath(const QString& path) {
  std::error_code error;
  const auto absolute = std::filesystem::absolute(toPath(path), error);
  return error ? path : pathFromBytes(absolute.lexically_normal().native());
}
// The folder that holds it, absolute (QFileInfo::absolutePath).
inline QString folderOf(const QString& path) {
  std::error_code error;
  const auto absolute = std::filesystem::absolute(toPath(path), error).lexically_normal();
  return pathFromBytes(
      (absolute.has_filename() ? absolute.parent_path() : absolute.parent_path().parent_path()).native());
}
// The last component (QFileInfo::fileName).
inline QString fileNameOf(const QString& path) { return pathFromBytes(toPath(path).filename().native()); }

// A statistic with `decimals` decimals (4 significant digits from a million up: a dump of scores may hold 1e30),
// or an em dash where it is not defined (NaN: the entropy of a map that is not a distribution).
inline QString statText(double value, int decimals) {
  if (!std::isfinite(value)) return QStringLiteral("\u2014");
  return std::abs(value) >= 1e6 ? QString::number(value, 'g', 4) : QString::number(value, 'f', decimals);
}

// A count as the user's locale writes it ("1,000,000" in English; as in the Transformer tab's token counts).
inline QString countText(qint64 n) { return QLocale().toString(n); }

// A memory or file size as the user reads it: "3.5 GiB".
inline QString dataSize(qint64 bytes) { return QLocale().formattedDataSize(bytes, 1); }

// Time since `timer` started, in milliseconds with the fraction.
inline double msSince(const QElapsedTimer& timer) { return double(timer.nsecsElapsed()) / 1.0e6; }

// The Lab's text file (the tab's File > Open, attnscope-cli lab --text-file): its bytes split at the first non-empty
// line into {query, source}, both trimmed. Bytes stay untouched so invalid UTF-8 reaches the engine, which names
// the offending offset. Empty when blank.
inline std::pair<std::string, std::string> splitQuerySource(const QByteArray& bytes) {
  qsizetype pos = 0;
  while (pos < bytes.size()) {
    qsizetype end = bytes.indexOf('\n', pos);
    if (end < 0) end = bytes.size();
    const QByteArray line = bytes.mid(pos, end - pos).trimmed();
    pos = end + 1;
    if (!line.isEmpty()) {
      const QByteArray rest = pos < bytes.size() ? bytes.mid(pos).trimmed() : QByteArray();
      return {line.toStdString(), rest.toStdString()};
    }
  }
  return {};
}

}  // namespace attn::ui
