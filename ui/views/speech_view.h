// A speech model's input and alignment in the Alignment tab: the log-mel spectrogram (time across, the 80 bands up)
// with the attention of the step in view drawn over it (a curve of the weights and the attended frames lit), the
// recognised phonemes along the top at the time their attention peaks (the step in view bold), and, for a sentence
// espeak-ng said, its true phonemes in their time spans along the bottom (the one holding the step's peak outlined).
// A click on the spectrogram goes to the step whose attention peaks nearest that time; during playback a line marks
// the time heard, and the tab follows it to the step that attends there.
#pragma once

#include "attn/models/seq2seq.h"
#include "render/colormap.h"
#include "render/speech_input.h"

#include <QImage>
#include <QWidget>

#include <memory>

namespace attn::ui {

class SpeechView : public QWidget {
  Q_OBJECT

 public:
  explicit SpeechView(QWidget* parent = nullptr);

  void setRun(std::shared_ptr<const SpeechInput> input, std::shared_ptr<const attn::models::Seq2SeqRun> run,
              int hypothesis);
  void setStep(int step);
  void setColormap(render::Colormap map);
  // The playback position in seconds, drawn as a line over the spectrogram; negative: none.
  void setPlayhead(double seconds);
  double playhead() const { return playhead_; }
  const std::shared_ptr<const SpeechInput>& input() const { return input_; }
  void clear();

  // The step whose attention peaks nearest `seconds` (a click there goes to it; playback follows it); -1 when no
  // run is shown.
  int stepAt(double seconds) const;

  // For the tests: the x of a time in seconds (the spectrogram's left edge is 0 s), and each emitted phoneme's
  // peak time (seconds) in the hypothesis shown.
  double xOfSeconds(double seconds) const;
  std::vector<double> peakSeconds() const;

  QSize sizeHint() const override { return {640, 260}; }
  QSize minimumSizeHint() const override { return {240, 180}; }

 signals:
  void stepClicked(int step);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;

 private:
  QRect spectrogramRect() const;
  void renderImage();

  std::shared_ptr<const SpeechInput> input_;
  std::shared_ptr<const attn::models::Seq2SeqRun> run_;
  int hypothesis_ = 0;
  int step_ = 0;
  double playhead_ = -1.0;
  render::Colormap colormap_ = render::Colormap::Magma;
  QImage image_;  // the spectrogram, one pixel per frame and band
};

}  // namespace attn::ui
