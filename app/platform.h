// The platform both programs start on: attnscope renders its --screenshot, and attnscope-cli everything, on a
// machine without a display (a cluster job, CI).
#pragma once

#include <QByteArray>
#include <QtGlobal>

namespace attn::ui {

// Selects the offscreen platform when there is no display and QT_QPA_PLATFORM is unset or empty (Qt reads an
// empty one as unset, and then tries xcb). Call before the QGuiApplication is constructed.
inline void useOffscreenPlatformWithoutDisplay() {
  if (qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY") &&
      qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
    qputenv("QT_QPA_PLATFORM", "offscreen");
  }
}

}  // namespace attn::ui
