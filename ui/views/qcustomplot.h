// The one place that includes <qcustomplot.h>. QCustomPlot 2.1's header uses Qt's `foreach` keyword in
// two member templates, which QT_NO_FOREACH (on for our code) removes. Those loops only read the
// container, so a range-for stands in for them while the header is parsed, and the macro is removed
// again so our own code cannot use it.
#pragma once

#if defined(QT_NO_FOREACH) && !defined(foreach)
#define foreach(variable, container) for (variable : container)
#define ATTN_QCP_DEFINED_FOREACH
#endif

#include <qcustomplot.h>  // IWYU pragma: export

#ifdef ATTN_QCP_DEFINED_FOREACH
#undef foreach
#undef ATTN_QCP_DEFINED_FOREACH
#endif

#include <QResizeEvent>

namespace attn::ui {

// QCustomPlot replots at every resize, an empty size too (a page of a tab not yet shown, a pane collapsed): its
// paint buffer is then a null pixmap, and Qt warns twice for each layer on stderr ("QPainter::begin: Paint device
// returned engine == 0"; 13 to 20 lines at each --screenshot of a tab). An empty plot shows nothing, so it keeps its
// last viewport until a size with area arrives, which replots. Every plot of the app is a Plot (or derives from it).
class Plot : public QCustomPlot {
 public:
  using QCustomPlot::QCustomPlot;

 protected:
  void resizeEvent(QResizeEvent* event) override {
    if (event->size().isEmpty()) return;
    QCustomPlot::resizeEvent(event);
  }
};

}  // namespace attn::ui
