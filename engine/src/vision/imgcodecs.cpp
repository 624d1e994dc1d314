// OpenCV's image codecs loaded on first use (imgcodecs.h).
#include "imgcodecs.h"

#include <opencv2/imgcodecs.hpp>

#include <dlfcn.h>

namespace attn::vision::imgcodecs {

namespace {

// The two functions' types, checked against OpenCV's declarations at compile time (the casts pick the overloads by
// these signatures; decltype does not reference the functions, so nothing links the library).
using Decode = decltype(static_cast<cv::Mat (*)(cv::InputArray, int)>(&cv::imdecode));
using Encode =
    decltype(static_cast<bool (*)(const cv::String&, cv::InputArray, std::vector<uchar>&, const std::vector<int>&)>(
        &cv::imencode));

struct Library {
  Decode decode = nullptr;
  Encode encode = nullptr;
  std::string error;  // why they could not be loaded
};

// Loaded once (thread-safe), never unloaded. ATTN_OPENCV_IMGCODECS is the soname the build found (engine's
// CMakeLists.txt); the symbols are the Itanium ABI names of the two signatures above.
const Library& library() {
  static const Library lib = [] {
    Library l;
    void* handle = ::dlopen(ATTN_OPENCV_IMGCODECS, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* why = ::dlerror();
      l.error = std::string("could not load OpenCV's image codecs (") + ATTN_OPENCV_IMGCODECS +
                "): " + (why ? why : "unknown reason");
      return l;
    }
    l.decode = reinterpret_cast<Decode>(::dlsym(handle, "_ZN2cv8imdecodeERKNS_11_InputArrayEi"));
    l.encode = reinterpret_cast<Encode>(
        ::dlsym(handle,
                "_ZN2cv8imencodeERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEERKNS_11_"
                "InputArrayERSt6vectorIhSaIhEERKSB_IiSaIiEE"));
    if (!l.decode || !l.encode) {
      l.error = std::string(ATTN_OPENCV_IMGCODECS) + " lacks cv::imdecode or cv::imencode as this build declares them";
    }
    return l;
  }();
  return lib;
}

}  // namespace

Result<cv::Mat> decode(const cv::Mat& buffer, int flags) {
  const Library& lib = library();
  if (!lib.decode) return fail(ErrorKind::Io, lib.error);
  return lib.decode(buffer, flags);
}

Result<bool> encode(const std::string& ext, const cv::Mat& image, std::vector<std::uint8_t>& out,
                    const std::vector<int>& params) {
  const Library& lib = library();
  if (!lib.encode) return fail(ErrorKind::Io, lib.error);
  return lib.encode(ext, image, out, params);
}

}  // namespace attn::vision::imgcodecs
