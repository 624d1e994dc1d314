#include "app/versions.h"

#include <Eigen/Core>
#include <opencv2/core/version.hpp>

#include <QObject>
#include <QtGlobal>

using namespace Qt::StringLiterals;

namespace attn::ui {

QString appVersion() { return QStringLiteral(ATTN_VERSION); }

QList<QPair<QString, QString>> libraryVersions() {
  QString qt = QString::fromLatin1(qVersion());
  if (qt != QLatin1String(QT_VERSION_STR)) qt += QObject::tr(" (built with %1)").arg(QLatin1String(QT_VERSION_STR));
  return {
      {u"Qt"_s, qt},
      {u"Eigen"_s, u"%1.%2.%3"_s.arg(EIGEN_WORLD_VERSION).arg(EIGEN_MAJOR_VERSION).arg(EIGEN_MINOR_VERSION)},
      {u"OpenCV"_s, QStringLiteral(CV_VERSION)},
      {QObject::tr("Compiler"), QStringLiteral("GCC " __VERSION__)},
  };
}

QString versionReport(const QString& program, const QList<QPair<QString, QString>>& libraries) {
  QString out = program + u' ' + appVersion() + u'\n';
  for (const auto& [name, version] : libraries) out += u"  "_s + name + u' ' + version + u'\n';
  return out;
}

}  // namespace attn::ui
