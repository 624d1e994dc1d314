// The Alignment tab's kinds of model, in the order the tab lists them: one line per kind, read by both registries
// (an X-macro list: each includes this file with ALIGNMENT_KIND defined, so no include guard). ALIGNMENT_KIND(Kind)
// names a folder alignment/<kind>/ that defines
//   std::unique_ptr<const AlignmentPage> make<Kind>Page();                             (<kind>_page.cpp, no widgets)
//   std::unique_ptr<AlignmentViews> make<Kind>Views(const AlignmentPage&, QObject*);   (<kind>_views.cpp, widgets)
// alignment_pages.cpp makes the pages (attn_runs, which attnscope-cli links) and alignment_views.cpp their views
// (attn_workbenches); a kind with no views of its own returns the shared seq2seq views (dates/dates_views.cpp).
// A kind with keys of its own in the session file has a session part, <kind>_session.{h,cpp} (no Qt, in
// attn_session: ui/session/CMakeLists.txt finds it and lists it without a line here; session/alignment_section.h).
// Adding a kind: its folder, and its line here.
ALIGNMENT_KIND(Dates)
ALIGNMENT_KIND(Headlines)
ALIGNMENT_KIND(Reviews)
ALIGNMENT_KIND(Entailment)
ALIGNMENT_KIND(Speech)
