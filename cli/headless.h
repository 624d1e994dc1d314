// Headless rendering for attnscope-cli: run the lab and write the heatmap (or the small-multiples grid) the GUI
// shows, painted by render/heatmap_figure.h without a widget. Also the bundled demo views and the mechanism listing.
// What every subcommand reports (RenderReport, RenderFailure) is in workbenches/common/render_report.h, which the
// Alignment kinds' command-line parts share.
#pragma once

#include "attn/error.h"
#include "attn/lab/lab.h"
#include "render/colormap.h"
#include "workbenches/common/render_report.h"

#include <QObject>
#include <QSize>
#include <QString>
#include <QStringList>

#include <cstddef>
#include <expected>
#include <optional>
#include <string>
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
  std::string what{attn::lab::kInMemoryRequest};  // the file the sentences came from (--input), for refusals
};

std::expected<RenderReport, RenderFailure> renderLab(const RenderJob& job);

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
