// Runs the built attnscope-cli (ATTNSCOPE_CLI) as a user would and keeps what it printed.
#pragma once

#include <QProcess>
#include <QString>
#include <QStringList>

struct Run {
  int exitCode = -1;  // -1: it crashed or did not finish within two minutes
  QString out;
  QString err;
};

inline Run runCli(const QStringList& arguments) {
  QProcess process;
  process.start(QStringLiteral(ATTNSCOPE_CLI), arguments);
  Run run;
  if (!process.waitForFinished(120000)) return run;
  run.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
  run.out = QString::fromLocal8Bit(process.readAllStandardOutput());
  run.err = QString::fromLocal8Bit(process.readAllStandardError());
  return run;
}
