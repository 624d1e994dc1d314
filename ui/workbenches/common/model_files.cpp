#include "workbenches/common/model_files.h"

#include "attn/io/read_file.h"
#include "render/strings.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStringList>

#include <algorithm>

using namespace Qt::StringLiterals;

// Outside any namespace: Q_INIT_RESOURCE declares the resource object's initialiser, qInitResources_attn_ui_models.
static void attnInitBundledModelResource() {
#ifdef ATTN_BUNDLED_MODELS
  Q_INIT_RESOURCE(attn_ui_models);
#endif
}

namespace attn::ui {

void ensureBundledModels() {
  static const bool registered = (attnInitBundledModelResource(), true);
  (void)registered;
}

namespace {
// At start-up too, wherever this file is linked (every program that reads a model): a session restoring a
// ":/models/..." path may read it before anything lists the bundled models.
const bool kBundledModelsAtStart = (ensureBundledModels(), true);
}  // namespace

namespace {

// This file's texts, under the translation context "ModelFiles" (Qt's ModelFiles::tr() outside a QObject).
struct ModelFiles {
  Q_DECLARE_TR_FUNCTIONS(ModelFiles)
};

// The same limit as the engine's config reader; a model card is shown whole, so a smaller one.
constexpr std::int64_t kMaxConfigBytes = 16 << 20;
constexpr std::int64_t kMaxModelCardBytes = 1 << 20;

}  // namespace

attn::Error modelFileError(attn::ErrorKind kind, const QString& file, const QString& reason, std::int64_t offset) {
  return attn::Error{pathBytes(file).toStdString(), offset, -1, reason.toStdString(), kind};
}

attn::Result<ModelConfigFile> readModelConfig(const QString& path) {
  QFile file(path);
  if (path.startsWith(u':') ? !file.exists() : !pathExists(path)) {
    return std::unexpected(modelFileError(
        attn::ErrorKind::Io, path, ModelFiles::tr("missing: a model folder holds config.json and model.safetensors")));
  }
  ModelConfigFile out;
  if (path.startsWith(u':')) {  // a bundled model, in the resources
    if (!file.open(QIODevice::ReadOnly)) {
      return std::unexpected(modelFileError(attn::ErrorKind::Io, path, file.errorString()));
    }
    out.bytes = file.readAll();
  } else {  // on disk: the engine's reader (a regular file of at most 16 MiB; a FIFO is refused, not waited on)
    auto text = attn::io::read_file(toPath(path), kMaxConfigBytes, "a config file");
    if (!text) return std::unexpected(std::move(text.error()));
    out.bytes = QByteArray::fromStdString(*text);
  }
  QJsonParseError parseError;
  const QJsonDocument doc = QJsonDocument::fromJson(out.bytes, &parseError);
  if (parseError.error != QJsonParseError::NoError) {
    return std::unexpected(modelFileError(attn::ErrorKind::Malformed, path,
                                          ModelFiles::tr("not valid JSON (%1)").arg(parseError.errorString()),
                                          parseError.offset));
  }
  if (!doc.isObject()) {
    return std::unexpected(modelFileError(attn::ErrorKind::Malformed, path, ModelFiles::tr("expected a JSON object")));
  }
  const QJsonObject object = doc.object();
  const QJsonValue architectures = object.value(u"architectures"_s);
  if (architectures.isArray() && !architectures.toArray().isEmpty()) {
    out.architecture = architectures.toArray().first().toString();
  }
  out.task = object.value(u"task"_s).toString();
  return out;
}

attn::Result<attn::io::SafeTensors> readWeightsInMemory(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) {
    return std::unexpected(modelFileError(attn::ErrorKind::Io, path,
                                          ModelFiles::tr("missing from the build: %1").arg(file.errorString())));
  }
  const QByteArray raw = file.readAll();
  std::vector<std::uint8_t> bytes(reinterpret_cast<const std::uint8_t*>(raw.constData()),
                                  reinterpret_cast<const std::uint8_t*>(raw.constData()) + raw.size());
  return attn::io::SafeTensors::parse(std::move(bytes), pathBytes(path).toStdString());
}

QString readModelCard(const QString& folder) {
  const QString path = QDir(folder).filePath(u"MODEL_CARD.md"_s);
  if (path.startsWith(u':')) {
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()) : QString();
  }
  const auto text = attn::io::read_file(toPath(path), kMaxModelCardBytes, "a model card");
  return text ? fromStd(*text) : QString();
}

QString modelFolderOf(const QString& path) {
  // On the name's bytes: QFileInfo would stat "?" for a byte that is not UTF-8.
  if (isFilePath(path) && (fileNameOf(path) == u"config.json"_s || path.endsWith(u".safetensors"_s))) {
    return folderOf(path);
  }
  return absolutePath(path);
}

attn::Result<std::optional<BundledModel>> resolveModelName(const QString& nameOrFolder,
                                                           const std::vector<BundledModel>& bundled) {
  if (nameOrFolder.trimmed().isEmpty()) {
    return std::unexpected(modelFileError(attn::ErrorKind::Io, QString(), ModelFiles::tr("no model given")));
  }
  if (nameOrFolder.contains(u'/') || nameOrFolder.contains(u'\\')) return std::optional<BundledModel>();
  for (const auto& model : bundled) {
    if (model.key == nameOrFolder) return std::optional<BundledModel>(model);
  }
  if (pathExists(nameOrFolder)) return std::optional<BundledModel>();
  QStringList keys;
  for (const auto& model : bundled) keys.append(model.key);
  return std::unexpected(modelFileError(
      attn::ErrorKind::Io, nameOrFolder,
      keys.isEmpty()
          ? ModelFiles::tr("no such bundled model or folder (this build bundles no models)")
          : ModelFiles::tr("no such bundled model or folder; the bundled models are %1").arg(keys.join(u", "_s))));
}

attn::Result<ModelFolder> openModelFolder(const QString& path) {
  ModelFolder out;
  out.folder = modelFolderOf(path);
  if (!pathExists(out.folder)) {
    return std::unexpected(modelFileError(attn::ErrorKind::Io, path, ModelFiles::tr("no such folder")));
  }
  if (!isFolderPath(out.folder)) {
    return std::unexpected(modelFileError(attn::ErrorKind::Io, path,
                                          ModelFiles::tr("not a model folder (config.json and model.safetensors)")));
  }
  out.name = fileNameOf(out.folder);
  out.configPath = QDir(out.folder).filePath(u"config.json"_s);
  auto config = readModelConfig(out.configPath);
  if (!config) return std::unexpected(config.error());
  out.config = std::move(*config);
  return out;
}

std::vector<BundledFolder> bundledFolders() {
  ensureBundledModels();
  std::vector<BundledFolder> out;
  const QDir root(u":/models"_s);
  for (const QString& key : root.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name)) {
    const QString resource = root.filePath(key);
    if (!QFile::exists(resource + u"/config.json"_s) || !QFile::exists(resource + u"/model.safetensors"_s)) continue;
    BundledFolder folder{key, resource, {}, {}};
    if (auto config = readModelConfig(resource + u"/config.json"_s)) {
      folder.architecture = config->architecture;
      folder.task = config->task;
    }
    out.push_back(std::move(folder));
  }
  return out;
}

std::vector<BundledModel> bundledModelsOf(std::span<const KnownModelName> known,
                                          const std::function<bool(const QString&)>& accepts) {
  std::vector<BundledFolder> folders = bundledFolders();
  std::erase_if(folders, [&accepts](const BundledFolder& f) { return !accepts(f.architecture); });
  std::vector<BundledModel> out;
  for (const auto& entry : known) {
    const auto it = std::find_if(folders.begin(), folders.end(),
                                 [&entry](const BundledFolder& f) { return f.key == QLatin1String(entry.key); });
    if (it == folders.end()) continue;
    out.push_back({it->key, QString::fromUtf8(entry.name), it->resource});
    folders.erase(it);
  }
  for (const auto& folder : folders) {
    const QString name = folder.task.isEmpty()
                             ? folder.key
                             : folder.task.left(1).toUpper() + folder.task.mid(1) + u" \u00b7 "_s + folder.key;
    out.push_back({folder.key, name, folder.resource});
  }
  return out;
}

}  // namespace attn::ui
