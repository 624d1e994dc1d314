#include "render/figure_export.h"

#include "render/strings.h"

#include "attn/io/read_file.h"

#include <QBuffer>
#include <QFont>
#include <QFontMetrics>
#include <QFontMetricsF>
#include <QObject>
#include <QFileInfo>
#include <QImage>
#include <QPainter>
#include <QPdfWriter>
#include <QSvgGenerator>

#include <algorithm>
#include <cmath>
#include <functional>
#include <cstdio>
#include <cstring>
#include <optional>
#include <span>

using namespace Qt::StringLiterals;

namespace attn::ui {

attn::Error exportError(const QString& path, const QString& reason) {
  return attn::Error{toPath(path).string(), -1, -1, reason.toStdString(), attn::ErrorKind::Io};
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

attn::Result<void> writeExport(const QString& path, const QByteArray& bytes) {
  const std::span<const std::uint8_t> data(reinterpret_cast<const std::uint8_t*>(bytes.constData()),
                                           std::size_t(bytes.size()));
  if (auto written = attn::io::write_file(toPath(path), data); !written) {
    return std::unexpected(exportError(path, fromStd(written.error().reason)));
  }
  return {};
}

std::optional<QByteArray> pngBytes(const QImage& image) {
  QByteArray bytes;
  QBuffer buffer(&bytes);
  if (image.isNull() || !buffer.open(QIODevice::WriteOnly) || !image.save(&buffer, "PNG")) return std::nullopt;
  return bytes;
}

std::optional<QByteArray> vectorBytes(ExportFormat format, QSize size, const QString& title, const QString& description,
                                      const std::function<bool(QPaintDevice& device, double scale)>& paint) {
  QByteArray bytes;
  QBuffer buffer(&bytes);
  if (!buffer.open(QIODevice::WriteOnly)) return std::nullopt;
  bool ok = false;
  if (format == ExportFormat::Svg) {
    QSvgGenerator generator;
    generator.setOutputDevice(&buffer);
    generator.setSize(size);
    generator.setViewBox(QRect(QPoint(), size));
    generator.setResolution(96);  // CSS pixels: browsers show the drawing at the view's size
    generator.setTitle(title.isEmpty() ? u"AttnScope"_s : title);
    generator.setDescription(description);
    ok = paint(generator, 1.0);
  } else if (format == ExportFormat::Pdf) {
    QPdfWriter writer(&buffer);
    writer.setCreator(u"AttnScope"_s);
    writer.setTitle(title);
    writer.setResolution(96);
    writer.setPageSize(QPageSize(QSizeF(size), QPageSize::Point));
    writer.setPageMargins(QMarginsF(0, 0, 0, 0));
    // PDF points are 1/72 inch, the writer paints at 96 dpi: the drawing is scaled to fill the page.
    ok = paint(writer, double(writer.width()) / double(std::max(1, size.width())));
  }
  buffer.close();
  if (!ok || bytes.isEmpty()) return std::nullopt;
  return bytes;
}

attn::Result<void> writeOrFail(const QString& path, const std::optional<QByteArray>& bytes) {
  if (!bytes) return std::unexpected(exportError(path, QObject::tr("could not draw the view")));
  return writeExport(path, *bytes);
}

attn::Result<void> exportDrawing(const QString& path, QSize size, const QString& title, const QString& description,
                                 const std::function<void(QPainter&)>& paint) {
  const auto format = exportFormatFor(path);
  if (!format || isMatrixFormat(*format)) {
    return std::unexpected(exportError(path, QObject::tr("the view can be saved as .png, .svg or .pdf")));
  }
  if (*format == ExportFormat::Png) {
    QImage image(size, QImage::Format_RGB32);
    image.fill(Qt::white);
    QPainter painter(&image);
    paint(painter);
    painter.end();
    return writeOrFail(path, pngBytes(image));
  }
  return writeOrFail(path, vectorBytes(*format, size, title, description, [&](QPaintDevice& device, double scale) {
                       QPainter painter;
                       if (!painter.begin(&device)) return false;
                       painter.scale(scale, scale);
                       paint(painter);
                       return painter.end();
                     }));
}

attn::Result<void> exportTitledDrawing(const QString& path, const QString& title, const QFont& font, QSize size,
                                       const std::function<void(QPainter&)>& paint) {
  constexpr int kMargin = 12;
  QFont heading = font;
  heading.setBold(true);
  const QRectF text = QFontMetricsF(heading).boundingRect(QRectF(0, 0, size.width() - 2 * kMargin, 1e6),
                                                          Qt::AlignLeft | Qt::TextWordWrap, title);
  const int top = title.isEmpty() ? 0 : int(std::ceil(text.height())) + 2 * kMargin;
  const QSize whole(size.width(), size.height() + top);
  return exportDrawing(path, whole, title, QObject::tr("Attention exported by AttnScope"), [&](QPainter& painter) {
    painter.fillRect(QRect(QPoint(), whole), Qt::white);
    if (!title.isEmpty()) {
      painter.setFont(heading);
      painter.setPen(QColor(20, 20, 20));
      painter.drawText(QRectF(kMargin, kMargin, size.width() - 2 * kMargin, top - kMargin),
                       Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, title);
    }
    painter.translate(0, top);
    paint(painter);
  });
}

attn::Result<void> exportFigure(const render::TextFigure& figure, const QFont& font, int width, const QString& path) {
  const auto format = exportFormatFor(path);
  if (!format || isMatrixFormat(*format)) {
    return std::unexpected(exportError(path, QObject::tr("the view can be saved as .png, .svg or .pdf")));
  }
  constexpr int kMargin = 16;
  const render::FigureStyle style;  // paper colours, whatever the desktop theme
  if (*format == ExportFormat::Png) return writeOrFail(path, pngBytes(render::figureImage(figure, font, width, style)));
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

attn::Result<void> exportHeatmapFigure(const render::HeatmapFigure& figure, QSize size, const QFont& font,
                                       const QString& path) {
  const QString title = figure.map ? fromStd(figure.map->title()) : u"AttnScope"_s;
  return exportDrawing(path, size, title, QObject::tr("Attention map exported by AttnScope"), [&](QPainter& painter) {
    render::paintHeatmapFigure(painter, QRect(QPoint(), size), figure, font);
  });
}

attn::Result<void> exportHeatmapGrid(const std::vector<render::HeatmapFigure>& tiles, int columns, QSize size,
                                     const QFont& font, const QString& footnote, const QString& path) {
  const int grid = render::heatmapGridHeight(tiles, columns, size, font);
  const QFontMetrics metrics(font);
  const int width = size.width() - 8;
  const QRect note =
      footnote.isEmpty() ? QRect() : metrics.boundingRect(QRect(4, grid, width, 4096), Qt::TextWordWrap, footnote);
  const QSize drawn(size.width(), footnote.isEmpty() ? grid : grid + note.height() + 4);
  return exportDrawing(path, drawn, {}, {}, [&](QPainter& painter) {
    render::paintHeatmapGrid(painter, tiles, columns, size, font);
    if (footnote.isEmpty()) return;
    painter.setFont(font);
    painter.setPen(Qt::black);
    painter.drawText(QRect(4, grid, width, note.height()), Qt::TextWordWrap, footnote);
  });
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
  return writeExport(path, matrixNpy(m));
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
  return writeExport(path, matrixCsv(map));
}

}  // namespace attn::ui
