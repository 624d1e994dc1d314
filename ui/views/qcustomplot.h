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
