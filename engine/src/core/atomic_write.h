// Writing a file so that a reader never sees half of it: write beside the target, then rename over it.
// Shared by every writer of the engine (images, safetensors); not part of the public API.
#pragma once

#include "attn/error.h"

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <span>
#include <string>

namespace attn::detail {

// Calls `write` with a temporary file in the target's folder, then renames that file over `path`. A failed
// write (`write` returns false, errno telling why) or rename removes the temporary file and leaves an
// existing file at `path` as it was. `name` stands for the file in errors.
Result<void> write_file_atomically(const std::filesystem::path& path, const std::string& name,
                                   const std::function<bool(std::FILE*)>& write);
Result<void> write_file_atomically(const std::filesystem::path& path, const std::string& name,
                                   std::span<const std::uint8_t> bytes);

}  // namespace attn::detail
