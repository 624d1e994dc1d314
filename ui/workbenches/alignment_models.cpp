#include "workbenches/alignment_models.h"

#include "attn/io/safetensors.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>

using namespace Qt::StringLiterals;

namespace attn::ui {
namespace {

QString tr(const char* text) { return QCoreApplication::translate("AlignmentModels", text); }

constexpr auto kSeq2Seq = "AttnScopeSeq2Seq";
constexpr auto kClassifier = "AttnScopeClassifier";

struct KnownModel {
  const char* key;
  const char* name;
};
// The names say what a model is in the words of its papers; the order walks from Bahdanau to Luong's
// scores and the local window, then the two review classifiers.
constexpr std::array<KnownModel, 7> kKnown = {{
    {"date-bahdanau", "Dates \u00b7 Bahdanau (additive)"},
    {"date-luong-dot", "Dates \u00b7 Luong global (dot)"},
    {"date-luong-general", "Dates \u00b7 Luong global (general)"},
    {"date-luong-concat", "Dates \u00b7 Luong global (concat)"},
    {"date-luong-local-p", "Dates \u00b7 Luong local-p (general)"},
    {"sentiment-pooling", "Reviews \u00b7 attention pooling (2 heads)"},
    {"sentiment-hierarchical", "Reviews \u00b7 hierarchical"},
}};

QString resourceRoot() { return u":/models"_s; }

QString fromStd(const std::string& text) { return QString::fromStdString(text); }

attn::Error errorAbout(const QString& file, const QString& reason, std::int64_t offset = -1) {
  return attn::Error{file.toStdString(), offset, -1, reason.toStdString()};
}

// config.json's object and its "architectures"[0]; errors name the file and the byte.
struct ConfigJson {
  QByteArray bytes;
  QString architecture;
};
attn::Result<ConfigJson> readConfig(const QString& path, const QString& shownAs) {
  QFile file(path);
  if (!file.exists()) {
    return std::unexpected(errorAbout(shownAs, tr("missing: a model folder holds config.json and model.safetensors")));
  }
  if (!file.open(QIODevice::ReadOnly)) return std::unexpected(errorAbout(shownAs, file.errorString()));
  ConfigJson out;
  out.bytes = file.readAll();
  QJsonParseError parseError;
  const QJsonDocument doc = QJsonDocument::fromJson(out.bytes, &parseError);
  if (parseError.error != QJsonParseError::NoError) {
    return std::unexpected(errorAbout(shownAs, tr("not valid JSON (%1)").arg(parseError.errorString()), parseError.offset));
  }
  if (!doc.isObject()) return std::unexpected(errorAbout(shownAs, tr("expected a JSON object")));
  const QJsonValue architectures = doc.object().value(u"architectures"_s);
  if (architectures.isArray() && !architectures.toArray().isEmpty()) {
    out.architecture = architectures.toArray().first().toString();
  }
  return out;
}

attn::Error unsupported(const QString& shownAs, const QString& architecture) {
  if (architecture.isEmpty()) {
    return errorAbout(shownAs, tr("no \"architectures\": the Alignment tab opens [\"AttnScopeSeq2Seq\"] and "
                                  "[\"AttnScopeClassifier\"] models"));
  }
  return errorAbout(shownAs, tr("\"architectures\" names %1: the Alignment tab opens AttnScopeSeq2Seq and "
                                "AttnScopeClassifier models (transformers open in the Transformer tab)")
                                 .arg(architecture));
}

QString readText(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return {};
  return QString::fromUtf8(file.readAll());
}

void describe(AlignmentModel& model) {
  if (model.seq2seq) model.description = fromStd(model.seq2seq->description());
  if (model.classifier) model.description = fromStd(model.classifier->description());
}

attn::Result<AlignmentModel> loadBundled(const BundledModel& bundled) {
  const QString configPath = bundled.resource + u"/config.json"_s;
  auto config = readConfig(configPath, configPath);
  if (!config) return std::unexpected(config.error());
  const QString weightsPath = bundled.resource + u"/model.safetensors"_s;
  QFile weightsFile(weightsPath);
  if (!weightsFile.open(QIODevice::ReadOnly)) {
    return std::unexpected(errorAbout(weightsPath, tr("missing from the build: %1").arg(weightsFile.errorString())));
  }
  const QByteArray raw = weightsFile.readAll();
  std::vector<std::uint8_t> bytes(reinterpret_cast<const std::uint8_t*>(raw.constData()),
                                  reinterpret_cast<const std::uint8_t*>(raw.constData()) + raw.size());
  auto weights = attn::io::SafeTensors::parse(std::move(bytes), weightsPath.toStdString());
  if (!weights) return std::unexpected(weights.error());

  AlignmentModel model;
  model.key = bundled.key;
  model.path = bundled.resource;
  model.name = bundled.name;
  model.modelCard = readText(bundled.resource + u"/MODEL_CARD.md"_s);
  const std::string json = config->bytes.toStdString();
  if (config->architecture == QLatin1String(kSeq2Seq)) {
    auto parsed = attn::models::Seq2SeqConfig::parse(json, configPath.toStdString());
    if (!parsed) return std::unexpected(parsed.error());
    auto loaded = attn::models::Seq2SeqModel::from_parts(std::move(*parsed), *weights);
    if (!loaded) return std::unexpected(loaded.error());
    model.seq2seq = std::move(*loaded);
  } else if (config->architecture == QLatin1String(kClassifier)) {
    auto parsed = attn::models::ClassifierConfig::parse(json, configPath.toStdString());
    if (!parsed) return std::unexpected(parsed.error());
    auto loaded = attn::models::ClassifierModel::from_parts(std::move(*parsed), *weights);
    if (!loaded) return std::unexpected(loaded.error());
    model.classifier = std::move(*loaded);
  } else {
    return std::unexpected(unsupported(configPath, config->architecture));
  }
  describe(model);
  return model;
}

// A file inside a model folder stands for its folder.
QString folderOf(const QString& path) {
  const QFileInfo info(path);
  if (info.isFile() && (info.fileName() == u"config.json"_s || info.suffix() == u"safetensors"_s)) {
    return info.absolutePath();
  }
  return info.absoluteFilePath();
}

attn::Result<AlignmentModel> loadFolder(const QString& path) {
  const QString folder = folderOf(path);
  const QFileInfo info(folder);
  if (!info.exists()) return std::unexpected(errorAbout(path, tr("no such folder")));
  if (!info.isDir()) {
    return std::unexpected(errorAbout(path, tr("not a model folder (config.json and model.safetensors)")));
  }
  const QString configPath = QDir(folder).filePath(u"config.json"_s);
  auto config = readConfig(configPath, configPath);
  if (!config) return std::unexpected(config.error());
  AlignmentModel model;
  model.path = folder;
  model.name = info.fileName();
  model.modelCard = readText(QDir(folder).filePath(u"MODEL_CARD.md"_s));
  const std::filesystem::path fsFolder(folder.toStdString());
  if (config->architecture == QLatin1String(kSeq2Seq)) {
    auto loaded = attn::models::Seq2SeqModel::load(fsFolder);
    if (!loaded) return std::unexpected(loaded.error());
    model.seq2seq = std::move(*loaded);
  } else if (config->architecture == QLatin1String(kClassifier)) {
    auto loaded = attn::models::ClassifierModel::load(fsFolder);
    if (!loaded) return std::unexpected(loaded.error());
    model.classifier = std::move(*loaded);
  } else {
    return std::unexpected(unsupported(configPath, config->architecture));
  }
  describe(model);
  return model;
}

}  // namespace

std::vector<BundledModel> bundledModels() {
  std::vector<BundledModel> out;
  const QDir root(resourceRoot());
  QStringList keys = root.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name);
  // A folder counts once both of its model files are in (a model being trained has neither yet).
  keys.removeIf([&root](const QString& key) {
    return !QFile::exists(root.filePath(key + u"/config.json"_s)) ||
           !QFile::exists(root.filePath(key + u"/model.safetensors"_s));
  });
  for (const auto& known : kKnown) {
    const QString key = QString::fromLatin1(known.key);
    if (!keys.contains(key)) continue;
    out.push_back({key, QString::fromUtf8(known.name), root.filePath(key)});
    keys.removeAll(key);
  }
  for (const QString& key : std::as_const(keys)) {
    // A model added later: its task and folder name until it gets a name above.
    QString name = key;
    QFile config(root.filePath(key + u"/config.json"_s));
    if (config.open(QIODevice::ReadOnly)) {
      const QString task = QJsonDocument::fromJson(config.readAll()).object().value(u"task"_s).toString();
      if (!task.isEmpty()) name = task.left(1).toUpper() + task.mid(1) + u" \u00b7 "_s + key;
    }
    out.push_back({key, name, root.filePath(key)});
  }
  return out;
}

std::optional<BundledModel> findBundledModel(const QString& key) {
  for (auto& model : bundledModels()) {
    if (model.key == key) return model;
  }
  return std::nullopt;
}

QStringList bundledModelKeys() {
  QStringList keys;
  for (const auto& model : bundledModels()) keys.append(model.key);
  return keys;
}

QString defaultAlignmentModel() { return u"date-bahdanau"_s; }
QString defaultDateText() { return u"Saturday, 21 November 2026"_s; }
QString defaultReviewText() { return reviewExamples().front(); }

QStringList dateExamples() {
  // One of each kind of format the models were trained on (tools/train/dates_data.py), and one with
  // characters outside the vocabulary.
  return {defaultDateText(),     u"21.11.2026"_s,         u"Nov 21st 2026"_s,   u"the 3rd of March, 1999"_s,
          u"04/07/76"_s,         u"Sat, Nov 21, 2026"_s,  u"15-Aug-1947"_s,     u"2026 Nov 21"_s,
          u"DECEMBER 31, 1999"_s, u"Nov 21 '26"_s,        u"21\u00b711\u00b72026"_s};
}

QStringList reviewExamples() {
  return {u"I watched the film on a Sunday evening with my sister. The plot follows a family moving to a small "
          "town. The acting was truly superb. It runs for about 120 minutes."_s,
          u"We stayed 3 nights in May with my brother. Our room was on the third floor. The breakfast was not "
          "good. Check out is at noon."_s,
          u"I bought the kettle last June from an online shop. It weighs about 900 grams. I hated the lid."_s,
          u"We went there on a Friday night with my parents. The service was never boring! We paid 80 euros for "
          "two people."_s};
}

attn::Result<AlignmentModel> loadAlignmentModel(const QString& nameOrFolder) {
  if (nameOrFolder.trimmed().isEmpty()) return std::unexpected(errorAbout(QString(), tr("no model given")));
  if (!nameOrFolder.contains(u'/') && !nameOrFolder.contains(u'\\')) {
    if (const auto bundled = findBundledModel(nameOrFolder)) return loadBundled(*bundled);
    if (!QFileInfo::exists(nameOrFolder)) {
      const QStringList keys = bundledModelKeys();
      return std::unexpected(errorAbout(
          nameOrFolder, keys.isEmpty() ? tr("no such bundled model or folder (this build bundles no models)")
                                       : tr("no such bundled model or folder; the bundled models are %1")
                                             .arg(keys.join(u", "_s))));
    }
  }
  return loadFolder(nameOrFolder);
}

QString folderArchitecture(const QString& path) {
  const QString configPath = QDir(folderOf(path)).filePath(u"config.json"_s);
  auto config = readConfig(configPath, configPath);
  return config ? config->architecture : QString();
}

bool isAlignmentArchitecture(const QString& architecture) {
  return architecture == QLatin1String(kSeq2Seq) || architecture == QLatin1String(kClassifier);
}

}  // namespace attn::ui
