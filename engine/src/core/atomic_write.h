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

// Calls `write` with a temporary file in the target's folder (".<name>.tmp-<pid>-<n>"), flushes it to the disk
// (fsync), renames it over `path` and flushes the folder, so that after a crash or a kill at any moment `path`
// holds the previous file or the new one, never a mix. A failed write (`write` returns false, errno telling
// why) or rename removes the temporary file and leaves an existing file at `path` as it was. Temporary files
// of `path` that a killed writer left behind are removed by the next write. `name` stands for the file in
// errors. Kill-tested by tests/unit/test_session_kill.cpp.
Result<void> write_file_atomically(const std::filesystem::path& path, const std::string& name,
                                   const std::function<bool(std::FILE*)>& write);
Result<void> write_file_atomically(const std::filesystem::path& path, const std::string& name,
                                   std::span<const std::uint8_t> bytes);

}  // namespace attn::detail
