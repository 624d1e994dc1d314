// Headless rendering for attnscope-cli: run the lab and write the heatmap (or the small-multiples grid) the GUI
// shows, painted by render/heatmap_figure.h without a widget. Also the bundled demo views and the mechanism listing.
#pragma once

#include "attn/error.h"
#include "attn/lab/lab.h"
#include "render/colormap.h"

#include <QObject>
#include <QSize>
#include <QString>
#include <QStringList>

#include <cstddef>
#include <expected>
#include <optional>
#include <vector>

namespace attn::ui {

struct RenderJob {
  attn::lab::LabRequest request;
  // Which map of the trace: empty = the first, a 0-based index, a map's title or name, or "all" for the
  // small-multiples grid of every map.
  QString map;
  QSize size{900, 700};
  QString imagePath;  // .png, .svg or .pdf; may be empty
  QString csvPath;    // may be empty; with map "all", one file per map: name-0.csv, name-1.csv, ...
  render::Colormap colormap = render::Colormap::Viridis;
};

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

std::expected<RenderReport, RenderFailure> renderLab(const RenderJob& job);

// The notes of a beam search's hypotheses, best first: "hypothesis 2: “…” (log p -1.2345, no </s>)", for
// any hypotheses with text, log_prob and finished (seq2seq, captioner).
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

struct DemoView {
  QString file;         // e.g. "global-additive.png"
  QString description;  // one line
  attn::lab::LabRequest request;
  QString map;  // as RenderJob::map
};
std::vector<DemoView> demoViews();

// The catalogue for `lab --list`: key, name, formula and paper of every mechanism, and the score names.
QString mechanismListing();

}  // namespace attn::ui
