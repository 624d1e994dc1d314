// The session file (*.attnscope.json): what every tab has open and every parameter it was left with, so a
// window comes back as it was (autosave, File > Save Session) and a session can be handed to someone else.
// Format 1:
//   {"format": "attnscope.session", "version": 1, "tab": "alignment",
//    "tabs": {"alignment": {...}, "caption": {...}, "lab": {...}, "glimpse": {...}, "transformer": {...}}}
// One typed section per tab. The lab's request and the glimpse settings are written by their own JSON
// writers (lab::to_json, glimpse::to_json) and nested as objects. Reading is strict about what is there (types,
// ranges, UTF-8, sizes, duplicate keys) and lenient about what is not: a missing or unknown section leaves
// that tab to its defaults with a warning, so one tab's trouble never costs the others their state.
// Pure engine code: no Qt; the UI turns each section into its widgets (the workbenches' applyState()).
#pragma once

#include "attn/error.h"
#include "attn/glimpse/settings.h"
#include "attn/lab/lab.h"
#include "attn/models/seq2seq.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attn::io {

// Refused before parsing: larger than any session a window can hold (texts are at most kMaxSessionText).
inline constexpr std::int64_t kMaxSessionBytes = 64ll << 20;
// A text box's content (the lab opens text files up to 16 MiB).
inline constexpr std::int64_t kMaxSessionText = 16ll << 20;
// A path, a model or sample key, a colour map's name.
inline constexpr std::int64_t kMaxSessionName = 4096;
// Nesting deeper than any section needs: refused before parsing, so no parser recursion is ever deep.
inline constexpr int kMaxSessionDepth = 16;

enum class SessionTab : std::uint8_t { Alignment, Caption, Lab, Glimpse, Transformer };
// "alignment", "caption", "lab", "glimpse", "transformer"
std::string_view to_string(SessionTab tab);
std::optional<SessionTab> session_tab_named(std::string_view key);

// The colour maps a section may name (ui/render/colormap.h keys): viridis, magma, inferno, plasma, cividis, greys.
bool is_colormap_key(std::string_view key);

// A photo: one of the bundled samples by key ("astronaut") or a file.
struct ImageRef {
  enum class Kind : std::uint8_t { Sample, File };
  Kind kind = Kind::Sample;
  std::string value = "astronaut";  // the key or the path
  friend bool operator==(const ImageRef&, const ImageRef&) = default;
};

struct LabSection {
  lab::LabRequest request{std::string(lab::kDefaultQuery), std::string(lab::kDefaultSource), {}};
  std::string colormap = "viridis";
  bool unit_range = false;  // colours on the fixed 0..1 scale instead of the map's own range
  int map = 0;              // the map in view (index into the trace's maps)
  friend bool operator==(const LabSection& a, const LabSection& b) {
    return a.request.query == b.request.query && a.request.source == b.request.source &&
           a.request.params == b.request.params && a.colormap == b.colormap && a.unit_range == b.unit_range &&
           a.map == b.map;
  }
};

struct GlimpseSection {
  ImageRef image;
  // Pixel numbers refer to this image; its size is recorded so the file says so (0 when not known).
  int image_width = 0;
  int image_height = 0;
  glimpse::GlimpseSettings settings;
  bool write_mode = false;
  bool window_forms = false;  // the soft mask, the crop and the matrix form side by side
  bool edit_stn = false;      // the canvas handles edit the STN glimpse
  friend bool operator==(const GlimpseSection&, const GlimpseSection&) = default;
};

struct AlignmentSection {
  std::string model = "date-bahdanau";              // a bundled model's key or a model folder
  std::string text = "Saturday, 21 November 2026";  // an entailment model's premise
  std::string pair;                                 // an entailment model's hypothesis
  int beam = 1;                                     // 1 = greedy
  int hypothesis = 0;
  int step = 0;  // the output step in view, 0-based
  std::string colormap = "viridis";
  bool readings = true;              // a review: the three readings of saliency side by side
  models::AttentionShaping shaping;  // a speech model's weights, as its decoder makes them (the defaults: its own)
  friend bool operator==(const AlignmentSection&, const AlignmentSection&) = default;
};

struct TransformerSection {
  enum class View : std::uint8_t { Head, Model, Statistics, Overlay, Matrix, Lens };
  enum class Matrix : std::uint8_t { Head, LayerMean, Rollout };
  enum class Fusion : std::uint8_t { Mean, Max, Min };
  enum class Overlay : std::uint8_t { Rollout, Head };
  // A model folder, a *.attn.safetensors dump, a bundled demo's key ("induction-gpt2", "stories260k"), or empty.
  std::string source;
  std::string text;
  std::string pair;  // BERT's second sentence
  ImageRef image;    // a ViT's input
  int layer = 0;
  int head = 0;
  View view = View::Head;
  Matrix matrix = Matrix::Head;
  Fusion fusion = Fusion::Mean;
  double discard_ratio = 0.0;  // [0, 0.99]
  double residual = 0.5;       // [0, 1]
  Overlay overlay = Overlay::Rollout;
  double overlay_alpha = 0.65;   // [0, 1]
  double line_threshold = 0.01;  // [0, 0.5]
  std::string colormap = "viridis";
  // The Generate group (GPT-2 and the decoders), and whether a generated run was in view and at which step: the
  // same settings and seed generate the same tokens again.
  int new_tokens = 40;       // [1, 4096]
  double temperature = 0.0;  // [0, 5]
  int top_k = 0;             // [0, 100000]
  double top_p = 1.0;        // [0.01, 1]
  std::uint64_t seed = 0;    // [0, 1e9]
  bool generated = false;
  int step = 0;  // the scrubbed generated token (0: the first)
  friend bool operator==(const TransformerSection&, const TransformerSection&) = default;
};

struct CaptionSection {
  enum class Input : std::uint8_t { Scene, Sample, File };
  enum class Style : std::uint8_t { Colour, LightMask };
  std::string model = "caption-soft";  // a bundled model's key or a captioner folder
  Input input = Input::Scene;
  std::uint64_t seed = 1;  // Scene
  std::string image;       // Sample: the key; File: the path
  int beam = 3;
  int hypothesis = 0;
  int word = 0;
  double sigma = 8.0;    // [0, 24]
  double opacity = 0.8;  // [0, 1]
  std::string colormap = "inferno";
  double threshold = 0.15;  // [0, 0.95]
  Style style = Style::Colour;
  int per_row = 5;  // the grid export's words a row
  friend bool operator==(const CaptionSection&, const CaptionSection&) = default;
};

// Ranges shared by the reader and the widgets that show them.
inline constexpr int kMaxSessionBeam = 16;
inline constexpr int kMaxSessionIndex = 1 << 20;  // layers, heads, steps, words, hypotheses
inline constexpr std::uint64_t kMaxSessionSeed = (std::uint64_t{1} << 53) - 1;  // exact in a JSON double

struct Session {
  SessionTab tab = SessionTab::Alignment;
  // Absent: the section was missing or unreadable as a section (a warning says which); the tab keeps its
  // defaults. A written session has every section.
  std::optional<AlignmentSection> alignment;
  std::optional<CaptionSection> caption;
  std::optional<LabSection> lab;
  std::optional<GlimpseSection> glimpse;
  std::optional<TransformerSection> transformer;
  // What read_session let pass but the user should hear of (a missing section, an unknown key), each naming
  // the file and the byte. Not written, not compared.
  std::vector<Error> warnings;

  friend bool operator==(const Session& a, const Session& b) {
    return a.tab == b.tab && a.alignment == b.alignment && a.caption == b.caption && a.lab == b.lab &&
           a.glimpse == b.glimpse && a.transformer == b.transformer;
  }
};

// Every section at its default.
Session default_session();

// The session as JSON text (2-space indent, keys in a fixed order). Absent sections are not written.
std::string to_json(const Session& session);

// The bytes of a session file; `name` stands for it in errors and warnings. A pure function of the bytes.
// Refused (each Error naming `name`, the byte offset of the offending key or byte, and the reason): more
// than kMaxSessionBytes (TooLarge), bytes that are not UTF-8 (Encoding), nesting deeper than
// kMaxSessionDepth (TooLarge), bad JSON or a duplicate key (Malformed), another format (Unsupported when it
// is a newer version), a value of the wrong type (Malformed), a number or enum outside its range
// (OutOfRange), a string over its size limit (TooLarge).
Result<Session> read_session(std::string_view bytes, const std::string& name);

// read_session of a file of at most kMaxSessionBytes (its size checked before reading).
Result<Session> load_session(const std::filesystem::path& path);

// Writes to_json(session) atomically (a temporary file beside `path`, flushed to disk, renamed over it, the
// folder flushed): a reader, or the next start after a crash, sees the previous file or this one, never a
// mix. A session that would not read back (a text over kMaxSessionText, ...) is refused before anything is
// written.
Result<void> save_session(const std::filesystem::path& path, const Session& session);

}  // namespace attn::io
