#include "session/session.h"

#include "core/try.h"

#include <nlohmann/json.hpp>

#include <array>
#include <utility>

namespace attn::ui {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

// The sections in the file's order, with what warnings call each tab.
constexpr std::array kSections = {io::SessionSectionName{"alignment", "the Alignment tab"},
                                  io::SessionSectionName{"caption", "the Captioning tab"},
                                  io::SessionSectionName{"lab", "the Mechanism Lab"},
                                  io::SessionSectionName{"glimpse", "the Glimpse tab"},
                                  io::SessionSectionName{"transformer", "the Transformer tab"},
                                  io::SessionSectionName{"corpus", "the Corpus tab"}};
constexpr std::array kTabs = {SessionTab::Alignment, SessionTab::Caption,     SessionTab::Lab,
                              SessionTab::Glimpse,   SessionTab::Transformer, SessionTab::Corpus};

const io::SessionSectionName& section_name(SessionTab tab) { return kSections[static_cast<std::size_t>(tab)]; }

}  // namespace

std::string_view to_string(SessionTab tab) {
  const auto i = static_cast<std::size_t>(tab);
  return i < kSections.size() ? kSections[i].key : kSections.front().key;
}

std::optional<SessionTab> session_tab_named(std::string_view key) {
  for (const SessionTab tab : kTabs) {
    if (section_name(tab).key == key) return tab;
  }
  return std::nullopt;
}

Session default_session() {
  Session s;
  s.alignment.emplace();
  s.caption.emplace();
  s.lab.emplace();
  s.glimpse.emplace();
  s.transformer.emplace();
  s.corpus.emplace();
  return s;
}

std::string to_json(const Session& session) {
  ojson tabs = ojson::object();
  if (session.alignment) tabs["alignment"] = to_json(*session.alignment);
  if (session.caption) tabs["caption"] = to_json(*session.caption);
  if (session.lab) tabs["lab"] = to_json(*session.lab);
  if (session.glimpse) tabs["glimpse"] = to_json(*session.glimpse);
  if (session.transformer) tabs["transformer"] = to_json(*session.transformer);
  if (session.corpus) tabs["corpus"] = to_json(*session.corpus);
  return io::session_document_text(to_string(session.tab), tabs);
}

Result<Session> read_session(std::string_view bytes, const std::string& name) {
  auto read = io::read_session_document(bytes, name, kSections);
  if (!read) return std::unexpected(std::move(read.error()));
  const io::SessionDocument& doc = *read;
  try {
    Session session;
    if (!doc.tab().empty()) session.tab = *session_tab_named(doc.tab());
    std::vector<Error>& warnings = session.warnings;
    const io::SessionReader& reader = doc.reader();
    for (const SessionTab tab : kTabs) {
      const json* section = nullptr;
      ATTN_ASSIGN(section, doc.section(section_name(tab), warnings));
      if (!section) continue;
      switch (tab) {
        case SessionTab::Alignment:
          ATTN_ASSIGN(session.alignment, read_alignment_section(reader, *section, warnings));
          break;
        case SessionTab::Caption: ATTN_ASSIGN(session.caption, read_caption_section(reader, *section, warnings)); break;
        case SessionTab::Lab: ATTN_ASSIGN(session.lab, read_lab_section(reader, *section, warnings)); break;
        case SessionTab::Glimpse: ATTN_ASSIGN(session.glimpse, read_glimpse_section(reader, *section, warnings)); break;
        case SessionTab::Transformer:
          ATTN_ASSIGN(session.transformer, read_transformer_section(reader, *section, warnings));
          break;
        case SessionTab::Corpus: ATTN_ASSIGN(session.corpus, read_corpus_section(reader, *section, warnings)); break;
      }
    }
    doc.warn_unknown(kSections, warnings);
    return session;
  } catch (const json::exception& e) {
    // Defensive: every access above checks its type first.
    return fail(ErrorKind::Malformed, std::string("unexpected JSON: ") + e.what(), name);
  }
}

Result<Session> load_session(const fs::path& path) {
  std::string bytes;
  ATTN_ASSIGN(bytes, io::read_session_file(path));
  return read_session(bytes, path.string());
}

Result<void> save_session(const fs::path& path, const Session& session) {
  const std::string name = path.string();
  const std::string bytes = to_json(session);
  // Never write what the next start could not read: the same checks as loading, before the file is touched.
  if (auto back = read_session(bytes, name); !back) {
    return fail(back.error().kind, "not saved: " + back.error().reason, name);
  }
  return io::write_session_file(path, bytes);
}

}  // namespace attn::ui
