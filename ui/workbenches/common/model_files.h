// The files of an AttnScope model folder, for the tabs that open the project's own models (Alignment,
// Captioning): config.json with its "architectures"[0] and "task", model.safetensors read from a Qt
// resource (the bundled models live in the binary as ":/models/<key>/<file>", see ui/CMakeLists.txt), the
// model card, and the bundled folders listed with their architecture so each tab lists only its own.
// Every error names the file.
#pragma once

#include "attn/error.h"
#include "attn/io/safetensors.h"

#include <QByteArray>
#include <QString>

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

namespace attn::ui {

attn::Error modelFileError(attn::ErrorKind kind, const QString& file, const QString& reason, std::int64_t offset = -1);

struct ModelConfigFile {
  QByteArray bytes;      // the whole file, for the engine's own parser
  QString architecture;  // "architectures"[0]; empty when there is none
  QString task;          // "task"; empty when there is none
};
// A missing file, one that is not JSON (with the byte) or not an object is an error naming `path`.
attn::Result<ModelConfigFile> readModelConfig(const QString& path);

// model.safetensors from a resource (or any file Qt can read), parsed from memory.
attn::Result<attn::io::SafeTensors> readWeightsInMemory(const QString& path);

// MODEL_CARD.md of a folder (or a resource folder), empty when there is none.
QString readModelCard(const QString& folder);

// A config.json or *.safetensors stands for the folder it is in; anything else is taken as the folder.
QString modelFolderOf(const QString& path);

struct BundledFolder {
  QString key;           // the folder's name, e.g. "caption-soft"
  QString resource;      // ":/models/caption-soft"
  QString architecture;  // from its config.json
  QString task;
};
// A model of a tab's bundled list.
struct BundledModel {
  QString key;       // the folder's name, e.g. "date-bahdanau"
  QString name;      // as listed, e.g. "Dates · Bahdanau (additive)"
  QString resource;  // ":/models/date-bahdanau"
};

// What the user named: one of `bundled` (a name without a path separator that is a key), nullopt for a
// folder, or an error naming the name and listing the keys when it is neither.
attn::Result<std::optional<BundledModel>> resolveModelName(const QString& nameOrFolder,
                                                           const std::vector<BundledModel>& bundled);

// A model folder on disk (a config.json or *.safetensors in it stands for it) with its config read; errors
// for a missing folder, a file that is not in one, and a missing or broken config.json.
struct ModelFolder {
  QString folder;  // absolute
  QString name;    // the folder's name
  QString configPath;
  ModelConfigFile config;
};
attn::Result<ModelFolder> openModelFolder(const QString& path);

// The folders of ":/models" holding both config.json and model.safetensors (a model still being trained
// has neither), by name.
std::vector<BundledFolder> bundledFolders();
// Registers ":/models" (the bundled models' resource object, ui/CMakeLists.txt) once; bundledFolders() and the
// Transformer tab's demo call it before reading there.
void ensureBundledModels();

}  // namespace attn::ui

namespace attn::ui {

struct KnownModelName {
  const char* key;
  const char* name;  // UTF-8
};
// A tab's bundled list: the folders whose architecture `accepts`, the `known` ones first in their order and
// under their names, then any other by key (named by its task when it has one, until it gets a name).
std::vector<BundledModel> bundledModelsOf(std::span<const KnownModelName> known,
                                          const std::function<bool(const QString&)>& accepts);

}  // namespace attn::ui
