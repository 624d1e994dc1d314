#include "workbenches/caption/caption_models.h"
#include "render/strings.h"

#include <QCoreApplication>

#include <array>
#include <filesystem>

using namespace Qt::StringLiterals;

namespace attn::ui {
namespace {

// This file's texts, under the translation context "CaptionModels" (Qt's CaptionModels::tr() outside a QObject).
struct CaptionModels {
  Q_DECLARE_TR_FUNCTIONS(CaptionModels)
};

constexpr auto kCaptioner = "AttnScopeCaptioner";

constexpr std::array<KnownModelName, 2> kKnownCaptioners = {{
    {"caption-soft", "Scenes \u00b7 soft attention (Show, Attend and Tell)"},
    {"caption-hard", "Scenes \u00b7 hard attention (Show, Attend and Tell)"},
}};

attn::Error unsupportedCaptioner(const QString& configPath, const QString& architecture) {
  return modelFileError(
      attn::ErrorKind::Unsupported, configPath,
      architecture.isEmpty()
          ? CaptionModels::tr("no \"architectures\": the Captioning tab opens [\"AttnScopeCaptioner\"] models")
          : CaptionModels::tr("\"architectures\" names %1: the Captioning tab opens AttnScopeCaptioner models")
                .arg(architecture));
}

attn::Result<CaptionModel> loadBundledCaptioner(const BundledModel& bundled) {
  const QString configPath = bundled.resource + u"/config.json"_s;
  auto config = readModelConfig(configPath);
  if (!config) return std::unexpected(config.error());
  if (config->architecture != QLatin1String(kCaptioner)) {
    return std::unexpected(unsupportedCaptioner(configPath, config->architecture));
  }
  auto weights = readWeightsInMemory(bundled.resource + u"/model.safetensors"_s);
  if (!weights) return std::unexpected(weights.error());
  auto parsed = attn::models::CaptionerConfig::parse(config->bytes.toStdString(), pathBytes(configPath).toStdString());
  if (!parsed) return std::unexpected(parsed.error());
  auto loaded = attn::models::CaptionerModel::from_parts(std::move(*parsed), *weights);
  if (!loaded) return std::unexpected(loaded.error());
  CaptionModel model;
  model.key = bundled.key;
  model.path = bundled.resource;
  model.name = bundled.name;
  model.modelCard = readModelCard(bundled.resource);
  model.model = std::move(*loaded);
  model.description = QString::fromStdString(model.model->description());
  return model;
}

attn::Result<CaptionModel> loadCaptionerFolder(const QString& path) {
  auto opened = openModelFolder(path);
  if (!opened) return std::unexpected(opened.error());
  if (opened->config.architecture != QLatin1String(kCaptioner)) {
    return std::unexpected(unsupportedCaptioner(opened->configPath, opened->config.architecture));
  }
  auto loaded = attn::models::CaptionerModel::load(toPath(opened->folder));
  if (!loaded) return std::unexpected(loaded.error());
  CaptionModel model;
  model.path = opened->folder;
  model.name = opened->name;
  model.modelCard = readModelCard(opened->folder);
  model.model = std::move(*loaded);
  model.description = QString::fromStdString(model.model->description());
  return model;
}

}  // namespace

bool isCaptionArchitecture(const QString& architecture) { return architecture == QLatin1String(kCaptioner); }

std::vector<BundledModel> bundledCaptionModels() { return bundledModelsOf(kKnownCaptioners, isCaptionArchitecture); }

QStringList bundledCaptionModelKeys() {
  QStringList keys;
  for (const auto& model : bundledCaptionModels()) keys.append(model.key);
  return keys;
}

QString defaultCaptionModel() { return u"caption-soft"_s; }

attn::Result<CaptionModel> loadCaptionModel(const QString& nameOrFolder) {
  auto bundled = resolveModelName(nameOrFolder, bundledCaptionModels());
  if (!bundled) return std::unexpected(bundled.error());
  return *bundled ? loadBundledCaptioner(**bundled) : loadCaptionerFolder(nameOrFolder);
}

}  // namespace attn::ui
