// Memory-mapped files that survive being truncated by another process while they are mapped. Reading a page of a
// file mapping past the file's new end raises SIGBUS, which would kill the program (a model's weights and a
// version-2 dump stay mapped for as long as they are open). Every mapping made here is listed in a small lock-free
// registry, and one process-wide SIGBUS handler (installed once, with the first mapping) looks the faulting address
// up there: inside a registered mapping, it maps a page of zeros over the faulting page (mmap MAP_FIXED |
// MAP_ANONYMOUS, read-only), marks that mapping as changed, and returns, so the read that faulted completes (reading
// zeros). Faults anywhere else go to the handler that was there before (or to the default action: the crash that
// would have happened anyway). What read the mapping then asks intact() before it trusts what it read, and refuses
// the result naming the file: "changed on disk while open: it is now N bytes, was M; reopen it".
//
// Why this is sound: the handler runs on the faulting thread, touches only the registry (std::atomic words, lock-free,
// so async-signal-safe), calls only the mmap system call (through syscall(), no library state) and sigaction/raise
// when it chains, and allocates nothing. Registering and unregistering are lock-free too (a slot is claimed with a
// compare-and-swap and published with a release store), so a mapping may be made or dropped on any thread while
// another faults. A mapping is unregistered before it is unmapped, and no thread reads it then (its owner, a
// shared_ptr, is gone). When the registry is full (kMaxMappedFiles at once), the file is read into memory instead.
// Not part of the public API.
#pragma once

#include "attn/error.h"
#include "file_read.h"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace attn::detail {

// Mappings the registry holds at once: a model of 100 shards and dozens of dumps fit many times over.
inline constexpr int kMaxMappedFiles = 1024;

class MappedFile {
 public:
  // `file` mapped read-only (its whole size when opened), or, when it is empty or the registry is full, read into
  // memory. `name` names the file in errors.
  static Result<std::shared_ptr<const MappedFile>> map(RegularFile file, std::string name);
  // open_regular_file(path, noun) then map(): the file readers' one way in (safetensors, GGUF).
  static Result<std::shared_ptr<const MappedFile>> open(const std::filesystem::path& path, std::string_view noun);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::uint8_t* data() const { return data_; }
  std::size_t size() const { return size_; }
  const std::string& name() const { return name_; }
  bool mapped() const { return slot_ >= 0; }

  // Whether the file is as it was when mapped: no read of it faulted and its size is the same. Otherwise an Io error
  // naming the file: "changed on disk while open: it is now N bytes, was M; reopen it". Cheap (an atomic load and an
  // fstat): called after every load, forward or map read that used the mapping.
  Result<void> intact() const;
  // Whether a read of the mapping faulted (and read zeros): the registry's flag alone.
  bool faulted() const;

 private:
  MappedFile() = default;
  RegularFile file_;
  std::string name_;
  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
  void* mapping_ = nullptr;
  int slot_ = -1;  // in the registry; -1: not mapped (read into owned_)
  std::unique_ptr<std::uint8_t[]> owned_;
};

// The handler's registry, for tests: how many mappings are registered now.
int registered_mappings();

}  // namespace attn::detail
