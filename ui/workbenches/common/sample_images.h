// The bundled sample photos (resources/samples/images, attribution in SOURCES.md there), embedded in the
// binary as ":/attnscope/samples/images/<file>". The Glimpse, Captioning and Transformer tabs, the session
// file and the command line name them by key ("astronaut"); none of those tabs owns the list.
#pragma once

#include "session/session.h"

#include <QList>
#include <QString>

namespace attn::ui {

struct SampleImage {
  QString key;       // "astronaut"
  QString name;      // "Astronaut (512 × 512)", for menus and boxes
  QString resource;  // ":/attnscope/samples/images/astronaut.png"
};

QList<SampleImage> sampleImages();
// The resource of the sample called `key`; empty for an unknown key.
QString sampleImageResource(const QString& key);
// A session's photo is there to open: a known sample, or a file that exists.
bool imageRefExists(const attn::ui::ImageRef& image);

}  // namespace attn::ui
