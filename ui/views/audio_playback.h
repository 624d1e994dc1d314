// Playback of a speech input's audio (16 kHz mono) on the default audio output, through Qt Multimedia's QAudioSink,
// with where it is reported every 30 ms so that the speech page follows it. Qt Multimedia is optional (Debian's
// qt6-multimedia-dev; CMake's ATTN_WITH_MULTIMEDIA): a build without it says so in builtIn() and never plays.
// The audio system is first asked for its output when play() is called, not before: a window that never plays
// opens no connection to PulseAudio or PipeWire.
#pragma once

#include <QObject>
#include <QString>

#include <memory>
#include <span>

namespace attn::ui {

class AudioPlayback : public QObject {
  Q_OBJECT

 public:
  explicit AudioPlayback(QObject* parent = nullptr);
  ~AudioPlayback() override;

  // Whether this build has Qt Multimedia; unavailableText() is the reason to show when it has not.
  static bool builtIn();
  static QString unavailableText();

  // Plays `samples` (mono, `rate` Hz, in [-1, 1]) from the start, stopping what was playing. False, with
  // `*error` set, when there is no Qt Multimedia, no audio output or the output refuses the format.
  bool play(std::span<const float> samples, int rate, QString* error);
  void stop();  // emits finished() when something was playing
  bool isPlaying() const;

 signals:
  // Seconds from the start of the audio, as heard: what the output has taken less what it still holds.
  void positionChanged(double seconds);
  // The end was reached, stop() was called or the output failed (`error` then says how; else empty).
  void finished(const QString& error);

 private:
  void end(const QString& error);  // stops, then emits finished(error) if something was playing

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace attn::ui
