// What a job of attnscope-cli (and a kind's command-line part, alignment/<kind>/<kind>_cli.cpp) reports: the
// summary, notes and files written (RenderReport), or why it failed (RenderFailure: usage, input or output, with the
// engine's error kind where it is one), and the notes a beam search's hypotheses make. Widget-free: it sits in
// attn_runs, below the command line (cli/) and beside the pages that run its jobs.
#pragma once

#include "attn/error.h"

#include <QObject>
#include <QString>
#include <QStringList>

#include <cstddef>
#include <optional>

namespace attn::ui {

struct RenderReport {
  QString summary;       // "lab: additive · 7 x 15 · 0.21 ms"
  QStringList notes;     // LabResult::notes
  QStringList written;   // paths of the files written
  QStringList warnings;  // load-time warnings of a model (non-finite weights, unused tensors): printed to stderr
};

struct RenderFailure {
  enum class Kind { Usage, Input, Output } kind;
  QString message;
  // What the engine said went wrong, when the failure is an engine error (failureText prints it).
  std::optional<attn::ErrorKind> error = std::nullopt;
};

// A failure from an engine error: its message (file, byte or line, reason) and its kind.
RenderFailure engineFailure(RenderFailure::Kind kind, const attn::Error& error);
// The failures the subcommands build: usage and input from a message, input and output from an engine error.
RenderFailure usageFailure(const QString& message);
RenderFailure inputFailure(const QString& message);
RenderFailure inputFailure(const attn::Error& error);
RenderFailure outputFailure(const attn::Error& error);
// What attnscope-cli prints after "attnscope-cli: " for a failure, in one place for every subcommand:
// "error (truncated): model.safetensors: byte 8: reason" for an engine error, the message alone otherwise.
QString failureText(const RenderFailure& failure);

// Why hypothesis `n` (0 = the best) of a search that ended with `count` hypotheses cannot be drawn; empty when
// it can.
inline QString hypothesisChoiceProblem(std::size_t count, int n, int beam) {
  if (count == 0) return QObject::tr("the decoder returned no hypothesis");
  if (n >= 0 && std::size_t(n) < count) return {};
  return QObject::tr("--hypothesis %1: the search ended with hypotheses 0 to %2 (beam %3)")
      .arg(n)
      .arg(count - 1)
      .arg(beam);
}

// The notes of a beam search's hypotheses, best first: "hypothesis 2: “…” (log p -1.2345, no </s>)", for
// any hypotheses with text, log_prob and finished (seq2seq, captioner).
template <class Hypotheses>
QStringList hypothesisNotes(const Hypotheses& hypotheses, const QString& endToken) {
  QStringList notes;
  int index = 0;
  for (const auto& one : hypotheses) {
    notes.append(QObject::tr("hypothesis %1: \u201c%2\u201d (log p %3%4)")
                     .arg(index++)
                     .arg(QString::fromStdString(one.text))
                     .arg(double(one.log_prob), 0, 'f', 4)
                     .arg(one.finished ? QString() : QObject::tr(", no %1").arg(endToken)));
  }
  return notes;
}

}  // namespace attn::ui
