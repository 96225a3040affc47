#include "gui/timeline_view.h"

#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>

#include "core/api/timeline.h"
#include "gui/chart_util.h"

namespace orrery::gui {

namespace {

QColor KindColor(int kind) {
  using K = TaskKind;
  switch (static_cast<K>(kind)) {
    case K::kForward: return QColor(66, 133, 244);
    case K::kBackward:
    case K::kBackwardInput: return QColor(52, 168, 83);
    case K::kBackwardWeight: return QColor(129, 201, 149);
    case K::kRecompute: return QColor(251, 188, 5);
    case K::kTpComm: return QColor(171, 71, 188);
    case K::kSend: return QColor(255, 112, 67);
    case K::kGradReduce:
    case K::kParamGather: return QColor(234, 67, 53);
    case K::kOptimizer: return QColor(120, 144, 156);
    default: return QColor(158, 158, 158);
  }
}

}  // namespace

TimelineView::TimelineView(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setMinimumHeight(200);
}

void TimelineView::SetTimeline(const TimelineResult& t) {
  t_ = t;
  rows_.clear();
  // One row per (stage, stream) that has work, in stage order.
  std::vector<std::vector<bool>> used(static_cast<size_t>(std::max(0, t.stages)),
                                      std::vector<bool>(kStreamsPerStage, false));
  for (const auto& task : t.tasks)
    if (task.stage >= 0 && task.stage < t.stages) used[static_cast<size_t>(task.stage)][static_cast<size_t>(task.stream)] = true;
  for (int s = 0; s < t.stages; ++s)
    for (int k = 0; k < kStreamsPerStage; ++k)
      if (used[static_cast<size_t>(s)][static_cast<size_t>(k)]) rows_.push_back({s, k});
  ResetZoom();
}

void TimelineView::ResetZoom() {
  view_start_ = 0;
  view_span_ = t_.makespan_s > 0 ? t_.makespan_s : 1;
  update();
}

int TimelineView::RowOf(int stage, int stream) const {
  for (size_t i = 0; i < rows_.size(); ++i)
    if (rows_[i].stage == stage && rows_[i].stream == stream) return static_cast<int>(i);
  return -1;
}

double TimelineView::XOf(double t) const {
  const double w = std::max(1, width() - kLabelWidth - 8);
  return kLabelWidth + (t - view_start_) / view_span_ * w;
}

double TimelineView::TimeOf(double x) const {
  const double w = std::max(1, width() - kLabelWidth - 8);
  return view_start_ + (x - kLabelWidth) / w * view_span_;
}

void TimelineView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  if (rows_.empty()) {
    p.setPen(palette().text().color());
    p.drawText(rect(), Qt::AlignCenter,
               t_.error.empty() ? "No step simulated yet" : QString::fromStdString(t_.error));
    return;
  }
  const int n = static_cast<int>(rows_.size());
  const double row_h = std::max(6.0, double(height() - kAxisHeight) / n);
  // Row labels and track backgrounds; stages alternate shade.
  for (int i = 0; i < n; ++i) {
    const QRectF track(kLabelWidth, i * row_h, width() - kLabelWidth, row_h);
    QColor bg = palette().alternateBase().color();
    if (rows_[static_cast<size_t>(i)].stage % 2) bg = bg.darker(108);
    p.fillRect(track, bg);
    if (row_h >= 9) {
      p.setPen(palette().text().color());
      p.drawText(QRectF(2, i * row_h, kLabelWidth - 6, row_h), Qt::AlignVCenter | Qt::AlignRight,
                 QString("stage %1 %2").arg(rows_[static_cast<size_t>(i)].stage)
                     .arg(StreamLabel(rows_[static_cast<size_t>(i)].stream)));
    }
  }
  p.setClipRect(QRect(kLabelWidth, 0, width() - kLabelWidth, height() - kAxisHeight));
  for (const auto& task : t_.tasks) {
    const int r = RowOf(task.stage, task.stream);
    if (r < 0) continue;
    const double x0 = XOf(task.start_s), x1 = XOf(task.finish_s);
    if (x1 < kLabelWidth || x0 > width()) continue;
    const QRectF box(x0, r * row_h + 1, std::max(1.0, x1 - x0), row_h - 2);
    p.fillRect(box, KindColor(task.kind));
    if (box.width() > 40 && row_h >= 12) {
      p.setPen(Qt::white);
      p.drawText(box.adjusted(2, 0, -2, 0), Qt::AlignVCenter | Qt::AlignLeft,
                 QString::fromStdString(task.name));
    }
  }
  p.setClipping(false);
  // Time axis.
  const int y = height() - kAxisHeight;
  p.setPen(palette().text().color());
  p.drawLine(kLabelWidth, y, width(), y);
  const double step = std::pow(10, std::floor(std::log10(view_span_ / 5)));
  const double first = std::ceil(view_start_ / step) * step;
  for (double t = first; t <= view_start_ + view_span_; t += step) {
    const double x = XOf(t);
    p.drawLine(QPointF(x, y), QPointF(x, y + 4));
    p.drawText(QRectF(x - 40, y + 4, 80, kAxisHeight - 4), Qt::AlignHCenter | Qt::AlignTop,
               Seconds(t));
  }
}

void TimelineView::wheelEvent(QWheelEvent* e) {
  if (rows_.empty()) return;
  const double at = TimeOf(e->position().x());
  const double factor = e->angleDelta().y() > 0 ? 0.8 : 1.25;
  const double span = std::clamp(view_span_ * factor, t_.makespan_s * 1e-5, t_.makespan_s * 1.05);
  view_start_ = at - (at - view_start_) * span / view_span_;
  view_span_ = span;
  update();
}

void TimelineView::mousePressEvent(QMouseEvent* e) {
  dragging_ = true;
  drag_from_ = e->pos();
  drag_start_ = view_start_;
}

void TimelineView::mouseReleaseEvent(QMouseEvent*) { dragging_ = false; }

const TimelineTask* TimelineView::TaskAt(const QPoint& pos) const {
  if (rows_.empty()) return nullptr;
  const double row_h = std::max(6.0, double(height() - kAxisHeight) / rows_.size());
  const int r = static_cast<int>(pos.y() / row_h);
  if (r < 0 || r >= static_cast<int>(rows_.size())) return nullptr;
  const double t = TimeOf(pos.x());
  for (const auto& task : t_.tasks)
    if (task.stage == rows_[static_cast<size_t>(r)].stage &&
        task.stream == rows_[static_cast<size_t>(r)].stream && task.start_s <= t && t <= task.finish_s)
      return &task;
  return nullptr;
}

void TimelineView::mouseMoveEvent(QMouseEvent* e) {
  if (dragging_) {
    const double w = std::max(1, width() - kLabelWidth - 8);
    view_start_ = drag_start_ - (e->pos().x() - drag_from_.x()) / w * view_span_;
    update();
    return;
  }
  if (const TimelineTask* t = TaskAt(e->pos())) {
    QToolTip::showText(e->globalPosition().toPoint(),
                       QString("%1\nstage %2, %3 stream\nstart %4, duration %5")
                           .arg(QString::fromStdString(t->name))
                           .arg(t->stage)
                           .arg(StreamLabel(t->stream))
                           .arg(Seconds(t->start_s))
                           .arg(Seconds(t->finish_s - t->start_s)),
                       this);
  } else {
    QToolTip::hideText();
  }
}

}  // namespace orrery::gui
