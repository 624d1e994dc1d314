// The session file (*.attnscope.json): what every tab has open and every parameter it was left with, so a
// window comes back as it was (autosave, File > Save Session) and a session can be handed to someone else.
//   {"format": "attnscope.session", "version": 1, "tab": "alignment",
//    "tabs": {"alignment": {...}, "caption": {...}, "lab": {...}, "glimpse": {...}, "transformer": {...},
//             "corpus": {...}}}
// One typed section per tab, each defined, read and written beside this file (<tab>_section.h); the engine
// (attn/io/session.h) reads and writes the frame around them (size, UTF-8, depth, format, version, the atomic
// write) and knows no tab. A missing or unknown section leaves that tab to its defaults with a warning, so one
// tab's trouble never costs the others their state. No Qt: the fuzz targets build it without the GUI; the
// workbenches turn each section into their widgets (saveTo, restoreFrom).
#pragma once

#include "attn/error.h"
#include "attn/io/session.h"
#include "session/alignment_section.h"
#include "session/caption_section.h"
#include "session/corpus_section.h"
#include "session/glimpse_section.h"
#include "session/lab_section.h"
#include "session/session_values.h"
#include "session/transformer_section.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attn::ui {

using io::kMaxSessionBeam;
using io::kMaxSessionIndex;
using io::kMaxSessionName;
using io::kMaxSessionSeed;
using io::kMaxSessionText;

enum class SessionTab : std::uint8_t { Alignment, Caption, Lab, Glimpse, Transformer, Corpus };
// "alignment", "caption", "lab", "glimpse", "transformer", "corpus"
std::string_view to_string(SessionTab tab);
std::optional<SessionTab> session_tab_named(std::string_view key);

struct Session {
  SessionTab tab = SessionTab::Alignment;
  // Absent: the section was missing or unreadable as a section (a warning says which); the tab keeps its
  // defaults. A written session has every section.
  std::optional<AlignmentSection> alignment;
  std::optional<CaptionSection> caption;
  std::optional<LabSection> lab;
  std::optional<GlimpseSection> glimpse;
  std::optional<TransformerSection> transformer;
  std::optional<CorpusSection> corpus;
  // What read_session let pass but the user should hear of (a missing section, an unknown key), each naming
  // the file and the byte. Not written, not compared.
  std::vector<Error> warnings;

  friend bool operator==(const Session& a, const Session& b) {
    return a.tab == b.tab && a.alignment == b.alignment && a.caption == b.caption && a.lab == b.lab &&
           a.glimpse == b.glimpse && a.transformer == b.transformer && a.corpus == b.corpus;
  }
};

// Every section at its default.
Session default_session();

// The session as JSON text (2-space indent, keys in a fixed order). Absent sections are not written.
std::string to_json(const Session& session);

// The bytes of a session file; `name` stands for it in errors and warnings. A pure function of the bytes.
// Refused as io::read_session_document refuses the frame, and (each Error naming `name`, the byte offset of
// the offending key, and the reason) for a section's value of the wrong type (Malformed), a number or enum
// outside its range (OutOfRange), a string over its size limit (TooLarge).
Result<Session> read_session(std::string_view bytes, const std::string& name);

// read_session of a file of at most io::kMaxSessionBytes (its size checked before reading).
Result<Session> load_session(const std::filesystem::path& path);

// Writes to_json(session) atomically (io::write_session_file). A session that would not read back (a text
// over kMaxSessionText, ...) is refused before anything is written.
Result<void> save_session(const std::filesystem::path& path, const Session& session);

}  // namespace attn::ui
