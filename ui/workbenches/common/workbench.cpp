#include "workbenches/common/workbench.h"

#include "render/strings.h"
#include "views/export.h"

#include <QDir>

#include <string>

namespace attn::ui {

Workbench::Workbench(Identity identity, int applyIntervalMs, QWidget* parent)
    : QWidget(parent), identity_(std::move(identity)) {
  applyTimer_.setSingleShot(true);
  applyTimer_.setInterval(applyIntervalMs);
  connect(&applyTimer_, &QTimer::timeout, this, [this] { applyPending(); });
}

Workbench::~Workbench() { applyTimer_.stop(); }

QString Workbench::key() const { return QString::fromStdString(std::string(attn::ui::to_string(identity_.tab))); }

bool Workbench::isIdle() const { return !isLoading() && !applyTimer_.isActive() && settled_ >= submitted_; }

attn::Result<void> Workbench::exportMatrix(const QString& path) const {
  return attn::fail(attn::ErrorKind::Unsupported,
                    tr("the %1 tab has no matrix to export").arg(QString(identity_.title).remove(u'&')).toStdString(),
                    pathBytes(path).toStdString());
}

QString Workbench::exportViewFilters() const {
  return hasMatrix() ? exportFilters() : tr("PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf)");
}

void Workbench::scheduleApply() {
  if (!applyTimer_.isActive()) applyTimer_.start();
}

void Workbench::setRunSummary(const QString& summary) {
  runSummary_ = summary;
  emit runSummaryChanged(summary);
}

QString Workbench::goneNote(const QString& origin, const QString& file, const QString& what) {
  return tr("%1: %2 no longer exists; %3 falls back to its default").arg(origin, QDir::toNativeSeparators(file), what);
}

}  // namespace attn::ui
