#include "views/export.h"

#include "views/heatmap_view.h"
#include "views/qcustomplot.h"

#include "render/strings.h"

#include <QPainter>
#include <QPicture>
#include <QWidget>

using namespace Qt::StringLiterals;

namespace attn::ui {

attn::Result<void> exportHeatmap(HeatmapView& view, const QString& path) {
  const auto format = exportFormatFor(path);
  if (!format || isMatrixFormat(*format)) {
    return std::unexpected(exportError(path, QObject::tr("the view can be saved as .png, .svg or .pdf")));
  }
  QCustomPlot* plot = view.plot();
  const int width = plot->width();
  const int height = plot->height();
  if (*format == ExportFormat::Png) return writeOrFail(path, pngBytes(plot->toPixmap(width, height).toImage()));
  const QString title = view.map() ? fromStd(view.map()->title()) : u"AttnScope"_s;
  return writeOrFail(
      path, vectorBytes(*format, QSize(width, height), title, QObject::tr("Attention map exported by AttnScope"),
                        [&](QPaintDevice& device, double scale) {
                          QCPPainter painter;
                          if (!painter.begin(&device)) return false;
                          // As QCustomPlot::savePdf with epNoCosmetic: vector output, no cosmetic pens.
                          painter.setMode(QCPPainter::pmVectorized);
                          painter.setMode(QCPPainter::pmNoCaching);
                          painter.setMode(QCPPainter::pmNonCosmetic);
                          painter.scale(scale, scale);
                          plot->toPainter(&painter, width, height);
                          return painter.end();
                        }));
}

attn::Result<void> exportHeatmapFigure(HeatmapView& view, const QString& path, QSize size, const QString& title,
                                       const QFont& font) {
  // QCustomPlot lays the plot out again at `size` (its axes, ticks and colour bar) without resizing the widget; the
  // picture keeps its drawing as vectors for SVG and PDF.
  QPicture picture;
  {
    QCPPainter painter(&picture);
    painter.setMode(QCPPainter::pmVectorized);
    painter.setMode(QCPPainter::pmNoCaching);
    painter.setMode(QCPPainter::pmNonCosmetic);
    view.plot()->toPainter(&painter, size.width(), size.height());
  }
  return exportTitledDrawing(path, title, font, size, [&](QPainter& painter) { painter.drawPicture(0, 0, picture); });
}

attn::Result<void> exportWidget(QWidget& widget, const QString& path) {
  const auto format = exportFormatFor(path);
  if (!format || isMatrixFormat(*format)) {
    return std::unexpected(exportError(path, QObject::tr("the view can be saved as .png, .svg or .pdf")));
  }
  if (*format == ExportFormat::Png) return writeOrFail(path, pngBytes(widget.grab().toImage()));
  return writeOrFail(path, vectorBytes(*format, widget.size(), {}, {}, [&](QPaintDevice& device, double scale) {
                       QPainter painter;
                       if (!painter.begin(&device)) return false;
                       painter.scale(scale, scale);
                       widget.render(&painter);
                       return painter.end();
                     }));
}

}  // namespace attn::ui
