// The command line's own bytes, for both mains. QCommandLineParser sees argv through QString::fromLocal8Bit,
// which turns bytes that are not UTF-8 into U+FFFD: a file name with such a byte would be "no such file" (or
// an output written under another name), and a text option would lose what the engine must see to say where
// the bad byte is. Option values and positional arguments are taken from argv instead; file names keep their
// bytes in a QString through pathFromBytes (ui/render/strings.h), which toPath() gives back exactly.
#pragma once

#include "render/strings.h"

#include <QCommandLineOption>
#include <QCommandLineParser>
#include <QString>
#include <QStringList>

#include <cstring>
#include <deque>
#include <optional>
#include <string>

namespace attn::app {

// argv as the process got it; set first thing in main.
struct RawArguments {
  int argc = 0;
  char** argv = nullptr;
};
inline RawArguments g_raw;

inline void setRawArguments(int argc, char** argv) { g_raw = {argc, argv}; }

// QGuiApplication takes "-session NAME" and "--session NAME" out of argv for X11 session management before
// any parser sees them, so AttnScope's --session FILE would vanish. Called before the QApplication is made:
// renames them (and "--session=FILE") to kSessionAlias, which the window's parser reads as --session.
inline constexpr const char* kSessionAlias = "attnscope-session";
inline void keepSessionOption(int argc, char** argv) {
  static std::deque<std::string> renamed;  // argv points into these until the process ends
  for (int i = 1; i < argc; ++i) {
    const char* arg = argv[i];
    if (std::strcmp(arg, "--") == 0) break;
    if (std::strcmp(arg, "--session") == 0 || std::strcmp(arg, "-session") == 0) {
      argv[i] = renamed.emplace_back(std::string("--") + kSessionAlias).data();
    } else if (std::strncmp(arg, "--session=", 10) == 0 || std::strncmp(arg, "-session=", 9) == 0) {
      argv[i] = renamed.emplace_back(std::string("--") + kSessionAlias + std::strchr(arg, '=')).data();
    }
  }
}

// The value of --name (as "--name value" or "--name=value"; the last one given wins, as in the parser).
inline std::optional<std::string> rawOption(const char* name) {
  const std::string flag = std::string("--") + name;
  std::optional<std::string> value;
  for (int i = 1; i < g_raw.argc; ++i) {
    if (flag == g_raw.argv[i] && i + 1 < g_raw.argc) {
      value = g_raw.argv[++i];
    } else if (std::strncmp(g_raw.argv[i], (flag + "=").c_str(), flag.size() + 1) == 0) {
      value = g_raw.argv[i] + flag.size() + 1;
    }
  }
  return value;
}

// The value of a file or folder option with the name's own bytes.
inline QString pathValue(const QCommandLineParser& parser, const QCommandLineOption& option) {
  for (const QString& name : option.names()) {
    if (name.size() < 2) continue;  // only the long forms (--out FILE, --out=FILE) take files here
    if (auto raw = rawOption(name.toUtf8().constData())) return attn::ui::pathFromBytes(*raw);
  }
  return parser.value(option);
}

// The positional arguments (files) with their own bytes: each is matched, in order, with the argv entry the
// parser decoded it from.
inline QStringList pathPositionals(const QCommandLineParser& parser) {
  QStringList out;
  int next = 1;
  for (const QString& decoded : parser.positionalArguments()) {
    QString path = decoded;
    for (int i = next; i < g_raw.argc; ++i) {
      if (QString::fromLocal8Bit(g_raw.argv[i]) == decoded) {
        path = attn::ui::pathFromBytes(g_raw.argv[i]);
        next = i + 1;
        break;
      }
    }
    out.append(path);
  }
  return out;
}

}  // namespace attn::app
