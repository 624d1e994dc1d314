// Every file the engine reads is opened here, so that no reader can block on, or read without end from,
// something that is not a file: a FIFO, a terminal, /dev/zero, a socket. The path is checked with stat()
// before it is opened, opened non-blocking (a FIFO whose writer never comes would block open() for ever),
// and checked again with fstat() on what was opened. Reads are bounded by the format's own limit, checked
// against the size first and again while reading (a file that grows is refused, not read without end).
// Errors name the path and say what the path is. Not part of the public API.
#pragma once

#include "attn/error.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace attn::detail {

// An open regular file: its descriptor (closed with the object) and its size when opened.
class RegularFile {
 public:
  RegularFile() = default;
  RegularFile(int fd, std::int64_t size) : fd_(fd), size_(size) {}
  RegularFile(RegularFile&& other) noexcept : fd_(other.fd_), size_(other.size_) { other.fd_ = -1; }
  RegularFile& operator=(RegularFile&& other) noexcept;
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;
  ~RegularFile();

  int fd() const { return fd_; }
  std::int64_t size() const { return size_; }
  // The descriptor, no longer closed by this object.
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_ = -1;
  std::int64_t size_ = 0;
};

// `path` opened for reading when it is a regular file (symbolic links followed). Otherwise an Io error naming
// the path: "no such file", "is a directory, not <noun>", "is a FIFO (named pipe), not a file",
// "is a character device, not a file", "is a socket, not a file", ... `noun` says what was expected
// ("a safetensors file", "an image file").
Result<RegularFile> open_regular_file(const std::filesystem::path& path, std::string_view noun = "a file");

// The whole of a regular file of at most `max_bytes` bytes. Over it: TooLarge, "is N bytes; <noun> is at most
// M bytes", before anything is read.
Result<std::string> read_regular_file(const std::filesystem::path& path, std::int64_t max_bytes,
                                      std::string_view noun = "a file");

}  // namespace attn::detail
