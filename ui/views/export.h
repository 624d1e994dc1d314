// The views' exports for File > Export View: a heatmap exactly as QCustomPlot draws it, any widget (the
// small-multiples grid). Everything that draws without a widget, and the matrix formats, is
// render/figure_export.h (included here, so one include gives a view every export).
#pragma once

#include "render/figure_export.h"

#include <QFont>
#include <QSize>
#include <QString>

class QWidget;

namespace attn::ui {

class HeatmapView;

// The heatmap exactly as drawn, at its current widget size (PNG, SVG or PDF by extension).
attn::Result<void> exportHeatmap(HeatmapView& view, const QString& path);
// The heatmap drawn afresh at `size` (not the widget's size), under `title` (render::exportTitledDrawing); vector in
// SVG and PDF.
attn::Result<void> exportHeatmapFigure(HeatmapView& view, const QString& path, QSize size, const QString& title,
                                       const QFont& font);
// Any widget (the small-multiples grid) as PNG, SVG or PDF, at its current size.
attn::Result<void> exportWidget(QWidget& widget, const QString& path);

}  // namespace attn::ui
