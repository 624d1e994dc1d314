#include "workbenches/alignment_speech.h"

#include "views/speech_view.h"
#include "workbenches/alignment_workbench.h"

#include <QFileDialog>
#include <QPlainTextEdit>
#include <QPushButton>

using namespace Qt::StringLiterals;

namespace attn::ui {

attn::Result<SpeechInput> speechInput(const std::string& text, const QString& wavPath, const std::string& voice) {
  SpeechInput input;
  if (!wavPath.isEmpty()) {
    auto read = attn::audio::read_audio(wavPath.toStdString());
    if (!read) return std::unexpected(read.error());
    input.audio = std::move(*read);
    input.file = wavPath;
  } else {
    auto said = attn::audio::synthesise(text, attn::audio::Voice{voice});
    if (!said) return std::unexpected(said.error());
    input.audio = std::move(said->audio);
    input.phonemes = std::move(said->phonemes);
    input.voice = QString::fromStdString(voice);
  }
  input.logMel = attn::audio::log_mel(input.audio.samples);
  return input;
}

}  // namespace attn::ui

// ---- the Alignment tab's speech page ----

namespace attn::ui {

SpeechView* AlignmentWorkbench::makeSpeechView() {
  speechView_ = new SpeechView(decodingPage_);
  speechView_->hide();
  connect(speechView_, &SpeechView::stepClicked, this, &AlignmentWorkbench::setStep);
  return speechView_;
}

QPushButton* AlignmentWorkbench::makeAudioButton(QWidget* parent) {
  audioButton_ = new QPushButton(tr("Open &Audio File\u2026"), parent);
  audioButton_->setObjectName(u"alignmentOpenAudio"_s);
  audioButton_->setToolTip(
      tr("Recognise a recording instead of the typed words (WAV, FLAC, Ogg or AIFF; mixed to "
         "mono, resampled to 16 kHz, cut at 10 minutes). Typing says the words again. The model "
         "knows espeak-ng's synthetic voices, not human ones."));
  audioButton_->hide();
  connect(audioButton_, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open Audio File"), QString(),
                                                      tr("Audio (*.wav *.flac *.ogg *.aiff *.aif);;All files (*)"));
    if (!path.isEmpty()) openAudio(path);
  });
  connect(textEdit_, &QPlainTextEdit::textChanged, this, [this] { audioPath_.clear(); });
  return audioButton_;
}

void AlignmentWorkbench::openAudio(const QString& path) {
  audioPath_ = path;
  post();
}

void AlignmentWorkbench::updateSpeechView() {
  speechView_->setColormap(colormap_);
  speechView_->setRun(outcome_->speech, outcome_->seq2seq, hypothesis_);
  speechView_->setStep(step_);
}

}  // namespace attn::ui
