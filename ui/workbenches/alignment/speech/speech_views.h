// A speech model's views: the seq2seq views with the spectrogram and the step's attention over it instead of the
// decoding, the audio's playback (a line follows the time heard, and the step follows it), Open Audio File (a
// recording instead of the typed words) and how its attention scores become weights (sharpened, smoothed, top k,
// windowed).
#pragma once

#include "attn/models/seq2seq.h"
#include "workbenches/alignment/alignment_seq2seq_views.h"

class QCheckBox;
class QDoubleSpinBox;
class QGroupBox;
class QLabel;
class QPushButton;
class QSpinBox;

namespace attn::ui {

class AudioPlayback;
class SpeechView;

class SpeechViews : public Seq2SeqViews {
  Q_OBJECT

 public:
  using Seq2SeqViews::Seq2SeqViews;

  void buildInput(QWidget* group, QVBoxLayout& layout) override;
  void buildSide(QWidget* panel, QVBoxLayout& layout) override;
  void buildSteps(AlignmentStepPage& steps, QVBoxLayout& column) override;
  void setOpen(bool open) override;
  bool hasOwnInput() const override { return !audioPath_.isEmpty(); }
  void sourceEdited() override { audioPath_.clear(); }
  void addToRequest(AlignmentRequest& request) const override;
  void save(AlignmentSection& section, const QString& pair) const override;
  void restore(const AlignmentSection& section, QString& pair) override;

  // The weights: sharpened, smoothed, top k, windowed (a change runs again).
  void setShaping(const attn::models::AttentionShaping& shaping);
  attn::models::AttentionShaping shaping() const;
  // Reads this audio file (WAV, FLAC, Ogg, AIFF) instead of the typed words until they are edited.
  void openAudio(const QString& path);
  QString audioPath() const { return audioPath_; }
  // Where playback is, in seconds: the line over the spectrogram, and the step that attends there (the player's
  // positionChanged; tests call it directly, having no audio output).
  void followPlayback(double seconds);

  SpeechView* speechView() const { return speechView_; }
  QPushButton* playButton() const { return playButton_; }
  QLabel* playbackLabel() const { return playbackLabel_; }

 protected:
  void showFigure(const AlignmentViewState& state, const render::DecodingFigureOptions& options) override;

 private:
  void setShapingWidgets(const attn::models::AttentionShaping& shaping);
  void play();
  QString playbackTime(double seconds) const;  // "0.84 / 1.95 s"; negative: "1.95 s of audio"

  QGroupBox* shapingGroup_ = nullptr;
  QDoubleSpinBox* sharpenSpin_ = nullptr;
  QCheckBox* smoothCheck_ = nullptr;
  QSpinBox* topKSpin_ = nullptr;
  QSpinBox* windowSpin_ = nullptr;
  QWidget* speechPanel_ = nullptr;  // the play row and the spectrogram
  SpeechView* speechView_ = nullptr;
  QPushButton* playButton_ = nullptr;
  QLabel* playbackLabel_ = nullptr;
  AudioPlayback* playback_ = nullptr;
  QPushButton* audioButton_ = nullptr;
  QString audioPath_;  // the audio file read; empty: the typed words, said
};

std::unique_ptr<AlignmentViews> makeSpeechViews(const AlignmentPage& page, QObject* parent);

}  // namespace attn::ui
