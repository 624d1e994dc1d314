// Reading and writing the files the UI and the command line handle themselves.
//
// A whole file read the way every loader of the engine reads one, for the files the UI and the command line
// open themselves (the Lab's text files, `attnscope-cli lab --input`): only a regular file (a FIFO, a device
// or /dev/zero is refused by name, without blocking on it or reading it), and at most `max_bytes` bytes
// (TooLarge, with the size, before anything is read). Errors name the path.
#pragma once

#include "attn/error.h"

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

namespace attn::io {

// The Lab's text files (a query line and a source): what the Lab tab and `lab --input` open.
inline constexpr std::int64_t kMaxTextFileBytes = 16 << 20;

// `noun` names what was expected, in the errors: "is a directory, not a text file".
Result<std::string> read_file(const std::filesystem::path& path, std::int64_t max_bytes,
                              std::string_view noun = "a text file");

// Writes `bytes` to `path` atomically (a temporary file beside it, flushed, renamed over it: a reader never sees
// half a file, and a failed write leaves the old file as it was), for the files the UI and the command line
// export. The path's bytes are used as they are. Errors name the path.
Result<void> write_file(const std::filesystem::path& path, std::span<const std::uint8_t> bytes);

}  // namespace attn::io
