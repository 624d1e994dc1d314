#include "workbenches/common/render_report.h"

#include "render/strings.h"

using namespace Qt::StringLiterals;

namespace attn::ui {

RenderFailure usageFailure(const QString& message) { return RenderFailure{RenderFailure::Kind::Usage, message}; }
RenderFailure inputFailure(const QString& message) { return RenderFailure{RenderFailure::Kind::Input, message}; }
RenderFailure inputFailure(const attn::Error& error) { return engineFailure(RenderFailure::Kind::Input, error); }
RenderFailure outputFailure(const attn::Error& error) { return engineFailure(RenderFailure::Kind::Output, error); }

RenderFailure engineFailure(RenderFailure::Kind kind, const attn::Error& error) {
  return {kind, QString::fromStdString(error.message()), error.kind};
}

QString failureText(const RenderFailure& failure) {
  if (!failure.error) return failure.message;
  return u"error (%1): %2"_s.arg(fromStd(attn::to_string(*failure.error)), failure.message);
}

}  // namespace attn::ui
