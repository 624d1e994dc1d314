#include "session/session_values.h"

#include "core/try.h"
#include "session/colormap_keys.h"

#include <algorithm>
#include <utility>

namespace attn::ui {

bool is_sample_key(std::string_view key) {
  return !key.empty() && key.size() <= 64 && std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
  });
}

Result<void> read_image(io::SessionMembers& parent, std::string_view key, ImageRef& out) {
  const nlohmann::json* v = nullptr;
  ATTN_ASSIGN(v, parent.object(key));
  if (!v) return {};
  const bool sample = v->contains("sample");
  const bool file = v->contains("file");
  if (sample == file || v->size() != 1) {
    return parent.error(ErrorKind::Malformed, key,
                        "must hold one of \"sample\" (a bundled photo) or \"file\" (a path)");
  }
  ImageRef image;
  image.kind = sample ? ImageRef::Kind::Sample : ImageRef::Kind::File;
  const std::string member = std::string(key) + "." + (sample ? "sample" : "file");
  ATTN_TRY(parent.string_value(*v->begin(), member, io::kMaxSessionName, image.value, true, true));
  if (sample && !is_sample_key(image.value)) {
    return parent.error(ErrorKind::OutOfRange, member,
                        io::SessionMembers::quote(image.value) + " is not a sample's name");
  }
  out = std::move(image);
  return {};
}

nlohmann::ordered_json image_json(const ImageRef& image) {
  return nlohmann::ordered_json{{image.kind == ImageRef::Kind::Sample ? "sample" : "file", image.value}};
}

nlohmann::ordered_json nested_json(const std::string& text) { return nlohmann::ordered_json::parse(text); }

Result<void> read_colormap(io::SessionMembers& members, std::string_view key, std::string& out) {
  std::size_t index = render::kColormapKeys.size();
  ATTN_TRY(members.choice(key, render::kColormapKeys, index));
  if (index < render::kColormapKeys.size()) out = std::string(render::kColormapKeys[index]);
  return {};
}

}  // namespace attn::ui
