#include "views/speech_view.h"

#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <cmath>

using namespace Qt::StringLiterals;

namespace attn::ui {
namespace {

// Seconds: frames are 10 ms apart and 25 ms long, so frame t is centred at 10 t + 12.5 ms; it is drawn over the 10 ms
// around its centre, [10 t + 7.5, 10 t + 17.5) ms.
constexpr double kHop = 0.010, kHalfWindow = 0.0125, kOffset = 0.0075;
constexpr int kLeft = 52, kRight = 10, kTop = 28, kBottom = 44, kStrip = 22;

}  // namespace

SpeechView::SpeechView(QWidget* parent) : QWidget(parent) {
  setObjectName(u"speechView"_s);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
  setToolTip(
      tr("The audio's log-mel spectrogram with the attention of the step in view drawn over it (the white "
         "curve); the recognised phonemes along the top, where their attention peaks; espeak-ng's own "
         "phonemes in their time spans along the bottom. Click to go to the step that attends there."));
}

void SpeechView::setRun(std::shared_ptr<const SpeechInput> input, std::shared_ptr<const attn::models::Seq2SeqRun> run,
                        int hypothesis) {
  input_ = std::move(input);
  run_ = std::move(run);
  hypothesis_ = hypothesis;
  renderImage();
  update();
}

void SpeechView::setStep(int step) {
  step_ = step;
  update();
}

void SpeechView::setColormap(render::Colormap map) {
  colormap_ = map;
  renderImage();
  update();
}

void SpeechView::setPlayhead(double seconds) {
  if (seconds == playhead_) return;
  playhead_ = seconds;
  update();
}

void SpeechView::clear() {
  playhead_ = -1.0;
  input_.reset();
  run_.reset();
  image_ = QImage();
  update();
}

void SpeechView::renderImage() {
  image_ = QImage();
  if (!input_ || input_->logMel.rows() == 0) return;
  const auto& m = input_->logMel;
  // The colours span the loudest 80 dB-ish of the utterance (9.2 nepers of power): quieter is the floor.
  const float top = m.maxCoeff(), floor = std::max(m.minCoeff(), top - 9.2f);
  const auto& table = render::colorTable(colormap_);
  image_ = QImage(int(m.rows()), int(m.cols()), QImage::Format_RGB32);
  for (int band = 0; band < m.cols(); ++band) {
    auto* line = reinterpret_cast<QRgb*>(image_.scanLine(int(m.cols()) - 1 - band));  // low bands at the bottom
    for (int t = 0; t < m.rows(); ++t) line[t] = table((m(t, band) - floor) / std::max(1e-6f, top - floor));
  }
}

QRect SpeechView::spectrogramRect() const {
  return QRect(kLeft, kTop, std::max(1, width() - kLeft - kRight), std::max(1, height() - kTop - kBottom));
}

double SpeechView::xOfSeconds(double seconds) const {
  const QRect r = spectrogramRect();
  const double total = input_ ? std::max<double>(1, input_->logMel.rows()) * kHop + 2 * kOffset : 1.0;
  return r.left() + seconds / total * r.width();
}

std::vector<double> SpeechView::peakSeconds() const {
  std::vector<double> peaks;
  if (!run_ || std::size_t(hypothesis_) >= run_->hypotheses.size()) return peaks;
  const auto& attention = run_->hypotheses[std::size_t(hypothesis_)].attention;
  for (Index i = 0; i < attention.rows(); ++i) {
    Index j = 0;
    attention.row(i).maxCoeff(&j);
    const Span s = run_->spans[std::size_t(j)];
    peaks.push_back(0.5 * double(s.begin + s.end - 1) * kHop + kHalfWindow);
  }
  return peaks;
}

void SpeechView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  if (image_.isNull() || !run_ || std::size_t(hypothesis_) >= run_->hypotheses.size()) return;
  p.setRenderHint(QPainter::Antialiasing);
  const QRect r = spectrogramRect();
  p.drawImage(QRectF(QPointF(xOfSeconds(kOffset), r.top()),
                     QPointF(xOfSeconds(kOffset + double(image_.width()) * kHop), r.bottom() + 1)),
              image_);
  const auto& hyp = run_->hypotheses[std::size_t(hypothesis_)];
  const QFontMetrics fm(font());

  // The step's attention: each encoder step's frames lit by its weight, and the weights as a curve.
  if (step_ >= 0 && step_ < hyp.attention.rows()) {
    const auto row = hyp.attention.row(step_);
    const float peak = std::max(1e-6f, row.maxCoeff());
    QPainterPath curve;
    curve.moveTo(xOfSeconds(kOffset), r.bottom());
    for (Index j = 0; j < row.size(); ++j) {
      const Span s = run_->spans[std::size_t(j)];
      const double x0 = xOfSeconds(s.begin * kHop + kOffset), x1 = xOfSeconds(s.end * kHop + kOffset);
      const double y = r.bottom() - double(row(j) / peak) * r.height() * 0.9;
      p.fillRect(QRectF(x0, r.top(), x1 - x0, r.height()), QColor(255, 255, 255, int(90 * row(j) / peak)));
      curve.lineTo(x0, y);
      curve.lineTo(x1, y);
    }
    curve.lineTo(xOfSeconds(double(run_->spans.back().end) * kHop + kOffset), r.bottom());
    p.setPen(QPen(QColor(0, 0, 0, 160), 3.0));
    p.drawPath(curve);
    p.setPen(QPen(Qt::white, 1.5));
    p.drawPath(curve);
  }

  // The recognised phonemes at their peaks, along the top.
  const std::vector<double> peaks = peakSeconds();
  QFont bold = font();
  bold.setBold(true);
  for (std::size_t i = 0; i < peaks.size() && i < hyp.labels.size(); ++i) {
    if (hyp.labels[i] == "</s>") continue;
    const QString label = QString::fromStdString(hyp.labels[i]);
    const bool current = int(i) == step_;
    p.setFont(current ? bold : font());
    p.setPen(current ? palette().highlight().color() : palette().text().color());
    const double x = xOfSeconds(peaks[i]);
    p.drawText(QRectF(x - 30, 2, 60, kTop - 6), Qt::AlignHCenter | Qt::AlignBottom, label);
    p.setPen(QPen(current ? palette().highlight().color() : palette().mid().color(), 1));
    p.drawLine(QPointF(x, kTop - 4), QPointF(x, r.top()));
  }
  p.setFont(font());

  // espeak-ng's phonemes in their spans, along the bottom; the one holding the step's peak outlined.
  const double stepPeak = std::size_t(step_) < peaks.size() ? peaks[std::size_t(step_)] : -1.0;
  const int stripTop = r.bottom() + 3;
  for (const auto& ph : input_->phonemes) {
    const QRectF box(xOfSeconds(ph.start), stripTop, xOfSeconds(ph.end) - xOfSeconds(ph.start), kStrip - 4);
    const bool holds = stepPeak >= ph.start && stepPeak < ph.end;
    p.setPen(QPen(holds ? palette().highlight().color() : palette().mid().color(), holds ? 2.0 : 1.0));
    p.setBrush(holds ? palette().alternateBase() : Qt::NoBrush);
    p.drawRect(box);
    const QString label = QString::fromStdString(ph.name);
    if (fm.horizontalAdvance(label) + 2 <= box.width()) {
      p.setPen(palette().text().color());
      p.drawText(box, Qt::AlignCenter, label);
    }
  }
  p.setBrush(Qt::NoBrush);

  // The time axis (seconds) and the band axis.
  p.setPen(palette().text().color());
  const double total = double(input_->logMel.rows()) * kHop + 2 * kOffset;
  const double every = total > 6 ? 1.0 : total > 2.5 ? 0.5 : total > 1.0 ? 0.25 : 0.1;
  const int axisY = r.bottom() + kStrip + 2;
  for (double t = 0; t <= total + 1e-9; t += every) {
    const double x = xOfSeconds(t);
    p.drawLine(QPointF(x, axisY), QPointF(x, axisY + 4));
    p.drawText(QRectF(x - 30, axisY + 4, 60, fm.height()), Qt::AlignHCenter | Qt::AlignTop,
               QString::number(t, 'f', every < 0.25 ? 1 : 2) + u" s"_s);
  }
  p.drawText(QRect(0, r.top(), kLeft - 6, fm.height()), Qt::AlignRight | Qt::AlignTop, u"8 kHz"_s);
  p.drawText(QRect(0, r.bottom() - fm.height(), kLeft - 6, fm.height()), Qt::AlignRight | Qt::AlignBottom, u"0 Hz"_s);
  p.drawText(QRect(0, r.bottom() + 3, kLeft - 6, kStrip - 4), Qt::AlignRight | Qt::AlignVCenter,
             input_->phonemes.empty() ? QString() : tr("said"));

  // Playback: the time heard, across the spectrogram and the phoneme strip.
  if (playhead_ >= 0.0) {
    const double x = std::min(xOfSeconds(playhead_), double(r.right()));
    p.setPen(QPen(QColor(0, 0, 0, 160), 3.0));
    p.drawLine(QPointF(x, r.top()), QPointF(x, r.bottom() + kStrip));
    p.setPen(QPen(palette().highlight().color().lighter(130), 1.5));
    p.drawLine(QPointF(x, r.top()), QPointF(x, r.bottom() + kStrip));
  }
}

void SpeechView::mousePressEvent(QMouseEvent* event) {
  if (!run_ || !input_ || event->button() != Qt::LeftButton) return;
  const QRect r = spectrogramRect();
  const double seconds =
      (event->position().x() - r.left()) / r.width() * (double(input_->logMel.rows()) * kHop + 2 * kOffset);
  const int best = stepAt(seconds);
  if (best >= 0) emit stepClicked(best);
}

int SpeechView::stepAt(double seconds) const {
  const std::vector<double> peaks = peakSeconds();
  int best = -1;
  for (std::size_t i = 0; i < peaks.size(); ++i)
    if (best < 0 || std::abs(peaks[i] - seconds) < std::abs(peaks[std::size_t(best)] - seconds)) best = int(i);
  return best;
}

}  // namespace attn::ui
