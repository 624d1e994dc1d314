// Runs the built attnscope-cli (ATTNSCOPE_CLI) as a user would and keeps what it printed.
#pragma once

#include <QByteArray>
#include <QFile>
#include <QProcess>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>

struct Run {
  int exitCode = -1;  // -1: it crashed or did not finish within two minutes
  QString out;
  QString err;
};

inline Run runCli(const QStringList& arguments) {
  QProcess process;
  // ATTN_CLI_LEAK_CHECK=0 (tests/cli/CMakeLists.txt): no LeakSanitizer check at the program's exit under ASan.
  if (qgetenv("ATTN_CLI_LEAK_CHECK") == "0") {
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    const QString asan = environment.value(QStringLiteral("ASAN_OPTIONS"));
    environment.insert(QStringLiteral("ASAN_OPTIONS"),
                       (asan.isEmpty() ? QString() : asan + QLatin1Char(':')) + QStringLiteral("detect_leaks=0"));
    process.setProcessEnvironment(environment);
  }
  process.start(QStringLiteral(ATTNSCOPE_CLI), arguments);
  Run run;
  if (!process.waitForFinished(120000)) return run;
  run.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
  run.out = QString::fromLocal8Bit(process.readAllStandardOutput());
  run.err = QString::fromLocal8Bit(process.readAllStandardError());
  return run;
}

// `bytes` written to `name` in `dir`: its path, or empty when it cannot be written.
inline QString writeFile(const QTemporaryDir& dir, const QString& name, const QByteArray& bytes) {
  const QString path = dir.filePath(name);
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size()) return {};
  return path;
}
