// The Glimpse tab's parts its .cpp files share: ParamEdit, two label helpers and the plot interval.
#pragma once

#include <QDoubleSpinBox>
#include <QFont>
#include <QHBoxLayout>
#include <QLabel>
#include <QPalette>
#include <QSignalBlocker>
#include <QSlider>
#include <QString>
#include <QWidget>

#include <algorithm>
#include <cmath>
#include <functional>

namespace attn::ui {

// A parameter as a slider and a spin box side by side. The spin box accepts more than the slider shows
// (zero and negative sigmas, N = 0) so that the engine's clamps can be seen; the slider may be linear or
// logarithmic. `onEdited(value, dragging)` runs for user edits only, with dragging true while the slider
// is held.
class ParamEdit : public QWidget {
 public:
  ParamEdit(const QString& key, QWidget* parent) : QWidget(parent) {
    using namespace Qt::StringLiterals;
    setObjectName(key);
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(4);
    slider_ = new QSlider(Qt::Horizontal, this);
    slider_->setObjectName(key + u".slider"_s);
    slider_->setRange(0, kSteps);
    slider_->setMinimumWidth(36);
    slider_->setFocusPolicy(Qt::StrongFocus);
    spin_ = new QDoubleSpinBox(this);
    spin_->setObjectName(key);  // tests find the spin box by the parameter's key
    spin_->setKeyboardTracking(false);
    spin_->setAccelerated(true);
    spin_->setMinimumWidth(72);
    spin_->setAlignment(Qt::AlignRight);
    layout->addWidget(slider_, 1);
    layout->addWidget(spin_, 0);
    connect(slider_, &QSlider::valueChanged, this, [this](int position) {
      if (quiet_) return;
      const double value = fromSlider(position);
      {
        const QSignalBlocker block(spin_);
        spin_->setValue(value);
      }
      if (onEdited) onEdited(spin_->value(), slider_->isSliderDown());
    });
    connect(slider_, &QSlider::sliderReleased, this, [this] {
      if (onEdited) onEdited(spin_->value(), false);
    });
    connect(spin_, &QDoubleSpinBox::valueChanged, this, [this](double value) {
      if (quiet_) return;
      syncSlider(value);
      if (onEdited) onEdited(value, false);
    });
  }

  void configure(double sliderMin, double sliderMax, bool logScale, double spinMin, double spinMax, int decimals,
                 double step) {
    quiet_ = true;
    logScale_ = logScale && sliderMin > 0.0;
    sliderMin_ = sliderMin;
    sliderMax_ = std::max(sliderMax, sliderMin + 1e-9);
    spin_->setDecimals(decimals);
    spin_->setRange(spinMin, spinMax);
    spin_->setSingleStep(step);
    if (step <= 0.0) spin_->setStepType(QAbstractSpinBox::AdaptiveDecimalStepType);
    syncSlider(spin_->value());
    quiet_ = false;
  }
  void setSliderRange(double sliderMin, double sliderMax) {
    if (sliderMin == sliderMin_ && sliderMax == sliderMax_) return;
    quiet_ = true;
    sliderMin_ = sliderMin;
    sliderMax_ = std::max(sliderMax, sliderMin + 1e-9);
    if (logScale_ && sliderMin_ <= 0.0) logScale_ = false;
    syncSlider(spin_->value());
    quiet_ = false;
  }
  void setValue(double value) {
    if (!std::isfinite(value)) return;
    quiet_ = true;
    spin_->setValue(value);
    syncSlider(spin_->value());
    quiet_ = false;
  }
  double value() const { return spin_->value(); }
  void setSliderVisible(bool visible) { slider_->setVisible(visible); }
  void setSuffix(const QString& suffix) { spin_->setSuffix(suffix); }
  void setToolTips(const QString& text) {
    slider_->setToolTip(text);
    spin_->setToolTip(text);
  }
  void setClamped(bool clamped) {
    using namespace Qt::StringLiterals;
    if (clamped == clamped_) return;
    clamped_ = clamped;
    spin_->setStyleSheet(clamped ? u"QDoubleSpinBox { background: #f6d0cc; color: #7a1010; }"_s : QString());
  }
  bool isClamped() const { return clamped_; }
  QDoubleSpinBox* spin() const { return spin_; }
  QSlider* slider() const { return slider_; }

  std::function<void(double, bool)> onEdited;

 private:
  static constexpr int kSteps = 1000;
  double fromSlider(int position) const {
    const double t = double(position) / kSteps;
    if (logScale_) return sliderMin_ * std::pow(sliderMax_ / sliderMin_, t);
    return sliderMin_ + t * (sliderMax_ - sliderMin_);
  }
  void syncSlider(double value) {
    double t = 0.0;
    if (logScale_) {
      t = value > 0.0 ? std::log(value / sliderMin_) / std::log(sliderMax_ / sliderMin_) : 0.0;
    } else {
      t = (value - sliderMin_) / (sliderMax_ - sliderMin_);
    }
    if (!std::isfinite(t)) t = 0.0;
    const QSignalBlocker block(slider_);
    slider_->setValue(int(std::lround(std::clamp(t, 0.0, 1.0) * kSteps)));
  }

  QSlider* slider_ = nullptr;
  QDoubleSpinBox* spin_ = nullptr;
  double sliderMin_ = 0.0;
  double sliderMax_ = 1.0;
  bool logScale_ = false;
  bool quiet_ = false;
  bool clamped_ = false;
};

namespace glimpse_detail {

inline constexpr qint64 kPlotIntervalNs = 100'000'000;  // filterbank plots follow a drag at most 10 times a second

// Labels change on every frame of a drag: touching a style sheet re-polishes the widget and relayouts its
// window, so text and style are set only when they differ.
inline void setLabel(QLabel* label, const QString& text, const QString& style = QString()) {
  if (label->text() != text) label->setText(text);
  if (label->styleSheet() != style) label->setStyleSheet(style);
}

inline QLabel* smallNote(const QString& text, QWidget* parent) {
  auto* label = new QLabel(text, parent);
  label->setWordWrap(true);
  label->setForegroundRole(QPalette::PlaceholderText);
  QFont font = label->font();
  font.setPointSizeF(font.pointSizeF() * 0.92);
  label->setFont(font);
  return label;
}

}  // namespace glimpse_detail
}  // namespace attn::ui
