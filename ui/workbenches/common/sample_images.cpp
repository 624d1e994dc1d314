#include "workbenches/common/sample_images.h"

#include <QCoreApplication>
#include <QFileInfo>

using namespace Qt::StringLiterals;

namespace attn::ui {

QList<SampleImage> sampleImages() {
  const auto tr = [](const char* text) { return QCoreApplication::translate("SampleImages", text); };
  return {
      {u"astronaut"_s, tr("Astronaut (512 \u00d7 512)"), u":/attnscope/samples/images/astronaut.png"_s},
      {u"chelsea"_s, tr("Chelsea the cat (451 \u00d7 300)"), u":/attnscope/samples/images/chelsea.png"_s},
      {u"coffee"_s, tr("Coffee (600 \u00d7 400)"), u":/attnscope/samples/images/coffee.png"_s},
      {u"rocket"_s, tr("Rocket launch (640 \u00d7 427)"), u":/attnscope/samples/images/rocket.jpg"_s},
  };
}

QString sampleImageResource(const QString& key) {
  for (const auto& sample : sampleImages()) {
    if (sample.key == key) return sample.resource;
  }
  return {};
}

bool imageRefExists(const attn::ui::ImageRef& image) {
  const QString value = QString::fromStdString(image.value);
  return image.kind == attn::ui::ImageRef::Kind::Sample ? !sampleImageResource(value).isEmpty()
                                                        : QFileInfo(value).isFile();
}

}  // namespace attn::ui
