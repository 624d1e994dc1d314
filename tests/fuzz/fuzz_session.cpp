// The session file (*.attnscope.json) reader over arbitrary bytes. What it accepts must be written back by
// to_json as a session that reads again as the same one (autosave then restore), and every warning it
// gives names the file like an error does.
#include "fuzz_util.h"

#include "session/session.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace attn;
  constexpr const char* kName = "fuzz.attnscope.json";
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto session = ui::read_session(bytes, kName);
  if (!session) {
    fuzz::check_error(session.error(), kName);
    return 0;
  }
  for (const Error& w : session->warnings) fuzz::check_error(w, kName);
  const std::string written = ui::to_json(*session);
  auto again = ui::read_session(written, "written");
  fuzz::require(again.has_value() && *again == *session);
  return 0;
}
