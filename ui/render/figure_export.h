// Exports without a widget, shared by File > Export and attnscope-cli: a drawing as PNG/SVG/PDF (chosen by the
// file's extension) and a map's matrix as CSV or NumPy .npy. The views' own exports (a heatmap as QCustomPlot
// draws it, any widget) are views/export.h.
#pragma once

#include "attn/error.h"
#include "attn/trace.h"
#include "render/caption_render.h"
#include "render/heatmap_figure.h"
#include "render/text_figure.h"

#include <QByteArray>
#include <QSize>
#include <QString>

#include <functional>
#include <optional>
#include <string_view>
#include <vector>

class QFont;
class QImage;
class QPainter;
class QPaintDevice;

namespace attn::ui {

enum class ExportFormat { Png, Svg, Pdf, Csv, Npy };

// By extension, case-insensitive; nullopt for anything else.
std::optional<ExportFormat> exportFormatFor(const QString& path);
// "PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf);;CSV matrix (*.csv);;NumPy matrix (*.npy)"
QString exportFilters();

// An export refused: the file and the reason, as the exporters' own errors read.
attn::Error exportError(const QString& path, const QString& reason);

// The heatmap exactly as drawn, at its current widget size (PNG, SVG or PDF by extension).
// Every export is made in memory, then written by writeExport: atomically (a failed export never leaves half a
// file) and to the path's own bytes (toPath: a name that is not UTF-8 is written as given, not as "?").
attn::Result<void> writeExport(const QString& path, const QByteArray& bytes);

// The parts every exporter shares (views/export.cpp's too): an image as PNG bytes; a drawing of `size` as SVG or
// PDF bytes, where `paint` begins its own painter on the device it is given (QCustomPlot wants its QCPPainter) and
// returns whether it ended well, `scale` mapping the drawing's pixels to the device's; and the bytes written, or
// "could not draw the view" when there are none.
std::optional<QByteArray> pngBytes(const QImage& image);
std::optional<QByteArray> vectorBytes(ExportFormat format, QSize size, const QString& title, const QString& description,
                                      const std::function<bool(QPaintDevice& device, double scale)>& paint);
attn::Result<void> writeOrFail(const QString& path, const std::optional<QByteArray>& bytes);

// A figure of shaded text (render::TextFigure: the Alignment tab's word shading) at `width` pixels and its
// own height, on a white background, as PNG, SVG or PDF; the same drawing in every format.
attn::Result<void> exportFigure(const render::TextFigure& figure, const QFont& font, int width, const QString& path);

// Any drawing of `size` pixels, painted by `paint` from (0, 0) on white: PNG, SVG or PDF by extension. The
// figure exports, the caption grid and attnscope-cli's heatmaps share it.
attn::Result<void> exportDrawing(const QString& path, QSize size, const QString& title, const QString& description,
                                 const std::function<void(QPainter&)>& paint);

// A drawing of `size` under a title line (bold, wrapped to the width, as the caption grid's heading): PNG, SVG or PDF
// by extension, through exportDrawing. The Transformer tab's Export View writes its views through it, at the size
// the tab's Display group chooses.
attn::Result<void> exportTitledDrawing(const QString& path, const QString& title, const QFont& font, QSize size,
                                       const std::function<void(QPainter&)>& paint);

// Show, Attend and Tell's grid (render::paintCaptionGrid) as PNG, SVG or PDF.
attn::Result<void> exportCaptionGrid(const render::CaptionGridFigure& figure, const QFont& font, const QString& path);

// A heatmap figure (render::paintHeatmapFigure) at `size` exactly, on white, as PNG, SVG or PDF: what
// attnscope-cli writes for a map.
attn::Result<void> exportHeatmapFigure(const render::HeatmapFigure& figure, QSize size, const QFont& font,
                                       const QString& path);
// Small multiples (render::paintHeatmapGrid) `size.width()` wide and as tall as their rows need, with `footnote`
// (the maps left out, say) in a line below when it is not empty.
attn::Result<void> exportHeatmapGrid(const std::vector<render::HeatmapFigure>& tiles, int columns, QSize size,
                                     const QFont& font, const QString& footnote, const QString& path);

// RFC 4180 CSV: a header row of column tokens (first cell empty), then one row per query token, values
// written with %.9g so every float reads back exactly.
QByteArray matrixCsv(const attn::AttentionMap& map);
attn::Result<void> writeMatrixCsv(const attn::AttentionMap& map, const QString& path);
// NumPy .npy format version 1.0 (numpy.lib.format): the magic "\x93NUMPY", version 1 0, a little-endian
// uint16 header length, the header dict {'descr': '<f4', 'fortran_order': False, 'shape': (rows, cols), }
// padded with spaces and a final '\n' so the data starts at a multiple of 64 bytes, then the float32
// values in C (row-major) order. numpy.load reads it back exactly.
QByteArray matrixNpy(const attn::Matrix& m);
attn::Result<void> writeMatrixNpy(const attn::Matrix& m, const QString& path);
// True for the two matrix formats (.csv, .npy).
bool isMatrixFormat(ExportFormat format);

// One field, quoted when it holds a comma, a quote, a CR or an LF (quotes doubled).
QByteArray csvField(std::string_view text);

}  // namespace attn::ui
