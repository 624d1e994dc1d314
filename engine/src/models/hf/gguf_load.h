// A GGUF file (llama.cpp's) loaded as a decoder: gguf_load.cpp. Internal to engine/models; TransformerModel::load
// calls it for a *.gguf path.
#pragma once

#include "attn/models/transformer.h"

#include <filesystem>
#include <memory>

namespace attn::models {

Result<std::shared_ptr<const TransformerModel>> load_gguf(const std::filesystem::path& path, const Progress& progress,
                                                          const LoadOptions& options = {});

}  // namespace attn::models
