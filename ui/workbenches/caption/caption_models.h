// The models of the Captioning tab: the bundled Show, Attend and Tell captioners (resources/models/
// caption-soft and caption-hard, embedded as ":/models/<key>/", tools/train/MODELS.md section 4) and
// AttnScopeCaptioner folders on disk. One loader for the tab's worker and attnscope-cli caption: a bundled
// model is read from memory (config parsed from the resource's JSON, its weights parsed from the
// resource's bytes), a folder by the engine's own loader; every error names the file.
#pragma once

#include "attn/error.h"
#include "attn/models/captioner.h"
#include "workbenches/common/model_files.h"

#include <QString>
#include <QStringList>

#include <memory>
#include <optional>
#include <vector>

namespace attn::ui {

// The captioners this build embeds: soft attention first, then hard, then any other captioner folder.
std::vector<BundledModel> bundledCaptionModels();
QStringList bundledCaptionModelKeys();
QString defaultCaptionModel();                            // "caption-soft"
bool isCaptionArchitecture(const QString& architecture);  // "AttnScopeCaptioner"

struct CaptionModel {
  QString key;          // the bundled model's key; empty for a folder
  QString path;         // the folder, or ":/models/<key>"
  QString name;         // the bundled model's name, or the folder's
  QString description;  // the engine's one line: task, soft or hard, grid, parameters
  QString modelCard;    // MODEL_CARD.md (Markdown), empty when there is none
  std::shared_ptr<const attn::models::CaptionerModel> model;
  bool isHard() const { return model && model->config().attention == attn::models::CaptionAttention::Hard; }
};

// A bundled captioner's key or a model folder (or its config.json or model.safetensors).
attn::Result<CaptionModel> loadCaptionModel(const QString& nameOrFolder);

}  // namespace attn::ui
