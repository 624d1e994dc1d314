// model.safetensors.index.json: the shard files a sharded checkpoint's weight_map names, which the loader then
// opens inside the model's folder.
#include "fuzz_util.h"

#include "attn/models/transformer.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace attn;
  constexpr const char* kName = "model.safetensors.index.json";
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto files = models::parse_safetensors_index(text, kName);
  if (!files) {
    fuzz::check_error(files.error(), kName);
    return 0;
  }
  // Every name is a plain file of the folder, each once, sorted: nothing can point outside the folder.
  fuzz::require(std::is_sorted(files->begin(), files->end()));
  fuzz::require(std::adjacent_find(files->begin(), files->end()) == files->end());
  for (const auto& f : *files) {
    fuzz::require(!f.empty() && f != "." && f != "..");
    fuzz::require(f.find('/') == std::string::npos && f.find('\\') == std::string::npos);
    fuzz::require(f.find('\0') == std::string::npos);
  }
  return 0;
}
