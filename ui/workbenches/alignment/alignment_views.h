// The widget side of one kind of model in the Alignment tab: its views. The tab (AlignmentWorkbench) holds one
// AlignmentViews per page (alignment_page.h) and names no kind: it asks the views of the kind open to build their
// widgets into its containers, to show a run and the step in view, for the run's summary and input count, the map
// and figure its exports save, and for the kind's part of a request and of the session. A kind's views live in its
// folder (<kind>/<kind>_views.{h,cpp}, in attn_workbenches); a kind without views of its own (dates, headlines)
// gets the shared seq2seq views (alignment_seq2seq_views.h). The registry is makeAlignmentViews
// (alignment_views.cpp): one line per kind with views of its own.
#pragma once

#include "render/colormap.h"
#include "render/text_figure.h"
#include "workbenches/alignment/alignment_run.h"

#include <QObject>
#include <QString>

#include <cstdint>
#include <memory>

class QFormLayout;
class QStackedWidget;
class QVBoxLayout;
class QWidget;

namespace attn::ui {

class AlignmentPage;
class AlignmentStepPage;
class TextFigureView;
struct AlignmentSection;

// What the views show: the model open, the run in view (null before the first), the hypothesis and the step.
struct AlignmentViewState {
  std::shared_ptr<const AlignmentSource> source;
  std::shared_ptr<const AlignmentOutcome> outcome;
  int hypothesis = 0;
  int step = 0;
  render::Colormap colormap = render::Colormap::Viridis;
};

// How much of the input a run read ("12 characters read"), and how many of its units the model has never seen.
struct AlignmentInputCount {
  QString read;
  std::int64_t unknown = 0;
  std::int64_t total = 0;
};

class AlignmentViews : public QObject {
  Q_OBJECT

 public:
  explicit AlignmentViews(const AlignmentPage& page, QObject* parent = nullptr);
  const AlignmentPage& page() const { return page_; }

  // ---- building (once, for every kind, in the tab's order; a kind's own widgets start hidden) ----
  // Under the input box and the examples: an input of its own (a speech model's Open Audio File...).
  virtual void buildInput(QWidget* /*group*/, QVBoxLayout& /*layout*/) {}
  // A group of the side panel, after the decoding group (a speech model's attention weights).
  virtual void buildSide(QWidget* /*panel*/, QVBoxLayout& /*layout*/) {}
  // A row of the Display group (a review classifier's readings of saliency).
  virtual void buildDisplay(QWidget* /*group*/, QFormLayout& /*form*/) {}
  // The step page (shared by the kinds with steps: a figure, the step slider, the heatmaps); `column` is under its
  // figure (a speech model's spectrogram).
  virtual void buildSteps(AlignmentStepPage& steps, QVBoxLayout& column);
  // A page of the main area of its own (a review's shaded text and matrices); none: the step page.
  virtual void buildPage(QStackedWidget* /*pages*/) {}
  virtual QWidget* ownPage() const { return nullptr; }

  // ---- the kind open ----
  // The kind opens (`open`) or another one does: its own widgets show or hide, its views are emptied.
  virtual void setOpen(bool /*open*/) {}
  // What its text view says while nothing is shown: `message`, or while a run is on its way (empty message).
  virtual void setPlaceholder(const QString& /*message*/) {}
  // The message for an empty input (text: the source box's).
  virtual QString emptyInputMessage(const QString& text) const;
  // An input of its own that runs without text (an audio file).
  virtual bool hasOwnInput() const { return false; }
  // The source text was edited (an audio file gives way to the words typed).
  virtual void sourceEdited() {}
  // Its part of a request and of the session's section (every kind's is set, as the tab's inputs always were):
  // its keys there are its folder's session part's (<kind>/<kind>_session.h). `pair` is the tab's second input
  // (alignment_page.h, parts().pair), which the kind that has it keeps.
  virtual void addToRequest(AlignmentRequest& /*request*/) const {}
  virtual void save(AlignmentSection& /*section*/, const QString& /*pair*/) const {}
  // Sets its inputs from a session without running (the tab runs once they are all set); the kind with the second
  // input sets `pair` (empty unless a kind sets it).
  virtual void restore(const AlignmentSection& /*section*/, QString& /*pair*/) {}

  // ---- a run ----
  // A new run, or another hypothesis: the maps (the heatmap, a review's figure and matrices).
  virtual void showMaps(const AlignmentViewState& state) = 0;
  // How many steps the run has (0: none; the step slider's range).
  virtual int stepCount(const AlignmentViewState& /*state*/) const { return 0; }
  // The step in view (already in range): the figure, the outlined row, the step's label. False when not shown.
  virtual bool showStep(const AlignmentViewState& /*state*/) { return false; }
  // The map the heatmap shows and File > Export Matrix saves.
  virtual const attn::AttentionMap* currentMap(const AlignmentViewState& state) const = 0;
  // The figure the text view shows and Export View saves, and that view.
  virtual const render::TextFigure& currentFigure() const;
  virtual TextFigureView* figureView() const;
  // The status bar's summary of the run ("alignment: model · 12 characters → "2026-11-21" · beam 1 · 3 ms").
  virtual QString summary(const AlignmentViewState& state) const = 0;
  virtual AlignmentInputCount inputCount(const AlignmentViewState& state) const = 0;
  virtual void setColormap(render::Colormap /*map*/) {}

 signals:
  void inputChanged();           // one of its inputs changed: the tab runs again
  void stepRequested(int step);  // a step to show (where playback is)
  void stepClicked(int step);    // a click on a step (a spectrogram's): that step, and the keys that move it

 protected:
  AlignmentStepPage* steps_ = nullptr;

 private:
  const AlignmentPage& page_;
};

// The views of `page`: its folder's, or the shared seq2seq views.
std::unique_ptr<AlignmentViews> makeAlignmentViews(const AlignmentPage& page, QObject* parent);

}  // namespace attn::ui
