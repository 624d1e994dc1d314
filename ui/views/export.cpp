#include "views/export.h"

#include "views/heatmap_view.h"

#include "render/qcustomplot.h"

#include <QFileInfo>
#include <QImage>
#include <QPainter>
#include <QPdfWriter>
#include <QSaveFile>
#include <QSvgGenerator>
#include <QWidget>

#include <algorithm>
#include <functional>
#include <cstdio>
#include <cstring>

using namespace Qt::StringLiterals;

namespace attn::ui {

attn::Error exportError(const QString& path, const QString& reason) {
  return attn::Error{path.toStdString(), -1, -1, reason.toStdString(), attn::ErrorKind::Io};
}

std::optional<ExportFormat> exportFormatFor(const QString& path) {
  const QString suffix = QFileInfo(path).suffix().toLower();
  if (suffix == u"png"_s) return ExportFormat::Png;
  if (suffix == u"svg"_s) return ExportFormat::Svg;
  if (suffix == u"pdf"_s) return ExportFormat::Pdf;
  if (suffix == u"csv"_s) return ExportFormat::Csv;
  if (suffix == u"npy"_s) return ExportFormat::Npy;
  return std::nullopt;
}

QString exportFilters() {
  return QObject::tr(
      "PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf);;CSV matrix (*.csv);;NumPy matrix (*.npy)");
}

attn::Result<void> exportHeatmap(HeatmapView& view, const QString& path) {
  const auto format = exportFormatFor(path);
  if (!format || isMatrixFormat(*format)) {
    return std::unexpected(exportError(path, QObject::tr("the view can be saved as .png, .svg or .pdf")));
  }
  QCustomPlot* plot = view.plot();
  const int width = plot->width();
  const int height = plot->height();
  bool ok = false;
  switch (*format) {
    case ExportFormat::Png: ok = plot->savePng(path, width, height); break;
    case ExportFormat::Pdf:
      ok = plot->savePdf(path, width, height, QCP::epNoCosmetic, u"AttnScope"_s,
                         view.map() ? QString::fromStdString(view.map()->title()) : QString());
      break;
    case ExportFormat::Svg: {
      QSvgGenerator generator;
      generator.setFileName(path);
      generator.setSize(QSize(width, height));
      generator.setViewBox(QRect(0, 0, width, height));
      generator.setResolution(96);  // CSS pixels: browsers show the drawing at the view's size
      generator.setTitle(view.map() ? QString::fromStdString(view.map()->title()) : u"AttnScope"_s);
      generator.setDescription(QObject::tr("Attention map exported by AttnScope"));
      QCPPainter painter;
      if (!painter.begin(&generator)) break;
      plot->toPainter(&painter, width, height);
      ok = painter.end();
      break;
    }
    case ExportFormat::Csv:
    case ExportFormat::Npy: break;
  }
  if (!ok || !QFileInfo::exists(path))
    return std::unexpected(exportError(path, QObject::tr("could not write the file")));
  return {};
}

attn::Result<void> exportWidget(QWidget& widget, const QString& path) {
  const auto format = exportFormatFor(path);
  if (!format || isMatrixFormat(*format)) {
    return std::unexpected(exportError(path, QObject::tr("the view can be saved as .png, .svg or .pdf")));
  }
  const QSize size = widget.size();
  bool ok = false;
  switch (*format) {
    case ExportFormat::Png: ok = widget.grab().save(path, "PNG"); break;
    case ExportFormat::Svg: {
      QSvgGenerator generator;
      generator.setFileName(path);
      generator.setSize(size);
      generator.setViewBox(QRect(QPoint(), size));
      generator.setResolution(96);
      QPainter painter;
      if (!painter.begin(&generator)) break;
      widget.render(&painter);
      ok = painter.end();
      break;
    }
    case ExportFormat::Pdf: {
      QPdfWriter writer(path);
      writer.setCreator(u"AttnScope"_s);
      writer.setResolution(96);
      writer.setPageSize(QPageSize(QSizeF(size), QPageSize::Point));
      writer.setPageMargins(QMarginsF(0, 0, 0, 0));
      QPainter painter;
      if (!painter.begin(&writer)) break;
      // PDF points are 1/72 inch, the writer paints at 96 dpi: scale the widget to fill the page.
      const double scale = double(writer.width()) / double(std::max(1, size.width()));
      painter.scale(scale, scale);
      widget.render(&painter);
      ok = painter.end();
      break;
    }
    case ExportFormat::Csv:
    case ExportFormat::Npy: break;
  }
  if (!ok || !QFileInfo::exists(path))
    return std::unexpected(exportError(path, QObject::tr("could not write the file")));
  return {};
}

attn::Result<void> exportDrawing(const QString& path, QSize size, const QString& title, const QString& description,
                                 const std::function<void(QPainter&)>& paint) {
  const auto format = exportFormatFor(path);
  if (!format || isMatrixFormat(*format)) {
    return std::unexpected(exportError(path, QObject::tr("the view can be saved as .png, .svg or .pdf")));
  }
  bool ok = false;
  if (*format == ExportFormat::Png) {
    QImage image(size, QImage::Format_RGB32);
    image.fill(Qt::white);
    QPainter painter(&image);
    paint(painter);
    painter.end();
    ok = image.save(path, "PNG");
  } else if (*format == ExportFormat::Svg) {
    QSvgGenerator generator;
    generator.setFileName(path);
    generator.setSize(size);
    generator.setViewBox(QRect(QPoint(), size));
    generator.setResolution(96);
    generator.setTitle(title.isEmpty() ? u"AttnScope"_s : title);
    generator.setDescription(description);
    QPainter painter;
    if (painter.begin(&generator)) {
      paint(painter);
      ok = painter.end();
    }
  } else {
    QPdfWriter writer(path);
    writer.setCreator(u"AttnScope"_s);
    writer.setTitle(title);
    writer.setResolution(96);
    writer.setPageSize(QPageSize(QSizeF(size), QPageSize::Point));
    writer.setPageMargins(QMarginsF(0, 0, 0, 0));
    QPainter painter;
    if (painter.begin(&writer)) {
      // As exportWidget: points on the page, 96 dpi in the painter.
      const double scale = double(writer.width()) / double(std::max(1, size.width()));
      painter.scale(scale, scale);
      paint(painter);
      ok = painter.end();
    }
  }
  if (!ok || !QFileInfo::exists(path))
    return std::unexpected(exportError(path, QObject::tr("could not write the file")));
  return {};
}

attn::Result<void> exportFigure(const render::TextFigure& figure, const QFont& font, int width, const QString& path) {
  const auto format = exportFormatFor(path);
  if (!format || isMatrixFormat(*format)) {
    return std::unexpected(exportError(path, QObject::tr("the view can be saved as .png, .svg or .pdf")));
  }
  constexpr int kMargin = 16;
  const render::FigureStyle style;  // paper colours, whatever the desktop theme
  if (*format == ExportFormat::Png) {
    if (!render::figureImage(figure, font, width, style).save(path, "PNG")) {
      return std::unexpected(exportError(path, QObject::tr("could not write the file")));
    }
    return {};
  }
  const render::FigureLayout layout = render::layoutFigure(figure, font, double(width - 2 * kMargin));
  const QSize size(width, int(layout.height) + 2 * kMargin);
  return exportDrawing(path, size, figure.heading, QObject::tr("Text shaded by attention, exported by AttnScope"),
                       [&](QPainter& painter) {
                         painter.fillRect(QRect(QPoint(), size), style.background);
                         painter.translate(kMargin, kMargin);
                         render::paintFigure(painter, figure, layout, style);
                       });
}

attn::Result<void> exportCaptionGrid(const render::CaptionGridFigure& figure, const QFont& font, const QString& path) {
  return exportDrawing(
      path, render::captionGridSize(figure, font), figure.heading,
      QObject::tr("Show, Attend and Tell: each word's attention over the image, exported by AttnScope"),
      [&](QPainter& painter) { render::paintCaptionGrid(painter, figure, font); });
}

bool isMatrixFormat(ExportFormat format) { return format == ExportFormat::Csv || format == ExportFormat::Npy; }

QByteArray matrixNpy(const attn::Matrix& m) {
  QByteArray header = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
  header += QByteArray::number(qlonglong(m.rows())) + ", " + QByteArray::number(qlonglong(m.cols())) + "), }";
  // magic (6) + version (2) + length (2) + header + '\n' is a multiple of 64.
  const qsizetype unpadded = 10 + header.size() + 1;
  header += QByteArray((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  QByteArray out("\x93NUMPY\x01\x00", 8);
  const auto length = quint16(header.size());
  out.append(char(length & 0xff));
  out.append(char(length >> 8));
  out += header;
  const qsizetype start = out.size();
  out.resize(start + qsizetype(m.size()) * 4);
  char* data = out.data() + start;
  for (Index r = 0; r < m.rows(); ++r) {
    for (Index c = 0; c < m.cols(); ++c) {
      quint32 bits;
      const float v = m(r, c);
      std::memcpy(&bits, &v, 4);
      for (int b = 0; b < 4; ++b) *data++ = char((bits >> (8 * b)) & 0xff);  // little-endian on any host
    }
  }
  return out;
}

attn::Result<void> writeMatrixNpy(const attn::Matrix& m, const QString& path) {
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly)) return std::unexpected(exportError(path, file.errorString()));
  file.write(matrixNpy(m));
  if (!file.commit()) return std::unexpected(exportError(path, file.errorString()));
  return {};
}

QByteArray csvField(std::string_view text) {
  const bool quote = text.find_first_of(",\"\r\n") != std::string_view::npos;
  QByteArray out;
  out.reserve(qsizetype(text.size()) + 2);
  if (quote) out.append('"');
  for (char c : text) {
    if (c == '"') out.append('"');
    out.append(c);
  }
  if (quote) out.append('"');
  return out;
}

QByteArray matrixCsv(const attn::AttentionMap& map) {
  const auto& m = map.weights;
  const auto label = [](const attn::Labels& labels, Index i) -> QByteArray {
    if (std::size_t(i) < labels.size()) return csvField(labels[std::size_t(i)]);
    return QByteArray::number(qlonglong(i));
  };
  QByteArray out;
  for (Index c = 0; c < m.cols(); ++c) {
    out.append(',');
    out.append(label(map.col_labels, c));
  }
  out.append("\r\n");
  char number[32];
  for (Index r = 0; r < m.rows(); ++r) {
    out.append(label(map.row_labels, r));
    for (Index c = 0; c < m.cols(); ++c) {
      const int n = std::snprintf(number, sizeof number, "%.9g", double(m(r, c)));
      out.append(',');
      out.append(number, n);
    }
    out.append("\r\n");
  }
  return out;
}

attn::Result<void> writeMatrixCsv(const attn::AttentionMap& map, const QString& path) {
  QSaveFile file(path);  // atomic: a failed export never leaves half a file behind
  if (!file.open(QIODevice::WriteOnly)) return std::unexpected(exportError(path, file.errorString()));
  file.write(matrixCsv(map));
  if (!file.commit()) return std::unexpected(exportError(path, file.errorString()));
  return {};
}

}  // namespace attn::ui
