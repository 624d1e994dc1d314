// The Mechanism Lab's request JSON (settings and session files), then, for small requests, the run the
// lab makes of it: every mechanism of the catalogue with the parameters the file asks for.
#include "fuzz_util.h"

#include "attn/lab/lab.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace attn;
  constexpr const char* kName = "lab.json";
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto request = lab::lab_request_from_json(text, kName);
  if (!request) {
    fuzz::check_error(request.error(), kName);
    return 0;
  }
  // What is saved must load again as the same request.
  auto again = lab::lab_request_from_json(lab::to_json(*request), "saved");
  fuzz::require(again.has_value() && again->query == request->query && again->source == request->source &&
                again->params == request->params);

  // Sizes the fuzzer can afford per input; the parameters themselves are whatever the file says.
  if (request->params.dim > 32 || request->query.size() + request->source.size() > 256) return 0;
  auto run = lab::run_lab(*request);
  if (!run) {
    fuzz::require(!run.error().reason.empty());
    return 0;
  }
  fuzz::require(!run->trace.maps().empty());
  return 0;
}
