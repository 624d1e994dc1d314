// GlimpseWorkbench's results: the right column (glimpses, filterbank plots), showing an outcome, the exports.
#include "views/export.h"
#include "workbenches/glimpse/glimpse_workbench.h"
#include "workbenches/glimpse/glimpse_panel_parts.h"
#include "workbenches/common/side_panel.h"

#include "attn/glimpse/convert.h"
#include "render/colormap.h"
#include "render/glimpse_render.h"
#include "views/plot_data.h"
#include "views/qcustomplot.h"
#include "views/glimpse_canvas.h"
#include "views/pixel_view.h"

#include <QFileInfo>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QSaveFile>
#include <QSplitter>
#include <QTabWidget>
#include <QVBoxLayout>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace attn::ui {
namespace {

using StnFamily = attn::glimpse::Family;
using glimpse_detail::kPlotIntervalNs;
using glimpse_detail::setLabel;
using glimpse_detail::smallNote;

constexpr int kMaxPlottedCurves = 24;

QString familyKey(StnFamily family) {
  return QString::fromLatin1(attn::glimpse::to_string(family).data(),
                             qsizetype(attn::glimpse::to_string(family).size()));
}

QCPTextElement* plotTitle(QCustomPlot* plot) {
  if (plot->plotLayout()->rowCount() < 1) return nullptr;
  return qobject_cast<QCPTextElement*>(plot->plotLayout()->element(0, 0));
}

void setupPlot(QCustomPlot* plot, const QString& title, const QString& xLabel) {
  plot->plotLayout()->insertRow(0);
  auto* text = new QCPTextElement(plot, title);
  QFont font = plot->font();
  font.setBold(true);
  text->setFont(font);
  plot->plotLayout()->addElement(0, 0, text);
  plot->xAxis->setLabel(xLabel);
  plot->yAxis->setLabel(QObject::tr("weight"));
  plot->setNoAntialiasingOnDrag(true);
  plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  plot->axisRect()->setRangeZoom(Qt::Horizontal);
  plot->axisRect()->setRangeDrag(Qt::Horizontal);
  plot->setMinimumHeight(110);
  plot->yAxis->ticker()->setTickCount(3);
  plot->xAxis->ticker()->setTickCount(5);
  QFont tickFont = plot->font();
  tickFont.setPointSizeF(tickFont.pointSizeF() * 0.9);
  plot->xAxis->setTickLabelFont(tickFont);
  plot->yAxis->setTickLabelFont(tickFont);
}

}  // namespace

// ---- the right column and the results -----------------------------------------------------------------

// The window three ways (soft mask, crop and matrix form), under the glimpses: shown while that mode is on.
void GlimpseWorkbench::buildFormsRow(QWidget* parent) {
  formsRow_ = new QWidget(parent);
  auto* forms = new QHBoxLayout(formsRow_);
  forms->setContentsMargins(0, 0, 0, 0);
  forms->setSpacing(6);
  maskedView_ = new PixelView(formsRow_);
  maskedView_->setObjectName(u"softMaskForm"_s);
  maskedView_->setCaption(tr("Soft mask a \u2299 I"));
  cropView_ = new PixelView(formsRow_);
  cropView_->setObjectName(u"cropForm"_s);
  cropView_->setCaption(tr("Crop"));
  cropView_->setPlaceholder(tr("The window misses the image"));
  matrixView_ = new PixelView(formsRow_);
  matrixView_->setObjectName(u"matrixForm"_s);
  matrixView_->setCaption(tr("Matrix form"));
  for (auto* view : {maskedView_, cropView_, matrixView_}) forms->addWidget(view, 1);
  formsRow_->setVisible(false);
}

void GlimpseWorkbench::buildRightColumn(QWidget* column) {
  auto* layout = new QVBoxLayout(column);
  layout->setContentsMargins(4, 6, 8, 4);
  layout->setSpacing(4);
  auto* split = new QSplitter(Qt::Vertical, column);
  split->setChildrenCollapsible(false);

  auto* views = new QWidget(split);
  auto* grid = new QGridLayout(views);
  grid->setContentsMargins(0, 0, 0, 0);
  grid->setSpacing(6);
  glimpseView_ = new PixelView(views);
  glimpseView_->setObjectName(u"gaussianGlimpse"_s);
  glimpseView_->setCaption(tr("Gaussian read"));
  glimpseView_->setPlaceholder(tr("The glimpse appears here"));
  glimpseView_->setToolTip(tr("\u03b3 Fy I Fx\u1d40: the Gaussian glimpse, one square per filter"));
  stnView_ = new PixelView(views);
  stnView_->setObjectName(u"stnGlimpse"_s);
  stnView_->setCaption(tr("STN glimpse"));
  stnView_->setToolTip(tr("grid_sample(I, affine_grid(\u03b8)): the spatial transformer's glimpse"));
  differenceView_ = new PixelView(views);
  differenceView_->setObjectName(u"glimpseDifference"_s);
  differenceView_->setCaption(tr("|Gaussian \u2212 STN|"));
  differenceView_->setPlaceholder(tr("Turn on \u201csame window\u201d to compare the two glimpses of one region"));
  differenceView_->setToolTip(
      tr("Largest channel difference per pixel, magma colour map, 0 .. the largest difference"));
  writeView_ = new PixelView(views);
  writeView_->setObjectName(u"writeCanvas"_s);
  writeView_->setCaption(tr("Write canvas"));
  writeView_->setPlaceholder(tr("Turn on \u201cwrite mode\u201d to write each glimpse back to a canvas, as DRAW does"));
  grid->addWidget(glimpseView_, 0, 0);
  grid->addWidget(stnView_, 0, 1);
  grid->addWidget(differenceView_, 1, 0);
  grid->addWidget(writeView_, 1, 1);
  // Shown only while same-window or write mode is on: otherwise the two glimpses get the room.
  differenceView_->setVisible(false);
  writeView_->setVisible(false);
  auto* status = new QHBoxLayout();
  busyLabel_ = new QLabel(views);
  busyLabel_->setObjectName(u"glimpseBusy"_s);
  busyLabel_->setForegroundRole(QPalette::PlaceholderText);
  errorSummary_ = new QLabel(views);
  errorSummary_->setObjectName(u"errorSummary"_s);
  errorSummary_->setTextFormat(Qt::PlainText);
  errorSummary_->setWordWrap(true);
  status->addWidget(errorSummary_, 1);
  status->addWidget(busyLabel_);
  buildFormsRow(views);
  grid->addWidget(formsRow_, 2, 0, 1, 2);
  grid->addLayout(status, 3, 0, 1, 2);

  plotTabs_ = new QTabWidget(split);
  plotTabs_->setDocumentMode(true);
  auto* curves = new QWidget(plotTabs_);
  auto* curvesLayout = new QVBoxLayout(curves);
  curvesLayout->setContentsMargins(0, 2, 0, 0);
  curvesLayout->setSpacing(2);
  fxPlot_ = new Plot(curves);
  fxPlot_->setObjectName(u"fxPlot"_s);
  setupPlot(fxPlot_, tr("Fx"), tr("x (px)"));
  fyPlot_ = new Plot(curves);
  fyPlot_->setObjectName(u"fyPlot"_s);
  setupPlot(fyPlot_, tr("Fy"), tr("y (px)"));
  curvesLayout->addWidget(fxPlot_, 1);
  curvesLayout->addWidget(fyPlot_, 1);
  plotNote_ = smallNote(QString(), curves);
  curvesLayout->addWidget(plotNote_);
  plotTabs_->addTab(curves, tr("Filterbank curves"));

  bankMapPlot_ = new Plot(plotTabs_);
  bankMapPlot_->setObjectName(u"bankMaps"_s);
  bankMapPlot_->plotLayout()->clear();
  for (int k = 0; k < 2; ++k) {
    auto* title = new QCPTextElement(bankMapPlot_, k == 0 ? tr("Fx (filter \u00d7 x)") : tr("Fy (filter \u00d7 y)"));
    QFont font = bankMapPlot_->font();
    font.setBold(true);
    title->setFont(font);
    auto* rect = new QCPAxisRect(bankMapPlot_);
    bankMapPlot_->plotLayout()->addElement(2 * k, 0, title);
    bankMapPlot_->plotLayout()->addElement(2 * k + 1, 0, rect);
    rect->axis(QCPAxis::atBottom)->setLabel(k == 0 ? tr("x (px)") : tr("y (px)"));
    rect->axis(QCPAxis::atLeft)->setLabel(tr("filter"));
    rect->axis(QCPAxis::atLeft)->setRangeReversed(true);  // filter 0 on top, as a matrix
    auto* map = new QCPColorMap(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
    map->setInterpolate(false);
    map->setGradient(render::gradient(render::Colormap::Viridis));
    map->setTightBoundary(true);
  }
  plotTabs_->addTab(bankMapPlot_, tr("Filterbank heatmaps"));

  split->addWidget(views);
  split->addWidget(plotTabs_);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 1);
  split->setSizes({470, 380});  // the glimpses first; the plots keep enough height for two readable axes
  layout->addWidget(split, 1);
  column->setMinimumWidth(380);
}

void GlimpseWorkbench::applyPending() {
  if (!pending_) return;
  outcome_ = std::move(pending_);
  pending_.reset();
  const GlimpseOutcome& o = *outcome_;
  shown_ = o.generation;
  settled_ = std::max(settled_, shown_);
  if (shown_ == submitted_) endBusy();
  updateBusyRow();
  for (const auto& [generation, ns] : postTimes_) {
    if (generation == o.generation) lastFrameMs_ = double(clock_.nsecsElapsed() - ns) / 1e6;
  }

  const auto& g = o.sanitised.glimpse;
  glimpseView_->setImage(o.gaussianImage, o.generation);
  glimpseView_->setCaption(tr("Gaussian read \u00b7 %1 \u00d7 %2").arg(g.x.n).arg(g.y.n));
  if (o.plan.preview()) {
    glimpseView_->setBadge(tr("preview (level %1)").arg(o.plan.level), QColor(200, 110, 0));
  } else {
    glimpseView_->setBadge({});
  }
  stnView_->setImage(o.stnImage, o.generation);
  stnView_->setCaption(o.request.settings.same_window
                           ? tr("STN (same window) \u00b7 %1 \u00d7 %2").arg(o.stnWidth).arg(o.stnHeight)
                           : tr("STN \u00b7 %1 \u00b7 %2 \u00d7 %3")
                                 .arg(familyKey(o.request.settings.stn.family))
                                 .arg(o.stnWidth)
                                 .arg(o.stnHeight));
  if (o.compared) {
    differenceView_->setImage(o.differenceImage, o.generation);
    differenceView_->setCaption(tr("|Gaussian \u2212 STN| \u00b7 max %1").arg(render::shortNumber(o.maxError, 3)));
    setLabel(errorSummary_, tr("Gaussian vs STN: max |error| %1 \u00b7 RMS %2%3")
                                .arg(render::shortNumber(o.maxError, 3), render::shortNumber(o.rmsError, 3),
                                     o.plan.preview() ? tr(" (against the preview)") : QString()));
  } else {
    if (!differenceView_->image().isNull()) differenceView_->setImage({});
    differenceView_->setCaption(tr("|Gaussian \u2212 STN|"));
    setLabel(errorSummary_, QString());
  }
  differenceView_->setVisible(o.request.settings.same_window);
  writeView_->setVisible(o.hasCanvas);
  if (o.hasCanvas) {
    writeView_->setImage(o.canvasImage, o.generation);
    writeView_->setCaption(o.canvasWrites == 1 ? tr("Write canvas \u00b7 1 write")
                                               : tr("Write canvas \u00b7 %1 writes").arg(o.canvasWrites));
    writeView_->setToolTip(
        tr("The sum of the writes (1/\u03b3) Fy\u1d40 P Fx at pyramid level %1, divided at each pixel "
           "by the weight the writes gave it (largest %2), so every written region shows its "
           "glimpse as the write puts it back; black: nothing written")
            .arg(o.canvasLevel)
            .arg(render::shortNumber(o.canvasPeak, 3)));
  }
  showClamps(o);
  showWindowForms(o);

  // Plots: exact results only, and at most every 100 ms during a drag.
  if (o.fx && o.fy) {
    const qint64 now = clock_.nsecsElapsed();
    if (!o.request.dragging || now - lastPlotNs_ >= kPlotIntervalNs) {
      plotPending_.reset();
      plotTimer_.stop();
      applyPlots(o);
    } else {
      plotPending_ = outcome_;
      if (!plotTimer_.isActive()) plotTimer_.start();
    }
  }

  const auto pathName = attn::glimpse::to_string(o.stats.path);
  const QString path = QString::fromLatin1(pathName.data(), qsizetype(pathName.size()));
  const QString summary = tr("glimpse: %1 \u00d7 %2 \u00b7 %3 \u00b7 read %4 ms (%5, %6 M MACs) \u00b7 frame %7 ms")
                              .arg(g.x.n)
                              .arg(g.y.n)
                              .arg(o.plan.preview() ? tr("preview (level %1)").arg(o.plan.level) : tr("exact"))
                              .arg(o.readMs, 0, 'f', o.readMs < 10 ? 2 : 1)
                              .arg(path)
                              .arg(o.stats.macs / 1e6, 0, 'f', 1)
                              .arg(lastFrameMs_, 0, 'f', 1);
  setRunSummary(summary);
  emit resultShown(shown_);
}

void GlimpseWorkbench::showWindowForms(const GlimpseOutcome& o) {
  if (!o.request.windowForms) return;
  if (!o.forms) {  // a drag frame: the last exact forms stay, marked
    if (!maskedView_->image().isNull()) {
      for (auto* view : {maskedView_, cropView_, matrixView_}) {
        view->setBadge(tr("updated when the drag ends"), QColor(200, 110, 0));
      }
      if (!o.compared) setLabel(errorSummary_, formsSummary_);
    }
    return;
  }
  const auto& f = *o.forms;
  const auto ms = [](double v) { return QString::number(v, 'f', v < 10 ? 2 : 1); };
  const QString level = o.formsLevel > 0 ? tr(" (pyramid level %1)").arg(o.formsLevel) : QString();
  for (auto* view : {maskedView_, cropView_, matrixView_}) view->setBadge({});
  maskedView_->setImage(o.maskedImage, o.generation);
  maskedView_->setCaption(tr("a \u2299 I \u00b7 %1 ms").arg(ms(f.mask_ms)));
  maskedView_->setToolTip(
      tr("a = a\u1d67 a\u2093\u1d40 over the whole image, a\u2093(p) = \u03a6((p \u2212 lo)/\u03c3) \u2212 "
         "\u03a6((p \u2212 hi)/\u03c3) on the window [lo, hi) of the filters' cells; %1 M multiplies for an "
         "image-sized result")
          .arg(f.mask_mults / 1e6, 0, 'f', 2));
  cropView_->setImage(o.cropImage, o.generation);
  cropView_->setCaption(tr("crop \u00b7 %1 ms").arg(ms(f.crop_ms)));
  cropView_->setToolTip(tr("Hard attention: I[%1:%2, %3:%4], the pixels of the window, copied; no multiply")
                            .arg(f.box.y)
                            .arg(f.box.y + f.box.height)
                            .arg(f.box.x)
                            .arg(f.box.x + f.box.width));
  matrixView_->setImage(o.matrixImage, o.generation);
  matrixView_->setCaption(tr("Fy I Fx\u1d40 \u00b7 %1 ms").arg(ms(f.matrix_ms)));
  matrixView_->setToolTip(tr("Dense filterbanks and two matrix products per channel: %1 M multiplies (the tab's "
                             "banded read above skips the filters' negligible tails)")
                              .arg(f.matrix_mults / 1e6, 0, 'f', 2));
  formsSummary_ =
      tr("The window three ways%1: soft mask a \u2299 I, %2\u00d7%3, %4 ms (%5 M multiplies) \u00b7 crop "
         "%6\u00d7%7, %8 ms \u00b7 matrix form \u03b3 Fy I Fx\u1d40, %9\u00d7%10, %11 ms (%12 M multiplies)")
          .arg(level)
          .arg(f.masked.width)
          .arg(f.masked.height)
          .arg(ms(f.mask_ms))
          .arg(f.mask_mults / 1e6, 0, 'f', 2)
          .arg(f.box.width)
          .arg(f.box.height)
          .arg(ms(f.crop_ms))
          .arg(f.matrix.width)
          .arg(f.matrix.height)
          .arg(ms(f.matrix_ms))
          .arg(f.matrix_mults / 1e6, 0, 'f', 2);
  if (!o.compared) setLabel(errorSummary_, formsSummary_);
}

QString GlimpseWorkbench::clampText() const { return clampLabel_->text(); }

void GlimpseWorkbench::showClamps(const GlimpseOutcome& o) {
  QStringList notes = render::clampDescriptions(o.sanitised.clamps);
  const bool clamped = !notes.isEmpty();
  for (int a = 0; a < 2; ++a) {
    const auto& axis = a == 0 ? o.sanitised.glimpse.x : o.sanitised.glimpse.y;
    if (axis.n == 1) {
      notes.append(tr("%1: N = 1, a single filter: the stride has no effect and the paper's δ̃ is taken "
                      "as for N = 2")
                       .arg(a == 0 ? u"x"_s : u"y"_s));
    }
  }
  if (o.sanitised.outside) {
    notes.append(
        tr("The glimpse lies outside the image: no filter centre is within 3 \u03c3 of it on some axis; "
           "DRAW's normalisation then reads the edge pixels, faintly."));
  }
  clampNotes_ = notes;
  // Mark the spin boxes the engine overrode.
  for (int a = 0; a < 2; ++a) {
    for (int f = 0; f < 5; ++f) gaussianEdits_[a][f]->setClamped(false);
  }
  gammaEdit_->setClamped(false);
  for (const auto& clamp : o.sanitised.clamps) {
    const QString parameter = QString::fromStdString(clamp.parameter).toLower();
    const int axis = parameter.startsWith(u"y"_s) ? 1 : 0;
    if (parameter.contains(u"gamma"_s))
      gammaEdit_->setClamped(true);
    else if (parameter.contains(u"sigma"_s))
      gaussianEdits_[axis][3]->setClamped(true);
    else if (parameter.contains(u"stride"_s))
      gaussianEdits_[axis][2]->setClamped(true);
    else if (parameter.endsWith(u".n"_s) || parameter == u"n"_s)
      gaussianEdits_[axis][4]->setClamped(true);
    else if (parameter.contains(u"first"_s) || parameter.contains(u"centre"_s)) {
      gaussianEdits_[axis][0]->setClamped(true);
      gaussianEdits_[axis][1]->setClamped(true);
    }
  }
  if (notes.isEmpty()) {
    setLabel(clampLabel_, tr("No clamps: the engine uses the parameters as set."),
             u"QLabel { color: palette(placeholder-text); }"_s);
  } else {
    setLabel(clampLabel_,
             (clamped ? tr("Clamped by the engine:\n") : QString()) + u"\u2022 "_s + notes.join(u"\n\u2022 "_s),
             clamped ? u"QLabel { color: #a01c1c; background: #fbe9e7; padding: 3px; }"_s
                     : u"QLabel { color: #8a5200; background: #fdf3e1; padding: 3px; }"_s);
  }
}

void GlimpseWorkbench::applyPlots(const GlimpseOutcome& o) {
  lastPlotNs_ = clock_.nsecsElapsed();
  const attn::glimpse::FilterBank* banks[2] = {o.fx.get(), o.fy.get()};
  QCustomPlot* plots[2] = {fxPlot_, fyPlot_};
  const QString names[2] = {u"Fx"_s, u"Fy"_s};
  QStringList notes;
  for (int k = 0; k < 2; ++k) {
    QCustomPlot* plot = plots[k];
    const auto& bank = *banks[k];
    plot->clearGraphs();
    const auto curves = render::filterCurves(bank, kMaxPlottedCurves);
    for (const auto& curve : curves.curves) {
      auto* graph = plot->addGraph();
      graph->setData(curve.keys, curve.values, true);
      const double t = bank.n > 1 ? double(curve.filter) / (bank.n - 1) : 0.5;
      graph->setPen(QPen(QColor::fromRgb(render::sample(render::Colormap::Viridis, 0.05 + 0.85 * t)), 1.3));
      // A filter narrower than a pixel has one or two samples: draw them as stems so they show.
      if (curve.keys.size() <= 2) {
        graph->setLineStyle(QCPGraph::lsImpulse);
        graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 5));
      }
    }
    const double pad = std::max(1.0, 0.02 * (curves.upper - curves.lower));
    plot->xAxis->setRange(curves.lower - pad, curves.upper + pad);
    plot->yAxis->setRange(0.0, curves.peak > 0.0 ? curves.peak * 1.08 : 1.0);
    if (auto* title = plotTitle(plot)) {
      title->setText(
          curves.subset
              ? tr("%1: %2 of %3 filters plotted (evenly spaced)").arg(names[k]).arg(curves.curves.size()).arg(bank.n)
              : tr("%1: %2 filters").arg(names[k]).arg(bank.n));
    }
    plot->replot(QCustomPlot::rpQueuedReplot);
    if (curves.subset) notes.append(names[k]);
  }
  plotNote_->setText(
      tr("Each curve is one filter's band (weights below %1 of its peak are cut; dropped mass \u2264 %2).")
          .arg(render::shortNumber(attn::glimpse::kBandTolerance, 2))
          .arg(render::shortNumber(std::max(o.fx->dropped, o.fy->dropped), 2)));

  // Heatmaps.
  int mapIndex = 0;
  for (int i = 0; i < bankMapPlot_->plottableCount() && mapIndex < 2; ++i) {
    auto* map = qobject_cast<QCPColorMap*>(bankMapPlot_->plottable(i));
    if (!map) continue;
    const auto& bank = *banks[mapIndex];
    const auto info = render::fillFilterBankMap(*map->data(), bank, 1024);
    map->setDataRange(QCPRange(0.0, info.peak > 0.0 ? info.peak : 1.0));
    map->keyAxis()->setRange(info.lower - 0.5 * info.pixelsPerColumn, info.upper + 0.5 * info.pixelsPerColumn);
    map->valueAxis()->setRange(-0.5, bank.n - 0.5);
    ++mapIndex;
  }
  bankMapPlot_->replot(QCustomPlot::rpQueuedReplot);
}

// ---- exports ------------------------------------------------------------------------------------------

attn::Result<void> GlimpseWorkbench::exportGlimpse(const QString& path) const {
  if (!outcome_ || outcome_->gaussianImage.isNull()) {
    return std::unexpected(exportError(path, tr("there is no glimpse yet")));
  }
  if (QFileInfo(path).suffix().toLower() != u"png"_s) {
    return std::unexpected(exportError(path, tr("the glimpse is saved as .png")));
  }
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly)) return std::unexpected(exportError(path, file.errorString()));
  if (!outcome_->gaussianImage.save(&file, "PNG") || !file.commit()) {
    return std::unexpected(exportError(path, tr("could not write the file")));
  }
  return {};
}

attn::Result<void> GlimpseWorkbench::exportAnnotated(const QString& path) const {
  const auto format = exportFormatFor(path);
  if (!format || *format == ExportFormat::Csv) {
    return std::unexpected(exportError(path, tr("the annotated image can be saved as .png, .svg or .pdf")));
  }
  if (!image_) return std::unexpected(exportError(path, tr("no image is open")));
  if (*format == ExportFormat::Png) {
    const QImage annotated = canvas_->annotatedImage(4096);
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) return std::unexpected(exportError(path, file.errorString()));
    if (annotated.isNull() || !annotated.save(&file, "PNG") || !file.commit()) {
      return std::unexpected(exportError(path, tr("could not write the file")));
    }
    return {};
  }
  return exportWidget(*canvas_, path);
}

attn::Result<void> GlimpseWorkbench::exportCurrentView(const QString& path) const {
  if (QFileInfo(path).suffix().toLower() == u"json"_s) return exportParameters(path);
  return exportAnnotated(path);
}

std::string GlimpseWorkbench::parametersJson() const {
  const int w = image_ ? image_->width : 0;
  const int h = image_ ? image_->height : 0;
  return attn::glimpse::to_json(settings_, w, h, imagePath().toStdString());
}

attn::Result<void> GlimpseWorkbench::exportParameters(const QString& path) const {
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly)) return std::unexpected(exportError(path, file.errorString()));
  const std::string json = parametersJson();
  file.write(json.data(), qint64(json.size()));
  if (!file.commit()) return std::unexpected(exportError(path, file.errorString()));
  return {};
}

}  // namespace attn::ui
